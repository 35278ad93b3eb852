package podphase_test

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podphase/podphasetest"
)

// genStatusInput draws what the kubelet generates a status from: a pod
// (with container statuses or with resources), new container statuses,
// an old status that is itself a generated one or none, and the
// kubelet-only facts.
func genStatusInput(t *rapid.T, o podphase.Options, label string) podphase.StatusInput {
	var pod *v1.Pod
	if rapid.Bool().Draw(t, label+"-withResources") {
		pod = podphasetest.PodWithResources().Draw(t, label+"-pod")
	} else {
		pod = podphasetest.Pod().Draw(t, label+"-pod")
	}
	in := podphase.StatusInput{Input: podphase.Input{Pod: pod, Terminal: rapid.Bool().Draw(t, label+"-terminal"), Static: rapid.Bool().Draw(t, label+"-static")},
		Sandbox:          podphase.Sandbox(rapid.IntRange(0, int(podphase.SandboxNoIP)).Draw(t, label+"-sandbox")),
		RuntimeCleanedUp: rapid.Bool().Draw(t, label+"-cleanedUp"),
		Now:              podphasetest.Epoch.Add(3600e9)}
	if i := rapid.IntRange(0, 2).Draw(t, label+"-initialized"); i > 0 {
		in.Initialized = ptr(i == 2)
	}
	next := podphasetest.Pod().Draw(t, label+"-next")
	in.InitContainerStatuses = alignTo(pod.Spec.InitContainers, next.Status.InitContainerStatuses)
	in.ContainerStatuses = alignTo(pod.Spec.Containers, next.Status.ContainerStatuses)
	if rapid.Bool().Draw(t, label+"-evict") {
		in.Evict = &podphase.Eviction{Reason: podphase.ReasonDeadlineExceeded, Message: "Pod was active on the node longer than the specified deadline"}
	}
	if rapid.Bool().Draw(t, label+"-cgroup") {
		cg := podphase.PodCgroupOf(pod).ReadBackV2()
		in.PodCgroup = &cg
	}
	switch rapid.IntRange(0, 2).Draw(t, label+"-old") {
	case 1:
		in.Old = &next.Status
	case 2:
		earlier := in
		earlier.Now = podphasetest.Epoch
		earlier.InitContainerStatuses = alignTo(pod.Spec.InitContainers, pod.Status.InitContainerStatuses)
		earlier.ContainerStatuses = alignTo(pod.Spec.Containers, pod.Status.ContainerStatuses)
		if res, err := o.GenerateStatus(earlier); err == nil {
			in.Old = &res.Status
		}
	}
	return in
}

// scribbleOwned overwrites the storage GenerateStatusTo writes into: the
// conditions and the pod-level resources and allocatedResources.
func scribbleOwned(s *v1.PodStatus) {
	for i := range s.Conditions {
		s.Conditions[i].Type, s.Conditions[i].Message = "X", "X"
	}
	if r := s.Resources; r != nil {
		for _, l := range []v1.ResourceList{r.Limits, r.Requests} {
			for name := range l {
				l[name] = resource.MustParse("7")
			}
		}
		for i := range r.Claims {
			r.Claims[i].Name = "X"
		}
	}
	for name := range s.AllocatedResources {
		s.AllocatedResources[name] = resource.MustParse("7")
	}
}

// TestPropertyGenerateStatusToIsGenerateStatus: GenerateStatusTo into a
// status that held another generated status writes what GenerateStatus
// returns, field for field, with the same Settled and the same errors; and
// the storage it writes into shares nothing with the pod or the old status.
func TestPropertyGenerateStatusToIsGenerateStatus(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := podphase.DefaultOptionsFor(rapid.SampledFrom(kubeversion.Supported()).Draw(t, "version"))
		o.Features.InPlacePodLevelResourcesVerticalScaling = rapid.Bool().Draw(t, "podLevelResources")
		o.Features.RestartAllContainersOnContainerExits = rapid.Bool().Draw(t, "restartAll")
		in := genStatusInput(t, o, "in")
		want, err := o.GenerateStatus(in)
		var dst v1.PodStatus
		if rapid.Bool().Draw(t, "dirty") {
			_, _ = o.GenerateStatusTo(genStatusInput(t, o, "prior"), &dst)
			dst = *dst.DeepCopy() // storage of its own, as a caller keeps it
		}
		before := *dst.DeepCopy()
		podCopy, oldCopy := in.Pod.DeepCopy(), in.Old.DeepCopy()
		settled, errTo := o.GenerateStatusTo(in, &dst)
		if (err == nil) != (errTo == nil) {
			t.Fatalf("GenerateStatus: %v, GenerateStatusTo: %v", err, errTo)
		}
		if err != nil {
			if !reflect.DeepEqual(dst, before) {
				t.Fatal("a refused GenerateStatusTo changed its destination")
			}
			return
		}
		if !reflect.DeepEqual(want.Status, dst) {
			t.Fatalf("GenerateStatusTo differs from GenerateStatus (-GenerateStatus +GenerateStatusTo):\n%s", cmp.Diff(want.Status, dst))
		}
		if settled != want.Settled {
			t.Fatalf("Settled %+v, GenerateStatus's %+v", settled, want.Settled)
		}
		scribbleOwned(&dst)
		if !reflect.DeepEqual(in.Pod, podCopy) || !reflect.DeepEqual(in.Old, oldCopy) {
			t.Fatal("GenerateStatusTo's conditions or resources share memory with the pod or the old status")
		}
	})
}

// TestGenerateStatusToAllocatesNothing: generating the status of a pod
// with requests, not ready containers and an init container again into
// the same status allocates nothing.
func TestGenerateStatusToAllocatesNothing(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	req := v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")}}
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init", Resources: req}, {Name: "sc", RestartPolicy: &always, Resources: req}},
		Containers:     []v1.Container{{Name: "app", Resources: req}, {Name: "web", Resources: req}}}}
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	in := podphase.StatusInput{Input: podphase.Input{Pod: pod},
		InitContainerStatuses: []v1.ContainerStatus{{Name: "init", Ready: true, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed"}}},
			{Name: "sc", Started: ptr(true), State: running}},
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", State: running}, {Name: "web", State: running}},
		Now:               podphasetest.Epoch}
	for _, phase := range []v1.PodPhase{v1.PodPending, v1.PodRunning} {
		pod.Status.Phase = phase
		cg := podphase.PodCgroupOf(pod).ReadBackV2()
		in.PodCgroup = &cg
		var old, dst v1.PodStatus
		if _, err := podphase.GenerateStatusTo(in, &old); err != nil {
			t.Fatal(err)
		}
		in.Old = &old
		_, _ = podphase.GenerateStatusTo(in, &dst)
		if a := testing.AllocsPerRun(50, func() { _, _ = podphase.GenerateStatusTo(in, &dst) }); a != 0 {
			t.Errorf("API phase %q: GenerateStatusTo of the same status again: %v allocations, want 0", phase, a)
		}
	}
}

// refAggregate is the map-based aggregation PodRequests and PodLimits
// were written with before they summed in place: the reference their
// results must equal, quantities and formats included.
func refAggregate(spec *v1.PodSpec, list func(*v1.Container) v1.ResourceList) v1.ResourceList {
	add := func(sum, add v1.ResourceList) {
		for name, q := range add {
			if v, ok := sum[name]; ok {
				v.Add(q)
				sum[name] = v
			} else {
				sum[name] = q.DeepCopy()
			}
		}
	}
	raise := func(into, from v1.ResourceList) {
		for name, q := range from {
			if v, ok := into[name]; !ok || q.Cmp(v) > 0 {
				into[name] = q.DeepCopy()
			}
		}
	}
	sum, sidecars, peak := v1.ResourceList{}, v1.ResourceList{}, v1.ResourceList{}
	for i := range spec.Containers {
		add(sum, list(&spec.Containers[i]))
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			add(sum, list(c))
			add(sidecars, list(c))
			raise(peak, sidecars)
			continue
		}
		during := v1.ResourceList{}
		add(during, list(c))
		add(during, sidecars)
		raise(peak, during)
	}
	raise(sum, peak)
	podLevel := func(l, pod v1.ResourceList) {
		for name, q := range pod {
			if name == v1.ResourceCPU || name == v1.ResourceMemory || len(name) > 10 && name[:10] == v1.ResourceHugePagesPrefix {
				l[name] = q
			}
		}
	}
	if r := spec.Resources; r != nil {
		podLevel(sum, r.Requests) // the caller passes the list it aggregates as Requests
	}
	return sum
}

// TestPropertyPodRequestsUnchanged: PodRequests and PodLimits give what the
// map-based aggregation gave, field for field.
func TestPropertyPodRequestsUnchanged(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podphasetest.PodWithResources().Draw(t, "pod")
		levelSet := func(l v1.ResourceList) bool {
			for name := range l {
				if name == v1.ResourceCPU || name == v1.ResourceMemory || len(name) > 10 && name[:10] == v1.ResourceHugePagesPrefix {
					return true
				}
			}
			return false
		}
		// Requests: the pod-level requests apply when some are set.
		spec := pod.Spec.DeepCopy()
		if spec.Resources != nil && !levelSet(spec.Resources.Requests) {
			spec.Resources = nil
		}
		wantReq := refAggregate(spec, func(c *v1.Container) v1.ResourceList { return c.Resources.Requests })
		for name, q := range pod.Spec.Overhead {
			if v, ok := wantReq[name]; ok {
				v.Add(q)
				wantReq[name] = v
			} else {
				wantReq[name] = q.DeepCopy()
			}
		}
		if got := podphase.PodRequests(pod); !reflect.DeepEqual(got, wantReq) {
			t.Fatalf("PodRequests (-reference +got):\n%s", cmp.Diff(wantReq, got))
		}
		// Limits: the pod-level limits apply when pod-level requests or
		// limits are set.
		spec = pod.Spec.DeepCopy()
		if spec.Resources != nil {
			if levelSet(spec.Resources.Requests) || levelSet(spec.Resources.Limits) {
				spec.Resources = &v1.ResourceRequirements{Requests: spec.Resources.Limits}
			} else {
				spec.Resources = nil
			}
		}
		wantLim := refAggregate(spec, func(c *v1.Container) v1.ResourceList { return c.Resources.Limits })
		for name, q := range pod.Spec.Overhead {
			if v, ok := wantLim[name]; ok && !v.IsZero() {
				v.Add(q)
				wantLim[name] = v
			}
		}
		if got := podphase.PodLimits(pod); !reflect.DeepEqual(got, wantLim) {
			t.Fatalf("PodLimits (-reference +got):\n%s", cmp.Diff(wantLim, got))
		}
	})
}
