package podlifecycle

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// TestRule6_ResultAfterTheExitCountsForNothing: a probe result that comes
// after its instance exited (in the same relist) is neither counted nor
// recorded: the worker sees the container stopped (section 6, step 5).
func TestRule6_ResultAfterTheExitCountsForNothing(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.Containers[0].ReadinessProbe = execProbe(10, 1)
	s := newSim(t, pod, DefaultOptions())
	wakeUntil(t, s, t0, func(*Result) { dropProbeResults(s, "foo1", Readiness) })
	id := s.lastID("foo1")
	s.now = t0.Add(time.Second)
	s.exit("foo1", 1)
	s.emit(Observation{Kind: ProbeResult, Container: "foo1", ContainerID: id, Probe: Readiness, Outcome: ProbeFailure, Message: "late"})
	if r := s.step(); hasEvent(r, ReasonUnhealthy, "") {
		t.Errorf("events %v: the result of an exited instance was recorded", r.Events)
	}
}

// TestRule3_6_UnknownRunningContainerKilled: a running container the
// runtime reports unknown is killed first and started again (rule 3.6,
// section 3.8).
func TestRule3_6_UnknownRunningContainerKilled(t *testing.T) {
	s := newSim(t, onePod("app:1"), DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	s.emit(Observation{Kind: ContainerUnknown, Container: "foo1", ContainerID: s.lastID("foo1")})
	s.settle()
	var kills []string
	for _, r := range s.all {
		for _, a := range r.Actions {
			if a.Kind == KillContainer {
				kills = append(kills, a.Reason.String()+": "+a.Message)
			}
		}
	}
	if want := []string{KillUnknown.String() + ": " + MessageKillUnknownContainer}; !slices.Equal(kills, want) {
		t.Errorf("kills %v, want %v", kills, want)
	}
	if s.count(StartContainer, "foo1") != 2 {
		t.Errorf("foo1 started %d times, want again after the kill", s.count(StartContainer, "foo1"))
	}
}

// TestRule4_4_RuntimeRemovalKeepsTheBackOff: only the instances a
// RestartAllContainers reset removed spare the next start its crash-loop
// back-off; an older instance the runtime removed on its own (its garbage
// collection) changes nothing of it (rules 4.2 and 4.4).
func TestRule4_4_RuntimeRemovalKeepsTheBackOff(t *testing.T) {
	s := newSim(t, onePod("app:1"), DefaultOptions())
	s.settle()
	first := s.lastID("foo1")
	s.now = s.now.Add(time.Minute)
	s.exit("foo1", 1) // the first crash restarts at once
	s.settle()
	s.now = s.now.Add(5 * time.Second)
	s.exit("foo1", 1)
	s.emit(Observation{Kind: ContainerRemoved, Container: "foo1", ContainerID: first})
	r := s.step()
	if !hasEvent(r, ReasonBackOff, "") || countKind(r, StartContainer) != 0 {
		t.Errorf("second crash: events %v, actions %v; want the back-off", r.Events, actionsOf(r))
	}
}

// TestObservedUser: the user the runtime reports for an instance, on its
// creation, is the container status's user (SupplementalGroupsPolicy,
// spec/containerstate.md section 4.6).
func TestObservedUser(t *testing.T) {
	s := newSim(t, onePod("app:1"), DefaultOptions())
	user := &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 1000, GID: 1000, SupplementalGroups: []int64{1000, 5}}}
	for i := 0; i < 10; i++ {
		for j := range s.obs {
			if s.obs[j].Kind == ContainerCreated {
				s.obs[j].User = user
			}
		}
		s.step()
	}
	st := s.lastStatus()
	if st == nil || st.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("the pod does not run: %+v", st)
	}
	if d := cmp.Diff(user, st.ContainerStatuses[0].User); d != "" {
		t.Errorf("user (-want +got):\n%s", d)
	}
}

// TestRule4_5_FailureRequeue: a failed pull is the end of its sync, which
// the pod worker requeues after the error requeue; only the sync that made
// the sandbox is followed by the relist that finds it, at once. A sandbox
// already there when the machine's first sync ran is no new one, and a
// failure long after the sandbox was made is requeued too (rule 4.5).
func TestRule4_5_FailureRequeue(t *testing.T) {
	t.Run("sandbox-before-the-first-sync", func(t *testing.T) {
		pod := onePod("app:1")
		s := newSim(t, pod, DefaultOptions())
		s.pullOK["app:1"] = false
		s.emit(Observation{Kind: SandboxReady, IP: "10.0.0.1"})
		r := s.step()
		if got := actionsOf(r); !slices.Contains(got, "StartContainer foo1") {
			t.Fatalf("first sync: actions %v, want the start in the sandbox there", got)
		}
		s.now = t0.Add(time.Second)
		r = s.step() // the pull failed at t0
		if want := t0.Add(DefaultErrorRequeue); !r.NextSync.Equal(want) || len(r.Statuses) != 0 {
			t.Errorf("after the failed pull: next sync +%v, %d statuses; want the requeue at +%v and none", r.NextSync.Sub(t0), len(r.Statuses), want.Sub(t0))
		}
	})
	t.Run("long-after-the-sandbox", func(t *testing.T) {
		s := newSim(t, onePod("app:latest"), DefaultOptions())
		s.settle()
		s.now = s.now.Add(time.Minute)
		s.pullOK["app:latest"] = false
		s.exit("foo1", 1)
		r := s.step()
		if got := actionsOf(r); !slices.Contains(got, "PullImage foo1 app:latest Always") {
			t.Fatalf("actions %v, want the restart's pull", got)
		}
		failed := s.now
		s.now = s.now.Add(time.Second)
		r = s.step()
		if want := failed.Add(DefaultErrorRequeue); !r.NextSync.Equal(want) || len(r.Statuses) != 0 {
			t.Errorf("after the failed pull: next sync +%v, %d statuses; want the requeue at +%v and none", r.NextSync.Sub(failed), len(r.Statuses), DefaultErrorRequeue)
		}
	})
}

// TestRule4_5_StaleReadyConditionSyncs: with readiness gates, an update of
// the API pod's status alone syncs at once when its Ready condition differs
// from the one the gates and container statuses give (the kubelet's
// readiness reconcile, rule 4.5).
func TestRule4_5_StaleReadyConditionSyncs(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/gate"}}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	echo := s.pod.DeepCopy()
	echo.ResourceVersion = "42"
	echo.Status = *s.lastStatus().DeepCopy()
	for i := range echo.Status.Conditions {
		if echo.Status.Conditions[i].Type == v1.PodReady {
			echo.Status.Conditions[i].Status, echo.Status.Conditions[i].Message = v1.ConditionTrue, ""
		}
	}
	s.pod = echo
	if r := s.step(); !r.NextSync.Equal(s.now.Add(DefaultSyncFrequency)) {
		t.Errorf("a stale Ready condition did not sync: next sync +%v", r.NextSync.Sub(s.now))
	}
}
