package events

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// BroadcasterOptions configures a Broadcaster. Its zero value is refused (see
// SinkQueueOptions): start from DefaultBroadcasterOptions.
type BroadcasterOptions struct {
	// Queue sets each sink's queue size and retry schedule (client-go's by default).
	Queue SinkQueueOptions
	// Clock times the retry sleeps and stamps events of recorders without a clock of their
	// own; nil is the real clock.
	Clock clock.Clock
	// Logger receives dropped events and failed writes; the zero Logger discards them (the
	// counters in Stats always count them).
	Logger logr.Logger
}

// DefaultBroadcasterOptions returns client-go v0.37.2's settings: queues of 1000 events, 12
// attempts per event, 10 s sleeps, the real clock, no logging.
func DefaultBroadcasterOptions() BroadcasterOptions {
	return BroadcasterOptions{Queue: DefaultSinkQueueOptions()}
}

// Validate reports the first invalid field of o as an *OptionError (matching
// ErrInvalidOptions).
func (o BroadcasterOptions) Validate() error { return o.Queue.validate("Queue.") }

// SinkStats counts what happened to the events given to one sink.
type SinkStats struct {
	// Created and Patched count successful writes; Aggregated those of aggregate events.
	Created, Patched, Aggregated uint64
	// Retries counts write attempts after the first.
	Retries uint64
	// DroppedQueueFull: the sink's queue was full when the event was recorded.
	DroppedQueueFull uint64
	// DroppedSpam: the correlator's spam filter dropped the event.
	DroppedSpam uint64
	// DroppedRejected: the server refused it, or the error was not retryable.
	DroppedRejected uint64
	// DroppedRetryLimit: every attempt failed with a retryable error.
	DroppedRetryLimit uint64
	// DroppedShutdown: Shutdown's context ended before the event was written.
	DroppedShutdown uint64
	// Queued is the number of events waiting in the queue (for their turn or a retry), the
	// one being written included.
	Queued int
	// CacheEntries is the number of entries of the sink correlator's largest cache, at most
	// the correlator's CacheSize.
	CacheEntries int
}

// Stats is a snapshot of a broadcaster's counters.
type Stats struct {
	// Submitted counts events the broadcaster accepted, once per event whatever the number of
	// sinks; a sink whose queue was full counts that drop in its DroppedQueueFull.
	Submitted uint64
	// DroppedInvalid counts events refused by a recorder (bad type, reason, action, note or object).
	DroppedInvalid uint64
	// DroppedAfterShutdown counts events recorded after Shutdown began.
	DroppedAfterShutdown uint64
	// Sinks holds one entry per sink, in the order they were added.
	Sinks []SinkStats
}

// Broadcaster takes events from recorders and writes them to one or more sinks, each through
// its own SinkQueue (its own Correlator, client-go's retry rules). Recording never blocks and
// never starts a goroutine: the event is put on each sink's bounded queue or, when that queue
// is full, dropped for that sink and counted. StartRecordingToSink gives a sink a goroutine
// that writes its queue, sleeping on the clock between attempts; AddSink adds one that only
// Flush and Shutdown write, on the caller's goroutine, for a caller that moves a virtual
// clock itself. Events are correlated at the time their recorder stamped them, not when they
// are written. Shutdown flushes the queues until its context ends and returns when every
// goroutine has exited.
//
// Use NewBroadcaster; the methods of the zero value return ErrNotInitialized (or nothing). A
// Broadcaster is safe for concurrent use.
type Broadcaster struct {
	opts  BroadcasterOptions
	clock clock.Clock
	rand  Rand

	mu     sync.RWMutex
	closed bool
	sinks  []*coreLane

	abort     context.Context // cancelled when Shutdown's context ends
	abortFunc context.CancelFunc

	submitted, invalid, afterShutdown atomic.Uint64
}

// NewBroadcaster returns a broadcaster with opts, or an *OptionError (matching
// ErrInvalidOptions). It starts no goroutine.
func NewBroadcaster(opts BroadcasterOptions) (*Broadcaster, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	b := &Broadcaster{opts: opts, clock: opts.Clock}
	if b.clock == nil {
		b.clock = clock.RealClock{}
	}
	b.rand = globalRand{}
	if opts.Queue.Rand != nil {
		b.rand = &lockedRand{r: opts.Queue.Rand}
	}
	b.abort, b.abortFunc = context.WithCancel(context.Background())
	return b, nil
}

func (b *Broadcaster) ready() bool { return b != nil && b.abortFunc != nil }

// Stats returns a snapshot of the counters (zero for the zero value).
func (b *Broadcaster) Stats() Stats {
	if !b.ready() {
		return Stats{}
	}
	st := Stats{Submitted: b.submitted.Load(), DroppedInvalid: b.invalid.Load(), DroppedAfterShutdown: b.afterShutdown.Load()}
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, s := range b.sinks {
		s.lane.mu.Lock()
		st.Sinks = append(st.Sinks, s.q.Stats())
		s.lane.mu.Unlock()
	}
	return st
}

// StartRecordingToSink starts writing every event recorded from now on to sink, through a new
// Correlator with opts (so counts start afresh for each sink, as in client-go), on a goroutine
// of its own that Shutdown ends. It returns an *OptionError for a nil sink or invalid options,
// and ErrShutdown after Shutdown.
func (b *Broadcaster) StartRecordingToSink(sink Sink, opts CorrelatorOptions) error {
	return b.addSink(sink, opts, true)
}

// AddSink is StartRecordingToSink without the goroutine: the sink's queue is written only by
// Flush and Shutdown, on the caller's goroutine, at the clock's time. It suits a caller that
// drives a virtual clock and wants every write made before the clock moves again.
func (b *Broadcaster) AddSink(sink Sink, opts CorrelatorOptions) error {
	return b.addSink(sink, opts, false)
}

func (b *Broadcaster) addSink(sink Sink, opts CorrelatorOptions, goroutine bool) error {
	if !b.ready() {
		return ErrNotInitialized
	}
	if sink == nil {
		return &OptionError{Field: "Sink", Value: "<nil>", Reason: "must not be nil"}
	}
	qo := b.opts.Queue
	qo.Rand = b.rand
	c, err := NewCorrelator(opts)
	if err != nil {
		return err
	}
	q, err := NewSinkQueue(qo, c)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrShutdown
	}
	s := &coreLane{q: q, sink: sink, logger: b.opts.Logger, maxTries: qo.MaxTries}
	s.lane = newLane(b.clock, s)
	b.sinks = append(b.sinks, s)
	if goroutine {
		s.lane.done = make(chan struct{})
		go func() {
			defer close(s.lane.done)
			s.lane.run(b.abort)
		}()
	}
	return nil
}

// submit queues ev, stamped at, on every sink without blocking. It returns ErrShutdown after
// Shutdown, and ErrQueueFull when at least one sink's queue was full (the others still got
// it).
func (b *Broadcaster) submit(ev *v1.Event, at time.Time) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		b.afterShutdown.Add(1)
		return ErrShutdown
	}
	b.submitted.Add(1)
	var err error
	for _, s := range b.sinks {
		s.lane.mu.Lock()
		perr := s.q.Push(ev, at)
		s.lane.mu.Unlock()
		if perr != nil {
			err = perr
			continue
		}
		s.lane.signal()
	}
	return err
}

// Flush writes, on the caller's goroutine, every queued event that is due at the clock's time,
// for every sink, and returns when each queue is empty or its head waits for a retry (see
// NextRetry). A sink goroutine busy with a write is waited for. When ctx ends first, Flush
// returns ctx.Err() and leaves the rest queued.
func (b *Broadcaster) Flush(ctx context.Context) error {
	if !b.ready() {
		return ErrNotInitialized
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.mu.RLock()
	sinks := append([]*coreLane(nil), b.sinks...)
	b.mu.RUnlock()
	for _, s := range sinks {
		if err := s.lane.flush(ctx, b.abort); err != nil {
			return err
		}
	}
	return nil
}

// NextRetry returns the earliest time at which a sink's queue has an event waiting for a
// retry, or false when none waits.
func (b *Broadcaster) NextRetry() (time.Time, bool) {
	if !b.ready() {
		return time.Time{}, false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	var next time.Time
	found := false
	for _, s := range b.sinks {
		if t, ok := s.lane.nextWake(); ok && !t.IsZero() && (!found || t.Before(next)) {
			next, found = t, true
		}
	}
	return next, found
}

// Shutdown stops accepting events, writes what is queued until ctx ends (then drops the rest,
// counted as DroppedShutdown, and interrupts retry sleeps and sink calls), and returns once
// every sink goroutine has exited; the queues of sinks added with AddSink are written on the
// caller's goroutine, waiting for retries on the clock. It returns ctx.Err() when the flush
// was cut short. Calling it again waits again and is otherwise a no-op.
func (b *Broadcaster) Shutdown(ctx context.Context) error {
	if !b.ready() {
		return ErrNotInitialized
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.mu.Lock()
	b.closed = true
	sinks := append([]*coreLane(nil), b.sinks...)
	b.mu.Unlock()
	for _, s := range sinks {
		s.lane.close()
	}
	stop := context.AfterFunc(ctx, b.abortFunc)
	for _, s := range sinks {
		if s.lane.done == nil {
			s.lane.run(b.abort)
		}
	}
	for _, s := range sinks {
		if s.lane.done != nil {
			<-s.lane.done
		}
	}
	if !stop() {
		return ctx.Err()
	}
	b.abortFunc()
	return nil
}

// coreLane is one core/v1 sink: its queue and the request in flight.
type coreLane struct {
	lane     *lane
	q        *SinkQueue
	sink     Sink
	logger   logr.Logger
	maxTries int

	req SinkRequest
	srv *v1.Event
	err error
}

func (c *coreLane) next(now time.Time) bool {
	var ok bool
	c.req, ok = c.q.Next(now)
	return ok
}

func (c *coreLane) write(ctx context.Context) error {
	if c.req.Op == Patch {
		c.srv, c.err = c.sink.Patch(ctx, c.req.Event, c.req.Patch)
	} else {
		c.srv, c.err = c.sink.Create(ctx, c.req.Event)
	}
	return c.err
}

func (c *coreLane) done(now time.Time) {
	if c.err != nil && !(c.req.Op == Patch && isNotFound(c.err)) {
		name := eventName(c.req.Event)
		switch {
		case !Retryable(c.err):
			c.logger.Error(c.err, "server rejected event (will not retry)", "event", name)
		case c.req.Attempt >= c.maxTries:
			c.logger.Error(c.err, "retry limit exceeded, dropping event", "event", name, "tries", c.req.Attempt)
		default:
			c.logger.Error(c.err, "unable to write event (may retry after sleeping)", "event", name)
		}
	}
	c.q.Done(c.srv, c.err, now)
	c.req, c.srv, c.err = SinkRequest{}, nil, nil
}

func (c *coreLane) abandon() {
	c.q.Abandon()
	c.req, c.srv, c.err = SinkRequest{}, nil, nil
}

func (c *coreLane) wake() (time.Time, bool) { return c.q.Due() }
func (c *coreLane) len() int                { return c.q.Len() }
func (c *coreLane) stop()                   {}

func eventName(ev *v1.Event) string { return ev.Namespace + "/" + ev.Name }
