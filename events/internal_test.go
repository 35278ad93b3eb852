package events

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"golang.org/x/time/rate"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"pgregory.net/rapid"
)

// referencePatch builds the dedup patch the way client-go does: JSON of the event and of the
// same event with count 0, lastTimestamp at the epoch and no message, then a two-way strategic
// merge patch between them.
func referencePatch(t fataler, ev *v1.Event) string {
	old := *ev
	old.Count = 0
	old.LastTimestamp = metav1.NewTime(time.Unix(0, 0))
	old.Message = ""
	newData, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	oldData, err := json.Marshal(&old)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(p)
}

func checkPatch(t fataler, count int32, last time.Time, msg string) {
	ev := &v1.Event{Count: count, LastTimestamp: metav1.NewTime(last), Message: msg, Reason: "R"}
	want := referencePatch(t, ev)
	got := string(appendCountPatch(nil, count, ev.LastTimestamp, msg))
	if got != want {
		t.Fatalf("patch mismatch for count=%d last=%v msg=%q:\n want %s\n got  %s", count, last, msg, want, got)
	}
	if n := countPatchLen(msg); len(got) > n {
		t.Fatalf("patch of %d bytes exceeds its bound %d", len(got), n)
	}
}

type fataler interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func TestCountPatchMatchesStrategicMergePatch(t *testing.T) {
	// Fixed cases first: a count of 0 (a caller's event counted -1 before) leaves count out of
	// the patch, so the first key written has no comma before it; a lone byte 0x80 is invalid
	// UTF-8 and comes out as U+FFFD.
	for _, c := range []struct {
		count int32
		last  time.Time
		msg   string
	}{
		{0, time.Time{}, "m"},
		{0, time.Unix(1700000000, 0), "m"},
		{0, time.Unix(0, 0), "m"},
		{2, time.Unix(1700000000, 0), "a\x80b"},
	} {
		checkPatch(t, c.count, c.last, c.msg)
	}
	rapid.Check(t, func(rt *rapid.T) {
		count := rapid.OneOf(rapid.Int32Range(2, 100), rapid.Int32()).Draw(rt, "count")
		last := rapid.OneOf(
			rapid.Just(time.Time{}),
			rapid.Just(time.Unix(0, 0)),
			rapid.Custom(func(t *rapid.T) time.Time {
				return time.Unix(rapid.Int64Range(-1<<34, 1<<35).Draw(t, "sec"), rapid.Int64Range(0, 999999999).Draw(t, "nsec"))
			}),
		).Draw(rt, "last")
		msg := rapid.OneOf(rapid.String(), rapid.StringOf(rapid.SampledFrom([]rune{'<', '>', '&', '"', '\\', '\n', '\b', '\f', '\u2028', '\u2029', 0x01, 'a', 'é', '\ufffd'})),
			rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) })).Draw(rt, "msg")
		checkPatch(rt, count, last, msg)
	})
}

func FuzzCountPatch(f *testing.F) {
	f.Add(int32(2), int64(1700000000), "started")
	f.Add(int32(0), int64(0), "")
	f.Add(int32(-1), int64(-62135596800), "<\xff\u2028>")
	f.Fuzz(func(t *testing.T, count int32, sec int64, msg string) {
		if sec < -62135596800 || sec > 253402300799 {
			return // JSON of years outside 0000-9999 is not RFC 3339; encoding/json refuses it
		}
		checkPatch(t, count, time.Unix(sec, 0), msg)
	})
}

// TestBucketMatchesRate checks that the spam filter's bucket decides exactly as
// golang.org/x/time/rate.Limiter.AllowN(now, 1), which client-go's passive limiter calls.
func TestBucketMatchesRate(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		burst := rapid.IntRange(1, 30).Draw(rt, "burst")
		qps := rapid.SampledFrom([]float32{DefaultQPS, 1, 0.5, 10, 1e-6}).Draw(rt, "qps")
		o := DefaultCorrelatorOptions()
		o.SpamFilter.Burst, o.SpamFilter.QPS = burst, qps
		o.Aggregation.Disabled = true
		c, err := NewCorrelator(o)
		if err != nil {
			rt.Fatal(err)
		}
		lim := rate.NewLimiter(rate.Limit(qps), burst)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range rapid.IntRange(1, 200).Draw(rt, "n") {
			now = now.Add(time.Duration(rapid.Int64Range(-int64(time.Second), int64(400*time.Second)).Draw(rt, "dt")))
			got := c.allow(spamKey{}, 0, now)
			if want := lim.AllowN(now, 1); got != want {
				rt.Fatalf("step %d at %v: bucket says %v, rate says %v", i, now, got, want)
			}
		}
	})
}

// TestBucketMatchesRateAtEdges checks the spam filter's bucket against x/time/rate where the
// arithmetic is tight (spec/events.md section A.4: client-go's passive rate limiter is
// x/time/rate's AllowN): the nanosecond before and the one at which the next token is counted,
// a rate so low that one token's wait does not fit in a time.Duration, and one whose wait
// for a token is exactly 2^63 ns.
func TestBucketMatchesRateAtEdges(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// tokenAt is the first offset after t0 at which rate lets a second event through, given
	// that the first one at t0 used the last token of a bucket of burst.
	tokenAt := func(qps float32, burst int) time.Duration {
		lo, hi := time.Duration(0), 400*time.Second
		for lo < hi {
			mid := lo + (hi-lo)/2
			lim := rate.NewLimiter(rate.Limit(qps), burst)
			lim.AllowN(t0, burst)
			if lim.AllowN(t0.Add(mid), 1) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return lo
	}
	next := tokenAt(DefaultQPS, 1)
	cases := []struct {
		name    string
		qps     float32
		burst   int
		offsets []time.Duration
	}{
		{"token-edge", DefaultQPS, 1, []time.Duration{0, next - 1, next}},
		{"token-edge-burst-25", DefaultQPS, 25, append(make([]time.Duration, 25), tokenAt(DefaultQPS, 25)-1, tokenAt(DefaultQPS, 25))},
		{"wait-beyond-duration", 1e-12, 1, []time.Duration{0, 0, time.Hour}},
		{"wait-of-2^63-ns", 1.0842022e-10, 1, []time.Duration{0, 0}},
	}
	for _, tc := range cases {
		o := DefaultCorrelatorOptions()
		o.SpamFilter.Burst, o.SpamFilter.QPS = tc.burst, tc.qps
		c, err := NewCorrelator(o)
		if err != nil {
			t.Fatal(err)
		}
		lim := rate.NewLimiter(rate.Limit(tc.qps), tc.burst)
		for i, d := range tc.offsets {
			now := t0.Add(d)
			if got, want := c.allow(spamKey{}, 0, now), lim.AllowN(now, 1); got != want {
				t.Errorf("%s: event %d at +%v: bucket says %v, rate says %v", tc.name, i, d, got, want)
			}
		}
	}
}

// TestLRUModel drives the LRU and a plain list model with the same operations (rapid state
// machine); after every step both hold the same keys in the same recency order.
func TestLRUModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		capacity := rapid.IntRange(1, 8).Draw(rt, "capacity")
		l := newLRU[int, int](capacity) // hashes keep the low 2 bits: collision chains get exercised
		var model []int                 // most recent first
		vals := map[int]int{}
		touch := func(k int) {
			for i, x := range model {
				if x == k {
					model = append(model[:i], model[i+1:]...)
					break
				}
			}
			model = append([]int{k}, model...)
		}
		rt.Repeat(map[string]func(*rapid.T){
			"get": func(rt *rapid.T) {
				k := rapid.IntRange(0, 12).Draw(rt, "k")
				v, ok := l.get(k, uint64(k)&3)
				_, inModel := vals[k]
				if ok != inModel {
					rt.Fatalf("get(%d): found %v, model %v", k, ok, inModel)
				}
				if ok {
					if *v != vals[k] {
						rt.Fatalf("get(%d) = %d, want %d", k, *v, vals[k])
					}
					touch(k)
				}
			},
			"add": func(rt *rapid.T) {
				k := rapid.IntRange(0, 12).Draw(rt, "k")
				v, _ := l.slot(k, uint64(k)&3)
				*v = k * 10
				vals[k] = k * 10
				touch(k)
				if len(model) > capacity {
					delete(vals, model[len(model)-1])
					model = model[:len(model)-1]
				}
			},
			"": func(rt *rapid.T) {
				var order []int
				for i := l.head; i >= 0; i = l.entries[i].next {
					order = append(order, l.entries[i].key)
				}
				if len(order) != len(model) || l.len() != len(model) {
					rt.Fatalf("order %v, model %v", order, model)
				}
				for i := range order {
					if order[i] != model[i] {
						rt.Fatalf("order %v, model %v", order, model)
					}
				}
				if err := checkChains(&l); err != nil {
					rt.Fatal(err)
				}
			},
		})
	})
}

// checkChains reports a hash chain of l that is not exactly its entries of that hash: an
// entry of another hash, or a cycle, in a chain would send a lookup to the wrong entry or
// round forever.
func checkChains[K comparable, V any](l *lru[K, V]) error {
	seen := 0
	for sum, first := range l.index {
		steps := 0
		for j := first; j >= 0; j = l.entries[j].chain {
			if steps++; steps > len(l.entries) {
				return fmt.Errorf("the chain of hash %d does not end", sum)
			}
			if l.entries[j].sum != sum {
				return fmt.Errorf("the chain of hash %d holds entry %d of hash %d", sum, j, l.entries[j].sum)
			}
			seen++
		}
	}
	if seen != l.len() {
		return fmt.Errorf("the chains hold %d entries, the cache %d", seen, l.len())
	}
	return nil
}

// TestLRUEvictionUnchainsEntry: evicting an entry that is not first in its hash chain
// takes it out of the chain, also when the chain starts at the first slot; a link left
// behind would make a chain of the slot's next key loop, and a lookup of a missing key of
// that hash never return.
func TestLRUEvictionUnchainsEntry(t *testing.T) {
	l := newLRU[string, int](2)
	l.slot("x", 7) // slot 0
	l.slot("b", 1) // slot 1
	l.slot("c", 1) // evicts x: slot 0, chained before b
	l.slot("f", 1) // evicts b from behind c, then takes slot 1
	if err := checkChains(&l); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.get("b", 1); ok {
		t.Fatal("an evicted key is still found")
	}
	for _, k := range []string{"c", "f"} {
		if _, ok := l.get(k, 1); !ok {
			t.Fatalf("%s is lost", k)
		}
	}
}
