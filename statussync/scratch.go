package statussync

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/internal/reslist"
)

// scratch is the storage a Cache builds the status a SetPodStatus would
// store in, reused from call to call, so that setting a status the cache
// already holds allocates nothing: the status is copied into it, brought
// into the form the cache stores, compared, and copied out only when it is
// a new version.
type scratch struct {
	st        v1.PodStatus
	start     metav1.Time
	conds     []v1.PodCondition
	hostIPs   []v1.HostIP
	podIPs    []v1.PodIP
	lists     [3][]v1.ContainerStatus
	resources v1.ResourceRequirements
	allocated v1.ResourceList
	health    []v1.PodVolumeHealth
}

// copyOf sets the scratch status to a copy of src, equal to
// src.DeepCopy() field for field, in the scratch's storage (the rarer
// fields in new memory, as DeepCopy copies them), and returns it.
func (s *scratch) copyOf(src *v1.PodStatus) *v1.PodStatus {
	rest := *src
	rest.Conditions, rest.HostIPs, rest.PodIPs, rest.StartTime = nil, nil, nil, nil
	rest.InitContainerStatuses, rest.ContainerStatuses, rest.EphemeralContainerStatuses = nil, nil, nil
	rest.Resources, rest.AllocatedResources = nil, nil
	s.st = v1.PodStatus{}
	rest.DeepCopyInto(&s.st)
	st := &s.st
	if src.Conditions != nil {
		s.conds = append(s.conds[:0], src.Conditions...)
		st.Conditions = nonNil(s.conds)
	}
	if src.HostIPs != nil {
		s.hostIPs = append(s.hostIPs[:0], src.HostIPs...)
		st.HostIPs = nonNil(s.hostIPs)
	}
	if src.PodIPs != nil {
		s.podIPs = append(s.podIPs[:0], src.PodIPs...)
		st.PodIPs = nonNil(s.podIPs)
	}
	if src.StartTime != nil {
		s.start = *src.StartTime
		st.StartTime = &s.start
	}
	for k, from := range [3][]v1.ContainerStatus{src.InitContainerStatuses, src.ContainerStatuses, src.EphemeralContainerStatuses} {
		if from == nil {
			continue
		}
		to := growStatuses(s.lists[k], len(from))
		s.lists[k] = to
		for i := range from {
			copyContainerStatus(&to[i], &from[i])
		}
		to = nonNil(to)
		switch k {
		case 0:
			st.InitContainerStatuses = to
		case 1:
			st.ContainerStatuses = to
		default:
			st.EphemeralContainerStatuses = to
		}
	}
	if src.Resources != nil {
		copyResources(&s.resources, src.Resources)
		st.Resources = &s.resources
	}
	if src.AllocatedResources != nil {
		s.allocated = reslist.Copy(s.allocated, src.AllocatedResources)
		st.AllocatedResources = s.allocated
	}
	return st
}

// nonNil returns l, or an empty list when l is nil: a copy of an empty
// list is empty, not none.
func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// growStatuses returns l with length n, keeping its elements' storage.
func growStatuses(l []v1.ContainerStatus, n int) []v1.ContainerStatus {
	if cap(l) < n {
		g := make([]v1.ContainerStatus, n)
		copy(g, l[:cap(l)])
		return g
	}
	return l[:n]
}

// copyResources sets *dst to a copy of src in dst's storage.
func copyResources(dst, src *v1.ResourceRequirements) {
	claims := dst.Claims
	dst.Limits, dst.Requests = reslist.Copy(dst.Limits, src.Limits), reslist.Copy(dst.Requests, src.Requests)
	dst.Claims = nil
	if src.Claims != nil {
		dst.Claims = nonNil(append(claims[:0], src.Claims...))
	}
}

// copyContainerStatus sets *dst to a copy of src, equal to DeepCopy's,
// reusing what dst points to (the rarer fields in new memory).
func copyContainerStatus(dst, src *v1.ContainerStatus) {
	keep := *dst
	rest := *src
	rest.State, rest.LastTerminationState = v1.ContainerState{}, v1.ContainerState{}
	rest.Started, rest.Resources, rest.AllocatedResources, rest.VolumeMounts, rest.User, rest.StopSignal = nil, nil, nil, nil, nil, nil
	*dst = v1.ContainerStatus{}
	rest.DeepCopyInto(dst)
	copyState(&dst.State, &keep.State, &src.State)
	copyState(&dst.LastTerminationState, &keep.LastTerminationState, &src.LastTerminationState)
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
		copyResources(dst.Resources, src.Resources)
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
				dst.User.Linux.SupplementalGroups = nonNil(append(groups[:0], u.Linux.SupplementalGroups...))
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
		dst.VolumeMounts = nonNil(ms)
	}
}

// copyState sets *dst to a copy of src, reusing what keep points to.
func copyState(dst, keep, src *v1.ContainerState) {
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

// reuse returns p, or a new value when p is nil.
func reuse[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}
