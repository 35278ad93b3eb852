package statussync

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/internal/reslist"
	"github.com/nodestate/nodestate/internal/statuscopy"
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
		st.Conditions = statuscopy.NonNil(s.conds)
	}
	if src.HostIPs != nil {
		s.hostIPs = append(s.hostIPs[:0], src.HostIPs...)
		st.HostIPs = statuscopy.NonNil(s.hostIPs)
	}
	if src.PodIPs != nil {
		s.podIPs = append(s.podIPs[:0], src.PodIPs...)
		st.PodIPs = statuscopy.NonNil(s.podIPs)
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
			statuscopy.ContainerStatus(&to[i], &from[i])
		}
		to = statuscopy.NonNil(to)
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
		statuscopy.Resources(&s.resources, src.Resources)
		st.Resources = &s.resources
	}
	if src.AllocatedResources != nil {
		s.allocated = reslist.Copy(s.allocated, src.AllocatedResources)
		st.AllocatedResources = s.allocated
	}
	return st
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
