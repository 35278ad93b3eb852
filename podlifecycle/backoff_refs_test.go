package podlifecycle

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// livenessPod is onePod with a liveness probe that fails at its first
// failure.
func livenessPod() *v1.Pod {
	pod := onePod("app:1")
	pod.Spec.Containers[0].LivenessProbe = &v1.Probe{PeriodSeconds: 10, FailureThreshold: 1}
	return pod
}

// killByLiveness makes foo1's liveness probe fail now and runs the kill and
// the sync after it; it returns that sync's Result.
func killByLiveness(t *testing.T, s *sim) *Result {
	t.Helper()
	s.emit(Observation{Kind: ProbeResult, Container: "foo1", ContainerID: s.lastID("foo1"), Probe: Liveness, Outcome: ProbeFailure})
	if r := s.step(); countKind(r, KillContainer) != 1 {
		t.Fatalf("no liveness kill: %v", actionsOf(r))
	}
	return s.step()
}

// TestRule4_2_BackoffRefIsTheNewestExit: the restart of a container killed
// by its liveness probe is backed off against the newest instance that had
// exited when the killing sync began (4.2 step 1): not an older exit long
// out of its back-off, and not an instance that never ran.
func TestRule4_2_BackoffRefIsTheNewestExit(t *testing.T) {
	t.Run("not-an-older-exit", func(t *testing.T) {
		s := newSim(t, livenessPod(), DefaultOptions())
		s.settle()
		s.now = t0.Add(time.Minute)
		s.exit("foo1", 1) // long ago: restarted at once
		s.settle()
		s.now = t0.Add(2 * time.Minute)
		s.exit("foo1", 1) // recent: backed off 10 s
		s.settle()
		s.now = s.now.Add(11 * time.Second)
		s.settle()
		if n := s.count(StartContainer, "foo1"); n != 3 {
			t.Fatalf("foo1 started %d times, want 3", n)
		}
		s.now = s.now.Add(4 * time.Second)
		if r := killByLiveness(t, s); !hasEvent(r, ReasonBackOff, "") || countKind(r, StartContainer) != 0 {
			t.Errorf("the killed container's restart 15 s after the recent exit: %v %v, want it backed off", actionsOf(r), r.Events)
		}
	})
	t.Run("not-an-instance-that-never-ran", func(t *testing.T) {
		s := newSim(t, livenessPod(), DefaultOptions())
		s.settle()
		s.now = t0.Add(time.Minute)
		crash := s.now
		s.startFail["foo1"] = "exec format error"
		s.exit("foo1", 1) // restarted at once; that start fails, the instance stays created
		s.settle()
		s.now = crash.Add(DefaultErrorRequeue)
		s.settle() // started again at the requeue
		if n := s.count(StartContainer, "foo1"); n != 3 {
			t.Fatalf("foo1 started %d times, want 3", n)
		}
		s.now = crash.Add(12 * time.Second)
		if r := killByLiveness(t, s); !hasEvent(r, ReasonBackOff, "") || countKind(r, StartContainer) != 0 {
			t.Errorf("the killed container's restart 12 s after the exit: %v %v, want it backed off", actionsOf(r), r.Events)
		}
	})
}

// TestRule4_2_BackoffAcrossPurgeIsTheNewestExit: the starts of the sync
// that purged the init containers for a new sandbox are backed off against
// each one's newest exit in the status the sync began with, not an older
// one; and the sync then waits for the back-off's end, not less (4.2 step
// 1, 4.1 step 2, rule 4.5). The start at the back-off's end finds no
// instance of the container, so it neither checks nor advances the
// back-off: the next crash is held for the same 10 s.
func TestRule4_2_BackoffAcrossPurgeIsTheNewestExit(t *testing.T) {
	s := newSim(t, withSidecar(), DefaultOptions())
	s.settle()
	s.now = t0.Add(time.Second)
	s.exit("side", 1) // restarted at once
	s.settle()
	s.now = t0.Add(time.Minute)
	s.exit("side", 1)
	s.emit(Observation{Kind: SandboxNotReady})
	backedOff := false
	var expiry time.Time
	for i := 0; i < 6 && !backedOff; i++ {
		r := s.step()
		if got := startsOf(r); slices.Contains(got, "StartContainer side restart=2") {
			t.Fatalf("side started in the new sandbox 0 s after its crash: %v", got)
		}
		backedOff = hasEvent(r, ReasonBackOff, CrashLoopBackOffMessage("side", "foo", "foo-ns", "12345678"))
		expiry = r.NextSync
	}
	if !backedOff {
		t.Fatal("no crash-loop BackOff for side in the new sandbox")
	}
	if !expiry.After(s.now) {
		t.Fatalf("the sync that found side backed off asks to be woken at +%v, now", expiry.Sub(s.now))
	}
	starts := s.count(StartContainer, "side")
	s.now = expiry
	s.settle()
	if s.count(StartContainer, "side") != starts+1 {
		t.Fatalf("side not started at the back-off's end: %v", s.events())
	}
	s.now = s.now.Add(time.Second)
	crash := s.now
	s.exit("side", 1)
	r := s.step()
	if want := crash.Add(10 * time.Second); !hasEvent(r, ReasonBackOff, "") || !r.NextSync.Equal(want) {
		t.Errorf("the next crash: events %v, next sync +%v; want the back-off of 10 s", r.Events, r.NextSync.Sub(crash))
	}
}

// TestRule4_5_SandboxSyncWaitsForItsStarts: the Step that sees the new
// sandbox ready issues the sync's starts; until they are answered, the
// next sync is the resync (rule 4.5: the relist after a sync that acted
// comes once its calls returned).
func TestRule4_5_SandboxSyncWaitsForItsStarts(t *testing.T) {
	s := newSim(t, onePod("app:1"), DefaultOptions())
	s.step()
	r := s.step() // the sandbox is ready: the pull and the start
	if got := startsOf(r); !slices.Equal(got, []string{"StartContainer foo1"}) {
		t.Fatalf("starts %v", got)
	}
	if want := s.now.Add(DefaultSyncFrequency); !r.NextSync.Equal(want) {
		t.Errorf("next sync +%v, want the resync +%v", r.NextSync.Sub(s.now), want.Sub(s.now))
	}
}
