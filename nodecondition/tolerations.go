package nodecondition

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Taint keys the node-lifecycle controller manages.
const (
	TaintNotReady           = v1.TaintNodeNotReady           // node.kubernetes.io/not-ready
	TaintUnreachable        = v1.TaintNodeUnreachable        // node.kubernetes.io/unreachable
	TaintMemoryPressure     = v1.TaintNodeMemoryPressure     // node.kubernetes.io/memory-pressure
	TaintDiskPressure       = v1.TaintNodeDiskPressure       // node.kubernetes.io/disk-pressure
	TaintPIDPressure        = v1.TaintNodePIDPressure        // node.kubernetes.io/pid-pressure
	TaintNetworkUnavailable = v1.TaintNodeNetworkUnavailable // node.kubernetes.io/network-unavailable
	TaintUnschedulable      = v1.TaintNodeUnschedulable      // node.kubernetes.io/unschedulable
)

// DefaultTolerationSeconds is the tolerationSeconds the DefaultTolerationSeconds
// admission plugin gives the not-ready and unreachable tolerations it adds.
const DefaultTolerationSeconds int64 = 300

// Tolerates reports whether toleration tol tolerates taint t: the keys match
// (an empty key with operator Exists matches every key), the effects match (an
// empty effect matches every effect), and the operator holds (Exists, or Equal
// with equal values; an empty operator means Equal). Other operators match
// nothing, and a nil toleration or taint matches nothing.
func Tolerates(tol *v1.Toleration, t *v1.Taint) bool {
	if tol == nil || t == nil {
		return false
	}
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != t.Key && !(tol.Key == "" && tol.Operator == v1.TolerationOpExists) {
		return false
	}
	switch tol.Operator {
	case v1.TolerationOpExists:
		return true
	case "", v1.TolerationOpEqual:
		return tol.Value == t.Value
	default:
		return false
	}
}

// MinTolerationTime returns the shortest tolerationSeconds among tols: 0 for
// an empty list or when any value is <= 0, -1 (forever) when none has seconds.
func MinTolerationTime(tols []v1.Toleration) time.Duration {
	if len(tols) == 0 {
		return 0
	}
	m := time.Duration(-1)
	for i := range tols {
		s := tols[i].TolerationSeconds
		if s == nil {
			continue
		}
		if *s <= 0 {
			return 0
		}
		d := time.Duration(*s) * time.Second
		if *s > int64(maxDuration/time.Second) {
			d = maxDuration
		}
		if m < 0 || d < m {
			m = d
		}
	}
	return m
}

const maxDuration = time.Duration(1<<63 - 1)

// TolerationTime evaluates a pod's tolerations against a node's NoExecute
// taints as the taint-eviction controller does. It returns tolerated false when
// some NoExecute taint is not tolerated (delete now); otherwise the minimum
// toleration time of the tolerations used, -1 meaning forever. Each taint uses
// the first toleration in tols that tolerates it, so a later toleration of the
// same taint with other seconds does not count. With no NoExecute taint it
// returns (true, -1). It allocates nothing.
func TolerationTime(tols []v1.Toleration, taints []v1.Taint) (tolerated bool, d time.Duration) {
	d = -1
	any := false
	for i := range taints {
		t := &taints[i]
		if t.Effect != v1.TaintEffectNoExecute {
			continue
		}
		any = true
		used := -1
		for j := range tols {
			if Tolerates(&tols[j], t) {
				used = j
				break
			}
		}
		if used < 0 {
			return false, 0
		}
		s := tols[used].TolerationSeconds
		if s == nil {
			continue
		}
		v := time.Duration(0)
		if *s > 0 {
			v = time.Duration(*s) * time.Second
			if *s > int64(maxDuration/time.Second) {
				v = maxDuration
			}
		}
		if d < 0 || v < d {
			d = v
		}
	}
	if !any {
		return true, -1
	}
	return true, d
}

// WithDefaultTolerations returns tols plus the tolerations the
// DefaultTolerationSeconds admission plugin adds: {not-ready, Exists,
// NoExecute, seconds} unless some toleration has key not-ready or "" and
// effect NoExecute or "", and the same for unreachable. tols is not modified.
func WithDefaultTolerations(tols []v1.Toleration, notReadySeconds, unreachableSeconds int64) []v1.Toleration {
	has := func(key string) bool {
		for i := range tols {
			if (tols[i].Key == key || tols[i].Key == "") && (tols[i].Effect == v1.TaintEffectNoExecute || tols[i].Effect == "") {
				return true
			}
		}
		return false
	}
	out := append([]v1.Toleration(nil), tols...)
	if !has(TaintNotReady) {
		s := notReadySeconds
		out = append(out, v1.Toleration{Key: TaintNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &s})
	}
	if !has(TaintUnreachable) {
		s := unreachableSeconds
		out = append(out, v1.Toleration{Key: TaintUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &s})
	}
	return out
}

// AdmitResult is the eviction manager's admission verdict for a pod.
type AdmitResult struct {
	Admit   bool   // whether the pod is admitted
	Reason  string // "Evicted" when rejected
	Message string // for example "The node had condition: [MemoryPressure]. "
}

// Admit decides whether the kubelet admits a pod while the node reports the
// given pressure conditions: critical pods always; under MemoryPressure alone,
// every non-BestEffort pod and a BestEffort pod that tolerates
// memory-pressure:NoSchedule; under any other condition, no pod.
func Admit(p Pressures, qos v1.PodQOSClass, tols []v1.Toleration, critical bool) AdmitResult {
	types := p.Types()
	if len(types) == 0 || critical {
		return AdmitResult{Admit: true}
	}
	if len(types) == 1 && types[0] == v1.NodeMemoryPressure {
		if qos != v1.PodQOSBestEffort {
			return AdmitResult{Admit: true}
		}
		mp := v1.Taint{Key: TaintMemoryPressure, Effect: v1.TaintEffectNoSchedule}
		for i := range tols {
			if Tolerates(&tols[i], &mp) {
				return AdmitResult{Admit: true}
			}
		}
	}
	return AdmitResult{Reason: ReasonEvicted, Message: fmt.Sprintf("The node had condition: %v. ", types)}
}
