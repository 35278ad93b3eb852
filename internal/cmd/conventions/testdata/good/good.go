// Package good follows the conventions.
package good

import (
	"errors"
	"fmt"

	"k8s.io/utils/clock"
)

// ErrInvalidOptions is the sentinel.
var ErrInvalidOptions = errors.New("good: invalid options")

// Options configures a Thing.
type Options struct{ Clock clock.Clock }

// DefaultOptions returns the defaults.
func DefaultOptions() Options { return Options{} }

// PartOptions configures a Part.
type PartOptions struct{ N int }

// DefaultPartOptions returns the defaults.
func DefaultPartOptions() PartOptions { return PartOptions{} }

// Thing is the main type.
type Thing struct{}

// NewThing takes its options first.
func NewThing(opts Options, dep *Thing) (*Thing, error) { return &Thing{}, nil }

// OptionError has the one shape.
type OptionError struct {
	Field  string
	Value  any
	Reason string
	Err    error
}

func (e *OptionError) Error() string   { return fmt.Sprint(e.Field) }
func (e *OptionError) Unwrap() []error { return []error{ErrInvalidOptions, e.Err} }
