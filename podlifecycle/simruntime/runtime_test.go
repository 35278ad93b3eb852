package simruntime_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/containerstate"
	pl "github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func onePod() *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "app:1"}}}}
}

// drain returns every observation the runtime will report, rendered with
// its offset from t0.
func drain(rt *simruntime.Runtime) []string {
	var out []string
	for next := rt.Next(); !next.IsZero(); next = rt.Next() {
		for _, o := range rt.Due(next) {
			out = append(out, "+"+o.At.Sub(t0).String()+" "+describe(o))
		}
	}
	return out
}

func newRuntime(t *testing.T, text string) *simruntime.Runtime {
	t.Helper()
	bs, err := simruntime.ParseBehaviours(text)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := simruntime.New(simruntime.DefaultOptions(), onePod(), bs)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

var (
	pull  = pl.Action{Kind: pl.PullImage, Container: "app", ContainerKind: containerstate.Regular, Image: "app:1"}
	start = pl.Action{Kind: pl.StartContainer, Container: "app", ContainerKind: containerstate.Regular, Image: "app:1"}
)

func TestRuntimeBehaviours(t *testing.T) {
	tests := []struct {
		name, behaviour string
		do              func(rt *simruntime.Runtime)
		want            []string
	}{{
		name: "slow pull then a run that exits", behaviour: "app: pull slow 3s; run 5s exit 1",
		do:   func(rt *simruntime.Runtime) { rt.Do(t0, []pl.Action{pull, start}) },
		want: []string{"+3s ImagePulled app", "+3s ContainerCreated app", "+3s ContainerStarted app", "+8s ContainerExited app exit=1"},
	}, {
		name: "a failed pull skips its start", behaviour: "app: pull fail 1",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{pull, start})
			rt.Do(t0.Add(10*time.Second), []pl.Action{pull, start})
		},
		want: []string{"+0s ImagePullFailed app", "+10s ImagePulled app", "+10s ContainerCreated app", "+10s ContainerStarted app"},
	}, {
		name: "SIGTERM honoured at once", behaviour: "app: run forever",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{start})
			rt.Do(t0.Add(time.Second), []pl.Action{{Kind: pl.KillContainer, Container: "app", ContainerID: "sim://app-1", Grace: 30 * time.Second}})
		},
		want: []string{"+0s ContainerCreated app", "+0s ContainerStarted app", "+1s ContainerExited app exit=143"},
	}, {
		name: "SIGTERM ignored past the grace: SIGKILL", behaviour: "app: ignore-sigterm 1m",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{start})
			rt.Do(t0, []pl.Action{{Kind: pl.KillContainer, Container: "app", ContainerID: "sim://app-1", Grace: 30 * time.Second}})
		},
		want: []string{"+0s ContainerCreated app", "+0s ContainerStarted app", "+30s ContainerExited app exit=137"},
	}, {
		name: "a natural exit before the kill ends it", behaviour: "app: run 5s exit 0; ignore-sigterm 1m",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{start})
			rt.Do(t0, []pl.Action{{Kind: pl.KillContainer, Container: "app", ContainerID: "sim://app-1", Grace: 30 * time.Second}})
		},
		want: []string{"+0s ContainerCreated app", "+0s ContainerStarted app", "+5s ContainerExited app exit=0"},
	}, {
		name: "postStart blocks the sync; preStop outlived by its container fails", behaviour: "app: poststart 2s fail; prestop 20s; ignore-sigterm 5s",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{start, {Kind: pl.RunHook, Container: "app", Hook: pl.PostStart}})
			rt.Do(t0.Add(3*time.Second), []pl.Action{{Kind: pl.RunHook, Container: "app", ContainerID: "sim://app-1", Hook: pl.PreStop},
				{Kind: pl.KillContainer, Container: "app", ContainerID: "sim://app-1", Grace: 10 * time.Second}})
		},
		want: []string{"+0s ContainerCreated app", "+0s ContainerStarted app", "+2s HookResult app PostStart failed",
			"+8s HookResult app PreStop failed", "+8s ContainerExited app exit=143"},
	}, {
		// The kubelet starts its grace timer before the hook's exec: a
		// hook that takes the whole grace (1 s, a deletion with grace 0)
		// is running when the kill stops the container, which ends it
		// (oracle case gen-145: FailedPreStopHook), even when the stop
		// comes a moment after the grace, as a runner on a real clock
		// issues it.
		name: "a preStop hook that takes the whole grace fails with the stop", behaviour: "app: prestop 1s",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{start})
			rt.Do(t0.Add(3*time.Second), []pl.Action{{Kind: pl.RunHook, Container: "app", ContainerID: "sim://app-1", Hook: pl.PreStop, Grace: time.Second}})
			rt.Do(t0.Add(4*time.Second+time.Millisecond), []pl.Action{{Kind: pl.KillContainer, Container: "app", ContainerID: "sim://app-1", Grace: 2 * time.Second}})
		},
		want: []string{"+0s ContainerCreated app", "+0s ContainerStarted app", "+4.001s HookResult app PreStop failed", "+4.001s ContainerExited app exit=143"},
	}, {
		// A container that ignores SIGTERM outlives the stop: a hook
		// longer than the grace ends on its own before the SIGKILL.
		name: "a preStop hook longer than the grace ends on its own when the container outlives the stop", behaviour: "app: prestop 2500ms; ignore-sigterm 1m",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{start})
			rt.Do(t0.Add(3*time.Second), []pl.Action{{Kind: pl.RunHook, Container: "app", ContainerID: "sim://app-1", Hook: pl.PreStop, Grace: time.Second}})
			rt.Do(t0.Add(4*time.Second), []pl.Action{{Kind: pl.KillContainer, Container: "app", ContainerID: "sim://app-1", Grace: 2 * time.Second}})
		},
		want: []string{"+0s ContainerCreated app", "+0s ContainerStarted app", "+5.5s HookResult app PreStop", "+6s ContainerExited app exit=137"},
	}, {
		// The container's own exit, before the kill would end it, ends
		// the hook too.
		name: "a preStop hook that takes the whole grace ends with the container's own exit", behaviour: "app: prestop 2s; run 4500ms exit 0; ignore-sigterm 1m",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{start})
			rt.Do(t0.Add(3*time.Second), []pl.Action{{Kind: pl.RunHook, Container: "app", ContainerID: "sim://app-1", Hook: pl.PreStop, Grace: 2 * time.Second}})
			rt.Do(t0.Add(5*time.Second), []pl.Action{{Kind: pl.KillContainer, Container: "app", ContainerID: "sim://app-1", Grace: 2 * time.Second}})
		},
		want: []string{"+0s ContainerCreated app", "+0s ContainerStarted app", "+4.5s ContainerExited app exit=0", "+4.5s HookResult app PreStop failed"},
	}, {
		// A hook of exactly the grace ends a moment after the stop: on
		// its own when the container ignores the SIGTERM.
		name: "a preStop hook of exactly the grace ends on its own when the container outlives the stop", behaviour: "app: prestop 1s; ignore-sigterm 1m",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{start})
			rt.Do(t0.Add(3*time.Second), []pl.Action{{Kind: pl.RunHook, Container: "app", ContainerID: "sim://app-1", Hook: pl.PreStop, Grace: time.Second}})
			rt.Do(t0.Add(4*time.Second+time.Millisecond), []pl.Action{{Kind: pl.KillContainer, Container: "app", ContainerID: "sim://app-1", Grace: 2 * time.Second}})
		},
		want: []string{"+0s ContainerCreated app", "+0s ContainerStarted app", "+4.001s HookResult app PreStop", "+6.001s ContainerExited app exit=137"},
	}, {
		name: "a preStop hook shorter than the grace ends before the stop", behaviour: "app: prestop 1s",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{start})
			rt.Do(t0.Add(3*time.Second), []pl.Action{{Kind: pl.RunHook, Container: "app", ContainerID: "sim://app-1", Hook: pl.PreStop, Grace: 2 * time.Second}})
			rt.Do(t0.Add(5*time.Second), []pl.Action{{Kind: pl.KillContainer, Container: "app", ContainerID: "sim://app-1", Grace: 2 * time.Second}})
		},
		want: []string{"+0s ContainerCreated app", "+0s ContainerStarted app", "+4s HookResult app PreStop", "+5s ContainerExited app exit=143"},
	}, {
		name: "probe windows by instance age", behaviour: "app: liveness fail 10s-20s; readiness warning 5s-",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{start})
			probe := func(p pl.Probe) pl.Action {
				return pl.Action{Kind: pl.RunProbe, Container: "app", ContainerID: "sim://app-1", Probe: p}
			}
			rt.Do(t0.Add(9*time.Second), []pl.Action{probe(pl.Liveness), probe(pl.Readiness)})
			rt.Do(t0.Add(10*time.Second), []pl.Action{probe(pl.Liveness)})
			rt.Do(t0.Add(20*time.Second), []pl.Action{probe(pl.Liveness)})
		},
		want: []string{"+0s ContainerCreated app", "+0s ContainerStarted app", "+9s ProbeResult app Liveness success",
			"+9s ProbeResult app Readiness warning", "+10s ProbeResult app Liveness fail", "+20s ProbeResult app Liveness success"},
	}, {
		name: "sandbox stop fails a start still behind a pull", behaviour: "app: pull slow 10s",
		do: func(rt *simruntime.Runtime) {
			rt.Do(t0, []pl.Action{{Kind: pl.CreateSandbox}, pull, start})
			rt.Do(t0.Add(time.Second), []pl.Action{{Kind: pl.KillSandbox}})
		},
		want: []string{"+0s SandboxReady attempt=0", "+1s SandboxNotReady attempt=0", "+10s ImagePulled app", "+10s ContainerCreateFailed app"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, tt.behaviour)
			tt.do(rt)
			if d := cmp.Diff(tt.want, drain(rt)); d != "" {
				t.Fatalf("mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestRuntimeRefuses(t *testing.T) {
	if _, err := simruntime.New(simruntime.DefaultOptions(), nil, nil); !errors.Is(err, simruntime.ErrInvalidInput) {
		t.Fatalf("nil pod: %v", err)
	}
	_, err := simruntime.New(simruntime.DefaultOptions(), onePod(), simruntime.Behaviours{"ghost": {}})
	var ie *simruntime.InputError
	if !errors.As(err, &ie) || ie.Container != "ghost" {
		t.Fatalf("unknown container: %v", err)
	}
	var zero simruntime.Runtime
	if err := zero.Do(t0, []pl.Action{start}); !errors.Is(err, simruntime.ErrNotInitialized) {
		t.Fatalf("zero runtime's Do: %v", err)
	}
	if !zero.Next().IsZero() || zero.Due(t0) != nil {
		t.Fatal("a zero runtime reports something")
	}
}

// describe renders an observation on one line: "ContainerExited app exit=1".
func describe(o pl.Observation) string {
	s := o.Kind.String()
	switch o.Kind {
	case pl.SandboxReady, pl.SandboxNotReady, pl.SandboxCreateFailed:
		s += " attempt=" + strconv.Itoa(int(o.Attempt))
	default:
		s += " " + o.Container
	}
	switch o.Kind {
	case pl.ContainerExited:
		s += " exit=" + strconv.Itoa(int(o.ExitCode))
	case pl.ProbeResult:
		s += " " + o.Probe.String() + " " + map[pl.ProbeOutcome]string{pl.ProbeSuccess: "success", pl.ProbeWarning: "warning",
			pl.ProbeFailure: "fail", pl.ProbeError: "error"}[o.Outcome]
	case pl.HookResult:
		s += " " + o.Hook.String()
		if o.Failed {
			s += " failed"
		}
	}
	return s
}

// TestProbeWordsAsTheKubeletGetsThem: what a probe of each handler reports,
// in the words the kubelet's prober records: an exec probe never warns (only
// HTTP can), its errors are the CRI exec call's gRPC errors, and an exec in
// a container that exited is refused as containerd refuses it; a pull of an
// untagged image names the default tag the kubelet pulls.
func TestProbeWordsAsTheKubeletGetsThem(t *testing.T) {
	exec := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}}}
	http := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/"}}}
	pod := onePod()
	pod.Spec.Containers[0].Image = "app"
	pod.Spec.Containers[0].ReadinessProbe, pod.Spec.Containers[0].LivenessProbe = exec, http
	bs, _ := simruntime.ParseBehaviours("app: run 30s exit 1; pull fail 1; readiness warning 0s-5s; liveness warning 0s-5s; readiness error 5s-10s; liveness error 5s-10s")
	rt, err := simruntime.New(simruntime.DefaultOptions(), pod, bs)
	if err != nil {
		t.Fatal(err)
	}
	pullApp := pl.Action{Kind: pl.PullImage, Container: "app", ContainerKind: containerstate.Regular, Image: "app"}
	_ = rt.Do(t0, []pl.Action{pullApp})
	if obs := rt.Due(t0); len(obs) != 1 || !strings.Contains(obs[0].Message, `"app:latest"`) {
		t.Fatalf("pull failure %+v", obs)
	}
	_ = rt.Do(t0, []pl.Action{pullApp, start})
	rt.Due(t0)
	probe := func(at time.Duration, p pl.Probe) pl.Observation {
		t.Helper()
		_ = rt.Do(t0.Add(at), []pl.Action{{Kind: pl.RunProbe, Container: "app", ContainerID: "sim://app-1", Probe: p}})
		obs := rt.Due(t0.Add(at))
		if len(obs) == 0 || obs[len(obs)-1].Kind != pl.ProbeResult {
			t.Fatalf("+%v %v: %+v", at, p, obs)
		}
		return obs[len(obs)-1] // after the exit at +30s, when due
	}
	for _, tt := range []struct {
		at      time.Duration
		p       pl.Probe
		outcome pl.ProbeOutcome
		message string
		reason  string
	}{
		{time.Second, pl.Readiness, pl.ProbeSuccess, "", "an exec probe cannot warn: a warning window passes"},
		{time.Second, pl.Liveness, pl.ProbeWarning, "redirect", "an HTTP probe warns"},
		{6 * time.Second, pl.Readiness, pl.ProbeError, "rpc error: code = Unknown desc = probe could not run", "an exec error is the CRI call's gRPC error"},
		{6 * time.Second, pl.Liveness, pl.ProbeError, "probe could not run", "another handler's error is its own"},
		{31 * time.Second, pl.Readiness, pl.ProbeError, "rpc error: code = Unknown desc = failed to exec in container: container is in CONTAINER_EXITED state", "containerd refuses an exec in an exited container"},
		{31 * time.Second, pl.Liveness, pl.ProbeFailure, "container not running", "an HTTP probe of an exited container fails"},
	} {
		if o := probe(tt.at, tt.p); o.Outcome != tt.outcome || o.Message != tt.message {
			t.Errorf("+%v %v: %v %q, want %v %q (%s)", tt.at, tt.p, o.Outcome, o.Message, tt.outcome, tt.message, tt.reason)
		}
	}
}

// TestHookOutlivedByItsContainer: a hook cannot outlive its container: when
// the container exits before its postStart (or preStop) hook ends, the hook
// fails when it exits, with the exit code a killed exec gives (137), worded
// as a CRI client words a failed exec, as the oracle node's runtime does
// (oracle case: a generated sidecar that exits 1 s after its start during a
// 4 s postStart hook, which the kubelet records as FailedPostStartHook).
//
// At equal times the container exits first, since the kubelet execs the
// hook a moment after the start returned: a container that exits when its
// 4 s hook ends fails it the same way (oracle case gen-15), and one that
// exits as it starts is gone before a hook of no duration runs, whose exec
// then fails at once with the runtime's error (oracle cases gen-152 and
// gen-159, FailedPostStartHook on a container that exits at once).
func TestHookOutlivedByItsContainer(t *testing.T) {
	exited137 := "command 'warm up' exited with 137: "
	for _, tt := range []struct {
		behaviour string
		failed    bool
		at        time.Duration
		message   string
	}{
		{"app: run 1s exit 1; poststart 4s", true, time.Second, exited137},
		{"app: run 4s exit 1; poststart 4s", true, 4 * time.Second, exited137},
		{"app: run 0s exit 1", true, 0, simruntime.ExecExitedMessage},
		{"app: run 0s exit 1; poststart 2s", true, 0, simruntime.ExecExitedMessage},
		{"app: run 4001ms exit 1; poststart 4s", false, 4 * time.Second, ""},
	} {
		pod := onePod()
		pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"warm", "up"}}}}
		bs, err := simruntime.ParseBehaviours(tt.behaviour)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := simruntime.New(simruntime.DefaultOptions(), pod, bs)
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.Do(t0, []pl.Action{pull, start, {Kind: pl.RunHook, Container: "app", ContainerKind: containerstate.Regular, Hook: pl.PostStart}}); err != nil {
			t.Fatal(err)
		}
		var hook *pl.Observation
		for next := rt.Next(); !next.IsZero(); next = rt.Next() {
			for _, o := range rt.Due(next) {
				if o.Kind == pl.HookResult {
					hook = &o
				}
			}
		}
		if hook == nil || hook.Failed != tt.failed || !hook.At.Equal(t0.Add(tt.at)) || hook.Message != tt.message {
			t.Errorf("%s: hook result %+v, want failed %v at +%v with %q", tt.behaviour, hook, tt.failed, tt.at, tt.message)
		}
	}
}
