package events

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Defaults of client-go v0.37.2 tools/record's broadcaster (spec A.1).
const (
	// DefaultQueueSize is the number of events each sink's queue holds.
	DefaultQueueSize = 1000
	// DefaultMaxTries is the number of write attempts per event, the first one included.
	DefaultMaxTries = 12
	// DefaultSleep is the pause between write attempts; the first one is random in [0, DefaultSleep).
	DefaultSleep = 10 * time.Second
)

// Option configures a Broadcaster.
type Option func(*config) error

type config struct {
	queueSize int
	maxTries  int
	sleep     time.Duration
	clock     clock.Clock
	random    func() float64
	logger    logr.Logger
}

// WithQueueSize sets how many events each sink's queue holds (at least 1; default 1000). A
// full queue drops the event for that sink and counts it.
func WithQueueSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return &OptionError{Field: "QueueSize", Value: strconv.Itoa(n), Detail: "must be at least 1"}
		}
		c.queueSize = n
		return nil
	}
}

// WithRetry sets the number of write attempts per event (at least 1; default 12) and the sleep
// between them (not negative; default 10 s; the first sleep is random in [0, sleep)).
func WithRetry(maxTries int, sleep time.Duration) Option {
	return func(c *config) error {
		if maxTries < 1 {
			return &OptionError{Field: "MaxTries", Value: strconv.Itoa(maxTries), Detail: "must be at least 1"}
		}
		if sleep < 0 {
			return &OptionError{Field: "Sleep", Value: sleep.String(), Detail: "must not be negative"}
		}
		c.maxTries, c.sleep = maxTries, sleep
		return nil
	}
}

// WithClock sets the clock that times retry sleeps (default the real clock).
func WithClock(clk clock.Clock) Option {
	return func(c *config) error {
		if clk == nil {
			return &OptionError{Field: "Clock", Value: "<nil>", Detail: "must not be nil"}
		}
		c.clock = clk
		return nil
	}
}

// WithRandom sets the source of the first retry's jitter: a function returning numbers in
// [0, 1), called from the sink goroutines one at a time per sink. The default is a generator
// private to the broadcaster.
func WithRandom(f func() float64) Option {
	return func(c *config) error {
		if f == nil {
			return &OptionError{Field: "Random", Value: "<nil>", Detail: "must not be nil"}
		}
		c.random = f
		return nil
	}
}

// WithLogger sets where dropped events and failed writes are logged (default: nowhere; the
// counters in Stats always count them).
func WithLogger(l logr.Logger) Option {
	return func(c *config) error {
		c.logger = l
		return nil
	}
}

// Broadcaster takes events from recorders and writes them to one or more sinks. Recording
// never blocks and never starts a goroutine: the event is put on each sink's bounded queue or,
// when that queue is full, dropped for that sink and counted. Each sink has one goroutine, its
// own Correlator, and client-go's retry rules. Shutdown flushes the queues until its context
// ends and returns when every goroutine has exited. A Broadcaster is safe for concurrent use.
type Broadcaster struct {
	cfg config

	mu     sync.RWMutex
	closed bool
	sinks  []*sinkWorker

	abort     context.Context // cancelled when Shutdown's context ends
	abortFunc context.CancelFunc
	wg        sync.WaitGroup

	submitted, invalid, afterShutdown atomic.Uint64
}

// NewBroadcaster returns a broadcaster with client-go v0.37.2's defaults changed by opts, or
// the *OptionError of the first bad option.
func NewBroadcaster(opts ...Option) (*Broadcaster, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	b := &Broadcaster{cfg: cfg}
	b.abort, b.abortFunc = context.WithCancel(context.Background())
	return b, nil
}

// newConfig applies opts to the defaults. The default jitter source is a generator private to
// the configuration, seeded from the time, behind a mutex.
func newConfig(opts []Option) (config, error) {
	gen := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x9e3779b97f4a7c15))
	var mu sync.Mutex
	cfg := config{
		queueSize: DefaultQueueSize,
		maxTries:  DefaultMaxTries,
		sleep:     DefaultSleep,
		clock:     clock.RealClock{},
		logger:    logr.Discard(),
		random: func() float64 {
			mu.Lock()
			defer mu.Unlock()
			return gen.Float64()
		},
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return config{}, err
		}
	}
	return cfg, nil
}

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
	// Sinks holds one entry per sink, in the order they were started.
	Sinks []SinkStats
}

// Stats returns a snapshot of the counters.
func (b *Broadcaster) Stats() Stats {
	st := Stats{Submitted: b.submitted.Load(), DroppedInvalid: b.invalid.Load(), DroppedAfterShutdown: b.afterShutdown.Load()}
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, s := range b.sinks {
		st.Sinks = append(st.Sinks, s.stats())
	}
	return st
}

// StartRecordingToSink starts writing every event recorded from now on to sink, through a new
// Correlator with opts (so counts start afresh for each sink, as in client-go). It returns the
// correlator's *OptionError, or ErrShutdown after Shutdown.
func (b *Broadcaster) StartRecordingToSink(sink Sink, opts Options) error {
	if sink == nil {
		return &OptionError{Field: "Sink", Value: "<nil>", Detail: "must not be nil"}
	}
	c, err := NewCorrelator(opts)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrShutdown
	}
	w := &sinkWorker{b: b, sink: sink, correlator: c, queue: make(chan *v1.Event, b.cfg.queueSize)}
	b.sinks = append(b.sinks, w)
	b.wg.Add(1)
	go w.run()
	return nil
}

// submit queues ev on every sink without blocking. It returns ErrShutdown after Shutdown, and
// ErrQueueFull when at least one sink's queue was full (the others still got it).
func (b *Broadcaster) submit(ev *v1.Event) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		b.afterShutdown.Add(1)
		return ErrShutdown
	}
	b.submitted.Add(1)
	var err error
	for _, s := range b.sinks {
		select {
		case s.queue <- ev:
		default:
			s.droppedQueueFull.Add(1)
			err = ErrQueueFull
		}
	}
	return err
}

// Shutdown stops accepting events, writes what is queued until ctx ends (then drops the rest,
// counted as DroppedShutdown, and interrupts retry sleeps and sink calls), and returns once
// every sink goroutine has exited. It returns ctx.Err() when the flush was cut short. Calling it
// again waits again and is otherwise a no-op.
func (b *Broadcaster) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		for _, s := range b.sinks {
			close(s.queue)
		}
	}
	b.mu.Unlock()
	done := make(chan struct{})
	go func() {
		b.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		b.abortFunc()
		return nil
	case <-ctx.Done():
		b.abortFunc()
		<-done
		return ctx.Err()
	}
}

// sinkWorker is one sink's queue, goroutine and correlator. Only its goroutine touches the
// correlator.
type sinkWorker struct {
	b          *Broadcaster
	sink       Sink
	correlator *Correlator
	queue      chan *v1.Event
	event      v1.Event // the event being written, reused
	patch      []byte   // its patch, reused

	created, patched, aggregated, retries                             atomic.Uint64
	droppedQueueFull, droppedSpam, droppedRejected, droppedRetryLimit atomic.Uint64
	droppedShutdown                                                   atomic.Uint64
	cacheEntries                                                      atomic.Int64
}

func (w *sinkWorker) stats() SinkStats {
	return SinkStats{
		Created: w.created.Load(), Patched: w.patched.Load(), Aggregated: w.aggregated.Load(),
		Retries:          w.retries.Load(),
		DroppedQueueFull: w.droppedQueueFull.Load(), DroppedSpam: w.droppedSpam.Load(),
		DroppedRejected: w.droppedRejected.Load(), DroppedRetryLimit: w.droppedRetryLimit.Load(),
		DroppedShutdown: w.droppedShutdown.Load(),
		CacheEntries:    int(w.cacheEntries.Load()),
	}
}

func (w *sinkWorker) run() {
	defer w.b.wg.Done()
	// Once Shutdown's context has ended, each event left gets one attempt with a cancelled
	// context (client-go: "after shutdown, only one attempt per event"), which a sink honouring
	// its context fails at once.
	for ev := range w.queue {
		w.handle(ev)
		a, d, s := w.correlator.Len()
		w.cacheEntries.Store(int64(max(a, d, s)))
	}
}

// handle correlates one event and writes it with client-go's retry rules (spec A.5).
func (w *sinkWorker) handle(in *v1.Event) {
	// The event to write and its patch live in the worker and are reused for the next event:
	// sinks do not keep them (see Sink).
	decision, aggregated, patch, err := w.correlator.CorrelateTo(in, w.b.cfg.clock.Now(), &w.event, w.patch[:0])
	if err != nil {
		w.droppedRejected.Add(1)
		return
	}
	if decision == Skip {
		w.droppedSpam.Add(1)
		w.b.cfg.logger.V(4).Info("event dropped by the spam filter", "object", in.InvolvedObject, "reason", in.Reason)
		return
	}
	if patch != nil {
		w.patch = patch
	}
	ev := &w.event
	ctx := w.b.abort
	for tries := 1; ; tries++ {
		srv, err := w.write(ctx, ev, patch, decision == Patch)
		if err == nil {
			if srv != nil {
				w.correlator.UpdateState(srv)
			}
			if aggregated {
				w.aggregated.Add(1)
			}
			if decision == Patch {
				w.patched.Add(1)
			} else {
				w.created.Add(1)
			}
			return
		}
		if ctx.Err() != nil {
			w.droppedShutdown.Add(1)
			return
		}
		if !Retryable(err) {
			w.droppedRejected.Add(1)
			w.b.cfg.logger.Error(err, "server rejected event (will not retry)", "event", eventName(ev))
			return
		}
		if tries >= w.b.cfg.maxTries {
			w.droppedRetryLimit.Add(1)
			w.b.cfg.logger.Error(err, "retry limit exceeded, dropping event", "event", eventName(ev), "tries", tries)
			return
		}
		w.b.cfg.logger.Error(err, "unable to write event (may retry after sleeping)", "event", eventName(ev))
		d := w.b.cfg.sleep
		if tries == 1 {
			d = time.Duration(w.b.cfg.random() * float64(d))
		}
		if !sleep(ctx, w.b.cfg.clock, d) {
			w.droppedShutdown.Add(1)
			return
		}
		w.retries.Add(1)
	}
}

// write is one attempt: a patch when the event is a repeat, a create otherwise or when the
// patch found no event (404), with the resourceVersion cleared.
func (w *sinkWorker) write(ctx context.Context, ev *v1.Event, patch []byte, update bool) (*v1.Event, error) {
	var srv *v1.Event
	var err error
	if update {
		srv, err = w.sink.Patch(ctx, ev, patch)
	}
	if !update || isNotFound(err) {
		ev.ResourceVersion = ""
		srv, err = w.sink.Create(ctx, ev)
	}
	return srv, err
}

// sleep waits d on clk; it returns false when ctx ended first.
func sleep(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

func eventName(ev *v1.Event) string { return ev.Namespace + "/" + ev.Name }
