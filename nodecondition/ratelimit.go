package nodecondition

import (
	"math"
	"time"
)

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
