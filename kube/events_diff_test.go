package kube_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
	"github.com/nodestate/nodestate/internal/rapidcheck"
)

// minStreams is how many generated streams the differential test must run at least.
const minStreams = 1000

func TestMain(m *testing.M) {
	flag.Parse()
	if err := rapidcheck.MinChecks(minStreams); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// aggKey is the aggregation key of client-go's EventAggregatorByReasonFunc, with separators
// (the generated streams never make client-go's separator-less keys collide).
func aggKey(ev *v1.Event) string {
	o := ev.InvolvedObject
	return strings.Join([]string{ev.Source.Component, ev.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion, ev.Type, ev.Reason, ev.ReportingController, ev.ReportingInstance}, "\x00")
}

// ruleWindow is nodestate's stated aggregation rule for one aggregation key: the first
// MaxEvents-1 distinct messages of a window are kept on their own; any other message is
// aggregated. A gap of more than the window starts afresh.
type ruleWindow struct {
	first []string
	last  time.Time
}

func (w *ruleWindow) aggregated(msg string, at time.Time, o events.AggregationOptions) bool {
	if w.last.IsZero() || at.Sub(w.last) > o.Window {
		w.first = nil
	}
	w.last = at
	for _, m := range w.first {
		if m == msg {
			return false
		}
	}
	if len(w.first)+1 < o.MaxEvents {
		w.first = append(w.first, msg)
		return false
	}
	return true
}

// windowLRU keeps the rule windows of the aggregation keys with the correlator's LRU bound:
// every event touches its key, so both correlators evict the same keys in the same order.
type windowLRU struct {
	capacity int
	order    []string // most recent first
	windows  map[string]*ruleWindow
}

func newWindowLRU(capacity int) *windowLRU {
	return &windowLRU{capacity: capacity, windows: map[string]*ruleWindow{}}
}

func (l *windowLRU) get(k string) *ruleWindow {
	for i, x := range l.order {
		if x == k {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
	l.order = append([]string{k}, l.order...)
	if len(l.order) > l.capacity {
		delete(l.windows, l.order[len(l.order)-1])
		l.order = l.order[:len(l.order)-1]
	}
	w := l.windows[k]
	if w == nil {
		w = &ruleWindow{}
		l.windows[k] = w
	}
	return w
}

func decisionOf(r *record.EventCorrelateResult) events.Decision {
	switch {
	case r.Skip:
		return events.Skip
	case r.Event.Count > 1:
		return events.Patch
	default:
		return events.Create
	}
}

// TestCorrelatorMatchesClientGo runs at least 1,000 generated event streams through
// client-go's EventCorrelator (fake clock) and nodestate's Correlator, with the server's answer
// fed back to both through UpdateState. For every event both make the same create, patch or
// skip decision with the same count, the same event and the same patch bytes, except where
// client-go's PopAny makes aggregation nondeterministic: once an aggregation key has aggregated,
// its later events are checked against nodestate's stated rule (and the spam decision, which
// aggregation does not touch, must still agree). A third of the streams use small caches, a
// small burst and a low aggregation threshold, on both sides, so that LRU eviction, the spam
// filter and aggregation are compared too.
func TestCorrelatorMatchesClientGo(t *testing.T) {
	var streams, exact, ruleChecked, aggregatedSeen atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		streams.Add(1)
		stream := eventstest.Stream(150).Draw(rt, "stream")
		fc := testingclock.NewFakeClock(eventstest.StreamStart)
		// Mostly client-go's defaults; sometimes small caches (LRU eviction order), a small
		// burst and a low aggregation threshold, set the same way on both sides.
		opts := events.DefaultCorrelatorOptions()
		cgOpts := record.CorrelatorOptions{Clock: fc}
		if rapid.IntRange(0, 2).Draw(rt, "smallOptions") == 0 {
			opts.CacheSize = rapid.SampledFrom([]int{2, 5, 16}).Draw(rt, "cacheSize")
			opts.SpamFilter.Burst = rapid.SampledFrom([]int{1, 3, 25}).Draw(rt, "burst")
			opts.Aggregation.MaxEvents = rapid.SampledFrom([]int{2, 3, 10}).Draw(rt, "maxEvents")
			cgOpts.LRUCacheSize, cgOpts.BurstSize, cgOpts.MaxEvents = opts.CacheSize, opts.SpamFilter.Burst, opts.Aggregation.MaxEvents
		}
		cg := record.NewEventCorrelatorWithOptions(cgOpts)
		ns, err := events.NewCorrelator(opts)
		if err != nil {
			rt.Fatal(err)
		}
		windows := newWindowLRU(opts.CacheSize)
		tainted := map[string]bool{}
		counts := map[string]int32{} // nodestate's count per dedup key, for tainted keys
		evictions := opts.CacheSize < 100
		rv := 0
		for i, s := range stream {
			ak := aggKey(s.Event)
			w := windows.get(ak)
			wantAggregated := w.aggregated(s.Event.Message, s.At, opts.Aggregation)

			fc.SetTime(s.At)
			cgRes, err := cg.EventCorrelate(s.Event.DeepCopy())
			if err != nil {
				rt.Fatalf("event %d: client-go: %v", i, err)
			}
			nsRes, err := ns.Correlate(s.Event, s.At)
			if err != nil {
				rt.Fatalf("event %d: nodestate: %v", i, err)
			}
			if nsRes.Aggregated != wantAggregated {
				rt.Fatalf("event %d (%s %q): nodestate aggregated=%v, its rule says %v", i, s.Event.Reason, s.Event.Message, nsRes.Aggregated, wantAggregated)
			}
			if cgRes.Skip != (nsRes.Decision == events.Skip) {
				rt.Fatalf("event %d: client-go skip=%v, nodestate %v", i, cgRes.Skip, nsRes.Decision)
			}
			key := "F" + ak + "\x00" + s.Event.InvolvedObject.FieldPath + "\x00" + s.Event.Message
			if wantAggregated {
				key = "A" + ak
				aggregatedSeen.Add(1)
			}
			counts[key]++
			// Once some key has aggregated, client-go's and nodestate's aggregate
			// events differ, so their shared LRU caches hold different entries;
			// with caches small enough to evict, that reaches every key's
			// create-or-patch decision. The skip decision (the spam filter, which
			// every event touches the same way) is still compared above.
			if tainted[ak] || (evictions && len(tainted) > 0) {
				ruleChecked.Add(1)
				if !evictions && nsRes.Decision != events.Skip && nsRes.Event.Count != counts[key] {
					rt.Fatalf("event %d: nodestate count %d, its rule says %d", i, nsRes.Event.Count, counts[key])
				}
			} else {
				exact.Add(1)
				if d := decisionOf(cgRes); d != nsRes.Decision {
					rt.Fatalf("event %d: client-go %v, nodestate %v", i, d, nsRes.Decision)
				}
				if !cgRes.Skip {
					want := cgRes.Event
					if nsRes.Aggregated {
						// nodestate names a new aggregate event after the event it
						// replaces, where client-go's name can collide (package doc).
						if nsRes.Event.Name != s.Event.Name {
							rt.Fatalf("event %d: aggregate event named %q, want the replaced event's %q", i, nsRes.Event.Name, s.Event.Name)
						}
						want = want.DeepCopy()
						want.Name = nsRes.Event.Name
					}
					if diff := cmp.Diff(want, nsRes.Event); diff != "" {
						rt.Fatalf("event %d: event mismatch (-client-go +nodestate):\n%s", i, diff)
					}
					if string(cgRes.Patch) != string(nsRes.Patch) {
						rt.Fatalf("event %d: patch client-go %s, nodestate %s", i, cgRes.Patch, nsRes.Patch)
					}
				}
			}
			if wantAggregated {
				// From here on client-go's set has lost a random member: its later
				// decisions for this key may differ from nodestate's documented rule.
				tainted[ak] = true
			}
			rv++
			if !cgRes.Skip {
				srv := cgRes.Event.DeepCopy()
				srv.ResourceVersion = fmt.Sprint(rv)
				cg.UpdateState(srv)
			}
			if nsRes.Decision != events.Skip {
				srv := *nsRes.Event
				srv.ResourceVersion = fmt.Sprint(rv)
				ns.UpdateState(&srv)
			}
		}
	})
	t.Logf("%d streams; %d events compared exactly with client-go, %d checked against the aggregation rule; %d aggregated", streams.Load(), exact.Load(), ruleChecked.Load(), aggregatedSeen.Load())
	want := rapidcheck.Checks()
	if !t.Failed() && streams.Load() < int64(want) {
		t.Fatalf("ran %d streams, want at least %d", streams.Load(), want)
	}
}
