package events_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

// TestSeriesBroadcasterStartContext: NewSeriesBroadcaster starts nothing; Start starts the
// worker; its context ending shuts the broadcaster down as Shutdown does, leaving no
// goroutine (spec/events.md section B.4: the loops stop with the context).
func TestSeriesBroadcasterStartContext(t *testing.T) {
	fc := testingclock.NewFakeClock(t0)
	sink := eventstest.NewSeriesSink(fc, 0)
	opts := events.DefaultSeriesBroadcasterOptions()
	opts.Clock = fc
	// goleak retries until goroutines that are ending have ended, so a
	// worker still leaving after Shutdown returned is not counted.
	before := goleak.IgnoreCurrent()
	b, err := events.NewSeriesBroadcaster(opts, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := goleak.Find(before); err != nil {
		t.Fatalf("NewSeriesBroadcaster started a goroutine: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(ctx); err != nil {
		t.Fatalf("a second Start: %v, want nil (it does nothing)", err)
	}
	rec, err := b.NewRecorder("kubelet", "kubelet-node-1", events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Eventf(testPod("foo", "bar"), nil, v1.EventTypeNormal, "Started", "Start", "started")
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancel()
	// The context's end alone shuts the broadcaster down: its loops stop (it has no work of
	// its own left) and recording is refused.
	spinUntil(t, "the loops to stop when Start's context ended", func() bool {
		_, waiting := b.NextRetry()
		return !waiting
	})
	if err := rec.Record(testPod("foo", "bar"), nil, nil, v1.EventTypeNormal, "Started", "Start", "late"); !errors.Is(err, events.ErrShutdown) {
		t.Fatalf("after Start's context ended, before Shutdown: %v, want ErrShutdown", err)
	}
	if err := shutdownWithin(t, b, context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if err := rec.Record(testPod("foo", "bar"), nil, nil, v1.EventTypeNormal, "Started", "Start", "again"); !errors.Is(err, events.ErrShutdown) {
		t.Fatalf("after the context ended: %v, want ErrShutdown", err)
	}
	if st := b.Stats(); st.Created != 1 || len(sink.Events()) != 1 {
		t.Fatalf("stats %+v", st)
	}
	if err := goleak.Find(before); err != nil {
		t.Fatalf("goroutines left after the context ended: %v", err)
	}
}

// TestSeriesFinishAheadOfWaitingRetry: a finish pass that falls due while a later event
// waits for its retry sleep writes the series' final count first (spec/events.md section
// B.4; the finish writes go ahead of the queued events), then the retry is made when its
// sleep ends; nothing queued is lost or reordered.
func TestSeriesFinishAheadOfWaitingRetry(t *testing.T) {
	fc := testingclock.NewFakeClock(t0)
	sink := eventstest.NewSeriesSink(fc, 0)
	sink.SetFault(func(op eventstest.Op, _, name string, n int) error {
		if op == eventstest.OpCreate && strings.HasPrefix(name, "pod2.") && n == 2 {
			return errors.New("connection refused")
		}
		return nil
	})
	// A retry sleep longer than the finish period: the finish pass comes while pod2's event
	// waits behind its sleep.
	b, rec := newFlushedSeries(t, fc, sink, func(o *events.SeriesBroadcasterOptions) { o.Queue.Sleep = 10 * time.Minute })
	pod1, pod2 := testPod("pod1", "u1"), testPod("pod2", "u2")
	rec.Eventf(pod1, nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	rec.Eventf(pod1, nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	rec.Eventf(pod2, nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	flush := func() {
		t.Helper()
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	flush() // pod1 created, its series patched; pod2's create fails and sleeps 10 min
	fc.Step(events.SeriesFinish + time.Second)
	flush() // the finish pass: pod1's series has been idle for over 6 min
	fc.Step(4 * time.Minute)
	flush() // pod2's retry
	var got []string
	for _, r := range sink.Requests() {
		s := string(r.Op) + " " + r.Event.Regarding.Name
		if r.Err != nil {
			s += " (failed)"
		}
		got = append(got, s)
	}
	want := []string{"create pod1", "patch pod1", "create pod2 (failed)", "patch pod1", "create pod2"}
	if diff := cmpDiff(want, got); diff != "" {
		t.Fatalf("B.4: the finish write goes ahead of the event waiting for its retry; requests mismatch (-want +got):\n%s", diff)
	}
	if st := b.Stats(); st.Queued != 0 || st.Cached != 0 || st.Created != 2 || st.Patched != 2 || st.Retries != 1 {
		t.Fatalf("B.4: stats %+v, want pod1's series finished, pod2's singleton forgotten by the same pass, both events written, one retry", st)
	}
	if err := shutdownWithin(t, b, context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSeriesLoopWriteFails: a refresh or finish write gets one attempt (spec/events.md
// section B.4). A refresh write the server refuses leaves the series cached, counted as
// rejected; a finish write the server refuses forgets the series; a finish write that asks
// for a retry keeps it, and the next finish pass writes it.
func TestSeriesLoopWriteFails(t *testing.T) {
	tests := []struct {
		rule, reason string
		// fail is the error of the patches after the first (the series patch of count 2).
		fail error
		// failOnce limits fail to the second patch.
		failOnce bool
		// keepAlive records an occurrence every 5 min for 30 min, so that the refresh writes
		// the series before any finish pass does.
		keepAlive bool
		// steps are the clock steps after the first flush, each followed by a flush.
		steps                     []time.Duration
		wantCached                int
		wantPatched, wantRejected uint64
		// checkRejected says whether DroppedRejected is checked.
		checkRejected  bool
		wantPatchCalls int
	}{
		{rule: "B.4 refresh refused", reason: "the refresh write refused by the server is dropped and counted; the series stays cached",
			fail: apierrors.NewInternalError(errors.New("etcd down")), keepAlive: true,
			wantCached: 1, wantPatched: 1, wantRejected: 1, checkRejected: true, wantPatchCalls: 2},
		{rule: "B.4 finish refused", reason: "the final write refused by the server forgets the series",
			fail: apierrors.NewInternalError(errors.New("etcd down")), steps: []time.Duration{events.SeriesFinish + time.Second, events.SeriesFinish},
			wantCached: 0, wantPatched: 1, wantPatchCalls: 2},
		{rule: "B.4 finish retried", reason: "the final write lost to a transport error keeps the series; the next finish pass writes it",
			fail: errors.New("connection refused"), failOnce: true, steps: []time.Duration{events.SeriesFinish + time.Second, events.SeriesFinish},
			wantCached: 0, wantPatched: 2, wantRejected: 0, checkRejected: true, wantPatchCalls: 3},
	}
	for _, tt := range tests {
		fc := testingclock.NewFakeClock(t0)
		sink := eventstest.NewSeriesSink(fc, 0)
		sink.SetFault(func(op eventstest.Op, _, _ string, n int) error {
			if op == eventstest.OpPatch && (n == 2 || (n > 2 && !tt.failOnce)) {
				return tt.fail
			}
			return nil
		})
		b, rec := newFlushedSeries(t, fc, sink, nil)
		pod := testPod("pod1", "u1")
		record := func() { rec.Eventf(pod, nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off") }
		flush := func() {
			if err := b.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		record()
		record()
		flush() // the create and the series patch of count 2
		if tt.keepAlive {
			for range 6 {
				fc.Step(5 * time.Minute)
				record()
				flush()
			}
		}
		for _, d := range tt.steps {
			fc.Step(d)
			flush()
		}
		st := b.Stats()
		evs := sink.Events()
		if st.Cached != tt.wantCached || st.Patched != tt.wantPatched || (tt.checkRejected && st.DroppedRejected != tt.wantRejected) ||
			sink.Calls(eventstest.OpPatch) != tt.wantPatchCalls || len(evs) != 1 || evs[0].Series == nil {
			t.Errorf("%s: %s: stats %+v, %d patch calls, server holds %+v", tt.rule, tt.reason, st, sink.Calls(eventstest.OpPatch), evs)
		}
		if err := shutdownWithin(t, b, context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// cancellingSeriesSink ends a caller's context during its next patch and fails that patch
// once the context it was given has ended, as an API server too slow for the caller's
// deadline.
type cancellingSeriesSink struct {
	*eventstest.SeriesSink
	cancel func()
}

func (s *cancellingSeriesSink) Patch(ctx context.Context, ev *eventsv1.Event, patch []byte) (*eventsv1.Event, error) {
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.SeriesSink.Patch(ctx, ev, patch)
}

// TestSeriesShutdownCutShortCountsEvents: a Shutdown whose context ends drops what it could
// not write. DroppedShutdown counts the events lost, here the one recorded after the series;
// the series' final write, cut short as well, loses no event (the event is on the server, its
// count 2), so it is not counted (SeriesStats; spec/events.md section B.4: the loops stop with
// the broadcaster).
func TestSeriesShutdownCutShortCountsEvents(t *testing.T) {
	fc := testingclock.NewFakeClock(t0)
	sink := &cancellingSeriesSink{SeriesSink: eventstest.NewSeriesSink(fc, 0)}
	b, rec := newFlushedSeries(t, fc, sink, nil)
	rec.Eventf(testPod("pod1", "u1"), nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	rec.Eventf(testPod("pod1", "u1"), nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	fc.Step(events.SeriesFinish + time.Second)
	rec.Eventf(testPod("pod2", "u2"), nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	// A Flush whose context ends during the final write of pod1's series leaves that write
	// at the head, pod2's event behind it.
	ctx1, cancel1 := context.WithCancel(context.Background())
	sink.cancel = cancel1
	if err := flushWithin(t, b, ctx1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush cut short: %v, want context.Canceled", err)
	}
	// Shutdown's context ends during the same write: nothing more is written.
	ctx2, cancel2 := context.WithCancel(context.Background())
	sink.cancel = cancel2
	if err := shutdownWithin(t, b, ctx2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown cut short: %v, want context.Canceled", err)
	}
	st := b.Stats()
	if st.DroppedShutdown != 1 || st.Queued != 0 || st.Created != 1 || st.Patched != 1 {
		t.Errorf("stats %+v, want pod2's event counted as dropped at shutdown, the final write not counted, nothing left queued", st)
	}
	if evs := sink.Events(); len(evs) != 1 || evs[0].Regarding.Name != "pod1" || evs[0].Series == nil || evs[0].Series.Count != 2 {
		t.Errorf("the server holds %+v, want pod1's event with its series of 2", evs)
	}
}

// TestSeriesWritesSorted: Refresh and Finish return their writes sorted by namespace, then
// name, then (for events of one name, reported by two instances at one nanosecond) by key,
// so that a run's writes do not depend on map order (the package documentation's
// differences: client-go walks a map).
func TestSeriesWritesSorted(t *testing.T) {
	s := events.NewSeries()
	observe := func(ns, pod, instance string) {
		ev := seriesEvent(pod, "Start", "n", t0)
		ev.Namespace, ev.Regarding.Namespace, ev.ReportingInstance = ns, ns, instance
		s.Observe(ev, t0)
		s.Observe(ev, t0)
	}
	// Observed out of order; the map holding them has no order either.
	observe("ns2", "pod2", "kubelet-node-1")
	observe("ns1", "pod2", "kubelet-node-1")
	observe("ns2", "pod1", "kubelet-node-1")
	observe("ns1", "pod1", "kubelet-node-2")
	observe("ns1", "pod1", "kubelet-node-1")
	want := []string{"ns1/pod1 kubelet-node-1", "ns1/pod1 kubelet-node-2", "ns1/pod2 kubelet-node-1", "ns2/pod1 kubelet-node-1", "ns2/pod2 kubelet-node-1"}
	render := func(ws []events.SeriesWrite) []string {
		var out []string
		for _, w := range ws {
			out = append(out, w.Event.Namespace+"/"+w.Event.Regarding.Name+" "+w.Key.ReportingInstance)
		}
		return out
	}
	for range 5 { // map order changes from one walk to the next
		if diff := cmpDiff(want, render(s.Refresh())); diff != "" {
			t.Fatalf("Refresh order mismatch (-want +got):\n%s", diff)
		}
	}
	if diff := cmpDiff(want, render(s.Finish(t0.Add(events.SeriesFinish+time.Second)))); diff != "" {
		t.Fatalf("Finish order mismatch (-want +got):\n%s", diff)
	}
}

// newFlushedSeries returns a series broadcaster on fc that is not started (its tests drive it
// with Flush), retry sleeps without jitter, options changed by with if given, and a recorder
// for kubelet on kubelet-node-1.
func newFlushedSeries(t *testing.T, fc *testingclock.FakeClock, sink events.SeriesSink, with func(*events.SeriesBroadcasterOptions)) (*events.SeriesBroadcaster, *events.SeriesRecorder) {
	t.Helper()
	opts := events.DefaultSeriesBroadcasterOptions()
	opts.Clock, opts.Queue.Rand = fc, zeroRand{}
	if with != nil {
		with(&opts)
	}
	b, err := events.NewSeriesBroadcaster(opts, sink)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecorder("kubelet", "kubelet-node-1", events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b, rec
}
