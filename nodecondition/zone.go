package nodecondition

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
)

// ZoneState is the node-lifecycle controller's disruption state of a zone.
type ZoneState uint8

// The zone states.
const (
	ZoneInitial ZoneState = iota
	ZoneNormal
	ZonePartialDisruption
	ZoneFullDisruption
)

// String names the state as the controller logs it, for example "FullDisruption".
func (z ZoneState) String() string {
	switch z {
	case ZoneInitial:
		return "Initial"
	case ZoneNormal:
		return "Normal"
	case ZonePartialDisruption:
		return "PartialDisruption"
	case ZoneFullDisruption:
		return "FullDisruption"
	}
	return "ZoneState(?)"
}

// ComputeZoneState returns the state of a zone with the given counts of ready
// and not-ready nodes: FullDisruption with no ready node and at least one not
// ready; PartialDisruption with more than 2 not ready and a not-ready share of
// at least threshold; Normal otherwise.
func ComputeZoneState(ready, notReady int, threshold float64) ZoneState {
	switch {
	case ready == 0 && notReady > 0:
		return ZoneFullDisruption
	case notReady > 2 && float32(notReady)/float32(notReady+ready) >= float32(threshold):
		return ZonePartialDisruption
	default:
		return ZoneNormal
	}
}

// ZoneKey returns the zone key of a node from its labels: the topology region
// and zone labels, falling back to the beta failure-domain labels, joined as
// "region/zone", or the zone alone when there is no region; "" when the node
// has neither. (Label values cannot hold a "/", so keys do not collide.)
func ZoneKey(labels map[string]string) string {
	region, ok := labels[v1.LabelTopologyRegion]
	if !ok {
		region = labels[v1.LabelFailureDomainBetaRegion]
	}
	zone, ok := labels[v1.LabelTopologyZone]
	if !ok {
		zone = labels[v1.LabelFailureDomainBetaZone]
	}
	if region == "" {
		return zone
	}
	return region + "/" + zone
}

func (c *Controller) zone(key string, now time.Time) *zoneRecord {
	z, ok := c.zones[key]
	if !ok {
		z = &zoneRecord{active: true, state: ZoneInitial, limiter: newBucket(c.opts.EvictionRate, now), q: queue{set: map[string]bool{}}}
		c.zones[key] = z
		i := sort.SearchStrings(c.zkeys, key)
		c.zkeys = append(c.zkeys, "")
		copy(c.zkeys[i+1:], c.zkeys[i:])
		c.zkeys[i] = key
	}
	return z
}

// handleDisruption updates zone states and limiters after a pass.
func (c *Controller) handleDisruption(now time.Time) {
	allAreFull := true
	for _, k := range c.zkeys {
		z := c.zones[k]
		if z.counted == 0 {
			continue
		}
		if ComputeZoneState(z.counted-z.notReady, z.notReady, c.opts.UnhealthyZoneThreshold) != ZoneFullDisruption {
			allAreFull = false
		}
	}
	allWereFull := true
	for _, k := range c.zkeys {
		z := c.zones[k]
		if !z.active {
			continue
		}
		if z.counted == 0 {
			z.active, z.state = false, ZoneInitial
			continue
		}
		if z.state != ZoneFullDisruption {
			allWereFull = false
		}
	}
	if allAreFull && allWereFull {
		return
	}
	if allAreFull {
		for _, n := range c.order {
			c.removeTaint(n, TaintNotReady, v1.TaintEffectNoExecute)
			c.removeTaint(n, TaintUnreachable, v1.TaintEffectNoExecute)
			if z, ok := c.zones[n.zone]; ok {
				z.q.remove(n.name)
			}
		}
		for _, k := range c.zkeys {
			if z := c.zones[k]; z.active {
				z.limiter.swap(0, now)
				c.setState(k, z, ZoneFullDisruption)
			}
		}
		return
	}
	if allWereFull {
		for _, n := range c.order {
			if n.seen {
				n.probe, n.readyTransition = now, now
			}
		}
		for _, k := range c.zkeys {
			z := c.zones[k]
			if !z.active {
				continue
			}
			st := ComputeZoneState(z.counted-z.notReady, z.notReady, c.opts.UnhealthyZoneThreshold)
			z.limiter.swap(c.rateFor(st, z.counted), now)
			c.setState(k, z, st)
		}
		return
	}
	for _, k := range c.zkeys {
		z := c.zones[k]
		if !z.active {
			continue
		}
		st := ComputeZoneState(z.counted-z.notReady, z.notReady, c.opts.UnhealthyZoneThreshold)
		if st == z.state {
			continue
		}
		z.limiter.swap(c.rateFor(st, z.counted), now)
		c.setState(k, z, st)
	}
}

func (c *Controller) setState(k string, z *zoneRecord, st ZoneState) {
	if z.state != st {
		c.pass.Zones = append(c.pass.Zones, ZoneChange{Zone: k, From: z.state, To: st})
		z.state = st
	}
}

func (c *Controller) rateFor(st ZoneState, size int) float64 {
	switch st {
	case ZonePartialDisruption:
		if size > c.opts.LargeClusterThreshold {
			return c.opts.SecondaryEvictionRate
		}
		return 0
	default:
		return c.opts.EvictionRate
	}
}
