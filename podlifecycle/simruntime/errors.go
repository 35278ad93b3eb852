package simruntime

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nodestate/nodestate/internal/errs"
)

// The package's sentinel errors. Every error it returns wraps one of them.
var (
	// ErrInvalidInput is returned for malformed behaviour text or
	// annotations, a nil pod, or behaviours for a container the pod does
	// not have.
	ErrInvalidInput = errors.New("simruntime: invalid input")
	// ErrInvalidOptions is returned by New for options out of range.
	ErrInvalidOptions = errors.New("simruntime: invalid options")
	// ErrNotInitialized is returned by the methods of a zero Runtime.
	ErrNotInitialized = errors.New("simruntime: not initialized")
)

// ParseError reports behaviour text ParseBehaviours refused. It unwraps to
// ErrInvalidInput.
type ParseError struct {
	// Line is the 1-based line of the text.
	Line int
	// Container is the container the line is about, when known.
	Container string
	// Clause is the offending clause as written, when there is one.
	Clause string
	// Reason says what is wrong.
	Reason string
}

// Error names the line, the container, the clause and what is wrong.
func (e *ParseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "simruntime: invalid input: line %d", e.Line)
	if e.Container != "" {
		fmt.Fprintf(&b, ": container %q", e.Container)
	}
	if e.Clause != "" {
		fmt.Fprintf(&b, ": clause %q", e.Clause)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns ErrInvalidInput.
func (e *ParseError) Unwrap() error { return ErrInvalidInput }

// InputError reports a pod, behaviours or an annotation New, PodBehaviours
// or NewForPod refused. It unwraps to ErrInvalidInput, and to the
// ParseError behind it when an annotation does not parse.
type InputError struct {
	// Annotation is the annotation concerned, if any.
	Annotation string
	// Container is the container concerned, if any.
	Container string
	// Reason says what is wrong.
	Reason string
	// Err is the parse error behind an annotation that does not parse.
	Err error
}

// Error names the annotation, the container and what is wrong.
func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString("simruntime: invalid input")
	if e.Annotation != "" {
		fmt.Fprintf(&b, ": annotation %s", e.Annotation)
	}
	if e.Container != "" {
		fmt.Fprintf(&b, ": container %q", e.Container)
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(e.Err.Error(), "simruntime: invalid input: "))
	}
	return b.String()
}

// Unwrap returns ErrInvalidInput and the parse error, if any.
func (e *InputError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidInput, e.Err}
	}
	return []error{ErrInvalidInput}
}

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "simruntime" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }
