package events

import (
	"context"
	"errors"
	"net/http"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Sink writes core/v1 events to an API. client-go's typed EventSinkImpl is one (see the
// kube module); eventstest.Sink is an in-memory one. Both methods return what the server
// stored; errors that are apimachinery *StatusErrors (possibly wrapped) are the server's answers
// and are not retried; errors wrapping ErrNotRetryable are not retried either; every other error
// is retried. A method must return promptly once ctx is done, and must not keep ev or patch
// after it returns (the broadcaster reuses them); the broadcaster only reads the event returned.
type Sink interface {
	// Create creates ev (a POST to events in ev's namespace).
	Create(ctx context.Context, ev *v1.Event) (*v1.Event, error)
	// Patch applies the strategic merge patch to the existing event named ev.Name in
	// ev.Namespace. A 404 StatusError makes the broadcaster create the event instead.
	Patch(ctx context.Context, ev *v1.Event, patch []byte) (*v1.Event, error)
}

// SeriesSink writes events.k8s.io/v1 events, with the same error contract as Sink.
type SeriesSink interface {
	// Create creates ev.
	Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error)
	// Patch applies the strategic merge patch (the series) to the existing event named ev.Name
	// in ev.Namespace. A 404 StatusError makes the caller create the event instead.
	Patch(ctx context.Context, ev *eventsv1.Event, patch []byte) (*eventsv1.Event, error)
}

// Retryable reports whether a failed write is tried again under client-go's rules (spec A.5):
// server answers (apimachinery StatusErrors of any code, 409, 429 and 5xx included) and errors
// wrapping ErrNotRetryable are final; anything else (transport errors, UnexpectedObjectError)
// is retried. client-go matches the error's dynamic type; nodestate also looks through wrapping.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, ErrNotRetryable) {
		return false
	}
	var status apierrors.APIStatus
	return !errors.As(err, &status)
}

// isNotFound reports a 404 answer, the one that turns a patch into a create.
func isNotFound(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == http.StatusNotFound
}
