package podlifecycle

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// withEphemeral adds ephemeral containers named names (busybox:1) to a copy
// of pod.
func withEphemeral(pod *v1.Pod, names ...string) *v1.Pod {
	pod = pod.DeepCopy()
	for _, n := range names {
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers,
			v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: n, Image: "busybox:1"}})
	}
	return pod
}

// TestRule8_DeadlinePassedAfterAStatus: the status generated past the
// deadline of a pod that already has one is Failed with reason
// DeadlineExceeded and its message (section 8), not the reason and message
// of the status before.
func TestRule8_DeadlinePassedAfterAStatus(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.ActiveDeadlineSeconds = ptr(int64(30))
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = t0.Add(30 * time.Second)
	r := s.step()
	if len(r.Statuses) != 1 {
		t.Fatalf("%d statuses at the deadline, want 1", len(r.Statuses))
	}
	if st := r.Statuses[0]; st.Phase != v1.PodFailed || st.Reason != "DeadlineExceeded" || st.Message != MessageDeadlineExceeded {
		t.Errorf("status at the deadline: %s %q %q", st.Phase, st.Reason, st.Message)
	}
}

// TestEphemeralStatusesAcrossOtherChanges: the statuses of ephemeral
// containers, more of them than regular ones, stay as they are while
// another container's status changes.
func TestEphemeralStatusesAcrossOtherChanges(t *testing.T) {
	s := newSim(t, withEphemeral(onePod("app:1"), "debug", "debug2", "debug3"), DefaultOptions())
	s.settle()
	for i := 0; i < 3; i++ {
		s.now = s.now.Add(time.Minute)
		s.exit("foo1", 1)
		s.settle()
		s.now = s.now.Add(5 * time.Minute)
		s.settle()
	}
	st := s.lastStatus()
	if len(st.EphemeralContainerStatuses) != 3 {
		t.Fatalf("ephemeral statuses %+v", st.EphemeralContainerStatuses)
	}
	for i, n := range []string{"debug", "debug2", "debug3"} {
		if e := st.EphemeralContainerStatuses[i]; e.Name != n || e.State.Running == nil {
			t.Errorf("ephemeral status %d: %s %+v, want %s running", i, e.Name, e.State, n)
		}
	}
	if c := st.ContainerStatuses[0]; c.RestartCount != 3 || c.State.Running == nil {
		t.Errorf("foo1: restarts %d, state %+v; want 3 and running", c.RestartCount, c.State)
	}
}

// TestEphemeralStatusOnlyWithAnInstance: an ephemeral container is listed
// in the status once it has an instance or a start error (package doc,
// differences from Kubernetes): not in the status generated at the start
// of the sync that starts it, and no more once the runtime removed its
// instance, when the list is left out again.
func TestEphemeralStatusOnlyWithAnInstance(t *testing.T) {
	s := newSim(t, onePod("app:1"), DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	s.pod = withEphemeral(s.pod, "debug")
	r := s.step()
	if countKind(r, StartContainer) != 1 {
		t.Fatalf("actions %v, want debug started", actionsOf(r))
	}
	for _, st := range r.Statuses {
		if len(st.EphemeralContainerStatuses) != 0 {
			t.Errorf("the sync that starts debug lists it already: %+v", st.EphemeralContainerStatuses)
		}
	}
	s.settle()
	if st := s.lastStatus(); len(st.EphemeralContainerStatuses) != 1 {
		t.Fatalf("debug not listed once it runs: %+v", st.EphemeralContainerStatuses)
	}
	s.now = s.now.Add(time.Second)
	id := s.lastID("debug")
	s.emit(Observation{Kind: ContainerExited, Container: "debug", ContainerID: id})
	s.settle()
	s.now = s.now.Add(time.Second)
	s.emit(Observation{Kind: ContainerRemoved, Container: "debug", ContainerID: id})
	s.settle()
	if st := s.lastStatus(); st.EphemeralContainerStatuses != nil {
		t.Errorf("ephemeral statuses %#v once debug's instance is gone, want none", st.EphemeralContainerStatuses)
	}
}
