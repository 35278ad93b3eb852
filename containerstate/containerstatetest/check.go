package containerstatetest

import (
	"errors"
	"fmt"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

// Checker holds what the invariants need to remember between steps: the
// previous status. Make one per container with [NewChecker] and call
// [Checker.Step] after every event.
type Checker struct {
	target   TargetContainer
	features containerstate.Features
	prev     v1.ContainerStatus
	prevKind containerstate.State
	has      bool
	steps    int
}

// NewChecker returns a checker for the target container under the given
// feature gates.
func NewChecker(target TargetContainer, features containerstate.Features) *Checker {
	return &Checker{target: target, features: features}
}

// ErrInvariant is matched by every [*InvariantError].
var ErrInvariant = errors.New("containerstatetest: invariant broken")

// ErrNotInitialized is returned by the methods of a nil *Checker; make one
// with [NewChecker]. The zero Checker is usable: it checks a container of an
// empty pod.
var ErrNotInitialized = errors.New("containerstatetest: nil Checker; use NewChecker")

// InvariantError reports a broken invariant.
type InvariantError struct {
	// Invariant names the rule, for example "restartCount never decreases".
	Invariant string
	// Step is the number of the step, from 1.
	Step int
	// Event is the event that led to the status; the zero Event if none.
	Event containerstate.Event
	// Prev and Status are the statuses before and after.
	Prev, Status v1.ContainerStatus
}

// Error names the invariant, the step and the two statuses.
func (e *InvariantError) Error() string {
	if e == nil {
		return ErrInvariant.Error()
	}
	return fmt.Sprintf("%v: %q at step %d (%v): %s -> %s",
		ErrInvariant, e.Invariant, e.Step, e.Event, describe(e.Prev), describe(e.Status))
}

// Unwrap returns ErrInvariant.
func (e *InvariantError) Unwrap() error { return ErrInvariant }

func describe(s v1.ContainerStatus) string {
	st := s.State
	out := containerstate.StateOf(st).String()
	switch {
	case st.Waiting != nil:
		out += "(" + st.Waiting.Reason + ")"
	case st.Terminated != nil:
		out += fmt.Sprintf("(%s, %d)", st.Terminated.Reason, st.Terminated.ExitCode)
	}
	started := "nil"
	if s.Started != nil {
		started = fmt.Sprint(*s.Started)
	}
	return fmt.Sprintf("%s rc=%d ready=%t started=%s", out, s.RestartCount, s.Ready, started)
}

// Step checks status, the container's status after ev, against the
// invariants and the previous status:
//
//   - exactly one of waiting, running and terminated is set;
//   - restartCount never decreases;
//   - a Terminated container goes back to a non-terminated state only when a
//     restart is allowed (containerstate's ShouldRestart for its exit code,
//     or a RestartAllContainers rule with that gate on) and never for an
//     ephemeral container;
//   - started implies Running;
//   - a Running container that is ready has started; only a regular init
//     container that exited 0 is ready without Running;
//   - lastState is empty or Terminated;
//   - reason ContainerStatusUnknown always comes with exit code 137;
//   - the move is in containerstate.Transitions, when ev is not the zero
//     event;
//   - volumeMounts are none or the spec's mounts, by name, path and
//     readOnly, in the spec's order;
//   - allocatedResources are none or the spec's requests, and with
//     InPlacePodVerticalScaling a status with a containerID (built from a
//     runtime instance) has them;
//   - a status that is not Running has no resources or the spec's
//     resources (the allocated ones);
//   - an imageID comes with a containerID.
//
// On a nil *Checker it returns ErrNotInitialized.
func (c *Checker) Step(ev containerstate.Event, status v1.ContainerStatus) error {
	if c == nil {
		return ErrNotInitialized
	}
	c.steps++
	fail := func(name string) error {
		return &InvariantError{Invariant: name, Step: c.steps, Event: ev, Prev: c.prev, Status: status}
	}
	st := status.State
	set := 0
	for _, b := range []bool{st.Waiting != nil, st.Running != nil, st.Terminated != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return fail("exactly one state is set")
	}
	kind := containerstate.StateOf(st)
	if c.has {
		if status.RestartCount < c.prev.RestartCount {
			return fail("restartCount never decreases")
		}
		if c.prevKind == containerstate.Terminated && kind != containerstate.Terminated && !c.mayLeaveTerminated(c.prev.State.Terminated.ExitCode) {
			return fail("Terminated goes back only when a restart is allowed")
		}
		if ev.Kind != 0 && !containerstate.Allowed(c.prevKind, ev.Kind, kind) {
			return fail("the move is in the transition table")
		}
	}
	started := status.Started != nil && *status.Started
	if started && kind != containerstate.Running {
		return fail("started implies Running")
	}
	if status.Ready {
		initDone := c.target.Kind == containerstate.Init && !containerstate.IsSidecar(&c.target.Container) &&
			kind == containerstate.Terminated && st.Terminated.ExitCode == 0
		if !initDone && (kind != containerstate.Running || !started) {
			return fail("a ready container is Running and started (or an init container that exited 0)")
		}
	}
	last := status.LastTerminationState
	if last.Waiting != nil || last.Running != nil {
		return fail("lastState is empty or Terminated")
	}
	for _, t := range []*v1.ContainerStateTerminated{st.Terminated, last.Terminated} {
		if t != nil && t.Reason == containerstate.ReasonContainerStatusUnknown && t.ExitCode != containerstate.ExitCodeUnknown {
			return fail("ContainerStatusUnknown has exit code 137")
		}
	}
	if name := c.fieldInvariant(&status, kind); name != "" {
		return fail(name)
	}
	c.prev, c.prevKind, c.has = status, kind, true
	return nil
}

// fieldInvariant returns the name of the first invariant on the fields from
// the spec, the allocation and the runtime that status breaks, or "".
func (c *Checker) fieldInvariant(status *v1.ContainerStatus, kind containerstate.State) string {
	spec := &c.target.Container
	if status.VolumeMounts != nil {
		if len(status.VolumeMounts) != len(spec.VolumeMounts) {
			return "volumeMounts follow the spec"
		}
		for i, m := range status.VolumeMounts {
			if s := spec.VolumeMounts[i]; m.Name != s.Name || m.MountPath != s.MountPath || m.ReadOnly != s.ReadOnly || (m.RecursiveReadOnly != nil) != s.ReadOnly {
				return "volumeMounts follow the spec"
			}
		}
	}
	requests := spec.Resources.Requests
	if status.AllocatedResources != nil && !sameList(status.AllocatedResources, requests) ||
		c.features.InPlacePodVerticalScaling && status.ContainerID != "" && !sameList(status.AllocatedResources, requests) {
		return "allocatedResources are the spec's requests"
	}
	if r := status.Resources; kind != containerstate.Running && r != nil && (!sameList(r.Requests, requests) || !sameList(r.Limits, spec.Resources.Limits)) {
		return "a status that is not Running shows the allocated resources"
	}
	if status.ImageID != "" && status.ContainerID == "" {
		return "an imageID comes with a containerID"
	}
	return ""
}

// sameList compares resource lists by value; nil equals empty.
func sameList(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if r, ok := b[name]; !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

func (c *Checker) mayLeaveTerminated(exit int32) bool {
	switch {
	case c.target.Kind == containerstate.Ephemeral:
		return false
	case c.features.RestartAllContainersOnContainerExits && containerstate.AnyRestartAllRule(c.target.Pod.Spec):
		return true
	}
	return c.features.ShouldRestart(c.target.Pod.Spec, &c.target.Container, exit)
}
