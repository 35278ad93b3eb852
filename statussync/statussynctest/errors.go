package statussynctest

import (
	"errors"
	"fmt"
)

// ErrInvalidOptions is returned by [NewAPIWithOptions] for options it
// refuses. Every error the package returns wraps it.
var ErrInvalidOptions = errors.New("statussynctest: invalid options")

// OptionError reports an option NewAPIWithOptions refused. It unwraps to
// ErrInvalidOptions and, when set, Err.
type OptionError struct {
	// Field is the option's name, Value its value.
	Field string
	Value any
	// Reason says what is wrong with it.
	Reason string
	// Err is the underlying error, if any: for Field "Version", the
	// *kubeversion.ValueError, so that errors.Is also matches
	// kubeversion.ErrUnsupportedVersion.
	Err error
}

// Error names the option, its value and what is wrong with it.
func (e *OptionError) Error() string {
	return fmt.Sprintf("statussynctest: invalid options: %s %v: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidOptions and, when set, Err.
func (e *OptionError) Unwrap() []error {
	if e == nil || e.Err == nil {
		return []error{ErrInvalidOptions}
	}
	return []error{ErrInvalidOptions, e.Err}
}
