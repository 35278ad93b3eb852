package events

import (
	"hash/maphash"
	"math/bits"

	v1 "k8s.io/api/core/v1"
)

// Cache keys are structs of strings, so two different events never share a key (client-go
// concatenates fields without separators and can collide). Their hashes are computed together:
// the three keys of an event share the object and type fields, which are hashed once. The LRU
// compares keys in full, so the hash only has to spread: it leaves out the fields that almost
// never tell two events of one object apart (kind and apiVersion, implied by the UID; the
// component and the reporting controller and instance, one per recorder), which at worst makes
// events that differ only there share a hash chain.

func mix(sum, x uint64) uint64 {
	return bits.RotateLeft64((sum^x)*0x9e3779b97f4a7c15, 31)
}

// sums holds the hashes of an event's keys.
type sums struct {
	base, reason uint64 // host, object and type; the reason alone
	agg, full    uint64
}

func (c *Correlator) sumsOf(ev *v1.Event, withAgg bool) sums {
	seed := c.seed
	o := &ev.InvolvedObject
	var b uint64
	for _, f := range [...]string{ev.Source.Host, o.Namespace, o.Name, string(o.UID), ev.Type} {
		b = mix(b, maphash.String(seed, f))
	}
	r := maphash.String(seed, ev.Reason)
	s := sums{base: b, reason: r}
	br := mix(b, r)
	s.full = mix(mix(br, maphash.String(seed, o.FieldPath)), maphash.String(seed, ev.Message))
	if withAgg {
		s.agg = mix(br, 2)
	}
	return s
}

// aggLogSum is the hash of the dedup key of an aggregate event.
func aggLogSum(agg uint64) uint64 { return mix(agg, 1) }

func (c *Correlator) spamSum(s sums) uint64 {
	if c.opts.SpamFilter.ByReason {
		return mix(s.base, s.reason)
	}
	return s.base
}
