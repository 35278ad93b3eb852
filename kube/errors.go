package kube

import (
	"errors"
	"fmt"
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
// options they refuse; it unwraps to ErrInvalidOptions.
type OptionError struct {
	// Field names the field ("Nodes", "Node.PodCIDR"); Value is its value as
	// text; Reason says what is wrong with it.
	Field, Value, Reason string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("kube: invalid options: %s %s: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidOptions.
func (e *OptionError) Unwrap() error { return ErrInvalidOptions }

func optionError(field string, value any, reason string) error {
	return &OptionError{Field: field, Value: fmt.Sprintf("%q", fmt.Sprint(value)), Reason: reason}
}
