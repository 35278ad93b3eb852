package agent

import (
	"context"
	"time"

	"github.com/nodestate/nodestate/events"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
)

// Kubelet event reasons (pkg/kubelet/events) used by the agent.
const (
	ReasonPulling   = "Pulling"
	ReasonPulled    = "Pulled"
	ReasonCreated   = "Created"
	ReasonStarted   = "Started"
	ReasonKilling   = "Killing"
	ReasonFailed    = "Failed"
	ReasonBackOff   = "BackOff"
	ReasonUnhealthy = "Unhealthy"
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

// eventWriter is client-go's event broadcaster for one sink, run on the agent's goroutine in
// the agent's time: events queue in order (at most events.DefaultQueueSize), the head is
// correlated when it is written (aggregation, count, spam filter, by events.Correlator, at
// the agent's time), and a write that fails with a retryable error is tried again after a
// random part of 10 s and then every 10 s, up to 12 tries, while the events behind it wait,
// as behind client-go's sleeping worker. The events.Broadcaster does the same with a
// goroutine per sink whose clock reads would race with a virtual clock the agent moves.
type eventWriter struct {
	rec   *events.Recorder
	corr  *events.Correlator
	sink  events.Sink
	rand  func() float64
	queue []*queuedEvent
	stats EventStats
}

// queuedEvent is one event waiting to be written.
type queuedEvent struct {
	ev         *v1.Event
	res        events.Result
	correlated bool
	tries      int
	due        time.Time
}

func (w *eventWriter) record(ctx context.Context, now time.Time, ref *v1.ObjectReference, eventtype, reason, message string) {
	w.stats.Recorded++
	ev, err := w.rec.MakeEvent(ref, nil, eventtype, reason, message)
	if err != nil {
		w.stats.DroppedRejected++
		return
	}
	if len(w.queue) >= events.DefaultQueueSize {
		w.stats.DroppedQueueFull++
		return
	}
	w.queue = append(w.queue, &queuedEvent{ev: ev, due: now})
	w.flush(ctx, now)
}

// flush writes queued events until the queue is empty or its head waits for a retry.
func (w *eventWriter) flush(ctx context.Context, now time.Time) {
	for len(w.queue) > 0 {
		q := w.queue[0]
		if q.due.After(now) {
			break
		}
		if !q.correlated {
			res, err := w.corr.Correlate(q.ev, now)
			switch {
			case err != nil:
				w.stats.DroppedRejected++
				w.pop()
				continue
			case res.Decision == events.Skip:
				w.stats.DroppedSpam++
				w.pop()
				continue
			}
			q.res, q.correlated = res, true
		}
		if q.tries > 0 {
			w.stats.Retries++
		}
		q.tries++
		srv, patched, err := w.write(ctx, q)
		if err == nil {
			w.corr.UpdateState(srv)
			if q.res.Aggregated {
				w.stats.Aggregated++
			}
			if patched {
				w.stats.Patched++
			} else {
				w.stats.Created++
			}
			w.pop()
			continue
		}
		if !events.Retryable(err) {
			w.stats.DroppedRejected++
			w.pop()
			continue
		}
		if q.tries >= events.DefaultMaxTries {
			w.stats.DroppedRetryLimit++
			w.pop()
			continue
		}
		d := events.DefaultSleep
		if q.tries == 1 {
			d = time.Duration(w.rand() * float64(d))
		}
		q.due = now.Add(d)
		break
	}
	w.stats.Pending = len(w.queue)
}

func (w *eventWriter) pop() {
	w.queue[0] = nil
	w.queue = w.queue[1:]
}

// write makes one attempt: a patch for a repeat, a create otherwise or when the patch found no
// event (it expired on the server), as client-go does. It reports whether it patched.
func (w *eventWriter) write(ctx context.Context, q *queuedEvent) (*v1.Event, bool, error) {
	ev := *q.res.Event
	if q.res.Decision == events.Patch {
		srv, err := w.sink.Patch(ctx, &ev, q.res.Patch)
		if !apierrors.IsNotFound(err) {
			return srv, true, err
		}
	}
	ev.ResourceVersion = ""
	srv, err := w.sink.Create(ctx, &ev)
	return srv, false, err
}

// next returns when the queue's head is due for a retry, if it waits for one.
func (w *eventWriter) next() (time.Time, bool) {
	if len(w.queue) == 0 {
		return time.Time{}, false
	}
	return w.queue[0].due, true
}

// nameClock stamps events with the agent's time plus a nanosecond per event recorded at
// the same instant. client-go names an event after the nanoseconds of its timestamp; in
// virtual time many events share an instant, and the extra nanoseconds keep their names
// apart (timestamps are written in whole seconds, so nothing else shows them).
type nameClock struct {
	clk  clock.PassiveClock
	last time.Time
}

func (c *nameClock) Now() time.Time {
	t := c.clk.Now()
	if !t.After(c.last) {
		t = c.last.Add(time.Nanosecond)
	}
	c.last = t
	return t
}

func (c *nameClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

var _ clock.PassiveClock = (*nameClock)(nil)
