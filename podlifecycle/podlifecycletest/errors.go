package podlifecycletest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nodestate/nodestate/internal/errs"
)

// The package's sentinel errors. Every error it returns wraps one of them.
var (
	// ErrInvalidInput is returned by Run for a nil pod. Behaviours for a
	// container the pod does not have are refused by simruntime (its
	// ErrInvalidInput).
	ErrInvalidInput = errors.New("podlifecycletest: invalid input")
	// ErrInvalidOptions is returned by Run for options out of range.
	ErrInvalidOptions = errors.New("podlifecycletest: invalid options")
	// ErrNoProgress is returned by Run when the machine asks for a sync at
	// the same instant again and again with nothing happening (a livelock
	// of the machine under test).
	ErrNoProgress = errors.New("podlifecycletest: no progress")
	// ErrStep is returned by Run when the machine refused a Step: the
	// simulated runtime handed it something it did not accept.
	ErrStep = errors.New("podlifecycletest: step refused")
	// ErrViolation is returned by the invariant checks.
	ErrViolation = errors.New("podlifecycletest: invariant violated")
)

// strip gives err's text without the package prefix; a nil err (a zero
// error value) reads as "unknown error" rather than panicking.
func strip(err error) string {
	if err == nil {
		return "unknown error"
	}
	return strings.TrimPrefix(err.Error(), "podlifecycletest: ")
}

// InputError reports a pod Run refused. It unwraps to ErrInvalidInput.
type InputError struct {
	// Container is the container concerned, if any.
	Container string
	// Reason says what is wrong.
	Reason string
}

// Error names the container and what is wrong.
func (e *InputError) Error() string {
	if e.Container != "" {
		return fmt.Sprintf("podlifecycletest: invalid input: container %q: %s", e.Container, e.Reason)
	}
	return "podlifecycletest: invalid input: " + e.Reason
}

// Unwrap returns ErrInvalidInput.
func (e *InputError) Unwrap() error { return ErrInvalidInput }

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "podlifecycletest" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }

// RunError reports why Run stopped early: the machine refused a Step (Err
// wraps the machine's error and ErrStep) or made no progress
// (ErrNoProgress). The trace up to that step is returned with it.
type RunError struct {
	// Step is the index of the step in the trace; At its offset from the
	// start of the run.
	Step int
	At   time.Duration
	// Err is the cause.
	Err error
}

// Error names the step and the cause.
func (e *RunError) Error() string {
	return fmt.Sprintf("podlifecycletest: step %d (+%v): %s", e.Step, e.At, strip(e.Err))
}

// Unwrap returns the cause.
func (e *RunError) Unwrap() error { return e.Err }

// Violation is an invariant a trace breaks. It unwraps to ErrViolation.
type Violation struct {
	// Check is the name of the invariant (see [Checks]).
	Check string
	// Step is the index of the step in the trace where the violation is
	// seen, and At its offset from the start of the run.
	Step int
	At   time.Duration
	// Detail says what happened.
	Detail string
}

// Error names the invariant, the step and what happened.
func (e *Violation) Error() string {
	return fmt.Sprintf("podlifecycletest: invariant %s violated at step %d (+%v): %s", e.Check, e.Step, e.At, e.Detail)
}

// Unwrap returns ErrViolation.
func (e *Violation) Unwrap() error { return ErrViolation }
