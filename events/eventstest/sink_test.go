package eventstest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/events/eventstest"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func coreEvent(name string) *v1.Event {
	return &v1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Reason: "R", Message: "m", Count: 1, Type: "Normal"}
}

func TestSinkBehavesLikeTheServer(t *testing.T) {
	ctx := context.Background()
	fc := testingclock.NewFakeClock(t0)
	s := eventstest.NewSink(fc, time.Hour)
	created, err := s.Create(ctx, coreEvent("pod.1"))
	if err != nil || created.ResourceVersion == "" || created.UID == "" {
		t.Fatalf("create: %+v, %v; want a resourceVersion and a UID", created, err)
	}
	if _, err := s.Create(ctx, coreEvent("pod.1")); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create of a taken name: %v, want AlreadyExists", err)
	}
	if _, err := s.Create(ctx, coreEvent("")); !apierrors.IsInvalid(err) {
		t.Fatalf("create without a name: %v, want Invalid", err)
	}
	patched, err := s.Patch(ctx, coreEvent("pod.1"), []byte(`{"count":2,"message":"again"}`))
	if err != nil || patched.Count != 2 || patched.Message != "again" || patched.Reason != "R" || patched.ResourceVersion == created.ResourceVersion {
		t.Fatalf("patch: %+v, %v; want count 2, the new message, the rest kept, a new resourceVersion", patched, err)
	}
	if _, err := s.Patch(ctx, coreEvent("pod.2"), []byte(`{"count":2}`)); !apierrors.IsNotFound(err) {
		t.Fatalf("patch of a missing event: %v, want NotFound", err)
	}
	fc.Step(59 * time.Minute)
	if len(s.Events()) != 1 {
		t.Fatal("the event expired before its TTL")
	}
	fc.Step(time.Hour)
	if len(s.Events()) != 0 {
		t.Fatal("the event outlived its TTL")
	}
	if _, err := s.Patch(ctx, coreEvent("pod.1"), []byte(`{"count":3}`)); !apierrors.IsNotFound(err) {
		t.Fatalf("patch of an expired event: %v, want NotFound", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Create(cctx, coreEvent("pod.3")); !errors.Is(err, context.Canceled) {
		t.Fatalf("create with a cancelled context: %v", err)
	}
	boom := errors.New("boom")
	s.SetFault(func(op eventstest.Op, ns, name string, n int) error {
		if op == eventstest.OpCreate && n == 5 {
			return boom
		}
		return nil
	})
	if _, err := s.Create(ctx, coreEvent("pod.4")); !errors.Is(err, boom) {
		t.Fatalf("fault on the 5th create: %v", err)
	}
	if s.Calls(eventstest.OpCreate) != 5 || s.Calls(eventstest.OpPatch) != 3 {
		t.Fatalf("calls: %d creates, %d patches", s.Calls(eventstest.OpCreate), s.Calls(eventstest.OpPatch))
	}
}

func TestSeriesSinkNames(t *testing.T) {
	ctx := context.Background()
	s := eventstest.NewSeriesSink(testingclock.NewFakeClock(t0), 0)
	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "Pod.1", Namespace: "ns"}, Reason: "R", Action: "A", Type: "Normal"}
	if _, err := s.Create(ctx, ev); !apierrors.IsInvalid(err) {
		t.Fatalf("events.k8s.io/v1 name that is not a DNS subdomain: %v, want Invalid", err)
	}
	ev.Name = "pod.1"
	if _, err := s.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
	out, err := s.Patch(ctx, ev, []byte(`{"series":{"count":2,"lastObservedTime":"2026-11-29T10:00:01.000000Z"}}`))
	if err != nil || out.Series == nil || out.Series.Count != 2 {
		t.Fatalf("series patch: %+v, %v", out, err)
	}
	if evs := s.Events(); len(evs) != 1 || evs[0].Series.Count != 2 {
		t.Fatalf("stored: %+v", evs)
	}
}

func TestRecorderRecords(t *testing.T) {
	var r eventstest.Recorder
	pod := &v1.Pod{}
	r.Event(pod, "Normal", "Started", "started")
	r.Eventf(pod, "Warning", "BackOff", "back-off %d", 3)
	r.AnnotatedEventf(pod, map[string]string{"a": "b"}, "Normal", "Pulled", "pulled %s", "img")
	want := []string{"Normal Started started", "Warning BackOff back-off 3", "Normal Pulled pulled img"}
	got := r.Strings()
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("call %d: got %q, want %q", i, got[i], want[i])
		}
	}
	if evs := r.Events(); evs[2].Annotations["a"] != "b" {
		t.Fatalf("annotations lost: %+v", evs)
	}
	r.Reset()
	if len(r.Events()) != 0 {
		t.Fatal("Reset kept calls")
	}
	var s eventstest.SeriesRecorder
	s.Eventf(pod, nil, "Normal", "Killing", "Kill", "stopping %s", "c")
	s.AnnotatedEventf(pod, pod, map[string]string{"k": "v"}, "Warning", "Failed", "Pull", "failed")
	if got := s.Strings(); len(got) != 2 || got[0] != "Normal Killing stopping c" || got[1] != "Warning Failed failed" {
		t.Fatalf("series recorder: %q", got)
	}
	if evs := s.Events(); evs[0].Action != "Kill" || evs[1].Related != pod || evs[1].Annotations["k"] != "v" {
		t.Fatalf("series recorder lost fields: %+v", evs)
	}
	s.Reset()
	if len(s.Events()) != 0 {
		t.Fatal("Reset kept calls")
	}
}

// TestStreamGenerator: generated streams are nonempty, in time order, and made of events a
// recorder could build (count 1, a valid type).
func TestStreamGenerator(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := eventstest.Stream(60).Draw(t, "stream")
		if len(s) == 0 || len(s) > 60 {
			t.Fatalf("length %d", len(s))
		}
		for i, st := range s {
			if i > 0 && st.At.Before(s[i-1].At) {
				t.Fatalf("step %d goes back in time", i)
			}
			if st.Event.Count != 1 || (st.Event.Type != "Normal" && st.Event.Type != "Warning") || !st.Event.LastTimestamp.Time.Equal(st.At) {
				t.Fatalf("step %d: %+v", i, st.Event)
			}
		}
	})
}

// TestSinkRecordsRequests: Requests returns what each call was given, as copies the caller's
// later changes do not reach, with the call's error; the zero Sink is ready to use.
func TestSinkRecordsRequests(t *testing.T) {
	ctx := context.Background()
	var s eventstest.Sink
	ev := coreEvent("pod.1")
	if _, err := s.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"count":2}`)
	if _, err := s.Patch(ctx, ev, patch); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Patch(ctx, coreEvent("missing"), patch); !apierrors.IsNotFound(err) {
		t.Fatalf("patch of a missing event: %v", err)
	}
	if _, err := s.Create(ctx, nil); err == nil {
		t.Fatal("a nil event must be refused")
	}
	ev.Reason, patch[1] = "changed", 'X'
	reqs := s.Requests()
	if len(reqs) != 4 || reqs[0].Op != eventstest.OpCreate || reqs[0].Event.Reason != "R" || reqs[0].Patch != nil || reqs[0].Err != nil ||
		reqs[1].Op != eventstest.OpPatch || string(reqs[1].Patch) != `{"count":2}` || reqs[1].Event.Name != "pod.1" ||
		!apierrors.IsNotFound(reqs[2].Err) || reqs[3].Event != nil || reqs[3].Err == nil {
		t.Fatalf("requests %+v", reqs)
	}
	if s.Calls(eventstest.OpCreate) != 2 || s.Calls(eventstest.OpPatch) != 2 {
		t.Fatalf("calls %d %d", s.Calls(eventstest.OpCreate), s.Calls(eventstest.OpPatch))
	}
	ss := eventstest.NewSeriesSink(nil, 0)
	sev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "pod.1", Namespace: "ns"}}
	if _, err := ss.Create(ctx, sev); err != nil {
		t.Fatal(err)
	}
	if r := ss.Requests(); len(r) != 1 || r[0].Op != eventstest.OpCreate || r[0].Event.Name != "pod.1" {
		t.Fatalf("series requests %+v", r)
	}
}
