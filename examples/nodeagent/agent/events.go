package agent

import (
	"context"
	"time"

	"github.com/nodestate/nodestate/events"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// EventStats counts what happened to the core/v1 events the agent recorded.
type EventStats struct {
	// Recorded is the number of events the agent recorded.
	Recorded int
	// Created and Patched count successful writes (a patch raises a count).
	Created, Patched int
	// Aggregated counts events folded into a "(combined from similar events)" event.
	Aggregated int
	// Retries counts write attempts after the first.
	Retries int
	// DroppedSpam counts events the spam filter dropped.
	DroppedSpam int
	// DroppedRejected counts events the server refused (or that could not be built);
	// DroppedRetryLimit those whose every attempt failed; DroppedQueueFull those recorded
	// while the queue was full.
	DroppedRejected, DroppedRetryLimit, DroppedQueueFull int
	// Pending is the number of events still queued (waiting for a retry).
	Pending int
}

// DroppedFailed is the number of events lost to failed writes or a full queue.
func (s EventStats) DroppedFailed() int {
	return s.DroppedRejected + s.DroppedRetryLimit + s.DroppedQueueFull
}

// eventRecorder records the agent's events through an events.Broadcaster whose one sink
// has no goroutine: each event is written (or queued for a retry) by a Flush on the agent's
// goroutine, at the agent's time, before the clock moves again. The broadcaster's queue
// correlates each event at the time it was recorded and retries a failed write after a
// random part of 10 s and then every 10 s, up to 12 tries, while the events behind it wait.
type eventRecorder struct {
	b        *events.Broadcaster
	rec      *events.Recorder
	recorded int
	ctx      context.Context // the context of the agent's Step, for the runner's events
}

func (w *eventRecorder) record(ctx context.Context, ref *v1.ObjectReference, eventtype, reason, message string) {
	w.recorded++
	_ = w.rec.Record(ref, nil, eventtype, reason, message) // refused and dropped events are counted
	w.flush(ctx)
}

// Event records an event of the pod runner (its podrunner.Recorder), within the agent's Step.
func (w *eventRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	ctx := w.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	w.recorded++
	_ = w.rec.Record(object, nil, eventtype, reason, message)
	w.flush(ctx)
}

// flush writes every queued event that is due now.
func (w *eventRecorder) flush(ctx context.Context) { _ = w.b.Flush(ctx) }

// next returns when the queue's head is due for a retry, if it waits for one.
func (w *eventRecorder) next() (time.Time, bool) { return w.b.NextRetry() }

func (w *eventRecorder) stats() EventStats {
	st := w.b.Stats()
	s := EventStats{Recorded: w.recorded, DroppedRejected: int(st.DroppedInvalid)}
	for _, k := range st.Sinks {
		s.Created += int(k.Created)
		s.Patched += int(k.Patched)
		s.Aggregated += int(k.Aggregated)
		s.Retries += int(k.Retries)
		s.DroppedSpam += int(k.DroppedSpam)
		s.DroppedRejected += int(k.DroppedRejected)
		s.DroppedRetryLimit += int(k.DroppedRetryLimit)
		s.DroppedQueueFull += int(k.DroppedQueueFull)
		s.Pending += k.Queued + int(k.DroppedShutdown)
	}
	return s
}
