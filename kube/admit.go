package kube

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/nodecondition"
)

// The admission reasons of the kubelet's resource check: "OutOf" and the
// resource's name.
const (
	ReasonOutOfCPU    = "OutOfcpu"
	ReasonOutOfMemory = "OutOfmemory"
	ReasonOutOfPods   = "OutOfpods"
)

// systemCriticalPriority is the priority from which a pod is critical and
// admitted under any node pressure.
const systemCriticalPriority = 2_000_000_000

// Rejection is why a node refused a pod: the kubelet's admission result.
// The pod is failed with Reason and the message "Pod was rejected: " +
// Message, and a Warning event with Reason and Message is recorded.
type Rejection struct {
	Reason, Message string
}

// admit decides, as the kubelet's admission handlers do in their order, whether
// the node runs pod next to the pods it already runs: first the eviction
// manager's pressure rule (nodecondition.Admit), then the resource fit of the
// general predicates (pod count, CPU, memory, ephemeral storage, extended
// resources the node has, in that order, the first failure only), then the
// node's NoExecute taints, the only effect the kubelet checks.
func admit(pod *corev1.Pod, running []*corev1.Pod, allocatable corev1.ResourceList, taints []corev1.Taint, pressures nodecondition.Pressures) *Rejection {
	critical := pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
	if r := nodecondition.Admit(pressures, pod.Status.QOSClass, pod.Spec.Tolerations, critical); !r.Admit {
		return &Rejection{Reason: r.Reason, Message: r.Message}
	}
	if q, ok := allocatable[corev1.ResourcePods]; ok && int64(len(running))+1 > q.Value() {
		return insufficient(corev1.ResourcePods, 1, int64(len(running)), q.Value())
	}
	want := podRequests(pod)
	used := corev1.ResourceList{}
	for _, p := range running {
		for name, q := range podRequests(p) {
			add(used, name, q)
		}
	}
	var extended []corev1.ResourceName
	for name := range want {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory && name != corev1.ResourceEphemeralStorage {
			extended = append(extended, name)
		}
	}
	slices.Sort(extended)
	order := append([]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}, extended...)
	for _, name := range order {
		q, ok := want[name]
		if !ok || q.Sign() <= 0 {
			continue
		}
		capacity, known := allocatable[name]
		if !known && name != corev1.ResourceCPU && name != corev1.ResourceMemory && name != corev1.ResourceEphemeralStorage {
			continue // an extended resource the node does not have is left to the cluster
		}
		u := used[name]
		if value(name, q) > value(name, capacity)-value(name, u) {
			return insufficient(name, value(name, q), value(name, u), value(name, capacity))
		}
	}
	for i := range taints {
		if taints[i].Effect == corev1.TaintEffectNoExecute && !tolerated(&taints[i], pod.Spec.Tolerations) {
			return &Rejection{Reason: ReasonTaintToleration, Message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"}
		}
	}
	return nil
}

// ReasonTaintToleration is the admission reason for a pod that does not
// tolerate one of the node's NoExecute taints.
const ReasonTaintToleration = "TaintToleration"

// tolerated says whether one of tols tolerates taint: an empty key with
// Exists tolerates every taint; otherwise the keys match and, under Equal
// (the default operator), the values too; an empty effect matches every
// effect.
func tolerated(taint *corev1.Taint, tols []corev1.Toleration) bool {
	for i := range tols {
		t := &tols[i]
		if t.Effect != "" && t.Effect != taint.Effect {
			continue
		}
		if t.Key == "" {
			if t.Operator == corev1.TolerationOpExists {
				return true
			}
			continue
		}
		if t.Key != taint.Key {
			continue
		}
		switch t.Operator {
		case corev1.TolerationOpExists:
			return true
		case "", corev1.TolerationOpEqual:
			if t.Value == taint.Value {
				return true
			}
		}
	}
	return false
}

func insufficient(name corev1.ResourceName, requested, used, capacity int64) *Rejection {
	return &Rejection{Reason: "OutOf" + string(name),
		Message: fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d", name, requested, used, capacity)}
}

// value is a quantity in the unit the scheduler compares: millicores for CPU,
// the plain value for everything else.
func value(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

func add(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	cur := l[name]
	cur.Add(q)
	l[name] = cur
}

// podRequests is what a pod asks of the node: the larger of its regular
// containers plus sidecars and, for each regular init container, that
// container plus the sidecars started before it; plus the pod overhead.
func podRequests(pod *corev1.Pod) corev1.ResourceList {
	regular := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		for name, q := range pod.Spec.Containers[i].Resources.Requests {
			add(regular, name, q)
		}
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			for name, q := range c.Resources.Requests {
				add(sidecars, name, q)
			}
			continue
		}
		during := corev1.ResourceList{}
		for name, q := range c.Resources.Requests {
			add(during, name, q)
		}
		for name, q := range sidecars {
			add(during, name, q)
		}
		for name, q := range during {
			if cur, ok := initMax[name]; !ok || q.Cmp(cur) > 0 {
				initMax[name] = q
			}
		}
	}
	for name, q := range sidecars {
		add(regular, name, q)
	}
	for name, q := range initMax {
		if cur, ok := regular[name]; !ok || q.Cmp(cur) > 0 {
			regular[name] = q
		}
	}
	for name, q := range pod.Spec.Overhead {
		add(regular, name, q)
	}
	return regular
}
