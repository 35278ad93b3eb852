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
