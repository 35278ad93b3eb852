package vk

import (
	"errors"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/internal/errs"
)

// The package's sentinel errors. Every error it returns wraps one of them.
var (
	// ErrInvalidOptions is returned by NewProvider for options it refuses.
	ErrInvalidOptions = errors.New("vk: invalid options")
	// ErrInvalidInput is returned for a nil pod, a pod without a UID,
	// namespace or name, or a pod the pod machine refuses.
	ErrInvalidInput = errors.New("vk: invalid input")
	// ErrUnknownPod is returned for a call about a pod the provider does not
	// run (never created, or deleted and forgotten). virtual-kubelet's
	// errdefs.IsNotFound is true for it.
	ErrUnknownPod = errors.New("vk: unknown pod")
	// ErrRuntime is returned by a pod's Runtime, as the runner sees it, when
	// the runtime panicked or did not answer within Options.RuntimeTimeout.
	ErrRuntime = errors.New("vk: runtime failed")
	// ErrNotInitialized is returned by the methods of a zero Provider.
	ErrNotInitialized = errors.New("vk: not initialized, use NewProvider")
)

// OptionError reports an option a constructor refused: the option's
// name (Field), the refused value, what is wrong (Reason) and the error
// behind it (Err), in the one shape of every package's (internal/errs). It
// unwraps to ErrInvalidOptions and, when set, Err.
type OptionError = errs.OptionError[errPkg]

// errPkg names the package in its errors.
type errPkg struct{}

func (errPkg) Name() string          { return "vk" }
func (errPkg) InvalidOptions() error { return ErrInvalidOptions }

// PodError reports a provider call about one pod that it refused. It
// unwraps to its Kind (ErrInvalidInput or ErrUnknownPod) and, when set,
// Err. It implements virtual-kubelet's errdefs classification: NotFound is
// true for ErrUnknownPod, InvalidInput for ErrInvalidInput, so the pod
// controller treats a delete of an unknown pod as done.
type PodError struct {
	// Op is the call: "create", "update", "delete", "get", "status",
	// "notify".
	Op string
	// Namespace, Name and UID identify the pod, as far as known.
	Namespace, Name string
	UID             types.UID
	// Kind is the sentinel.
	Kind error
	// Err is the error behind it, if any (the runner's refusal).
	Err error
}

// Error names the call, the pod and what is wrong.
func (e *PodError) Error() string {
	kind := ErrInvalidInput
	if e.Kind != nil {
		kind = e.Kind
	}
	msg := "vk: " + e.Op + " pod"
	if e.Name != "" {
		msg += " " + e.Namespace + "/" + e.Name
	}
	if e.UID != "" {
		msg += " (" + string(e.UID) + ")"
	}
	msg += ": " + kind.Error()[len("vk: "):]
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

// NotFound reports whether the pod is unknown (virtual-kubelet's
// errdefs.ErrNotFound).
func (e *PodError) NotFound() bool { return errors.Is(e.Kind, ErrUnknownPod) }

// InvalidInput reports whether the call was refused as bad input
// (virtual-kubelet's errdefs.ErrInvalidInput).
func (e *PodError) InvalidInput() bool { return e.Kind == nil || errors.Is(e.Kind, ErrInvalidInput) }

type errorString string

func (e errorString) Error() string { return string(e) }
