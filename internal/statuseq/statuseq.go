// Package statuseq compares pod statuses without reflection.
package statuseq

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Equal is equality.Semantic.DeepEqual(*a, *b), without reflection (and
// without allocating) for the fields the kubelet writes: quantities compare
// by value, times by instant, and an empty list equals none. A status with
// a field it does not compare itself (resource claim statuses, volume
// health, a container's allocatedResourcesStatus, a mount's volumeStatus,
// resource claims) is compared by Semantic.DeepEqual.
func Equal(a, b *v1.PodStatus) bool {
	if exotic(a) || exotic(b) {
		return equality.Semantic.DeepEqual(*a, *b)
	}
	return sameStatus(a, b)
}

// exotic is a status with fields sameStatus does not compare (the kubelet
// passes them through from the API pod's status).
func exotic(s *v1.PodStatus) bool {
	if len(s.ResourceClaimStatuses) != 0 || s.ExtendedResourceClaimStatus != nil || len(s.NodeAllocatableResourceClaimStatuses) != 0 ||
		len(s.VolumeHealth) != 0 ||
		(s.Resources != nil && len(s.Resources.Claims) != 0) {
		return true
	}
	for _, l := range [3][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range l {
			c := &l[i]
			if len(c.AllocatedResourcesStatus) != 0 || (c.Resources != nil && len(c.Resources.Claims) != 0) {
				return true
			}
			for j := range c.VolumeMounts {
				if c.VolumeMounts[j].VolumeStatus != nil {
					return true
				}
			}
		}
	}
	return false
}

// sameList is Semantic equality of resource lists: nil equals empty, and
// quantities compare by value.
func sameList(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		r, ok := b[name]
		if !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

// sameResources compares requirements without claims (exotic covers those).
func sameResources(a, b *v1.ResourceRequirements) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameList(a.Limits, b.Limits) && sameList(a.Requests, b.Requests)
}

func sameMounts(a, b []v1.VolumeMountStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Name != y.Name || x.MountPath != y.MountPath || x.ReadOnly != y.ReadOnly ||
			(x.RecursiveReadOnly == nil) != (y.RecursiveReadOnly == nil) ||
			(x.RecursiveReadOnly != nil && *x.RecursiveReadOnly != *y.RecursiveReadOnly) {
			return false
		}
	}
	return true
}

func sameUser(a, b *v1.ContainerUser) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := a.Linux, b.Linux
	if x == nil || y == nil {
		return x == y
	}
	if x.UID != y.UID || x.GID != y.GID || len(x.SupplementalGroups) != len(y.SupplementalGroups) {
		return false
	}
	for i := range x.SupplementalGroups {
		if x.SupplementalGroups[i] != y.SupplementalGroups[i] {
			return false
		}
	}
	return true
}

func sameSignal(a, b *v1.Signal) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameStatus(a, b *v1.PodStatus) bool {
	if a.Phase != b.Phase || a.Reason != b.Reason || a.Message != b.Message || a.PodIP != b.PodIP ||
		a.HostIP != b.HostIP || a.NominatedNodeName != b.NominatedNodeName || a.QOSClass != b.QOSClass ||
		a.ObservedGeneration != b.ObservedGeneration || !sameTimePtr(a.StartTime, b.StartTime) ||
		len(a.PodIPs) != len(b.PodIPs) || len(a.Conditions) != len(b.Conditions) ||
		len(a.HostIPs) != len(b.HostIPs) || a.Resize != b.Resize ||
		!sameResources(a.Resources, b.Resources) || !sameList(a.AllocatedResources, b.AllocatedResources) {
		return false
	}
	for i := range a.PodIPs {
		if a.PodIPs[i] != b.PodIPs[i] {
			return false
		}
	}
	for i := range a.HostIPs {
		if a.HostIPs[i] != b.HostIPs[i] {
			return false
		}
	}
	for i := range a.Conditions {
		x, y := &a.Conditions[i], &b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration || !x.LastTransitionTime.Equal(&y.LastTransitionTime) ||
			!x.LastProbeTime.Equal(&y.LastProbeTime) {
			return false
		}
	}
	return sameContainerStatuses(a.InitContainerStatuses, b.InitContainerStatuses) &&
		sameContainerStatuses(a.ContainerStatuses, b.ContainerStatuses) &&
		sameContainerStatuses(a.EphemeralContainerStatuses, b.EphemeralContainerStatuses)
}

func sameTimePtr(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}

func sameBoolPtr(a, b *bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameContainerStatuses(a, b []v1.ContainerStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Name != y.Name || x.Ready != y.Ready || x.RestartCount != y.RestartCount || x.Image != y.Image ||
			x.ImageID != y.ImageID || x.ContainerID != y.ContainerID || !sameBoolPtr(x.Started, y.Started) ||
			!sameState(&x.State, &y.State) || !sameState(&x.LastTerminationState, &y.LastTerminationState) ||
			!sameResources(x.Resources, y.Resources) || !sameList(x.AllocatedResources, y.AllocatedResources) ||
			!sameMounts(x.VolumeMounts, y.VolumeMounts) || !sameUser(x.User, y.User) || !sameSignal(x.StopSignal, y.StopSignal) {
			return false
		}
	}
	return true
}

func sameState(a, b *v1.ContainerState) bool {
	switch {
	case (a.Waiting == nil) != (b.Waiting == nil), (a.Running == nil) != (b.Running == nil),
		(a.Terminated == nil) != (b.Terminated == nil):
		return false
	}
	if a.Waiting != nil && *a.Waiting != *b.Waiting {
		return false
	}
	if a.Running != nil && !a.Running.StartedAt.Equal(&b.Running.StartedAt) {
		return false
	}
	if x, y := a.Terminated, b.Terminated; x != nil {
		if x.ExitCode != y.ExitCode || x.Signal != y.Signal || x.Reason != y.Reason || x.Message != y.Message ||
			x.ContainerID != y.ContainerID || !x.StartedAt.Equal(&y.StartedAt) || !x.FinishedAt.Equal(&y.FinishedAt) {
			return false
		}
	}
	return true
}

// Identical reports whether a and b are the same container status in
// every field, representation included (reflect.DeepEqual's equality: a
// nil list is not an empty one, times compare by wall clock, monotonic
// reading and location, quantities by their form), so that nothing that
// reads them can tell them apart. It reports false for a status with a
// field it does not compare (allocatedResourcesStatus, a mount's
// volumeStatus): such statuses are never identical to it.
func Identical(a, b *v1.ContainerStatus) bool {
	if a.AllocatedResourcesStatus != nil || b.AllocatedResourcesStatus != nil {
		return false
	}
	if a.Name != b.Name || a.Ready != b.Ready || a.RestartCount != b.RestartCount || a.Image != b.Image ||
		a.ImageID != b.ImageID || a.ContainerID != b.ContainerID || !identicalPtr(a.Started, b.Started) ||
		!identicalPtr(a.StopSignal, b.StopSignal) || !identicalState(&a.State, &b.State) ||
		!identicalState(&a.LastTerminationState, &b.LastTerminationState) ||
		!identicalList(a.AllocatedResources, b.AllocatedResources) || !identicalResources(a.Resources, b.Resources) ||
		!identicalUser(a.User, b.User) || (a.VolumeMounts == nil) != (b.VolumeMounts == nil) || len(a.VolumeMounts) != len(b.VolumeMounts) {
		return false
	}
	for i := range a.VolumeMounts {
		x, y := &a.VolumeMounts[i], &b.VolumeMounts[i]
		if x.VolumeStatus != nil || y.VolumeStatus != nil || x.Name != y.Name || x.MountPath != y.MountPath ||
			x.ReadOnly != y.ReadOnly || !identicalPtr(x.RecursiveReadOnly, y.RecursiveReadOnly) {
			return false
		}
	}
	return true
}

func identicalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func identicalState(a, b *v1.ContainerState) bool {
	return identicalPtr(a.Waiting, b.Waiting) && identicalPtr(a.Running, b.Running) && identicalPtr(a.Terminated, b.Terminated)
}

func identicalList(a, b v1.ResourceList) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if r, ok := b[name]; !ok || q != r {
			return false
		}
	}
	return true
}

func identicalResources(a, b *v1.ResourceRequirements) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !identicalList(a.Limits, b.Limits) || !identicalList(a.Requests, b.Requests) ||
		(a.Claims == nil) != (b.Claims == nil) || len(a.Claims) != len(b.Claims) {
		return false
	}
	for i := range a.Claims {
		if a.Claims[i] != b.Claims[i] {
			return false
		}
	}
	return true
}

func identicalUser(a, b *v1.ContainerUser) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := a.Linux, b.Linux
	if x == nil || y == nil {
		return x == y
	}
	if x.UID != y.UID || x.GID != y.GID || (x.SupplementalGroups == nil) != (y.SupplementalGroups == nil) ||
		len(x.SupplementalGroups) != len(y.SupplementalGroups) {
		return false
	}
	for i := range x.SupplementalGroups {
		if x.SupplementalGroups[i] != y.SupplementalGroups[i] {
			return false
		}
	}
	return true
}
