package events_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

// maxSteps bounds every loop that drives a queue: a retry loop that does not end makes the
// test fail with a message instead of hanging.
const maxSteps = 1000

// attempt is one request a driven queue asked for, and when.
type attempt struct {
	at time.Time
	op events.Decision
}

// drive runs q against write from now on, moving time to each retry's due time, until the
// queue is empty. It fails the test when that takes more than maxSteps requests.
func drive(t *testing.T, q *events.SinkQueue, now time.Time, write func(events.SinkRequest) (*v1.Event, error)) []attempt {
	t.Helper()
	var log []attempt
	for range maxSteps {
		req, ok := q.Next(now)
		if !ok {
			due, waiting := q.Due()
			if !waiting {
				return log
			}
			if !due.After(now) {
				t.Fatalf("the head is due at %v but Next at %v gives nothing", due, now)
			}
			now = due
			continue
		}
		log = append(log, attempt{now, req.Op})
		srv, err := write(req)
		q.Done(srv, err, now)
	}
	t.Fatalf("the queue did not empty within %d steps: a retry loop does not end (%d queued, stats %+v)", maxSteps, q.Len(), q.Stats())
	return nil
}

func newQueue(t *testing.T, r events.Rand) *events.SinkQueue {
	t.Helper()
	o := events.DefaultSinkQueueOptions()
	o.Rand = r
	q, err := events.NewSinkQueue(o, mustCorrelator(t, events.DefaultCorrelatorOptions()))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestSinkQueueRetryRules checks the retry rules of spec/events.md section A.5 on the pure
// queue, time as an argument: which errors are retried, how often, and after which sleeps.
func TestSinkQueueRetryRules(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "events"}, "x")
	cases := []struct {
		name, reason string
		err          error
		attempts     int
		stat         func(events.SinkStats) uint64
	}{
		{"E17", "a request that cannot be built is not retried", fmt.Errorf("%w: %w", events.ErrNotRetryable, errors.New("bad")), 1, func(s events.SinkStats) uint64 { return s.DroppedRejected }},
		{"E19", "UnexpectedObjectError is retried, 12 attempts in all", &apierrors.UnexpectedObjectError{}, 12, func(s events.SinkStats) uint64 { return s.DroppedRetryLimit }},
		{"E20", "a transport error is retried, 12 attempts in all", errors.New("connection refused"), 12, func(s events.SinkStats) uint64 { return s.DroppedRetryLimit }},
		{"A.5/429", "a StatusError is never retried, even 429", apierrors.NewTooManyRequests("slow down", 1), 1, func(s events.SinkStats) uint64 { return s.DroppedRejected }},
		{"A.5/404-create", "a create answered 404 is a server answer, not retried", notFound, 1, func(s events.SinkStats) uint64 { return s.DroppedRejected }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t, half{})
			if err := q.Push(newEvent(podRef("foo", "bar", ""), "Warning", "Failed", "boom", t0), t0); err != nil {
				t.Fatal(err)
			}
			log := drive(t, q, t0, func(events.SinkRequest) (*v1.Event, error) { return nil, tc.err })
			st := q.Stats()
			if len(log) != tc.attempts || tc.stat(st) != 1 || st.Retries != uint64(tc.attempts-1) || q.Len() != 0 {
				t.Fatalf("%s: %d attempts, stats %+v; want %d attempts", tc.reason, len(log), st, tc.attempts)
			}
			for i := 1; i < len(log); i++ {
				want := 10 * time.Second // then exactly Sleep
				if i == 1 {
					want = 5 * time.Second // a random part of Sleep: 0.5 from the injected Rand
				}
				if d := log[i].at.Sub(log[i-1].at); d != want {
					t.Fatalf("%s: attempt %d after %v, want %v (spec/events.md section A.5)", tc.name, i+1, d, want)
				}
			}
		})
	}
}

// writtenOnce returns a queue that has written one event (Started on pod foo at t0), which
// the server stored at resourceVersion "7", and that event.
func writtenOnce(t *testing.T) (*events.SinkQueue, *v1.Event) {
	t.Helper()
	q := newQueue(t, half{})
	ev := newEvent(podRef("foo", "bar", ""), "Normal", "Started", "started", t0)
	if err := q.Push(ev, t0); err != nil {
		t.Fatal(err)
	}
	drive(t, q, t0, func(req events.SinkRequest) (*v1.Event, error) {
		srv := req.Event.DeepCopy()
		srv.ResourceVersion = "7"
		return srv, nil
	})
	return q, ev
}

// copyRequest copies req with its event, which the queue reuses for its next request.
func copyRequest(req events.SinkRequest) events.SinkRequest {
	req.Event = req.Event.DeepCopy()
	return req
}

// TestSinkQueuePatchNotFoundE22: the repeat's patch finds no event (it expired on the
// server); the same attempt becomes a create under the cached name, resourceVersion cleared.
func TestSinkQueuePatchNotFoundE22(t *testing.T) {
	q, ev := writtenOnce(t)
	repeat := newEvent(podRef("foo", "bar", ""), "Normal", "Started", "started", t0.Add(time.Hour))
	if err := q.Push(repeat, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var reqs []events.SinkRequest
	log := drive(t, q, t0.Add(time.Hour), func(req events.SinkRequest) (*v1.Event, error) {
		reqs = append(reqs, copyRequest(req))
		if req.Op == events.Patch {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "events"}, req.Event.Name)
		}
		return req.Event.DeepCopy(), nil
	})
	if len(log) != 2 || reqs[0].Op != events.Patch || reqs[1].Op != events.Create || reqs[1].Attempt != 1 ||
		reqs[1].Event.Name != ev.Name || reqs[1].Event.ResourceVersion != "" || reqs[1].Event.Count != 2 {
		t.Fatalf("E22: requests %+v", reqs)
	}
	if st := q.Stats(); st.Created != 2 || st.Patched != 0 || st.Retries != 0 {
		t.Fatalf("E22: stats %+v, want the recreate counted as a create and no retry", st)
	}
}

// TestSinkQueuePatchRetry: a repeat whose patch is lost to a transport error is patched again
// after the retry sleep, the same event with its cached name and resourceVersion; only a 404
// turns a patch into a create with the resourceVersion cleared (spec/events.md section A.5).
func TestSinkQueuePatchRetry(t *testing.T) {
	q, ev := writtenOnce(t)
	at := t0.Add(time.Minute)
	if err := q.Push(newEvent(podRef("foo", "bar", ""), "Normal", "Started", "started", at), at); err != nil {
		t.Fatal(err)
	}
	var reqs []events.SinkRequest
	drive(t, q, at, func(req events.SinkRequest) (*v1.Event, error) {
		reqs = append(reqs, copyRequest(req))
		if len(reqs) == 1 {
			return nil, errors.New("connection reset by peer")
		}
		return req.Event.DeepCopy(), nil
	})
	if len(reqs) != 2 {
		t.Fatalf("A.5: %d requests, want the patch and its retry", len(reqs))
	}
	for i, r := range reqs {
		if r.Op != events.Patch || r.Attempt != i+1 || r.Event.Name != ev.Name || r.Event.ResourceVersion != "7" || r.Event.Count != 2 || r.Patch == nil {
			t.Errorf("A.5: attempt %d is %v of %q rv %q count %d; want a patch of %q rv \"7\" count 2",
				i+1, r.Op, r.Event.Name, r.Event.ResourceVersion, r.Event.Count, ev.Name)
		}
	}
	if st := q.Stats(); st.Patched != 1 || st.Created != 1 || st.Retries != 1 {
		t.Fatalf("A.5: stats %+v, want the first create, one patch after one retry", st)
	}
}

// TestSinkQueuePushNil: a nil event is refused with an *InvalidEventError and, as every event
// given to the queue, accounted for: counted as rejected, nothing queued (SinkQueue's
// contract: every event pushed is written or counted as dropped).
func TestSinkQueuePushNil(t *testing.T) {
	q := newQueue(t, half{})
	var inv *events.InvalidEventError
	if err := q.Push(nil, t0); !errors.As(err, &inv) || !errors.Is(err, events.ErrInvalidInput) {
		t.Fatalf("Push(nil): %v, want an *InvalidEventError matching ErrInvalidInput", err)
	}
	if st := q.Stats(); st.DroppedRejected != 1 || st.Queued != 0 {
		t.Fatalf("Push(nil): stats %+v, want it counted in DroppedRejected and nothing queued", st)
	}
	if _, ok := q.Next(t0); ok {
		t.Fatal("Push(nil): nothing to write")
	}
}

// TestSinkQueueDoneWithoutRequest: Done without a request outstanding does nothing, whether
// the queue is empty or its head has not been asked for yet (SinkQueue.Done's contract).
func TestSinkQueueDoneWithoutRequest(t *testing.T) {
	q := newQueue(t, half{})
	q.Done(nil, nil, t0) // empty queue
	if err := q.Push(newEvent(podRef("foo", "bar", ""), "Normal", "Started", "started", t0), t0); err != nil {
		t.Fatal(err)
	}
	q.Done(nil, nil, t0) // the head was never asked for
	if st := q.Stats(); st.Created != 0 || st.Queued != 1 {
		t.Fatalf("Done without a request: stats %+v, want nothing written and the event still queued", st)
	}
	if req, ok := q.Next(t0); !ok || req.Op != events.Create || req.Attempt != 1 {
		t.Fatalf("the event still waits for its first attempt: got %+v %v", req, ok)
	}
}

// fullQueueOf2 returns a queue of QueueSize 2 holding the events of pods 0 and 1, and push,
// which queues the event of pod i.
func fullQueueOf2(t *testing.T) (*events.SinkQueue, func(i int) error) {
	t.Helper()
	o := events.DefaultSinkQueueOptions()
	o.QueueSize = 2
	q, err := events.NewSinkQueue(o, mustCorrelator(t, events.DefaultCorrelatorOptions()))
	if err != nil {
		t.Fatal(err)
	}
	push := func(i int) error {
		return q.Push(newEvent(podRef(fmt.Sprint("pod-", i), fmt.Sprint(i), ""), "Normal", "Started", "s", t0), t0)
	}
	for i := range 2 {
		if err := push(i); err != nil {
			t.Fatal(err)
		}
	}
	return q, push
}

// TestSinkQueueFull: QueueSize bounds the events not yet taken up; the head being written
// does not count, as client-go's worker holds the event it received (spec/events.md section
// A.6).
func TestSinkQueueFull(t *testing.T) {
	q, push := fullQueueOf2(t)
	if err := push(2); !errors.Is(err, events.ErrQueueFull) {
		t.Fatalf("a third event in a queue of 2: %v, want ErrQueueFull", err)
	}
	if _, ok := q.Next(t0); !ok {
		t.Fatal("the head is due")
	}
	if err := push(3); err != nil {
		t.Fatalf("with the head taken up one slot is free: %v", err)
	}
	if st := q.Stats(); st.DroppedQueueFull != 1 || st.Queued != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSinkQueueSpamSkip: an event the spam filter skips is not written, and Next goes on to
// the event behind it in the same call (spec/events.md section A.5: "If Skip, return"; A.4
// step 4). Each skipped event is counted once in DroppedSpam (SinkQueue's contract: every
// event pushed is written or counted as dropped).
func TestSinkQueueSpamSkip(t *testing.T) {
	co := events.DefaultCorrelatorOptions()
	co.SpamFilter.Burst = 1
	q, err := events.NewSinkQueue(events.DefaultSinkQueueOptions(), mustCorrelator(t, co))
	if err != nil {
		t.Fatal(err)
	}
	// Burst 1 with the default spam key (source, object, type): the first event takes the
	// token, the next two on the same object are skipped, the one on another object is not.
	for _, ev := range []*v1.Event{
		newEvent(podRef("foo", "bar", ""), "Normal", "Pulled", "pulled", t0),
		newEvent(podRef("foo", "bar", ""), "Normal", "Created", "created", t0),
		newEvent(podRef("foo", "bar", ""), "Normal", "Started", "started", t0),
		newEvent(podRef("baz", "qux", ""), "Normal", "Started", "started", t0),
	} {
		if err := q.Push(ev, t0); err != nil {
			t.Fatal(err)
		}
	}
	var written []string
	drive(t, q, t0, func(req events.SinkRequest) (*v1.Event, error) {
		written = append(written, req.Event.InvolvedObject.Name+"/"+req.Event.Reason)
		return req.Event.DeepCopy(), nil
	})
	if want := []string{"foo/Pulled", "baz/Started"}; fmt.Sprint(written) != fmt.Sprint(want) {
		t.Fatalf("written %v, want %v: the spam filter skips the second and third event on foo", written, want)
	}
	if st := q.Stats(); st.DroppedSpam != 2 || st.Created != 2 || st.Queued != 0 {
		t.Fatalf("stats %+v, want DroppedSpam 2, Created 2 and nothing queued", st)
	}
}

// TestSinkQueueFullAfterWrites: an event written and done no longer counts against QueueSize,
// and counts only once: after two writes a queue of 2 takes two events and refuses the third
// (spec/events.md section A.6; SinkQueue's contract that QueueSize bounds the events waiting).
func TestSinkQueueFullAfterWrites(t *testing.T) {
	q, push := fullQueueOf2(t)
	drive(t, q, t0, func(req events.SinkRequest) (*v1.Event, error) { return req.Event.DeepCopy(), nil })
	for i := 2; i < 4; i++ {
		if err := push(i); err != nil {
			t.Fatalf("event %d into an emptied queue of 2: %v", i, err)
		}
	}
	if err := push(4); !errors.Is(err, events.ErrQueueFull) {
		t.Fatalf("a third waiting event in a queue of 2 after two writes: %v, want ErrQueueFull", err)
	}
}

// TestSinkQueueModel is a model test of SinkQueue: random pushes, requests with random
// outcomes, time moving and abandons, against a model of the queue (its order, each event's
// attempts and due time) and client-go's rules (spec/events.md section A.5). Every event
// pushed ends written, dropped with a reason, or still queued.
func TestSinkQueueModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		o := events.DefaultSinkQueueOptions()
		o.QueueSize = rapid.IntRange(1, 4).Draw(rt, "queueSize")
		o.MaxTries = rapid.IntRange(1, 4).Draw(rt, "maxTries")
		o.Rand = half{}
		co := events.DefaultCorrelatorOptions()
		co.SpamFilter.Burst = 3
		q, err := events.NewSinkQueue(o, mustCorrelator(rt, co))
		if err != nil {
			rt.Fatal(err)
		}
		type item struct {
			tries int
			due   time.Time
			taken bool // correlated: no longer counts against QueueSize
		}
		var model []item // the queued events, in order
		now := t0
		pushed, written, dropped := 0, 0, 0
		outcomes := []error{nil, errors.New("connection refused"), apierrors.NewInternalError(errors.New("x")), &apierrors.UnexpectedObjectError{}}
		rt.Repeat(map[string]func(*rapid.T){
			"push": func(rt *rapid.T) {
				obj := rapid.IntRange(0, 2).Draw(rt, "obj")
				ev := newEvent(podRef(fmt.Sprint("pod-", obj), fmt.Sprint(obj), ""), "Warning", "BackOff", "back-off", now)
				err := q.Push(ev, now)
				pushed++
				waiting := len(model)
				if waiting > 0 && model[0].taken {
					waiting--
				}
				if full := waiting >= o.QueueSize; full != errors.Is(err, events.ErrQueueFull) {
					rt.Fatalf("push with %d waiting in a queue of %d: %v", waiting, o.QueueSize, err)
				}
				if errors.Is(err, events.ErrQueueFull) {
					dropped++
					return
				}
				if err != nil {
					rt.Fatal(err)
				}
				model = append(model, item{})
			},
			"write": func(rt *rapid.T) {
				before := q.Stats()
				req, ok := q.Next(now)
				afterNext := q.Stats()
				spam := int(afterNext.DroppedSpam - before.DroppedSpam)
				model = model[spam:]
				dropped += spam
				if !ok {
					if len(model) > 0 && !now.Before(model[0].due) {
						rt.Fatalf("the head is due at %v but Next at %v gives nothing", model[0].due, now)
					}
					return
				}
				if len(model) == 0 || now.Before(model[0].due) {
					rt.Fatalf("a request at %v for a head due at %v", now, model[0].due)
				}
				model[0].taken = true
				if req.Attempt != model[0].tries+1 || req.Attempt > o.MaxTries {
					rt.Fatalf("attempt %d, model says %d of at most %d", req.Attempt, model[0].tries+1, o.MaxTries)
				}
				err := rapid.SampledFrom(outcomes).Draw(rt, "outcome")
				q.Done(req.Event.DeepCopy(), err, now)
				switch {
				case err == nil:
					written++
					model = model[1:]
				case !events.Retryable(err) || model[0].tries+1 >= o.MaxTries:
					dropped++
					model = model[1:]
				default:
					model[0].tries++
					sleep := 10 * time.Second
					if model[0].tries == 1 {
						sleep = 5 * time.Second
					}
					model[0].due = now.Add(sleep)
				}
			},
			"advance": func(rt *rapid.T) {
				now = now.Add(time.Duration(rapid.IntRange(0, 15).Draw(rt, "seconds")) * time.Second)
			},
			"abandon": func(rt *rapid.T) {
				q.Abandon()
				if len(model) > 0 {
					model = model[1:]
					dropped++
				}
			},
			"": func(rt *rapid.T) {
				st := q.Stats()
				if q.Len() != len(model) || st.Queued != len(model) {
					rt.Fatalf("queue holds %d, model %d", q.Len(), len(model))
				}
				if int(st.Created+st.Patched) != written {
					rt.Fatalf("stats %+v, model wrote %d", st, written)
				}
				lost := st.DroppedQueueFull + st.DroppedSpam + st.DroppedRejected + st.DroppedRetryLimit + st.DroppedShutdown
				if int(lost) != dropped || pushed != written+dropped+len(model) {
					rt.Fatalf("stats %+v: %d pushed, %d written, %d dropped, %d queued", st, pushed, written, dropped, len(model))
				}
				if due, ok := q.Due(); ok && len(model) > 0 && !due.Equal(model[0].due) {
					rt.Fatalf("head due %v, model %v", due, model[0].due)
				}
			},
		})
	})
}

// TestBroadcasterRetryBounded drives a Broadcaster whose sink is always down on a virtual
// clock with Flush and NextRetry: the retry loop ends after 12 attempts (spec/events.md
// section A.5), and the test fails rather than hangs when it does not.
func TestBroadcasterRetryBounded(t *testing.T) {
	h := newFlushHarness(t)
	h.sink.SetFault(func(eventstest.Op, string, string, int) error { return errors.New("connection refused") })
	if err := h.rec.Record(testPod("foo", "bar"), nil, v1.EventTypeWarning, "Failed", "boom"); err != nil {
		t.Fatal(err)
	}
	steps := 0
	for {
		if err := h.b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		next, waiting := h.b.NextRetry()
		if !waiting {
			break
		}
		if steps++; steps > maxSteps {
			t.Fatalf("still retrying after %d clock moves: a retry loop does not end", maxSteps)
		}
		h.clock.SetTime(next)
	}
	st := h.b.Stats().Sinks[0]
	if st.DroppedRetryLimit != 1 || st.Retries != 11 || h.sink.Calls(eventstest.OpCreate) != 12 || st.Queued != 0 {
		t.Fatalf("stats %+v after %d creates; want 12 attempts, then a drop", st, h.sink.Calls(eventstest.OpCreate))
	}
	if err := shutdownWithin(t, h.b, context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSeriesBroadcasterRetryBounded is the same for the events.k8s.io/v1 runner, driven by
// Flush without Start: 12 attempts 10 to 12.5 s apart (spec/events.md section B.3), bounded.
func TestSeriesBroadcasterRetryBounded(t *testing.T) {
	fc := testingclock.NewFakeClock(t0)
	sink := eventstest.NewSeriesSink(fc, 0)
	var attempts []time.Time
	sink.SetFault(func(eventstest.Op, string, string, int) error {
		attempts = append(attempts, fc.Now())
		return errors.New("connection refused")
	})
	b, rec := newFlushedSeries(t, fc, sink, nil)
	rec.Eventf(testPod("foo", "bar"), nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	for steps := 0; b.Stats().Processed == 0 || b.Stats().Queued > 0; steps++ {
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		next, ok := b.NextRetry()
		if !ok {
			t.Fatal("the refresh and finish loops always have a next time")
		}
		if steps > maxSteps {
			t.Fatalf("still retrying after %d clock moves: a retry loop does not end", maxSteps)
		}
		fc.SetTime(next)
	}
	if st := b.Stats(); st.DroppedRetryLimit != 1 || st.Retries != 11 || len(attempts) != 12 {
		t.Fatalf("stats %+v after %d attempts; want 12 attempts, then a drop", st, len(attempts))
	}
	for i := 1; i < len(attempts); i++ {
		if d := attempts[i].Sub(attempts[i-1]); d < 10*time.Second || d > 12500*time.Millisecond {
			t.Fatalf("attempt %d after %v, want 10 to 12.5 s", i+1, d)
		}
	}
	if err := shutdownWithin(t, b, context.Background()); err != nil {
		t.Fatal(err)
	}
}

// flushHarness is a broadcaster on a fake clock whose sink has no goroutine (AddSink).
type flushHarness struct {
	clock *testingclock.FakeClock
	b     *events.Broadcaster
	sink  *eventstest.Sink
	rec   *events.Recorder
}

func newFlushHarness(t *testing.T) *flushHarness {
	t.Helper()
	fc := testingclock.NewFakeClock(t0)
	opts := events.DefaultBroadcasterOptions()
	opts.Clock, opts.Queue.Rand = fc, half{}
	b, err := events.NewBroadcaster(opts)
	if err != nil {
		t.Fatal(err)
	}
	sink := eventstest.NewSink(fc, 0)
	if err := b.AddSink(sink, events.DefaultCorrelatorOptions()); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &flushHarness{clock: fc, b: b, sink: sink, rec: rec}
}
