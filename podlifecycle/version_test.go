package podlifecycle

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
)

// TestDefaultOptionsFor: DefaultOptions is the zero Version's, and each
// minor's options carry containerstate's defaults for it.
func TestDefaultOptionsFor(t *testing.T) {
	if DefaultOptions() != DefaultOptionsFor(kubeversion.Version(0)) {
		t.Fatal("DefaultOptions is not 1.37's")
	}
	for _, v := range kubeversion.Supported() {
		o := DefaultOptionsFor(v)
		if o.Features != containerstate.DefaultFeaturesFor(v) || o.CrashLoop != containerstate.DefaultCrashLoopOptionsFor(v) ||
			o.EnsureSecretPulledImages != v.AtLeast(kubeversion.V1_35) || o.Version != v {
			t.Errorf("DefaultOptionsFor(%v) = %+v", v, o)
		}
		if _, err := New(o, onePod("app:1")); err != nil {
			t.Errorf("New(DefaultOptionsFor(%v)): %v", v, err)
		}
	}
}

// TestVersionDifferences shows podlifecycle's rows of docs/versions.md as
// the two behaviours, and that the Version reaches podphase.
func TestVersionDifferences(t *testing.T) {
	t.Run("PL-V2", func(t *testing.T) {
		for _, tc := range []struct {
			v    kubeversion.Version
			want string
		}{
			{kubeversion.V1_34, `Container image "app:1" already present on machine`},
			{kubeversion.V1_37, `Container image "app:1" already present on machine and can be accessed by the pod`},
		} {
			_, _, r := presentImageSandboxReady(t, tc.v)
			var got string
			for _, e := range r.Events {
				if e.Reason == ReasonPulled {
					got = e.Message
				}
			}
			if got != tc.want {
				t.Errorf("%v: Pulled %q; want %q", tc.v, got, tc.want)
			}
		}
	})
	t.Run("PL-V6", func(t *testing.T) {
		for _, tc := range []struct {
			v                kubeversion.Version
			created, started string
		}{
			{kubeversion.V1_33, "Created container: foo1", "Started container foo1"},
			{kubeversion.V1_34, "Created container: foo1", "Started container foo1"},
			{kubeversion.V1_35, "Container created", "Container started"},
			{kubeversion.V1_37, "Container created", "Container started"},
		} {
			if got := CreatedMessage("foo1", tc.v); got != tc.created {
				t.Errorf("%v: CreatedMessage %q; want %q", tc.v, got, tc.created)
			}
			if got := StartedMessage("foo1", tc.v); got != tc.started {
				t.Errorf("%v: StartedMessage %q; want %q", tc.v, got, tc.started)
			}
			m, pod, r := presentImageSandboxReady(t, tc.v)
			if err := m.StepTo(t0, pod, []Observation{{Kind: ContainerCreated, Container: "foo1", ContainerID: "c1"}, {Kind: ContainerStarted, Container: "foo1", ContainerID: "c1"}}, &r); err != nil {
				t.Fatal(err)
			}
			if !hasEvent(&r, ReasonCreated, tc.created) || !hasEvent(&r, ReasonStarted, tc.started) {
				t.Errorf("%v: the machine's events %v lack Created %q and Started %q", tc.v, r.Events, tc.created, tc.started)
			}
		}
	})
	t.Run("PP-V4 through the machine", func(t *testing.T) {
		// The first sync of a new pod reports its sandbox missing.
		reason := func(v kubeversion.Version) string {
			pod := onePod("app:1")
			m, err := New(DefaultOptionsFor(v), pod)
			if err != nil {
				t.Fatal(err)
			}
			var r Result
			if err := m.StepTo(t0, pod, nil, &r); err != nil {
				t.Fatal(err)
			}
			if len(r.Statuses) == 0 {
				t.Fatalf("%v: no status", v)
			}
			for _, c := range r.Statuses[0].Conditions {
				if c.Type == v1.PodReadyToStartContainers {
					if c.Status != v1.ConditionFalse {
						t.Fatalf("%v: PodReadyToStartContainers %s before the sandbox", v, c.Status)
					}
					return c.Reason
				}
			}
			t.Fatalf("%v: no PodReadyToStartContainers", v)
			return ""
		}
		if got := reason(kubeversion.V1_36); got != "" {
			t.Errorf("1.36: reason %q; want none", got)
		}
		if got := reason(kubeversion.V1_37); got != "PodSandboxNotReady" {
			t.Errorf("1.37: reason %q; want PodSandboxNotReady", got)
		}
	})
}

// presentImageSandboxReady returns a machine of version v for a pod of image
// app:1 already on the node, after the Step that saw its sandbox ready.
func presentImageSandboxReady(t *testing.T, v kubeversion.Version) (*Machine, *v1.Pod, Result) {
	t.Helper()
	pod := onePod("app:1")
	m, err := New(DefaultOptionsFor(v), pod)
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	for _, obs := range [][]Observation{{{Kind: ImagePresent, Image: "app:1"}}, {{Kind: SandboxReady, IP: "10.0.0.2"}}} {
		if err := m.StepTo(t0, pod, obs, &r); err != nil {
			t.Fatal(err)
		}
	}
	return m, pod, r
}

// TestInvalidVersionRefused: New refuses a Version that is none of
// kubeversion's constants, set in the options or kept by DefaultOptionsFor,
// with an *OptionError on Version matching ErrInvalidOptions and
// kubeversion.ErrUnsupportedVersion; CreatedMessage and StartedMessage,
// without an error, answer as 1.37.
func TestInvalidVersionRefused(t *testing.T) {
	set := DefaultOptions()
	set.Version = kubeversion.Version(99)
	tests := []struct {
		name string
		opts Options
	}{
		{"New: invalid Version refused (set in Options)", set},
		{"New: invalid Version refused (DefaultOptionsFor keeps it)", DefaultOptionsFor(kubeversion.Version(5))},
		{"New: invalid Version refused before another invalid field", func() Options { o := set; o.SyncFrequency = 0; return o }()},
	}
	for _, tt := range tests {
		m, err := New(tt.opts, onePod("busybox:1"))
		var oe *OptionError
		var ve *kubeversion.ValueError
		if m != nil || !errors.Is(err, ErrInvalidOptions) || !errors.Is(err, kubeversion.ErrUnsupportedVersion) ||
			!errors.As(err, &oe) || oe.Field != "Version" || !errors.As(err, &ve) || ve.Version != tt.opts.Version {
			t.Errorf("%s: New = %v, %v; want an *OptionError on Version matching ErrInvalidOptions and ErrUnsupportedVersion", tt.name, m, err)
		}
	}
	if _, err := New(set, onePod("busybox:1")); err == nil ||
		err.Error() != "podlifecycle: invalid options: Version kubeversion.Version(99): unsupported Kubernetes version, supported are 1.33 to 1.37" {
		t.Errorf("error text %v", err)
	}
	if CreatedMessage("a", set.Version) != CreatedMessage("a", kubeversion.Default) || StartedMessage("a", set.Version) != StartedMessage("a", kubeversion.Default) {
		t.Error("CreatedMessage or StartedMessage: an invalid Version does not give 1.37's message")
	}
}

// TestVersionPLV1 is docs/versions.md row PL-V1 (CS-V1 through the
// machine): a container with its own restartPolicy OnFailure in a pod with
// restartPolicy Never exits 1. With DefaultOptionsFor(1.35) the container
// policy is honoured (ContainerRestartRules on): after the crash-loop
// back-off the machine starts it again and the pod stays Running. With
// 1.34's (the gate off) the pod's Never decides: no new start, the pod
// ends Failed.
func TestVersionPLV1(t *testing.T) {
	for _, tc := range []struct {
		v       kubeversion.Version
		restart bool
	}{{kubeversion.V1_34, false}, {kubeversion.V1_35, true}, {kubeversion.V1_37, true}} {
		pod := onePod("app:1")
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		pod.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyOnFailure)
		name := pod.Spec.Containers[0].Name
		s := newSim(t, pod, DefaultOptionsFor(tc.v))
		s.exitPastBackOff(name, 1)
		starts := s.count(StartContainer, name)
		var phase v1.PodPhase
		if st := s.lastStatus(); st != nil {
			phase = st.Phase
		}
		last := s.all[len(s.all)-1]
		wantStarts, wantPhase := 1, v1.PodFailed
		if tc.restart {
			wantStarts, wantPhase = 2, v1.PodRunning
		}
		if starts != wantStarts || phase != wantPhase {
			t.Errorf("PL-V1 %v: %d starts, phase %q; want %d starts, phase %q (actions %v)", tc.v, starts, phase, wantStarts, wantPhase, actionsOf(&last))
		}
	}
}

// TestVersionPLV7 is docs/versions.md row PL-V7, the init-container decision
// of spec/podlifecycle.md section 3.5 across a sandbox change. The node
// reboots while the regular container app of the first sandbox is created
// and not started (its start fails, so the runtime keeps it created); the
// new sandbox runs init1 again. 1.37 judges initialization in the current
// sandbox: init1, init2, then app start in the new sandbox. 1.33 to 1.36
// count the created app of the lost sandbox as initialization: app starts
// while init1 still runs and init2 never runs again (kubernetes#137710,
// #140309).
func TestVersionPLV7(t *testing.T) {
	pod := func() *v1.Pod {
		p := onePod("app:1")
		p.Spec.Containers[0].Name = "app"
		p.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "init:1"}, {Name: "init2", Image: "init:1"}}
		return p
	}
	for _, tc := range []struct {
		v    kubeversion.Version
		want []string // the starts in the new sandbox
	}{
		{kubeversion.V1_33, []string{"init1", "app"}},
		{kubeversion.V1_34, []string{"init1", "app"}},
		{kubeversion.V1_35, []string{"init1", "app"}},
		{kubeversion.V1_36, []string{"init1", "app"}},
		{kubeversion.V1_37, []string{"init1", "init2", "app"}},
	} {
		s := newSim(t, pod(), DefaultOptionsFor(tc.v))
		s.settle()
		s.exit("init1", 0)
		s.settle()
		s.startFail["app"] = "context canceled"
		s.exit("init2", 0)
		s.step() // starts app: created, and the start fails
		// The node reboots before the next sync: the sandbox is gone, the
		// created container stays.
		s.emit(Observation{Kind: SandboxNotReady, Attempt: 0})
		from := len(s.all)
		s.settle()
		for _, name := range []string{"init1", "init2"} {
			if in := s.m.find(name).insts; len(in) > 0 && in[0].sandbox == 1 && in[0].state == containerstate.RuntimeRunning {
				s.exit(name, 0)
				s.settle()
			}
		}
		var started []string
		for _, r := range s.all[from:] {
			for _, a := range r.Actions {
				if a.Kind == StartContainer {
					started = append(started, a.Container)
				}
			}
		}
		if !slices.Equal(started, tc.want) {
			t.Errorf("PL-V7 %v: starts in the new sandbox %v; want %v", tc.v, started, tc.want)
		}
		if app := s.m.find("app").insts; len(app) != 2 || app[0].sandbox != 1 || app[0].state != containerstate.RuntimeRunning ||
			app[1].sandbox != 0 || app[1].state != containerstate.RuntimeCreated {
			t.Errorf("PL-V7 %v: app has %d instances; want one running in sandbox 1 and the created one of sandbox 0", tc.v, len(app))
		}
	}
}

// TestVersionPLV7Plans is row PL-V7 at the level of computePodActions
// (spec/podlifecycle.md section 3.5), with the runtime view set directly.
func TestVersionPLV7Plans(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(*snap)
		old, now planOf // 1.33-1.36, 1.37
	}{
		{"PL-V7: a regular container created in an earlier sandbox", func(s *snap) {
			s.add("foo1", containerstate.RuntimeCreated, 0).sandbox = 7
		}, planOf{Att: 8, C: []int{0, 1, 2}}, planOf{Att: 8, I: []int{0}}},
		{"PL-V7: a regular container running in an earlier sandbox", func(s *snap) {
			s.add("foo2", containerstate.RuntimeRunning, 0).sandbox = 7
		}, planOf{Att: 8, C: []int{0, 2}}, planOf{Att: 8, I: []int{0}}},
		{"PL-V7: an exited regular container initializes only in the current sandbox", func(s *snap) {
			s.add("foo1", containerstate.RuntimeExited, 0)
			s.add("foo2", containerstate.RuntimeRunning, 0)
			s.add("foo3", containerstate.RuntimeRunning, 0)
			s.m.find("foo2").insts[0].state = containerstate.RuntimeExited
			s.m.find("foo3").insts[0].state = containerstate.RuntimeExited
		}, planOf{Att: 8, I: []int{0}}, planOf{Att: 8, C: []int{0, 1, 2}}},
		{"PL-V7: an init container left over from an earlier sandbox (#137710)", func(s *snap) {
			s.add("init1", containerstate.RuntimeExited, 0)
			s.add("init2", containerstate.RuntimeExited, 0)
			s.add("init3", containerstate.RuntimeExited, 0).sandbox = 7
		}, planOf{Att: 8, C: []int{0, 1, 2}}, planOf{Att: 8, I: []int{2}}},
	}
	for _, tt := range tests {
		for _, v := range kubeversion.Supported() {
			s := newSnap(t, podPI())
			s.m.opts.Version = v
			s.m.sb.attempt = 8
			tt.setup(s)
			want := tt.now
			if !v.AtLeast(kubeversion.V1_37) {
				want = tt.old
			}
			if d := cmp.Diff(want, s.plan()); d != "" {
				t.Errorf("%s, %v (-want +got):\n%s", tt.name, v, d)
			}
		}
	}
}

// TestVersionPLV5 is docs/versions.md row PL-V5, probes during graceful
// termination (spec/podlifecycle.md section 6, step 9, and section 7.3). A
// ready container's readiness probe starts failing once the pod is deleted;
// the container runs on through its grace. With an exec probe, 1.35 and
// 1.36 do not run it any more (the cancelled context fails the runtime
// call): each tick records the errored Unhealthy event, the result is
// discarded and the container and the pod stay Ready. 1.33, 1.34 and 1.37
// run it: Unhealthy "Readiness probe failed", container and pod not ready.
// An HTTP probe, which takes no context, behaves as 1.37 in every minor.
func TestVersionPLV5(t *testing.T) {
	const errored = "Readiness probe errored and resulted in unknown state: rpc error: code = Canceled desc = context canceled"
	const failed = "Readiness probe failed: probe output"
	exec := v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/ready"}}}
	http := v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}
	for _, tc := range []struct {
		name    string
		v       kubeversion.Version
		handler v1.ProbeHandler
		counted bool // the failures count: not ready
	}{
		{"exec", kubeversion.V1_33, exec, true},
		{"exec", kubeversion.V1_34, exec, true},
		{"exec", kubeversion.V1_35, exec, false},
		{"exec", kubeversion.V1_36, exec, false},
		{"exec", kubeversion.V1_37, exec, true},
		{"http", kubeversion.V1_35, http, true},
		{"http", kubeversion.V1_36, http, true},
		{"http", kubeversion.V1_37, http, true},
	} {
		pod := onePod("app:1")
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
		pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: tc.handler, PeriodSeconds: 5, FailureThreshold: 2}
		name := pod.Spec.Containers[0].Name
		s := newSim(t, pod, DefaultOptionsFor(tc.v))
		s.settle()
		s.now = s.now.Add(5 * time.Second)
		s.settle()
		if ready, podReady := readiness(s); !ready || !podReady {
			t.Fatalf("PL-V5 %s %v: before the deletion: container ready %v, pod Ready %v", tc.name, tc.v, ready, podReady)
		}
		// Deleted; the container runs on through its 30 s grace.
		s.pod = deleted(s.pod, s.now, 30)
		s.holdKill[name] = true
		s.probe[name] = ProbeFailure
		from := len(s.all)
		for i := 0; i < 4; i++ {
			s.now = s.now.Add(5 * time.Second)
			s.settle()
		}
		var runs int
		var unhealthy []string
		for _, r := range s.all[from:] {
			for _, a := range r.Actions {
				if a.Kind == RunProbe {
					runs++
				}
			}
			for _, e := range r.Events {
				if e.Reason == ReasonUnhealthy {
					if e.Type != v1.EventTypeWarning || e.FieldPath != FieldPath(containerstate.Regular, name) {
						t.Errorf("PL-V5 %s %v: event %+v", tc.name, tc.v, e)
					}
					unhealthy = append(unhealthy, e.Message)
				}
			}
		}
		wantMsg := failed
		if !tc.counted {
			wantMsg = errored
		}
		if len(unhealthy) < 2 {
			t.Errorf("PL-V5 %s %v: Unhealthy events %q; want one per tick", tc.name, tc.v, unhealthy)
		}
		for _, m := range unhealthy {
			if m != wantMsg {
				t.Errorf("PL-V5 %s %v: Unhealthy %q; want %q", tc.name, tc.v, m, wantMsg)
			}
		}
		if (runs > 0) != tc.counted {
			t.Errorf("PL-V5 %s %v: %d RunProbe actions during the termination; want them only when the probe runs", tc.name, tc.v, runs)
		}
		ready, podReady := readiness(s)
		if ready == tc.counted || podReady == tc.counted {
			t.Errorf("PL-V5 %s %v: container ready %v, pod Ready %v during the termination; want %v", tc.name, tc.v, ready, podReady, !tc.counted)
		}
		if s.m.state != Terminating || len(s.m.find(name).insts) != 1 || s.m.find(name).insts[0].state != containerstate.RuntimeRunning {
			t.Fatalf("PL-V5 %s %v: state %v; want the container still running in Terminating", tc.name, tc.v, s.m.state)
		}
	}
}

// readiness is the ready flag of the first container and the pod's Ready
// condition in the last status the sim's machine produced.
func readiness(s *sim) (ready, podReady bool) {
	var st *v1.PodStatus
	for i := range s.all {
		if n := len(s.all[i].Statuses); n > 0 {
			st = &s.all[i].Statuses[n-1]
		}
	}
	if st == nil || len(st.ContainerStatuses) == 0 {
		return false, false
	}
	return st.ContainerStatuses[0].Ready, conditionTrue(st, v1.PodReady)
}

// TestRestartDecisionFollowsGate is spec/podlifecycle.md section 14 (the
// ContainerRestartRules row) on sections 3.5 and 3.6: with the gate off, as
// in the 1.34 profile, the restart of an exited container is the pod's
// restartPolicy alone, even when the container kept its own restartPolicy
// and rules (an update of a pod that had them): the pod's OnFailure
// restarts it in its sandbox after the back-off. Judged by its own Never,
// nothing would restart it: the sandbox would be killed and made again
// (section 3.7, then 3.3), and an init container's failure would kill the
// pod. With the gate on, its own Never holds and the pod fails (the
// container exited 2), so nothing more runs.
func TestRestartDecisionFollowsGate(t *testing.T) {
	never := func(c *v1.Container) {
		c.RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
		c.RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{0}}}}
	}
	for _, tc := range []struct {
		name  string
		v     kubeversion.Version
		init  bool
		start int // starts of the container that exits 2
		kills int // sandbox kills: the failed pod's, with the gate on
	}{
		{"regular, gate off (1.34): the pod's OnFailure restarts it", kubeversion.V1_34, false, 2, 0},
		{"regular, gate on (1.35): its own Never keeps it down", kubeversion.V1_35, false, 1, 1},
		{"regular, gate on (1.37)", kubeversion.V1_37, false, 1, 1},
		{"init, gate off (1.34): the pod's OnFailure restarts it", kubeversion.V1_34, true, 2, 0},
		{"init, gate on (1.37): its own Never fails the pod", kubeversion.V1_37, true, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := onePod("app:1")
			pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
			name := pod.Spec.Containers[0].Name
			if tc.init {
				name = "init"
				pod.Spec.InitContainers = []v1.Container{{Name: name, Image: "init:1"}}
				never(&pod.Spec.InitContainers[0])
			} else {
				never(&pod.Spec.Containers[0])
			}
			s := newSim(t, pod, DefaultOptionsFor(tc.v))
			s.exitPastBackOff(name, 2)
			starts, sandboxes, sandboxKills := s.count(StartContainer, name), s.count(CreateSandbox, ""), s.count(KillSandbox, "")
			if starts != tc.start || sandboxes != 1 || sandboxKills != tc.kills {
				last := s.all[len(s.all)-1]
				t.Errorf("%d starts of %s, %d sandboxes made, %d killed; want %d starts in one sandbox, killed %d times (last actions %v)",
					starts, name, sandboxes, sandboxKills, tc.start, tc.kills, actionsOf(&last))
			}
		})
	}
}
