package events

import (
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
)

// RecorderOptions configures a Recorder or a SeriesRecorder. The zero value is valid: every
// field has a documented default.
type RecorderOptions struct {
	// Scheme gives kind and apiVersion of objects whose type meta is empty; nil is a scheme
	// with the core/v1 types.
	Scheme *runtime.Scheme
	// Clock stamps events (and names them); nil is the broadcaster's clock.
	Clock clock.Clock
	// Rand draws the random UUIDs that name events whose object name makes no valid event
	// name; nil is math/rand/v2's process-wide source.
	Rand Rand
}

// DefaultRecorderOptions returns the zero RecorderOptions: the core/v1 scheme, the
// broadcaster's clock, math/rand/v2.
func DefaultRecorderOptions() RecorderOptions { return RecorderOptions{} }

// recorderBase is what Recorder and SeriesRecorder share: scheme, clock, randomness, logger
// and the name stamp.
type recorderBase struct {
	scheme *runtime.Scheme
	clock  clock.PassiveClock
	rand   Rand
	logger logr.Logger
	stamp  *nameStamp
}

func newRecorderBase(opts RecorderOptions, clk clock.PassiveClock, logger logr.Logger) recorderBase {
	r := recorderBase{scheme: opts.Scheme, clock: opts.Clock, rand: opts.Rand, logger: logger, stamp: &nameStamp{}}
	if r.scheme == nil {
		r.scheme = coreScheme()
	}
	if r.clock == nil {
		r.clock = clk
	}
	if r.rand == nil {
		r.rand = globalRand{}
	} else {
		r.rand = &lockedRand{r: r.rand}
	}
	return r
}

var coreScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = v1.AddToScheme(s) // registering the static core/v1 types cannot fail
	return s
})

// nameStamp gives the nanoseconds an event is named after: the recorder clock's, or one more
// than the last name's when the clock has not moved past it, so that events recorded at the
// same instant (always under a fake clock, sometimes under a coarse real one) get different
// names (client-go's would collide and the second create would fail with AlreadyExists).
type nameStamp struct {
	mu   sync.Mutex
	last int64
	used bool
}

func (s *nameStamp) next(t time.Time) int64 {
	n := t.UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used && n <= s.last {
		n = s.last + 1
	}
	s.last, s.used = n, true
	return n
}

// Recorder records core/v1 events for one source (component and host). Its Event, Eventf and
// AnnotatedEventf are those of client-go's record.EventRecorder, so it can be passed wherever
// that interface is expected, and WithLogger is that of record.EventRecorderLogger (whose
// return type only a client-go adapter can have: see the kube module); Record is the same with
// an error. Recording never blocks. Event names are unique per recorder, even for events
// recorded at the same instant.
//
// Use Broadcaster.NewRecorder: the zero Recorder records nothing (Record returns
// ErrNotInitialized). A Recorder is safe for concurrent use.
type Recorder struct {
	b      *Broadcaster
	source v1.EventSource
	base   recorderBase
}

// NewRecorder returns a recorder that stamps its events with source and puts them on b's sink
// queues.
func (b *Broadcaster) NewRecorder(source v1.EventSource, opts RecorderOptions) (*Recorder, error) {
	if !b.ready() {
		return nil, ErrNotInitialized
	}
	return &Recorder{b: b, source: source, base: newRecorderBase(opts, b.clock, b.opts.Logger)}, nil
}

// WithLogger returns a recorder that logs refused and dropped events to logger and is
// otherwise r: same broadcaster, source and options, and the same event names (names stay
// unique across the two). A nil or zero r gives a zero Recorder.
func (r *Recorder) WithLogger(logger logr.Logger) *Recorder {
	if r == nil || r.b == nil {
		return &Recorder{}
	}
	c := *r
	c.base.logger = logger
	return &c
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

// Record builds the event client-go's recorder builds (spec/events.md section A.2) and queues
// it. It returns an *InvalidEventError for an object it cannot reference or a type other than
// Normal or Warning, ErrShutdown after Shutdown, and ErrQueueFull when a sink's queue was
// full; in every case the drop is counted. The zero Recorder returns ErrNotInitialized.
func (r *Recorder) Record(object runtime.Object, annotations map[string]string, eventtype, reason, message string) error {
	if r == nil || r.b == nil {
		return ErrNotInitialized
	}
	ev, err := r.MakeEvent(object, annotations, eventtype, reason, message)
	if err != nil {
		r.b.invalid.Add(1)
		r.base.logger.Error(err, "event not recorded", "reason", reason)
		return err
	}
	if err := r.b.submit(ev, ev.LastTimestamp.Time); err != nil {
		r.base.logger.Error(err, "event not recorded", "event", eventName(ev))
		return err
	}
	return nil
}

// MakeEvent returns the event Record would queue, without queueing it: named after the object
// and the recorder clock's nanoseconds (one more than the last name's when the clock has not
// moved since; a random UUID when that is no valid name), in the object's namespace or
// "default", count 1, both timestamps now, source and reporting fields from the recorder's
// source. Each call takes a name.
func (r *Recorder) MakeEvent(object runtime.Object, annotations map[string]string, eventtype, reason, message string) (*v1.Event, error) {
	if r == nil || r.b == nil {
		return nil, ErrNotInitialized
	}
	ref, err := Reference(r.base.scheme, object)
	if err != nil {
		return nil, err
	}
	if eventtype != v1.EventTypeNormal && eventtype != v1.EventTypeWarning {
		return nil, &InvalidEventError{Field: "type", Value: eventtype, Detail: "unsupported event type, must be Normal or Warning"}
	}
	t := metav1.Time{Time: r.base.clock.Now()}
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &v1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: EventName(ref.Name, r.base.stamp.next(t.Time), r.base.rand), Namespace: ns, Annotations: maps.Clone(annotations)},
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
