// Package statuscopy copies container statuses into storage a caller
// reuses: the copy equals DeepCopy's field for field and shares nothing
// with the source, and what the destination pointed to before is
// overwritten and reused.
package statuscopy

import (
	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/internal/reslist"
)

// Resources sets *dst to a copy of src in dst's storage.
func Resources(dst, src *v1.ResourceRequirements) {
	claims := dst.Claims
	dst.Limits, dst.Requests = reslist.Copy(dst.Limits, src.Limits), reslist.Copy(dst.Requests, src.Requests)
	dst.Claims = nil
	if src.Claims != nil {
		dst.Claims = NonNil(append(claims[:0], src.Claims...))
	}
}

// ContainerStatus sets *dst to a copy of src, equal to DeepCopy's,
// reusing what dst points to (the rarer fields in new memory). dst must not
// share memory with src.
func ContainerStatus(dst, src *v1.ContainerStatus) {
	keep := *dst
	rest := *src
	rest.State, rest.LastTerminationState = v1.ContainerState{}, v1.ContainerState{}
	rest.Started, rest.Resources, rest.AllocatedResources, rest.VolumeMounts, rest.User, rest.StopSignal = nil, nil, nil, nil, nil, nil
	*dst = v1.ContainerStatus{}
	rest.DeepCopyInto(dst)
	state(&dst.State, &keep.State, &src.State)
	state(&dst.LastTerminationState, &keep.LastTerminationState, &src.LastTerminationState)
	if src.Started != nil {
		dst.Started = reuse(keep.Started)
		*dst.Started = *src.Started
	}
	if src.StopSignal != nil {
		dst.StopSignal = reuse(keep.StopSignal)
		*dst.StopSignal = *src.StopSignal
	}
	if src.Resources != nil {
		dst.Resources = reuse(keep.Resources)
		Resources(dst.Resources, src.Resources)
	}
	if src.AllocatedResources != nil {
		dst.AllocatedResources = reslist.Copy(keep.AllocatedResources, src.AllocatedResources)
	}
	if u := src.User; u != nil {
		dst.User = reuse(keep.User)
		linux := dst.User.Linux
		*dst.User = v1.ContainerUser{}
		if u.Linux != nil {
			dst.User.Linux = reuse(linux)
			groups := dst.User.Linux.SupplementalGroups
			*dst.User.Linux = *u.Linux
			if u.Linux.SupplementalGroups != nil {
				dst.User.Linux.SupplementalGroups = NonNil(append(groups[:0], u.Linux.SupplementalGroups...))
			}
		}
	}
	if src.VolumeMounts != nil {
		ms := keep.VolumeMounts
		if n := len(src.VolumeMounts); cap(ms) < n {
			g := make([]v1.VolumeMountStatus, n)
			copy(g, ms[:cap(ms)])
			ms = g
		}
		ms = ms[:len(src.VolumeMounts)]
		for i := range src.VolumeMounts {
			m, mode := src.VolumeMounts[i], ms[i].RecursiveReadOnly
			rro := m.RecursiveReadOnly
			m.RecursiveReadOnly = nil
			ms[i] = v1.VolumeMountStatus{}
			m.DeepCopyInto(&ms[i]) // the volume status, as DeepCopy copies it
			if rro != nil {
				ms[i].RecursiveReadOnly = reuse(mode)
				*ms[i].RecursiveReadOnly = *rro
			}
		}
		dst.VolumeMounts = NonNil(ms)
	}
}

// state sets *dst to a copy of src, reusing what keep points to.
func state(dst, keep, src *v1.ContainerState) {
	*dst = v1.ContainerState{}
	if src.Waiting != nil {
		dst.Waiting = reuse(keep.Waiting)
		*dst.Waiting = *src.Waiting
	}
	if src.Running != nil {
		dst.Running = reuse(keep.Running)
		src.Running.DeepCopyInto(dst.Running)
	}
	if src.Terminated != nil {
		dst.Terminated = reuse(keep.Terminated)
		src.Terminated.DeepCopyInto(dst.Terminated)
	}
}

// NonNil returns l, or an empty list when l is nil: a copy of an empty
// list is empty, not none.
func NonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// reuse returns p, or a new value when p is nil.
func reuse[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}
