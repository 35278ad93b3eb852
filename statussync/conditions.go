package statussync

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/internal/podcond"
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

// OwnershipOf returns who decides conditions of type t with the 1.37
// default gates (PodReadyToStartContainers GA, AllContainersRestarting on).
func (o Options) OwnershipOf(t v1.PodConditionType) Ownership {
	switch t {
	case v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
		v1.PodResizeInProgress, v1.PodResizePending, v1.PodReadyToStartContainers:
		return Owned
	case v1.AllContainersRestarting:
		if o.Features.RestartAllContainersOnContainerExits {
			return Owned
		}
	case v1.DisruptionTarget:
		return Shared
	}
	return NotOwned
}

// ltTypes are the conditions whose lastTransitionTime the cache maintains,
// in the kubelet's order (spec section 6, step 3).
var ltTypes = [...]v1.PodConditionType{
	v1.ContainersReady, v1.PodReady, v1.PodInitialized, v1.PodReadyToStartContainers,
	v1.PodScheduled, v1.DisruptionTarget, v1.AllContainersRestarting,
}

// updateTransitionTimes sets the lastTransitionTime of the maintained
// conditions of s: now, unless old has the same type with the same status.
func updateTransitionTimes(old, s *v1.PodStatus, now time.Time) {
	for _, t := range ltTypes {
		c := podcond.Find(s.Conditions, t)
		if c == nil {
			continue
		}
		if oc := podcond.Find(old.Conditions, t); oc != nil && oc.Status == c.Status {
			c.LastTransitionTime = oc.LastTransitionTime
		} else {
			c.LastTransitionTime = metav1.NewTime(now)
		}
	}
}

// EqualByKubelet reports whether two statuses agree on everything the
// kubelet owns (spec section 6.1): the owned and shared conditions by type,
// status, reason and message, and every other field except the conditions
// and the resource claim statuses others write. It is the test that decides
// whether a new status is a new version and whether the API has drifted.
func (o Options) EqualByKubelet(old, new *v1.PodStatus) bool {
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
	return equality.Semantic.DeepEqual(a, b)
}
