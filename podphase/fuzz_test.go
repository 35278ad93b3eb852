package podphase

import (
	"encoding/json"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/internal/podcond"
	"github.com/nodestate/nodestate/kubeversion"
)

// fuzzSeeds are pods in the API's JSON form.
var fuzzSeeds = []string{
	`{}`,
	`{"spec":{"containers":[{"name":"a"}]}}`,
	`{"spec":{"restartPolicy":"Never","initContainers":[{"name":"x"},{"name":"s","restartPolicy":"Always"}],"containers":[{"name":"a"},{"name":"b","restartPolicy":"Never","restartPolicyRules":[{"action":"RestartAllContainers","exitCodes":{"operator":"In","values":[42]}}]}],"readinessGates":[{"conditionType":"g"}]},
	  "status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True"},{"type":"g","status":"False"}],
	  "initContainerStatuses":[{"name":"x","state":{"terminated":{"exitCode":0}}},{"name":"s","started":true,"ready":true,"state":{"running":{}}}],
	  "containerStatuses":[{"name":"a","restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"2026-01-01T00:00:00Z"}}},{"name":"b","state":{"terminated":{"exitCode":42,"reason":"Error"}}}]}}`,
	`{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Running","reason":"NodeLost"}}`,
	`{"spec":{"initContainers":[{"name":"i"}],"containers":[{"name":"a"}]},"status":{"initContainerStatuses":[{"name":"i","state":{"terminated":{"exitCode":1,"signal":9}}},{"name":"ghost"}],"containerStatuses":[{"name":"a"},{"name":"a"}]}}`,
}

func decodePod(t *testing.T, data []byte) *v1.Pod {
	var pod v1.Pod
	if err := json.Unmarshal(data, &pod); err != nil {
		t.Skip()
	}
	return &pod
}

func FuzzPhase(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), false, false, false)
	}
	f.Fuzz(func(t *testing.T, data []byte, terminal, initialized, static bool) {
		pod := decodePod(t, data)
		for _, o := range []Options{DefaultOptions(), {}, DefaultOptionsFor(kubeversion.V1_33), DefaultOptionsFor(kubeversion.V1_35)} {
			if p := o.Phase(pod); !known(p) {
				t.Fatalf("Phase = %q", p)
			}
			e, err := o.Explain(Input{Pod: pod, Terminal: terminal, Initialized: &initialized, Static: static})
			if err == nil && (!known(e.Phase) || e.Reason == "") {
				t.Fatalf("Explain = %+v", e)
			}
		}
	})
}

func FuzzDisplayStatus(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), int64(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, nowOffset int64) {
		pod := decodePod(t, data)
		s := DisplayStatus(pod)
		row, err := Columns(pod, t0.Add(timeDuration(nowOffset)))
		if err != nil {
			t.Fatal(err)
		}
		if row.Status != s {
			t.Fatalf("Columns STATUS %q != DisplayStatus %q", row.Status, s)
		}
		if pod.Status.Phase != "" && s == "" {
			t.Fatalf("empty STATUS for phase %q", pod.Status.Phase)
		}
		// kubectl 1.33 and 1.34 (docs/versions.md row PP-V5): the same
		// column agreement, never empty for a pod with a phase.
		old := DefaultOptionsFor(kubeversion.V1_34)
		s34 := old.DisplayStatus(pod)
		if row34, err := old.Columns(pod, t0); err != nil || row34.Status != s34 {
			t.Fatalf("1.34: Columns STATUS %q, %v != DisplayStatus %q", row34.Status, err, s34)
		}
		if pod.Status.Phase != "" && s34 == "" {
			t.Fatalf("1.34: empty STATUS for phase %q", pod.Status.Phase)
		}
	})
}

func FuzzConditions(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), []byte(s), uint8(0), false)
	}
	f.Fuzz(func(t *testing.T, data, oldData []byte, sandbox uint8, cleanedUp bool) {
		pod := decodePod(t, data)
		old := decodePod(t, oldData)
		for _, v := range kubeversion.Supported() {
			conds, err := DefaultOptionsFor(v).Conditions(ConditionsInput{Pod: pod, Status: &pod.Status, Old: &old.Status, Sandbox: Sandbox(sandbox), RuntimeCleanedUp: cleanedUp, Now: t1})
			if err != nil {
				t.Fatal(err)
			}
			if podcond.Find(conds, v1.PodReady) == nil {
				t.Fatalf("%v: no Ready condition", v)
			}
		}
		res, err := GenerateStatus(StatusInput{Input: Input{Pod: pod}, Old: &old.Status,
			InitContainerStatuses: pod.Status.InitContainerStatuses, ContainerStatuses: pod.Status.ContainerStatuses, Now: t1})
		if err == nil && IsTerminal(pod.Status.Phase) && res.Status.Phase != pod.Status.Phase {
			t.Fatalf("terminal API phase %s left for %s", pod.Status.Phase, res.Status.Phase)
		}
	})
}

// resourceSeeds are pods with resources, in the API's JSON form.
var resourceSeeds = []string{
	`{"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"cpu":"1"}}}]}}`,
	`{"spec":{"overhead":{"cpu":"250m","memory":"120Mi"},"resources":{"requests":{"cpu":"1","hugepages-2Mi":"4Mi"},"limits":{"memory":"1Gi"}},
	  "initContainers":[{"name":"i","resources":{"requests":{"cpu":"5"}}},{"name":"s","restartPolicy":"Always","resources":{"requests":{"cpu":"1"},"limits":{"cpu":"0"}}}],
	  "containers":[{"name":"a","resources":{"requests":{"example.com/gpu":"1"}}}]},"status":{"phase":"Running"}}`,
}

// FuzzPodResources feeds PodRequests, PodLimits, QOSClass, PodCgroupOf and
// the pod-level status resources arbitrary pods and pod cgroups: they never
// panic, never change the pod, the cgroup v2 read-back has at least the
// minimum shares and whole pages, and the status's allocatedResources are
// PodRequests.
func FuzzPodResources(f *testing.F) {
	for _, s := range resourceSeeds {
		f.Add([]byte(s), uint64(51), int64(10000), uint64(100000), int64(1<<20), uint8(0))
	}
	f.Add([]byte(resourceSeeds[0]), uint64(0), int64(-1), uint64(0), int64(-5), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, shares uint64, quota int64, period uint64, memory int64, which uint8) {
		pod := decodePod(t, data)
		before := pod.DeepCopy()
		req, lim := PodRequests(pod), PodLimits(pod)
		if rb := PodCgroupOf(pod).ReadBackV2(); rb.CPUShares == nil || *rb.CPUShares < minShares || rb.Memory == nil || (*rb.Memory != -1 && *rb.Memory%pageSize != 0) {
			t.Fatalf("cgroup v2 read-back %+v", rb)
		}
		switch QOSClass(pod) {
		case v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort:
		default:
			if pod.Status.QOSClass == "" {
				t.Fatalf("QOSClass %q", QOSClass(pod))
			}
		}
		cg := &PodCgroup{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &memory}
		if which&1 != 0 {
			cg = nil
		}
		for _, v := range kubeversion.Supported() {
			o := DefaultOptionsFor(v)
			o.Features.InPlacePodLevelResourcesVerticalScaling = true
			old := &v1.PodStatus{Phase: v1.PodRunning, Resources: &v1.ResourceRequirements{Requests: req, Limits: lim}}
			if which&2 != 0 {
				old = nil
			}
			out, err := o.GenerateStatus(StatusInput{Input: Input{Pod: pod}, Old: old, PodCgroup: cg})
			if err != nil {
				continue
			}
			if len(req) != len(out.Status.AllocatedResources) {
				t.Fatalf("%v: allocatedResources %v, PodRequests %v", v, out.Status.AllocatedResources, req)
			}
			if out.Status.Resources == nil {
				t.Fatalf("%v: no resources", v)
			}
		}
		if !equalPods(before, pod) {
			t.Fatal("the pod changed")
		}
	})
}

func equalPods(a, b *v1.Pod) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
