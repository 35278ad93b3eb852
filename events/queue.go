package events

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Defaults of client-go v0.37.2's sink writers (spec/events.md sections A.1 and B.1).
const (
	// DefaultQueueSize is the number of events each sink's queue holds.
	DefaultQueueSize = 1000
	// DefaultMaxTries is the number of write attempts per event, the first one included.
	DefaultMaxTries = 12
	// DefaultSleep is the pause between write attempts: core/v1 sleeps a random part of it
	// before the first retry and all of it before the others; events.k8s.io/v1 sleeps it plus
	// up to a quarter more before each retry.
	DefaultSleep = 10 * time.Second
)

// Rand is a source of random numbers in [0, 1); *math/rand/v2.Rand and *math/rand.Rand
// satisfy it. A nil Rand in options means math/rand/v2's process-wide source.
type Rand interface{ Float64() float64 }

// globalRand is math/rand/v2's process-wide source.
type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// lockedRand serialises calls to a Rand shared by several sink goroutines.
type lockedRand struct {
	mu sync.Mutex
	r  Rand
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

// unit returns r's next number, clamped into [0, 1] so that a misbehaving source cannot
// stretch a sleep.
func unit(r Rand) float64 {
	if r == nil {
		r = globalRand{}
	}
	f := r.Float64()
	if !(f >= 0) { // also NaN
		return 0
	}
	if f > 1 {
		return 1
	}
	return f
}

// SinkQueueOptions configures a sink queue: its size and its retry schedule. Its zero value is
// refused (a zero QueueSize or MaxTries hides a choice): start from DefaultSinkQueueOptions.
type SinkQueueOptions struct {
	// QueueSize is how many events the queue holds; a full queue drops the event and counts
	// it. At least 1.
	QueueSize int
	// MaxTries is the number of write attempts per event, the first one included. At least 1.
	MaxTries int
	// Sleep is the pause between attempts (see DefaultSleep for how each API jitters it).
	// Not negative.
	Sleep time.Duration
	// Rand draws the jitter of the retry sleeps; nil is math/rand/v2's process-wide source.
	// A queue calls it from the goroutine that drives it.
	Rand Rand
}

// DefaultSinkQueueOptions returns client-go v0.37.2's queue size and retry schedule.
func DefaultSinkQueueOptions() SinkQueueOptions {
	return SinkQueueOptions{QueueSize: DefaultQueueSize, MaxTries: DefaultMaxTries, Sleep: DefaultSleep}
}

// Validate reports the first invalid field of o as an *OptionError, with prefix (the name of
// the struct holding o, or "") before the field name.
func (o SinkQueueOptions) validate(prefix string) error {
	switch {
	case o.QueueSize < 1:
		return &OptionError{Field: prefix + "QueueSize", Value: strconv.Itoa(o.QueueSize), Reason: "must be at least 1"}
	case o.MaxTries < 1:
		return &OptionError{Field: prefix + "MaxTries", Value: strconv.Itoa(o.MaxTries), Reason: "must be at least 1"}
	case o.Sleep < 0:
		return &OptionError{Field: prefix + "Sleep", Value: o.Sleep.String(), Reason: "must not be negative"}
	}
	return nil
}

// Validate reports the first invalid field of o as an *OptionError (matching
// ErrInvalidOptions).
func (o SinkQueueOptions) Validate() error { return o.validate("") }

// entry is one queued item of a queue: the caller's value, the attempts made and when the
// next one is due.
type entry[T any] struct {
	v T
	// tries counts the failed attempts so far.
	tries int
	// due is when the next attempt may be made; zero means at once.
	due time.Time
	// create is set once a patch found nothing: the next attempt creates the event.
	create bool
	// ready is set once the item was correlated (or observed) into a write.
	ready bool
	// once marks a write that gets a single attempt (a series refresh or finish write).
	once bool
}

// queue is the pure core both APIs' sinks share: a bounded FIFO of writes, their attempts,
// client-go's retry schedule, and the counters of what became of each write. It reads no
// clock and starts nothing; time is an argument. Not safe for concurrent use.
type queue[T any] struct {
	opts SinkQueueOptions
	// series selects the events.k8s.io/v1 schedule (Sleep plus up to 25 % before every
	// retry) instead of core/v1's (a random part of Sleep first, then Sleep).
	series bool
	items  []entry[T]
	head   int
	// waiting counts the bounded items not yet taken up (correlated or observed): the
	// queue's size limits them, as client-go's channel holds the events its worker has not
	// received yet.
	waiting int

	created, patched, retries                     uint64
	queueFull, rejected, retryLimit, shutdownDrop uint64
}

func (q *queue[T]) len() int { return len(q.items) - q.head }

// push appends v; limited pushes are refused (and counted) when the queue is full.
func (q *queue[T]) push(v T, limited bool) bool {
	if limited && q.waiting >= q.opts.QueueSize {
		q.queueFull++
		return false
	}
	q.items = append(q.items, entry[T]{v: v})
	q.waiting++
	return true
}

// pushFront puts v before every other item, unbounded, for a single attempt.
func (q *queue[T]) pushFront(v T) {
	e := entry[T]{v: v, ready: true, once: true}
	if q.head > 0 {
		q.head--
		q.items[q.head] = e
		return
	}
	q.items = append(q.items, entry[T]{})
	copy(q.items[1:], q.items)
	q.items[0] = e
}

// front returns the head, or nil when the queue is empty.
func (q *queue[T]) front() *entry[T] {
	if q.head == len(q.items) {
		return nil
	}
	return &q.items[q.head]
}

// take marks e, the head, as taken up: correlated or observed into a write.
func (q *queue[T]) take(e *entry[T]) {
	e.ready = true
	q.waiting--
}

// isDue reports whether e's next attempt may be made at now.
func (e *entry[T]) isDue(now time.Time) bool { return e.due.IsZero() || !now.Before(e.due) }

// pop drops the head.
func (q *queue[T]) pop() {
	if e := &q.items[q.head]; !e.ready && !e.once {
		q.waiting--
	}
	var zero entry[T]
	q.items[q.head] = zero
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 64 && q.head*2 >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
}

// due returns when the head's next attempt is due (zero: at once), if the queue is not empty.
func (q *queue[T]) due() (time.Time, bool) {
	if e := q.front(); e != nil {
		return e.due, true
	}
	return time.Time{}, false
}

// succeeded pops the head after a successful write and counts it.
func (q *queue[T]) succeeded(e *entry[T], patched bool) {
	if e.tries > 0 {
		q.retries++
	}
	if patched {
		q.patched++
	} else {
		q.created++
	}
	q.pop()
}

// outcome says what a failed attempt led to.
type outcome uint8

const (
	outRecreate   outcome = iota + 1 // the patch found nothing: create at once
	outRetry                         // tried again at the item's due time
	outRejected                      // not retryable: dropped
	outRetryLimit                    // the last attempt: dropped
	outOnce                          // a single-attempt write failed: dropped, uncounted
)

// failed records a failed attempt of the head at now (spec/events.md sections A.5 and B.3):
// a 404 on a patch turns the same attempt into a create; an error that is not retryable drops
// the write, and so does the last of MaxTries attempts; otherwise the next attempt is due
// after the retry sleep.
func (q *queue[T]) failed(e *entry[T], err error, patch, retryable bool, now time.Time) outcome {
	if patch && !e.create && isNotFound(err) {
		e.create = true
		e.due = time.Time{}
		return outRecreate
	}
	if e.tries > 0 {
		q.retries++
	}
	e.tries++
	switch {
	case e.once:
		q.pop()
		return outOnce
	case !retryable:
		q.rejected++
		q.pop()
		return outRejected
	case e.tries >= q.opts.MaxTries:
		q.retryLimit++
		q.pop()
		return outRetryLimit
	}
	e.due = now.Add(q.sleep(e.tries))
	return outRetry
}

// sleep is the pause before the attempt after the tries-th.
func (q *queue[T]) sleep(tries int) time.Duration {
	d := q.opts.Sleep
	if q.series {
		return d + time.Duration(unit(q.opts.Rand)*0.25*float64(d))
	}
	if tries == 1 {
		return time.Duration(unit(q.opts.Rand) * float64(d))
	}
	return d
}

// abandon drops the head, counted as dropped at shutdown.
func (q *queue[T]) abandon() {
	if q.front() == nil {
		return
	}
	q.shutdownDrop++
	q.pop()
}

// coreItem is a core/v1 event waiting in a SinkQueue, with the time it was recorded at.
type coreItem struct {
	ev         *v1.Event
	at         time.Time
	decision   Decision
	aggregated bool
}

// SinkRequest is one write a SinkQueue asks for: create Event, or patch it with Patch.
type SinkRequest struct {
	// Op is Create or Patch.
	Op Decision
	// Event is the event to write. It belongs to the queue and stays valid until Done or
	// Abandon; the sink must not keep it.
	Event *v1.Event
	// Patch is the strategic merge patch of a Patch (count, lastTimestamp and message), owned
	// by the queue like Event; it is nil for a Create.
	Patch []byte
	// Attempt is 1 for the first attempt at this event, 2 for the first retry, and so on.
	Attempt int
}

// SinkQueue is the pure part of writing core/v1 events to one sink, as client-go's
// recordToSink does (spec/events.md sections A.4 to A.6): a bounded queue of recorded events in
// order; the head is correlated (aggregation, count, spam filter) at the time it was recorded
// when it is first due; Next says which request to make (a create, or a patch that turns into
// a create when the server has no such event), Done takes its outcome and schedules a retry
// (a random part of Sleep before the first, Sleep before each later one, MaxTries attempts in
// all; server answers are final). It reads no clock, sleeps never and starts no goroutine:
// time is an argument, and a runner (Broadcaster, or a simulation on a virtual clock) makes
// the requests. Every event pushed is written or counted as dropped (Stats).
//
// Use NewSinkQueue; the methods of the zero value do nothing and Push returns
// ErrNotInitialized. A SinkQueue is not safe for concurrent use.
type SinkQueue struct {
	q          queue[coreItem]
	corr       *Correlator
	out        v1.Event // the head's event to write
	patch      []byte   // the head's patch buffer
	hasPatch   bool
	spam, aggr uint64
	invalid    uint64
}

// NewSinkQueue returns an empty queue that correlates its events with c, which it owns from
// then on (a queue's correlator is its own: NewCorrelator), or an *OptionError (matching
// ErrInvalidOptions) for invalid options or a nil correlator.
func NewSinkQueue(opts SinkQueueOptions, c *Correlator) (*SinkQueue, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, &OptionError{Field: "correlator", Reason: "a correlator is required (NewCorrelator)"}
	}
	if opts.Rand == nil {
		opts.Rand = globalRand{}
	}
	return &SinkQueue{q: queue[coreItem]{opts: opts}, corr: c}, nil
}

// Push queues ev, recorded at at (the time the recorder stamped it: the correlator's
// aggregation window and spam filter run on it). The queue keeps ev until it is written; the
// caller must not change it. It returns ErrQueueFull (counted as DroppedQueueFull) when the
// queue is full and an *InvalidEventError for a nil event.
func (q *SinkQueue) Push(ev *v1.Event, at time.Time) error {
	if q == nil || q.corr == nil {
		return ErrNotInitialized
	}
	if ev == nil {
		q.invalid++
		return ErrNilEvent
	}
	if !q.q.push(coreItem{ev: ev, at: at}, true) {
		return ErrQueueFull
	}
	return nil
}

// Next returns the request to make for the head of the queue at now, if the head is due (it
// is new, or its retry sleep has passed). A new head is first correlated: one the spam filter
// drops is counted and the next is looked at. Calling Next again before Done returns the same
// request.
func (q *SinkQueue) Next(now time.Time) (SinkRequest, bool) {
	if q == nil || q.corr == nil {
		return SinkRequest{}, false
	}
	for {
		e := q.q.front()
		if e == nil || !e.isDue(now) {
			return SinkRequest{}, false
		}
		if !e.ready {
			d, aggregated, patch, err := q.corr.CorrelateTo(e.v.ev, e.v.at, &q.out, q.patch[:0])
			if err != nil {
				q.q.rejected++
				q.q.pop()
				continue
			}
			if d == Skip {
				q.spam++
				q.q.pop()
				continue
			}
			q.hasPatch = patch != nil
			if patch != nil {
				q.patch = patch
			}
			e.v.decision, e.v.aggregated = d, aggregated
			q.q.take(e)
		}
		req := SinkRequest{Op: Create, Event: &q.out, Attempt: e.tries + 1}
		if e.v.decision == Patch && !e.create {
			req.Op = Patch
			if q.hasPatch {
				req.Patch = q.patch
			}
		} else {
			q.out.ResourceVersion = ""
		}
		return req, true
	}
}

// Done takes the outcome of the request Next returned, at now: the server's copy of the
// event (given to the correlator, as client-go's UpdateState) or the error. A patch answered
// by 404 makes the next request a create of the same event at once; an error Retryable
// reports false drops the event (DroppedRejected), and so does the last attempt
// (DroppedRetryLimit); any other error schedules the next attempt. Done without a request
// outstanding does nothing.
func (q *SinkQueue) Done(server *v1.Event, err error, now time.Time) {
	if q == nil || q.corr == nil {
		return
	}
	e := q.q.front()
	if e == nil || !e.ready {
		return
	}
	patch := e.v.decision == Patch && !e.create
	if err == nil {
		q.corr.UpdateState(server)
		if e.v.aggregated {
			q.aggr++
		}
		q.q.succeeded(e, patch)
		return
	}
	if q.q.failed(e, err, patch, Retryable(err), now) == outRecreate {
		q.out.ResourceVersion = ""
	}
}

// Abandon drops the head of the queue, counted as DroppedShutdown: its runner is shutting
// down (the request failed because its context ended, or its retry sleep was cut short).
func (q *SinkQueue) Abandon() {
	if q == nil || q.corr == nil {
		return
	}
	q.q.abandon()
}

// Due returns when the head of the queue may be written (the zero time: at once), or false
// when the queue is empty.
func (q *SinkQueue) Due() (time.Time, bool) {
	if q == nil {
		return time.Time{}, false
	}
	return q.q.due()
}

// Len returns the number of queued events, the one being written included. QueueSize bounds
// the events not yet taken up: the head, once correlated, waits for its writes and retries
// outside that bound, as client-go's worker holds the event it has received.
func (q *SinkQueue) Len() int {
	if q == nil {
		return 0
	}
	return q.q.len()
}

// Stats returns the queue's counters.
func (q *SinkQueue) Stats() SinkStats {
	if q == nil || q.corr == nil {
		return SinkStats{}
	}
	a, d, s := q.corr.Len()
	return SinkStats{
		Created: q.q.created, Patched: q.q.patched, Aggregated: q.aggr, Retries: q.q.retries,
		DroppedQueueFull: q.q.queueFull, DroppedSpam: q.spam, DroppedRejected: q.q.rejected + q.invalid,
		DroppedRetryLimit: q.q.retryLimit, DroppedShutdown: q.q.shutdownDrop,
		Queued: q.q.len(), CacheEntries: max(a, d, s),
	}
}
