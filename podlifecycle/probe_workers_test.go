package podlifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
	v1 "k8s.io/api/core/v1"
)

// TestRule6_EachWorkerTicksOnItsOwn: the workers of one container tick
// independently: one that skips its tick (a startup probe of a started
// container, step 8; a startup probe at a deletion, step 6; an exec
// readiness probe cancelled by the deletion in 1.35, step 9) does not keep
// another whose tick falls at the same instant from running.
func TestRule6_EachWorkerTicksOnItsOwn(t *testing.T) {
	t.Run("startup-done", func(t *testing.T) {
		pod := onePod("app:1")
		c := &pod.Spec.Containers[0]
		c.StartupProbe, c.LivenessProbe = execProbe(2, 0), execProbe(2, 0)
		s := newSim(t, pod, DefaultOptions())
		runs := 0
		wakeUntil(t, s, t0.Add(11*time.Second), func(r *Result) { runs += probeRuns(r, "foo1", Liveness) })
		if runs < 4 {
			t.Errorf("liveness ran %d times in 11 s at a period of 2 s once started, want at least 4", runs)
		}
	})
	t.Run("startup-ended-at-deletion", func(t *testing.T) {
		pod := withSidecar()
		c := &pod.Spec.InitContainers[0]
		c.StartupProbe, c.ReadinessProbe = execProbe(2, 1000), execProbe(2, 0)
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
		s := newSim(t, pod, DefaultOptions())
		s.probe["side"] = ProbeFailure // never started: the startup worker ticks on
		s.holdKill["foo1"], s.holdKill["side"] = true, true
		runThenDelete(t, s, t0.Add(5*time.Second))
		var at []time.Duration
		wakeUntil(t, s, t0.Add(12*time.Second), func(r *Result) {
			if probeRuns(r, "side", Readiness) > 0 {
				at = append(at, s.now.Sub(t0))
			}
		})
		if len(at) == 0 || at[0] != 6*time.Second {
			t.Errorf("readiness runs after the deletion at %v, want the first at +6s, the tick at which the startup worker ended", at)
		}
	})
	t.Run("exec-cancelled-1.35", func(t *testing.T) {
		pod := withSidecar()
		c := &pod.Spec.InitContainers[0]
		c.ReadinessProbe, c.LivenessProbe = execProbe(2, 0), execProbe(2, 0)
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
		s := newSim(t, pod, DefaultOptionsFor(kubeversion.V1_35))
		s.holdKill["foo1"], s.holdKill["side"] = true, true
		runThenDelete(t, s, t0.Add(5*time.Second))
		wakeUntil(t, s, t0.Add(12*time.Second), nil)
		if ps := s.m.find("side").insts[0].probes[Liveness-1]; !ps.ended || ps.result != containerstate.ProbeSuccess {
			t.Errorf("the sidecar's liveness worker after the deletion: ended %v result %v, want ended with Success (step 6)", ps.ended, ps.result)
		}
	})
}

// TestRule6_Step4_ResultsOfAWorkerOnHoldOrEndedCountForNothing: a result
// that comes back after its worker went on hold (a stored liveness
// Failure, step 12) or ended (a sidecar's liveness at a deletion, step 6)
// is not counted and records no event.
func TestRule6_Step4_ResultsOfAWorkerOnHoldOrEndedCountForNothing(t *testing.T) {
	t.Run("on-hold", func(t *testing.T) {
		pod := onePod("app:1")
		pod.Spec.Containers[0].LivenessProbe = execProbe(2, 1)
		s := newSim(t, pod, DefaultOptions())
		s.holdKill["foo1"] = true
		wakeUntil(t, s, t0, func(*Result) { dropProbeResults(s, "foo1", Liveness) })
		s.emit(Observation{Kind: ProbeResult, Container: "foo1", ContainerID: s.lastID("foo1"), Probe: Liveness, Outcome: ProbeFailure, Message: "down"})
		s.step() // threshold 1: Failure stored, the kill asked, the worker on hold
		lateResult(t, s, "foo1")
	})
	t.Run("ended", func(t *testing.T) {
		pod := withSidecar()
		pod.Spec.InitContainers[0].LivenessProbe = execProbe(2, 1)
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
		s := newSim(t, pod, DefaultOptions())
		s.holdKill["foo1"], s.holdKill["side"] = true, true
		wakeUntil(t, s, t0.Add(3*time.Second), nil)
		s.pod = deleted(s.pod, s.now, 30)
		wakeUntil(t, s, t0.Add(5*time.Second), nil) // the liveness tick after the deletion ends the worker
		if ps := s.m.find("side").insts[0].probes[Liveness-1]; !ps.ended {
			t.Fatal("the sidecar's liveness worker did not end at the deletion")
		}
		lateResult(t, s, "side")
	})
}

// lateResult hands the machine a liveness failure of container name's
// newest instance and fails if it records anything for it.
func lateResult(t *testing.T, s *sim, name string) {
	t.Helper()
	s.obs = nil
	s.now = s.now.Add(100 * time.Millisecond)
	s.emit(Observation{Kind: ProbeResult, Container: name, ContainerID: s.lastID(name), Probe: Liveness, Outcome: ProbeFailure, Message: "late"})
	r := s.step()
	for _, e := range r.Events {
		if strings.Contains(e.Message, "late") {
			t.Errorf("a late result recorded %s %q", e.Reason, e.Message)
		}
	}
}

// TestRule6_Step2_EveryShownContainerIsProbed: a status marks every
// running container it shows as seen by the workers, also after a
// container that has no instance (its image cannot be pulled).
func TestRule6_Step2_EveryShownContainerIsProbed(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[0].Image = "missing:1"
	pod.Spec.Containers[1].ReadinessProbe = execProbe(2, 0)
	s := newSim(t, pod, DefaultOptions())
	s.pullOK["missing:1"] = false
	runs := 0
	wakeUntil(t, s, t0.Add(5*time.Second), func(r *Result) { runs += probeRuns(r, "foo2", Readiness) })
	if runs == 0 {
		t.Error("foo2's readiness never ran behind foo1, which has no instance")
	}
}

// TestContainerstate9_RunsAskedForOtherContainersWhileOneIsInFlight: a
// status asks for a readiness run of every started container that is not
// ready; one whose run is in flight keeps its request for later, and the
// containers after it still get theirs.
func TestContainerstate9_RunsAskedForOtherContainersWhileOneIsInFlight(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[0].ReadinessProbe = execProbe(10, 0)
	pod.Spec.Containers[1].ReadinessProbe = execProbe(10, 0)
	s := newSim(t, pod, DefaultOptions())
	s.probe["foo2"] = ProbeFailure
	// foo1's first run stays in flight; foo2's fails: neither is ready.
	wakeUntil(t, s, t0.Add(time.Second), func(*Result) { dropProbeResults(s, "foo1", Readiness) })
	s.now = t0.Add(3 * time.Second)
	p := s.pod.DeepCopy()
	p.Annotations = map[string]string{"a": "b"} // an update: a sync
	s.pod = p
	r := s.step()
	if probeRuns(r, "foo2", Readiness) != 1 {
		t.Errorf("the sync at +3s asked for %d readiness runs of foo2, want 1 (foo1's in flight does not hold it)", probeRuns(r, "foo2", Readiness))
	}
}

// TestRule4_5_InitialReadinessFailureWithoutARun: the initial readiness
// Failure stored for a container still inside its initialDelaySeconds
// syncs the pod at once although no run follows: the Step that stored it
// asks to be woken at its own time.
func TestRule4_5_InitialReadinessFailureWithoutARun(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.Containers[0].ReadinessProbe = execProbe(10, 0)
	pod.Spec.Containers[0].ReadinessProbe.InitialDelaySeconds = 30
	s := newSim(t, pod, DefaultOptions())
	for range 10 {
		r := s.step()
		if st := s.lastStatus(); st != nil && len(st.ContainerStatuses) > 0 && st.ContainerStatuses[0].State.Running != nil {
			if !r.NextSync.Equal(s.now) {
				t.Fatalf("the Step whose status first shows foo1 running asks for +%v, want +%v (a sync at once)", r.NextSync.Sub(t0), s.now.Sub(t0))
			}
			return
		}
	}
	t.Fatal("foo1 never shown running")
}

// TestRule6_Step2_NoStatusNoProbe: a deletion while a sync waits on a
// pull generates no status until the pull returns (rule 4.5), so a
// container that sync started is neither shown nor probed meanwhile, and
// no status asks for its readiness run.
func TestRule6_Step2_NoStatusNoProbe(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[0].ReadinessProbe = execProbe(2, 0)
	pod.Spec.Containers[1].ImagePullPolicy = "Always"
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
	s := newSim(t, pod, DefaultOptions())
	s.holdKill["foo1"] = true
	holdPull := func() {
		kept := s.obs[:0]
		for _, o := range s.obs {
			if o.Container != "foo2" {
				kept = append(kept, o)
			}
		}
		s.obs = kept
	}
	runs := 0
	count := func(r *Result) {
		holdPull()
		runs += probeRuns(r, "foo1", Readiness)
	}
	wakeUntil(t, s, t0.Add(500*time.Millisecond), count)
	s.now = t0.Add(time.Second)
	s.pod = deleted(s.pod, s.now, 30)
	wakeUntil(t, s, t0.Add(6*time.Second), count)
	if runs != 0 {
		t.Errorf("foo1's readiness ran %d times while no status showed it, want none", runs)
	}
}

// TestRule4_5_NoWakeAfterTheTerminalStatus: a pod that becomes terminal
// in the sync after a failed postStart hook's kill (its sandbox died
// meanwhile, restartPolicy Never) is finished: the relist that sync would
// have waited for (rule 4.5) asks for no wake-up.
func TestRule4_5_NoWakeAfterTheTerminalStatus(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"hook"}}}}
	s := newSim(t, pod, DefaultOptions())
	var hook []Observation
	for range 10 {
		s.step()
		kept := s.obs[:0]
		for _, o := range s.obs {
			if o.Kind == HookResult {
				hook = append(hook, o)
				continue
			}
			kept = append(kept, o)
		}
		s.obs = kept
		if len(s.obs) == 0 {
			break
		}
	}
	if len(hook) != 1 {
		t.Fatalf("%d postStart results held, want 1", len(hook))
	}
	s.now = t0.Add(2 * time.Second) // the hook ran across a relist
	hook[0].Failed = true
	s.emit(hook[0])
	s.step() // the kill; its exit is queued
	s.emit(Observation{Kind: SandboxNotReady, Attempt: 0})
	var r *Result
	for range 5 {
		r = s.step()
		if r.Finished {
			break
		}
	}
	if !r.Finished || !r.NextSync.IsZero() {
		t.Errorf("finished %v, next wake +%v; want finished with no wake-up", r.Finished, r.NextSync.Sub(t0))
	}
}

// runThenDelete runs s until at and deletes its pod then, with a grace of
// 30 s.
func runThenDelete(t *testing.T, s *sim, at time.Time) {
	t.Helper()
	wakeUntil(t, s, at, nil)
	s.now = at
	s.pod = deleted(s.pod, at, 30)
}

// TestRule6_StreakGoesOnAcrossInstances: a readiness probe with a
// successThreshold of 2. The first instance needs two successes to be
// ready; once it crashed and was restarted, the new instance is ready after
// its first success, as the kubelet's worker, which is the container's,
// goes on counting from the old instance's run of successes (oracle case
// gen-97: a sidecar ready 1 s after its restart, not two periods later).
func TestRule6_StreakGoesOnAcrossInstances(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{PeriodSeconds: 10, SuccessThreshold: 2, FailureThreshold: 3}
	s := newSim(t, pod, DefaultOptions())
	// run steps the pod for d of virtual time.
	run := func(d time.Duration) {
		end := s.now.Add(d)
		for i := 0; i < 1000 && s.now.Before(end); i++ {
			r := s.step()
			if len(s.obs) == 0 {
				if r.NextSync.IsZero() || r.NextSync.After(end) {
					s.now = end
				} else {
					s.now = r.NextSync
				}
			}
		}
	}
	// runsUntilReady counts the readiness runs of instance id in the
	// results from from on, up to the first status showing it ready.
	runsUntilReady := func(from int, id string) int {
		t.Helper()
		runs := 0
		for _, r := range s.all[from:] {
			for _, a := range r.Actions {
				if a.Kind == RunProbe && a.Probe == Readiness && a.ContainerID == id {
					runs++
				}
			}
			for _, st := range r.Statuses {
				if cs := st.ContainerStatuses; len(cs) == 1 && cs[0].Ready && cs[0].ContainerID == id {
					return runs
				}
			}
		}
		t.Fatalf("%s never ready", id)
		return 0
	}
	run(30 * time.Second)
	first := s.lastID("foo1")
	if n := runsUntilReady(0, first); n != 2 {
		t.Fatalf("the first instance was ready after %d runs, want 2", n)
	}
	from := len(s.all)
	s.exit("foo1", 1)
	run(time.Minute)
	second := s.lastID("foo1")
	if second == first {
		t.Fatal("not restarted")
	}
	if n := runsUntilReady(from, second); n != 1 {
		t.Fatalf("the restarted instance was ready after %d runs, want 1: the worker's run of successes goes on", n)
	}
}

// TestRule4_5_EndedWorkerSyncsAtEveryRelist: under restartPolicy
// OnFailure, a container with a liveness probe exits 0 and will not run
// again, while another runs on. Its probe worker ends; each sync of the
// kubelet starts it again, and the new worker's first run stores Failure
// for the stopped container, a change that syncs the pod at the next
// relist: the pod is synced every second from then on (oracle case
// gen-142, from the oracle node's log: "SyncLoop (probe)" every second
// after the container's exit). Without the probe it is synced at the
// resync period.
func TestRule4_5_EndedWorkerSyncsAtEveryRelist(t *testing.T) {
	for _, probe := range []bool{true, false} {
		pod := podP3()
		pod.Spec.Containers = pod.Spec.Containers[:2]
		pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
		if probe {
			pod.Spec.Containers[1].LivenessProbe = &v1.Probe{PeriodSeconds: 4, FailureThreshold: 3}
		}
		s := newSim(t, pod, DefaultOptions())
		s.settle()
		s.now = s.now.Add(10 * time.Second)
		s.step()
		s.exit("foo2", 0)
		// Run a minute, collecting the gaps between the syncs that came
		// after the worker saw the container stopped.
		var gaps []time.Duration
		last := time.Time{}
		end := s.now.Add(time.Minute)
		for i := 0; i < 500 && s.now.Before(end); i++ {
			r := s.step()
			if len(s.obs) > 0 {
				continue
			}
			if r.NextSync.IsZero() {
				t.Fatalf("probe %v: no wake-up asked for", probe)
			}
			if !last.IsZero() {
				gaps = append(gaps, r.NextSync.Sub(last))
			}
			last = r.NextSync
			s.now = r.NextSync
		}
		if probe {
			if len(gaps) < 40 || slices.Max(gaps[5:]) > time.Second {
				t.Errorf("with a liveness probe: %d syncs a minute, gaps %v; want one a second", len(gaps), gaps)
			}
		} else if len(gaps) > 3 {
			t.Errorf("without a probe: %d syncs a minute, gaps %v; want the resync's", len(gaps), gaps)
		}
	}
}
