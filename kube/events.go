package kube

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	typedeventsv1 "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	clientevents "k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"

	"github.com/nodestate/nodestate/events"
)

// The nodestate recorders drop in where client-go's recorder interfaces are expected.
var (
	_ record.EventRecorder                = (*events.Recorder)(nil)
	_ record.EventRecorderLogger          = EventRecorder{}
	_ clientevents.EventRecorder          = (*events.SeriesRecorder)(nil)
	_ clientevents.AnnotatedEventRecorder = (*events.SeriesRecorder)(nil)
	_ events.Sink                         = (*CoreEventSink)(nil)
	_ events.SeriesSink                   = (*SeriesEventSink)(nil)
)

// EventRecorder is an events.Recorder as client-go's record.EventRecorderLogger, the
// interface client-go's broadcasters return and controllers take. The nodestate Recorder has
// Event, Eventf, AnnotatedEventf and WithLogger already; only the result type of WithLogger,
// which names a client-go interface the root module cannot import, needs this adapter.
type EventRecorder struct {
	*events.Recorder
}

// WithLogger returns the recorder logging refused and dropped events to logger.
func (r EventRecorder) WithLogger(logger logr.Logger) record.EventRecorderLogger {
	return EventRecorder{Recorder: r.Recorder.WithLogger(logger)}
}

// CoreEventSink writes core/v1 events through a client-go clientset, as client-go's
// typed EventSinkImpl does: Create is a POST to events in the event's namespace, Patch a
// strategic merge PATCH of events/<name>. A request that cannot be built is marked
// events.ErrNotRetryable; the server's StatusErrors pass through unchanged.
type CoreEventSink struct {
	// Client is typically clientset.CoreV1().
	Client typedcorev1.EventsGetter
}

// Create creates ev in its namespace.
func (s *CoreEventSink) Create(ctx context.Context, ev *corev1.Event) (*corev1.Event, error) {
	out, err := s.Client.Events(ev.Namespace).CreateWithEventNamespaceWithContext(ctx, ev)
	return out, classify(err)
}

// Patch applies the strategic merge patch to the event named ev.Name in ev.Namespace.
func (s *CoreEventSink) Patch(ctx context.Context, ev *corev1.Event, patch []byte) (*corev1.Event, error) {
	out, err := s.Client.Events(ev.Namespace).PatchWithEventNamespaceWithContext(ctx, ev, patch)
	return out, classify(err)
}

// SeriesEventSink writes events.k8s.io/v1 events through a client-go clientset, as client-go's
// tools/events EventSinkImpl does.
type SeriesEventSink struct {
	// Client is typically clientset.EventsV1().
	Client typedeventsv1.EventsGetter
}

// Create creates ev in its namespace.
func (s *SeriesEventSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if ev.Namespace == "" {
		return nil, fmt.Errorf("%w: can't create an event with empty namespace", events.ErrNotRetryable)
	}
	out, err := s.Client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	return out, classify(err)
}

// Patch applies the strategic merge patch (the series) to the event named ev.Name.
func (s *SeriesEventSink) Patch(ctx context.Context, ev *eventsv1.Event, patch []byte) (*eventsv1.Event, error) {
	if ev.Namespace == "" {
		return nil, fmt.Errorf("%w: can't patch an event with empty namespace", events.ErrNotRetryable)
	}
	out, err := s.Client.Events(ev.Namespace).Patch(ctx, ev.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return out, classify(err)
}

// classify marks a request-construction failure as not retryable, as client-go's recorder
// treats *rest.RequestConstructionError.
func classify(err error) error {
	var rce *rest.RequestConstructionError
	if errors.As(err, &rce) {
		return fmt.Errorf("%w: %w", events.ErrNotRetryable, err)
	}
	return err
}
