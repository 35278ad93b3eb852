package containerstate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func mustMachine(t *testing.T, o Options, pod Pod, name string) *Machine {
	t.Helper()
	m, err := NewMachine(o, pod, name)
	if err != nil {
		t.Fatalf("NewMachine: %v", err)
	}
	return m
}

func steps(t *testing.T, m *Machine, evs ...Event) {
	t.Helper()
	for _, ev := range evs {
		if err := m.Step(ev); err != nil {
			t.Fatalf("Step(%v): %v", ev, err)
		}
	}
}

// TestReasons produces every Waiting reason of section 5 and every
// Terminated reason of section 6 in the situation the spec gives, through a
// Machine.
func TestReasons(t *testing.T) {
	always := onePod(v1.RestartPolicyAlways, "a")
	never := onePod(v1.RestartPolicyNever, "a")
	withInit := Pod{Spec: &v1.PodSpec{InitContainers: []v1.Container{{Name: "i", Image: "img-i"}}, Containers: []v1.Container{{Name: "a", Image: "img-a"}}}}
	grace0 := Options{Features: DefaultFeatures()}
	created := Event{Kind: Created, At: at(1), ContainerID: "c://1"}
	started := Event{Kind: Started, At: at(2), ContainerID: "c://1"}

	tests := []struct {
		section string
		reason  string
		why     string
		opts    Options
		pod     Pod
		name    string
		events  []Event
		want    v1.ContainerState
		last    *v1.ContainerState
	}{
		{section: "5", reason: ReasonContainerCreating, why: "default Waiting, pod without init containers",
			pod: always, name: "a", want: waitingState(ReasonContainerCreating, "")},
		{section: "5", reason: ReasonPodInitializing, why: "default Waiting, pod with init containers",
			pod: withInit, name: "a", want: waitingState(ReasonPodInitializing, "")},
		{section: "5", reason: "(empty)", why: "runtime state created",
			pod: always, name: "a", events: []Event{created}, want: waitingState("", "")},
		{section: "5", reason: "(empty)", why: "runtime state unknown with no running predecessor",
			pod: always, name: "a", events: []Event{created, {Kind: Unknown, At: at(2), ContainerID: "c://1"}}, want: waitingState("", "")},
		{section: "5", reason: ReasonCrashLoopBackOff, why: "a restart held back by back-off, with the kubelet's message",
			pod: always, name: "a",
			events: []Event{created, started, ExitedEvent(at(3), "c://1", 1), BackOffEvent(at(4), 10*time.Second, "a", "web", "default", "uid-1")},
			want:   waitingState(ReasonCrashLoopBackOff, "back-off 10s restarting failed container=a pod=web_default(uid-1)")},
		{section: "5", reason: ReasonErrImagePull, why: "a failed pull, with the CRI error text",
			pod: always, name: "a", events: []Event{{Kind: PullStarted, At: at(0)}, PullErrorEvent(at(1), "img-a", "rpc error: code = NotFound desc = not found")},
			want: waitingState(ReasonErrImagePull, "rpc error: code = NotFound desc = not found")},
		{section: "5", reason: ReasonImagePullBackOff, why: "a pull held back, with the last error appended",
			pod: always, name: "a", events: []Event{PullErrorEvent(at(1), "img-a", "not found"), PullBackOffEvent(at(2), "img-a", ReasonErrImagePull, "not found")},
			want: waitingState(ReasonImagePullBackOff, `Back-off pulling image "img-a": ErrImagePull: not found`)},
		{section: "5", reason: ReasonImagePullBackOff, why: "a pull held back with no remembered error",
			pod: always, name: "a", events: []Event{PullBackOffEvent(at(2), "img-a", "", "")},
			want: waitingState(ReasonImagePullBackOff, `Back-off pulling image "img-a"`)},
		{section: "5", reason: ReasonInvalidImageName, why: "an image reference that does not parse",
			pod: always, name: "a", events: []Event{InvalidImageNameEvent(at(1), "Bad:Image", errors.New("couldn't parse image name \"Bad:Image\": invalid reference format"))},
			want: waitingState(ReasonInvalidImageName, `Failed to apply default image tag "Bad:Image": couldn't parse image name "Bad:Image": invalid reference format`)},
		{section: "5", reason: ReasonErrImageNeverPull, why: "pull policy Never and the image absent",
			pod: always, name: "a", events: []Event{NeverPullEvent(at(1), "img-a")},
			want: waitingState(ReasonErrImageNeverPull, `Container image "img-a" is not present with pull policy of Never`)},
		{section: "5", reason: ReasonImageInspectError, why: "the runtime failed to inspect the image; the ref is empty in the message",
			pod: always, name: "a", events: []Event{ImageInspectErrorEvent(at(1), errors.New("rpc error"))},
			want: waitingState(ReasonImageInspectError, `Failed to inspect image "": rpc error`)},
		{section: "5", reason: ReasonRegistryUnavailable, why: "a CRI pull error with that prefix",
			pod: always, name: "a", events: []Event{PullErrorEvent(at(1), "img-a", "RegistryUnavailable: connection refused")},
			want: waitingState(ReasonRegistryUnavailable, "image pull failed for img-a because the registry is unavailable: connection refused")},
		{section: "5", reason: ReasonSignatureValidationFailed, why: "a CRI pull error with that prefix",
			pod: always, name: "a", events: []Event{PullErrorEvent(at(1), "img-a", "SignatureValidationFailed")},
			want: waitingState(ReasonSignatureValidationFailed, "image pull failed for img-a because the signature validation failed")},
		{section: "5", reason: ReasonCreateContainerConfigError, why: "env from a missing ConfigMap",
			pod: always, name: "a", events: []Event{{Kind: CreateFailed, At: at(1), Reason: ReasonCreateContainerConfigError, Message: `configmap "cfg" not found`}},
			want: waitingState(ReasonCreateContainerConfigError, `configmap "cfg" not found`)},
		{section: "5", reason: ReasonPreCreateHookError, why: "a kubelet-internal pre-create hook failed",
			pod: always, name: "a", events: []Event{{Kind: CreateFailed, At: at(1), Reason: ReasonPreCreateHookError, Message: "topology"}},
			want: waitingState(ReasonPreCreateHookError, "topology")},
		{section: "5", reason: ReasonCreateContainerError, why: "CRI CreateContainer failed (the default reason of CreateFailed)",
			pod: always, name: "a", events: []Event{{Kind: CreateFailed, At: at(1), Message: "name in use"}},
			want: waitingState(ReasonCreateContainerError, "name in use")},
		{section: "5", reason: ReasonPreStartHookError, why: "a kubelet-internal pre-start hook failed",
			pod: always, name: "a", events: []Event{created, {Kind: StartFailed, At: at(2), Reason: ReasonPreStartHookError, Message: "cpu"}},
			want: waitingState(ReasonPreStartHookError, "cpu")},
		{section: "5", reason: ReasonRunContainerError, why: "CRI StartContainer failed (the default reason of StartFailed)",
			pod: always, name: "a", events: []Event{created, {Kind: StartFailed, At: at(2), Message: "exec: not found"}},
			want: waitingState(ReasonRunContainerError, "exec: not found")},
		{section: "5", reason: ReasonPostStartHookError, why: "the postStart hook failed and the container was killed",
			pod: always, name: "a", events: []Event{created, started, {Kind: StartFailed, At: at(3), Reason: ReasonPostStartHookError, Message: "hook failed"},
				{Kind: Exited, At: at(4), ContainerID: "c://1", ExitCode: 137, Reason: ReasonError}},
			want: waitingState(ReasonPostStartHookError, "hook failed"),
			last: ptr(withID(withTimes(terminatedState(137, ReasonError, ""), at(2), at(4)), "c://1"))},
		{section: "5", reason: ReasonRestartingAllContainers, why: "a container removed by an in-place restart of the pod",
			pod: always, name: "a", events: []Event{created, started, {Kind: PodChanged, At: at(3), Pod: PodFacts{RestartingAllContainers: true}}, {Kind: Removed, At: at(4), ContainerID: "c://1"}},
			want: waitingState(ReasonRestartingAllContainers, MessageRestartingAll),
			last: ptr(terminatedState(137, ReasonRestartingAllContainers, MessageRestartingAll))},
		{section: "6", reason: ReasonCompleted, why: "runtime exit 0",
			pod: never, name: "a", events: []Event{created, started, ExitedEvent(at(3), "c://1", 0)},
			want: withID(withTimes(terminatedState(0, ReasonCompleted, ""), at(2), at(3)), "c://1")},
		{section: "6", reason: ReasonCompleted, why: "kubelet-inferred for an init container gone after the pod initialized",
			pod: withInit, name: "i", events: []Event{{Kind: PodChanged, At: at(1), Pod: PodFacts{RegularContainerCreated: true}}},
			want: terminatedState(0, ReasonCompleted, MessageInitInferred)},
		{section: "6", reason: ReasonError, why: "runtime non-zero exit",
			pod: never, name: "a", events: []Event{created, started, ExitedEvent(at(3), "c://1", 2)},
			want: withID(withTimes(terminatedState(2, ReasonError, ""), at(2), at(3)), "c://1")},
		{section: "6", reason: ReasonOOMKilled, why: "runtime OOM kill",
			pod: never, name: "a", events: []Event{created, started, OOMKilledEvent(at(3), "c://1")},
			want: withID(withTimes(terminatedState(137, ReasonOOMKilled, ""), at(2), at(3)), "c://1")},
		{section: "6", reason: ReasonStartError, why: "containerd: the task never started, exit 128 (pod Never, so no restart overlays it)",
			pod: never, name: "a", events: []Event{created, StartErrorEvent(at(2), "c://1", "exec format error"), {Kind: StartFailed, At: at(2), Message: "exec format error"}},
			want: withID(withTimes(terminatedState(128, ReasonStartError, "exec format error"), time.Time{}, at(2)), "c://1")},
		{section: "6", reason: ReasonContainerCannotRun, why: "legacy dockershim reason, passed through",
			pod: never, name: "a", events: []Event{created, {Kind: Exited, At: at(2), ContainerID: "c://1", ExitCode: 127, Reason: ReasonContainerCannotRun}},
			want: withID(withTimes(terminatedState(127, ReasonContainerCannotRun, ""), time.Time{}, at(2)), "c://1")},
		{section: "6", reason: ReasonContainerStatusUnknown, why: "UNKNOWN after Running, grace 0: 137",
			opts: grace0, pod: always, name: "a", events: []Event{created, started, {Kind: Unknown, At: at(3), ContainerID: "c://1"}},
			want: terminatedState(137, ReasonContainerStatusUnknown, MessageUnknownTerminated)},
		{section: "6", reason: ReasonRestartingAllContainers, why: "UNKNOWN after Running while restarting all containers",
			opts: grace0, pod: always, name: "a", events: []Event{created, started, {Kind: PodChanged, At: at(3), Pod: PodFacts{RestartingAllContainers: true}}, {Kind: Unknown, At: at(3), ContainerID: "c://1"}},
			want: terminatedState(137, ReasonRestartingAllContainers, MessageUnknownTerminated)},
		{section: "6", reason: "(empty)", why: "a runtime that gives no reason",
			pod: never, name: "a", events: []Event{{Kind: Exited, At: at(2), ContainerID: "c://1", ExitCode: 9}},
			want: withID(withTimes(terminatedState(9, "", ""), time.Time{}, at(2)), "c://1")},
	}
	for _, tt := range tests {
		opts := tt.opts
		if opts == (Options{}) {
			opts = DefaultOptions()
		}
		m := mustMachine(t, opts, tt.pod, tt.name)
		steps(t, m, tt.events...)
		got := m.Status()
		if d := cmp.Diff(tt.want, got.State); d != "" {
			t.Errorf("section %s %s: %s: state mismatch (-want +got):\n%s", tt.section, tt.reason, tt.why, d)
		}
		if tt.last != nil {
			if d := cmp.Diff(*tt.last, got.LastTerminationState); d != "" {
				t.Errorf("section %s %s: %s: lastState mismatch (-want +got):\n%s", tt.section, tt.reason, tt.why, d)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestMachineRefuses checks every impossible observation: a typed error, and
// the machine exactly as it was.
func TestMachineRefuses(t *testing.T) {
	pod := onePod(v1.RestartPolicyAlways, "a")
	base := []Event{
		{Kind: Created, At: at(1), ContainerID: "c://1"},
		{Kind: Started, At: at(2), ContainerID: "c://1"},
		ExitedEvent(at(3), "c://1", 1),
		{Kind: Created, At: at(4), ContainerID: "c://2"},
		{Kind: Started, At: at(5), ContainerID: "c://2"},
	}
	exitedBase := append(append([]Event(nil), base...), ExitedEvent(at(6), "c://2", 0))
	plainExitBase := append(append([]Event(nil), base...), Event{Kind: Exited, At: at(6), ContainerID: "c://2"})
	tests := []struct {
		reason string
		prefix []Event
		ev     Event
		field  string // the Event field the error names
		want   error
	}{
		{reason: "an event older than one accepted", prefix: base, ev: Event{Kind: PullStarted, At: at(4)}, field: "At", want: ErrTimeWentBackwards},
		{reason: "an event without a time", prefix: base, ev: Event{Kind: PullStarted}, field: "At", want: ErrInvalidEvent},
		{reason: "an undefined event kind", prefix: base, ev: Event{Kind: 200, At: at(9)}, field: "Kind", want: ErrUnknownEvent},
		{reason: "the zero event kind", prefix: base, ev: Event{At: at(9)}, field: "Kind", want: ErrUnknownEvent},
		{reason: "a replaced instance reported running again", prefix: base, ev: Event{Kind: Started, At: at(9), ContainerID: "c://1"}, field: "ContainerID", want: ErrOlderInstance},
		{reason: "a replaced instance reported exited again", prefix: base, ev: ExitedEvent(at(9), "c://1", 1), field: "ContainerID", want: ErrOlderInstance},
		{reason: "an instance never seen removed", prefix: base, ev: Event{Kind: Removed, At: at(9), ContainerID: "c://9"}, field: "ContainerID", want: ErrOlderInstance},
		{reason: "a running instance reported created", prefix: base, ev: Event{Kind: Created, At: at(9), ContainerID: "c://2"}, field: "Kind", want: ErrBackwards},
		{reason: "a terminated instance running again under its ID", prefix: exitedBase, ev: Event{Kind: Started, At: at(9), ContainerID: "c://2"}, field: "ContainerID", want: ErrTerminatedRunning},
		{reason: "a terminated instance created again under its ID", prefix: exitedBase, ev: Event{Kind: Created, At: at(9), ContainerID: "c://2"}, field: "ContainerID", want: ErrTerminatedRunning},
		{reason: "a terminated instance exiting again differently", prefix: exitedBase, ev: ExitedEvent(at(9), "c://2", 3), field: "ContainerID", want: ErrTerminatedRunning},
		{reason: "a terminated instance exiting again with the same code and reason but another message", prefix: exitedBase,
			ev: Event{Kind: Exited, At: at(9), ContainerID: "c://2", ExitCode: 0, Reason: ReasonCompleted, Message: "written late"}, field: "ContainerID", want: ErrTerminatedRunning},
		{reason: "a terminated instance with no reason nor message running again under its ID", prefix: plainExitBase,
			ev: Event{Kind: Started, At: at(9), ContainerID: "c://2"}, field: "ContainerID", want: ErrTerminatedRunning},
		{reason: "a terminated instance reported UNKNOWN", prefix: exitedBase, ev: Event{Kind: Unknown, At: at(9), ContainerID: "c://2"}, field: "ContainerID", want: ErrTerminatedRunning},
		{reason: "a runtime event without a container ID", prefix: base, ev: Event{Kind: Started, At: at(9)}, field: "ContainerID", want: ErrNoContainerID},
		{reason: "a removal without a container ID", prefix: base, ev: Event{Kind: Removed, At: at(9)}, field: "ContainerID", want: ErrNoContainerID},
		{reason: "a failure reason of another kind", prefix: base, ev: Event{Kind: PullFailed, At: at(9), Reason: ReasonCrashLoopBackOff}, field: "Reason", want: ErrInvalidEvent},
		{reason: "an undefined probe result", prefix: base, ev: Event{Kind: ReadinessProbe, At: at(9), Result: 7}, field: "Result", want: ErrInvalidEvent},
		{reason: "a probe result before any instance", ev: Event{Kind: StartupProbe, At: at(9), Result: ProbeSuccess}, field: "", want: ErrInvalidEvent},
		{reason: "a probe result for a replaced instance", prefix: base, ev: Event{Kind: ReadinessProbe, At: at(9), ContainerID: "c://1", Result: ProbeSuccess}, field: "ContainerID", want: ErrOlderInstance},
	}
	for _, tt := range tests {
		m := mustMachine(t, DefaultOptions(), pod, "a")
		steps(t, m, tt.prefix...)
		before := *m
		err := m.Step(tt.ev)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: Step error %v, want %v", tt.reason, err, tt.want)
			continue
		}
		var se *StepError
		if !errors.As(err, &se) || se.Container != "a" {
			t.Errorf("%s: want a *StepError naming the container, got %T", tt.reason, err)
		} else if se.Field != tt.field || se.Detail == "" {
			t.Errorf("%s: StepError field %q detail %q, want field %q and a detail", tt.reason, se.Field, se.Detail, tt.field)
		}
		if tt.want != ErrTimeWentBackwards && !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: error %v does not match ErrInvalidInput", tt.reason, err)
		}
		if d := cmp.Diff(before.Status(), m.Status()); d != "" || m.last != before.last || m.newest != before.newest || m.prev != before.prev {
			t.Errorf("%s: the machine changed on a refused event (-before +after):\n%s", tt.reason, d)
		}
	}
}

func TestMachineAcceptsRelists(t *testing.T) {
	pod := onePod(v1.RestartPolicyNever, "a")
	m := mustMachine(t, DefaultOptions(), pod, "a")
	// A relisting runtime can skip states and repeat itself.
	steps(t, m,
		ExitedEvent(at(1), "c://1", 0), // first seen exited
		ExitedEvent(at(2), "c://1", 0), // the same exit again
		Event{Kind: Removed, At: at(3), ContainerID: "c://1"},
	)
	s := m.Status()
	if s.State.Terminated == nil || s.State.Terminated.Reason != ReasonCompleted || s.RestartCount != 0 {
		t.Fatalf("a removed completed container keeps its Terminated state: got %+v", s)
	}
	// Equal times are in order.
	if err := m.Step(Event{Kind: PullStarted, At: at(3)}); err != nil {
		t.Fatalf("an event at the same time as the last: %v", err)
	}
}

// TestMachineLostExit checks the rule for a new instance while the previous
// one was still running in the machine's view.
func TestMachineLostExit(t *testing.T) {
	m := mustMachine(t, DefaultOptions(), onePod(v1.RestartPolicyAlways, "a"), "a")
	steps(t, m, Event{Kind: Started, At: at(1), ContainerID: "c://1"}, Event{Kind: Started, At: at(5), ContainerID: "c://2"})
	s := m.Status()
	want := withID(withTimes(terminatedState(137, ReasonContainerStatusUnknown, MessageUnknownTerminated), at(1), at(5)), "c://1")
	if d := cmp.Diff(want, s.LastTerminationState); d != "" {
		t.Errorf("lastState mismatch (-want +got):\n%s", d)
	}
	if s.RestartCount != 1 || s.State.Running == nil {
		t.Errorf("want Running with restartCount 1, got %+v", s)
	}
}

// TestMachineUnknownGrace checks nodestate's UNKNOWN grace, timed from the
// first UNKNOWN report.
func TestMachineUnknownGrace(t *testing.T) {
	m := mustMachine(t, DefaultOptions(), onePod(v1.RestartPolicyAlways, "a"), "a")
	steps(t, m, Event{Kind: Started, At: at(0), ContainerID: "c://1"})
	if !m.Ready() {
		t.Fatal("a running container without probes is ready")
	}
	for _, sec := range []int{10, 60, 129} {
		steps(t, m, Event{Kind: Unknown, At: at(sec), ContainerID: "c://1"})
		if m.State() != Running || m.Ready() || m.RestartCount() != 0 {
			t.Fatalf("at %ds (UNKNOWN since 10s): want Running, not ready, restartCount 0; got %v ready=%v rc=%d", sec, m.State(), m.Ready(), m.RestartCount())
		}
	}
	steps(t, m, Event{Kind: Unknown, At: at(130), ContainerID: "c://1"})
	s := m.Status()
	if d := cmp.Diff(terminatedState(137, ReasonContainerStatusUnknown, MessageUnknownTerminated), s.State); d != "" || s.RestartCount != 1 {
		t.Fatalf("after the grace: restartCount %d, state mismatch (-want +got):\n%s", s.RestartCount, d)
	}

	// The runtime comes back within the grace: the container is ready again.
	m = mustMachine(t, DefaultOptions(), onePod(v1.RestartPolicyAlways, "a"), "a")
	steps(t, m, Event{Kind: Started, At: at(0), ContainerID: "c://1"}, Event{Kind: Unknown, At: at(10), ContainerID: "c://1"}, Event{Kind: Started, At: at(20), ContainerID: "c://1"})
	if m.State() != Running || !m.Ready() || m.Status().State.Running.StartedAt.Time != at(0) {
		t.Fatalf("a runtime back within the grace: want Running since 0s and ready, got %+v", m.Status())
	}
}

func TestNewMachineBadInput(t *testing.T) {
	if _, err := NewMachine(DefaultOptions(), Pod{}, "a"); !errors.Is(err, ErrNilPodSpec) {
		t.Errorf("nil spec: %v", err)
	}
	if _, err := NewMachine(DefaultOptions(), onePod(v1.RestartPolicyAlways, "a"), "b"); !errors.Is(err, ErrNotInSpec) {
		t.Errorf("a container the spec lacks: %v", err)
	}
	if _, err := NewMachine(Options{UnknownGrace: -1}, onePod(v1.RestartPolicyAlways, "a"), "a"); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("negative grace: %v", err)
	}
}

// TestMachineOwnsItsSpec checks that changing the caller's spec afterwards
// changes nothing.
func TestMachineOwnsItsSpec(t *testing.T) {
	pod := onePod(v1.RestartPolicyNever, "a")
	m := mustMachine(t, DefaultOptions(), pod, "a")
	pod.Spec.RestartPolicy = v1.RestartPolicyAlways
	pod.Spec.Containers[0].Image = "other"
	steps(t, m, ExitedEvent(at(1), "c://1", 1), BackOffEvent(at(2), time.Second, "a", "web", "default", "uid-1"))
	if m.State() != Terminated || m.Status().Image != "img-a" {
		t.Fatalf("the machine must keep the spec it was built with: %+v", m.Status())
	}
}

// TestStepErrorMessage checks that a refused event's message names the
// package once, the container, the event, the field at fault and its value.
func TestStepErrorMessage(t *testing.T) {
	tests := []struct {
		reason string
		prefix []Event
		ev     Event
		want   string
	}{
		{
			reason: "time going backwards names the last accepted time",
			prefix: []Event{{Kind: Started, At: at(5), ContainerID: "c://1"}},
			ev:     Event{Kind: Started, At: at(1), ContainerID: "c://1"},
			want:   `containerstate: time went backwards: container "a": Started of c://1 at 2026-11-29T12:00:01Z: At: before the last accepted event at 2026-11-29T12:00:05Z`,
		},
		{
			reason: "a wrong failure reason names the Reason field and the allowed reasons (issue 11)",
			ev:     Event{Kind: PullFailed, At: at(1), Reason: ReasonCrashLoopBackOff},
			want:   `containerstate: invalid event: container "a": PullFailed at 2026-11-29T12:00:01Z: Reason: "CrashLoopBackOff" is not a reason of PullFailed (ErrImagePull, InvalidImageName, ErrImageNeverPull, ImageInspectError, RegistryUnavailable, SignatureValidationFailed)`,
		},
		{
			reason: "a missing time names the At field",
			ev:     Event{Kind: PullStarted},
			want:   `containerstate: invalid event: container "a": PullStarted at 0001-01-01T00:00:00Z: At: zero time`,
		},
		{
			reason: "an undefined event kind is printed with its number",
			ev:     Event{Kind: 99, At: at(1)},
			want:   `containerstate: unknown event kind: container "a": EventKind(99) at 2026-11-29T12:00:01Z: Kind: undefined kind 99`,
		},
		{
			reason: "a probe result with no instance to probe names no field, only what is wrong",
			ev:     Event{Kind: ReadinessProbe, At: at(1), Result: ProbeSuccess},
			want:   `containerstate: invalid event: container "a": ReadinessProbe at 2026-11-29T12:00:01Z: no container instance to probe`,
		},
		{
			reason: "an instance after an exit that allows no restart names the policy",
			prefix: []Event{ExitedEvent(at(1), "c://1", 1)},
			ev:     Event{Kind: Started, At: at(2), ContainerID: "c://2"},
			want:   `containerstate: new instance of a container whose exit allows no restart: container "a": Started of c://2 at 2026-11-29T12:00:02Z: ContainerID: the last instance exited with 1, which restartPolicy Never does not restart`,
		},
	}
	for _, tt := range tests {
		m := mustMachine(t, DefaultOptions(), onePod(v1.RestartPolicyNever, "a"), "a")
		steps(t, m, tt.prefix...)
		err := m.Step(tt.ev)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\nerror %q\nwant  %q", tt.reason, err, tt.want)
		}
		if got := fmt.Sprint(err); strings.Count(got, "containerstate:") != 1 {
			t.Errorf("%s: the package is named %d times in %q", tt.reason, strings.Count(got, "containerstate:"), got)
		}
	}
}

// TestEventKinds checks that EventKinds lists every defined kind once, in
// order and by its name, in a slice of exactly that size, and that a value
// outside the defined kinds prints as its number instead of being indexed.
func TestEventKinds(t *testing.T) {
	kinds := EventKinds()
	if len(kinds) != int(lastKind) || cap(kinds) != len(kinds) {
		t.Errorf("EventKinds: %d kinds in a slice of capacity %d, want exactly the %d defined kinds", len(kinds), cap(kinds), lastKind)
	}
	for i, k := range kinds {
		if k != EventKind(i+1) || k.String() == "" || strings.HasPrefix(k.String(), "EventKind(") {
			t.Errorf("EventKinds()[%d] = %d %q, want defined kind %d by its name", i, k, k.String(), i+1)
		}
	}
	for _, k := range []EventKind{0, lastKind + 1, 255} {
		if got, want := k.String(), fmt.Sprintf("EventKind(%d)", k); got != want {
			t.Errorf("undefined kind %d prints as %q, want %q", k, got, want)
		}
	}
}

// TestEventString checks the one-line rendering of events used in traces:
// the time, the kind, then only the fields the event has.
func TestEventString(t *testing.T) {
	tests := []struct {
		reason string
		ev     Event
		want   string
	}{
		{reason: "an exit shows its instance, code, reason and quoted message",
			ev:   Event{Kind: Exited, At: at(1), ContainerID: "c://1", ExitCode: 1, Reason: ReasonError, Message: "boom"},
			want: `12:00:01.000 Exited c://1 exit=1 Error "boom"`},
		{reason: "a tick has nothing but its time",
			ev: Event{Kind: Tick, At: at(2)}, want: `12:00:02.000 Tick`},
		{reason: "a back-off has no instance, only its reason and message",
			ev:   BackOffEvent(at(3), 10*time.Second, "a", "web", "default", "uid-1"),
			want: `12:00:03.000 BackOff CrashLoopBackOff "back-off 10s restarting failed container=a pod=web_default(uid-1)"`},
	}
	for _, tt := range tests {
		if got := tt.ev.String(); got != tt.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.reason, got, tt.want)
		}
	}
}

// TestMachineImage checks where a new instance's image and imageID come
// from (section 4.3: the runtime's): the event that reports the instance
// when it names them, else the spec's image and the imageID of the last
// successful pull.
func TestMachineImage(t *testing.T) {
	tests := []struct {
		reason       string
		events       []Event
		image, imgID string
	}{
		{reason: "the runtime's image and imageID on the event win over the spec's image and the pull's imageID",
			events: []Event{{Kind: PullSucceeded, At: at(1), ImageID: "sha256:pulled"},
				{Kind: Created, At: at(2), ContainerID: "c://1", Image: "docker.io/library/img-a:1", ImageID: "sha256:runtime"}},
			image: "docker.io/library/img-a:1", imgID: "sha256:runtime"},
		{reason: "an event without them: the spec's image and the imageID of the last successful pull",
			events: []Event{{Kind: PullSucceeded, At: at(1), ImageID: "sha256:pulled"}, {Kind: Created, At: at(2), ContainerID: "c://1"}},
			image:  "img-a", imgID: "sha256:pulled"},
	}
	for _, tt := range tests {
		m := mustMachine(t, DefaultOptions(), onePod(v1.RestartPolicyAlways, "a"), "a")
		steps(t, m, tt.events...)
		if s := m.Status(); s.Image != tt.image || s.ImageID != tt.imgID {
			t.Errorf("%s: image %q imageID %q, want %q %q", tt.reason, s.Image, s.ImageID, tt.image, tt.imgID)
		}
	}
}
