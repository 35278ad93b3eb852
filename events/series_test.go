package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

func seriesEvent(name, action, note string, at time.Time) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", name, at.UnixNano()), Namespace: "ns1"},
		EventTime:           metav1.NewMicroTime(at),
		ReportingController: "kubelet",
		ReportingInstance:   "kubelet-node-1",
		Action:              action,
		Reason:              "Started",
		Regarding:           v1.ObjectReference{Kind: "Pod", Namespace: "ns1", Name: name, UID: "u1", APIVersion: "v1"},
		Note:                note,
		Type:                v1.EventTypeNormal,
	}
}

// TestSeriesObserveN2 covers N2 and N3 on the pure series cache, and spec B.3's table.
func TestSeriesObserveN2(t *testing.T) {
	s := events.NewSeries()
	w, ok := s.Observe(seriesEvent("pod1", "Start", "first", t0), t0)
	if !ok || w.Patch != nil || w.Event.Series != nil {
		t.Fatalf("B.3 missing: want a create without series, got %+v %v", w, ok)
	}
	w, ok = s.Observe(seriesEvent("pod1", "Start", "second note", t0.Add(time.Second)), t0.Add(time.Second))
	if !ok || w.Event.Series == nil || w.Event.Series.Count != 2 || w.Event.Note != "first" {
		t.Fatalf("B.3 second occurrence: want a series patch of count 2 keeping the first note, got %+v", w.Event)
	}
	wantPatch := fmt.Sprintf(`{"series":{"count":2,"lastObservedTime":%q}}`, t0.Add(time.Second).Format(metav1.RFC3339Micro))
	if string(w.Patch) != wantPatch {
		t.Fatalf("B.3 patch: got %s, want %s", w.Patch, wantPatch)
	}
	if _, ok := s.Observe(seriesEvent("pod1", "Start", "third", t0.Add(2*time.Second)), t0.Add(2*time.Second)); ok {
		t.Fatal("B.3 third occurrence: want nothing written")
	}
	if got, _ := s.Get(events.KeyOf(seriesEvent("pod1", "Start", "", t0))); got.Series.Count != 3 {
		t.Fatalf("B.3: local count %d, want 3", got.Series.Count)
	}
	// N2: only the action changed: not isomorphic, a new create without series.
	w, ok = s.Observe(seriesEvent("pod1", "Restart", "first", t0), t0)
	if !ok || w.Patch != nil || w.Event.Series != nil {
		t.Fatalf("N2: want a create without series, got %+v", w.Event)
	}
	// D.12: the resourceVersion of regarding is part of the key.
	ev := seriesEvent("pod1", "Start", "first", t0)
	ev.Regarding.ResourceVersion = "9"
	if w, _ := s.Observe(ev, t0); w.Event == nil || w.Event.Series != nil {
		t.Fatal("D.12: a different regarding resourceVersion must be a new event")
	}
}

func TestSeriesPatchMatchesStrategicMergePatch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := events.NewSeries()
		at := time.Unix(rapid.Int64Range(0, 1<<33).Draw(t, "sec"), rapid.Int64Range(0, 999999999).Draw(t, "nsec"))
		ev := seriesEvent("pod1", "Start", rapid.String().Draw(t, "note"), at)
		s.Observe(ev, at)
		w, _ := s.Observe(ev, at)
		old := w.Event.DeepCopy()
		old.Series = nil
		oldData, _ := json.Marshal(old)
		newData, _ := json.Marshal(w.Event)
		want, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, eventsv1.Event{})
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != string(w.Patch) {
			t.Fatalf("series patch %s, strategic merge patch %s", w.Patch, want)
		}
	})
}

// TestSeriesFinishAndRefresh covers N5 and spec B.4 on the pure cache.
func TestSeriesFinishAndRefresh(t *testing.T) {
	s := events.NewSeries()
	s.Observe(seriesEvent("single", "Start", "n", t0), t0)
	s.Observe(seriesEvent("series", "Start", "n", t0), t0)
	s.Observe(seriesEvent("series", "Start", "n", t0), t0.Add(time.Minute))
	if ws := s.Refresh(); len(ws) != 1 || ws[0].Event.Regarding.Name != "series" {
		t.Fatalf("B.4 refresh: %d writes, want the one series", len(ws))
	}
	// N5: the entry stays after a refresh, written or not.
	if s.Len() != 2 {
		t.Fatalf("N5: cache size %d, want 2", s.Len())
	}
	if ws := s.Finish(t0.Add(SeriesFinishPlus(0))); len(ws) != 0 || s.Len() != 2 {
		t.Fatalf("B.4 finish at exactly 6 min: %d writes, size %d; want nothing done", len(ws), s.Len())
	}
	ws := s.Finish(t0.Add(time.Minute + SeriesFinishPlus(time.Nanosecond)))
	if len(ws) != 1 || s.Len() != 1 {
		t.Fatalf("B.4 finish: %d writes and size %d, want the series written and the singleton forgotten", len(ws), s.Len())
	}
	s.Finished(ws[0], true)
	if s.Len() != 1 {
		t.Fatal("B.4: a final write asking for a retry keeps the series")
	}
	s.Finished(ws[0], false)
	if s.Len() != 0 {
		t.Fatal("B.4: a final write done forgets the series")
	}
	// B.4 consequence: a repeat after the singleton was forgotten is a new event.
	if w, ok := s.Observe(seriesEvent("single", "Start", "n", t0), t0.Add(time.Hour)); !ok || w.Event.Series != nil {
		t.Fatal("B.4: a repeat after finish forgot the singleton must be created anew")
	}
}

func SeriesFinishPlus(d time.Duration) time.Duration { return events.SeriesFinish + d }

// TestSeriesModel: rapid state machine over the series cache against a plain count model.
func TestSeriesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := events.NewSeries()
		counts := map[events.SeriesKey]int{}
		last := map[events.SeriesKey]time.Time{}
		now := t0
		t.Repeat(map[string]func(*rapid.T){
			"observe": func(t *rapid.T) {
				ev := seriesEvent(rapid.SampledFrom([]string{"a", "b"}).Draw(t, "pod"), rapid.SampledFrom([]string{"Start", "Kill"}).Draw(t, "action"), "n", now)
				k := events.KeyOf(ev)
				w, ok := s.Observe(ev, now)
				counts[k]++
				last[k] = now
				switch c := counts[k]; {
				case c == 1 && (!ok || w.Patch != nil):
					t.Fatalf("first occurrence: want a create, got %+v %v", w, ok)
				case c == 2 && (!ok || w.Patch == nil || w.Event.Series.Count != 2):
					t.Fatalf("second occurrence: want a series patch of 2, got %+v", w)
				case c > 2 && ok:
					t.Fatalf("occurrence %d: want no write", c)
				}
			},
			"wait": func(t *rapid.T) {
				now = now.Add(rapid.SampledFrom([]time.Duration{time.Second, time.Minute, 7 * time.Minute}).Draw(t, "gap"))
			},
			"finish": func(t *rapid.T) {
				for _, w := range s.Finish(now) {
					if counts[w.Key] < 2 {
						t.Fatalf("finish wrote a singleton")
					}
					s.Finished(w, false)
				}
				for k := range counts {
					if now.Sub(last[k]) > events.SeriesFinish {
						delete(counts, k)
					}
				}
			},
			"": func(t *rapid.T) {
				if s.Len() != len(counts) {
					t.Fatalf("cache holds %d, model %d", s.Len(), len(counts))
				}
				for k, c := range counts {
					ev, ok := s.Get(k)
					if !ok {
						t.Fatalf("key missing")
					}
					if c >= 2 && int(ev.Series.Count) != c {
						t.Fatalf("series count %d, model %d", ev.Series.Count, c)
					}
				}
			},
		})
	})
}

type seriesHarness struct {
	clock *testingclock.FakeClock
	b     *events.SeriesBroadcaster
	sink  *eventstest.SeriesSink
	rec   *events.SeriesRecorder
}

func newSeriesHarness(t *testing.T) *seriesHarness {
	fc := testingclock.NewFakeClock(t0)
	sink := eventstest.NewSeriesSink(fc, 0)
	return startSeries(t, fc, sink, zeroRand{})
}

// startSeries starts a series broadcaster on fc writing to sink, with its recorder.
func startSeries(t *testing.T, fc *testingclock.FakeClock, sink *eventstest.SeriesSink, r events.Rand) *seriesHarness {
	t.Helper()
	h := startSeriesOn(t, fc, sink, r)
	h.clock = fc
	return h
}

// startSeriesOn is startSeries on any clock (its harness has no fake clock).
func startSeriesOn(t *testing.T, c clock.Clock, sink *eventstest.SeriesSink, r events.Rand) *seriesHarness {
	t.Helper()
	opts := events.DefaultSeriesBroadcasterOptions()
	opts.Clock, opts.Queue.Rand = c, r
	b, err := events.NewSeriesBroadcaster(opts, sink)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() { // after a failure, a Shutdown that did not end is reported already
			_ = shutdownWithin(t, b, context.Background())
		}
	})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecorder("kubelet", "kubelet-node-1", events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &seriesHarness{b: b, sink: sink, rec: rec}
}

func (h *seriesHarness) settle(t *testing.T) {
	t.Helper()
	// Flush writes on this goroutine everything due at the clock's time, after the worker's
	// write in flight if any.
	if err := h.b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSeriesBroadcasterN3: two identical events give exactly one stored event, with a series.
func TestSeriesBroadcasterN3(t *testing.T) {
	h := newSeriesHarness(t)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod1", Namespace: "ns1", UID: "u1"}}
	h.rec.Eventf(pod, nil, v1.EventTypeNormal, "Started", "Start", "started %s", "c")
	h.rec.Eventf(pod, nil, v1.EventTypeNormal, "Started", "Start", "started %s", "c")
	if err := shutdownWithin(t, h.b, context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := h.sink.Events()
	if len(evs) != 1 || evs[0].Series == nil || evs[0].Series.Count != 2 {
		t.Fatalf("N3: stored %+v, want one event with a series of 2", evs)
	}
}

// TestSeriesBroadcasterLoops: later occurrences are written by the 6 min finish (spec B.4, D.13).
func TestSeriesBroadcasterLoops(t *testing.T) {
	h := newSeriesHarness(t)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod1", Namespace: "ns1", UID: "u1"}}
	for range 5 {
		h.rec.Eventf(pod, nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	}
	h.settle(t)
	if evs := h.sink.Events(); len(evs) != 1 || evs[0].Series.Count != 2 {
		t.Fatalf("D.13: before the finish loop the server holds %+v, want count 2", evs)
	}
	h.clock.Step(events.SeriesFinish)
	h.settle(t)
	h.clock.Step(events.SeriesFinish)
	h.settle(t)
	if err := shutdownWithin(t, h.b, context.Background()); err != nil {
		t.Fatal(err)
	}
	if evs := h.sink.Events(); len(evs) != 1 || evs[0].Series.Count != 5 {
		t.Fatalf("B.4: after the finish loop the server holds %+v, want count 5", evs)
	}
	if st := h.b.Stats(); st.Cached != 0 || st.Counted != 3 || st.Submitted != 5 || st.Processed != 5 {
		t.Fatalf("B.4: stats %+v, want the 5 occurrences submitted and processed, the series finished and 3 occurrences counted locally", st)
	}
}

// TestSeriesBroadcasterN8: the series patch finds no event (404: the first occurrence expired
// on the server) and creates it, series included: one event holding the series. client-go
// reaches this case when its goroutine per event writes the series before the singleton; the
// nodestate runner writes in order, so the test removes the singleton through the sink's TTL.
func TestSeriesBroadcasterN8(t *testing.T) {
	fc := testingclock.NewFakeClock(t0)
	sink := eventstest.NewSeriesSink(fc, time.Minute)
	h := startSeries(t, fc, sink, nil)
	b := h.b
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod1", Namespace: "ns1", UID: "u1"}}
	h.rec.Eventf(pod, nil, v1.EventTypeNormal, "Started", "Start", "started")
	h.settle(t)
	fc.Step(2 * time.Minute)
	if len(sink.Events()) != 0 {
		t.Fatal("the first occurrence should have expired")
	}
	h.rec.Eventf(pod, nil, v1.EventTypeNormal, "Started", "Start", "started")
	if err := shutdownWithin(t, b, context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := sink.Events()
	if len(evs) != 1 || evs[0].Series == nil || evs[0].Series.Count != 2 || sink.Calls(eventstest.OpPatch) != 1 || sink.Calls(eventstest.OpCreate) != 2 {
		t.Fatalf("N8: stored %+v after %d patches and %d creates, want one event holding the series", evs, sink.Calls(eventstest.OpPatch), sink.Calls(eventstest.OpCreate))
	}
}

// TestSeriesRecorderFieldsN9N11N12 covers N9, N11, N12 and the validation of spec B.2.
func TestSeriesRecorderFieldsN9N11N12(t *testing.T) {
	h := newSeriesHarness(t)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod1", Namespace: "ns1", UID: "u1"}}
	ev, err := h.rec.MakeEvent(pod, nil, nil, v1.EventTypeNormal, "Started", "Start", "note")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Name != fmt.Sprintf("pod1.%x", t0.UnixNano()) || ev.Namespace != "ns1" || ev.ReportingController != "kubelet" || ev.ReportingInstance != "kubelet-node-1" || ev.Series != nil {
		t.Fatalf("N9: got %+v", ev.ObjectMeta)
	}
	ip := &v1.ObjectReference{Kind: "IPAddress", APIVersion: "networking.k8s.io/v1", Name: "2001:db8::123"}
	ev, err = h.rec.MakeEvent(ip, nil, nil, v1.EventTypeNormal, "Allocated", "Allocate", "")
	if err != nil || len(ev.Name) != 36 || ev.Namespace != "default" {
		t.Fatalf("N11: got name %q namespace %q (%v), want a UUID in default", ev.Name, ev.Namespace, err)
	}
	long := &v1.ObjectReference{Kind: "Pod", Namespace: "ns1", Name: strings.Repeat("a", 4*253)}
	if ev, err = h.rec.MakeEvent(long, nil, nil, v1.EventTypeNormal, "R", "A", ""); err != nil || len(ev.Name) != 36 {
		t.Fatalf("N12: got name of %d characters (%v), want a UUID", len(ev.Name), err)
	}
	cases := []struct{ field, typ, reason, action, note string }{
		{"type", "Info", "R", "A", ""},
		{"reason", "Normal", "", "A", ""},
		{"reason", "Normal", strings.Repeat("r", 129), "A", ""},
		{"action", "Normal", "R", "", ""},
		{"action", "Normal", "R", strings.Repeat("a", 129), ""},
		{"note", "Normal", "R", "A", strings.Repeat("n", 1025)},
	}
	for _, c := range cases {
		err := h.rec.Record(pod, nil, nil, c.typ, c.reason, c.action, c.note)
		var inv *events.InvalidEventError
		if !errors.As(err, &inv) || inv.Field != c.field {
			t.Errorf("B.2 %s: got %v", c.field, err)
		}
	}
	if err := h.rec.Record(pod, nil, nil, "Normal", strings.Repeat("r", 128), strings.Repeat("a", 128), strings.Repeat("n", 1024)); err != nil {
		t.Errorf("B.2: the limits themselves are accepted, got %v", err)
	}
	if st := h.b.Stats(); st.DroppedInvalid != uint64(len(cases)) {
		t.Errorf("B.2: %d invalid counted, want %d", st.DroppedInvalid, len(cases))
	}
}

// TestSeriesBroadcasterAlreadyExists: AlreadyExists is retried only for a series write (B.3).
func TestSeriesBroadcasterAlreadyExists(t *testing.T) {
	h := newSeriesHarness(t)
	h.sink.SetFault(func(op eventstest.Op, ns, name string, n int) error {
		if op == eventstest.OpCreate {
			return apierrors.NewAlreadyExists(eventsResource(), name)
		}
		return nil
	})
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod1", Namespace: "ns1", UID: "u1"}}
	h.rec.Eventf(pod, nil, v1.EventTypeNormal, "Started", "Start", "started")
	if err := shutdownWithin(t, h.b, context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := h.b.Stats(); h.sink.Calls(eventstest.OpCreate) != 1 || st.DroppedRejected != 1 {
		t.Fatalf("B.3: a singleton meeting AlreadyExists is dropped after 1 attempt; %d attempts, stats %+v", h.sink.Calls(eventstest.OpCreate), st)
	}
}

// TestSeriesRefreshN5: a refresh write that fails leaves the entry as it was; one that succeeds
// replaces it with the server's copy; either way the entry stays (size 1).
func TestSeriesRefreshN5(t *testing.T) {
	s := events.NewSeries()
	s.Observe(seriesEvent("pod1", "Start", "n", t0), t0)
	s.Observe(seriesEvent("pod1", "Start", "n", t0), t0)
	ws := s.Refresh()
	if len(ws) != 1 || ws[0].Patch == nil {
		t.Fatalf("N5: %d refresh writes, want one series patch", len(ws))
	}
	if s.Len() != 1 {
		t.Fatalf("N5: failed refresh left size %d, want 1", s.Len())
	}
	srv := ws[0].Event.DeepCopy()
	srv.ResourceVersion = "42"
	s.Refreshed(ws[0], srv)
	if got, _ := s.Get(ws[0].Key); s.Len() != 1 || got.ResourceVersion != "42" {
		t.Fatalf("N5: after a successful refresh size %d, cached rv %q; want 1 and the server copy", s.Len(), got.ResourceVersion)
	}
}

// TestSeriesBroadcasterN6: a singleton is saved as the recorder built it.
func TestSeriesBroadcasterN6(t *testing.T) {
	h := newSeriesHarness(t)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod1", Namespace: "ns1", UID: "u1"}}
	want, err := h.rec.MakeEvent(pod, nil, map[string]string{"a": "b"}, v1.EventTypeNormal, "Started", "Start", "started")
	if err != nil {
		t.Fatal(err)
	}
	h.rec.AnnotatedEventf(pod, nil, map[string]string{"a": "b"}, v1.EventTypeNormal, "Started", "Start", "started")
	// MakeEvent took the clock's nanosecond for its name; the recorded event, at the same
	// instant, is named one nanosecond later.
	want.Name = fmt.Sprintf("pod1.%x", t0.UnixNano()+1)
	if err := shutdownWithin(t, h.b, context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := h.sink.Events()
	if len(evs) != 1 {
		t.Fatalf("N6: %d events stored", len(evs))
	}
	got := evs[0]
	got.ResourceVersion, got.UID, got.CreationTimestamp = "", "", metav1.Time{}
	if diff := cmpDiff(*want, got); diff != "" {
		t.Fatalf("N6 mismatch (-want +got):\n%s", diff)
	}
}
