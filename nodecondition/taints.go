package nodecondition

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func hasTaint(ts []v1.Taint, key string, effect v1.TaintEffect) bool {
	for i := range ts {
		if ts[i].Key == key && ts[i].Effect == effect {
			return true
		}
	}
	return false
}

func (c *Controller) addTaint(n *nodeRecord, t v1.Taint) {
	if hasTaint(n.taints, t.Key, t.Effect) {
		return
	}
	n.taints = append(n.taints, t)
	c.pass.Taints = append(c.pass.Taints, TaintChange{Node: n.name, Taint: t, Added: true})
}

func (c *Controller) removeTaint(n *nodeRecord, key string, effect v1.TaintEffect) {
	for i := range n.taints {
		if n.taints[i].Key == key && n.taints[i].Effect == effect {
			t := n.taints[i]
			n.taints = append(n.taints[:i], n.taints[i+1:]...)
			c.pass.Taints = append(c.pass.Taints, TaintChange{Node: n.name, Taint: t})
			return
		}
	}
}

func noExecute(key string, now time.Time) v1.Taint {
	ts := metav1.NewTime(now)
	return v1.Taint{Key: key, Effect: v1.TaintEffectNoExecute, TimeAdded: &ts}
}

// taintDecision is processTaintBaseEviction for ready: the Ready status the
// pass ends with, or before 1.34 the one it started with (Monitor).
func (c *Controller) taintDecision(now time.Time, n *nodeRecord, ready v1.ConditionStatus) {
	z := c.zone(n.zone, now)
	switch ready {
	case v1.ConditionFalse:
		c.noExecuteFor(now, n, z, TaintNotReady, TaintUnreachable)
	case v1.ConditionUnknown:
		c.noExecuteFor(now, n, z, TaintUnreachable, TaintNotReady)
	case v1.ConditionTrue:
		c.removeTaint(n, TaintNotReady, v1.TaintEffectNoExecute)
		c.removeTaint(n, TaintUnreachable, v1.TaintEffectNoExecute)
		z.q.remove(n.name)
	}
}

// noExecuteFor moves node n towards the NoExecute taint key: a node that has
// the other one gets the swap at once; otherwise it is queued for the
// zone's rate-limited tainting pass (re-queued when it lacks key).
func (c *Controller) noExecuteFor(now time.Time, n *nodeRecord, z *zoneRecord, key, other string) {
	if hasTaint(n.taints, other, v1.TaintEffectNoExecute) {
		c.removeTaint(n, other, v1.TaintEffectNoExecute)
		c.addTaint(n, noExecute(key, now))
		return
	}
	if !hasTaint(n.taints, key, v1.TaintEffectNoExecute) {
		z.q.remove(n.name)
	}
	z.q.add(n.name, now)
}

// Taint runs one NoExecute tainting pass at now (doNoExecuteTaintingPass):
// each zone's queue hands out nodes as its token bucket allows, and each
// node gets the not-ready or unreachable NoExecute taint its Ready calls for.
func (c *Controller) Taint(now time.Time) (Pass, error) {
	if !c.initialized() {
		return Pass{}, notInit("Controller", "Taint")
	}
	if err := c.checkTime("Taint", now); err != nil {
		return Pass{}, err
	}
	c.pass.reset(now)
	for _, k := range c.zkeys {
		z := c.zones[k]
		for len(z.q.items) > 0 && !z.q.items[0].at.After(now) {
			if !z.limiter.take(now) {
				break
			}
			it := z.q.items[0]
			z.q.items = append(z.q.items[:0], z.q.items[1:]...)
			z.q.set[it.node] = false
			n := c.nodes[it.node]
			if n == nil {
				continue
			}
			r := readyOf(n.conds)
			switch {
			case r == nil:
				z.q.set[it.node] = true
				z.q.insert(queued{it.node, now.Add(TaintRetryDelay)})
			case r.Status == v1.ConditionFalse:
				c.addTaint(n, noExecute(TaintNotReady, now))
				c.removeTaint(n, TaintUnreachable, v1.TaintEffectNoExecute)
			case r.Status == v1.ConditionUnknown:
				c.addTaint(n, noExecute(TaintUnreachable, now))
				c.removeTaint(n, TaintNotReady, v1.TaintEffectNoExecute)
			}
		}
	}
	return c.pass.take(), nil
}

var noScheduleKeys = [...]string{TaintNotReady, TaintUnreachable, TaintMemoryPressure, TaintDiskPressure, TaintPIDPressure, TaintNetworkUnavailable, TaintUnschedulable}

// noScheduleTaints is the node-update handler: the NoSchedule taints follow
// the conditions (and spec.unschedulable); only the controller's keys change.
func (c *Controller) noScheduleTaints(now time.Time, n *nodeRecord) {
	var want [len(noScheduleKeys)]bool
	for i := range n.conds {
		cd := &n.conds[i]
		switch {
		case cd.Type == v1.NodeReady && cd.Status == v1.ConditionFalse:
			want[0] = true
		case cd.Type == v1.NodeReady && cd.Status == v1.ConditionUnknown:
			want[1] = true
		case cd.Type == v1.NodeMemoryPressure && cd.Status == v1.ConditionTrue:
			want[2] = true
		case cd.Type == v1.NodeDiskPressure && cd.Status == v1.ConditionTrue:
			want[3] = true
		case cd.Type == v1.NodePIDPressure && cd.Status == v1.ConditionTrue:
			want[4] = true
		case cd.Type == v1.NodeNetworkUnavailable && cd.Status == v1.ConditionTrue:
			want[5] = true
		}
	}
	want[6] = n.unschedulable
	for i, k := range noScheduleKeys {
		has := hasTaint(n.taints, k, v1.TaintEffectNoSchedule)
		switch {
		case want[i] && !has:
			c.addTaint(n, v1.Taint{Key: k, Effect: v1.TaintEffectNoSchedule})
		case !want[i] && has:
			c.removeTaint(n, k, v1.TaintEffectNoSchedule)
		}
	}
}
