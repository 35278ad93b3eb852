package containerstate

import (
	"fmt"
	"strings"
	"time"

	"github.com/nodestate/nodestate/internal/errs"
	"github.com/nodestate/nodestate/kubeversion"
)

// The package's sentinel errors. Every error this package returns wraps one
// of them, so callers can branch with errors.Is. The four general ones
// (ErrInvalidOptions, ErrInvalidInput, ErrTimeWentBackwards,
// ErrNotInitialized) carry the same names in every nodestate package; the
// specific ones below them each match one general one too.
var (
	// ErrInvalidOptions is returned for options out of range.
	ErrInvalidOptions error = &sentinel{msg: "containerstate: invalid options"}
	// ErrInvalidInput is matched by every error about an argument that is
	// nil, malformed or inconsistent with what came before: a nil pod
	// spec, a container the spec lacks, an impossible event.
	ErrInvalidInput error = &sentinel{msg: "containerstate: invalid input"}
	// ErrTimeWentBackwards is returned by Step for an event older than one
	// already accepted.
	ErrTimeWentBackwards error = &sentinel{msg: "containerstate: time went backwards"}
	// ErrNotInitialized is returned by the methods of a zero Machine, which
	// only [NewMachine] makes usable.
	ErrNotInitialized error = &sentinel{msg: "containerstate: machine not initialized; use NewMachine"}

	// ErrNilPodSpec is returned for a Pod without a spec. It matches
	// ErrInvalidInput.
	ErrNilPodSpec error = &sentinel{msg: "containerstate: nil pod spec", parent: ErrInvalidInput}
	// ErrNilStatus is returned by ConvertTo for a nil destination. It
	// matches ErrInvalidInput.
	ErrNilStatus error = &sentinel{msg: "containerstate: nil destination status", parent: ErrInvalidInput}
	// ErrNotInSpec is returned for a container name the pod spec lacks. It
	// matches ErrInvalidInput.
	ErrNotInSpec error = &sentinel{msg: "containerstate: container not in pod spec", parent: ErrInvalidInput}
	// ErrNoContainerID is returned for a runtime instance or event without a
	// container ID. It matches ErrInvalidInput.
	ErrNoContainerID error = &sentinel{msg: "containerstate: missing container ID", parent: ErrInvalidInput}
	// ErrRuntimeState is returned for an undefined RuntimeState. It matches
	// ErrInvalidInput.
	ErrRuntimeState error = &sentinel{msg: "containerstate: undefined runtime state", parent: ErrInvalidInput}
	// ErrSpecMismatch is returned when init container statuses are not in
	// the order of the spec's init containers. It matches ErrInvalidInput.
	ErrSpecMismatch error = &sentinel{msg: "containerstate: found mismatch between pod spec and status", parent: ErrInvalidInput}

	// ErrUnknownEvent is returned by Step for an undefined event kind. It
	// matches ErrInvalidInput.
	ErrUnknownEvent error = &sentinel{msg: "containerstate: unknown event kind", parent: ErrInvalidInput}
	// ErrInvalidEvent is returned by Step for an event whose fields do not
	// fit its kind, for example a failure reason of another kind. It
	// matches ErrInvalidInput.
	ErrInvalidEvent error = &sentinel{msg: "containerstate: invalid event", parent: ErrInvalidInput}
	// ErrOlderInstance is returned by Step for an event about an instance
	// that a newer instance has replaced, or one the machine never saw. It
	// matches ErrInvalidInput.
	ErrOlderInstance error = &sentinel{msg: "containerstate: event for a replaced or unknown container instance", parent: ErrInvalidInput}
	// ErrBackwards is returned by Step when an instance is reported created
	// after it was seen running or unknown. It matches ErrInvalidInput.
	ErrBackwards error = &sentinel{msg: "containerstate: container instance reported in an earlier state", parent: ErrInvalidInput}
	// ErrTerminatedRunning is returned by Step when an instance that exited
	// is reported created, running or exited differently under the same ID.
	// It matches ErrInvalidInput.
	ErrTerminatedRunning error = &sentinel{msg: "containerstate: terminated container reported again under the same ID", parent: ErrInvalidInput}
	// ErrNotRestartable is returned by Step for a new instance of a
	// container whose observed exit allows no restart (restartPolicy Never,
	// OnFailure after exit 0, an ephemeral container): the kubelet never
	// starts one. It matches ErrInvalidInput.
	ErrNotRestartable error = &sentinel{msg: "containerstate: new instance of a container whose exit allows no restart", parent: ErrInvalidInput}

	// ErrTransition is returned by the transition checks for a container
	// that may not leave Terminated.
	ErrTransition error = &sentinel{msg: "containerstate: terminated container may not be transitioned to non-terminated state"}
)

// sentinel is a sentinel error that may belong to a more general one.
type sentinel struct {
	msg    string
	parent error
}

func (s *sentinel) Error() string { return s.msg }
func (s *sentinel) Unwrap() error { return s.parent }

// orInput returns err, or ErrInvalidInput for a nil one, so that a typed
// error built without a sentinel still unwraps to one.
func orInput(err error) error {
	if err == nil {
		return ErrInvalidInput
	}
	return err
}

// InputError reports bad input about one container.
type InputError struct {
	// Container is the container's name.
	Container string
	// Err is one of the sentinel errors; nil counts as ErrInvalidInput.
	Err error
}

// Error describes the bad input.
func (e *InputError) Error() string {
	if e == nil {
		return ErrInvalidInput.Error()
	}
	return fmt.Sprintf("%v: container %q", orInput(e.Err), e.Container)
}

// Unwrap returns the sentinel error.
func (e *InputError) Unwrap() error {
	if e == nil {
		return ErrInvalidInput
	}
	return orInput(e.Err)
}

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "containerstate" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }

// versionError returns nil for a valid v and otherwise the *OptionError of
// field Version, wrapping the *kubeversion.ValueError.
func versionError(v kubeversion.Version) error {
	err := v.Validate()
	if err == nil {
		return nil
	}
	return &OptionError{Field: "Version", Reason: strings.TrimPrefix(err.Error(), "kubeversion: "), Err: err}
}

// StepError reports an event the machine refused. The machine is unchanged.
type StepError struct {
	// Container is the machine's container name.
	Container string
	// Event is the refused event.
	Event Event
	// Last is the time of the last accepted event.
	Last time.Time
	// Field names the field of Event that was wrong, such as "Reason",
	// "At" or "ContainerID"; it is empty when the event as a whole does not
	// fit (or the machine is not initialized).
	Field string
	// Detail says what was wrong with it, with the value.
	Detail string
	// Err is one of the sentinel errors; nil counts as ErrInvalidInput.
	Err error
}

// Error names the container, the refused event, the field and why:
//
//	containerstate: invalid event: container "app": PullFailed at 2026-01-01T00:00:00Z: Reason: "Bogus" is not a reason of PullFailed (ErrImagePull, ...)
func (e *StepError) Error() string {
	if e == nil {
		return ErrInvalidInput.Error()
	}
	msg := fmt.Sprintf("%v: container %q: %s", orInput(e.Err), e.Container, e.Event.Kind)
	if e.Event.ContainerID != "" {
		msg += fmt.Sprintf(" of %s", e.Event.ContainerID)
	}
	msg += " at " + e.Event.At.UTC().Format(time.RFC3339Nano)
	switch {
	case e.Field != "" && e.Detail != "":
		msg += ": " + e.Field + ": " + e.Detail
	case e.Detail != "":
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the sentinel error.
func (e *StepError) Unwrap() error {
	if e == nil {
		return ErrInvalidInput
	}
	return orInput(e.Err)
}

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
	if e == nil {
		return ErrTransition.Error()
	}
	return fmt.Sprintf("%v: %s %q (exit code %d)", ErrTransition, e.Kind, e.Container, e.ExitCode)
}

// Unwrap returns ErrTransition.
func (e *TransitionError) Unwrap() error { return ErrTransition }
