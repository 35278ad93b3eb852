package events_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
)

// TestEventsAtOneInstantAllReachTheAPI records 13 events at one instant (the clock never
// moves, as under a fake clock): four reasons on one pod, each repeated, and ten distinct
// messages of one reason, the tenth of which becomes the aggregate event (spec/events.md
// section A.4). Every one reaches the API: a create for each distinct event, a patch for
// each repeat, nothing refused. client-go names them all after the same nanosecond, so its
// second create fails with AlreadyExists and is dropped, and later repeats of that event
// patch the first one.
func TestEventsAtOneInstantAllReachTheAPI(t *testing.T) {
	h := newFlushHarness(t)
	pod := testPod("web-0", "u1")
	record := func(reason, message string) {
		t.Helper()
		if err := h.rec.Record(pod, nil, v1.EventTypeNormal, reason, message); err != nil {
			t.Fatal(err)
		}
	}
	for _, reason := range []string{"Pulling", "Pulled", "Created", "Started"} {
		record(reason, reason+" app")
	}
	record("Pulled", "Pulled app")   // a repeat: count 2
	record("Started", "Started app") // a repeat: count 2
	for i := range 7 {
		record("Unhealthy", fmt.Sprintf("Readiness probe failed: %d", i))
	}
	if err := h.b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 4 + 2 + 7 = 13 events; the 7 distinct Unhealthy messages stay below the aggregation
	// threshold. Three more distinct messages: the third is the tenth and is aggregated.
	for i := 7; i < 10; i++ {
		record("Unhealthy", fmt.Sprintf("Readiness probe failed: %d", i))
	}
	if err := h.b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := h.b.Stats().Sinks[0]
	if st.DroppedRejected != 0 || st.Created != 14 || st.Patched != 2 || st.Aggregated != 1 {
		t.Fatalf("stats %+v: want 14 creates (13 distinct events and the aggregate), 2 patches, nothing refused", st)
	}
	counts := map[string]int32{}
	names := map[string]bool{}
	for _, ev := range h.sink.Events() {
		counts[ev.Reason+"/"+ev.Message] = ev.Count
		if names[ev.Name] {
			t.Fatalf("two events named %s", ev.Name)
		}
		names[ev.Name] = true
		if !ev.LastTimestamp.Time.Equal(t0) || !ev.FirstTimestamp.Time.Equal(t0) {
			t.Errorf("event %s stamped %v, want the instant %v: only names move", ev.Name, ev.LastTimestamp, t0)
		}
	}
	if len(names) != 14 || counts["Pulled/Pulled app"] != 2 || counts["Started/Started app"] != 2 || counts["Created/Created app"] != 1 ||
		counts["Unhealthy/"+events.AggregatePrefix+"Readiness probe failed: 9"] != 1 {
		t.Fatalf("stored %d events, counts %v", len(names), counts)
	}
}

// TestBroadcasterCorrelatesAtRecordTime: events are correlated at the time their recorder
// stamped them, however late they are written. 26 repeats 300 s apart each find a token in
// the spam filter's bucket (spec/events.md section A.4 step 4, one token per 300 s), even
// though all are written at once, two hours later; correlated at the write's time, the 26th
// would be dropped.
func TestBroadcasterCorrelatesAtRecordTime(t *testing.T) {
	h := newFlushHarness(t)
	pod := testPod("foo", "bar")
	for range 26 {
		h.rec.Event(pod, v1.EventTypeWarning, "BackOff", "back-off")
		h.clock.Step(300 * time.Second)
	}
	h.clock.Step(2 * time.Hour)
	if err := h.b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := h.b.Stats().Sinks[0]
	evs := h.sink.Events()
	if st.DroppedSpam != 0 || st.Created != 1 || st.Patched != 25 || len(evs) != 1 || evs[0].Count != 26 ||
		!evs[0].LastTimestamp.Time.Equal(t0.Add(25*300*time.Second)) {
		t.Fatalf("stats %+v, stored %+v: want one event with count 26", st, evs)
	}
	if h.sink.Calls(eventstest.OpCreate) != 1 {
		t.Fatalf("%d creates", h.sink.Calls(eventstest.OpCreate))
	}
}

// TestBroadcasterFlushWithGoroutine: Flush also waits for and does the work of a sink that
// has its goroutine; once it returns every event due is written.
func TestBroadcasterFlushWithGoroutine(t *testing.T) {
	h := newHarness(t)
	for i := range 50 {
		h.rec.Eventf(testPod(fmt.Sprint("pod-", i), fmt.Sprint(i)), v1.EventTypeNormal, "Started", "started")
	}
	if err := h.b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(h.sink.Events()); n != 50 {
		t.Fatalf("%d events written when Flush returned, want 50", n)
	}
	if _, waiting := h.b.NextRetry(); waiting {
		t.Fatal("nothing waits for a retry")
	}
	h.shutdown()
}
