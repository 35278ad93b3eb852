package containerstatetest

import (
	"errors"
	"testing"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

func status(s v1.ContainerState, rc int32, ready bool, started *bool) v1.ContainerStatus {
	return v1.ContainerStatus{Name: "app", State: s, RestartCount: rc, Ready: ready, Started: started}
}

var (
	yes, no    = true, false
	waiting    = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}
	running    = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Now()}}
	terminated = func(code int32, reason string) v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, Reason: reason}}
	}
)

// TestCheckerCatches shows that every invariant can fail.
func TestCheckerCatches(t *testing.T) {
	never := TargetContainer{Pod: containerstate.Pod{Spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "app"}}}},
		Name: "app", Container: v1.Container{Name: "app"}, Kind: containerstate.Regular}
	tests := []struct {
		invariant string
		prev, st  v1.ContainerStatus
		ev        containerstate.Event
	}{
		{"exactly one state is set", status(waiting, 0, false, &no), status(v1.ContainerState{}, 0, false, &no), containerstate.Event{}},
		{"restartCount never decreases", status(waiting, 2, false, &no), status(waiting, 1, false, &no), containerstate.Event{}},
		{"Terminated goes back only when a restart is allowed", status(terminated(0, "Completed"), 0, false, &no), status(running, 0, true, &yes), containerstate.Event{}},
		{"the move is in the transition table", status(waiting, 0, false, &no), status(running, 0, true, &yes), containerstate.Event{Kind: containerstate.PullStarted}},
		{"started implies Running", status(waiting, 0, false, &no), status(waiting, 0, false, &yes), containerstate.Event{}},
		{"a ready container is Running and started (or an init container that exited 0)", status(waiting, 0, false, &no), status(running, 0, true, &no), containerstate.Event{}},
		{"lastState is empty or Terminated", status(waiting, 0, false, &no), v1.ContainerStatus{State: waiting, LastTerminationState: running}, containerstate.Event{}},
		{"ContainerStatusUnknown has exit code 137", status(waiting, 0, false, &no), status(terminated(1, containerstate.ReasonContainerStatusUnknown), 0, false, &no), containerstate.Event{}},
	}
	for _, tt := range tests {
		c := NewChecker(never, containerstate.DefaultFeatures())
		if err := c.Step(containerstate.Event{}, tt.prev); err != nil {
			t.Fatalf("%s: the first status is fine: %v", tt.invariant, err)
		}
		err := c.Step(tt.ev, tt.st)
		var ie *InvariantError
		if !errors.As(err, &ie) || ie.Invariant != tt.invariant {
			t.Errorf("want invariant %q broken, got %v", tt.invariant, err)
		}
	}
}

// TestEventsAreAccepted checks that every generated sequence is one a
// Machine accepts, in time order.
func TestEventsAreAccepted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		target := Target().Draw(t, "target")
		events := Events(target).Draw(t, "events")
		m, err := containerstate.NewMachine(containerstate.DefaultOptions(), target.Pod, target.Name)
		if err != nil {
			t.Fatal(err)
		}
		for i, ev := range events {
			if i > 0 && ev.At.Before(events[i-1].At) {
				t.Fatalf("event %d goes back in time", i)
			}
			if err := m.Step(ev); err != nil {
				t.Fatalf("event %d refused: %v", i, err)
			}
		}
	})
}
