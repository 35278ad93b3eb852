package podphase_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podphase/podphasetest"
)

func podLevelName(n v1.ResourceName) bool {
	return n == v1.ResourceCPU || n == v1.ResourceMemory || strings.HasPrefix(string(n), v1.ResourceHugePagesPrefix)
}

func sameLists(a, b v1.ResourceList) bool {
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

// TestPropertyPodRequests checks the invariants of the aggregation (spec
// section 4.4) on generated pods:
//
//   - the overhead adds exactly to every request;
//   - the order of the regular containers does not matter;
//   - without pod-level requests, every request covers the regular
//     containers and the sidecars together, and each regular init
//     container with the sidecars before it;
//   - a pod-level request of cpu, memory or hugepages is the pod's request
//     (plus the overhead);
//   - neither call changes the pod.
func TestPropertyPodRequests(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podphasetest.PodWithResources().Draw(t, "pod")
		before := pod.DeepCopy()
		got := podphase.PodRequests(pod)
		_ = podphase.PodLimits(pod)
		if !sameLists(before.Spec.Overhead, pod.Spec.Overhead) || !sameLists(podphase.PodRequests(before), got) {
			t.Fatalf("PodRequests changed the pod or is not a function of it")
		}

		bare := pod.DeepCopy()
		bare.Spec.Overhead = nil
		want := podphase.PodRequests(bare)
		for n, q := range pod.Spec.Overhead {
			v := want[n]
			v.Add(q)
			want[n] = v
		}
		if !sameLists(want, got) {
			t.Fatalf("requests %v, want those without overhead plus the overhead %v", got, want)
		}

		reversed := bare.DeepCopy()
		cs := reversed.Spec.Containers
		for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
			cs[i], cs[j] = cs[j], cs[i]
		}
		if !sameLists(podphase.PodRequests(bare), podphase.PodRequests(reversed)) || !sameLists(podphase.PodLimits(bare), podphase.PodLimits(reversed)) {
			t.Fatal("the regular containers' order changed the result")
		}

		req := podphase.PodRequests(bare)
		podLevel := v1.ResourceList(nil)
		if bare.Spec.Resources != nil {
			for n := range bare.Spec.Resources.Requests {
				if podLevelName(n) {
					podLevel = bare.Spec.Resources.Requests
				}
			}
		}
		covers := func(need v1.ResourceList, what string) {
			for n, q := range need {
				if _, set := podLevel[n]; set && podLevelName(n) {
					continue
				}
				if r := req[n]; r.Cmp(q) < 0 {
					t.Fatalf("request %s %v is below %s's %v", n, &r, what, &q)
				}
			}
		}
		running := v1.ResourceList{}
		sidecars := v1.ResourceList{}
		add := func(into, l v1.ResourceList) {
			for n, q := range l {
				v := into[n]
				v.Add(q)
				into[n] = v
			}
		}
		for _, c := range bare.Spec.Containers {
			add(running, c.Resources.Requests)
		}
		for _, c := range bare.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
				add(running, c.Resources.Requests)
				add(sidecars, c.Resources.Requests)
				continue
			}
			during := v1.ResourceList{}
			add(during, c.Resources.Requests)
			add(during, sidecars)
			covers(during, "init container "+c.Name+" with the sidecars before it")
		}
		covers(running, "the regular containers and sidecars")
		for n, q := range podLevel {
			if podLevelName(n) {
				if r, ok := req[n]; !ok || r.Cmp(q) != 0 {
					t.Fatalf("pod-level request %s %v, pod request %v", n, &q, &r)
				}
			}
		}
	})
}

// TestPropertyGenerateStatusAllocated: with the 1.37 defaults the status's
// allocatedResources are PodRequests (none when it is empty), and resources
// of a pod that is not Running are the pod-level spec with PodRequests and
// PodLimits (spec section 4.3).
func TestPropertyGenerateStatusAllocated(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podphasetest.PodWithResources().Draw(t, "pod")
		var statuses []v1.ContainerStatus
		for _, c := range pod.Spec.Containers {
			statuses = append(statuses, v1.ContainerStatus{Name: c.Name, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}})
		}
		out, err := podphase.GenerateStatus(podphase.StatusInput{Input: podphase.Input{Pod: pod}, ContainerStatuses: statuses})
		if err != nil {
			t.Fatal(err)
		}
		if want := podphase.PodRequests(pod); !sameLists(want, out.Status.AllocatedResources) || len(want) == 0 && out.Status.AllocatedResources != nil {
			t.Fatalf("allocatedResources %v, want %v", out.Status.AllocatedResources, want)
		}
		r := out.Status.Resources
		if r == nil {
			t.Fatal("no resources")
		}
		if pod.Status.Phase != v1.PodRunning && (!sameLists(r.Requests, podphase.PodRequests(pod)) || !sameLists(r.Limits, podphase.PodLimits(pod))) {
			t.Fatalf("phase %q: resources %v, want the allocated ones", pod.Status.Phase, r)
		}
		for _, l := range []v1.ResourceList{r.Requests, r.Limits, out.Status.AllocatedResources} {
			if l != nil && len(l) == 0 {
				t.Fatal("an empty list is written as none")
			}
		}
	})
}
