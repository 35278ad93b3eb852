package nodecondition

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/kubeversion"
)

// Monitor runs one health pass at now (monitorNodeHealth): it marks nodes
// whose heartbeats stopped Unknown, decides NoExecute taints, lists the pods
// to mark not ready and updates the zone states. live is the live Lease lookup
// of the lease circuit breaker; nil means the controller's view is current,
// so the lookup would agree with it. With nothing changing it allocates nothing.
func (c *Controller) Monitor(now time.Time, live LeaseLookup) (Pass, error) {
	if !c.initialized() {
		return Pass{}, notInit("Controller", "Monitor")
	}
	if err := c.checkTime("Monitor", now); err != nil {
		return Pass{}, err
	}
	c.pass.reset(now)
	for _, k := range c.zkeys {
		z := c.zones[k]
		z.counted, z.notReady = 0, 0
	}
	for _, n := range c.order {
		if c.leasePending() {
			c.pass.Skipped = append(c.pass.Skipped, n.name)
			continue
		}
		if !n.seen {
			// A node seen for the first time in a zone with no state gives the
			// zone a new limiter and an empty queue.
			if z := c.zone(n.zone, now); !z.active {
				z.active, z.state, z.limiter = true, ZoneInitial, newBucket(c.opts.EvictionRate, now)
				z.q.items = z.q.items[:0]
				clear(z.q.set)
			}
		}
		observed, skip := c.updateHealth(now, n, live)
		if skip {
			c.pass.Skipped = append(c.pass.Skipped, n.name)
			continue
		}
		cur := readyOf(n.conds)
		if !n.excluded {
			z := c.zone(n.zone, now)
			if !z.active {
				z.active, z.state = true, ZoneInitial
			}
			z.counted++
			if cur == nil || cur.Status != v1.ConditionTrue {
				z.notReady++
			}
		}
		if cur == nil {
			continue
		}
		if c.opts.Version.AtLeast(kubeversion.V1_34) {
			c.taintDecision(now, n, cur.Status)
		} else {
			c.taintDecision(now, n, observed) // the condition the pass started with (docs/versions.md NC-V1)
		}
		switch {
		case observed == v1.ConditionTrue && cur.Status != v1.ConditionTrue:
			c.pass.Events = append(c.pass.Events, NodeEvent{Node: n.name, Reason: ReasonNodeNotReady, Message: "Node " + n.name + " status is now: NodeNotReady"})
			c.markPods(n)
		case n.retryPodsNotReady && cur.Status != v1.ConditionTrue:
			c.markPods(n)
		}
		n.retryPodsNotReady = false
	}
	c.handleDisruption(now)
	return c.pass.take(), nil
}

// leasePending is the controller-wide readiness check of the lease circuit
// breaker: while a live Lease resourceVersion is recorded that the cached
// Lease of its node does not show yet, every node is skipped.
func (c *Controller) leasePending() bool {
	if !c.opts.LeaseCircuitBreaker || !c.pendingLeaseUsed {
		return false
	}
	if n, ok := c.nodes[c.pendingLease]; ok && n.lease.present && n.lease.rv != c.pendingLeaseRV {
		return true
	}
	c.pendingLeaseUsed = false
	return false
}

// updateHealth is tryUpdateNodeHealth. It returns the Ready status observed at
// the start of the pass ("" when missing) and whether the node is skipped.
func (c *Controller) updateHealth(now time.Time, n *nodeRecord, live LeaseLookup) (observed v1.ConditionStatus, skip bool) {
	cur := readyOf(n.conds)
	grace := c.opts.GracePeriod
	observedCond := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionUnknown,
		LastHeartbeatTime: metav1.NewTime(n.created), LastTransitionTime: metav1.NewTime(n.created)}
	if cur == nil {
		grace = c.opts.StartupGracePeriod
		if n.seen {
			// The saved status is overwritten before the comparison below,
			// so a Ready condition that disappears does not reset the probe.
			n.hasSavedReady = false
		} else {
			n.seen, n.probe, n.readyTransition, n.hasSavedReady, n.savedLease = true, n.created, n.created, false, leaseView{}
		}
	} else {
		observedCond = *cur
	}
	// The lease comparison below uses the record as it was before a branch
	// replaced it: a replaced record keeps no lease, so the next pass counts
	// any lease as a renewal (one extra pass of credit after a heartbeat).
	saved := n.savedLease
	switch {
	case !n.seen:
		n.seen, n.probe, n.readyTransition = true, now, now
		n.savedReady, n.hasSavedReady, n.savedLease = *cur, true, leaseView{}
	case !n.hasSavedReady && cur != nil:
		n.probe, n.readyTransition = now, now
		n.savedReady, n.hasSavedReady, n.savedLease = *cur, true, leaseView{}
	case n.hasSavedReady && cur != nil && !n.savedReady.LastHeartbeatTime.Equal(&cur.LastHeartbeatTime):
		if !n.savedReady.LastTransitionTime.Equal(&cur.LastTransitionTime) {
			n.readyTransition = now
		}
		n.probe = now
		n.savedReady, n.savedLease = *cur, leaseView{}
	}
	if n.lease.present && (!saved.present || saved.renew.Before(n.lease.renew)) {
		n.savedLease = n.lease
		n.probe = now
	}
	if !now.After(n.probe.Add(grace)) {
		return observedCond.Status, false
	}
	if c.opts.LeaseCircuitBreaker && live != nil {
		rv, found, err := live.LiveLease(n.name)
		if err != nil {
			return observedCond.Status, true
		}
		savedRV := ""
		if n.savedLease.present {
			savedRV = n.savedLease.rv
		}
		if found && rv != savedRV {
			c.pendingLease, c.pendingLeaseRV, c.pendingLeaseUsed = n.name, rv, true
			return observedCond.Status, true
		}
	}
	// Mark a copy: it is written, and becomes the view, only if Ready
	// changed; otherwise the marking is dropped like the controller's copy.
	ts := metav1.NewTime(now)
	c.scratch = append(c.scratch[:0], n.conds...)
	for _, t := range [...]v1.NodeConditionType{v1.NodeReady, v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
		cond := condOf(c.scratch, t)
		if cond == nil {
			c.scratch = append(c.scratch, v1.NodeCondition{Type: t, Status: v1.ConditionUnknown, Reason: ReasonNodeStatusNeverUpdated,
				Message: MessageNodeNeverUpdated, LastHeartbeatTime: metav1.NewTime(n.created), LastTransitionTime: ts})
		} else if cond.Status != v1.ConditionUnknown {
			cond.Status, cond.Reason, cond.Message, cond.LastTransitionTime = v1.ConditionUnknown, ReasonNodeStatusUnknown, MessageNodeStatusUnknown, ts
		}
	}
	if cur = readyOf(c.scratch); !conditionEqual(cur, &observedCond) {
		n.conds = append(n.conds[:0], c.scratch...)
		cur = readyOf(n.conds)
		c.pass.Writes = append(c.pass.Writes, ConditionWrite{Node: n.name, Conditions: n.conds})
		n.savedReady, n.hasSavedReady, n.readyTransition = *cur, true, now
		c.noScheduleTaints(now, n)
	}
	return observedCond.Status, false
}

func conditionEqual(a, b *v1.NodeCondition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.LastHeartbeatTime.Equal(&b.LastHeartbeatTime) && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}
