package events_test

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
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
		if err := tt.flush(b); !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
			t.Errorf("%s: %s: Flush returned %v, want %v", tt.rule, tt.reason, err, tt.wantErr)
		}
		if a, bb := len(sinkA.Events()), len(sinkB.Events()); a != tt.wantA || bb != tt.wantB {
			t.Errorf("%s: %s: events written A %d B %d, want A %d B %d", tt.rule, tt.reason, a, bb, tt.wantA, tt.wantB)
		}
		st := b.Stats()
		if st.Sinks[0].DroppedQueueFull != tt.wantFullA || st.Sinks[1].DroppedQueueFull != 0 || st.Sinks[0].Queued != int(tt.wantQA) {
			t.Errorf("%s: %s: stats %+v", tt.rule, tt.reason, st.Sinks)
		}
		if err := b.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
