package cri

import (
	"errors"
	"fmt"
)

// ErrInvalidOptions is returned by New for options out of range; every
// *OptionError unwraps to it.
var ErrInvalidOptions = errors.New("cri: invalid options")

// OptionError reports an option New refused. It unwraps to
// ErrInvalidOptions.
type OptionError struct {
	// Field is the option's name, Value its value.
	Field string
	Value any
	// Reason says what is wrong with it.
	Reason string
}

// Error names the option, its value and what is wrong.
func (e *OptionError) Error() string {
	return fmt.Sprintf("cri: invalid options: %s %v: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidOptions.
func (e *OptionError) Unwrap() error { return ErrInvalidOptions }
