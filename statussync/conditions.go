package statussync

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/internal/podcond"
	"github.com/nodestate/nodestate/internal/statuseq"
	"github.com/nodestate/nodestate/podphase"
)

// Ownership is who decides a pod condition (spec section 2).
type Ownership uint8

const (
	// NotOwned conditions belong to others: the API's value is kept and
	// the kubelet's copy is ignored.
	NotOwned Ownership = iota
	// Owned conditions are the kubelet's: its value replaces the API's.
	Owned
	// Shared is DisruptionTarget: the API's value is kept, except when the
	// kubelet moves the pod to a terminal phase with nothing running.
	Shared
)

// OwnershipOf returns who decides conditions of type t under o's feature
// gates: the kubelet-owned types are podphase's ([podphase.Options.KubeletOwned],
// one list for both packages), DisruptionTarget is Shared.
func (o Options) OwnershipOf(t v1.PodConditionType) Ownership {
	switch {
	case t == v1.DisruptionTarget:
		return Shared
	case o.podphase().KubeletOwned(t):
		return Owned
	}
	return NotOwned
}

// updateTransitionTimes sets the lastTransitionTime of the conditions of s
// the status manager maintains ([podphase.TransitionTime]).
func updateTransitionTimes(old, s *v1.PodStatus, now time.Time) {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if t, ok := podphase.TransitionTime(old.Conditions, *c, now); ok {
			c.LastTransitionTime = t
		}
	}
}

// EqualByKubelet reports whether two statuses agree on everything the
// kubelet owns (spec section 6.1): the owned and shared conditions by type,
// status, reason and message, and every other field except the conditions
// and the resource claim statuses others write. It is the test that decides
// whether a new status is a new version and whether the API has drifted.
//
// A nil status is an empty one.
func (o Options) EqualByKubelet(old, new *v1.PodStatus) bool {
	if old == nil {
		old = &v1.PodStatus{}
	}
	if new == nil {
		new = &v1.PodStatus{}
	}
	var oldN, newN int
	for i := range old.Conditions {
		if o.OwnershipOf(old.Conditions[i].Type) != NotOwned {
			oldN++
		}
	}
	for i := range new.Conditions {
		c := &new.Conditions[i]
		if o.OwnershipOf(c.Type) == NotOwned {
			continue
		}
		newN++
		oc := podcond.Find(old.Conditions, c.Type)
		if oc == nil || oc.Status != c.Status || oc.Reason != c.Reason || oc.Message != c.Message {
			return false
		}
	}
	if oldN != newN {
		return false
	}
	a, b := *old, *new
	a.Conditions, b.Conditions = nil, nil
	a.ResourceClaimStatuses, b.ResourceClaimStatuses = nil, nil
	a.ExtendedResourceClaimStatus, b.ExtendedResourceClaimStatus = nil, nil
	a.NodeAllocatableResourceClaimStatuses, b.NodeAllocatableResourceClaimStatuses = nil, nil
	return statuseq.Equal(&a, &b)
}
