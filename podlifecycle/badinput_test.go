package podlifecycle

import (
	"errors"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestBadInput checks that every kind of bad input is refused with a typed
// error unwrapping to the right sentinel, and that the machine is unchanged
// (spec/podlifecycle.md section 15, decision 7, and docs/conventions.md).
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		now    time.Duration
		pod    func(*v1.Pod) *v1.Pod
		obs    []Observation
		target error
		msg    string // the error's text, exactly
	}{
		{"nil pod", 0, func(*v1.Pod) *v1.Pod { return nil }, nil, ErrInvalidInput, `podlifecycle: invalid input: nil pod`},
		{"pod without a UID", 0, func(p *v1.Pod) *v1.Pod { p = p.DeepCopy(); p.UID = ""; return p }, nil, ErrInvalidInput, `podlifecycle: invalid input: pod without a UID`},
		{"another pod", 0, func(p *v1.Pod) *v1.Pod { p = p.DeepCopy(); p.UID = "other"; return p }, nil, ErrInvalidInput, `podlifecycle: invalid input: pod UID other is not the machine's 12345678`},
		{"duplicate container names", 0, func(p *v1.Pod) *v1.Pod {
			p = p.DeepCopy()
			p.Spec.Containers[1].Name = "foo1"
			return p
		}, nil, ErrInvalidInput, `podlifecycle: invalid input: container "foo1": duplicate container name`},
		{"container without a name", 0, func(p *v1.Pod) *v1.Pod {
			p = p.DeepCopy()
			p.Spec.Containers[2].Name = ""
			return p
		}, nil, ErrInvalidInput, `podlifecycle: invalid input: container without a name`},
		{"init and regular share a name", 0, func(p *v1.Pod) *v1.Pod {
			p = p.DeepCopy()
			p.Spec.InitContainers = []v1.Container{{Name: "foo3"}}
			return p
		}, nil, ErrInvalidInput, `podlifecycle: invalid input: container "foo3": duplicate container name`},
		{"a container removed from the spec", 0, func(p *v1.Pod) *v1.Pod {
			p = p.DeepCopy()
			p.Spec.Containers = p.Spec.Containers[:2]
			return p
		}, nil, ErrInvalidInput, `podlifecycle: invalid input: the pod's containers changed (only ephemeral containers may be added)`},
		{"observation for a container the spec lacks", 0, nil,
			[]Observation{{Kind: ContainerCreated, Container: "nope", ContainerID: "c://1"}}, ErrInvalidInput, `podlifecycle: invalid input: observation 0: container "nope": container not in the pod spec`},
		{"exit of a container that never started", 0, nil,
			[]Observation{{Kind: ContainerExited, Container: "foo1", ContainerID: "c://never", ExitCode: 1}}, ErrInvalidInput, `podlifecycle: invalid input: observation 0: container "foo1": exit of container ID c://never that never started`},
		{"probe result of an unknown instance", 0, nil,
			[]Observation{{Kind: ProbeResult, Container: "foo1", ContainerID: "c://never", Probe: Liveness, Outcome: ProbeFailure}}, ErrInvalidInput, `podlifecycle: invalid input: observation 0: container "foo1": unknown container ID c://never`},
		{"probe result of no probe", 0, nil,
			[]Observation{{Kind: ProbeResult, Container: "foo1", ContainerID: "containerd://foo1-1", Probe: 0, Outcome: ProbeSuccess}}, ErrInvalidInput,
			`podlifecycle: invalid input: observation 0: container "foo1": undefined probe or outcome`},
		{"probe result of a probe past liveness", 0, nil,
			[]Observation{{Kind: ProbeResult, Container: "foo1", ContainerID: "containerd://foo1-1", Probe: Liveness + 1, Outcome: ProbeSuccess}}, ErrInvalidInput,
			`podlifecycle: invalid input: observation 0: container "foo1": undefined probe or outcome`},
		{"probe result without an outcome", 0, nil,
			[]Observation{{Kind: ProbeResult, Container: "foo1", ContainerID: "containerd://foo1-1", Probe: Readiness}}, ErrInvalidInput,
			`podlifecycle: invalid input: observation 0: container "foo1": undefined probe or outcome`},
		{"probe result of an outcome past error", 0, nil,
			[]Observation{{Kind: ProbeResult, Container: "foo1", ContainerID: "containerd://foo1-1", Probe: Readiness, Outcome: ProbeError + 1}}, ErrInvalidInput,
			`podlifecycle: invalid input: observation 0: container "foo1": undefined probe or outcome`},
		{"hook result of no hook", 0, nil,
			[]Observation{{Kind: HookResult, Container: "foo1", ContainerID: "containerd://foo1-1", Hook: 9}}, ErrInvalidInput,
			`podlifecycle: invalid input: observation 0: container "foo1": undefined hook`},
		{"undefined observation kind", 0, nil, []Observation{{Kind: 99}}, ErrInvalidInput, `podlifecycle: invalid input: observation 0: unknown observation kind`},
		{"observation without a container ID", 0, nil, []Observation{{Kind: ContainerStarted, Container: "foo1"}}, ErrInvalidInput, `podlifecycle: invalid input: observation 0: container "foo1": observation without a container ID`},
		{"container ID of another container", 0, nil,
			[]Observation{{Kind: ContainerCreated, Container: "foo2", ContainerID: "containerd://foo1-1"}}, ErrInvalidInput, `podlifecycle: invalid input: observation 0: container "foo2": container ID containerd://foo1-1 belongs to container foo1`},
		{"observation from the future", 0, nil,
			[]Observation{{Kind: SandboxNotReady, At: t0.Add(time.Hour)}}, ErrInvalidInput, `podlifecycle: invalid input: observation 0: observation at 2026-01-01T01:00:00Z is after now 2026-01-01T00:00:01Z`},
		{"time earlier than accepted", -time.Second, nil, nil, ErrTimeWentBackwards, `podlifecycle: time went backwards: 2026-01-01T00:00:00Z before 2026-01-01T00:00:01Z`},
		{"observation earlier than accepted", 0, nil,
			[]Observation{{Kind: SandboxNotReady, At: t0.Add(-time.Second)}}, ErrTimeWentBackwards, `podlifecycle: time went backwards: observation 0: 2025-12-31T23:59:59Z before 2026-01-01T00:00:01Z`},
		{"a good observation then a bad one", 0, nil, []Observation{
			{Kind: ContainerExited, Container: "foo1", ContainerID: "containerd://foo1-1", ExitCode: 1},
			{Kind: ContainerExited, Container: "foo9", ContainerID: "x"}}, ErrInvalidInput, `podlifecycle: invalid input: observation 1: container "foo9": container not in the pod spec`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, podP3(), DefaultOptions())
			s.settle() // the pod runs: sandbox ready, foo1..foo3 started
			s.now = s.now.Add(time.Second)
			s.step()
			before := snapshotOf(s.m)
			pod := s.pod
			if tc.pod != nil {
				pod = tc.pod(s.pod)
			}
			_, err := s.m.Step(s.now.Add(tc.now), pod, tc.obs)
			if !errors.Is(err, tc.target) {
				t.Fatalf("got %v, want %v", err, tc.target)
			}
			if err.Error() != tc.msg {
				t.Errorf("error text\n got %s\nwant %s", err, tc.msg)
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %T is not an *InputError", err)
			}
			if after := snapshotOf(s.m); !reflect.DeepEqual(before, after) {
				t.Fatalf("the machine changed on bad input:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// snapshotOf copies what a Step may change.
func snapshotOf(m *Machine) any {
	type view struct {
		Ctrs     []ctr
		Insts    [][]inst
		SB       sandbox
		Last     time.Time
		State    WorkerState
		SyncAt   time.Time
		Dirty    bool
		Pending  bool
		Pod      *v1.Pod
		Status   *v1.PodStatus
		Crash    int
		Pulls    int
		Override int64
	}
	v := view{SB: m.sb, Last: m.last, State: m.state, SyncAt: m.syncAt, Dirty: m.dirty, Pending: m.pendingErr,
		Pod: m.pod, Status: m.lastStatus, Crash: m.crash.Len(), Pulls: m.pulls.Len(), Override: m.override}
	for _, c := range m.ctrs {
		c2 := c
		c2.insts = nil
		v.Ctrs = append(v.Ctrs, c2)
		v.Insts = append(v.Insts, append([]inst(nil), c.insts...))
	}
	return v
}

func TestZeroValues(t *testing.T) {
	var m *Machine
	if _, err := m.Step(t0, podP3(), nil); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("nil machine: %v", err)
	}
	var z Machine
	if err := z.StepTo(t0, nil, nil, nil); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("zero machine: %v", err)
	}
	m2, err := New(DefaultOptions(), podP3())
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.StepTo(t0, podP3(), nil, nil); !errors.Is(err, ErrInvalidInput) || err.Error() != "podlifecycle: invalid input: nil result" {
		t.Fatalf("nil result: %v", err)
	}
	// The text of an InputError without a sentinel, and of one with every
	// field.
	for _, tc := range []struct {
		err  *InputError
		want string
	}{
		{&InputError{Index: -1}, "podlifecycle: invalid input"},
		{&InputError{Index: 0, Container: "app", Reason: "why", Err: ErrInvalidInput}, `podlifecycle: invalid input: observation 0: container "app": why`},
		{&InputError{Index: -1, Container: "app", Err: ErrInvalidInput}, `podlifecycle: invalid input: container "app"`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", *tc.err, got, tc.want)
		}
	}
	if (Event{FieldPath: "spec.containers{app}"}).Reference(nil) != nil {
		t.Error("the reference of a nil pod is not nil")
	}
	var r *Result
	r.Reset()
	for _, o := range []Options{
		func() Options { o := DefaultOptions(); o.SyncFrequency = 0; return o }(),
		func() Options { o := DefaultOptions(); o.ErrorRequeue = -1; return o }(),
		func() Options { o := DefaultOptions(); o.ErrorRequeue = 0; return o }(),
		func() Options { o := DefaultOptions(); o.ImagePullBackoff.Initial = 0; return o }(),
		func() Options { o := DefaultOptions(); o.CrashLoop.MaxContainerRestartPeriod = time.Hour; return o }(),
	} {
		var oe *OptionError
		if _, err := New(o, podP3()); !errors.Is(err, ErrInvalidOptions) || !errors.As(err, &oe) {
			t.Errorf("options %+v: got %v", o, err)
		}
	}
}

// TestLateObservationsOfRetiredInstances: a runtime legitimately reports
// late results for instances the machine no longer keeps (a postStart or
// preStop hook result, a probe result, a start failure or an exit after
// newer instances pushed them out of the window or a reset removed them,
// spec/podlifecycle.md sections 3.2 and 9). Such observations are accepted,
// ignored and counted in Stats (docs/conventions.md section 5), however
// many instances came since, and the rest of their batch is applied; an ID
// the machine never saw is still refused.
func TestLateObservationsOfRetiredInstances(t *testing.T) {
	pod := onePod("busybox:1")
	m, _ := New(DefaultOptions(), pod)
	var r Result
	now := t0
	step := func(obs ...Observation) error {
		t.Helper()
		return m.StepTo(now, pod, obs, &r)
	}
	if err := step(); err != nil {
		t.Fatal(err)
	}
	if err := step(Observation{Kind: SandboxReady, IP: "10.0.0.3"}); err != nil {
		t.Fatal(err)
	}
	id := func(k int) string { return "c://" + string(rune('a'+k)) }
	// 20 instances: the first 17 are retired from the window of three.
	for k := 0; k < 20; k++ {
		now = now.Add(time.Second)
		if err := step(Observation{Kind: ContainerCreated, Container: "foo1", ContainerID: id(k)},
			Observation{Kind: ContainerStarted, Container: "foo1", ContainerID: id(k)},
			Observation{Kind: ContainerExited, Container: "foo1", ContainerID: id(k), ExitCode: 1}); err != nil {
			t.Fatalf("instance %d: %v", k, err)
		}
	}
	// The instance removed by a reset (rule 3.2) is retired too.
	now = now.Add(time.Second)
	if err := step(Observation{Kind: ContainerRemoved, Container: "foo1", ContainerID: id(19)}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	before := m.Stats().RetiredObservations
	err := step(
		Observation{Kind: HookResult, Container: "foo1", ContainerID: id(0), Hook: PostStart, Failed: true, Message: "late"},
		Observation{Kind: HookResult, Container: "foo1", ContainerID: id(19), Hook: PostStart, Failed: true, Message: "late"},
		Observation{Kind: HookResult, Container: "foo1", ContainerID: id(1), Hook: PreStop},
		Observation{Kind: ProbeResult, Container: "foo1", ContainerID: id(2), Probe: Liveness, Outcome: ProbeFailure},
		Observation{Kind: ContainerStartFailed, Container: "foo1", ContainerID: id(3), Message: "late"},
		Observation{Kind: ContainerExited, Container: "foo1", ContainerID: id(4), ExitCode: 2},
		Observation{Kind: ContainerCreated, Container: "foo1", ContainerID: id(5)},
		Observation{Kind: ImagePresent, Image: "other:1"},
	)
	if err != nil {
		t.Fatalf("late observations of retired instances refused: %v", err)
	}
	if got := m.Stats().RetiredObservations - before; got != 7 {
		t.Fatalf("RetiredObservations counted %d, want 7", got)
	}
	if !m.images["other:1"] {
		t.Fatal("the rest of the batch was lost")
	}
	c := m.find("foo1")
	if c.instance(id(5)) != nil || len(c.insts) != 2 {
		t.Fatalf("a retired instance came back: %d instances", len(c.insts))
	}
	for _, e := range r.Events {
		if e.Reason == ReasonFailedPostStartHook || e.Reason == ReasonFailed {
			t.Fatalf("a retired instance's result acted on: %v", e)
		}
	}
	// An ID the machine never saw is still bad input.
	if err := step(Observation{Kind: HookResult, Container: "foo1", ContainerID: "c://never", Hook: PreStop}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("unknown ID: %v", err)
	}
}

// TestBadInputResult: a step refused for bad input still says where the
// machine is: its worker state, whether it finished and its next sync, the
// same as the last step accepted, and Finished once a step reported the
// pod Terminated (section 1: the state never goes back).
func TestBadInputResult(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	s := newSim(t, pod, DefaultOptions())
	bad := []Observation{{Kind: ContainerCreated, Container: "nope", ContainerID: "c://1"}}
	check := func(when string, wantState WorkerState, wantFinished bool) {
		t.Helper()
		last := s.all[len(s.all)-1]
		var res Result
		if err := s.m.StepTo(s.now, s.pod, bad, &res); !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("%s: bad observation accepted: %v", when, err)
		}
		if res.State != wantState || res.Finished != wantFinished || !res.NextSync.Equal(last.NextSync) {
			t.Errorf("%s: refused step says state %v, finished %t, next sync %v; want %v, %t, %v",
				when, res.State, res.Finished, res.NextSync.Sub(t0), wantState, wantFinished, last.NextSync.Sub(t0))
		}
	}
	s.settle()
	check("running", Syncing, false)
	s.exit("foo1", 0)
	s.settle()
	if !s.all[len(s.all)-1].Finished {
		t.Fatal("the pod did not finish")
	}
	check("finished", Finished, true) // reported Terminated once; the next step finds it Finished
}
