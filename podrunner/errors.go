package podrunner

import (
	"errors"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/internal/errs"
)

// The package's sentinel errors. Every error it returns wraps one of them.
var (
	// ErrInvalidOptions is returned by New for options out of range.
	ErrInvalidOptions = errors.New("podrunner: invalid options")
	// ErrInvalidInput is returned for a nil pod or runtime, a pod without
	// a UID, or a pod the pod machine refuses (duplicate container names).
	ErrInvalidInput = errors.New("podrunner: invalid input")
	// ErrUnknownPod is returned for a call about a pod the runner does not
	// run (never added, or removed and forgotten).
	ErrUnknownPod = errors.New("podrunner: unknown pod")
	// ErrDuplicatePod is returned by Add and Reject for a pod the runner
	// already has.
	ErrDuplicatePod = errors.New("podrunner: pod already added")
	// ErrPodCIDRExhausted is returned by Add when the pod CIDR has no free
	// address left for a pod that is not host-network.
	ErrPodCIDRExhausted = errors.New("podrunner: no free address in the pod CIDR")
	// ErrRunning is returned by a second Run of one Runner.
	ErrRunning = errors.New("podrunner: Run called twice")
	// ErrNotInitialized is returned by the methods of a zero Runner.
	ErrNotInitialized = errors.New("podrunner: not initialized, use New")
)

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "podrunner" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }

// PodError reports a call about one pod that the runner refused. It
// unwraps to one of the sentinels (ErrInvalidInput, ErrUnknownPod,
// ErrDuplicatePod, ErrPodCIDRExhausted) and, when set, Err.
type PodError struct {
	// Op is the call: "add", "update", "remove", "notify", "reject".
	Op string
	// UID, Namespace and Name identify the pod, as far as known.
	UID             types.UID
	Namespace, Name string
	// Kind is the sentinel.
	Kind error
	// Err is the error behind it, if any (podlifecycle's refusal of the
	// pod).
	Err error
}

// Error names the call, the pod and what is wrong.
func (e *PodError) Error() string {
	kind := "invalid input"
	if e.Kind != nil {
		kind = e.Kind.Error()[len("podrunner: "):]
	}
	msg := "podrunner: " + e.Op + " pod"
	if e.Name != "" {
		msg += " " + e.Namespace + "/" + e.Name
	}
	if e.UID != "" {
		msg += " (" + string(e.UID) + ")"
	}
	msg += ": " + kind
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the sentinel and Err.
func (e *PodError) Unwrap() []error {
	kind := e.Kind
	if kind == nil {
		kind = ErrInvalidInput
	}
	if e.Err == nil {
		return []error{kind}
	}
	return []error{kind, e.Err}
}
