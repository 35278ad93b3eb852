package kube_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clientevents "k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
	"github.com/nodestate/nodestate/kube"
)

// The test kit's recorders also stand in for client-go's.
var (
	_ record.EventRecorder                = (*eventstest.Recorder)(nil)
	_ clientevents.EventRecorder          = (*eventstest.SeriesRecorder)(nil)
	_ clientevents.AnnotatedEventRecorder = (*eventstest.SeriesRecorder)(nil)
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// TestCoreEventSinkThroughClientset records through nodestate's broadcaster into client-go's
// fake clientset: the repeat is a strategic merge patch the clientset applies (case E2).
func TestCoreEventSinkThroughClientset(t *testing.T) {
	defer goleak.VerifyNone(t)
	cs := fake.NewClientset()
	fc := testingclock.NewFakeClock(t0)
	opts := events.DefaultBroadcasterOptions()
	opts.Clock = fc
	b, err := events.NewBroadcaster(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.StartRecordingToSink(&kube.CoreEventSink{Client: cs.CoreV1()}, events.DefaultCorrelatorOptions()); err != nil {
		t.Fatal(err)
	}
	r, err := b.NewRecorder(corev1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	var rec record.EventRecorderLogger = kube.EventRecorder{Recorder: r}
	rec = rec.WithLogger(logr.Discard())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "u1"}}
	rec.Eventf(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	fc.Step(10 * time.Second)
	rec.Eventf(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	list, err := cs.CoreV1().Events("shop").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Count != 2 || !list.Items[0].LastTimestamp.Time.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("E2 through client-go: %+v", list.Items)
	}
	if st := b.Stats().Sinks[0]; st.Created != 1 || st.Patched != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSeriesEventSinkThroughClientsetN3: two identical events through the events.k8s.io/v1
// runner and client-go's fake clientset give exactly one Event, with its series set.
func TestSeriesEventSinkThroughClientsetN3(t *testing.T) {
	defer goleak.VerifyNone(t)
	cs := fake.NewClientset()
	fc := testingclock.NewFakeClock(t0)
	opts := events.DefaultSeriesBroadcasterOptions()
	opts.Clock = fc
	b, err := events.NewSeriesBroadcaster(opts, &kube.SeriesEventSink{Client: cs.EventsV1()})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecorder("kubelet", "kubelet-node-1", events.RecorderOptions{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "u1"}}
	rec.Eventf(pod, nil, corev1.EventTypeNormal, "Pulled", "Pull", "pulled %s", "img")
	rec.Eventf(pod, nil, corev1.EventTypeNormal, "Pulled", "Pull", "pulled %s", "img")
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	list, err := cs.EventsV1().Events("shop").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Series == nil || list.Items[0].Series.Count != 2 {
		t.Fatalf("N3: %+v", list.Items)
	}
}

func TestClassify(t *testing.T) {
	s := &kube.SeriesEventSink{Client: fake.NewClientset().EventsV1()}
	_, err := s.Create(context.Background(), &eventsv1Event)
	if !errors.Is(err, events.ErrNotRetryable) || events.Retryable(err) {
		t.Fatalf("an event without namespace: %v, want a non-retryable error", err)
	}
	wrapped := kubeClassify(&rest.RequestConstructionError{Err: errors.New("bad body")})
	if events.Retryable(wrapped) {
		t.Fatal("E17: a RequestConstructionError must not be retried")
	}
}

var eventsv1Event = eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "x"}}

var kubeClassify = kube.Classify
