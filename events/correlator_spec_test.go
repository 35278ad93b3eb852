package events_test

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/events"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// podRef is the involved object of most cases: pod foo/baz.
func podRef(name, uid, fieldPath string) v1.ObjectReference {
	return v1.ObjectReference{Kind: "Pod", Namespace: "baz", Name: name, UID: k8stypes.UID("uid-" + uid), APIVersion: "v1", FieldPath: fieldPath}
}

// newEvent builds an event the way the recorder does (count 1, both timestamps at ts).
func newEvent(ref v1.ObjectReference, typ, reason, msg string, ts time.Time) *v1.Event {
	return &v1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: ref.Name + "." + fmt.Sprintf("%x", ts.UnixNano()), Namespace: ref.Namespace},
		InvolvedObject:      ref,
		Reason:              reason,
		Message:             msg,
		Source:              v1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp:      metav1.NewTime(ts),
		LastTimestamp:       metav1.NewTime(ts),
		Count:               1,
		Type:                typ,
		ReportingController: "kubelet",
		ReportingInstance:   "node-1",
	}
}

func mustCorrelator(t interface{ Fatal(...any) }, o events.CorrelatorOptions) *events.Correlator {
	c, err := events.NewCorrelator(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// step is one event fed to a correlator in a spec case, with what must come out.
type step struct {
	ev        *v1.Event
	at        time.Time
	decision  events.Decision
	count     int32
	aggregate bool
	patch     string // "" means no patch expected
}

func runSteps(t *testing.T, c *events.Correlator, steps []step) {
	t.Helper()
	for i, s := range steps {
		res, err := c.Correlate(s.ev, s.at)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if res.Decision != s.decision || countOf(res) != s.count || res.Aggregated != s.aggregate {
			t.Errorf("step %d: got decision %v count %d aggregated %v, want %v %d %v", i, res.Decision, countOf(res), res.Aggregated, s.decision, s.count, s.aggregate)
		}
		if got := string(res.Patch); got != s.patch {
			t.Errorf("step %d: patch mismatch (-want +got):\n%s", i, cmp.Diff(s.patch, got))
		}
		if res.Decision != events.Skip {
			c.UpdateState(res.Event)
		}
	}
}

func TestCorrelatorSpecCases(t *testing.T) {
	a := podRef("foo", "bar", "spec.containers[2]")
	ts := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	repeat := func(n int, interval time.Duration, build func(i int, at time.Time) step) []step {
		var out []step
		for i := 0; i < n; i++ {
			at := t0.Add(time.Duration(i) * interval)
			out = append(out, build(i, at))
		}
		return out
	}
	cases := []struct {
		name   string
		reason string
		opts   func(*events.CorrelatorOptions)
		steps  []step
	}{
		{
			name:   "E1",
			reason: "a new event is created with count 1 and no patch",
			steps:  []step{{ev: newEvent(a, v1.EventTypeNormal, "Started", "started", ts(0)), at: ts(0), decision: events.Create, count: 1}},
		},
		{
			name:   "E2",
			reason: "the same event again is a patch of count, lastTimestamp and message",
			steps: []step{
				{ev: newEvent(a, v1.EventTypeNormal, "Started", "started", ts(0)), at: ts(0), decision: events.Create, count: 1},
				{ev: newEvent(a, v1.EventTypeNormal, "Started", "started", ts(5)), at: ts(5), decision: events.Patch, count: 2,
					patch: `{"count":2,"lastTimestamp":"2026-11-29T10:00:05Z","message":"started"}`},
			},
		},
		{
			name:   "E4",
			reason: "26 identical events 1 s apart use up the burst of 25; the 26th and 27th are skipped",
			steps: append(repeat(26, time.Second, func(i int, at time.Time) step {
				s := step{ev: newEvent(a, v1.EventTypeWarning, "BackOff", "back-off", at), at: at, decision: events.Patch, count: int32(i + 1),
					patch: fmt.Sprintf(`{"count":%d,"lastTimestamp":%q,"message":"back-off"}`, i+1, at.Format(time.RFC3339))}
				if i == 0 {
					s.decision, s.patch = events.Create, ""
				}
				if i == 25 {
					s = step{ev: s.ev, at: at, decision: events.Skip}
				}
				return s
			}), step{ev: newEvent(a, v1.EventTypeWarning, "BackOff", "back-off", ts(26)), at: ts(26), decision: events.Skip}),
		},
		{
			name:   "E5",
			reason: "unique events on different pods have separate keys: each is new",
			steps: repeat(31, time.Second, func(i int, at time.Time) step {
				return step{ev: newEvent(podRef(fmt.Sprintf("pod-%d", i), fmt.Sprint(i), ""), v1.EventTypeNormal, "Started", "started", at), at: at, decision: events.Create, count: 1}
			}),
		},
		{
			name:   "E7",
			reason: "the 10th distinct message is aggregated (count 1); the next new message patches the aggregate (count 2)",
			steps: append(repeat(10, time.Second, func(i int, at time.Time) step {
				s := step{ev: newEvent(a, v1.EventTypeWarning, "Failed", fmt.Sprintf("message %d", i), at), at: at, decision: events.Create, count: 1}
				if i == 9 {
					s.aggregate = true
				}
				return s
			}), step{ev: newEvent(a, v1.EventTypeWarning, "Failed", "message 10", ts(10)), at: ts(10), decision: events.Patch, count: 2, aggregate: true,
				patch: `{"count":2,"lastTimestamp":"2026-11-29T10:00:10Z","message":"(combined from similar events): message 10"}`}),
		},
		{
			name:   "E8",
			reason: "the dedup key includes the field path: the same event for another container is new",
			steps: []step{
				{ev: newEvent(podRef("foo", "bar", "spec.containers{container2}"), v1.EventTypeNormal, "Pulled", "pulled", ts(0)), at: ts(0), decision: events.Create, count: 1},
				{ev: newEvent(podRef("foo", "bar", "spec.containers{container1}"), v1.EventTypeNormal, "Pulled", "pulled", ts(1)), at: ts(1), decision: events.Create, count: 1},
			},
		},
		{
			name:   "E10",
			reason: "burst 1 with the default spam key: a different reason on the same object is skipped",
			opts:   func(o *events.CorrelatorOptions) { o.SpamFilter.Burst = 1 },
			steps: []step{
				{ev: newEvent(a, v1.EventTypeNormal, "Original", "original", ts(0)), at: ts(0), decision: events.Create, count: 1},
				{ev: newEvent(a, v1.EventTypeNormal, "Duplicate", "duplicate", ts(0)), at: ts(0), decision: events.Skip},
			},
		},
		{
			name:   "E11",
			reason: "burst 1 with the reason in the spam key: a different reason is not skipped",
			opts:   func(o *events.CorrelatorOptions) { o.SpamFilter.Burst = 1; o.SpamFilter.ByReason = true },
			steps: []step{
				{ev: newEvent(a, v1.EventTypeNormal, "Original", "original", ts(0)), at: ts(0), decision: events.Create, count: 1},
				{ev: newEvent(a, v1.EventTypeNormal, "Duplicate", "duplicate", ts(0)), at: ts(0), decision: events.Create, count: 1},
			},
		},
		{
			name:   "E13",
			reason: "events differing only in message are similar (aggregate together); a different reason is not",
			opts:   func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 2 },
			steps: []step{
				{ev: newEvent(a, v1.EventTypeNormal, "Pulling", "one", ts(0)), at: ts(0), decision: events.Create, count: 1},
				{ev: newEvent(a, v1.EventTypeNormal, "Other", "two", ts(1)), at: ts(1), decision: events.Create, count: 1},
				{ev: newEvent(a, v1.EventTypeNormal, "Pulling", "two", ts(2)), at: ts(2), decision: events.Create, count: 1, aggregate: true},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := events.DefaultCorrelatorOptions()
			if tc.opts != nil {
				tc.opts(&o)
			}
			runSteps(t, mustCorrelator(t, o), tc.steps)
		})
	}
}

// TestCorrelatorE14 replays the recorder sequence of case E14 through the correlator, with the
// server's answers fed back through UpdateState.
func TestCorrelatorE14(t *testing.T) {
	c := mustCorrelator(t, events.DefaultCorrelatorOptions())
	refA := v1.ObjectReference{Kind: "Pod", Namespace: "baz", Name: "foo", UID: "bar", APIVersion: "v1", FieldPath: "spec.containers[2]"}
	pod := v1.ObjectReference{Kind: "Pod", Namespace: "baz", Name: "foo", UID: "bar", APIVersion: "v1"}
	refA2 := v1.ObjectReference{Kind: "Pod", Namespace: "baz", Name: "foo", UID: "differentUid", APIVersion: "v1", FieldPath: "spec.containers[3]"}
	seq := []struct {
		ref      v1.ObjectReference
		reason   string
		decision events.Decision
		count    int32
	}{
		{refA, "Started", events.Create, 1},
		{pod, "Killed", events.Create, 1},
		{refA, "Started", events.Patch, 2},
		{refA2, "Started", events.Create, 1},
		{refA, "Started", events.Patch, 3},
		{refA2, "Stopped", events.Create, 1},
		{refA2, "Stopped", events.Patch, 2},
	}
	for i, s := range seq {
		at := t0.Add(time.Duration(i) * time.Second)
		res, err := c.Correlate(newEvent(s.ref, v1.EventTypeNormal, s.reason, "some verbose message: 1", at), at)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision != s.decision || countOf(res) != s.count {
			t.Errorf("call %d (E14): got %v count %d, want %v count %d", i, res.Decision, countOf(res), s.decision, s.count)
		}
		ev := *res.Event
		ev.ResourceVersion = fmt.Sprint(i + 1)
		c.UpdateState(&ev)
	}
}

func TestCorrelatorNilEvent(t *testing.T) {
	c := mustCorrelator(t, events.DefaultCorrelatorOptions())
	if _, err := c.Correlate(nil, t0); err != events.ErrNilEvent {
		t.Fatalf("got %v, want ErrNilEvent (spec A.4 step 1)", err)
	}
}

func TestCorrelatorRules(t *testing.T) {
	a := podRef("foo", "bar", "")
	b := podRef("qux", "quux", "")
	cases := []struct {
		name, reason string
		opts         func(*events.CorrelatorOptions)
		steps        []step
		// stats, when set, are the correlator's counters after the steps.
		stats *events.CorrelatorStats
	}{
		{
			name:   "A.1/evicted-event-created-anew",
			reason: "with one cache entry, B evicts A's observation: B is new (count 1), and A again is created anew, as client-go's LRU miss does",
			opts:   func(o *events.CorrelatorOptions) { o.CacheSize = 1 },
			steps: []step{
				{ev: newEvent(a, "Normal", "R", "m", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(b, "Normal", "R", "m", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(a, "Normal", "R", "m", t0.Add(time.Second)), at: t0.Add(time.Second), decision: events.Create, count: 1},
			},
			stats: &events.CorrelatorStats{Created: 3},
		},
		{
			name: "A.3/count-kept-when-a-lookalike-is-evicted",
			reason: "events that differ only in their source component are different events; evicting one of them from a cache of 2 " +
				"keeps the other's count (3 on its third occurrence)",
			opts: func(o *events.CorrelatorOptions) {
				o.CacheSize, o.Aggregation.Disabled, o.SpamFilter.Disabled = 2, true, true
			},
			steps: func() []step {
				other := func(ev *v1.Event) *v1.Event { ev.Source.Component = "kube-proxy"; return ev }
				return []step{
					{ev: newEvent(a, "Normal", "R", "m", t0), at: t0, decision: events.Create, count: 1},
					{ev: other(newEvent(a, "Normal", "R", "m", t0)), at: t0, decision: events.Create, count: 1},
					{ev: newEvent(a, "Normal", "R", "m", t0.Add(time.Second)), at: t0.Add(time.Second), decision: events.Patch, count: 2,
						patch: `{"count":2,"lastTimestamp":"2026-11-29T10:00:01Z","message":"m"}`},
					{ev: newEvent(b, "Normal", "R", "m", t0.Add(time.Second)), at: t0.Add(time.Second), decision: events.Create, count: 1},
					{ev: newEvent(a, "Normal", "R", "m", t0.Add(2*time.Second)), at: t0.Add(2 * time.Second), decision: events.Patch, count: 3,
						patch: `{"count":3,"lastTimestamp":"2026-11-29T10:00:02Z","message":"m"}`},
				}
			}(),
		},
		{
			name:   "A.4/aggregated-then-dropped",
			reason: "an event folded into the aggregate and then dropped by the spam filter counts as aggregated and as dropped",
			opts:   func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 1; o.SpamFilter.Burst = 1 },
			steps: []step{
				{ev: newEvent(a, "Warning", "R", "m1", t0), at: t0, decision: events.Create, count: 1, aggregate: true},
				{ev: newEvent(a, "Warning", "R", "m2", t0), at: t0, decision: events.Skip, aggregate: true},
			},
			stats: &events.CorrelatorStats{Created: 1, Aggregated: 2, SpamDropped: 1},
		},
		{
			name:   "A.4/window-slides",
			reason: "every similar event refreshes the window; only a gap of more than 600 s resets it (spec D.3)",
			opts:   func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 3 },
			steps: []step{
				{ev: newEvent(a, "Normal", "R", "m1", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(a, "Normal", "R", "m2", t0.Add(600*time.Second)), at: t0.Add(600 * time.Second), decision: events.Create, count: 1},
				{ev: newEvent(a, "Normal", "R", "m3", t0.Add(1200*time.Second)), at: t0.Add(1200 * time.Second), decision: events.Create, count: 1, aggregate: true},
			},
		},
		{
			name:   "A.4/window-resets",
			reason: "a gap of 601 s starts a fresh aggregation record",
			opts:   func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 3 },
			steps: []step{
				{ev: newEvent(a, "Normal", "R", "m1", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(a, "Normal", "R", "m2", t0.Add(601*time.Second)), at: t0.Add(601 * time.Second), decision: events.Create, count: 1},
				{ev: newEvent(a, "Normal", "R", "m3", t0.Add(1202*time.Second)), at: t0.Add(1202 * time.Second), decision: events.Create, count: 1},
			},
		},
		{
			name:   "D.1/repeats-never-aggregate",
			reason: "identical repeats keep one message in the set and never aggregate",
			opts:   func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 2 },
			steps: []step{
				{ev: newEvent(a, "Normal", "R", "m", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(a, "Normal", "R", "m", t0), at: t0, decision: events.Patch, count: 2, patch: `{"count":2,"lastTimestamp":"2026-11-29T10:00:00Z","message":"m"}`},
			},
		},
		{
			name:   "D.2/survivors-dedup",
			reason: "nodestate's rule: the first MaxEvents-1 messages of the window stay on their own; a survivor repeats as itself, others join the aggregate",
			opts:   func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 3 },
			steps: []step{
				{ev: newEvent(a, "Normal", "R", "m1", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(a, "Normal", "R", "m2", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(a, "Normal", "R", "m3", t0), at: t0, decision: events.Create, count: 1, aggregate: true},
				{ev: newEvent(a, "Normal", "R", "m1", t0), at: t0, decision: events.Patch, count: 2, patch: `{"count":2,"lastTimestamp":"2026-11-29T10:00:00Z","message":"m1"}`},
				{ev: newEvent(a, "Normal", "R", "m3", t0), at: t0, decision: events.Patch, count: 2, aggregate: true, patch: `{"count":2,"lastTimestamp":"2026-11-29T10:00:00Z","message":"(combined from similar events): m3"}`},
			},
		},
		{
			name:   "D.4/dropped-events-raise-count",
			reason: "the count is cached before the spam filter: the next event through jumps",
			opts:   func(o *events.CorrelatorOptions) { o.SpamFilter.Burst = 1; o.SpamFilter.QPS = 1 },
			steps: []step{
				{ev: newEvent(a, "Normal", "R", "m", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(a, "Normal", "R", "m", t0), at: t0, decision: events.Skip},
				{ev: newEvent(a, "Normal", "R", "m", t0.Add(time.Second)), at: t0.Add(time.Second), decision: events.Patch, count: 3, patch: `{"count":3,"lastTimestamp":"2026-11-29T10:00:01Z","message":"m"}`},
			},
		},
		{
			name:   "D.5/spam-key-is-per-type",
			reason: "Warning and Normal events of one object have separate buckets",
			opts:   func(o *events.CorrelatorOptions) { o.SpamFilter.Burst = 1 },
			steps: []step{
				{ev: newEvent(a, "Normal", "R", "m", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(a, "Warning", "R", "m", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(a, "Warning", "S", "n", t0), at: t0, decision: events.Skip},
			},
		},
		{
			name:   "A.4/refill-300s",
			reason: "one token comes back 300 s after the burst was used",
			opts:   func(o *events.CorrelatorOptions) { o.SpamFilter.Burst = 1; o.Aggregation.Disabled = true },
			steps: []step{
				{ev: newEvent(a, "Normal", "R", "m", t0), at: t0, decision: events.Create, count: 1},
				{ev: newEvent(a, "Normal", "R", "m", t0.Add(299*time.Second)), at: t0.Add(299 * time.Second), decision: events.Skip},
				{ev: newEvent(a, "Normal", "R", "m", t0.Add(300*time.Second)), at: t0.Add(300 * time.Second), decision: events.Patch, count: 3, patch: `{"count":3,"lastTimestamp":"2026-11-29T10:05:00Z","message":"m"}`},
			},
		},
		{
			name:   "A.7/spam-filter-disabled",
			reason: "a disabled spam filter never skips",
			opts:   func(o *events.CorrelatorOptions) { o.SpamFilter.Disabled = true },
			steps: repeat3(func(i int) step {
				at := t0.Add(time.Duration(i) * time.Millisecond)
				s := step{ev: newEvent(a, "Normal", "R", "m", at), at: at, decision: events.Patch, count: int32(i + 1), patch: fmt.Sprintf(`{"count":%d,"lastTimestamp":"2026-11-29T10:00:00Z","message":"m"}`, i+1)}
				if i == 0 {
					s.decision, s.patch = events.Create, ""
				}
				return s
			}, 40),
		},
		{
			name:   "A.7/aggregation-disabled",
			reason: "disabled aggregation keeps every distinct message on its own",
			opts:   func(o *events.CorrelatorOptions) { o.Aggregation.Disabled = true },
			steps: repeat3(func(i int) step {
				return step{ev: newEvent(a, "Normal", "R", fmt.Sprint("m", i), t0), at: t0, decision: events.Create, count: 1}
			}, 20),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := events.DefaultCorrelatorOptions()
			if tc.opts != nil {
				tc.opts(&o)
			}
			c := mustCorrelator(t, o)
			runSteps(t, c, tc.steps)
			if tc.stats != nil && c.Stats() != *tc.stats {
				t.Errorf("%s: stats %+v, want %+v", tc.reason, c.Stats(), *tc.stats)
			}
		})
	}
}

func repeat3(f func(i int) step, n int) []step {
	out := make([]step, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// TestAggregateEventShape checks spec D.6: the aggregate event gets first/last timestamps at
// now and loses annotations and reporting fields. Its name is nodestate's (the package doc's
// differences): the name of the event it replaces, or client-go's fresh name from now without
// the UUID fallback when that event has none.
func TestAggregateEventShape(t *testing.T) {
	o := events.DefaultCorrelatorOptions()
	o.Aggregation.MaxEvents = 1
	c := mustCorrelator(t, o)
	ev := newEvent(podRef("foo", "bar", "spec.containers{c}"), "Warning", "Failed", "boom", t0.Add(-time.Hour))
	ev.Annotations = map[string]string{"a": "b"}
	ev.Related = &v1.ObjectReference{Name: "x"}
	now := t0.Add(123 * time.Nanosecond)
	res, err := c.Correlate(ev, now)
	if err != nil {
		t.Fatal(err)
	}
	want := v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: ev.Name, Namespace: "baz"},
		InvolvedObject: ev.InvolvedObject,
		Reason:         "Failed",
		Message:        "(combined from similar events): boom",
		Source:         ev.Source,
		FirstTimestamp: metav1.NewTime(now),
		LastTimestamp:  metav1.NewTime(now),
		Count:          1,
		Type:           "Warning",
	}
	if diff := cmp.Diff(&want, res.Event); diff != "" || !res.Aggregated || res.Decision != events.Create {
		t.Errorf("aggregate event mismatch (-want +got):\n%s", diff)
	}
	c = mustCorrelator(t, o)
	ev.Name = ""
	if res, err := c.Correlate(ev, now); err != nil || res.Event.Name != fmt.Sprintf("foo.%x", now.UnixNano()) {
		t.Errorf("D.6: an unnamed event's aggregate is named %q (%v), want client-go's fresh name", res.Event.Name, err)
	}
}

func TestOptionsValidate(t *testing.T) {
	type refused struct {
		name, field string
		// value, when set, is the refused value the error must carry.
		value string
		mod   func(*events.CorrelatorOptions)
	}
	cases := []refused{
		{"zero-cache", "CacheSize", "", func(o *events.CorrelatorOptions) { o.CacheSize = 0 }},
		{"zero-max-events", "Aggregation.MaxEvents", "", func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 0 }},
		{"huge-max-events", "Aggregation.MaxEvents", "", func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 5000 }},
		{"max-events-1025", "Aggregation.MaxEvents", "1025", func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 1025 }},
		{"zero-window", "Aggregation.Window", "", func(o *events.CorrelatorOptions) { o.Aggregation.Window = 0 }},
		{"zero-burst", "SpamFilter.Burst", "", func(o *events.CorrelatorOptions) { o.SpamFilter.Burst = 0 }},
		{"zero-qps", "SpamFilter.QPS", "0", func(o *events.CorrelatorOptions) { o.SpamFilter.QPS = 0 }},
		{"negative-qps", "SpamFilter.QPS", "-0.25", func(o *events.CorrelatorOptions) { o.SpamFilter.QPS = -0.25 }},
	}
	if strconv.IntSize == 64 {
		cases = append(cases, refused{"cache-over-int32", "CacheSize", strconv.Itoa(math.MaxInt32 + 1), func(o *events.CorrelatorOptions) { o.CacheSize = math.MaxInt32 + 1 }})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := events.DefaultCorrelatorOptions()
			tc.mod(&o)
			_, err := events.NewCorrelator(o)
			var oe *events.OptionError
			if !asOptionError(err, &oe) || oe.Field != tc.field || (tc.value != "" && oe.Value != tc.value) {
				t.Fatalf("got %v, want an OptionError on %s carrying the value %q", err, tc.field, tc.value)
			}
		})
	}
	// The limits themselves are valid: a cache of one entry or of the largest int32 (the
	// caches index their entries with int32), a single message or 1024 per window, the
	// shortest window, a bucket of one token, the smallest positive rate.
	limits := []struct {
		name string
		mod  func(*events.CorrelatorOptions)
	}{
		{"cache-1", func(o *events.CorrelatorOptions) { o.CacheSize = 1 }},
		{"cache-max-int32", func(o *events.CorrelatorOptions) { o.CacheSize = math.MaxInt32 }},
		{"max-events-1", func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 1 }},
		{"max-events-1024", func(o *events.CorrelatorOptions) { o.Aggregation.MaxEvents = 1024 }},
		{"window-1ns", func(o *events.CorrelatorOptions) { o.Aggregation.Window = time.Nanosecond }},
		{"burst-1", func(o *events.CorrelatorOptions) { o.SpamFilter.Burst = 1 }},
		{"qps-smallest", func(o *events.CorrelatorOptions) { o.SpamFilter.QPS = math.SmallestNonzeroFloat32 }},
	}
	for _, tc := range limits {
		o := events.DefaultCorrelatorOptions()
		tc.mod(&o)
		if err := o.Validate(); err != nil {
			t.Errorf("%s: a limit of the documented range is valid, got %v", tc.name, err)
		}
	}
	// A sink queue's limits: one entry, one try, no pause between attempts.
	if err := (events.SinkQueueOptions{QueueSize: 1, MaxTries: 1, Sleep: 0}).Validate(); err != nil {
		t.Errorf("a sink queue of one entry, one try and no sleep is valid, got %v", err)
	}
	var zero events.CorrelatorOptions
	if _, err := events.NewCorrelator(zero); err == nil {
		t.Fatal("the zero Options must be refused, not read as defaults")
	}
	o := events.CorrelatorOptions{CacheSize: 1, Aggregation: events.AggregationOptions{Disabled: true}, SpamFilter: events.SpamFilterOptions{Disabled: true}}
	if _, err := events.NewCorrelator(o); err != nil {
		t.Fatalf("disabled stages need no parameters: %v", err)
	}
}
