package statussync

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/internal/errs"
)

// The package's sentinels (docs/conventions.md section 3). Every error it
// returns wraps one of them.
var (
	// ErrInvalidOptions is wrapped by the *OptionError a constructor
	// returns for options it refuses.
	ErrInvalidOptions = errors.New("statussync: invalid options")
	// ErrInvalidInput is wrapped by every error about an argument: a nil
	// or UID-less pod, a container the spec lacks, a pod never cached.
	ErrInvalidInput = errors.New("statussync: invalid input")
	// ErrNotInitialized is returned by methods of a zero value that needs
	// its constructor (Engine.Run, Cache mutators).
	ErrNotInitialized = errors.New("statussync: not initialized; use the constructor")
)

// Kinds of invalid input; each wraps ErrInvalidInput.
var (
	// ErrNilPod is returned for a nil pod.
	ErrNilPod error = &inputError{"nil pod"}
	// ErrNoUID is returned for a pod without a UID.
	ErrNoUID error = &inputError{"pod has no UID"}
	// ErrUnknownContainer is returned for a container status whose name is
	// not in the pod's spec, or a container ID no status has.
	ErrUnknownContainer error = &inputError{"unknown container"}
	// ErrNotCached is returned by the container mutators for a pod whose
	// status was never set.
	ErrNotCached error = &inputError{"pod status not cached"}
)

const prefix = "statussync: "

// inputError is a kind of invalid input.
type inputError struct{ what string }

func (e *inputError) Error() string { return prefix + e.what }
func (e *inputError) Unwrap() error { return ErrInvalidInput }

// PodError reports bad input about one pod; the cache is unchanged. It
// wraps ErrInvalidInput and Err.
type PodError struct {
	// Namespace, Name and UID identify the pod, as far as known.
	Namespace, Name string
	// UID is the pod's UID.
	UID types.UID
	// Container names the container at fault, if any.
	Container string
	// Err is a kind of invalid input (ErrUnknownContainer, ...) or the
	// containerstate error of a refused container transition.
	Err error
}

// Error describes the pod and what is wrong, naming the package once:
// `statussync: pod default/web (uid "u1") container "ghost": unknown
// container`.
func (e *PodError) Error() string {
	if e == nil {
		return prefix + "<nil PodError>"
	}
	var b strings.Builder
	b.WriteString(prefix)
	fmt.Fprintf(&b, "pod %s/%s (uid %q)", e.Namespace, e.Name, e.UID)
	if e.Container != "" {
		fmt.Fprintf(&b, " container %q", e.Container)
	}
	b.WriteString(": ")
	if e.Err == nil {
		b.WriteString("invalid input")
	} else {
		b.WriteString(strings.TrimPrefix(e.Err.Error(), prefix))
	}
	return b.String()
}

// Unwrap returns Err and ErrInvalidInput, so that errors.Is matches both.
func (e *PodError) Unwrap() []error {
	if e == nil {
		return nil
	}
	if e.Err == nil {
		return []error{ErrInvalidInput}
	}
	return []error{e.Err, ErrInvalidInput}
}

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "statussync" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }

func optionError(field, value, reason string) error {
	return &OptionError{Field: field, Value: value, Reason: reason}
}
