package events_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

// TestZeroBroadcasters: a Broadcaster or SeriesBroadcaster nobody built with its constructor
// (a struct field left zero) refuses every call with ErrNotInitialized, reports no counters and
// no retry, and starts nothing (docs/conventions.md section 2).
func TestZeroBroadcasters(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		rule, reason string
		call         func() error
	}{
		{"conventions 2 Broadcaster.Flush", "flushing a zero broadcaster is refused", func() error { return new(events.Broadcaster).Flush(ctx) }},
		{"conventions 2 Broadcaster.Shutdown", "shutting a zero broadcaster down is refused", func() error { return new(events.Broadcaster).Shutdown(ctx) }},
		{"conventions 2 Broadcaster.AddSink", "a zero broadcaster takes no sink", func() error {
			return new(events.Broadcaster).AddSink(eventstest.NewSink(nil, 0), events.DefaultCorrelatorOptions())
		}},
		{"conventions 2 Broadcaster.StartRecordingToSink", "a zero broadcaster starts no sink goroutine", func() error {
			return new(events.Broadcaster).StartRecordingToSink(eventstest.NewSink(nil, 0), events.DefaultCorrelatorOptions())
		}},
		{"conventions 2 Broadcaster.NewRecorder", "a zero broadcaster gives no recorder", func() error {
			_, err := new(events.Broadcaster).NewRecorder(v1.EventSource{Component: "kubelet"}, events.RecorderOptions{})
			return err
		}},
		{"conventions 2 SeriesBroadcaster.Start", "a zero series broadcaster starts nothing", func() error { return new(events.SeriesBroadcaster).Start(ctx) }},
		{"conventions 2 SeriesBroadcaster.Flush", "flushing a zero series broadcaster is refused", func() error { return new(events.SeriesBroadcaster).Flush(ctx) }},
		{"conventions 2 SeriesBroadcaster.Shutdown", "shutting a zero series broadcaster down is refused", func() error { return new(events.SeriesBroadcaster).Shutdown(ctx) }},
		{"conventions 2 SeriesBroadcaster.NewRecorder", "a zero series broadcaster gives no recorder", func() error {
			_, err := new(events.SeriesBroadcaster).NewRecorder("kubelet", "node-1", events.RecorderOptions{})
			return err
		}},
	}
	for _, tt := range tests {
		if err := tt.call(); !errors.Is(err, events.ErrNotInitialized) {
			t.Errorf("%s: %s: got %v, want ErrNotInitialized", tt.rule, tt.reason, err)
		}
	}
	if _, ok := new(events.Broadcaster).NextRetry(); ok {
		t.Error("conventions 2 Broadcaster.NextRetry: a zero broadcaster has no retry")
	}
	if _, ok := new(events.SeriesBroadcaster).NextRetry(); ok {
		t.Error("conventions 2 SeriesBroadcaster.NextRetry: a zero series broadcaster has no retry")
	}
	if st := new(events.Broadcaster).Stats(); st.Submitted != 0 || st.Sinks != nil {
		t.Errorf("conventions 2 Broadcaster.Stats: zero counters, got %+v", st)
	}
	if st := new(events.SeriesBroadcaster).Stats(); st != (events.SeriesStats{}) {
		t.Errorf("conventions 2 SeriesBroadcaster.Stats: zero counters, got %+v", st)
	}
}

// TestZeroValues: the pure types and the recorders, left zero (or nil), refuse the calls that
// return an error with ErrNotInitialized, answer the others with their documented inert result,
// and never panic; a zero Series is an empty cache, ready to use (docs/conventions.md section 2
// and the types' documentation).
func TestZeroValues(t *testing.T) {
	ev := newEvent(podRef("foo", "bar", ""), v1.EventTypeNormal, "Started", "started", t0)
	var nilQueue *events.SinkQueue
	var nilCorr *events.Correlator
	var nilRec *events.Recorder
	var nilSeriesRec *events.SeriesRecorder
	pod := testPod("foo", "bar")
	tests := []struct {
		rule, reason string
		call         func() error
	}{
		{"conventions 2 SinkQueue.Push", "a zero queue takes no event", func() error { return new(events.SinkQueue).Push(ev, t0) }},
		{"conventions 2 SinkQueue.Push nil", "a nil queue takes no event", func() error { return nilQueue.Push(ev, t0) }},
		{"conventions 2 Correlator.Correlate", "a zero correlator decides nothing", func() error {
			_, err := new(events.Correlator).Correlate(ev, t0)
			return err
		}},
		{"conventions 2 Correlator.Correlate nil", "a nil correlator decides nothing", func() error {
			_, err := nilCorr.Correlate(ev, t0)
			return err
		}},
		{"conventions 2 Correlator.CorrelateTo", "a zero correlator writes nothing into dst", func() error {
			_, _, _, err := new(events.Correlator).CorrelateTo(ev, t0, new(v1.Event), nil)
			return err
		}},
		{"conventions 2 Recorder.MakeEvent", "a zero recorder builds no event", func() error {
			_, err := new(events.Recorder).MakeEvent(pod, nil, v1.EventTypeNormal, "Started", "started")
			return err
		}},
		{"conventions 2 Recorder.MakeEvent nil", "a nil recorder builds no event", func() error {
			_, err := nilRec.MakeEvent(pod, nil, v1.EventTypeNormal, "Started", "started")
			return err
		}},
		{"conventions 2 SeriesRecorder.Record", "a zero series recorder records nothing", func() error {
			return new(events.SeriesRecorder).Record(pod, nil, nil, v1.EventTypeNormal, "Started", "Start", "started")
		}},
		{"conventions 2 SeriesRecorder.Record nil", "a nil series recorder records nothing", func() error {
			return nilSeriesRec.Record(pod, nil, nil, v1.EventTypeNormal, "Started", "Start", "started")
		}},
		{"conventions 2 SeriesRecorder.MakeEvent", "a zero series recorder builds no event", func() error {
			_, err := new(events.SeriesRecorder).MakeEvent(pod, nil, nil, v1.EventTypeNormal, "Started", "Start", "started")
			return err
		}},
		{"conventions 2 SeriesRecorder.MakeEvent nil", "a nil series recorder builds no event", func() error {
			_, err := nilSeriesRec.MakeEvent(pod, nil, nil, v1.EventTypeNormal, "Started", "Start", "started")
			return err
		}},
		{"conventions 2 SeriesRecorder.WithLogger", "WithLogger of a zero series recorder gives a zero one", func() error {
			return new(events.SeriesRecorder).WithLogger(logr.Discard()).Record(pod, nil, nil, v1.EventTypeNormal, "Started", "Start", "started")
		}},
		{"conventions 2 SeriesRecorder.WithLogger nil", "WithLogger of a nil series recorder gives a zero one", func() error {
			return nilSeriesRec.WithLogger(logr.Discard()).Record(pod, nil, nil, v1.EventTypeNormal, "Started", "Start", "started")
		}},
	}
	for _, tt := range tests {
		if err := tt.call(); !errors.Is(err, events.ErrNotInitialized) {
			t.Errorf("%s: %s: got %v, want ErrNotInitialized", tt.rule, tt.reason, err)
		}
	}
	for name, q := range map[string]*events.SinkQueue{"zero": new(events.SinkQueue), "nil": nilQueue} {
		if _, ok := q.Next(t0); ok {
			t.Errorf("conventions 2 SinkQueue.Next: a %s queue has no request", name)
		}
		q.Done(nil, nil, t0) // no request outstanding: nothing to do
		q.Abandon()
		if _, waiting := q.Due(); waiting || q.Len() != 0 || q.Stats() != (events.SinkStats{}) {
			t.Errorf("conventions 2 SinkQueue: a %s queue is empty with zero counters, got %+v", name, q.Stats())
		}
	}
	for name, c := range map[string]*events.Correlator{"zero": new(events.Correlator), "nil": nilCorr} {
		c.UpdateState(ev)
		a, d, s := c.Len()
		if a+d+s != 0 || c.Stats() != (events.CorrelatorStats{}) || c.Options() != (events.CorrelatorOptions{}) {
			t.Errorf("conventions 2 Correlator: a %s correlator has empty caches, zero counters and zero options; got %d %d %d, %+v, %+v", name, a, d, s, c.Stats(), c.Options())
		}
	}
	var nilSeries *events.Series
	nilSeries.Refreshed(events.SeriesWrite{}, &eventsv1.Event{})
	nilSeries.Finished(events.SeriesWrite{}, false)
	if _, ok := nilSeries.Observe(seriesEvent("pod1", "Start", "n", t0), t0); ok || nilSeries.Len() != 0 ||
		nilSeries.Refresh() != nil || nilSeries.Finish(t0) != nil {
		t.Error("conventions 2 Series: a nil series cache observes nothing and has nothing to write")
	}
	if _, ok := nilSeries.Get(events.SeriesKey{}); ok {
		t.Error("conventions 2 Series.Get: a nil series cache holds nothing")
	}
	var zero events.Series // ready to use
	if w, ok := zero.Observe(seriesEvent("pod1", "Start", "n", t0), t0); !ok || w.Patch != nil || zero.Len() != 1 {
		t.Errorf("B.3 zero Series: the first occurrence is a create and is cached; got %+v %v, %d cached", w, ok, zero.Len())
	}
}

// TestBroadcasterSinksApart: each sink gets every event through its own queue, and Flush
// writes every sink's queue (spec/events.md section A.6: a watcher whose queue is full skips
// the event, the other watchers still get it).
func TestBroadcasterSinksApart(t *testing.T) {
	tests := []struct {
		rule, reason string
		// flush is how the events are written; it returns Flush's error.
		flush             func(b *events.Broadcaster) error
		wantErr           error
		wantA, wantB      int // events on each sink's server after the flush
		wantFullA, wantQA uint64
	}{
		{rule: "A.6 DropIfChannelFull", reason: "sink A's full queue drops the second event for A only; B, added later, writes it",
			flush: func(b *events.Broadcaster) error { return b.Flush(context.Background()) }, wantA: 1, wantB: 1, wantFullA: 1},
		{rule: "A.6 Flush nil context", reason: "Flush(nil) writes as Flush(context.Background()) does",
			flush: func(b *events.Broadcaster) error {
				var ctx context.Context // nil: the conventions accept it
				return b.Flush(ctx)
			}, wantA: 1, wantB: 1, wantFullA: 1},
		{rule: "A.6 Flush ended context", reason: "a Flush whose context has ended writes nothing, returns its error and leaves the events queued",
			flush: func(b *events.Broadcaster) error {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return b.Flush(ctx)
			}, wantErr: context.Canceled, wantFullA: 1, wantQA: 1},
	}
	for _, tt := range tests {
		opts := events.DefaultBroadcasterOptions()
		opts.Clock, opts.Queue.Rand, opts.Queue.QueueSize = testingclock.NewFakeClock(t0), half{}, 1
		b, err := events.NewBroadcaster(opts)
		if err != nil {
			t.Fatal(err)
		}
		sinkA, sinkB := eventstest.NewSink(nil, 0), eventstest.NewSink(nil, 0)
		if err := b.AddSink(sinkA, events.DefaultCorrelatorOptions()); err != nil {
			t.Fatal(err)
		}
		rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Record(testPod("foo", "u1"), nil, v1.EventTypeNormal, "Started", "first"); err != nil {
			t.Fatal(err)
		}
		if err := b.AddSink(sinkB, events.DefaultCorrelatorOptions()); err != nil {
			t.Fatal(err)
		}
		if err := rec.Record(testPod("bar", "u2"), nil, v1.EventTypeNormal, "Started", "second"); !errors.Is(err, events.ErrQueueFull) {
			t.Errorf("%s: recording into A's full queue: %v, want ErrQueueFull", tt.rule, err)
		}
		if err := within(t, "Flush", func() error { return tt.flush(b) }); !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
			t.Errorf("%s: %s: Flush returned %v, want %v", tt.rule, tt.reason, err, tt.wantErr)
		}
		if a, bb := len(sinkA.Events()), len(sinkB.Events()); a != tt.wantA || bb != tt.wantB {
			t.Errorf("%s: %s: events written A %d B %d, want A %d B %d", tt.rule, tt.reason, a, bb, tt.wantA, tt.wantB)
		}
		st := b.Stats()
		if st.Sinks[0].DroppedQueueFull != tt.wantFullA || st.Sinks[1].DroppedQueueFull != 0 || st.Sinks[0].Queued != int(tt.wantQA) {
			t.Errorf("%s: %s: stats %+v", tt.rule, tt.reason, st.Sinks)
		}
		if err := shutdownWithin(t, b, context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBroadcasterLogsEachFailure: the broadcaster's Logger gets one line per failed write
// saying what becomes of the event, with client-go's words (spec/events.md section A.5), and
// nothing for a patch answered 404, which becomes a create at once.
func TestBroadcasterLogsEachFailure(t *testing.T) {
	tests := []struct {
		rule, reason string
		fault        eventstest.FaultFunc
		records      int  // times the same event is recorded
		patch404     bool // the repeat's patch finds nothing and becomes a create
		wantLog      []string
	}{
		{rule: "A.5 StatusError", reason: "the server's answer is final: the event is dropped and the log says so",
			fault:   func(eventstest.Op, string, string, int) error { return apierrors.NewInternalError(errors.New("boom")) },
			records: 1, wantLog: []string{"server rejected event (will not retry)"}},
		{rule: "A.5 maxTriesPerEvent", reason: "a transport error is retried after a sleep until the last attempt, then dropped",
			fault:   func(eventstest.Op, string, string, int) error { return errors.New("connection refused") },
			records: 1, wantLog: []string{"unable to write event (may retry after sleeping)", "retry limit exceeded, dropping event"}},
		{rule: "A.5 patch 404 (E22)", reason: "a patch of an event the server no longer has (it expired) is a create, not a failure to report",
			records: 2, patch404: true},
		{rule: "A.5 patch failure", reason: "a failed patch of a repeated event is reported as any failed write",
			fault: func(op eventstest.Op, _, _ string, _ int) error {
				if op == eventstest.OpPatch {
					return errors.New("connection refused")
				}
				return nil
			},
			records: 2, wantLog: []string{"unable to write event (may retry after sleeping)", "retry limit exceeded, dropping event"}},
	}
	for _, tt := range tests {
		var logged []string
		opts := events.DefaultBroadcasterOptions()
		fc := testingclock.NewFakeClock(t0)
		opts.Clock, opts.Queue.Rand, opts.Queue.MaxTries = fc, half{}, 2
		opts.Logger = funcr.New(func(_, args string) {
			for _, want := range []string{"server rejected event (will not retry)", "retry limit exceeded, dropping event", "unable to write event (may retry after sleeping)"} {
				if strings.Contains(args, `"`+want+`"`) {
					logged = append(logged, want)
				}
			}
		}, funcr.Options{})
		b, err := events.NewBroadcaster(opts)
		if err != nil {
			t.Fatal(err)
		}
		sink := eventstest.NewSink(fc, time.Hour) // an event not written for an hour expires
		sink.SetFault(tt.fault)
		if err := b.AddSink(sink, events.DefaultCorrelatorOptions()); err != nil {
			t.Fatal(err)
		}
		rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range tt.records {
			if i > 0 {
				fc.Step(2 * time.Hour)
			}
			if err := rec.Record(testPod("foo", "bar"), nil, v1.EventTypeWarning, "Failed", "boom"); err != nil {
				t.Fatal(err)
			}
			for steps := 0; ; steps++ {
				if err := b.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
				next, waiting := b.NextRetry()
				if !waiting {
					break
				}
				if steps > maxSteps {
					t.Fatalf("%s: still retrying after %d clock moves: a retry loop does not end", tt.rule, maxSteps)
				}
				fc.SetTime(next)
			}
		}
		if d := cmpDiff(tt.wantLog, logged); d != "" {
			t.Errorf("%s: %s: log lines (-want +got):\n%s", tt.rule, tt.reason, d)
		}
		if tt.patch404 && (sink.Calls(eventstest.OpPatch) != 1 || sink.Calls(eventstest.OpCreate) != 2 || len(sink.Events()) != 1) {
			t.Errorf("%s: %s: %d patches, %d creates, %d events; want the patch, then a create", tt.rule, tt.reason,
				sink.Calls(eventstest.OpPatch), sink.Calls(eventstest.OpCreate), len(sink.Events()))
		}
		if err := shutdownWithin(t, b, context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBroadcasterNextRetry: NextRetry says when the earliest event waiting for a retry is
// due, over every sink; an event not written yet does not wait for a retry (spec/events.md
// section A.5: the first retry sleeps a random part of the 10 s, here half of it).
func TestBroadcasterNextRetry(t *testing.T) {
	down := func(eventstest.Op, string, string, int) error { return errors.New("connection refused") }
	tests := []struct {
		rule, reason string
		faults       []eventstest.FaultFunc // one sink per fault (nil: a sink that works)
		flush        bool
		wantAt       time.Duration // after t0
		wantWaiting  bool
	}{
		{rule: "A.5 nothing queued", reason: "no event, no retry", faults: []eventstest.FaultFunc{nil}, flush: true},
		{rule: "A.5 not written yet", reason: "an event recorded but not flushed waits for its first attempt, not a retry", faults: []eventstest.FaultFunc{down}},
		{rule: "A.5 first retry", reason: "a failed first attempt is retried after a random part of the sleep", faults: []eventstest.FaultFunc{down}, flush: true,
			wantAt: 5 * time.Second, wantWaiting: true},
		{rule: "A.5 first retry, two sinks", reason: "the sink that works has nothing to retry; the other's retry is the answer",
			faults: []eventstest.FaultFunc{nil, down}, flush: true, wantAt: 5 * time.Second, wantWaiting: true},
	}
	for _, tt := range tests {
		opts := events.DefaultBroadcasterOptions()
		fc := testingclock.NewFakeClock(t0)
		opts.Clock, opts.Queue.Rand = fc, half{}
		b, err := events.NewBroadcaster(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range tt.faults {
			sink := eventstest.NewSink(fc, 0)
			sink.SetFault(f)
			if err := b.AddSink(sink, events.DefaultCorrelatorOptions()); err != nil {
				t.Fatal(err)
			}
		}
		rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tt.rule != "A.5 nothing queued" {
			if err := rec.Record(testPod("foo", "bar"), nil, v1.EventTypeWarning, "Failed", "boom"); err != nil {
				t.Fatal(err)
			}
		}
		if tt.flush {
			if err := b.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		at, waiting := b.NextRetry()
		if waiting != tt.wantWaiting || (waiting && !at.Equal(t0.Add(tt.wantAt))) {
			t.Errorf("%s: %s: NextRetry (%v, %v), want (t0+%v, %v)", tt.rule, tt.reason, at, waiting, tt.wantAt, tt.wantWaiting)
		}
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		_ = shutdownWithin(t, b, cancelled)
	}
}

// TestShutdownWritesAddedSinks: Shutdown writes the queue of a sink added with AddSink on the
// caller's goroutine before it returns (spec/events.md section A.6: Shutdown delivers what was
// queued; client-go's watchers drain their channels).
func TestShutdownWritesAddedSinks(t *testing.T) {
	tests := []struct {
		rule, reason string
		goroutine    bool
	}{
		{rule: "A.6 Shutdown AddSink", reason: "a sink without a goroutine is written by Shutdown itself"},
		{rule: "A.6 Shutdown StartRecordingToSink", reason: "a sink goroutine writes its queue before it exits", goroutine: true},
	}
	for _, tt := range tests {
		opts := events.DefaultBroadcasterOptions()
		opts.Clock, opts.Queue.Rand = testingclock.NewFakeClock(t0), half{}
		b, err := events.NewBroadcaster(opts)
		if err != nil {
			t.Fatal(err)
		}
		sink := eventstest.NewSink(nil, 0)
		add := b.AddSink
		if tt.goroutine {
			add = b.StartRecordingToSink
		}
		if err := add(sink, events.DefaultCorrelatorOptions()); err != nil {
			t.Fatal(err)
		}
		rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := rec.Record(testPod("foo", "bar"), nil, v1.EventTypeNormal, "Started", "started "+string(rune('a'+i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := shutdownWithin(t, b, context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := b.Stats().Sinks[0]; st.Created != 3 || st.Queued != 0 || len(sink.Events()) != 3 {
			t.Errorf("%s: %s: stats %+v, %d events on the server; want 3 written", tt.rule, tt.reason, st, len(sink.Events()))
		}
	}
}

// cancellingSink ends the caller's context during its first write, as a Flush whose deadline
// passes while the API server is slow.
type cancellingSink struct {
	*eventstest.Sink
	cancel func()
}

func (s *cancellingSink) Create(ctx context.Context, ev *v1.Event) (*v1.Event, error) {
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Sink.Create(ctx, ev)
}

// TestFlushCutShortKeepsTheWrite: a write cut short because Flush's context ended is not an
// attempt of the event: it stays at the head of the queue, due at once, and the next Flush
// writes it (Flush's contract; spec/events.md section A.5 counts attempts the server answered
// or the network lost, not ones the caller called off).
func TestFlushCutShortKeepsTheWrite(t *testing.T) {
	opts := events.DefaultBroadcasterOptions()
	opts.Clock, opts.Queue.Rand = testingclock.NewFakeClock(t0), half{}
	b, err := events.NewBroadcaster(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sink := &cancellingSink{Sink: eventstest.NewSink(nil, 0), cancel: cancel}
	if err := b.AddSink(sink, events.DefaultCorrelatorOptions()); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Record(testPod("foo", "bar"), nil, v1.EventTypeNormal, "Started", "started"); err != nil {
		t.Fatal(err)
	}
	if err := flushWithin(t, b, ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Flush cut short: %v, want context.Canceled", err)
	}
	if st := b.Stats().Sinks[0]; st.Queued != 1 || st.Retries != 0 || st.Created != 0 {
		t.Errorf("after the cut: stats %+v, want the event queued and no attempt counted", st)
	}
	if _, waiting := b.NextRetry(); waiting {
		t.Error("after the cut: the event waits for no retry sleep")
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats().Sinks[0]; st.Queued != 0 || st.Created != 1 || st.Retries != 0 || len(sink.Events()) != 1 {
		t.Errorf("the next Flush: stats %+v, %d events; want the event written once", st, len(sink.Events()))
	}
	if err := shutdownWithin(t, b, context.Background()); err != nil {
		t.Fatal(err)
	}
}

// racingClock is a clock whose time moves on by step at every reading, as the real one moves
// on between two readings of a busy goroutine; its timers never fire.
type racingClock struct {
	*testingclock.FakeClock
	mu    sync.Mutex
	now   time.Time
	step  time.Duration
	reads int
}

func (c *racingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	c.now = c.now.Add(c.step)
	return c.now
}

func (c *racingClock) read() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads > 0
}

func (c *racingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// TestSinkGoroutineRetryDueWhileItLooks: a retry that falls due while the sink goroutine is
// between writing and arming its sleep is made at once, not left until the next event
// (spec/events.md section A.5: the retry follows its sleep; here the sleep is over before the
// goroutine would start it).
func TestSinkGoroutineRetryDueWhileItLooks(t *testing.T) {
	clk := &racingClock{FakeClock: testingclock.NewFakeClock(t0), now: t0, step: 3 * time.Second}
	opts := events.DefaultBroadcasterOptions()
	opts.Clock, opts.Queue.Rand = clk, half{} // the first retry sleeps 5 s
	b, err := events.NewBroadcaster(opts)
	if err != nil {
		t.Fatal(err)
	}
	sink := eventstest.NewSink(nil, 0)
	sink.SetFault(func(_ eventstest.Op, _, _ string, n int) error {
		if n == 1 {
			return errors.New("connection refused")
		}
		return nil
	})
	if err := b.StartRecordingToSink(sink, events.DefaultCorrelatorOptions()); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{Clock: testingclock.NewFakeClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	// The goroutine has looked at its empty queue: the event comes with a wake-up of its own.
	spinUntil(t, "the sink goroutine's first look at its queue", clk.read)
	if err := rec.Record(testPod("foo", "bar"), nil, v1.EventTypeWarning, "Failed", "boom"); err != nil {
		t.Fatal(err)
	}
	spinUntil(t, "the retry of the event written", func() bool { return len(sink.Events()) == 1 })
	if err := shutdownWithin(t, b, context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats().Sinks[0]; st.Created != 1 || st.Retries != 1 {
		t.Errorf("stats %+v, want one create after one retry", st)
	}
}

// TestSeriesRetryBeforeLoops: the series broadcaster's worker, asleep until its next finish
// pass (6 min), retries a failed write after the retry sleep (10 to 12.5 s), not at that pass
// (spec/events.md sections B.3 and B.4).
func TestSeriesRetryBeforeLoops(t *testing.T) {
	fc := testingclock.NewFakeClock(t0)
	sink := eventstest.NewSeriesSink(fc, 0)
	sink.SetFault(func(op eventstest.Op, _, _ string, n int) error {
		if op == eventstest.OpCreate && n == 1 {
			return errors.New("connection refused")
		}
		return nil
	})
	ac := &armingClock{FakeClock: fc}
	h := startSeriesOn(t, ac, sink, zeroRand{})
	waitTimers(t, fc, 1) // the worker sleeps until the loops' next pass
	h.rec.Eventf(testPod("foo", "bar"), nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	// The retry timer armed (see TestSeriesBroadcasterRetry): a step between the
	// worker's read of the clock and its arming would make the retry late by the step.
	spinUntil(t, "the first attempt and its retry timer", func() bool {
		return sink.Calls(eventstest.OpCreate) >= 1 && ac.armedFor(t0.Add(10*time.Second))
	})
	fc.Step(13 * time.Second)
	spinUntil(t, "the retry 10 s after the failed attempt", func() bool { return len(sink.Events()) == 1 })
}

// TestSeriesBroadcasterNextRetry: the series broadcaster has work of its own only once its
// loops have run (spec/events.md section B.4: they start with the broadcaster): none before
// the first pass, then the next finish pass 6 min later, and none after Shutdown, since the
// loops stop with it.
func TestSeriesBroadcasterNextRetry(t *testing.T) {
	fc := testingclock.NewFakeClock(t0)
	opts := events.DefaultSeriesBroadcasterOptions()
	opts.Clock, opts.Queue.Rand = fc, zeroRand{}
	b, err := events.NewSeriesBroadcaster(opts, eventstest.NewSeriesSink(fc, 0))
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := b.NextRetry(); ok {
		t.Errorf("B.4 before any pass: NextRetry says %v, want no work", at)
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if at, ok := b.NextRetry(); !ok || !at.Equal(t0.Add(events.SeriesFinish)) {
		t.Errorf("B.4 after the first pass: NextRetry says %v %v, want the finish pass at %v", at, ok, t0.Add(events.SeriesFinish))
	}
	if err := shutdownWithin(t, b, context.Background()); err != nil {
		t.Fatal(err)
	}
	if at, ok := b.NextRetry(); ok {
		t.Errorf("B.4 after Shutdown: NextRetry says %v, want no work (the loops stopped)", at)
	}
}
