package events_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestVersionEVV1 is docs/versions.md row EV-V1, which needs no profile:
// client-go 0.37 adds AnnotatedEventf to the events.k8s.io/v1 recorder and
// changes nothing else there. Eventf, the only call of 0.33 to 0.36, stores
// an event without annotations, as every minor's recorder does; the 0.37
// AnnotatedEventf stores them on the event, and, as in client-go, they are
// not part of the series key: a repeat with other annotations joins the
// series and the stored event keeps the first occurrence's.
func TestVersionEVV1(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod1", Namespace: "ns1", UID: "u1"}}

	h := newSeriesHarness(t)
	h.rec.Eventf(pod, nil, v1.EventTypeNormal, "Started", "Start", "started")
	if err := shutdownWithin(t, h.b, context.Background()); err != nil {
		t.Fatal(err)
	}
	if evs := h.sink.Events(); len(evs) != 1 || evs[0].Annotations != nil {
		t.Fatalf("EV-V1 Eventf (every minor): stored %+v, want one event without annotations", evs)
	}

	h = newSeriesHarness(t)
	first := map[string]string{"example.com/trace": "a"}
	h.rec.AnnotatedEventf(pod, nil, first, v1.EventTypeNormal, "Started", "Start", "started")
	h.rec.AnnotatedEventf(pod, nil, map[string]string{"example.com/trace": "b"}, v1.EventTypeNormal, "Started", "Start", "started")
	if err := shutdownWithin(t, h.b, context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := h.sink.Events()
	if len(evs) != 1 || evs[0].Series == nil || evs[0].Series.Count != 2 {
		t.Fatalf("EV-V1 AnnotatedEventf (0.37): stored %+v, want one event with a series of 2", evs)
	}
	if diff := cmp.Diff(first, evs[0].Annotations); diff != "" {
		t.Errorf("EV-V1 AnnotatedEventf (0.37): annotations (-want +got):\n%s", diff)
	}
}
