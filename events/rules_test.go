package events_test

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"

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
