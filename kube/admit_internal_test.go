package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/nodecondition"
)

// optAdmitAlloc is a node of 1 CPU, 1 GiB and 10 pods.
func optAdmitAlloc() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
		corev1.ResourcePods: resource.MustParse("10"),
	}
}

// optSameRejection says whether two admission results are the same.
func optSameRejection(got, want *Rejection) bool {
	return (got == nil) == (want == nil) && (got == nil || *got == *want)
}

// TestAdmitExactFit: a request that takes exactly what the running pods
// leave of a resource fits (the scheduler's rule: requested > free
// refuses); a millicore more does not.
func TestAdmitExactFit(t *testing.T) {
	running := []*corev1.Pod{podOf("r", corev1.PodQOSBurstable, nil, ctr("a", "600m", "256Mi"))}
	cases := []struct {
		name string
		pod  *corev1.Pod
		want *Rejection
	}{
		{"the rest of the CPU", podOf("cpu", corev1.PodQOSBurstable, nil, ctr("a", "400m", "")), nil},
		{"a millicore more", podOf("cpu1", corev1.PodQOSBurstable, nil, ctr("a", "401m", "")),
			&Rejection{ReasonOutOfCPU, "Node didn't have enough resource: cpu, requested: 401, used: 600, capacity: 1000"}},
		{"the rest of the memory", podOf("mem", corev1.PodQOSBurstable, nil, ctr("a", "", "768Mi")), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := admit(tc.pod, running, optAdmitAlloc(), nil, nodecondition.Pressures{}); !optSameRejection(got, tc.want) {
				t.Fatalf("admit = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestAdmitZeroRequestOnFullNode: a resource a pod requests as zero is not
// checked at all, so a node whose running pods already take more CPU than
// it has (its allocatable shrank under them) still admits a pod asking
// for 0 CPU; a pod asking for any CPU is refused.
func TestAdmitZeroRequestOnFullNode(t *testing.T) {
	running := []*corev1.Pod{podOf("big", corev1.PodQOSBurstable, nil, ctr("a", "2", ""))}
	zero := podOf("zero", corev1.PodQOSBurstable, nil, ctr("a", "0", "100Mi"))
	if got := admit(zero, running, optAdmitAlloc(), nil, nodecondition.Pressures{}); got != nil {
		t.Errorf("a pod requesting 0 CPU on an overcommitted node: %+v, want admitted", got)
	}
	some := podOf("some", corev1.PodQOSBurstable, nil, ctr("a", "1m", "100Mi"))
	want := &Rejection{ReasonOutOfCPU, "Node didn't have enough resource: cpu, requested: 1, used: 2000, capacity: 1000"}
	if got := admit(some, running, optAdmitAlloc(), nil, nodecondition.Pressures{}); !optSameRejection(got, want) {
		t.Errorf("a pod requesting 1m CPU on an overcommitted node: %+v, want %+v", got, want)
	}
}

// TestToleratedLaterToleration: a toleration that does not match the taint
// (another effect, another key, or an empty key without Exists) does not
// end the search: a later toleration in the list still tolerates it, and
// admission lets the pod in.
func TestToleratedLaterToleration(t *testing.T) {
	taint := corev1.Taint{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoExecute}
	match := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "yes"}
	cases := []struct {
		name  string
		first corev1.Toleration
	}{
		{"another effect first", corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		{"an empty key with Equal first", corev1.Toleration{Operator: corev1.TolerationOpEqual, Value: "yes"}},
		{"another key first", corev1.Toleration{Key: "disk", Operator: corev1.TolerationOpExists}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tolerated(&taint, []corev1.Toleration{tc.first}) {
				t.Fatalf("%+v alone tolerates %+v", tc.first, taint)
			}
			tols := []corev1.Toleration{tc.first, match}
			if !tolerated(&taint, tols) {
				t.Errorf("%+v not tolerated by %+v", taint, tols)
			}
			pod := podOf("p", corev1.PodQOSBurstable, nil, ctr("a", "100m", ""))
			pod.Spec.Tolerations = tols
			if got := admit(pod, nil, optAdmitAlloc(), []corev1.Taint{taint}, nodecondition.Pressures{}); got != nil {
				t.Errorf("admit = %+v, want admitted", got)
			}
		})
	}
}

// TestPodRequestsLargestInit: of several regular init containers, each
// running alone in turn, the largest counts, wherever it stands in the
// list; it wins over smaller regular containers and admission refuses the
// pod on it.
func TestPodRequestsLargestInit(t *testing.T) {
	cases := []struct {
		name  string
		inits []corev1.Container
	}{
		{"the largest last", []corev1.Container{ctr("i1", "1", "64Mi"), ctr("i2", "2", "128Mi")}},
		{"the largest first", []corev1.Container{ctr("i1", "2", "128Mi"), ctr("i2", "1", "64Mi")}},
		{"the largest in the middle", []corev1.Container{ctr("i1", "500m", "32Mi"), ctr("i2", "2", "128Mi"), ctr("i3", "1", "64Mi")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := podOf("p", corev1.PodQOSBurstable, tc.inits, ctr("a", "100m", "16Mi"))
			got := podRequests(pod)
			cpu, mem := got[corev1.ResourceCPU], got[corev1.ResourceMemory]
			if cpu.Cmp(resource.MustParse("2")) != 0 || mem.Cmp(resource.MustParse("128Mi")) != 0 {
				t.Errorf("requests cpu %s memory %s, want 2 and 128Mi", cpu.String(), mem.String())
			}
			want := &Rejection{ReasonOutOfCPU, "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000"}
			if rej := admit(pod, nil, optAdmitAlloc(), nil, nodecondition.Pressures{}); !optSameRejection(rej, want) {
				t.Errorf("admit = %+v, want %+v", rej, want)
			}
		})
	}
}

// TestAdmitExtendedAfterUnknown: an extended resource the node does not
// have is left to the cluster, and the extended resources after it (in
// name order) are still checked: a pod asking for an unknown
// example.com/a and more example.com/gpu than the node has is refused for
// the GPU.
func TestAdmitExtendedAfterUnknown(t *testing.T) {
	alloc := optAdmitAlloc()
	alloc["example.com/gpu"] = resource.MustParse("1")
	c := ctr("a", "100m", "")
	c.Resources.Requests["example.com/a"] = resource.MustParse("1")
	c.Resources.Requests["example.com/gpu"] = resource.MustParse("2")
	pod := podOf("gpu", corev1.PodQOSBurstable, nil, c)
	want := &Rejection{"OutOfexample.com/gpu", "Node didn't have enough resource: example.com/gpu, requested: 2, used: 0, capacity: 1"}
	if got := admit(pod, nil, alloc, nil, nodecondition.Pressures{}); !optSameRejection(got, want) {
		t.Fatalf("admit = %+v, want %+v", got, want)
	}
	c.Resources.Requests["example.com/gpu"] = resource.MustParse("1")
	if got := admit(podOf("fits", corev1.PodQOSBurstable, nil, c), nil, alloc, nil, nodecondition.Pressures{}); got != nil {
		t.Fatalf("one GPU of one, and an unknown resource: %+v, want admitted", got)
	}
}
