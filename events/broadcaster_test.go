package events_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	mathrand "math/rand/v2"
	"regexp"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

func testPod(name, uid string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "baz", UID: k8sUID(uid)}}
}

type harness struct {
	t     *testing.T
	clock *testingclock.FakeClock
	b     *events.Broadcaster
	sink  *eventstest.Sink
	rec   *events.Recorder
}

// half is a Rand that always says 0.5.
type half struct{}

func (half) Float64() float64 { return 0.5 }

func newHarness(t *testing.T, change ...func(*events.BroadcasterOptions)) *harness {
	t.Helper()
	fc := testingclock.NewFakeClock(t0)
	opts := events.DefaultBroadcasterOptions()
	opts.Clock, opts.Queue.Rand = fc, half{}
	for _, f := range change {
		f(&opts)
	}
	b, err := events.NewBroadcaster(opts)
	if err != nil {
		t.Fatal(err)
	}
	sink := eventstest.NewSink(fc, 0)
	if err := b.StartRecordingToSink(sink, events.DefaultCorrelatorOptions()); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: fc, b: b, sink: sink, rec: rec}
	t.Cleanup(func() {
		if !t.Failed() { // after a failure, a Shutdown that did not end is reported already
			_ = shutdownWithin(t, b, context.Background())
		}
	})
	return h
}

func (h *harness) shutdown() {
	h.t.Helper()
	if err := shutdownWithin(h.t, h.b, context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// stepWhenWaiting advances the fake clock by d once a retry sleep is waiting on it.
func (h *harness) stepWhenWaiting(d time.Duration) {
	h.t.Helper()
	spinUntil(h.t, "a retry sleep on the fake clock", h.clock.HasWaiters)
	h.clock.Step(d)
}

// TestRecorderE14 is case E14 end to end: recorder, broadcaster, correlator, in-memory sink.
func TestRecorderE14(t *testing.T) {
	h := newHarness(t)
	refA := &v1.ObjectReference{Kind: "Pod", Namespace: "baz", Name: "foo", UID: "bar", APIVersion: "v1", FieldPath: "spec.containers[2]"}
	pod := testPod("foo", "bar")
	refA2 := &v1.ObjectReference{Kind: "Pod", Namespace: "baz", Name: "foo", UID: "differentUid", APIVersion: "v1", FieldPath: "spec.containers[3]"}
	calls := []struct {
		obj    runtimeObject
		reason string
	}{{refA, "Started"}, {pod, "Killed"}, {refA, "Started"}, {refA2, "Started"}, {refA, "Started"}, {refA2, "Stopped"}, {refA2, "Stopped"}}
	for _, c := range calls {
		h.rec.Eventf(c.obj, v1.EventTypeNormal, c.reason, "some verbose message: %v", 1)
		h.clock.Step(time.Second)
	}
	h.shutdown()
	if c, p := h.sink.Calls(eventstest.OpCreate), h.sink.Calls(eventstest.OpPatch); c != 4 || p != 3 {
		t.Fatalf("E14: %d creates and %d patches, want 4 and 3", c, p)
	}
	got := map[string]int32{}
	for _, ev := range h.sink.Events() {
		got[string(ev.InvolvedObject.UID)+"/"+ev.Reason] = ev.Count
	}
	want := map[string]int32{"bar/Started": 3, "bar/Killed": 1, "differentUid/Started": 1, "differentUid/Stopped": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("E14: stored counts %v, want %v", got, want)
	}
}

// TestBroadcasterSecondSinkE16: a second sink has its own correlator; counts restart at 1.
func TestBroadcasterSecondSinkE16(t *testing.T) {
	h := newHarness(t)
	pod := testPod("foo", "bar")
	h.rec.Event(pod, v1.EventTypeNormal, "Started", "started")
	h.clock.Step(time.Second)
	h.rec.Event(pod, v1.EventTypeNormal, "Started", "started")
	h.clock.Step(time.Second)
	second := eventstest.NewSink(h.clock, 0)
	if err := h.b.StartRecordingToSink(second, events.DefaultCorrelatorOptions()); err != nil {
		t.Fatal(err)
	}
	h.rec.Event(pod, v1.EventTypeNormal, "Started", "started")
	h.shutdown()
	if evs := h.sink.Events(); len(evs) != 1 || evs[0].Count != 3 {
		t.Fatalf("first sink: %+v, want one event with count 3", evs)
	}
	if evs := second.Events(); len(evs) != 1 || evs[0].Count != 1 || second.Calls(eventstest.OpPatch) != 0 {
		t.Fatalf("E16: second sink %+v, want one created event with count 1", evs)
	}
}

func TestBroadcasterRetries(t *testing.T) {
	cases := []struct {
		name, reason string
		err          error
		tries        int
		stat         func(events.SinkStats) uint64
	}{
		{"E17", "a request that cannot be built is not retried", fmt.Errorf("%w: %w", events.ErrNotRetryable, errors.New("bad request construction")), 1, func(s events.SinkStats) uint64 { return s.DroppedRejected }},
		{"E19", "UnexpectedObjectError is retried up to 12 attempts", &apierrors.UnexpectedObjectError{}, 12, func(s events.SinkStats) uint64 { return s.DroppedRetryLimit }},
		{"E20", "a transport error is retried up to 12 attempts", errors.New("connection refused"), 12, func(s events.SinkStats) uint64 { return s.DroppedRetryLimit }},
		{"A.5/status-429", "a StatusError is never retried, even 429", apierrors.NewTooManyRequests("slow down", 1), 1, func(s events.SinkStats) uint64 { return s.DroppedRejected }},
		{"A.5/status-503", "a StatusError is never retried, even 503", apierrors.NewServiceUnavailable("down"), 1, func(s events.SinkStats) uint64 { return s.DroppedRejected }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.sink.SetFault(func(op eventstest.Op, ns, name string, n int) error { return tc.err })
			h.rec.Event(testPod("foo", "bar"), v1.EventTypeWarning, "Failed", "boom")
			for i := 1; i < tc.tries; i++ {
				// first sleep random in [0, 10 s): 5 s with the injected 0.5; then exactly 10 s
				d := 10 * time.Second
				if i == 1 {
					d = 5 * time.Second
				}
				h.stepWhenWaiting(d - time.Nanosecond)
				if got := h.sink.Calls(eventstest.OpCreate); got != i {
					t.Fatalf("retry %d fired early: %d attempts", i, got)
				}
				h.clock.Step(time.Nanosecond)
				spinUntil(t, fmt.Sprintf("attempt %d", i+1), func() bool { return h.sink.Calls(eventstest.OpCreate) >= i+1 })
			}
			h.shutdown()
			st := h.b.Stats().Sinks[0]
			if got := h.sink.Calls(eventstest.OpCreate); got != tc.tries || tc.stat(st) != 1 || st.Retries != uint64(tc.tries-1) {
				t.Fatalf("%s: %d attempts, stats %+v; want %d attempts", tc.reason, got, st, tc.tries)
			}
		})
	}
}

// TestBroadcasterPatchNotFoundE22: the event expired on the server (TTL), so the patch of the
// repeat gets 404 and the event is created again under its cached name with resourceVersion
// cleared and its count.
func TestBroadcasterPatchNotFoundE22(t *testing.T) {
	h := newHarness(t)
	pod := testPod("foo", "bar")
	h.rec.Event(pod, v1.EventTypeNormal, "Started", "started")
	spinUntil(t, "the first event stored", func() bool { return len(h.sink.Events()) > 0 })
	first := h.sink.Events()[0]
	h.clock.Step(eventstest.DefaultTTL + time.Second)
	if n := len(h.sink.Events()); n != 0 {
		t.Fatalf("event did not expire: %d left", n)
	}
	h.rec.Event(pod, v1.EventTypeNormal, "Started", "started")
	h.shutdown()
	evs := h.sink.Events()
	if len(evs) != 1 || evs[0].Name != first.Name || evs[0].Count != 2 || h.sink.Calls(eventstest.OpPatch) != 1 || h.sink.Calls(eventstest.OpCreate) != 2 {
		t.Fatalf("E22: events %+v, %d patches, %d creates", evs, h.sink.Calls(eventstest.OpPatch), h.sink.Calls(eventstest.OpCreate))
	}
}

// TestBroadcasterCancelledE23: once Shutdown's context has ended, a retryable failure is not
// retried: exactly one attempt.
func TestBroadcasterCancelledE23(t *testing.T) {
	h := newHarness(t)
	h.sink.SetFault(func(eventstest.Op, string, string, int) error { return &apierrors.UnexpectedObjectError{} })
	h.rec.Event(testPod("foo", "bar"), v1.EventTypeWarning, "Failed", "boom")
	// the first attempt has failed and its retry is waiting when Shutdown comes
	h.stepWhenWaiting(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := shutdownWithin(t, h.b, ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if got := h.sink.Calls(eventstest.OpCreate); got != 1 {
		t.Fatalf("E23: %d attempts, want 1", got)
	}
	if st := h.b.Stats().Sinks[0]; st.DroppedShutdown != 1 {
		t.Fatalf("E23: stats %+v, want one event dropped at shutdown", st)
	}
}

// TestBroadcasterConcurrentShutdownE25: 100 concurrent Eventf calls racing Shutdown: no panic,
// no race, every event accounted for.
func TestBroadcasterConcurrentShutdownE25(t *testing.T) {
	h := newHarness(t)
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.rec.Eventf(testPod(fmt.Sprint("pod-", i), fmt.Sprint(i)), v1.EventTypeNormal, "Started", "started %d", i)
		}()
	}
	h.shutdown()
	wg.Wait()
	st := h.b.Stats()
	if st.Submitted+st.DroppedAfterShutdown != 100 {
		t.Fatalf("E25: %+v does not account for 100 events", st)
	}
	if int(st.Sinks[0].Created) != len(h.sink.Events()) || st.Sinks[0].Created != st.Submitted {
		t.Fatalf("E25: %d created, %d stored, %d submitted", st.Sinks[0].Created, len(h.sink.Events()), st.Submitted)
	}
}

// TestBroadcasterShutdownDeadlineE26: a sink that is down keeps an event retrying; Shutdown
// with a deadline returns the context's error, counts the drop and leaves no goroutine.
func TestBroadcasterShutdownDeadlineE26(t *testing.T) {
	h := newHarness(t)
	h.sink.SetFault(func(eventstest.Op, string, string, int) error { return errors.New("connection refused") })
	for i := range 5 {
		h.rec.Eventf(testPod("foo", "bar"), v1.EventTypeWarning, "Failed", "boom %d", i)
	}
	spinUntil(t, "the first retry sleep", h.clock.HasWaiters)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		h.stepWhenWaiting(time.Second) // not enough for the 5 s first sleep
		cancel()
	}()
	if err := shutdownWithin(t, h.b, ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("E26: Shutdown returned %v, want context.Canceled", err)
	}
	st := h.b.Stats().Sinks[0]
	if st.DroppedShutdown != 5 || st.Created != 0 {
		t.Fatalf("E26: stats %+v, want 5 dropped at shutdown", st)
	}
	goleak.VerifyNone(t, goleak.IgnoreCurrent())
}

// TestBroadcasterQueueFull: a blocked sink fills its queue; further events are dropped for it
// at once and counted, and recording never waits.
func TestBroadcasterQueueFull(t *testing.T) {
	h := newHarness(t, func(o *events.BroadcasterOptions) { o.Queue.QueueSize = 2 })
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	h.sink.SetFault(func(eventstest.Op, string, string, int) error {
		once.Do(func() { close(entered); <-release })
		return nil
	})
	h.rec.Event(testPod("pod-0", "0"), v1.EventTypeNormal, "Started", "started")
	receive(t, entered, "the sink goroutine to take up the first event")
	var full int
	for i := 1; i < 10; i++ {
		if err := h.rec.Record(testPod(fmt.Sprint("pod-", i), fmt.Sprint(i)), nil, v1.EventTypeNormal, "Started", "started"); errors.Is(err, events.ErrQueueFull) {
			full++
		}
	}
	close(release)
	h.shutdown()
	st := h.b.Stats().Sinks[0]
	if full != 7 || st.DroppedQueueFull != 7 || st.Created != 3 {
		t.Fatalf("queue of 2: %d refused, stats %+v; want 7 dropped and 3 created", full, st)
	}
}

func TestRecorderInvalid(t *testing.T) {
	h := newHarness(t)
	err := h.rec.Record(testPod("foo", "bar"), nil, "Critical", "R", "m")
	var inv *events.InvalidEventError
	if !errors.As(err, &inv) || inv.Field != "type" || inv.Value != "Critical" {
		t.Fatalf("A.2 step 3: got %v, want an invalid type error", err)
	}
	if err := h.rec.Record(nil, nil, "Normal", "R", "m"); !errors.As(err, &inv) || inv.Field != "object" {
		t.Fatalf("A.2 step 2: got %v, want an invalid object error", err)
	}
	h.shutdown()
	if err := h.rec.Record(testPod("foo", "bar"), nil, "Normal", "R", "m"); !errors.Is(err, events.ErrShutdown) {
		t.Fatalf("A.6: got %v after shutdown, want ErrShutdown", err)
	}
	if st := h.b.Stats(); st.DroppedInvalid != 2 || st.DroppedAfterShutdown != 1 {
		t.Fatalf("stats %+v, want 2 invalid and 1 after shutdown", st)
	}
}

// TestRecorderMakeEvent checks the fields of spec A.2.
func TestRecorderMakeEvent(t *testing.T) {
	h := newHarness(t)
	pod := testPod("foo", "bar")
	pod.ResourceVersion = "7"
	ev, err := h.rec.MakeEvent(pod, map[string]string{"k": "v"}, v1.EventTypeWarning, "BackOff", "back-off")
	if err != nil {
		t.Fatal(err)
	}
	ts := metav1.NewTime(t0)
	want := &v1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("foo.%x", t0.UnixNano()), Namespace: "baz", Annotations: map[string]string{"k": "v"}},
		InvolvedObject:      v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Name: "foo", Namespace: "baz", UID: "bar", ResourceVersion: "7"},
		Reason:              "BackOff",
		Message:             "back-off",
		Source:              v1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               1,
		Type:                v1.EventTypeWarning,
		ReportingController: "kubelet",
		ReportingInstance:   "node-1",
	}
	if diff := cmpDiff(want, ev); diff != "" {
		t.Fatalf("A.2 makeEvent mismatch (-want +got):\n%s", diff)
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	ev, err = h.rec.MakeEvent(node, nil, v1.EventTypeNormal, "NodeReady", "ready")
	if err != nil || ev.Namespace != "default" {
		t.Fatalf("A.2: a cluster-scoped object's event goes to namespace default, got %q (%v)", ev.Namespace, err)
	}
	// Once the clock has moved on, the name follows the clock again: the bump of one
	// nanosecond is only for events at the instant of the previous name.
	h.clock.Step(time.Second)
	ev, err = h.rec.MakeEvent(pod, nil, v1.EventTypeNormal, "Started", "started")
	if want := fmt.Sprintf("foo.%x", t0.Add(time.Second).UnixNano()); err != nil || ev.Name != want {
		t.Fatalf("A.2: after the clock moved the name is %q (%v), want %q, the clock's nanoseconds", ev.Name, err, want)
	}
}

func TestEventNameE28E29(t *testing.T) {
	if got := events.EventName("test-pod", 105999103295324396, nil); got != "test-pod.178959f726d80ec" {
		t.Fatalf("E28: got %q", got)
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	for _, name := range []string{string(long), "Test-Pod", "pod/!?", "--pod"} {
		got := events.EventName(name, 1, zeroRand{})
		if got != "00000000-0000-4000-8000-000000000000" {
			t.Errorf("E29 %.20q: got %q, want the UUID from the injected source", name, got)
		}
	}
}

// TestEventNameUUID: the UUID that replaces an invalid event name is a version 4 UUID in
// canonical form (RFC 9562: 8-4-4-4-12 lower-case hex, version nibble 4, variant bits 10) whose
// 122 other bits all come from the injected source (kubernetes#127594; EventName's contract).
func TestEventNameUUID(t *testing.T) {
	canonical := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	// A source at the top of its range sets every random bit.
	if got := events.EventName("Invalid", 1, almostOne{}); got != "ffffffff-ffff-4fff-bfff-ffffffffffff" {
		t.Errorf("a source always just below 1: got %q, want every random bit set", got)
	}
	// From a uniform source, every random hex digit varies and no two UUIDs repeat.
	src := mathrand.New(mathrand.NewPCG(1, 2))
	seen := map[string]bool{}
	digits := make([]map[byte]bool, 36)
	for i := range digits {
		digits[i] = map[byte]bool{}
	}
	for range 200 {
		u := events.EventName("Invalid", 1, src)
		if !canonical.MatchString(u) {
			t.Fatalf("%q is not a canonical version 4 UUID", u)
		}
		if seen[u] {
			t.Fatalf("%q drawn twice", u)
		}
		seen[u] = true
		for i := range len(u) {
			digits[i][u[i]] = true
		}
	}
	for i, d := range digits {
		fixed := i == 8 || i == 13 || i == 14 || i == 18 || i == 23 // dashes and the version digit
		if !fixed && len(d) < 4 {
			t.Errorf("hex digit %d took only %d values over 200 UUIDs: its bits do not come from the source", i, len(d))
		}
	}
}

// almostOne is a Rand that always says the largest float64 below 1.
type almostOne struct{}

func (almostOne) Float64() float64 { return math.Nextafter(1, 0) }

// zeroRand is a Rand that always says 0.
type zeroRand struct{}

func (zeroRand) Float64() float64 { return 0 }
