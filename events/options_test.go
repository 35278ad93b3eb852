package events_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

func TestBroadcasterOptions(t *testing.T) {
	cases := []struct {
		field  string
		change func(*events.SinkQueueOptions)
	}{
		{"Queue.QueueSize", func(o *events.SinkQueueOptions) { o.QueueSize = 0 }},
		{"Queue.MaxTries", func(o *events.SinkQueueOptions) { o.MaxTries = 0 }},
		{"Queue.Sleep", func(o *events.SinkQueueOptions) { o.Sleep = -time.Second }},
	}
	for _, c := range cases {
		bo := events.DefaultBroadcasterOptions()
		c.change(&bo.Queue)
		so := events.DefaultSeriesBroadcasterOptions()
		c.change(&so.Queue)
		_, err := events.NewBroadcaster(bo)
		_, serr := events.NewSeriesBroadcaster(so, eventstest.NewSeriesSink(nil, 0))
		for _, err := range []error{err, serr} {
			var oe *events.OptionError
			if !errors.As(err, &oe) || oe.Field != c.field || !errors.Is(err, events.ErrInvalidOptions) || !strings.HasPrefix(err.Error(), "events: invalid options: "+c.field) || strings.Count(err.Error(), "events:") != 1 {
				t.Errorf("%s: got %v", c.field, err)
			}
		}
		if _, err := events.NewSinkQueue(bo.Queue, mustCorrelator(t, events.DefaultCorrelatorOptions())); !errors.Is(err, events.ErrInvalidOptions) {
			t.Errorf("%s: NewSinkQueue got %v", c.field, err)
		}
	}
	bo := events.DefaultBroadcasterOptions()
	bo.Queue.MaxTries, bo.Queue.Sleep, bo.Logger = 2, time.Second, logr.Discard()
	b, err := events.NewBroadcaster(bo)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.StartRecordingToSink(nil, events.DefaultCorrelatorOptions()); err == nil {
		t.Error("a nil sink must be refused")
	}
	if err := b.StartRecordingToSink(eventstest.NewSink(nil, 0), events.CorrelatorOptions{}); err == nil {
		t.Error("zero correlator options must be refused")
	}
	if err := shutdownWithin(t, b, context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.StartRecordingToSink(eventstest.NewSink(nil, 0), events.DefaultCorrelatorOptions()); !errors.Is(err, events.ErrShutdown) {
		t.Errorf("after shutdown: %v, want ErrShutdown", err)
	}
	if _, err := events.NewSeriesBroadcaster(events.DefaultSeriesBroadcasterOptions(), nil); !errors.Is(err, events.ErrInvalidOptions) {
		t.Error("a nil series sink must be refused")
	}
	c := mustCorrelator(t, events.DefaultCorrelatorOptions())
	if c.Options() != events.DefaultCorrelatorOptions() {
		t.Error("Options must return what the correlator was built with")
	}
}

// TestOptions: DefaultOptions holds every type's defaults and validates; a bad field is named
// with its type's field, and the message names the package once.
func TestOptions(t *testing.T) {
	o := events.DefaultOptions()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.Correlator != events.DefaultCorrelatorOptions() || o.Broadcaster.Queue != events.DefaultSinkQueueOptions() || o.SeriesBroadcaster.Queue.Sleep != events.DefaultSleep {
		t.Fatalf("defaults %+v", o)
	}
	o.Broadcaster.Queue.QueueSize = 0
	err := o.Validate()
	var oe *events.OptionError
	if !errors.As(err, &oe) || oe.Field != "Broadcaster.Queue.QueueSize" || !errors.Is(err, events.ErrInvalidOptions) || strings.Count(err.Error(), "events:") != 1 {
		t.Fatalf("got %v", err)
	}
	if err := (events.Options{}).Validate(); !errors.As(err, &oe) || oe.Field != "Correlator.CacheSize" {
		t.Fatalf("zero options: %v", err)
	}
}

func TestDecisionString(t *testing.T) {
	for d, want := range map[events.Decision]string{events.Create: "create", events.Patch: "patch", events.Skip: "skip", 0: "Decision(0)"} {
		if d.String() != want {
			t.Errorf("%d: %q, want %q", d, d.String(), want)
		}
	}
}

func TestInvalidEventErrorMessage(t *testing.T) {
	err := events.ValidateSeriesEvent("Normal", strings.Repeat("r", 200), "A", "")
	if got := err.Error(); !strings.HasPrefix(got, `events: invalid reason "rrrr`) || !strings.Contains(got, "...\": length 200 exceeds 128") {
		t.Fatalf("message %q", got)
	}
	// The value is cut at 64 bytes: one of 64 bytes is shown whole, one of 65 cut.
	for _, tc := range []struct {
		n    int
		want string
	}{
		{64, strings.Repeat("v", 64)},
		{65, strings.Repeat("v", 64) + "..."},
	} {
		e := &events.InvalidEventError{Field: "note", Value: strings.Repeat("v", tc.n), Detail: "d"}
		if got, want := e.Error(), `events: invalid note "`+tc.want+`": d`; got != want {
			t.Errorf("a value of %d bytes: message %q, want %q", tc.n, got, want)
		}
	}
}

// TestReference covers the reference rules of spec A.2 step 2.
func TestReference(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "n", UID: "u", ResourceVersion: "3"}}
	ref, err := events.Reference(scheme, pod)
	if err != nil || *ref != (v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", Namespace: "n", UID: "u", ResourceVersion: "3"}) {
		t.Fatalf("pod from the scheme: %+v, %v", ref, err)
	}
	dep := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"}, ObjectMeta: metav1.ObjectMeta{Name: "d"}}
	if ref, err := events.Reference(nil, dep); err != nil || ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" {
		t.Fatalf("type meta wins, no scheme needed: %+v, %v", ref, err)
	}
	list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}}
	if ref, err := events.Reference(scheme, list); err != nil || ref.Kind != "PodList" || ref.ResourceVersion != "9" || ref.Name != "" {
		t.Fatalf("a list gives kind and resourceVersion only: %+v, %v", ref, err)
	}
	var inv *events.InvalidEventError
	if _, err := events.Reference(nil, pod); !errors.As(err, &inv) {
		t.Fatalf("no kind and no scheme: %v", err)
	}
	if _, err := events.Reference(runtime.NewScheme(), pod); !errors.As(err, &inv) {
		t.Fatalf("kind not registered: %v", err)
	}
	var nilRef *v1.ObjectReference
	if _, err := events.Reference(scheme, nilRef); !errors.As(err, &inv) {
		t.Fatalf("nil reference: %v", err)
	}
}

// TestRecorderAnnotatedEventf: annotations reach the stored event, copied.
func TestRecorderAnnotatedEventf(t *testing.T) {
	h := newHarness(t)
	ann := map[string]string{"k": "v"}
	h.rec.AnnotatedEventf(testPod("foo", "bar"), ann, v1.EventTypeNormal, "Scaled", "scaled to %d", 3)
	ann["k"] = "changed"
	h.shutdown()
	evs := h.sink.Events()
	if len(evs) != 1 || evs[0].Annotations["k"] != "v" || evs[0].Message != "scaled to 3" {
		t.Fatalf("stored %+v", evs)
	}
}

// TestSeriesBroadcasterRetry: a transport error is retried after a 10-12.5 s jittered sleep
// (spec B.1); with the injected jitter 1 the sleep is 12.5 s.
func TestSeriesBroadcasterRetry(t *testing.T) {
	fc := testingclock.NewFakeClock(t0)
	sink := eventstest.NewSeriesSink(fc, 0)
	sink.SetFault(func(op eventstest.Op, ns, name string, n int) error {
		if n == 1 {
			return errors.New("connection refused")
		}
		return nil
	})
	// The lane already holds a timer for the refresh and finish loops, so a waiter on
	// the clock is no sign that the retry is armed: the test waits for a timer due at
	// 12.5 s. Stepping the clock between the lane's read of it and its arming would make
	// the retry late by the step.
	ac := &armingClock{FakeClock: fc}
	h := startSeriesOn(t, ac, sink, one{})
	b, rec := h.b, h.rec
	rec.Eventf(testPod("foo", "bar"), nil, v1.EventTypeNormal, "Started", "Start", "started")
	spinUntil(t, "the first attempt and its retry timer", func() bool {
		return sink.Calls(eventstest.OpCreate) >= 1 && ac.armedFor(t0.Add(12500*time.Millisecond))
	})
	fc.Step(12500*time.Millisecond - time.Nanosecond)
	if sink.Calls(eventstest.OpCreate) != 1 {
		t.Fatal("retried before 12.5 s")
	}
	fc.Step(time.Nanosecond)
	spinUntil(t, "the retry", func() bool { return sink.Calls(eventstest.OpCreate) >= 2 })
	if err := shutdownWithin(t, b, context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.Created != 1 || st.Retries != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSeriesBroadcasterRefresh: a series kept alive by occurrences every 5 min is written
// again by the 30 min refresh with its local count (spec B.4).
func TestSeriesBroadcasterRefresh(t *testing.T) {
	h := newSeriesHarness(t)
	pod := testPod("foo", "bar")
	h.rec.Eventf(pod, nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	h.rec.Eventf(pod, nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
	h.settle(t)
	for range 6 {
		h.clock.Step(5 * time.Minute)
		h.rec.Eventf(pod, nil, v1.EventTypeWarning, "BackOff", "Restart", "back-off")
		h.settle(t)
	}
	// 30 min have passed: the refresh has written the series with its count of 8.
	if err := shutdownWithin(t, h.b, context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := h.sink.Events()
	if len(evs) != 1 || evs[0].Series == nil || evs[0].Series.Count < 7 {
		t.Fatalf("B.4 refresh: stored %+v, want the series with its local count", evs)
	}
}

// one is a Rand that always says 1, the top of its range.
type one struct{}

func (one) Float64() float64 { return 1 }

// armingClock is a fake clock that remembers when each timer made on it is due.
type armingClock struct {
	*testingclock.FakeClock
	mu  sync.Mutex
	due []time.Time
}

func (c *armingClock) NewTimer(d time.Duration) clock.Timer {
	timer := c.FakeClock.NewTimer(d)
	c.mu.Lock()
	c.due = append(c.due, c.FakeClock.Now().Add(d))
	c.mu.Unlock()
	return timer
}

// armedFor reports whether a timer due at at was made.
func (c *armingClock) armedFor(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.due {
		if d.Equal(at) {
			return true
		}
	}
	return false
}
