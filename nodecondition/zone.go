package nodecondition

import (
	"math"
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

// bucket is a token bucket with burst 1 and explicit time, the zone's
// NoExecute tainting limiter. A rate of 0 never allows.
type bucket struct {
	qps    float64
	tokens float64
	last   time.Time
}

func newBucket(qps float64, now time.Time) bucket {
	return bucket{qps: qps, tokens: 1, last: now}
}

func (b *bucket) refill(now time.Time) {
	if b.qps <= 0 {
		b.tokens = 0
		return
	}
	if now.After(b.last) {
		b.tokens += b.qps * now.Sub(b.last).Seconds()
		if b.tokens > 1 {
			b.tokens = 1
		}
		b.last = now
	}
}

func (b *bucket) take(now time.Time) bool {
	if math.IsInf(b.qps, 1) {
		return true
	}
	b.refill(now)
	if b.qps > 0 && b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}

// swap replaces the limiter by one of rate qps; the new one starts full only
// if the old one had a token to give.
func (b *bucket) swap(qps float64, now time.Time) {
	if b.qps == qps {
		return
	}
	had := b.take(now)
	*b = bucket{qps: qps, last: now}
	if had && qps > 0 {
		b.tokens = 1
	}
}

// queue is a zone's rate-limited NoExecute tainting queue. A processed item
// stays in the de-duplication set until removed.
type queue struct {
	items []queued
	set   map[string]bool // true while queued, false once processed
}

type queued struct {
	node string
	at   time.Time
}

func (q *queue) add(node string, now time.Time) {
	if _, ok := q.set[node]; ok {
		return
	}
	q.set[node] = true
	q.insert(queued{node, now})
}

func (q *queue) insert(it queued) {
	i := len(q.items)
	for i > 0 && q.items[i-1].at.After(it.at) {
		i--
	}
	q.items = append(q.items, queued{})
	copy(q.items[i+1:], q.items[i:])
	q.items[i] = it
}

func (q *queue) remove(node string) {
	queuedNow, ok := q.set[node]
	if !ok {
		return
	}
	delete(q.set, node)
	if !queuedNow {
		return
	}
	for i := range q.items {
		if q.items[i].node == node {
			q.items = append(q.items[:i], q.items[i+1:]...)
			return
		}
	}
}
