package kube

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/nodestate/nodestate/kubeversion"
)

var (
	// ErrNotInitialized is wrapped by the errors of an adapter whose client is nil (its
	// zero value): nothing was sent.
	ErrNotInitialized = errors.New("kube: no client")
	// ErrInvalidInput is wrapped by the errors of a call with a nil object or an empty name:
	// nothing was sent.
	ErrInvalidInput = errors.New("kube: invalid input")
	// ErrInvalidOptions is wrapped by the errors NewNode returns for bad NodeOptions.
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

// OptionError is the error NewNode and NewFleet return for a field of their
// options they refuse; it unwraps to ErrInvalidOptions and, when set, Err.
type OptionError struct {
	// Field names the field ("Nodes", "Node.PodCIDR"); Value is its value as
	// text; Reason says what is wrong with it.
	Field, Value, Reason string
	// Err is the underlying error, if any: for a Version field
	// ("Lifecycle.Version", "Kubelet.Version"), the *kubeversion.ValueError,
	// so that errors.Is also matches kubeversion.ErrUnsupportedVersion.
	Err error
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("kube: invalid options: %s %s: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidOptions and, when set, Err.
func (e *OptionError) Unwrap() []error {
	if e == nil || e.Err == nil {
		return []error{ErrInvalidOptions}
	}
	return []error{ErrInvalidOptions, e.Err}
}

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
