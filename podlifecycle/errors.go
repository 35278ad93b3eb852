package podlifecycle

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nodestate/nodestate/internal/errs"
)

// The package's sentinel errors. Every error it returns wraps one of them.
var (
	// ErrInvalidOptions is returned by New for options out of range.
	ErrInvalidOptions = errors.New("podlifecycle: invalid options")
	// ErrInvalidInput is returned for a nil or malformed pod or observation:
	// a pod without a UID, duplicate container names, an observation for a
	// container the spec lacks, an exit for a container that never started.
	ErrInvalidInput = errors.New("podlifecycle: invalid input")
	// ErrTimeWentBackwards is returned for a time earlier than one already
	// accepted.
	ErrTimeWentBackwards = errors.New("podlifecycle: time went backwards")
	// ErrNotInitialized is returned by methods of a zero Machine.
	ErrNotInitialized = errors.New("podlifecycle: machine not initialized, use New")
)

// sentinelText is a sentinel's message without the package prefix, so a
// typed error names the package once.
func sentinelText(err error) string {
	if err == nil {
		return "invalid input"
	}
	return strings.TrimPrefix(err.Error(), "podlifecycle: ")
}

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "podlifecycle" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }

// InputError reports a pod or an observation Step refused; the machine is
// unchanged. It unwraps to ErrInvalidInput or ErrTimeWentBackwards.
type InputError struct {
	// Index is the index of the refused observation, or -1 for the pod or
	// the time.
	Index int
	// Container is the container concerned, if any.
	Container string
	// At is the refused time, for ErrTimeWentBackwards; Last the latest
	// time already accepted.
	At, Last time.Time
	// Reason says what was wrong.
	Reason string
	// Err is ErrInvalidInput or ErrTimeWentBackwards.
	Err error
}

// Error says what was refused, prefixed once with the package name.
func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString("podlifecycle: ")
	b.WriteString(sentinelText(e.Err))
	if e.Index >= 0 {
		fmt.Fprintf(&b, ": observation %d", e.Index)
	}
	if e.Container != "" {
		fmt.Fprintf(&b, ": container %q", e.Container)
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if errors.Is(e.Err, ErrTimeWentBackwards) {
		fmt.Fprintf(&b, ": %s before %s", e.At.Format(time.RFC3339Nano), e.Last.Format(time.RFC3339Nano))
	}
	return b.String()
}

// Unwrap returns the sentinel.
func (e *InputError) Unwrap() error { return e.Err }
