package statussync

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Sentinel errors; every error the package returns wraps one of them.
var (
	// ErrNilPod is returned for a nil pod.
	ErrNilPod = errors.New("statussync: nil pod")
	// ErrNoUID is returned for a pod without a UID.
	ErrNoUID = errors.New("statussync: pod has no UID")
	// ErrUnknownContainer is returned for a container status whose name is
	// not in the pod's spec, or a container ID no status has.
	ErrUnknownContainer = errors.New("statussync: unknown container")
	// ErrNotCached is returned by the container mutators for a pod whose
	// status was never set.
	ErrNotCached = errors.New("statussync: pod status not cached")
	// ErrInvalidOption is returned for an option out of range.
	ErrInvalidOption = errors.New("statussync: invalid option")
)

// PodError reports bad input about one pod. The cache is unchanged.
type PodError struct {
	// Namespace, Name and UID identify the pod, as far as known.
	Namespace, Name string
	// UID is the pod's UID.
	UID types.UID
	// Container names the container at fault, if any.
	Container string
	// Err is a sentinel error, or the containerstate error of a refused
	// container transition.
	Err error
}

// Error describes the pod and what is wrong.
func (e *PodError) Error() string {
	s := fmt.Sprintf("statussync: pod %s/%s (uid %q)", e.Namespace, e.Name, e.UID)
	if e.Container != "" {
		s += fmt.Sprintf(" container %q", e.Container)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *PodError) Unwrap() error { return e.Err }
