package podphase

import (
	"errors"
	"fmt"

	"github.com/nodestate/nodestate/internal/errs"
	"github.com/nodestate/nodestate/kubeversion"
)

// The package's sentinel errors. Every error this package returns wraps one
// of them, so callers can branch with errors.Is.
var (
	// ErrInvalidInput is matched by every error about an argument that is
	// nil or inconsistent: a nil pod or status, a status naming no
	// container of the spec, two statuses with one name.
	ErrInvalidInput = errors.New("podphase: invalid input")

	// ErrNilPod is returned (possibly wrapped) by the calls that take a pod
	// when the pod is nil. It matches ErrInvalidInput.
	ErrNilPod error = &sentinel{msg: "podphase: nil pod", parent: ErrInvalidInput}
	// ErrInvalidOptions is matched by an *OptionError: Options a method
	// with an error result refused. The Options are the method's receiver,
	// an argument like any other, so it matches ErrInvalidInput too.
	ErrInvalidOptions error = &sentinel{msg: "podphase: invalid options", parent: ErrInvalidInput}

	// ErrIllegalTransition is matched (with errors.Is) by every
	// [*TransitionError].
	ErrIllegalTransition = errors.New("podphase: illegal phase transition")
)

// sentinel is a sentinel error that belongs to a more general one.
type sentinel struct {
	msg    string
	parent error
}

func (s *sentinel) Error() string { return s.msg }
func (s *sentinel) Unwrap() error { return s.parent }

// UnknownContainerError reports a container status whose name matches no
// container of the matching spec list. It matches ErrInvalidInput.
type UnknownContainerError struct {
	// Field is the status list: "initContainerStatuses" or
	// "containerStatuses".
	Field string
	// Name is the status's container name.
	Name string
}

// Error implements error.
func (e *UnknownContainerError) Error() string {
	if e == nil {
		return ErrInvalidInput.Error()
	}
	return fmt.Sprintf("podphase: status.%s has an entry for container %q that the spec does not have", e.Field, e.Name)
}

// Unwrap returns ErrInvalidInput.
func (e *UnknownContainerError) Unwrap() error { return ErrInvalidInput }

// DuplicateStatusError reports two statuses with one container name in one
// status list. It matches ErrInvalidInput.
type DuplicateStatusError struct {
	// Field is the status list: "initContainerStatuses" or
	// "containerStatuses".
	Field string
	// Name is the repeated container name.
	Name string
}

// Error implements error.
func (e *DuplicateStatusError) Error() string {
	if e == nil {
		return ErrInvalidInput.Error()
	}
	return fmt.Sprintf("podphase: status.%s has two entries for container %q", e.Field, e.Name)
}

// Unwrap returns ErrInvalidInput.
func (e *DuplicateStatusError) Unwrap() error { return ErrInvalidInput }

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "podphase" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }

// validate returns nil for Options every method can use, and otherwise the
// *OptionError of the methods that return an error.
func (o Options) validate() error {
	if err := o.Version.Validate(); err != nil {
		return &OptionError{Field: "Version", Value: o.Version.String(), Reason: unsupported, Err: err}
	}
	return nil
}

// unsupported is the reason of an *OptionError on Version.
var unsupported = "unsupported Kubernetes version, supported are " + kubeversion.Oldest.String() + " to " + kubeversion.Newest.String()
