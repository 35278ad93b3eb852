package podlifecycle

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

// TestPL39_FailureThreshold: readiness with successThreshold 1 and
// failureThreshold 3 (section 6, step 11).
func TestPL39_FailureThreshold(t *testing.T) {
	var ps probeState
	spec := &v1.Probe{SuccessThreshold: 1, FailureThreshold: 3}
	var got []containerstate.ProbeResult
	for _, ok := range []bool{true, true, true, false, false, false, true} {
		ps.record(spec, Readiness, ok)
		got = append(got, ps.result)
	}
	S, F := containerstate.ProbeSuccess, containerstate.ProbeFailure
	want := []containerstate.ProbeResult{S, S, S, S, S, F, S}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("PL39 (-want +got):\n%s", d)
	}
}

// TestPL40_StartupProbeFailureThreshold: an always failing startup probe
// gives Unknown, Unknown, Failure, then goes on hold with the count reset
// (section 6, steps 11-12).
func TestPL40_StartupProbeFailureThreshold(t *testing.T) {
	var ps probeState
	spec := &v1.Probe{FailureThreshold: 3}
	var got []containerstate.ProbeResult
	for i := 0; i < 3; i++ {
		ps.record(spec, Startup, false)
		got = append(got, ps.result)
	}
	N, F := containerstate.ProbeNone, containerstate.ProbeFailure
	if d := cmp.Diff([]containerstate.ProbeResult{N, N, F}, got); d != "" {
		t.Fatalf("PL40 (-want +got):\n%s", d)
	}
	if !ps.onHold || ps.count != 0 {
		t.Fatalf("PL40: on hold %v, count %d", ps.onHold, ps.count)
	}
}

// TestRule6_ProbeEvents: errors record Unhealthy and are discarded;
// warnings count as success with ProbeWarning (section 6, steps 9-10,
// section 12 pitfall 13).
func TestRule6_ProbeEvents(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{PeriodSeconds: 10, FailureThreshold: 1}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	in := &s.m.find("foo1").insts[0]
	id := in.id
	var r Result
	for _, tc := range []struct {
		out   ProbeOutcome
		event string
		ready bool
	}{
		{ProbeError, "Readiness probe errored and resulted in unknown state: probe output", true}, // discarded: stays ready
		{ProbeWarning, "Readiness probe warning: probe output", true},
		{ProbeFailure, "Readiness probe failed: probe output", false},
		{ProbeSuccess, "", true},
	} {
		in.probes[Readiness-1].inFlight = true
		if err := s.m.StepTo(s.now, s.pod, []Observation{{Kind: ProbeResult, Container: "foo1", ContainerID: id, Probe: Readiness, Outcome: tc.out, Message: "probe output"}}, &r); err != nil {
			t.Fatal(err)
		}
		if tc.event != "" && (len(r.Events) != 1 || r.Events[0].Message != tc.event || r.Events[0].Type != v1.EventTypeWarning) {
			t.Fatalf("%v: events %v", tc.out, r.Events)
		}
		if got := in.probes[Readiness-1].result == containerstate.ProbeSuccess; got != tc.ready {
			t.Fatalf("%v: ready %v", tc.out, got)
		}
	}
}

// TestSection6_WorkerTickers: probe workers tick on tickers of their own,
// started with the pod's first sync, not at the container's start; a
// status that finds a started container not ready asks for a readiness
// run at once, which restarts that ticker (containerstate.md section 9;
// measured on the real kubelet: oracle case "readiness", where the
// container shows ready in the first status that shows it running).
func TestSection6_WorkerTickers(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}}, PeriodSeconds: 10}
	pod.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"live"}}}, PeriodSeconds: 7, InitialDelaySeconds: 2}
	s := newSim(t, pod, DefaultOptions())
	s.step() // t0: the pod's first sync starts the workers
	s.now = t0.Add(1500 * time.Millisecond)
	var readinessAt, livenessAt []time.Duration
	for i := 0; i < 40 && s.now.Before(t0.Add(30*time.Second)); i++ {
		r := s.step()
		for _, a := range r.Actions {
			if a.Kind == RunProbe {
				if a.Probe == Readiness {
					readinessAt = append(readinessAt, s.now.Sub(t0))
				} else if a.Probe == Liveness {
					livenessAt = append(livenessAt, s.now.Sub(t0))
				}
			}
		}
		if len(s.obs) == 0 && r.NextSync.After(s.now) {
			s.now = r.NextSync
		}
	}
	// The container starts at 1.5 s: the status that first shows it running
	// asks for a readiness run at once; it passes, so the ticker restarted
	// then runs every 10 s from 1.5 s.
	if want := []time.Duration{1500 * time.Millisecond, 11500 * time.Millisecond, 21500 * time.Millisecond}; !slices.Equal(readinessAt[:min(3, len(readinessAt))], want) {
		t.Errorf("readiness runs at %v, want %v", readinessAt, want)
	}
	// Liveness ticks every 7 s from the first sync (0, 7, 14, ...); the
	// first at which the container is 2 s old is 7 s.
	if want := []time.Duration{7 * time.Second, 14 * time.Second, 21 * time.Second, 28 * time.Second}; !slices.Equal(livenessAt, want) {
		t.Errorf("liveness runs at %v, want %v", livenessAt, want)
	}
}

// TestRule7_3_ReadinessProbesRunWhileTerminating: once a pod terminates
// (deleted, or past its active deadline), its regular container's liveness
// and startup probes stop (7.3; deleted, their workers store Success and
// end, section 6 step 6) while its readiness probe goes on ticking every
// period until the container stops, the tick it shares with the startup
// probe's included.
func TestRule7_3_ReadinessProbesRunWhileTerminating(t *testing.T) {
	for _, deadline := range []bool{false, true} {
		t.Run(map[bool]string{false: "deleted", true: "past its active deadline"}[deadline], func(t *testing.T) {
			pod := onePod("busybox:1")
			pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
			exec := v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}}
			pod.Spec.Containers[0].StartupProbe = &v1.Probe{ProbeHandler: exec, PeriodSeconds: 5}
			pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: exec, PeriodSeconds: 10}
			pod.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: exec, PeriodSeconds: 10}
			s := newSim(t, pod, DefaultOptions())
			s.holdKill["foo1"] = true
			type run struct {
				at time.Time
				p  Probe
			}
			var runs []run
			settle := func() {
				from := len(s.all)
				s.settle()
				for _, r := range s.all[from:] {
					for _, a := range r.Actions {
						if a.Kind == RunProbe {
							runs = append(runs, run{s.now, a.Probe})
						}
					}
				}
			}
			advance := func(until time.Time) {
				for {
					next := s.all[len(s.all)-1].NextSync
					if next.IsZero() || next.After(until) {
						return
					}
					s.now = next
					settle()
				}
			}
			settle()
			advance(t0.Add(40 * time.Second))
			var lastReady time.Time
			seen := map[Probe]bool{}
			for _, r := range runs {
				seen[r.p] = true
				if r.p == Readiness {
					lastReady = r.at
				}
			}
			if !seen[Startup] || !seen[Readiness] || !seen[Liveness] {
				t.Fatalf("probe runs before termination %v, want each probe", runs)
			}
			// Terminate 3 s before a readiness tick, which is a startup
			// tick too.
			at := lastReady.Add(7 * time.Second)
			for at.Before(s.now) {
				at = at.Add(10 * time.Second)
			}
			advance(at.Add(-time.Nanosecond))
			s.now = at
			if deadline {
				s.pod = s.pod.DeepCopy()
				s.pod.Spec.ActiveDeadlineSeconds = ptr(int64(at.Sub(t0) / time.Second))
			} else {
				s.pod = deleted(s.pod, at, 30)
			}
			runs = nil
			settle()
			if s.m.state != Terminating {
				t.Fatalf("state %v, want Terminating", s.m.state)
			}
			advance(at.Add(25 * time.Second))
			want := []run{{at.Add(3 * time.Second), Readiness}, {at.Add(13 * time.Second), Readiness}, {at.Add(23 * time.Second), Readiness}}
			if !slices.Equal(runs, want) {
				t.Fatalf("probe runs while terminating %v, want readiness only, every 10 s from %v", runs, want[0].at.Sub(t0))
			}
		})
	}
}

// TestProbeTickerGrid: a worker probes every periodSeconds of its own
// ticker, not aligned to the container start (section 6): the first tick
// at or after an instant is on the ticker's grid, a tick itself included,
// and an instant before the ticker started, or a ticker without a period,
// gives its start.
func TestProbeTickerGrid(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		period time.Duration
		at     time.Duration // after from
		want   time.Duration // after from
	}{
		{10 * time.Second, 0, 0},
		{10 * time.Second, time.Nanosecond, 10 * time.Second},
		{10 * time.Second, 3 * time.Second, 10 * time.Second},
		{10 * time.Second, 10 * time.Second, 10 * time.Second},
		{10 * time.Second, 10*time.Second + time.Nanosecond, 20 * time.Second},
		{10 * time.Second, 25 * time.Second, 30 * time.Second},
		{10 * time.Second, -25 * time.Second, 0},
		{0, 25 * time.Second, 0},
		{-time.Second, 25 * time.Second, 0},
	} {
		if got := gridAt(from, tc.period, from.Add(tc.at)); !got.Equal(from.Add(tc.want)) {
			t.Errorf("gridAt(from, %v, from%+v) = from%+v, want from%+v", tc.period, tc.at, got.Sub(from), tc.want)
		}
	}
}

// TestProbeDefaults: a pod whose probe fields were never defaulted (zero
// periodSeconds, successThreshold and failureThreshold, as a pod built in
// code has them) probes with the API's defaults, 10, 1 and 3 (section 6).
func TestProbeDefaults(t *testing.T) {
	for _, tc := range []struct {
		v, d, want int32
	}{{0, 10, 10}, {-1, 3, 3}, {1, 10, 1}, {7, 3, 7}} {
		if got := orDefault(tc.v, tc.d); got != tc.want {
			t.Errorf("orDefault(%d, %d) = %d, want %d", tc.v, tc.d, got, tc.want)
		}
	}
}

// TestProbesOnlyWhereTheKubeletRunsThem: probes run for regular containers
// and sidecars only (section 6). A regular init container's probes and an
// ephemeral container's, which API validation refuses but a pod built in
// code may carry, never run and never set a wake-up: the init container
// stays running with its probes' periods long past, and the pod's next
// sync is not brought forward by them.
func TestProbesOnlyWhereTheKubeletRunsThem(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:1]
	p := probe()
	p.PeriodSeconds = 1
	pod.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "bar-image", ReadinessProbe: p, LivenessProbe: p, StartupProbe: p}}
	pod.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{
		Name: "debug", Image: "busybox:1", ReadinessProbe: p, LivenessProbe: p}}}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	for i := 0; i < 5; i++ {
		next := s.all[len(s.all)-1].NextSync
		if !next.IsZero() && next.Sub(s.now) < 30*time.Second {
			t.Fatalf("step %d: next sync in %v, want none brought forward by probes that do not run", i, next.Sub(s.now))
		}
		s.now = s.now.Add(3 * time.Second)
		s.step()
	}
	if st := s.lastStatus(); len(st.InitContainerStatuses) != 1 || st.InitContainerStatuses[0].State.Running == nil {
		t.Fatalf("init1 %+v, want it still running", st.InitContainerStatuses)
	}
	if n := s.count(RunProbe, ""); n != 0 {
		t.Fatalf("%d probes run, want none", n)
	}
	s.exit("init1", 0)
	s.settle()
	for i := 0; i < 5; i++ {
		s.now = s.now.Add(3 * time.Second)
		s.step()
	}
	if n := s.count(RunProbe, ""); n != 0 {
		t.Fatalf("%d probes run with the ephemeral container running, want none", n)
	}
}
