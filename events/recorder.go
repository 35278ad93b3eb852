package events

import (
	"fmt"
	"io"
	"maps"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
)

// RecorderOption configures a Recorder or a SeriesRecorder.
type RecorderOption func(*recorderConfig)

type recorderConfig struct {
	scheme *runtime.Scheme
	clock  clock.PassiveClock
	random io.Reader
}

// WithScheme sets the scheme that gives kind and apiVersion of objects whose type meta is empty
// (default: a scheme with the core/v1 types).
func WithScheme(s *runtime.Scheme) RecorderOption {
	return func(c *recorderConfig) { c.scheme = s }
}

// WithRecorderClock sets the clock that stamps events (default the real clock).
func WithRecorderClock(clk clock.PassiveClock) RecorderOption {
	return func(c *recorderConfig) { c.clock = clk }
}

// WithNameRandom sets the source of the random UUIDs that name events whose object name makes
// no valid event name (default crypto/rand.Reader).
func WithNameRandom(r io.Reader) RecorderOption {
	return func(c *recorderConfig) { c.random = r }
}

func newRecorderConfig(opts []RecorderOption) recorderConfig {
	c := recorderConfig{clock: clock.RealClock{}}
	for _, o := range opts {
		o(&c)
	}
	if c.scheme == nil {
		c.scheme = runtime.NewScheme()
		_ = v1.AddToScheme(c.scheme) // registering the static core/v1 types cannot fail
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	return c
}

// Recorder records core/v1 events for one source (component and host). Its Event, Eventf and
// AnnotatedEventf are those of client-go's record.EventRecorder, so it can be passed wherever
// that interface is expected; Record is the same with an error. Recording never blocks. A
// Recorder is safe for concurrent use.
type Recorder struct {
	b      *Broadcaster
	source v1.EventSource
	cfg    recorderConfig
}

// NewRecorder returns a recorder that stamps its events with source and puts them on b's sink
// queues.
func (b *Broadcaster) NewRecorder(source v1.EventSource, opts ...RecorderOption) *Recorder {
	return &Recorder{b: b, source: source, cfg: newRecorderConfig(opts)}
}

// Event records an event about object. Errors are counted (Stats) and not returned.
func (r *Recorder) Event(object runtime.Object, eventtype, reason, message string) {
	_ = r.Record(object, nil, eventtype, reason, message)
}

// Eventf is Event with a message formatted by fmt.Sprintf.
func (r *Recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	_ = r.Record(object, nil, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf is Eventf with annotations on the event.
func (r *Recorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	_ = r.Record(object, annotations, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// Record builds the event client-go's recorder builds (spec A.2) and queues it. It returns an
// *InvalidEventError for an object it cannot reference or a type other than Normal or Warning,
// ErrShutdown after Shutdown, and ErrQueueFull when a sink's queue was full; in every case the
// drop is counted.
func (r *Recorder) Record(object runtime.Object, annotations map[string]string, eventtype, reason, message string) error {
	ev, err := r.MakeEvent(object, annotations, eventtype, reason, message)
	if err != nil {
		r.b.invalid.Add(1)
		r.b.cfg.logger.Error(err, "event not recorded", "reason", reason)
		return err
	}
	if err := r.b.submit(ev); err != nil {
		r.b.cfg.logger.Error(err, "event not recorded", "event", eventName(ev))
		return err
	}
	return nil
}

// MakeEvent returns the event Record would queue, without queueing it: named after the object
// and the recorder clock's nanoseconds (or a UUID), in the object's namespace or "default",
// count 1, both timestamps now, source and reporting fields from the recorder's source.
func (r *Recorder) MakeEvent(object runtime.Object, annotations map[string]string, eventtype, reason, message string) (*v1.Event, error) {
	ref, err := Reference(r.cfg.scheme, object)
	if err != nil {
		return nil, err
	}
	if eventtype != v1.EventTypeNormal && eventtype != v1.EventTypeWarning {
		return nil, &InvalidEventError{Field: "type", Value: eventtype, Detail: "unsupported event type, must be Normal or Warning"}
	}
	t := metav1.Time{Time: r.cfg.clock.Now()}
	name, err := EventName(ref.Name, t.UnixNano(), r.cfg.random)
	if err != nil {
		return nil, err
	}
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &v1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: maps.Clone(annotations)},
		InvolvedObject:      *ref,
		Reason:              reason,
		Message:             message,
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
		Type:                eventtype,
		Source:              r.source,
		ReportingController: r.source.Component,
		ReportingInstance:   r.source.Host,
	}, nil
}
