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
// which names a client-go interface the root module cannot import, needs this adapter. The
// zero value holds a nil *events.Recorder, whose methods record nothing (see events.Recorder).
// It is safe for concurrent use as the Recorder is.
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
// events.ErrNotRetryable; the server's StatusErrors pass through unchanged. The zero value has
// no client: its methods return an error wrapping ErrNotInitialized and
// events.ErrNotRetryable. It is safe for concurrent use.
type CoreEventSink struct {
	// Client is typically clientset.CoreV1().
	Client typedcorev1.EventsGetter
}

// Create creates ev in its namespace.
func (s *CoreEventSink) Create(ctx context.Context, ev *corev1.Event) (*corev1.Event, error) {
	if err := check("CoreEventSink", "Create", s.Client == nil, ev == nil); err != nil {
		return nil, err
	}
	out, err := s.Client.Events(ev.Namespace).CreateWithEventNamespaceWithContext(ctx, ev)
	return out, classify(err)
}

// Patch applies the strategic merge patch to the event named ev.Name in ev.Namespace.
func (s *CoreEventSink) Patch(ctx context.Context, ev *corev1.Event, patch []byte) (*corev1.Event, error) {
	if err := check("CoreEventSink", "Patch", s.Client == nil, ev == nil); err != nil {
		return nil, err
	}
	out, err := s.Client.Events(ev.Namespace).PatchWithEventNamespaceWithContext(ctx, ev, patch)
	return out, classify(err)
}

// SeriesEventSink writes events.k8s.io/v1 events through a client-go clientset, as client-go's
// tools/events EventSinkImpl does: Create is a POST, Patch a strategic merge PATCH that
// carries the series. An event without a namespace is refused as not retryable, as client-go
// refuses it. The zero value has no client: its methods return an error wrapping
// ErrNotInitialized and events.ErrNotRetryable. It is safe for concurrent use.
type SeriesEventSink struct {
	// Client is typically clientset.EventsV1().
	Client typedeventsv1.EventsGetter
}

// Create creates ev in its namespace.
func (s *SeriesEventSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if err := check("SeriesEventSink", "Create", s.Client == nil, ev == nil); err != nil {
		return nil, err
	}
	if ev.Namespace == "" {
		return nil, fmt.Errorf("%w: can't create an event with empty namespace", events.ErrNotRetryable)
	}
	out, err := s.Client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	return out, classify(err)
}

// Patch applies the strategic merge patch (the series) to the event named ev.Name.
func (s *SeriesEventSink) Patch(ctx context.Context, ev *eventsv1.Event, patch []byte) (*eventsv1.Event, error) {
	if err := check("SeriesEventSink", "Patch", s.Client == nil, ev == nil); err != nil {
		return nil, err
	}
	if ev.Namespace == "" {
		return nil, fmt.Errorf("%w: can't patch an event with empty namespace", events.ErrNotRetryable)
	}
	out, err := s.Client.Events(ev.Namespace).Patch(ctx, ev.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return out, classify(err)
}

// check returns the error of a sink call without a client or with a nil event, marked not
// retryable since no retry can succeed.
func check(typ, method string, noClient, nilEvent bool) error {
	switch {
	case noClient:
		return fmt.Errorf("%w: %w", events.ErrNotRetryable, notInit(typ, method))
	case nilEvent:
		return fmt.Errorf("%w: %w", events.ErrNotRetryable, invalid(typ, method, "nil event"))
	}
	return nil
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
