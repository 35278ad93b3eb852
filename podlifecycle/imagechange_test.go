package podlifecycle

import (
	"slices"
	"testing"
	"time"
)

// TestImageChangeWhileAStartIsInFlight: a spec change waits while a start
// is in flight (the sync after it sees its answer), except a running
// container's new image, the only spec change that restarts a container
// (section 1): that pod syncs at once and the container is killed.
func TestImageChangeWhileAStartIsInFlight(t *testing.T) {
	s := newSim(t, podP3(), DefaultOptions())
	s.settle()
	for range 2 { // the first exit restarts at once, the second after a back-off
		s.exit("foo2", 1)
		s.settle()
	}
	for started := false; !started; {
		next := s.all[len(s.all)-1].NextSync
		if next.IsZero() || next.Sub(t0) > 5*time.Minute {
			t.Fatalf("foo2 not started again: next sync %v", next.Sub(t0))
		}
		s.now = next
		for _, a := range s.step().Actions {
			started = started || a.Container == "foo2"
		}
	}
	s.obs = nil // the start is not answered: it stays in flight

	s.now = s.now.Add(time.Second)
	if got := actionsOf(s.step()); len(got) != 0 {
		t.Fatalf("nothing changed, a start in flight: %v, want nothing", got)
	}
	s.pod = s.pod.DeepCopy()
	s.pod.Spec.Containers[0].Image = "busybox:2"
	s.pod.Spec.Containers[2].Env = nil // nothing else of the spec changes
	got := actionsOf(s.step())
	if !slices.ContainsFunc(got, func(a string) bool {
		return len(a) > len("KillContainer foo1") && a[:len("KillContainer foo1")] == "KillContainer foo1"
	}) {
		t.Fatalf("foo1's image changed, a start in flight: %v, want foo1 killed", got)
	}
	for _, e := range s.events() {
		if e == "Normal Killing Container foo1 definition changed, will be restarted spec.containers{foo1}" {
			return
		}
	}
	t.Fatalf("events %v, want foo1's Killing for its changed definition", s.events())
}
