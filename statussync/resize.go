package statussync

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Reasons of the PodResizePending condition.
const (
	ResizeReasonDeferred   = "Deferred"
	ResizeReasonInfeasible = "Infeasible"
)

// resizeConds are the in-place resize conditions of one pod (spec section
// 11); the kubelet puts them into the statuses it generates.
type resizeConds struct {
	pending, inProgress *v1.PodCondition
}

func resizeCondition(t v1.PodConditionType, old *v1.PodCondition, reason, message string, gen int64, now time.Time) *v1.PodCondition {
	c := &v1.PodCondition{Type: t, Status: v1.ConditionTrue, Reason: reason, Message: message,
		ObservedGeneration: gen, LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
	if old != nil && old.Reason == reason {
		c.LastTransitionTime = old.LastTransitionTime
	}
	return c
}

func (c *Cache) resizeOf(uid types.UID) *resizeConds {
	if c.resize == nil {
		c.resize = make(map[types.UID]*resizeConds)
	}
	r := c.resize[uid]
	if r == nil {
		r = &resizeConds{}
		c.resize[uid] = r
	}
	return r
}

// SetResizePending records that a resize of pod uid waits: reason
// Infeasible, or Deferred for any other reason. It reports whether the
// condition is new or its reason or observedGeneration changed.
func (c *Cache) SetResizePending(uid types.UID, reason, message string, generation int64, now time.Time) bool {
	if reason != ResizeReasonInfeasible {
		reason = ResizeReasonDeferred
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.resizeOf(uid)
	old := r.pending
	r.pending = resizeCondition(v1.PodResizePending, old, reason, message, generation, now)
	return old == nil || old.Reason != reason || old.ObservedGeneration != generation
}

// SetResizeInProgress records that a resize of pod uid is being actuated. On
// an existing condition, empty reason and message keep the old ones, and the
// old observedGeneration is always kept (clear the condition to change it).
// It returns the condition's observedGeneration and whether it changed
// (probe and transition times aside).
func (c *Cache) SetResizeInProgress(uid types.UID, reason, message string, generation int64, now time.Time) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.resizeOf(uid)
	old := r.inProgress
	if old != nil {
		if reason == "" && message == "" {
			reason, message = old.Reason, old.Message
		}
		generation = old.ObservedGeneration
	}
	n := resizeCondition(v1.PodResizeInProgress, old, reason, message, generation, now)
	r.inProgress = n
	changed := old == nil || old.Reason != n.Reason || old.Message != n.Message || old.Status != n.Status || old.ObservedGeneration != n.ObservedGeneration
	return n.ObservedGeneration, changed
}

// ClearResizePending removes pod uid's PodResizePending condition and
// reports whether there was one.
func (c *Cache) ClearResizePending(uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.resize[uid]
	if r == nil || r.pending == nil {
		return false
	}
	r.pending = nil
	return true
}

// ClearResizeInProgress removes pod uid's PodResizeInProgress condition and
// returns its observedGeneration and true, or (0, false) when there was
// none.
func (c *Cache) ClearResizeInProgress(uid types.UID) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.resize[uid]
	if r == nil || r.inProgress == nil {
		return 0, false
	}
	gen := r.inProgress.ObservedGeneration
	r.inProgress = nil
	return gen, true
}

// ResizeConditions returns copies of pod uid's resize conditions: pending
// first, then in progress.
func (c *Cache) ResizeConditions(uid types.UID) []v1.PodCondition {
	c.mu.RLock()
	defer c.mu.RUnlock()
	r := c.resize[uid]
	if r == nil {
		return nil
	}
	var out []v1.PodCondition
	for _, p := range [...]*v1.PodCondition{r.pending, r.inProgress} {
		if p != nil {
			out = append(out, *p.DeepCopy())
		}
	}
	return out
}

// IsResizeDeferred reports whether pod uid's resize waits with reason
// Deferred.
func (c *Cache) IsResizeDeferred(uid types.UID) bool {
	return c.pendingReason(uid) == ResizeReasonDeferred
}

// IsResizeInfeasible reports whether pod uid's resize waits with reason
// Infeasible.
func (c *Cache) IsResizeInfeasible(uid types.UID) bool {
	return c.pendingReason(uid) == ResizeReasonInfeasible
}

func (c *Cache) pendingReason(uid types.UID) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if r := c.resize[uid]; r != nil && r.pending != nil {
		return r.pending.Reason
	}
	return ""
}

// BackfillResizeConditions rebuilds the resize conditions from the API's
// copies of the pods, as after a kubelet restart.
func (c *Cache) BackfillResizeConditions(pods []*v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		for i := range pod.Status.Conditions {
			cond := pod.Status.Conditions[i].DeepCopy()
			switch cond.Type {
			case v1.PodResizePending:
				c.resizeOf(pod.UID).pending = cond
			case v1.PodResizeInProgress:
				c.resizeOf(pod.UID).inProgress = cond
			}
		}
	}
}
