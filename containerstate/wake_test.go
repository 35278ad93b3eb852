package containerstate

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestMachineRefusesRestartWithoutPolicy is issue 11's case: under
// restartPolicy Never the kubelet never starts a container again after it
// exited, so a new instance is impossible and Step refuses it with a typed
// error, leaving the Terminated status. (Before, Step returned nil and kept
// the status.) The rows around it check that every restart the rules allow
// is still accepted.
func TestMachineRefusesRestartWithoutPolicy(t *testing.T) {
	ownAlways := v1.ContainerRestartPolicyAlways
	tests := []struct {
		reason string
		policy v1.RestartPolicy
		edit   func(*v1.PodSpec)
		name   string
		exit   int32
		next   Event
		want   error // nil: accepted
	}{
		{reason: "restartPolicy Never: no new instance after an exit (spec section 3.3)", policy: v1.RestartPolicyNever, name: "a", exit: 1,
			next: Event{Kind: Started, At: at(9), ContainerID: "c://2"}, want: ErrNotRestartable},
		{reason: "restartPolicy Never, first seen created", policy: v1.RestartPolicyNever, name: "a", exit: 0,
			next: Event{Kind: Created, At: at(9), ContainerID: "c://2"}, want: ErrNotRestartable},
		{reason: "restartPolicy Never, a new instance first seen exited", policy: v1.RestartPolicyNever, name: "a", exit: 0,
			next: ExitedEvent(at(9), "c://2", 0), want: ErrNotRestartable},
		{reason: "restartPolicy OnFailure after exit 0", policy: v1.RestartPolicyOnFailure, name: "a", exit: 0,
			next: Event{Kind: Started, At: at(9), ContainerID: "c://2"}, want: ErrNotRestartable},
		{reason: "restartPolicy OnFailure after exit 1 restarts", policy: v1.RestartPolicyOnFailure, name: "a", exit: 1,
			next: Event{Kind: Started, At: at(9), ContainerID: "c://2"}},
		{reason: "restartPolicy Always restarts", policy: v1.RestartPolicyAlways, name: "a", exit: 0,
			next: Event{Kind: Started, At: at(9), ContainerID: "c://2"}},
		{reason: "the container's own restartPolicy Always wins over the pod's Never (KEP-5307)", policy: v1.RestartPolicyNever, name: "a", exit: 0,
			edit: func(s *v1.PodSpec) { s.Containers[0].RestartPolicy = &ownAlways },
			next: Event{Kind: Started, At: at(9), ContainerID: "c://2"}},
		{reason: "a RestartAllContainers rule restarts in place (KEP-5532)", policy: v1.RestartPolicyNever, name: "a", exit: 42,
			edit: func(s *v1.PodSpec) {
				s.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
				s.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
					ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
			},
			next: Event{Kind: Started, At: at(9), ContainerID: "c://2"}},
		{reason: "a completed init container runs again when its sandbox is recreated (restartPolicy OnFailure)", policy: v1.RestartPolicyOnFailure, name: "init", exit: 0,
			edit: func(s *v1.PodSpec) { s.InitContainers = []v1.Container{{Name: "init"}} },
			next: Event{Kind: Started, At: at(9), ContainerID: "c://2"}},
		{reason: "an ephemeral container is never restarted", policy: v1.RestartPolicyAlways, name: "debug", exit: 1,
			edit: func(s *v1.PodSpec) {
				s.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug"}}}
			},
			next: Event{Kind: Started, At: at(9), ContainerID: "c://2"}, want: ErrNotRestartable},
	}
	for _, tt := range tests {
		pod := onePod(tt.policy, "a")
		if tt.edit != nil {
			tt.edit(pod.Spec)
		}
		m := mustMachine(t, DefaultOptions(), pod, tt.name)
		steps(t, m, Event{Kind: Started, At: at(1), ContainerID: "c://1"}, ExitedEvent(at(2), "c://1", tt.exit))
		before := m.Status()
		err := m.Step(tt.next)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.reason, err)
			}
			continue
		}
		var se *StepError
		if !errors.Is(err, tt.want) || !errors.Is(err, ErrInvalidInput) || !errors.As(err, &se) || se.Field != "ContainerID" {
			t.Errorf("%s: Step(%v) error %v, want a *StepError on ContainerID wrapping %v and ErrInvalidInput", tt.reason, tt.next, err, tt.want)
		}
		if after := m.Status(); after.String() != before.String() || m.State() != Terminated {
			t.Errorf("%s: a refused event changed the status from %v to %v", tt.reason, before.State, after.State)
		}
	}
}

// TestMachineNewInstanceAfterUnknown: an instance last reported UNKNOWN was
// never seen to exit, and the kubelet starts a container in an unknown state
// again whatever the restartPolicy (section 3.3). So a new instance after it
// is accepted even under restartPolicy Never, though the status already
// says ContainerStatusUnknown (grace 0).
func TestMachineNewInstanceAfterUnknown(t *testing.T) {
	m := mustMachine(t, Options{Features: DefaultFeatures()}, onePod(v1.RestartPolicyNever, "a"), "a")
	steps(t, m, Event{Kind: Started, At: at(1), ContainerID: "c://1"}, Event{Kind: Unknown, At: at(2), ContainerID: "c://1"})
	if s := m.Status(); s.State.Terminated == nil || s.State.Terminated.Reason != ReasonContainerStatusUnknown {
		t.Fatalf("grace 0: an UNKNOWN report after Running is Terminated ContainerStatusUnknown at once, got %+v", s.State)
	}
	if err := m.Step(Event{Kind: Started, At: at(3), ContainerID: "c://2"}); err != nil {
		t.Fatalf("a new instance after one last seen UNKNOWN, not exited: %v", err)
	}
	if inst, ok := m.Newest(); !ok || inst.ID != "c://2" {
		t.Fatalf("the new instance is the newest: got %+v", inst)
	}
}

// TestMachineNextWake checks that a machine says when its UNKNOWN grace ends
// and that Advance ends it then, with no runtime event.
func TestMachineNextWake(t *testing.T) {
	m := mustMachine(t, DefaultOptions(), onePod(v1.RestartPolicyAlways, "a"), "a")
	if _, ok := m.NextWake(); ok {
		t.Fatal("a new machine has nothing to wake for")
	}
	steps(t, m, Event{Kind: Started, At: at(0), ContainerID: "c://1"}, Event{Kind: Unknown, At: at(10), ContainerID: "c://1"})
	wake, ok := m.NextWake()
	if want := at(10).Add(DefaultUnknownGrace); !ok || !wake.Equal(want) {
		t.Fatalf("NextWake = %v, %v; want %v, true (UNKNOWN since 10s plus the grace)", wake, ok, want)
	}
	// A later UNKNOWN report does not move the wake-up: the grace is timed
	// from the first.
	steps(t, m, Event{Kind: Unknown, At: at(60), ContainerID: "c://1"})
	if w, _ := m.NextWake(); !w.Equal(wake) {
		t.Fatalf("NextWake moved to %v after a repeated UNKNOWN report, want %v", w, wake)
	}
	if err := m.Advance(wake.Add(-time.Nanosecond)); err != nil || m.State() != Running {
		t.Fatalf("Advance before the wake-up: %v, state %v; want Running", err, m.State())
	}
	if err := m.Advance(wake); err != nil {
		t.Fatal(err)
	}
	s := m.Status()
	if s.State.Terminated == nil || s.State.Terminated.Reason != ReasonContainerStatusUnknown || s.RestartCount != 1 {
		t.Fatalf("at the wake-up: want Terminated ContainerStatusUnknown, restartCount 1; got %+v", s)
	}
	if _, ok := m.NextWake(); ok {
		t.Fatal("after the grace there is nothing to wake for")
	}
	if err := m.Advance(wake.Add(-time.Second)); !errors.Is(err, ErrTimeWentBackwards) {
		t.Fatalf("Advance to an earlier time: %v, want ErrTimeWentBackwards", err)
	}

	// The runtime comes back: nothing to wake for.
	m = mustMachine(t, DefaultOptions(), onePod(v1.RestartPolicyAlways, "a"), "a")
	steps(t, m, Event{Kind: Started, At: at(0), ContainerID: "c://1"}, Event{Kind: Unknown, At: at(10), ContainerID: "c://1"}, Event{Kind: Started, At: at(20), ContainerID: "c://1"})
	if _, ok := m.NextWake(); ok {
		t.Fatal("a runtime back within the grace leaves nothing to wake for")
	}

	// A back-off shown during the grace: the status is Waiting, which the end
	// of the grace does not change, so there is nothing to wake for.
	m = mustMachine(t, DefaultOptions(), onePod(v1.RestartPolicyAlways, "a"), "a")
	steps(t, m, Event{Kind: Started, At: at(0), ContainerID: "c://1"}, Event{Kind: Unknown, At: at(10), ContainerID: "c://1"},
		BackOffEvent(at(20), 10*time.Second, "a", "web", "default", "uid-1"))
	if s := m.Status(); s.State.Waiting == nil || s.State.Waiting.Reason != ReasonCrashLoopBackOff {
		t.Fatalf("a back-off during the grace: want Waiting CrashLoopBackOff, got %+v", s.State)
	}
	if w, ok := m.NextWake(); ok {
		t.Fatalf("a Waiting container has no Running state held through the grace, yet NextWake says %v", w)
	}

	// Grace 0 is the kubelet: Terminated at once, no wake-up.
	m = mustMachine(t, Options{Features: DefaultFeatures()}, onePod(v1.RestartPolicyAlways, "a"), "a")
	steps(t, m, Event{Kind: Started, At: at(0), ContainerID: "c://1"}, Event{Kind: Unknown, At: at(10), ContainerID: "c://1"})
	if _, ok := m.NextWake(); ok || m.State() != Terminated {
		t.Fatalf("grace 0: want Terminated and no wake-up, got %v", m.State())
	}
}

// TestZeroValues checks that the zero values of the package's types do not
// panic and give their documented results: a zero Machine refuses events
// with ErrNotInitialized, a zero Backoff never blocks, a zero or nil error
// value still has a message and unwraps to a sentinel.
func TestZeroValues(t *testing.T) {
	for _, m := range []*Machine{nil, {}} {
		if err := m.Step(Event{Kind: Started, At: at(1), ContainerID: "c://1"}); !errors.Is(err, ErrNotInitialized) {
			t.Errorf("Step on %#v: %v, want ErrNotInitialized", m, err)
		}
		if err := m.Advance(at(1)); !errors.Is(err, ErrNotInitialized) {
			t.Errorf("Advance on a zero machine: %v, want ErrNotInitialized", err)
		}
		if m.ShouldBeRestarted() || m.Ready() || m.Started() || m.State() != NoState || m.Name() != "" || m.Kind() != 0 || m.RestartCount() != 0 {
			t.Error("a zero machine reports something")
		}
		if _, ok := m.NextWake(); ok {
			t.Error("a zero machine wakes")
		}
		if _, ok := m.Newest(); ok {
			t.Error("a zero machine has an instance")
		}
		if _, ok := m.Last(); ok {
			t.Error("a zero machine has a last event")
		}
		_ = m.Status()
	}
	for _, b := range []*Backoff{nil, {}} {
		for i := range 3 {
			if _, _, blocked := b.CrashLoop("k", at(i), at(i)); blocked {
				t.Error("a zero Backoff blocked a crash-loop restart")
			}
			b.Next("k", at(i), at(i))
			if b.ImagePull("k", at(i)) || b.InBackoffSinceUpdate("k", at(i)) || b.Get("k") != 0 {
				t.Error("a zero Backoff holds a delay")
			}
		}
		b.Reset("k")
		b.GC(at(9))
		if b.Len() != 0 || b.Options() != (BackoffOptions{}) {
			t.Error("a zero Backoff holds keys or a configuration")
		}
	}
	for _, err := range []error{&StepError{}, &InputError{}, &OptionError{}, &TransitionError{},
		(*StepError)(nil), (*InputError)(nil), (*OptionError)(nil), (*TransitionError)(nil)} {
		if msg := err.Error(); msg == "" || !errors.Is(err, ErrInvalidInput) && !errors.Is(err, ErrInvalidOptions) && !errors.Is(err, ErrTransition) {
			t.Errorf("zero %T: message %q does not unwrap to a sentinel", err, msg)
		}
	}
}
