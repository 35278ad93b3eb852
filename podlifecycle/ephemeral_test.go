package podlifecycle

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestEphemeralContainerStatuses: a pod without ephemeral containers has no
// ephemeralContainerStatuses (nil, not empty); an ephemeral container added
// to a running pod (the ephemeralcontainers subresource) is started without
// touching the others and reported on its own list, after the init and
// regular containers' (section 3.4, spec/podphase.md section 4).
func TestEphemeralContainerStatuses(t *testing.T) {
	pod := podP3()
	pod.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "bar-image"}}
	s := newSim(t, pod, DefaultOptions())
	s.stepExitingInits(10)
	s.settle()
	st := s.lastStatus()
	if st.EphemeralContainerStatuses != nil || len(st.ContainerStatuses) != 3 || len(st.InitContainerStatuses) != 1 {
		t.Fatalf("before: %d init, %d regular, ephemeral %#v", len(st.InitContainerStatuses), len(st.ContainerStatuses), st.EphemeralContainerStatuses)
	}
	for _, n := range []string{"debug", "debug2"} {
		s.pod = s.pod.DeepCopy()
		s.pod.Spec.EphemeralContainers = append(s.pod.Spec.EphemeralContainers,
			v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: n, Image: "busybox:1"}})
		s.settle()
	}
	st = s.lastStatus()
	if len(st.EphemeralContainerStatuses) != 2 {
		t.Fatalf("ephemeral statuses %#v, want debug and debug2", st.EphemeralContainerStatuses)
	}
	for i, n := range []string{"debug", "debug2"} {
		e := st.EphemeralContainerStatuses[i]
		if e.Name != n || e.State.Running == nil || e.Image != "busybox:1" || e.RestartCount != 0 {
			t.Errorf("ephemeral status %d: %+v, want %s running", i, e, n)
		}
	}
	for _, c := range st.ContainerStatuses {
		if c.State.Running == nil || c.RestartCount != 0 {
			t.Errorf("regular %s: %+v, want it left running", c.Name, c.State)
		}
	}
	if len(st.InitContainerStatuses) != 1 || st.InitContainerStatuses[0].State.Terminated == nil {
		t.Errorf("init statuses %+v", st.InitContainerStatuses)
	}
}

// TestEphemeralContainersAtCreation: a machine made for a pod that already
// has ephemeral containers, more of them than the init and regular ones
// together (a runner that started again beside a pod being debugged), runs
// every container and lists each ephemeral one on its own list, in the
// spec's order (section 3.4).
func TestEphemeralContainersAtCreation(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:1]
	for _, n := range []string{"debug", "debug2", "debug3"} {
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers,
			v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: n, Image: "busybox:1"}})
	}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	st := s.lastStatus()
	if len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("regular statuses %+v, want foo1 running", st.ContainerStatuses)
	}
	if len(st.EphemeralContainerStatuses) != 3 {
		t.Fatalf("ephemeral statuses %+v, want debug, debug2 and debug3", st.EphemeralContainerStatuses)
	}
	for i, n := range []string{"debug", "debug2", "debug3"} {
		if e := st.EphemeralContainerStatuses[i]; e.Name != n || e.State.Running == nil {
			t.Errorf("ephemeral status %d: %s %+v, want %s running", i, e.Name, e.State, n)
		}
	}
}
