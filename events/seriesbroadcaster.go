package events

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

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
	// Created and Patched count successful writes (patches are series writes), those of the
	// refresh and finish loops included.
	Created, Patched uint64
	// Counted counts occurrences folded into an open series without a write.
	Counted uint64
	// Retries counts write attempts after the first.
	Retries uint64
	// DroppedInvalid counts events the recorder refused.
	DroppedInvalid uint64
	// DroppedQueueFull, DroppedRejected, DroppedRetryLimit and DroppedShutdown count events lost
	// for those reasons, as in SinkStats; DroppedAfterShutdown those recorded after Shutdown
	// began.
	DroppedQueueFull, DroppedRejected, DroppedRetryLimit, DroppedShutdown, DroppedAfterShutdown uint64
	// Queued is the number of writes waiting in the queue, the one in flight included.
	Queued int
	// Cached is the number of events in the series cache.
	Cached int
}

// SeriesBroadcasterOptions configures a SeriesBroadcaster. Its zero value is refused (see
// SinkQueueOptions): start from DefaultSeriesBroadcasterOptions.
type SeriesBroadcasterOptions struct {
	// Queue sets the queue size and the retry schedule: Sleep is the base of the 10 to 12.5 s
	// jittered sleep before each retry (client-go's by default).
	Queue SinkQueueOptions
	// Clock times the retries and the refresh and finish loops, and stamps events of recorders
	// without a clock of their own; nil is the real clock.
	Clock clock.Clock
	// Logger receives dropped events and failed writes; the zero Logger discards them.
	Logger logr.Logger
}

// DefaultSeriesBroadcasterOptions returns client-go v0.37.2's settings.
func DefaultSeriesBroadcasterOptions() SeriesBroadcasterOptions {
	return SeriesBroadcasterOptions{Queue: DefaultSinkQueueOptions()}
}

// Validate reports the first invalid field of o as an *OptionError (matching
// ErrInvalidOptions).
func (o SeriesBroadcasterOptions) Validate() error { return o.Queue.validate("Queue.") }

// SeriesBroadcaster writes events.k8s.io/v1 events to one sink through a Series cache, with
// client-go v0.37.2's rules (spec/events.md sections B.3, B.4) but without its goroutine per
// event: recording puts the event on a bounded queue (or drops and counts it), and the queue
// (the same pure queue as Broadcaster's, with the events.k8s.io/v1 retry schedule: Sleep plus
// up to 25 % before each retry, AlreadyExists retried for a series write) observes each
// event at the time its recorder stamped it and writes it, and runs the 30 min refresh and 6
// min finish on the clock. Start starts the goroutine that writes; without it, Flush writes on
// the caller's goroutine.
//
// Use NewSeriesBroadcaster; the methods of the zero value return ErrNotInitialized (or
// nothing). Safe for concurrent use.
type SeriesBroadcaster struct {
	opts  SeriesBroadcasterOptions
	clock clock.Clock
	s     *seriesLane
	lane  *lane

	mu      sync.Mutex
	started bool

	abort     context.Context
	abortFunc context.CancelFunc

	invalid, droppedAfterShutdown atomic.Uint64
}

// NewSeriesBroadcaster returns a broadcaster writing to sink with opts, or an *OptionError
// (matching ErrInvalidOptions) for invalid options or a nil sink. It starts no goroutine: see
// Start.
func NewSeriesBroadcaster(opts SeriesBroadcasterOptions, sink SeriesSink) (*SeriesBroadcaster, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if sink == nil {
		return nil, &OptionError{Field: "Sink", Value: "<nil>", Reason: "must not be nil"}
	}
	b := &SeriesBroadcaster{opts: opts, clock: opts.Clock}
	if b.clock == nil {
		b.clock = clock.RealClock{}
	}
	qo := opts.Queue
	if qo.Rand == nil {
		qo.Rand = globalRand{}
	}
	b.s = &seriesLane{q: queue[seriesItem]{opts: qo, series: true}, series: NewSeries(), sink: sink, logger: opts.Logger}
	b.lane = newLane(b.clock, b.s)
	b.abort, b.abortFunc = context.WithCancel(context.Background())
	return b, nil
}

func (b *SeriesBroadcaster) ready() bool { return b != nil && b.abortFunc != nil }

// Start starts the goroutine that writes the queue, sleeps between retries and runs the
// refresh and finish loops on the clock (both run at once, then every period, as
// wait.Until). When ctx ends, the broadcaster shuts down as Shutdown with an ended context
// does. A second Start does nothing.
func (b *SeriesBroadcaster) Start(ctx context.Context) error {
	if !b.ready() {
		return ErrNotInitialized
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started {
		return nil
	}
	b.lane.mu.Lock()
	closed := b.lane.closed
	b.lane.mu.Unlock()
	if closed {
		return ErrShutdown
	}
	b.started = true
	b.lane.done = make(chan struct{})
	go func() {
		defer close(b.lane.done)
		b.lane.run(b.abort)
	}()
	context.AfterFunc(ctx, func() {
		b.lane.close()
		b.abortFunc()
	})
	return nil
}

// Stats returns a snapshot of the counters (zero for the zero value).
func (b *SeriesBroadcaster) Stats() SeriesStats {
	if !b.ready() {
		return SeriesStats{}
	}
	b.lane.mu.Lock()
	defer b.lane.mu.Unlock()
	s := b.s
	return SeriesStats{
		Submitted: s.submitted, Processed: s.processed, Created: s.q.created, Patched: s.q.patched,
		Counted: s.counted, Retries: s.q.retries, DroppedInvalid: b.invalid.Load(),
		DroppedQueueFull: s.q.queueFull, DroppedRejected: s.q.rejected,
		DroppedRetryLimit: s.q.retryLimit, DroppedShutdown: s.q.shutdownDrop,
		DroppedAfterShutdown: b.droppedAfterShutdown.Load(), Queued: s.q.len(), Cached: s.series.Len(),
	}
}

func (b *SeriesBroadcaster) submit(ev *eventsv1.Event, at time.Time) error {
	b.lane.mu.Lock()
	if b.lane.closed {
		b.lane.mu.Unlock()
		b.droppedAfterShutdown.Add(1)
		return ErrShutdown
	}
	ok := b.s.q.push(seriesItem{ev: ev, at: at}, true)
	if ok {
		b.s.submitted++
	}
	b.lane.mu.Unlock()
	if !ok {
		return ErrQueueFull
	}
	b.lane.signal()
	return nil
}

// Flush writes, on the caller's goroutine, every queued event due at the clock's time (and
// the refresh and finish writes due), and returns when the queue is empty or its head waits
// for a retry (NextRetry), or with ctx.Err() when ctx ends first.
func (b *SeriesBroadcaster) Flush(ctx context.Context) error {
	if !b.ready() {
		return ErrNotInitialized
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return b.lane.flush(ctx, b.abort)
}

// NextRetry returns when the broadcaster next has work on its own: a retry, or the next
// refresh or finish pass once the loops have run; false when it has none.
func (b *SeriesBroadcaster) NextRetry() (time.Time, bool) {
	if !b.ready() {
		return time.Time{}, false
	}
	return b.lane.nextWake()
}

// Shutdown stops accepting events, writes what is queued until ctx ends (on the caller's
// goroutine when Start was not called), and returns once the worker goroutine has exited
// (ctx.Err() when the flush was cut short). Open series are not written again: as in
// client-go, the refresh and finish loops stop with the broadcaster.
func (b *SeriesBroadcaster) Shutdown(ctx context.Context) error {
	if !b.ready() {
		return ErrNotInitialized
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.mu.Lock()
	started := b.started
	b.mu.Unlock()
	b.lane.close()
	stop := context.AfterFunc(ctx, b.abortFunc)
	if started {
		<-b.lane.done
	} else {
		b.lane.run(b.abort)
	}
	if !stop() {
		return ctx.Err()
	}
	b.abortFunc()
	return nil
}

// Kinds of series writes.
const (
	seriesOccurrence uint8 = iota
	seriesRefresh
	seriesFinish
)

// seriesItem is an occurrence waiting to be observed, or a refresh or finish write.
type seriesItem struct {
	ev   *eventsv1.Event
	at   time.Time
	kind uint8
	w    SeriesWrite
}

// seriesLane is the events.k8s.io/v1 sink: the pure queue with its Series cache and loop
// times, and the request in flight.
type seriesLane struct {
	q      queue[seriesItem]
	series *Series
	sink   SeriesSink
	logger logr.Logger

	loops, stopped          bool
	nextRefresh, nextFinish time.Time

	submitted, processed, counted uint64

	reqEv    *eventsv1.Event
	reqPatch []byte
	srv      *eventsv1.Event
	err      error
}

func (s *seriesLane) next(now time.Time) bool {
	if !s.stopped {
		if !s.loops {
			s.loops, s.nextRefresh, s.nextFinish = true, now, now
		}
		// Finish writes go in front first, then refresh writes in front of them: refresh
		// runs first, as it did at start in client-go.
		if !now.Before(s.nextFinish) {
			ws := s.series.Finish(now)
			for i := len(ws) - 1; i >= 0; i-- {
				s.q.pushFront(seriesItem{kind: seriesFinish, w: ws[i]})
			}
			s.nextFinish = now.Add(SeriesFinish)
		}
		if !now.Before(s.nextRefresh) {
			ws := s.series.Refresh()
			for i := len(ws) - 1; i >= 0; i-- {
				s.q.pushFront(seriesItem{kind: seriesRefresh, w: ws[i]})
			}
			s.nextRefresh = now.Add(SeriesRefresh)
		}
	}
	for {
		e := s.q.front()
		if e == nil || !e.isDue(now) {
			return false
		}
		if !e.ready {
			s.processed++
			w, ok := s.series.Observe(e.v.ev, e.v.at)
			if !ok {
				s.counted++
				s.q.pop()
				continue
			}
			e.v.w, e.v.ev = w, nil
			s.q.take(e)
		}
		s.reqEv, s.reqPatch = e.v.w.Event, nil
		if e.v.w.Patch != nil && !e.create {
			s.reqPatch = e.v.w.Patch
		}
		return true
	}
}

func (s *seriesLane) write(ctx context.Context) error {
	if s.reqPatch != nil {
		s.srv, s.err = s.sink.Patch(ctx, s.reqEv, s.reqPatch)
	} else {
		s.reqEv.ResourceVersion = ""
		s.srv, s.err = s.sink.Create(ctx, s.reqEv)
	}
	return s.err
}

func (s *seriesLane) done(now time.Time) {
	defer func() { s.reqEv, s.reqPatch, s.srv, s.err = nil, nil, nil, nil }()
	e := s.q.front()
	if e == nil || !e.ready {
		return
	}
	item, patch := e.v, s.reqPatch != nil
	if s.err == nil {
		if item.kind == seriesRefresh {
			s.series.Refreshed(item.w, s.srv)
		} else if item.kind == seriesFinish {
			s.series.Finished(item.w, false)
		}
		s.q.succeeded(e, patch)
		return
	}
	// A series write retries AlreadyExists: its patch raced with the create of the first
	// occurrence (spec/events.md section B.3).
	retry := Retryable(s.err) || (item.w.Patch != nil && apierrors.IsAlreadyExists(s.err))
	switch s.q.failed(e, s.err, patch, retry, now) {
	case outOnce:
		if item.kind == seriesFinish {
			s.series.Finished(item.w, retry)
		} else if !retry {
			s.q.rejected++
		}
	case outRejected:
		s.logger.Error(s.err, "server rejected event (will not retry)", "event", item.w.Event.Namespace+"/"+item.w.Event.Name)
	}
}

func (s *seriesLane) abandon() {
	if e := s.q.front(); e != nil && e.once {
		s.q.pop()
	} else {
		s.q.abandon()
	}
	s.reqEv, s.reqPatch, s.srv, s.err = nil, nil, nil, nil
}

func (s *seriesLane) wake() (time.Time, bool) {
	at, ok := s.q.due()
	if s.loops && !s.stopped {
		for _, t := range [...]time.Time{s.nextRefresh, s.nextFinish} {
			if !ok || (!at.IsZero() && t.Before(at)) {
				at, ok = t, true
			}
		}
	}
	return at, ok
}

func (s *seriesLane) len() int { return s.q.len() }
func (s *seriesLane) stop()    { s.stopped = true }

// SeriesRecorder records events.k8s.io/v1 events for one reporting controller and instance.
// Its Eventf and AnnotatedEventf are those of client-go's tools/events recorder. Event names
// are unique per recorder, even for events recorded at the same instant.
//
// Use SeriesBroadcaster.NewRecorder: the zero SeriesRecorder records nothing (Record returns
// ErrNotInitialized). Safe for concurrent use.
type SeriesRecorder struct {
	b                    *SeriesBroadcaster
	controller, instance string
	base                 recorderBase
}

// NewRecorder returns a recorder for reportingController and reportingInstance (client-go uses
// the controller name, a dash and the host name). Both are required by the server: an empty
// one is an *OptionError.
func (b *SeriesBroadcaster) NewRecorder(reportingController, reportingInstance string, opts RecorderOptions) (*SeriesRecorder, error) {
	if !b.ready() {
		return nil, ErrNotInitialized
	}
	if reportingController == "" {
		return nil, &OptionError{Field: "reportingController", Value: `""`, Reason: "must not be empty"}
	}
	if reportingInstance == "" {
		return nil, &OptionError{Field: "reportingInstance", Value: `""`, Reason: "must not be empty"}
	}
	return &SeriesRecorder{b: b, controller: reportingController, instance: reportingInstance, base: newRecorderBase(opts, b.clock, b.opts.Logger)}, nil
}

// WithLogger returns a recorder that logs refused and dropped events to logger and is
// otherwise r. A nil or zero r gives a zero SeriesRecorder.
func (r *SeriesRecorder) WithLogger(logger logr.Logger) *SeriesRecorder {
	if r == nil || r.b == nil {
		return &SeriesRecorder{}
	}
	c := *r
	c.base.logger = logger
	return &c
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
// and ErrQueueFull; every refused event is counted. The zero SeriesRecorder returns
// ErrNotInitialized.
func (r *SeriesRecorder) Record(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string) error {
	if r == nil || r.b == nil {
		return ErrNotInitialized
	}
	ev, err := r.MakeEvent(regarding, related, annotations, eventtype, reason, action, note)
	if err != nil {
		r.b.invalid.Add(1)
		r.base.logger.Error(err, "event not recorded", "reason", reason)
		return err
	}
	return r.b.submit(ev, ev.EventTime.Time)
}

// MakeEvent returns the event Record would queue. Beyond client-go, which checks only the
// type and leaves the rest to the server, it refuses with an *InvalidEventError what the
// server would refuse: an empty or over-128-character reason or action, a note over 1024
// characters. A related object that cannot be referenced is left out, as in client-go. Each
// call takes a name.
func (r *SeriesRecorder) MakeEvent(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string) (*eventsv1.Event, error) {
	if r == nil || r.b == nil {
		return nil, ErrNotInitialized
	}
	ref, err := Reference(r.base.scheme, regarding)
	if err != nil {
		return nil, err
	}
	var relRef *v1.ObjectReference
	if related != nil {
		if rr, err := Reference(r.base.scheme, related); err == nil {
			relRef = rr
		}
	}
	if err := ValidateSeriesEvent(eventtype, reason, action, note); err != nil {
		return nil, err
	}
	now := r.base.clock.Now()
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: EventName(ref.Name, r.base.stamp.next(now), r.base.rand), Namespace: ns, Annotations: maps.Clone(annotations)},
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
