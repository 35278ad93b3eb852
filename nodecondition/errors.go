package nodecondition

import (
	"errors"
	"fmt"
	"time"

	"github.com/nodestate/nodestate/internal/errs"
	"github.com/nodestate/nodestate/kubeversion"
)

// The package's sentinels (docs/conventions.md section 3). Every error the
// package returns unwraps (errors.Is) to one of them.
var (
	// ErrInvalidOptions is matched by every *OptionError: a constructor or
	// Validate refused an option.
	ErrInvalidOptions = errors.New("nodecondition: invalid options")
	// ErrInvalidInput is matched by every *InputError and *ThresholdError: an
	// argument is nil, malformed or names something unknown.
	ErrInvalidInput = errors.New("nodecondition: invalid input")
	// ErrTimeWentBackwards is matched by every *TimeError: a call carries a
	// time older than one the machine already accepted. The machine is left
	// unchanged.
	ErrTimeWentBackwards = errors.New("nodecondition: time went backwards")
	// ErrNotInitialized is matched by every *NotInitializedError: a method of
	// a zero value that needs its constructor.
	ErrNotInitialized = errors.New("nodecondition: not initialized")
)

// prefix starts every message of the package, once.
const prefix = "nodecondition: "

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "nodecondition" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }

// versionError returns nil for a valid v and otherwise the *OptionError of
// field Version, wrapping the *kubeversion.ValueError.
func versionError(v kubeversion.Version) error {
	err := v.Validate()
	if err == nil {
		return nil
	}
	return &OptionError{Field: "Version", Value: v.String(),
		Reason: "unsupported Kubernetes version, supported are " + kubeversion.Oldest.String() + " to " + kubeversion.Newest.String(), Err: err}
}

// InputError reports an argument a call refused.
type InputError struct {
	Op     string // the call, for example "UpsertNode"
	Value  string // the refused value as text, for example "<nil>" or a node name
	Reason string // what is wrong with it
}

// Error renders "nodecondition: invalid input: OP VALUE: REASON".
func (e *InputError) Error() string {
	return fmt.Sprintf("%sinvalid input: %s %s: %s", prefix, e.Op, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidInput.
func (e *InputError) Unwrap() error { return ErrInvalidInput }

// ThresholdError reports an eviction threshold that cannot be parsed.
type ThresholdError struct {
	Input  string // the statement or value as given
	Reason string // why it was rejected
}

// Error renders the error with the input quoted.
func (e *ThresholdError) Error() string {
	return fmt.Sprintf("%sinvalid eviction threshold %q: %s", prefix, e.Input, e.Reason)
}

// Unwrap returns ErrInvalidInput.
func (e *ThresholdError) Unwrap() error { return ErrInvalidInput }

// TimeError reports a call whose time is older than the last accepted one.
type TimeError struct {
	Op        string // the call refused, for example "Monitor"
	Now, Last string // the refused time and the last accepted one (RFC 3339)
}

// Error renders the error with both times.
func (e *TimeError) Error() string {
	return fmt.Sprintf("%stime went backwards: %s at %s is before the last accepted time %s", prefix, e.Op, e.Now, e.Last)
}

// Unwrap returns ErrTimeWentBackwards.
func (e *TimeError) Unwrap() error { return ErrTimeWentBackwards }

// NotInitializedError reports a method called on a zero value that needs its
// constructor.
type NotInitializedError struct {
	Type   string // the receiver's type, for example "Kubelet"
	Method string // the method called
}

// Error renders "nodecondition: not initialized: Kubelet.Observe: use NewKubelet".
func (e *NotInitializedError) Error() string {
	return fmt.Sprintf("%snot initialized: %s.%s: use New%s", prefix, e.Type, e.Method, e.Type)
}

// Unwrap returns ErrNotInitialized.
func (e *NotInitializedError) Unwrap() error { return ErrNotInitialized }

func notInit(typ, method string) error { return &NotInitializedError{Type: typ, Method: method} }

// namedPeriod is an option period with its field name.
type namedPeriod struct {
	name string
	d    time.Duration
}

// allPositive returns a *OptionError for the first period that is not
// positive.
func allPositive(ps ...namedPeriod) error {
	for _, p := range ps {
		if p.d <= 0 {
			return &OptionError{Field: p.name, Value: p.d.String(), Reason: "must be positive"}
		}
	}
	return nil
}
