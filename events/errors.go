package events

import (
	"errors"
	"fmt"

	"github.com/nodestate/nodestate/internal/errs"
)

// The package's sentinels (docs/conventions.md section 3). Every typed error of the package
// unwraps to one of them.
var (
	// ErrInvalidOptions is matched by the errors of a constructor that refused its options
	// (an *OptionError).
	ErrInvalidOptions = errors.New("events: invalid options")
	// ErrInvalidInput is matched by the errors of a call given a nil, malformed or refused
	// argument (an *InvalidEventError).
	ErrInvalidInput = errors.New("events: invalid input")
	// ErrNotInitialized is returned by the methods of a zero value that needs a constructor.
	ErrNotInitialized = errors.New("events: not initialized (use the constructor)")
)

// ErrNilEvent is returned when a nil event is given to the correlator; it matches
// ErrInvalidInput.
var ErrNilEvent error = &InvalidEventError{Field: "event", Value: "<nil>", Detail: "must not be nil"}

// ErrShutdown is returned when an event is recorded after the broadcaster was shut down.
var ErrShutdown = errors.New("events: broadcaster is shut down")

// ErrQueueFull is returned when a sink's queue is full and the event was dropped for it.
var ErrQueueFull = errors.New("events: queue full, event dropped")

// ErrNotRetryable marks a sink error that must not be retried. A sink wraps an error with it
// (fmt.Errorf("%w: %w", events.ErrNotRetryable, err)) when the request could not even be built,
// as client-go does for a rest.RequestConstructionError.
var ErrNotRetryable = errors.New("events: not retryable")

// InvalidEventError reports an event or an argument a call refused. Field names the offending
// field or argument (object, type, reason, action, note, event, dst) and Value carries what
// was given. It matches ErrInvalidInput.
type InvalidEventError struct {
	// Field is what was refused: object, type, reason, action, note, or an argument's name.
	Field string
	// Value is the refused value (the object's Go type for field object).
	Value string
	// Detail says why.
	Detail string
}

// Error returns "events: invalid <field> <value>: <detail>", the value cut at 64 bytes.
func (e *InvalidEventError) Error() string {
	if e == nil {
		return "events: invalid input"
	}
	v := e.Value
	if len(v) > 64 {
		v = v[:64] + "..."
	}
	return fmt.Sprintf("events: invalid %s %q: %s", e.Field, v, e.Detail)
}

// Unwrap returns ErrInvalidInput.
func (e *InvalidEventError) Unwrap() error { return ErrInvalidInput }

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "events" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }
