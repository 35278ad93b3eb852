package events

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Server-side limits of events.k8s.io/v1 events (spec B.2), enforced by SeriesRecorder.
const (
	MaxReasonLength = 128
	MaxActionLength = 128
	MaxNoteLength   = 1024
)

// SeriesStats counts what a SeriesBroadcaster did.
type SeriesStats struct {
	// Submitted counts events put on the queue; Processed those taken off it and handled.
	Submitted, Processed uint64
	// Created and Patched count successful writes (patches are series writes).
	Created, Patched uint64
	// Counted counts occurrences folded into an open series without a write.
	Counted uint64
	// Retries counts write attempts after the first.
	Retries uint64
	// DroppedInvalid counts events the recorder refused.
	DroppedInvalid uint64
	// DroppedQueueFull, DroppedRejected, DroppedRetryLimit and DroppedShutdown count events lost
	// for those reasons, as in SinkStats.
	DroppedQueueFull, DroppedRejected, DroppedRetryLimit, DroppedShutdown, DroppedAfterShutdown uint64
	// Cached is the number of events in the series cache.
	Cached int
}

// SeriesBroadcaster writes events.k8s.io/v1 events to one sink through a Series cache, with
// client-go v0.37.2's rules (spec B.3, B.4) but without its goroutine per event: recording puts
// the event on a bounded queue (or drops and counts it), and one goroutine writes events and
// runs the 30 min refresh and 6 min finish on the injected clock. Retries sleep 10 s jittered by
// up to 25 % (WithRetry changes the base). Safe for concurrent use.
type SeriesBroadcaster struct {
	cfg  config
	sink SeriesSink

	mu     sync.RWMutex
	closed bool
	queue  chan *eventsv1.Event

	abort     context.Context
	abortFunc context.CancelFunc
	done      chan struct{}

	// series is touched only by the worker goroutine; cached mirrors its size for Stats.
	series *Series
	cached atomic.Int64

	submitted, processed, created, patched, counted, retries                        atomic.Uint64
	invalid, queueFull, rejected, retryLimit, droppedShutdown, droppedAfterShutdown atomic.Uint64
}

// NewSeriesBroadcaster returns a running broadcaster writing to sink, with client-go's
// defaults changed by opts (WithQueueSize, WithRetry, WithClock, WithRandom, WithLogger).
func NewSeriesBroadcaster(sink SeriesSink, opts ...Option) (*SeriesBroadcaster, error) {
	if sink == nil {
		return nil, &OptionError{Field: "Sink", Value: "<nil>", Detail: "must not be nil"}
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	b := &SeriesBroadcaster{cfg: cfg, sink: sink, series: NewSeries(), done: make(chan struct{})}
	b.queue = make(chan *eventsv1.Event, b.cfg.queueSize)
	b.abort, b.abortFunc = context.WithCancel(context.Background())
	go b.run()
	return b, nil
}

// Stats returns a snapshot of the counters.
func (b *SeriesBroadcaster) Stats() SeriesStats {
	return SeriesStats{
		Submitted: b.submitted.Load(), Processed: b.processed.Load(), Created: b.created.Load(), Patched: b.patched.Load(),
		Counted: b.counted.Load(), Retries: b.retries.Load(), DroppedInvalid: b.invalid.Load(),
		DroppedQueueFull: b.queueFull.Load(), DroppedRejected: b.rejected.Load(),
		DroppedRetryLimit: b.retryLimit.Load(), DroppedShutdown: b.droppedShutdown.Load(),
		DroppedAfterShutdown: b.droppedAfterShutdown.Load(), Cached: int(b.cached.Load()),
	}
}

func (b *SeriesBroadcaster) submit(ev *eventsv1.Event) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		b.droppedAfterShutdown.Add(1)
		return ErrShutdown
	}
	select {
	case b.queue <- ev:
		b.submitted.Add(1)
		return nil
	default:
		b.queueFull.Add(1)
		return ErrQueueFull
	}
}

// Shutdown stops accepting events, writes what is queued until ctx ends, and returns once the
// worker goroutine has exited (ctx.Err() when the flush was cut short). Open series are not
// written again: as in client-go, the refresh and finish loops stop with the broadcaster.
func (b *SeriesBroadcaster) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.queue)
	}
	b.mu.Unlock()
	select {
	case <-b.done:
		b.abortFunc()
		return nil
	case <-ctx.Done():
		b.abortFunc()
		<-b.done
		return ctx.Err()
	}
}

func (b *SeriesBroadcaster) run() {
	defer close(b.done)
	clk := b.cfg.clock
	// As wait.Until: both loops run once at start, then once per period.
	b.refresh()
	b.finish()
	refresh := clk.NewTimer(SeriesRefresh)
	finish := clk.NewTimer(SeriesFinish)
	defer refresh.Stop()
	defer finish.Stop()
	for {
		select {
		case ev, ok := <-b.queue:
			if !ok {
				return
			}
			if w, ok := b.series.Observe(ev, clk.Now()); ok {
				b.attempt(w)
			} else {
				b.counted.Add(1)
			}
			b.cached.Store(int64(b.series.Len()))
			b.processed.Add(1)
		case <-refresh.C():
			b.refresh()
			refresh.Reset(SeriesRefresh)
		case <-finish.C():
			b.finish()
			finish.Reset(SeriesFinish)
		}
	}
}

func (b *SeriesBroadcaster) refresh() {
	for _, w := range b.series.Refresh() {
		if srv, retry, err := b.write(w); err == nil {
			b.series.Refreshed(w, srv)
		} else if !retry {
			b.rejected.Add(1)
		}
	}
}

func (b *SeriesBroadcaster) finish() {
	for _, w := range b.series.Finish(b.cfg.clock.Now()) {
		_, retry, _ := b.write(w)
		b.series.Finished(w, retry)
	}
	b.cached.Store(int64(b.series.Len()))
}

// attempt writes w with up to MaxTries attempts, sleeping 10-12.5 s between them (spec B.3).
func (b *SeriesBroadcaster) attempt(w SeriesWrite) {
	for tries := 1; ; tries++ {
		_, retry, err := b.write(w)
		if err == nil {
			return
		}
		if b.abort.Err() != nil {
			b.droppedShutdown.Add(1)
			return
		}
		if !retry {
			b.rejected.Add(1)
			b.cfg.logger.Error(err, "server rejected event (will not retry)", "event", w.Event.Namespace+"/"+w.Event.Name)
			return
		}
		if tries >= b.cfg.maxTries {
			b.retryLimit.Add(1)
			return
		}
		d := b.cfg.sleep + time.Duration(b.cfg.random()*0.25*float64(b.cfg.sleep))
		if !sleep(b.abort, b.cfg.clock, d) {
			b.droppedShutdown.Add(1)
			return
		}
		b.retries.Add(1)
	}
}

// write is one attempt of w: the series patch, or a create when there is no series or the
// patch found nothing. It reports whether a failure may be retried: AlreadyExists is retried
// for a series (the patch raced with the create of the first occurrence).
func (b *SeriesBroadcaster) write(w SeriesWrite) (*eventsv1.Event, bool, error) {
	ctx := b.abort
	ev := w.Event.DeepCopy()
	var srv *eventsv1.Event
	var err error
	if w.Patch != nil {
		srv, err = b.sink.Patch(ctx, ev, w.Patch)
	}
	if w.Patch == nil || isNotFound(err) {
		ev.ResourceVersion = ""
		srv, err = b.sink.Create(ctx, ev)
	}
	if err == nil {
		if w.Patch != nil {
			b.patched.Add(1)
		} else {
			b.created.Add(1)
		}
		return srv, false, nil
	}
	if w.Patch != nil && apierrors.IsAlreadyExists(err) {
		return nil, true, err
	}
	return nil, Retryable(err), err
}

// SeriesRecorder records events.k8s.io/v1 events for one reporting controller and instance.
// Its Eventf and AnnotatedEventf are those of client-go's tools/events recorder. Safe for
// concurrent use.
type SeriesRecorder struct {
	b                    *SeriesBroadcaster
	controller, instance string
	cfg                  recorderConfig
}

// NewRecorder returns a recorder for reportingController and reportingInstance (client-go uses
// the controller name, a dash and the host name).
func (b *SeriesBroadcaster) NewRecorder(reportingController, reportingInstance string, opts ...RecorderOption) *SeriesRecorder {
	return &SeriesRecorder{b: b, controller: reportingController, instance: reportingInstance, cfg: newRecorderConfig(opts)}
}

// Eventf records an event about regarding (and related, which may be nil). Errors are counted
// and not returned.
func (r *SeriesRecorder) Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	_ = r.Record(regarding, related, nil, eventtype, reason, action, fmt.Sprintf(note, args...))
}

// AnnotatedEventf is Eventf with annotations on the event.
func (r *SeriesRecorder) AnnotatedEventf(regarding runtime.Object, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string, args ...interface{}) {
	_ = r.Record(regarding, related, annotations, eventtype, reason, action, fmt.Sprintf(note, args...))
}

// Record builds the event (MakeEvent) and queues it. Errors are those of MakeEvent, ErrShutdown
// and ErrQueueFull; every refused event is counted.
func (r *SeriesRecorder) Record(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string) error {
	ev, err := r.MakeEvent(regarding, related, annotations, eventtype, reason, action, note)
	if err != nil {
		r.b.invalid.Add(1)
		r.b.cfg.logger.Error(err, "event not recorded", "reason", reason)
		return err
	}
	return r.b.submit(ev)
}

// MakeEvent returns the event Record would queue. Beyond client-go, which checks only the
// type and leaves the rest to the server, it refuses with an *InvalidEventError what the
// server would refuse: an empty or over-128-character reason or action, a note over 1024
// characters. A related object that cannot be referenced is left out, as in client-go.
func (r *SeriesRecorder) MakeEvent(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string) (*eventsv1.Event, error) {
	ref, err := Reference(r.cfg.scheme, regarding)
	if err != nil {
		return nil, err
	}
	var relRef *v1.ObjectReference
	if related != nil {
		if rr, err := Reference(r.cfg.scheme, related); err == nil {
			relRef = rr
		}
	}
	if err := ValidateSeriesEvent(eventtype, reason, action, note); err != nil {
		return nil, err
	}
	now := r.cfg.clock.Now()
	name, err := EventName(ref.Name, now.UnixNano(), r.cfg.random)
	if err != nil {
		return nil, err
	}
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: maps.Clone(annotations)},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             relRef,
		Note:                note,
		Type:                eventtype,
	}, nil
}

// ValidateSeriesEvent checks type, reason, action and note of an events.k8s.io/v1 event against
// the server's rules (spec B.2) and returns the first violation as an *InvalidEventError.
func ValidateSeriesEvent(eventtype, reason, action, note string) error {
	switch {
	case eventtype != v1.EventTypeNormal && eventtype != v1.EventTypeWarning:
		return &InvalidEventError{Field: "type", Value: eventtype, Detail: "unsupported event type, must be Normal or Warning"}
	case reason == "":
		return &InvalidEventError{Field: "reason", Value: reason, Detail: "required"}
	case len(reason) > MaxReasonLength:
		return &InvalidEventError{Field: "reason", Value: reason, Detail: "length " + strconv.Itoa(len(reason)) + " exceeds 128"}
	case action == "":
		return &InvalidEventError{Field: "action", Value: action, Detail: "required"}
	case len(action) > MaxActionLength:
		return &InvalidEventError{Field: "action", Value: action, Detail: "length " + strconv.Itoa(len(action)) + " exceeds 128"}
	case len(note) > MaxNoteLength:
		return &InvalidEventError{Field: "note", Value: note, Detail: "length " + strconv.Itoa(len(note)) + " exceeds 1024"}
	}
	return nil
}
