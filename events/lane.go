package events

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// laneQueue is the queue a lane drives. next, done, abandon, wake, len and stop are called
// under the lane's lock; write is called outside it, between next and done, by one goroutine
// at a time.
type laneQueue interface {
	// next prepares the request due at now, if any.
	next(now time.Time) bool
	// write makes the prepared request with ctx and keeps its outcome for done.
	write(ctx context.Context) error
	// done takes the outcome of the last write at now.
	done(now time.Time)
	// abandon drops the head because the runner is shutting down.
	abandon()
	// wake returns when the queue next has work on its own (a retry, a timed loop).
	wake() (time.Time, bool)
	len() int
	// stop is called once the lane is closed: no more pushes, no more timed loops.
	stop()
}

// lane runs one queue: pump makes every request that is due, on the calling goroutine; run
// is the sink goroutine's loop (pump, then wait for an event, the next due time on the clock,
// or the abort). Pumps are serialised by turn, so Flush and the goroutine never write at the
// same time and a queue's writes stay in order.
type lane struct {
	clock clock.Clock
	q     laneQueue

	mu     sync.Mutex
	closed bool

	turn chan struct{} // holds a token while a goroutine pumps
	wake chan struct{} // a push or a close happened
	done chan struct{} // closed when the sink goroutine exits; nil when none was started
}

func newLane(clk clock.Clock, q laneQueue) *lane {
	return &lane{clock: clk, q: q, turn: make(chan struct{}, 1), wake: make(chan struct{}, 1)}
}

func (l *lane) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// close stops the lane accepting events and tells its goroutine.
func (l *lane) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		l.q.stop()
	}
	l.mu.Unlock()
	l.signal()
}

// pump makes every request due, writing with ctx. Once abort has ended, each request due
// gets that one attempt and a head waiting for a retry is dropped (client-go: after
// shutdown, one attempt per event). It returns when nothing is due, or when ctx ended during
// a write (the request then stays at the head).
func (l *lane) pump(ctx, abort context.Context) {
	for {
		l.mu.Lock()
		if !l.q.next(l.clock.Now()) {
			if abort.Err() != nil && l.q.len() > 0 {
				l.q.abandon()
				l.mu.Unlock()
				continue
			}
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		err := l.q.write(ctx)
		l.mu.Lock()
		switch {
		case err != nil && abort.Err() != nil:
			l.q.abandon()
		case err != nil && ctx.Err() != nil:
			l.mu.Unlock()
			return
		default:
			l.q.done(l.clock.Now())
		}
		l.mu.Unlock()
	}
}

// flush pumps once on the caller's goroutine, waiting for its turn until ctx ends.
func (l *lane) flush(ctx, abort context.Context) error {
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.turn }()
	l.pump(ctx, abort)
	return ctx.Err()
}

// run is the lane's loop until it is closed and empty, or abort ends. The sink goroutine
// runs it; Shutdown runs it for a lane without one.
func (l *lane) run(abort context.Context) {
	// The timer outlives a wake that changed nothing: re-arming it would read the clock
	// again, and a fake clock stepped between that read and the arming would push the
	// retry late by the step.
	var timer clock.Timer
	var timerAt time.Time
	stop := func() {
		if timer != nil {
			timer.Stop()
			timer = nil
		}
	}
	defer stop()
	for {
		l.turn <- struct{}{}
		l.pump(abort, abort)
		<-l.turn
		l.mu.Lock()
		n, closed := l.q.len(), l.closed
		at, timed := l.q.wake()
		l.mu.Unlock()
		if (closed && n == 0) || abort.Err() != nil {
			return
		}
		switch {
		case !timed || at.IsZero():
			stop()
		case timer == nil || !at.Equal(timerAt):
			stop()
			d := at.Sub(l.clock.Now())
			if d <= 0 {
				continue
			}
			timer, timerAt = l.clock.NewTimer(d), at
		}
		var fire <-chan time.Time
		if timer != nil {
			fire = timer.C()
		}
		select {
		case <-l.wake:
		case <-fire:
			timer = nil
		case <-abort.Done():
		}
	}
}

// nextWake returns when the lane next has work on its own.
func (l *lane) nextWake() (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.q.wake()
}
