package podphase

import (
	"errors"
	"fmt"
)

// ErrNilPod is returned (possibly wrapped) by the calls that take a pod when
// the pod is nil.
var ErrNilPod = errors.New("podphase: nil pod")

// UnknownContainerError reports a container status whose name matches no
// container of the matching spec list.
type UnknownContainerError struct {
	// Field is the status list: "initContainerStatuses" or
	// "containerStatuses".
	Field string
	// Name is the status's container name.
	Name string
}

// Error implements error.
func (e *UnknownContainerError) Error() string {
	return fmt.Sprintf("podphase: status.%s has an entry for container %q that the spec does not have", e.Field, e.Name)
}

// DuplicateStatusError reports two statuses with one container name in one
// status list.
type DuplicateStatusError struct {
	// Field is the status list: "initContainerStatuses" or
	// "containerStatuses".
	Field string
	// Name is the repeated container name.
	Name string
}

// Error implements error.
func (e *DuplicateStatusError) Error() string {
	return fmt.Sprintf("podphase: status.%s has two entries for container %q", e.Field, e.Name)
}
