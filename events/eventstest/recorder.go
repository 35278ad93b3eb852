package eventstest

import (
	"fmt"
	"maps"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// Recorded is one call to a Recorder.
type Recorded struct {
	// Object is the object the event is about (regarding, for the events.k8s.io/v1 form).
	Object runtime.Object
	// Related is the related object of the events.k8s.io/v1 form, nil otherwise.
	Related runtime.Object
	// Annotations are the annotations given to AnnotatedEventf, copied.
	Annotations map[string]string
	// Type is Normal or Warning (not checked).
	Type string
	// Reason is the event's reason.
	Reason string
	// Action is set by the events.k8s.io/v1 form only.
	Action string
	// Message is the formatted message (the note, for the events.k8s.io/v1 form).
	Message string
}

// String renders r as client-go's FakeRecorder does: "Type Reason Message".
func (r Recorded) String() string { return r.Type + " " + r.Reason + " " + r.Message }

// Recorder records every call in memory, for tests of code that takes client-go's
// record.EventRecorder (Event, Eventf, AnnotatedEventf). It never drops. Safe for concurrent
// use; the zero value is ready.
type Recorder struct {
	mu    sync.Mutex
	calls []Recorded
}

// Event records an event about object.
func (r *Recorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.add(Recorded{Object: object, Type: eventtype, Reason: reason, Message: message})
}

// Eventf records an event with a message formatted by fmt.Sprintf.
func (r *Recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	r.add(Recorded{Object: object, Type: eventtype, Reason: reason, Message: fmt.Sprintf(messageFmt, args...)})
}

// AnnotatedEventf records an event with annotations (copied).
func (r *Recorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	r.add(Recorded{Object: object, Annotations: maps.Clone(annotations), Type: eventtype, Reason: reason, Message: fmt.Sprintf(messageFmt, args...)})
}

func (r *Recorder) add(c Recorded) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

// Events returns a copy of the calls so far, in order.
func (r *Recorder) Events() []Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Recorded(nil), r.calls...)
}

// Strings returns the calls so far rendered by Recorded.String.
func (r *Recorder) Strings() []string {
	var out []string
	for _, c := range r.Events() {
		out = append(out, c.String())
	}
	return out
}

// Reset forgets the calls so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

// SeriesRecorder records every call in memory, for tests of code that takes client-go's
// tools/events EventRecorder (Eventf, AnnotatedEventf with regarding, related, action and note).
// It never drops. Safe for concurrent use; the zero value is ready.
type SeriesRecorder struct {
	r Recorder
}

// Eventf records an event about regarding (related may be nil).
func (s *SeriesRecorder) Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	s.r.add(Recorded{Object: regarding, Related: related, Type: eventtype, Reason: reason, Action: action, Message: fmt.Sprintf(note, args...)})
}

// AnnotatedEventf is Eventf with annotations (copied).
func (s *SeriesRecorder) AnnotatedEventf(regarding runtime.Object, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string, args ...interface{}) {
	s.r.add(Recorded{Object: regarding, Related: related, Annotations: maps.Clone(annotations), Type: eventtype, Reason: reason, Action: action, Message: fmt.Sprintf(note, args...)})
}

// Events returns a copy of the calls so far, in order.
func (s *SeriesRecorder) Events() []Recorded { return s.r.Events() }

// Strings returns the calls so far rendered by Recorded.String.
func (s *SeriesRecorder) Strings() []string { return s.r.Strings() }

// Reset forgets the calls so far.
func (s *SeriesRecorder) Reset() { s.r.Reset() }
