package conformance

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podphase/podphasetest"
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"pgregory.net/rapid"
)

// TestPodResourcesMatchUpstream compares podphase.PodRequests and PodLimits
// with component-helpers' PodRequests and PodLimits as the kubelet calls them
// for status.allocatedResources and status.resources (pod-level resources
// on, overhead included, no status resources, no DRA claims) on generated
// pods: init containers and sidecars in any order, pod-level resources of
// cpu, memory, hugepages and resources that cannot be set at pod level, and
// overheads. Lists compare by resource and quantity value, nil equal to
// empty, as the API does.
func TestPodResourcesMatchUpstream(t *testing.T) {
	const name = "PodRequests, PodLimits vs component-helpers"
	inputs, mismatches := 0, 0
	defer func() { record(name, inputs, mismatches) }()
	rapid.Check(t, func(t *rapid.T) {
		inputs++
		pod := podphasetest.PodWithResources().Draw(t, "pod")
		opts := resourcehelper.PodResourcesOptions{}
		for _, c := range []struct {
			what     string
			got, exp v1.ResourceList
		}{
			{"requests", podphase.PodRequests(pod), resourcehelper.PodRequests(pod, opts)},
			{"limits", podphase.PodLimits(pod), resourcehelper.PodLimits(pod, opts)},
		} {
			if !sameResourceList(c.got, c.exp) {
				mismatches++
				t.Fatalf("%s\n%s: nodestate %s, upstream %s", describeResources(pod), c.what, listString(c.got), listString(c.exp))
			}
		}
	})
	if inputs < checks() {
		t.Fatalf("ran %d inputs, want at least %d", inputs, checks())
	}
}

func sameResourceList(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for n, q := range a {
		if r, ok := b[n]; !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

func listString(l v1.ResourceList) string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("{")
	for i, n := range names {
		q := l[v1.ResourceName(n)]
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", n, q.String())
	}
	b.WriteString("}")
	return b.String()
}

func describeResources(pod *v1.Pod) string {
	var b strings.Builder
	r := func(x v1.ResourceRequirements) string {
		return "requests " + listString(x.Requests) + " limits " + listString(x.Limits)
	}
	for _, c := range pod.Spec.InitContainers {
		kind := "init"
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			kind = "sidecar"
		}
		fmt.Fprintf(&b, "%s %s: %s\n", kind, c.Name, r(c.Resources))
	}
	for _, c := range pod.Spec.Containers {
		fmt.Fprintf(&b, "container %s: %s\n", c.Name, r(c.Resources))
	}
	if pod.Spec.Resources != nil {
		fmt.Fprintf(&b, "pod-level: %s\n", r(*pod.Spec.Resources))
	}
	if pod.Spec.Overhead != nil {
		fmt.Fprintf(&b, "overhead: %s\n", listString(pod.Spec.Overhead))
	}
	return b.String()
}

// TestPodCgroupMatchesUpstream compares podphase.PodCgroupOf with the
// kubelet's cm.ResourceConfigForPod (CFS quota enforced, the 100 ms period,
// memory QoS off: the kubelet's defaults) on the CPU shares, quota, period
// and memory it writes, and podphase.QOSClass with qos.GetPodQOS, on the
// same generated pods, with and without a qosClass in the status.
func TestPodCgroupMatchesUpstream(t *testing.T) {
	const name = "PodCgroupOf, QOSClass vs cm.ResourceConfigForPod, GetPodQOS"
	inputs, mismatches := 0, 0
	defer func() { record(name, inputs, mismatches) }()
	rapid.Check(t, func(t *rapid.T) {
		inputs++
		pod := podphasetest.PodWithResources().Draw(t, "pod")
		if rapid.Bool().Draw(t, "apiQOS") {
			pod.Status.QOSClass = rapid.SampledFrom([]v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort}).Draw(t, "qos")
		}
		if got, want := podphase.QOSClass(pod), qos.GetPodQOS(pod); got != want {
			mismatches++
			t.Fatalf("%s\nqosClass %q: nodestate %s, upstream %s", describeResources(pod), pod.Status.QOSClass, got, want)
		}
		got := podphase.PodCgroupOf(pod)
		want := cm.ResourceConfigForPod(pod, true, 100000, false, kubeletconfig.NoneMemoryReservationPolicy)
		for _, f := range []struct {
			what     string
			got, exp any
		}{
			{"cpu shares", deref(got.CPUShares), deref(want.CPUShares)},
			{"cpu quota", deref(got.CPUQuota), deref(want.CPUQuota)},
			{"cpu period", deref(got.CPUPeriod), deref(want.CPUPeriod)},
			{"memory", deref(got.Memory), deref(want.Memory)},
		} {
			if f.got != f.exp {
				mismatches++
				t.Fatalf("%s\nqosClass %q: %s: nodestate %v, upstream %v", describeResources(pod), pod.Status.QOSClass, f.what, f.got, f.exp)
			}
		}
	})
	if inputs < checks() {
		t.Fatalf("ran %d inputs, want at least %d", inputs, checks())
	}
}

// deref is the value of p as a string, or "unset".
func deref[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
