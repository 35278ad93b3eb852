package events_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

// BenchmarkEventfSinkDown times Recorder.Eventf while the sink is down: the sink goroutine is
// stuck retrying its first event (its retry sleep never ends on the fake clock), the queue
// fills, and every later call drops and counts the event. It reports the 99th percentile of
// the call's duration.
func BenchmarkEventfSinkDown(b *testing.B) {
	fc := testingclock.NewFakeClock(t0)
	opts := events.DefaultBroadcasterOptions()
	opts.Clock = fc
	br, err := events.NewBroadcaster(opts)
	if err != nil {
		b.Fatal(err)
	}
	sink := eventstest.NewSink(fc, 0)
	sink.SetFault(func(eventstest.Op, string, string, int) error { return errors.New("connection refused") })
	if err := br.StartRecordingToSink(sink, events.DefaultCorrelatorOptions()); err != nil {
		b.Fatal(err)
	}
	rec, err := br.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	pod := testPod("foo", "bar")
	durations := make([]time.Duration, 0, 1<<20)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		rec.Eventf(pod, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)*99/100].Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(durations[len(durations)-1].Nanoseconds()), "max-ns")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = br.Shutdown(ctx)
}
