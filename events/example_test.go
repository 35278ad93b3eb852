package events_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

// Recording through a broadcaster into a sink: the repeat becomes a patch of the count.
func ExampleRecorder() {
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	opts := events.DefaultBroadcasterOptions()
	opts.Clock = clk // recorders stamp events with it; retries sleep on it
	b, err := events.NewBroadcaster(opts)
	if err != nil {
		panic(err)
	}
	sink := eventstest.NewSink(clk, 0)
	if err := b.StartRecordingToSink(sink, events.DefaultCorrelatorOptions()); err != nil {
		panic(err)
	}
	rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
	if err != nil {
		panic(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "0f5c"}}

	rec.Eventf(pod, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	clk.Step(10 * time.Second)
	rec.Eventf(pod, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // writes what is queued, 10 s at most
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		panic(err)
	}

	for _, ev := range sink.Events() {
		fmt.Printf("%s %s/%s %s %s count=%d first=%s last=%s\n", ev.Name, ev.InvolvedObject.Kind, ev.InvolvedObject.Name,
			ev.Type, ev.Reason, ev.Count, ev.FirstTimestamp.UTC().Format(time.TimeOnly), ev.LastTimestamp.UTC().Format(time.TimeOnly))
	}
	st := b.Stats().Sinks[0]
	fmt.Printf("created=%d patched=%d\n", st.Created, st.Patched)
	// Output:
	// web-0.18ec7bbc47a44000 Pod/web-0 Warning BackOff count=2 first=10:00:00 last=10:00:10
	// created=1 patched=1
}

// Aggregation: the tenth distinct message about the same object and reason within 600 s
// becomes an aggregate event; later new messages patch it.
func ExampleCorrelator_aggregation() {
	c, err := events.NewCorrelator(events.DefaultCorrelatorOptions())
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	ref := v1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-0", UID: "0f5c", APIVersion: "v1"}
	for i := range 11 {
		ev := &v1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("web-0.%d", i), Namespace: "shop"},
			InvolvedObject: ref, Type: v1.EventTypeWarning, Reason: "Failed", Count: 1,
			Message: fmt.Sprintf("Failed to pull image \"shop/web:%d\"", i),
			Source:  v1.EventSource{Component: "kubelet", Host: "node-1"},
		}
		res, err := c.Correlate(ev, now.Add(time.Duration(i)*time.Second))
		if err != nil {
			panic(err)
		}
		if res.Aggregated {
			fmt.Printf("%2d %-6s count=%d %s\n", i, res.Decision, res.Event.Count, res.Event.Message)
		} else {
			fmt.Printf("%2d %-6s count=%d\n", i, res.Decision, res.Event.Count)
		}
		c.UpdateState(res.Event)
	}
	// Output:
	//  0 create count=1
	//  1 create count=1
	//  2 create count=1
	//  3 create count=1
	//  4 create count=1
	//  5 create count=1
	//  6 create count=1
	//  7 create count=1
	//  8 create count=1
	//  9 create count=1 (combined from similar events): Failed to pull image "shop/web:9"
	// 10 patch  count=2 (combined from similar events): Failed to pull image "shop/web:10"
}

// Spam filtering: 25 events of one object and type go through at once, then one per 300 s.
func ExampleCorrelator_spamFilter() {
	c, err := events.NewCorrelator(events.DefaultCorrelatorOptions())
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	ev := &v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web-0.1", Namespace: "shop"},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-0", UID: "0f5c", APIVersion: "v1"},
		Type:           v1.EventTypeWarning, Reason: "Unhealthy", Message: "Readiness probe failed", Count: 1,
		Source: v1.EventSource{Component: "kubelet", Host: "node-1"},
	}
	written := 0
	for i := range 30 {
		res, _ := c.Correlate(ev, start.Add(time.Duration(i)*time.Second))
		if res.Decision != events.Skip {
			written++
			c.UpdateState(res.Event)
		}
	}
	res, _ := c.Correlate(ev, start.Add(330*time.Second))
	fmt.Println("written in the first 30 s:", written)
	fmt.Println("after 300 s more:", res.Decision, "count", res.Event.Count)
	fmt.Printf("%+v\n", c.Stats())
	// Output:
	// written in the first 30 s: 25
	// after 300 s more: patch count 31
	// {Created:1 Patched:25 Aggregated:0 SpamDropped:5}
}

// A series for events.k8s.io/v1: created once, patched into a series of two, then counted
// locally until the finish loop writes the final count.
func ExampleSeries() {
	s := events.NewSeries()
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "web-0.1", Namespace: "shop"},
		EventTime:           metav1.NewMicroTime(start),
		ReportingController: "kubelet", ReportingInstance: "kubelet-node-1",
		Regarding: v1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-0", UID: "0f5c", APIVersion: "v1"},
		Type:      v1.EventTypeWarning, Reason: "BackOff", Action: "Restart", Note: "Back-off restarting failed container",
	}
	for i := range 4 {
		w, ok := s.Observe(ev, start.Add(time.Duration(i)*time.Minute))
		switch {
		case !ok:
			fmt.Println(i, "counted locally")
		case w.Patch == nil:
			fmt.Println(i, "create")
		default:
			fmt.Println(i, "patch", string(w.Patch))
		}
	}
	for _, w := range s.Finish(start.Add(10 * time.Minute)) {
		fmt.Println("finish: patch", string(w.Patch))
		s.Finished(w, false)
	}
	fmt.Println("cached:", s.Len())
	// Output:
	// 0 create
	// 1 patch {"series":{"count":2,"lastObservedTime":"2026-11-29T10:01:00.000000Z"}}
	// 2 counted locally
	// 3 counted locally
	// finish: patch {"series":{"count":4,"lastObservedTime":"2026-11-29T10:03:00.000000Z"}}
	// cached: 0
}

// A broadcaster on a virtual clock: the sink added with AddSink has no goroutine, Flush
// writes its queue on this goroutine, and NextRetry says when a failed write is due again.
// Events recorded at one instant keep distinct names.
func ExampleBroadcaster_Flush() {
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	opts := events.DefaultBroadcasterOptions()
	opts.Clock = clk
	opts.Queue.Rand = rand.New(rand.NewPCG(1, 2)) // the jitter of the first retry
	b, err := events.NewBroadcaster(opts)
	if err != nil {
		panic(err)
	}
	sink := eventstest.NewSink(clk, 0)
	down := true
	sink.SetFault(func(eventstest.Op, string, string, int) error {
		if down {
			return errors.New("connection refused")
		}
		return nil
	})
	if err := b.AddSink(sink, events.DefaultCorrelatorOptions()); err != nil {
		panic(err)
	}
	rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
	if err != nil {
		panic(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "0f5c"}}
	rec.Event(pod, v1.EventTypeNormal, "Pulled", "Container image already present on machine")
	rec.Event(pod, v1.EventTypeNormal, "Created", "Container created")

	ctx := context.Background()
	_ = b.Flush(ctx) // the first write fails; the events wait
	next, _ := b.NextRetry()
	fmt.Println("retry after", next.Sub(clk.Now()).Round(time.Millisecond))
	down = false
	clk.SetTime(next)
	_ = b.Flush(ctx)
	for _, ev := range sink.Events() {
		fmt.Println(ev.Name, ev.Reason)
	}
	st := b.Stats().Sinks[0]
	fmt.Printf("created=%d retries=%d queued=%d\n", st.Created, st.Retries, st.Queued)
	// Output:
	// retry after 6.765s
	// web-0.18ec7bbc47a44000 Pulled
	// web-0.18ec7bbc47a44001 Created
	// created=2 retries=1 queued=0
}

// The pure queue: time is an argument, the caller makes the requests.
func ExampleSinkQueue() {
	c, err := events.NewCorrelator(events.DefaultCorrelatorOptions())
	if err != nil {
		panic(err)
	}
	q, err := events.NewSinkQueue(events.DefaultSinkQueueOptions(), c)
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	backOff := func(at time.Time) *v1.Event {
		return &v1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("web-0.%x", at.UnixNano()), Namespace: "shop"},
			InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-0", UID: "0f5c", APIVersion: "v1"},
			Type:           v1.EventTypeWarning, Reason: "BackOff", Message: "Back-off restarting failed container app", Count: 1,
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
			Source: v1.EventSource{Component: "kubelet", Host: "node-1"},
		}
	}
	_ = q.Push(backOff(now), now)
	_ = q.Push(backOff(now.Add(10*time.Second)), now.Add(10*time.Second))
	now = now.Add(10 * time.Second)
	for req, ok := q.Next(now); ok; req, ok = q.Next(now) {
		fmt.Printf("%s %s count=%d", req.Op, req.Event.Name, req.Event.Count)
		if req.Patch != nil {
			fmt.Printf(" %s", req.Patch)
		}
		fmt.Println()
		q.Done(req.Event.DeepCopy(), nil, now) // as if the server stored it
	}
	fmt.Println("queued:", q.Len())
	// Output:
	// create web-0.18ec7bbc47a44000 count=1
	// patch web-0.18ec7bbc47a44000 count=2 {"count":2,"lastTimestamp":"2026-11-29T10:00:10Z","message":"Back-off restarting failed container app"}
	// queued: 0
}
