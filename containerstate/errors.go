package containerstate

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Every error this package returns wraps one of them, so
// callers can branch with errors.Is.
var (
	// ErrNilPodSpec is returned for a Pod without a spec.
	ErrNilPodSpec = errors.New("containerstate: nil pod spec")
	// ErrNotInSpec is returned for a container name the pod spec lacks.
	ErrNotInSpec = errors.New("containerstate: container not in pod spec")
	// ErrNoContainerID is returned for a runtime instance or event without a
	// container ID.
	ErrNoContainerID = errors.New("containerstate: missing container ID")
	// ErrRuntimeState is returned for an undefined RuntimeState.
	ErrRuntimeState = errors.New("containerstate: undefined runtime state")
	// ErrSpecMismatch is returned when init container statuses are not in
	// the order of the spec's init containers.
	ErrSpecMismatch = errors.New("containerstate: found mismatch between pod spec and status")
	// ErrInvalidOption is returned for an option out of range.
	ErrInvalidOption = errors.New("containerstate: invalid option")

	// ErrUnknownEvent is returned by Step for an undefined event kind.
	ErrUnknownEvent = errors.New("containerstate: unknown event kind")
	// ErrInvalidEvent is returned by Step for an event whose fields do not
	// fit its kind, for example a failure reason of another kind.
	ErrInvalidEvent = errors.New("containerstate: invalid event")
	// ErrStale is returned by Step for an event older than one already
	// accepted.
	ErrStale = errors.New("containerstate: event older than the last accepted")
	// ErrOlderInstance is returned by Step for an event about an instance
	// that a newer instance has replaced, or one the machine never saw.
	ErrOlderInstance = errors.New("containerstate: event for a replaced or unknown container instance")
	// ErrBackwards is returned by Step when an instance is reported created
	// after it was seen running or unknown.
	ErrBackwards = errors.New("containerstate: container instance reported in an earlier state")
	// ErrTerminatedRunning is returned by Step when an instance that exited
	// is reported created, running or exited differently under the same ID.
	ErrTerminatedRunning = errors.New("containerstate: terminated container reported again under the same ID")

	// ErrTransition is returned by the transition checks for a container
	// that may not leave Terminated.
	ErrTransition = errors.New("containerstate: terminated container may not be transitioned to non-terminated state")
)

// InputError reports bad input about one container.
type InputError struct {
	// Container is the container's name.
	Container string
	// Err is one of the sentinel errors.
	Err error
}

// Error describes the bad input.
func (e *InputError) Error() string {
	return fmt.Sprintf("%v: container %q", e.Err, e.Container)
}

// Unwrap returns the sentinel error.
func (e *InputError) Unwrap() error { return e.Err }

// OptionError reports an option out of range.
type OptionError struct {
	// Field is the option's name.
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error names the option and what is wrong with it.
func (e *OptionError) Error() string {
	return fmt.Sprintf("containerstate: invalid option %s: %s", e.Field, e.Reason)
}

// Unwrap returns ErrInvalidOption.
func (e *OptionError) Unwrap() error { return ErrInvalidOption }

// StepError reports an event the machine refused. The machine is unchanged.
type StepError struct {
	// Container is the machine's container name.
	Container string
	// Event is the refused event.
	Event Event
	// Last is the time of the last accepted event.
	Last time.Time
	// Err is one of the sentinel errors.
	Err error
}

// Error names the container, the refused event and why.
func (e *StepError) Error() string {
	msg := fmt.Sprintf("%v: container %q: %s", e.Err, e.Container, e.Event.Kind)
	if e.Event.ContainerID != "" {
		msg += fmt.Sprintf(" of %s", e.Event.ContainerID)
	}
	msg += " at " + e.Event.At.UTC().Format(time.RFC3339Nano)
	if errors.Is(e.Err, ErrStale) {
		msg += ", last accepted at " + e.Last.UTC().Format(time.RFC3339Nano)
	}
	return msg
}

// Unwrap returns the sentinel error.
func (e *StepError) Unwrap() error { return e.Err }

// TransitionError reports a container status that may not leave Terminated.
type TransitionError struct {
	// Container is the container's name.
	Container string
	// Kind is the list the container is in.
	Kind Kind
	// ExitCode is the old terminated state's exit code.
	ExitCode int32
}

// Error names the container that may not leave Terminated.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("%v: %s %q (exit code %d)", ErrTransition, e.Kind, e.Container, e.ExitCode)
}

// Unwrap returns ErrTransition.
func (e *TransitionError) Unwrap() error { return ErrTransition }
