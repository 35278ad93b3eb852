package events_test

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/events"
)

// benchWrite correlates ev at now and, like the broadcaster after a successful write, feeds
// the result back through UpdateState.
func benchWrite(b *testing.B, c *events.Correlator, ev *v1.Event, now time.Time) events.Result {
	res, err := c.Correlate(ev, now)
	if err != nil {
		b.Fatal(err)
	}
	if res.Decision != events.Skip {
		c.UpdateState(res.Event)
	}
	return res
}

// BenchmarkCorrelateRepeat: the same event again and again (dedup into count + patch), spam
// filter off so every event is a patch.
func BenchmarkCorrelateRepeat(b *testing.B) {
	o := events.DefaultCorrelatorOptions()
	o.SpamFilter.Disabled = true
	c := mustCorrelator(b, o)
	ev := newEvent(podRef("foo", "bar", ""), v1.EventTypeWarning, "BackOff", "Back-off restarting failed container", t0)
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second)
		ev.LastTimestamp = metav1.NewTime(now)
		if benchWrite(b, c, ev, now).Decision == events.Skip {
			b.Fatal("skipped")
		}
	}
}

// BenchmarkCorrelateSpamDropped: a repeated event whose bucket is empty.
func BenchmarkCorrelateSpamDropped(b *testing.B) {
	c := mustCorrelator(b, events.DefaultCorrelatorOptions())
	ev := newEvent(podRef("foo", "bar", ""), v1.EventTypeWarning, "BackOff", "Back-off restarting failed container", t0)
	for range events.DefaultBurst {
		benchWrite(b, c, ev, t0)
	}
	b.ReportAllocs()
	for b.Loop() {
		if benchWrite(b, c, ev, t0).Decision != events.Skip {
			b.Fatal("not skipped")
		}
	}
}

// BenchmarkCorrelateNew: unique events over 8,192 objects, twice the cache size, so every
// event is new and evicts.
func BenchmarkCorrelateNew(b *testing.B) {
	c := mustCorrelator(b, events.DefaultCorrelatorOptions())
	evs := make([]*v1.Event, 8192)
	for i := range evs {
		evs[i] = newEvent(podRef(fmt.Sprintf("pod-%d", i), fmt.Sprint(i), ""), v1.EventTypeNormal, "Started", "Started container app", t0)
	}
	now := t0
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		if benchWrite(b, c, evs[i%len(evs)], now).Decision != events.Create {
			b.Fatal("not a create")
		}
		i++
	}
}

// BenchmarkCorrelateAggregate: 64 distinct messages on one object and reason.
func BenchmarkCorrelateAggregate(b *testing.B) {
	o := events.DefaultCorrelatorOptions()
	o.SpamFilter.Disabled = true
	c := mustCorrelator(b, o)
	evs := make([]*v1.Event, 64)
	for i := range evs {
		evs[i] = newEvent(podRef("foo", "bar", ""), v1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %d", i), t0)
	}
	now := t0
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		benchWrite(b, c, evs[i%len(evs)], now)
		i++
	}
}

// BenchmarkCorrelateToRepeat and BenchmarkCorrelateToNew: the reusing form, with one event and
// one patch buffer for the whole run.
func BenchmarkCorrelateToRepeat(b *testing.B) {
	o := events.DefaultCorrelatorOptions()
	o.SpamFilter.Disabled = true
	c := mustCorrelator(b, o)
	ev := newEvent(podRef("foo", "bar", ""), v1.EventTypeWarning, "BackOff", "Back-off restarting failed container", t0)
	var dst v1.Event
	var buf []byte
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second)
		ev.LastTimestamp = metav1.NewTime(now)
		d, _, patch, err := c.CorrelateTo(ev, now, &dst, buf)
		if err != nil || d == events.Skip {
			b.Fatal(d, err)
		}
		buf = patch
		c.UpdateState(&dst)
	}
}

func BenchmarkCorrelateToNew(b *testing.B) {
	c := mustCorrelator(b, events.DefaultCorrelatorOptions())
	evs := make([]*v1.Event, 8192)
	for i := range evs {
		evs[i] = newEvent(podRef(fmt.Sprintf("pod-%d", i), fmt.Sprint(i), ""), v1.EventTypeNormal, "Started", "Started container app", t0)
	}
	var dst v1.Event
	now := t0
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		if d, _, _, _ := c.CorrelateTo(evs[i%len(evs)], now, &dst, nil); d != events.Create {
			b.Fatal(d)
		}
		c.UpdateState(&dst)
		i++
	}
}
