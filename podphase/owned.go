package podphase

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/internal/podcond"
)

// KubeletOwned reports whether the kubelet owns conditions of type t under
// o's feature gates: its value replaces the API server's when it writes a
// pod's status (spec/podphase.md section 8.1). PodScheduled, Ready,
// Initialized, ContainersReady, PodResizeInProgress, PodResizePending and
// PodReadyToStartContainers always are; AllContainersRestarting is when
// RestartAllContainersOnContainerExits is on. DisruptionTarget is not: the
// kubelet writes it only when it ends a pod (statussync's Shared).
func (o Options) KubeletOwned(t v1.PodConditionType) bool { return o.kubeletOwned(t) }

// OwnedConditionTypes returns the condition types [Options.KubeletOwned]
// reports as owned under o's feature gates, in the kubelet's order. The
// caller owns the slice.
func (o Options) OwnedConditionTypes() []v1.PodConditionType {
	out := make([]v1.PodConditionType, 0, len(knownTypes))
	for _, t := range knownTypes {
		if o.kubeletOwned(t) {
			out = append(out, t)
		}
	}
	return out
}

var knownTypes = [...]v1.PodConditionType{
	v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
	v1.PodResizeInProgress, v1.PodResizePending, v1.PodReadyToStartContainers,
	v1.AllContainersRestarting, v1.DisruptionTarget,
}

// TransitionTime returns the lastTransitionTime the kubelet's status
// manager gives condition c of a new status whose previous conditions are
// old (spec/podphase.md section 8.3): the old time when old has a condition
// of c's type with the same status, now otherwise. ok is false for the
// types whose time the status manager leaves as it is (every type but
// ContainersReady, Ready, Initialized, PodReadyToStartContainers,
// PodScheduled, DisruptionTarget and AllContainersRestarting).
func TransitionTime(old []v1.PodCondition, c v1.PodCondition, now time.Time) (t metav1.Time, ok bool) {
	ok = stamp(old, &c, now)
	return c.LastTransitionTime, ok
}

// stamp sets c's lastTransitionTime as TransitionTime gives it, and
// reports whether c's type is one the status manager stamps.
func stamp(old []v1.PodCondition, c *v1.PodCondition, now time.Time) bool {
	if !stampedType(c.Type) {
		return false
	}
	if prev := podcond.Find(old, c.Type); prev != nil && prev.Status == c.Status {
		c.LastTransitionTime = prev.LastTransitionTime
	} else {
		c.LastTransitionTime = metav1.NewTime(now)
	}
	return true
}
