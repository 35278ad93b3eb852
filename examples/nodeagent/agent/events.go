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
	// DroppedSpam counts events the spam filter dropped; DroppedFailed those whose write failed.
	DroppedSpam, DroppedFailed int
}

// eventWriter correlates and writes events synchronously, on the agent's goroutine, so that
// the spam filter and the counts see the agent's virtual time exactly: the events.Correlator
// decides (aggregate, deduplicate, filter) and the sink is written at once. A failed write
// is counted and not retried (the broadcaster's retries sleep on a clock, which a program in
// virtual time would have to advance for them).
type eventWriter struct {
	rec   *events.Recorder
	corr  *events.Correlator
	sink  events.Sink
	stats EventStats
}

func (w *eventWriter) record(ctx context.Context, now time.Time, ref *v1.ObjectReference, eventtype, reason, message string) {
	w.stats.Recorded++
	ev, err := w.rec.MakeEvent(ref, nil, eventtype, reason, message)
	if err != nil {
		w.stats.DroppedFailed++
		return
	}
	res, err := w.corr.Correlate(ev, now)
	if err != nil {
		w.stats.DroppedFailed++
		return
	}
	if res.Decision == events.Skip {
		w.stats.DroppedSpam++
		return
	}
	out := res.Event
	var srv *v1.Event
	if res.Decision == events.Patch {
		srv, err = w.sink.Patch(ctx, &out, res.Patch)
	}
	if res.Decision == events.Create || apierrors.IsNotFound(err) {
		// A repeat whose event expired on the server is created again, as client-go does.
		out.ResourceVersion = ""
		srv, err = w.sink.Create(ctx, &out)
		res.Decision = events.Create
	}
	if err != nil {
		w.stats.DroppedFailed++
		return
	}
	w.corr.UpdateState(srv)
	if res.Aggregated {
		w.stats.Aggregated++
	}
	if res.Decision == events.Patch {
		w.stats.Patched++
	} else {
		w.stats.Created++
	}
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
