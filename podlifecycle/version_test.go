package podlifecycle

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

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
		s.settle()
		s.exit(name, 1)
		s.settle()
		s.now = s.now.Add(containerstate.CrashLoopInitial + time.Second)
		s.settle()
		starts := 0
		for _, r := range s.all {
			for _, a := range r.Actions {
				if a.Kind == StartContainer && a.Container == name {
					starts++
				}
			}
		}
		var phase v1.PodPhase
		for _, r := range s.all {
			if n := len(r.Statuses); n > 0 {
				phase = r.Statuses[n-1].Phase
			}
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
