package events_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/events"
)

// TestFieldSelector: the selector kubectl describe lists an object's events with (client-go's
// Search): name and namespace always, kind and uid when set, sorted, values escaped.
func TestFieldSelector(t *testing.T) {
	cases := []struct {
		name, reason string
		ref          *v1.ObjectReference
		want         string
	}{
		{"pod", "all four fields", &v1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-0", UID: "0f5c"},
			"involvedObject.kind=Pod,involvedObject.name=web-0,involvedObject.namespace=shop,involvedObject.uid=0f5c"},
		{"node", "a cluster-scoped object has an empty namespace, still selected", &v1.ObjectReference{Kind: "Node", Name: "node-1", UID: "node-1"},
			"involvedObject.kind=Node,involvedObject.name=node-1,involvedObject.namespace=,involvedObject.uid=node-1"},
		{"bare", "kind and uid are left out when empty", &v1.ObjectReference{Name: "x", Namespace: "n"},
			"involvedObject.name=x,involvedObject.namespace=n"},
		{"escaped", "commas, equals signs and backslashes are escaped", &v1.ObjectReference{Name: `a,b=c\d`, Namespace: "n"},
			`involvedObject.name=a\,b\=c\\d,involvedObject.namespace=n`},
	}
	for _, tc := range cases {
		got, err := events.FieldSelector(tc.ref)
		if err != nil || got != tc.want {
			t.Errorf("%s (%s): got %q, %v; want %q", tc.name, tc.reason, got, err, tc.want)
		}
	}
	if _, err := events.FieldSelector(nil); !errors.Is(err, events.ErrInvalidInput) {
		t.Errorf("nil reference: %v, want ErrInvalidInput", err)
	}
}

// TestRecorderWithLogger: the recorder WithLogger returns logs refused events to its logger,
// keeps recording through the same broadcaster, and keeps event names unique with the
// original.
func TestRecorderWithLogger(t *testing.T) {
	h := newFlushHarness(t)
	var buf bytes.Buffer
	logged := h.rec.WithLogger(funcr.New(func(prefix, args string) { buf.WriteString(args + "\n") }, funcr.Options{}))
	if err := logged.Record(testPod("foo", "bar"), nil, "Critical", "R", "m"); err == nil {
		t.Fatal("an invalid type must be refused")
	}
	if !strings.Contains(buf.String(), "event not recorded") {
		t.Fatalf("logger got %q", buf.String())
	}
	a, err := h.rec.MakeEvent(testPod("foo", "bar"), nil, v1.EventTypeNormal, "R", "m")
	if err != nil {
		t.Fatal(err)
	}
	b, err := logged.MakeEvent(testPod("foo", "bar"), nil, v1.EventTypeNormal, "R", "m")
	if err != nil || a.Name == b.Name {
		t.Fatalf("names %q and %q (%v): want two names", a.Name, b.Name, err)
	}
	if err := logged.Record(testPod("foo", "bar"), nil, v1.EventTypeNormal, "R", "m"); err != nil {
		t.Fatal(err)
	}
	if st := h.b.Stats(); st.Submitted != 1 || st.DroppedInvalid != 1 {
		t.Fatalf("stats %+v", st)
	}
	var zero *events.Recorder
	if err := zero.WithLogger(logr.Discard()).Record(testPod("foo", "bar"), nil, v1.EventTypeNormal, "R", "m"); !errors.Is(err, events.ErrNotInitialized) {
		t.Fatalf("a zero recorder's WithLogger: %v", err)
	}
}

// TestSeriesRecorderWithLogger: the series recorder WithLogger returns logs refused events to
// its logger, keeps recording through the same broadcaster, and keeps event names unique with
// the original.
func TestSeriesRecorderWithLogger(t *testing.T) {
	h := newSeriesHarness(t)
	var buf bytes.Buffer
	logged := h.rec.WithLogger(funcr.New(func(prefix, args string) { buf.WriteString(args + "\n") }, funcr.Options{}))
	pod := testPod("foo", "bar")
	if err := logged.Record(pod, nil, nil, "Critical", "Started", "Start", "n"); err == nil {
		t.Fatal("B.2: an invalid type must be refused")
	}
	if !strings.Contains(buf.String(), "event not recorded") {
		t.Fatalf("the refusal goes to the logger WithLogger was given; it got %q", buf.String())
	}
	a, err := h.rec.MakeEvent(pod, nil, nil, v1.EventTypeNormal, "Started", "Start", "n")
	if err != nil {
		t.Fatal(err)
	}
	b, err := logged.MakeEvent(pod, nil, nil, v1.EventTypeNormal, "Started", "Start", "n")
	if err != nil || a.Name == b.Name || b.ReportingController != "kubelet" || b.ReportingInstance != "kubelet-node-1" {
		t.Fatalf("names %q and %q, reporting %q/%q (%v): want two names and the original's reporting fields", a.Name, b.Name, b.ReportingController, b.ReportingInstance, err)
	}
	if err := logged.Record(pod, nil, nil, v1.EventTypeNormal, "Started", "Start", "n"); err != nil {
		t.Fatal(err)
	}
	if st := h.b.Stats(); st.Submitted != 1 || st.DroppedInvalid != 1 {
		t.Fatalf("stats %+v, want the valid event submitted to the same broadcaster and the refused one counted", st)
	}
}

// TestSeriesRecorderRelated: a related object is referenced in full on the event; one that
// cannot be referenced is left out and the event is still recorded (spec/events.md section
// B.2, step 4).
func TestSeriesRecorderRelated(t *testing.T) {
	h := newSeriesHarness(t)
	pod := testPod("foo", "bar")
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "n1", ResourceVersion: "5"}}
	ev, err := h.rec.MakeEvent(pod, node, nil, v1.EventTypeNormal, "Scheduled", "Binding", "bound")
	want := v1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: "node-1", UID: "n1", ResourceVersion: "5"}
	if err != nil || ev.Related == nil || *ev.Related != want {
		t.Fatalf("B.2: related %+v (%v), want %+v", ev.Related, err, want)
	}
	// A type the recorder's scheme does not know: no reference, so no related object.
	unknown := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	ev, err = h.rec.MakeEvent(pod, unknown, nil, v1.EventTypeNormal, "Scheduled", "Binding", "bound")
	if err != nil || ev.Related != nil {
		t.Fatalf("B.2: an unreferenceable related object: related %+v (%v), want the event without it", ev.Related, err)
	}
}
