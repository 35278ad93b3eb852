package kube

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/nodestate/nodestate/internal/errs"
	"github.com/nodestate/nodestate/kubeversion"
)

var (
	// ErrNotInitialized is wrapped by the errors of an adapter whose client is nil (its
	// zero value): nothing was sent.
	ErrNotInitialized = errors.New("kube: no client")
	// ErrInvalidInput is wrapped by the errors of a call with a nil object or an empty name:
	// nothing was sent.
	ErrInvalidInput = errors.New("kube: invalid input")
	// ErrInvalidOptions is wrapped by the errors NewNode returns for bad Options.
	ErrInvalidOptions = errors.New("kube: invalid options")
)

// notInit returns the error of a call on an adapter without a client.
func notInit(typ, method string) error {
	return fmt.Errorf("%w: %s.%s of a %s without Client", ErrNotInitialized, typ, method, typ)
}

// invalid returns the error of a call with a nil or empty argument.
func invalid(typ, method, what string) error {
	return fmt.Errorf("%w: %s.%s: %s", ErrInvalidInput, typ, method, what)
}

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "kube" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }

// versionError returns nil for a valid v and otherwise the *OptionError of
// field, wrapping the *kubeversion.ValueError.
func versionError(field string, v kubeversion.Version) error {
	err := v.Validate()
	if err == nil {
		return nil
	}
	return &OptionError{Field: field, Value: strconv.Quote(v.String()),
		Reason: "unsupported Kubernetes version, supported are " + kubeversion.Oldest.String() + " to " + kubeversion.Newest.String(), Err: err}
}

func optionError(field string, value any, reason string) error {
	return &OptionError{Field: field, Value: fmt.Sprintf("%q", fmt.Sprint(value)), Reason: reason}
}
