package events_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

// model is a plain restatement of the correlator's rules (spec A.4, with nodestate's
// deterministic aggregation rule), with collision-free string keys, a rate.Limiter per spam key
// and no cache bound. It is the oracle of the model test.
type model struct {
	opts    events.CorrelatorOptions
	windows map[string]*modelWindow
	counts  map[string]int32
	buckets map[string]*rate.Limiter
}

type modelWindow struct {
	first []string
	last  time.Time
}

type modelOut struct {
	decision   events.Decision
	count      int32
	aggregated bool
}

func newModel(o events.CorrelatorOptions) *model {
	return &model{opts: o, windows: map[string]*modelWindow{}, counts: map[string]int32{}, buckets: map[string]*rate.Limiter{}}
}

func join(fields ...string) string { return strings.Join(fields, "\x00") }

func objFields(ev *v1.Event) []string {
	o := ev.InvolvedObject
	return []string{ev.Source.Component, ev.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion, ev.Type}
}

func modelFullKey(ev *v1.Event) string {
	return join(append(objFields(ev), "F", ev.Reason, ev.InvolvedObject.FieldPath, ev.Message)...)
}

func (m *model) step(ev *v1.Event, at time.Time) modelOut {
	var out modelOut
	key := modelFullKey(ev)
	if !m.opts.Aggregation.Disabled {
		ak := join(append(objFields(ev), ev.Reason, ev.ReportingController, ev.ReportingInstance)...)
		w := m.windows[ak]
		if w == nil || at.Sub(w.last) > m.opts.Aggregation.Window {
			w = &modelWindow{}
			m.windows[ak] = w
		}
		w.last = at
		known := false
		for _, f := range w.first {
			known = known || f == ev.Message
		}
		if !known {
			if len(w.first)+1 < m.opts.Aggregation.MaxEvents {
				w.first = append(w.first, ev.Message)
			} else {
				out.aggregated = true
				key = "A" + ak
			}
		}
	}
	out.count = 1
	if c := m.counts[key]; c != 0 {
		out.count = c + 1
	} else if !out.aggregated {
		out.count = ev.Count
	}
	m.counts[key] = out.count
	if !m.opts.SpamFilter.Disabled {
		sk := join(objFields(ev)...)
		if m.opts.SpamFilter.ByReason {
			sk = join(sk, ev.Reason)
		}
		lim := m.buckets[sk]
		if lim == nil {
			lim = rate.NewLimiter(rate.Limit(m.opts.SpamFilter.QPS), m.opts.SpamFilter.Burst)
			m.buckets[sk] = lim
		}
		if !lim.AllowN(at, 1) {
			out.decision = events.Skip
			out.count = 0
			return out
		}
	}
	out.decision = events.Create
	if out.count > 1 {
		out.decision = events.Patch
	}
	return out
}

// written records a successful write, as Correlator.UpdateState does.
func (m *model) written(ev *v1.Event) { m.counts[modelFullKey(ev)] = ev.Count }

func drawOptions(t *rapid.T) events.CorrelatorOptions {
	o := events.DefaultCorrelatorOptions()
	o.Aggregation.Disabled = rapid.IntRange(0, 5).Draw(t, "aggregationOff") == 0
	o.Aggregation.MaxEvents = rapid.SampledFrom([]int{1, 2, 3, 10}).Draw(t, "maxEvents")
	o.SpamFilter.Disabled = rapid.IntRange(0, 5).Draw(t, "spamOff") == 0
	o.SpamFilter.Burst = rapid.SampledFrom([]int{1, 3, 25}).Draw(t, "burst")
	o.SpamFilter.ByReason = rapid.Bool().Draw(t, "byReason")
	return o
}

// TestCorrelatorModel is the model test: random options, then events and time steps in any
// order; after every event the correlator agrees with the model on decision, count and
// aggregation, and every cache stays within its bound.
func TestCorrelatorModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := drawOptions(t)
		o.CacheSize = 1 << 16 // the model has no bound
		c := mustCorrelator(t, o)
		m := newModel(o)
		now := eventstest.StreamStart
		var written int
		t.Repeat(map[string]func(*rapid.T){
			"event": func(t *rapid.T) {
				ev := eventstest.Event(now).Draw(t, "event")
				want := m.step(ev, now)
				res, err := c.Correlate(ev, now)
				if err != nil {
					t.Fatal(err)
				}
				got := modelOut{decision: res.Decision, count: countOf(res), aggregated: res.Aggregated}
				if got != want {
					t.Fatalf("event %d %s/%s %q: got %+v, model says %+v", written, ev.Type, ev.Reason, ev.Message, got, want)
				}
				if res.Decision == events.Skip {
					return
				}
				if (res.Patch != nil) != (res.Decision == events.Patch) {
					t.Fatalf("decision %v with patch %q", res.Decision, res.Patch)
				}
				srv := *res.Event
				written++
				srv.ResourceVersion = fmt.Sprint(written)
				c.UpdateState(&srv)
				m.written(&srv)
			},
			"wait": func(t *rapid.T) {
				now = now.Add(rapid.SampledFrom([]time.Duration{time.Second, 300 * time.Second, 601 * time.Second}).Draw(t, "gap"))
			},
			"": func(t *rapid.T) {
				a, d, s := c.Len()
				if a > o.CacheSize || d > o.CacheSize || s > o.CacheSize {
					t.Fatalf("cache sizes %d %d %d exceed %d", a, d, s, o.CacheSize)
				}
			},
		})
	})
}

// TestCorrelatorDeterministic: the same stream through two correlators gives the same results,
// aggregation included (client-go's PopAny makes its own runs differ).
func TestCorrelatorDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		stream := eventstest.Stream(120).Draw(t, "stream")
		c1 := mustCorrelator(t, events.DefaultCorrelatorOptions())
		c2 := mustCorrelator(t, events.DefaultCorrelatorOptions())
		for i, s := range stream {
			r1, _ := c1.Correlate(s.Event, s.At)
			r2, _ := c2.Correlate(s.Event, s.At)
			if diff := cmp.Diff(r1, r2); diff != "" {
				t.Fatalf("event %d differs (-first +second):\n%s", i, diff)
			}
		}
	})
}

// TestCorrelatorBounds: with a small cache and many objects, no cache ever exceeds its bound,
// and the stats add up to the number of events.
func TestCorrelatorBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := events.DefaultCorrelatorOptions()
		o.CacheSize = rapid.IntRange(1, 16).Draw(t, "cacheSize")
		c := mustCorrelator(t, o)
		stream := eventstest.Stream(200).Draw(t, "stream")
		for i, s := range stream {
			ev := s.Event.DeepCopy()
			ev.InvolvedObject.Name = fmt.Sprint(ev.InvolvedObject.Name, i%40)
			if _, err := c.Correlate(ev, s.At); err != nil {
				t.Fatal(err)
			}
			if a, d, sp := c.Len(); a > o.CacheSize || d > o.CacheSize || sp > o.CacheSize {
				t.Fatalf("after %d events cache sizes %d %d %d exceed %d", i+1, a, d, sp, o.CacheSize)
			}
		}
		st := c.Stats()
		if got := st.Created + st.Patched + st.SpamDropped; got != uint64(len(stream)) {
			t.Fatalf("stats %+v add up to %d, want %d", st, got, len(stream))
		}
	})
}

// FuzzCorrelate feeds arbitrary events and instants: the correlator never panics, always
// returns a decision, and a repeat of the same event right after is never a Create of count 1
// unless the spam filter or the input count says so.
func FuzzCorrelate(f *testing.F) {
	f.Add("Pod", "ns", "name", "uid", "spec.containers{c}", "Normal", "Reason", "message", "kubelet", "node", int32(1), int64(0), int64(0), uint8(0))
	f.Add("", "", "", "", "", "", "", "", "", "", int32(0), int64(-1<<62), int64(1<<62), uint8(255))
	f.Add("Node", "", "n\xff", "u", "", "Warning", "R", "<&>\u2028", "c", "h", int32(-1), int64(1<<40), int64(-5), uint8(7))
	f.Fuzz(func(t *testing.T, kind, ns, name, uid, fieldPath, typ, reason, msg, component, host string, count int32, unixNano, step int64, flags uint8) {
		o := events.DefaultCorrelatorOptions()
		o.CacheSize = 2
		o.Aggregation.MaxEvents = 1 + int(flags%4)
		o.Aggregation.Disabled = flags&0x10 != 0
		o.SpamFilter.Disabled = flags&0x20 != 0
		o.SpamFilter.Burst = 1 + int(flags>>6)
		c := mustCorrelator(t, o)
		ev := &v1.Event{InvolvedObject: v1.ObjectReference{Kind: kind, Namespace: ns, Name: name, UID: k8sUID(uid), FieldPath: fieldPath},
			Type: typ, Reason: reason, Message: msg, Source: v1.EventSource{Component: component, Host: host}, Count: count}
		now := time.Unix(0, unixNano)
		for i := range 4 {
			res, err := c.Correlate(ev, now)
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision < events.Create || res.Decision > events.Skip {
				t.Fatalf("step %d: no decision: %+v", i, res)
			}
			if res.Decision == events.Patch && res.Event.Count <= 1 {
				t.Fatalf("step %d: patch with count %d", i, res.Event.Count)
			}
			c.UpdateState(res.Event)
			now = now.Add(time.Duration(step))
		}
	})
}

// TestCorrelateToMatchesCorrelate: the reusing form decides, writes and patches exactly as the
// allocating one, with one event and one buffer reused across the whole stream.
func TestCorrelateToMatchesCorrelate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := drawOptions(t)
		a, b := mustCorrelator(t, o), mustCorrelator(t, o)
		var dst v1.Event
		var buf []byte
		for i, s := range eventstest.Stream(120).Draw(t, "stream") {
			want, _ := a.Correlate(s.Event, s.At)
			d, agg, patch, err := b.CorrelateTo(s.Event, s.At, &dst, buf)
			if err != nil {
				t.Fatal(err)
			}
			buf = patch
			if d != want.Decision || agg != want.Aggregated || string(patch) != string(want.Patch) {
				t.Fatalf("event %d: CorrelateTo %v %v %s, Correlate %v %v %s", i, d, agg, patch, want.Decision, want.Aggregated, want.Patch)
			}
			if d != events.Skip {
				if diff := cmp.Diff(want.Event, &dst); diff != "" {
					t.Fatalf("event %d mismatch (-Correlate +CorrelateTo):\n%s", i, diff)
				}
				a.UpdateState(want.Event)
				b.UpdateState(&dst)
			}
		}
	})
	c := mustCorrelator(t, events.DefaultCorrelatorOptions())
	if _, _, _, err := c.CorrelateTo(newEvent(podRef("a", "b", ""), "Normal", "R", "m", t0), t0, nil, nil); err == nil {
		t.Fatal("a nil destination must be refused")
	}
	if _, _, _, err := c.CorrelateTo(nil, t0, &v1.Event{}, nil); err != events.ErrNilEvent {
		t.Fatalf("nil event: %v", err)
	}
}
