package podlifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodestate/nodestate/kubeversion"
	v1 "k8s.io/api/core/v1"
)

// execProbe is an exec probe with period seconds and failureThreshold
// failures (0: the default).
func execProbe(period, failures int32) *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: period, FailureThreshold: failures}
}

// wakeUntil steps s at once while observations are queued and otherwise at
// each Result's NextSync, until that is after end, calling each with every
// Result. A machine with nothing queued must ask to be woken after now,
// except for a sync due at once (a result its sync stored, which leaves it
// dirty), and then only once: a wake-up at an instant already past is a
// tick that was never counted, and a second one at the same instant a
// loop.
func wakeUntil(t *testing.T, s *sim, end time.Time, each func(r *Result)) {
	t.Helper()
	atOnce := false
	for i := 0; i < 500; i++ {
		r := s.step()
		if each != nil {
			each(r)
		}
		if len(s.obs) > 0 {
			continue
		}
		if r.NextSync.IsZero() {
			return
		}
		if r.NextSync.Before(s.now) || (r.NextSync.Equal(s.now) && (atOnce || !s.m.dirty)) {
			t.Fatalf("at +%v with nothing queued the machine asks to be woken at +%v", s.now.Sub(t0), r.NextSync.Sub(t0))
		}
		atOnce = r.NextSync.Equal(s.now)
		if r.NextSync.After(end) {
			return
		}
		s.now = r.NextSync
	}
	t.Fatal("too many wake-ups")
}

// dropProbeResults drops the queued results of container's probe p: the
// runs stay in flight.
func dropProbeResults(s *sim, container string, p Probe) {
	kept := s.obs[:0]
	for _, o := range s.obs {
		if o.Kind != ProbeResult || o.Container != container || o.Probe != p {
			kept = append(kept, o)
		}
	}
	s.obs = kept
}

// probeRuns counts the RunProbe actions of r for container and probe.
func probeRuns(r *Result, container string, p Probe) int {
	n := 0
	for _, a := range r.Actions {
		if a.Kind == RunProbe && a.Container == container && a.Probe == p {
			n++
		}
	}
	return n
}

// TestRule6_Step12_LivenessOnHoldAfterFailure: once a liveness Failure is
// stored the worker goes on hold until a new container ID: the instance
// being killed is not probed again (section 6, steps 4 and 12).
func TestRule6_Step12_LivenessOnHoldAfterFailure(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
	pod.Spec.Containers[0].LivenessProbe = execProbe(2, 1)
	pod.Spec.Containers[1].ReadinessProbe = execProbe(2, 0) // wakes the machine every 2 s
	s := newSim(t, pod, DefaultOptions())
	s.probe["foo1"] = ProbeFailure
	s.holdKill["foo1"] = true
	kills, after := 0, 0
	wakeUntil(t, s, t0.Add(20*time.Second), func(r *Result) {
		if kills > 0 {
			after += probeRuns(r, "foo1", Liveness)
		}
		kills += countKind(r, KillContainer)
	})
	if kills != 1 {
		t.Fatalf("%d kills, want the liveness Failure's one", kills)
	}
	if after != 0 {
		t.Errorf("%d liveness runs after the Failure was stored, want none: the worker is on hold", after)
	}
}

// TestRule6_Step5_RunInFlightNotRepeated: a probe run that was asked for
// and not answered is not asked for again at the worker's next ticks.
func TestRule6_Step5_RunInFlightNotRepeated(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[0].LivenessProbe = execProbe(2, 0)
	pod.Spec.Containers[1].ReadinessProbe = execProbe(2, 0) // wakes the machine every 2 s
	s := newSim(t, pod, DefaultOptions())
	runs := 0
	wakeUntil(t, s, t0.Add(11*time.Second), func(r *Result) {
		runs += probeRuns(r, "foo1", Liveness)
		dropProbeResults(s, "foo1", Liveness) // the runner never answers
	})
	if runs != 1 {
		t.Errorf("%d liveness runs, want 1: the first is never answered", runs)
	}
}

// TestRule6_Step8_StartupGatesTheOtherProbes: until the startup probe
// stores Success, liveness and readiness skip their ticks; their workers
// still tick, so the machine never asks to be woken for a tick already
// past (section 6, step 8). The startup run is never answered here, so no
// answer wakes the machine between the ticks.
func TestRule6_Step8_StartupGatesTheOtherProbes(t *testing.T) {
	pod := onePod("app:1")
	c := &pod.Spec.Containers[0]
	c.StartupProbe, c.ReadinessProbe, c.LivenessProbe = execProbe(2, 1000), execProbe(2, 0), execProbe(3, 0)
	s := newSim(t, pod, DefaultOptions())
	s.probe["foo1"] = ProbeFailure
	var startup, others int
	wakeUntil(t, s, t0.Add(30*time.Second), func(r *Result) {
		startup += probeRuns(r, "foo1", Startup)
		others += probeRuns(r, "foo1", Readiness) + probeRuns(r, "foo1", Liveness)
		dropProbeResults(s, "foo1", Startup)
	})
	if startup != 1 {
		t.Errorf("%d startup runs, want the one left in flight", startup)
	}
	if others != 0 {
		t.Errorf("%d readiness or liveness runs before the startup probe passed, want none", others)
	}
}

// TestRule7_3_WorkersTickWhileTerminating: while a pod terminates, the
// liveness and startup probes of its regular containers stop, its
// readiness probes and its sidecars' probes go on ticking (a sidecar's
// liveness and startup store Success and end, section 6 step 6), and the
// machine keeps asking to be woken at their next ticks, never at one
// already past (sections 6 and 7.3).
func TestRule7_3_WorkersTickWhileTerminating(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version kubeversion.Version
		outcome ProbeOutcome
		pod     func() *v1.Pod
	}{
		{"regular-container-not-started", kubeversion.V1_37, ProbeFailure, func() *v1.Pod {
			pod := onePod("app:1")
			c := &pod.Spec.Containers[0]
			c.StartupProbe, c.ReadinessProbe = execProbe(2, 1000), execProbe(2, 0)
			return pod
		}},
		{"sidecar-not-started", kubeversion.V1_37, ProbeFailure, func() *v1.Pod {
			pod := withSidecar()
			c := &pod.Spec.InitContainers[0]
			c.StartupProbe, c.ReadinessProbe = execProbe(2, 1000), execProbe(2, 0)
			return pod
		}},
		{"sidecar-exec-probes-cancelled", kubeversion.V1_35, ProbeSuccess, func() *v1.Pod {
			pod := withSidecar()
			c := &pod.Spec.InitContainers[0]
			c.ReadinessProbe, c.LivenessProbe = execProbe(2, 0), execProbe(2, 0)
			return pod
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod()
			pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
			s := newSim(t, pod, DefaultOptionsFor(tc.version))
			s.probe["side"], s.probe["foo1"] = tc.outcome, tc.outcome
			s.holdKill["foo1"], s.holdKill["side"] = true, true
			wakeUntil(t, s, t0.Add(5*time.Second), nil)
			del := s.now.Add(time.Second)
			s.now = del
			s.pod = deleted(s.pod, del, 30)
			startupAfter := 0
			wakeUntil(t, s, del.Add(20*time.Second), func(r *Result) { startupAfter += probeRuns(r, "foo1", Startup) })
			if startupAfter != 0 {
				t.Errorf("%d startup runs of the regular container after the deletion, want none", startupAfter)
			}
		})
	}
}

// TestRule6_ProbesOfOneContainerAfterAnother: the probes of a container run
// whatever the state of the containers before it in the spec: an exited
// one, a regular init container that completed (section 6).
func TestRule6_ProbesOfOneContainerAfterAnother(t *testing.T) {
	t.Run("after-an-exited-container", func(t *testing.T) {
		pod := podP3()
		pod.Spec.Containers = pod.Spec.Containers[:2]
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		pod.Spec.Containers[1].ReadinessProbe = execProbe(2, 0)
		s := newSim(t, pod, DefaultOptions())
		wakeUntil(t, s, t0.Add(3*time.Second), nil)
		s.exit("foo1", 0)
		runs := 0
		wakeUntil(t, s, s.now.Add(10*time.Second), func(r *Result) { runs += probeRuns(r, "foo2", Readiness) })
		if runs < 4 {
			t.Errorf("foo2's readiness ran %d times in 10 s at a period of 2 s after foo1 exited", runs)
		}
	})
	t.Run("after-an-init-container", func(t *testing.T) {
		// The readiness run a status asks for once it finds the container
		// started and not ready (containerstate.md section 9), then the
		// worker's ticks from that run on.
		pod := onePod("app:1")
		pod.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "app:1"}}
		pod.Spec.Containers[0].ReadinessProbe = execProbe(10, 0)
		s := newSim(t, pod, DefaultOptions())
		s.step() // the pod's first sync starts the workers
		s.now = t0.Add(1500 * time.Millisecond)
		var at []time.Duration
		wakeUntil(t, s, t0.Add(15*time.Second), func(r *Result) {
			for _, a := range r.Actions {
				if a.Kind == StartContainer && a.Container == "init1" {
					s.exit("init1", 0)
				}
			}
			if probeRuns(r, "foo1", Readiness) > 0 {
				at = append(at, s.now.Sub(t0))
			}
		})
		want := []time.Duration{1500 * time.Millisecond, 11500 * time.Millisecond}
		if len(at) != len(want) || at[0] != want[0] || at[1] != want[1] {
			t.Errorf("readiness runs at %v, want %v", at, want)
		}
	})
}

// TestRule4_5_StoppedWorkerTickShowsCrashLoop: a container with probes that
// crashed again before any sync saw it running (its start and exit in one
// relist) is shown stopped by the exit's sync; the first tick of a worker
// after that, here readiness's (period 3 s) before startup's (10 s), reads
// that status, stores Failure and syncs the pod, which shows
// CrashLoopBackOff before the back-off's end (rule 4.5, section 6 step 5).
// A container before it in the spec, running, changes nothing of that.
func TestRule4_5_StoppedWorkerTickShowsCrashLoop(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	c := &pod.Spec.Containers[1]
	c.StartupProbe, c.ReadinessProbe = execProbe(10, 1000), execProbe(3, 0)
	s := newSim(t, pod, DefaultOptions())
	crashes := 0
	for i := 0; i < 20 && crashes < 2; i++ {
		r := s.step()
		for _, a := range r.Actions {
			if a.Kind == StartContainer && a.Container == "foo2" {
				if crashes == 1 {
					s.now = t0.Add(11 * time.Second)
				}
				s.exit("foo2", 1)
				crashes++
			}
		}
	}
	if crashes != 2 {
		t.Fatalf("foo2 started %d times", crashes)
	}
	r := s.step() // the second crash's sync, at +11 s: back-off until +21 s
	if got := waitingOrTerminated2(r.Statuses); got != "Terminated/Error" {
		t.Fatalf("the exit's sync shows %s, want Terminated/Error", got)
	}
	if got, want := r.NextSync, t0.Add(12*time.Second); !got.Equal(want) {
		t.Fatalf("next wake +%v, want readiness's tick at +%v", got.Sub(t0), want.Sub(t0))
	}
	s.now = r.NextSync
	r = s.step()
	if got := waitingOrTerminated2(r.Statuses); got != "Waiting/CrashLoopBackOff" {
		t.Errorf("the tick's sync shows %s, want Waiting/CrashLoopBackOff", got)
	}
}

// waitingOrTerminated2 is waitingOrTerminated for the second container.
func waitingOrTerminated2(sts []v1.PodStatus) string {
	if len(sts) == 0 {
		return "none"
	}
	st := sts[len(sts)-1]
	return waitingOrTerminated([]v1.PodStatus{{ContainerStatuses: st.ContainerStatuses[1:]}})
}

// TestRule4_5_CreatedInstanceHasNoStoppedTick: an instance whose start
// failed never ran, so its probe workers store nothing for it: the failed
// start waits for the error requeue (rule 4.5, section 6 step 5).
func TestRule4_5_CreatedInstanceHasNoStoppedTick(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	c := &pod.Spec.Containers[1]
	c.StartupProbe, c.ReadinessProbe = execProbe(2, 0), execProbe(2, 0)
	s := newSim(t, pod, DefaultOptions())
	wakeUntil(t, s, t0.Add(5*time.Second), nil)
	s.now = t0.Add(6 * time.Second)
	s.exit("foo2", 1)
	s.startFail["foo2"] = "no such file"
	var failedAt time.Time
	var restartAt []time.Duration
	wakeUntil(t, s, t0.Add(30*time.Second), func(r *Result) {
		for _, e := range r.Events {
			if e.Reason == ReasonFailed && failedAt.IsZero() {
				failedAt = s.now
			}
		}
		if !failedAt.IsZero() && s.now.After(failedAt) {
			for _, a := range r.Actions {
				if a.Kind == StartContainer && a.Container == "foo2" {
					restartAt = append(restartAt, s.now.Sub(failedAt))
				}
			}
		}
	})
	if failedAt.IsZero() || len(restartAt) == 0 || restartAt[0] != DefaultErrorRequeue {
		t.Errorf("start failed at +%v, started again %v after it, want first after the requeue of %v", failedAt.Sub(t0), restartAt, DefaultErrorRequeue)
	}
}

// TestContainerstate9_ReadinessRunAskedInFlightFollowsTheAnswer: a status
// that finds a started container not ready asks for a readiness run at
// once, which restarts the worker's ticker; asked while a run is in flight,
// it waits in the worker's one-slot trigger and runs as soon as the answer
// is in, restarting the ticker from there (containerstate.md section 9).
func TestContainerstate9_ReadinessRunAskedInFlightFollowsTheAnswer(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[0].ReadinessProbe = execProbe(10, 0)
	s := newSim(t, pod, DefaultOptions())
	wakeUntil(t, s, t0.Add(2*time.Second), func(*Result) { dropProbeResults(s, "foo1", Readiness) })
	s.now = t0.Add(3 * time.Second)
	s.exit("foo2", 1) // a sync while foo1's first run is in flight
	wakeUntil(t, s, t0.Add(3*time.Second), nil)
	s.now = t0.Add(4 * time.Second)
	s.emit(Observation{Kind: ProbeResult, Container: "foo1", ContainerID: s.lastID("foo1"), Probe: Readiness, Outcome: ProbeFailure, Message: "no"})
	var at []time.Duration
	wakeUntil(t, s, t0.Add(15*time.Second), func(r *Result) {
		if probeRuns(r, "foo1", Readiness) > 0 {
			at = append(at, s.now.Sub(t0))
		}
	})
	if !slices.Equal(at, []time.Duration{4 * time.Second, 14 * time.Second}) {
		t.Errorf("readiness runs after the answer at %v, want at once (4s) and a period later (14s)", at)
	}
}

// TestRule4_5_LivenessSuccessIsNoTrigger: a liveness result that passes, as
// the initial value of a new instance already is, changes nothing and syncs
// nothing: the next sync stays the resync (rule 4.5 lists a liveness
// Failure only; section 6: liveness starts at Success).
func TestRule4_5_LivenessSuccessIsNoTrigger(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.Containers[0].LivenessProbe = execProbe(120, 0)
	s := newSim(t, pod, DefaultOptions())
	wakeUntil(t, s, t0, func(*Result) { dropProbeResults(s, "foo1", Liveness) })
	s.now = t0.Add(5 * time.Second)
	s.emit(Observation{Kind: ProbeResult, Container: "foo1", ContainerID: s.lastID("foo1"), Probe: Liveness, Outcome: ProbeSuccess})
	r := s.step()
	if want := t0.Add(DefaultSyncFrequency); !r.NextSync.Equal(want) || len(r.Statuses) != 0 {
		t.Errorf("after a liveness success: next sync +%v, %d statuses; want the resync at +%v and none", r.NextSync.Sub(t0), len(r.Statuses), want.Sub(t0))
	}
}

// TestRule6_Step3_InitialReadinessFailureSyncsAtOnce (oracle case gen-28):
// a new container ID gets the initial value readiness Failure when its
// worker first sees it, which is a change and syncs the pod at once; that
// sync's status asks for a readiness run again. So a sidecar with a
// readiness successThreshold of 2 is ready at the instant its first status
// shows it running, not a period later, and a regular container whose
// image may not be pulled is tried once in each of those syncs: three
// ErrImageNeverPull before the sidecar is ready, as on the real kubelet.
func TestRule6_Step3_InitialReadinessFailureSyncsAtOnce(t *testing.T) {
	pod := withSidecar()
	side := &pod.Spec.InitContainers[0]
	side.ReadinessProbe = execProbe(7, 0)
	side.ReadinessProbe.SuccessThreshold = 2
	pod.Spec.Containers[0].ImagePullPolicy = v1.PullNever
	pod.Spec.Containers[0].Image = "absent:1"
	s := newSim(t, pod, DefaultOptions())
	readyAt, runs := time.Time{}, 0
	wakeUntil(t, s, t0.Add(time.Second), func(r *Result) {
		runs += probeRuns(r, "side", Readiness)
		for i := range r.Statuses {
			st := &r.Statuses[i]
			if readyAt.IsZero() && len(st.InitContainerStatuses) > 0 && st.InitContainerStatuses[0].Ready {
				readyAt = s.now
			}
		}
	})
	if !readyAt.Equal(t0) || runs != 2 {
		t.Fatalf("side ready at %v after %d readiness runs, want at +0s after 2", readyAt.Sub(t0), runs)
	}
	n := 0
	for _, e := range s.events() {
		if strings.HasPrefix(e, "Warning "+ReasonErrImageNeverPull+" ") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d ErrImageNeverPull events before the sidecar is ready, want 3 (one per sync): %v", n, s.events())
	}
}

// TestRule6_Step3_StartupInitialValueSyncs: a startup worker's first tick
// that finds a new container running stores the initial value Unknown, a
// change that syncs the pod at once (rule 4.5); the probe itself waits for
// initialDelaySeconds.
func TestRule6_Step3_StartupInitialValueSyncs(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.Containers[0].StartupProbe = &v1.Probe{ProbeHandler: execProbe(5, 0).ProbeHandler, PeriodSeconds: 5, InitialDelaySeconds: 12}
	s := newSim(t, pod, DefaultOptions())
	// The worker ticks from the pod's first sync (+0s) every 5 s: +5s is
	// its first tick after the status that showed foo1 running, +15s its
	// first past the delay.
	var probedNext time.Time
	var first time.Duration
	wakeUntil(t, s, t0.Add(20*time.Second), func(r *Result) {
		if probeRuns(r, "foo1", Startup) > 0 && probedNext.IsZero() {
			probedNext, first = r.NextSync, s.now.Sub(t0)
		}
	})
	if first != 15*time.Second {
		t.Errorf("the first startup run at +%v, want +15s: the first tick past the delay of 12 s", first)
	}
	if want := t0.Add(5*time.Second + DefaultSyncFrequency); !probedNext.Equal(want) {
		t.Errorf("when the probe runs the resync is due at +%v, want +%v: counted from the sync the initial value made at +5s", probedNext.Sub(t0), want.Sub(t0))
	}
}

// TestRule6_Step2_WorkersWaitForAStatusShowingTheContainer (oracle case
// gen-104): a probe worker reads the status the kubelet last generated, so
// a container started in a sync that then waits on another container's
// slow pull is not probed until that sync is over and a status shows it
// running; from then on its startup probe runs on the worker's ticker.
func TestRule6_Step2_WorkersWaitForAStatusShowingTheContainer(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[0].StartupProbe = execProbe(1, 0)
	pod.Spec.Containers[1].ImagePullPolicy = v1.PullAlways
	s := newSim(t, pod, DefaultOptions())
	var held []Observation
	hold := func() {
		keep := s.obs[:0]
		for _, o := range s.obs {
			if o.Container == "foo2" && (o.Kind == ImagePulled || o.Kind == ContainerCreated || o.Kind == ContainerStarted) {
				held = append(held, o)
				continue
			}
			keep = append(keep, o)
		}
		s.obs = keep
	}
	var runs []time.Duration
	count := func(r *Result) {
		hold()
		if probeRuns(r, "foo1", Startup) > 0 {
			runs = append(runs, s.now.Sub(t0))
		}
	}
	wakeUntil(t, s, t0.Add(8*time.Second), count)
	if len(held) == 0 || len(runs) != 0 {
		t.Fatalf("while foo2's pull is under way: %d answers held, startup runs at %v, want none", len(held), runs)
	}
	s.now = t0.Add(8 * time.Second)
	for _, o := range held {
		s.emit(o) // the pull took 8 s
	}
	held = nil
	wakeUntil(t, s, t0.Add(10*time.Second), count)
	if len(runs) == 0 || runs[0] != 9*time.Second {
		t.Errorf("startup runs at %v, want the first at +9s: the worker's first tick after the status at +8s", runs)
	}
}
