// Package errs holds the one shape of the typed errors every package of
// the library exposes under its own name (docs/conventions.md section 3):
// each package declares
//
//	type errPkg struct{}
//	func (errPkg) Name() string           { return "podrunner" }
//	func (errPkg) InvalidOptions() error  { return ErrInvalidOptions }
//	type OptionError = errs.OptionError[errPkg]
//
// so that its OptionError has the same fields, message form and Unwrap as
// every other package's, names its own package once at the start of its
// message, and unwraps to its own sentinel: errors.Is(err,
// podrunner.ErrInvalidOptions) and errors.As(err, new(*podrunner.OptionError))
// behave as if each package had written the type itself, and a package's
// OptionError is a type of its own (the type argument differs), so
// errors.As never mistakes one package's error for another's.
package errs

import "fmt"

// OptionsPackage names a package and its ErrInvalidOptions sentinel.
type OptionsPackage interface {
	// Name is the package's name, the prefix of its messages.
	Name() string
	// InvalidOptions is the package's ErrInvalidOptions.
	InvalidOptions() error
}

// InputPackage names a package and its ErrInvalidInput sentinel.
type InputPackage interface {
	// Name is the package's name, the prefix of its messages.
	Name() string
	// InvalidInput is the package's ErrInvalidInput.
	InvalidInput() error
}

// OptionError reports an option a constructor refused. It unwraps to its
// package's ErrInvalidOptions and, when set, Err.
type OptionError[P OptionsPackage] struct {
	// Field is the option's name, "PodCIDR" or "Runner.PodCIDR" for a
	// nested one.
	Field string
	// Value is the refused value (nil when there is none to show).
	Value any
	// Reason says what is wrong with it.
	Reason string
	// Err is the error behind it, if any: another package's option error,
	// or kubeversion's for a Version.
	Err error
}

// Error reads "<package>: invalid options: <field> <value>: <reason>".
func (e *OptionError[P]) Error() string {
	var p P
	if e == nil {
		return p.InvalidOptions().Error()
	}
	reason := e.Reason
	if reason == "" && e.Err != nil {
		reason = e.Err.Error()
	}
	if e.Value == nil {
		return fmt.Sprintf("%s: invalid options: %s: %s", p.Name(), e.Field, reason)
	}
	return fmt.Sprintf("%s: invalid options: %s %v: %s", p.Name(), e.Field, e.Value, reason)
}

// Unwrap returns the package's ErrInvalidOptions and, when set, Err.
func (e *OptionError[P]) Unwrap() []error {
	var p P
	if e == nil || e.Err == nil {
		return []error{p.InvalidOptions()}
	}
	return []error{p.InvalidOptions(), e.Err}
}

// InputError reports an argument a call refused: nil, malformed or
// inconsistent input. It unwraps to its package's ErrInvalidInput and, when
// set, Err.
type InputError[P InputPackage] struct {
	// What names the input, "pod default/web" or "container \"app\""
	// (empty: the call's input as a whole).
	What string
	// Reason says what is wrong with it.
	Reason string
	// Err is the error behind it, if any.
	Err error
}

// Error reads "<package>: invalid input: <what>: <reason>".
func (e *InputError[P]) Error() string {
	var p P
	if e == nil {
		return p.InvalidInput().Error()
	}
	msg := p.Name() + ": invalid input"
	if e.What != "" {
		msg += ": " + e.What
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the package's ErrInvalidInput and, when set, Err.
func (e *InputError[P]) Unwrap() []error {
	var p P
	if e == nil || e.Err == nil {
		return []error{p.InvalidInput()}
	}
	return []error{p.InvalidInput(), e.Err}
}
