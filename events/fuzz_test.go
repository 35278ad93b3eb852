package events_test

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nodestate/nodestate/events"
)

// FuzzEventName: any object name gives a valid event name (client-go's form or a UUID), and
// the client-go form whenever that one is valid.
func FuzzEventName(f *testing.F) {
	f.Add("test-pod", int64(105999103295324396))
	f.Add("2001:db8::123", int64(-1))
	f.Add("", int64(0))
	f.Fuzz(func(t *testing.T, name string, nanos int64) {
		got := events.EventName(name, nanos, zeroRand{})
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Fatalf("EventName(%q) = %q, not a DNS subdomain: %v", name, got, errs)
		}
	})
}

// FuzzValidateSeriesEvent: validation never panics and refuses exactly what the server would.
func FuzzValidateSeriesEvent(f *testing.F) {
	f.Add("Normal", "Started", "Start", "note")
	f.Add("Info", "", "", "")
	f.Fuzz(func(t *testing.T, typ, reason, action, note string) {
		err := events.ValidateSeriesEvent(typ, reason, action, note)
		ok := (typ == "Normal" || typ == "Warning") && reason != "" && len(reason) <= 128 && action != "" && len(action) <= 128 && len(note) <= 1024
		var inv *events.InvalidEventError
		if ok != (err == nil) || (err != nil && !errors.As(err, &inv)) {
			t.Fatalf("ValidateSeriesEvent(%q, %q, %q, %d bytes) = %v", typ, reason, action, len(note), err)
		}
	})
}

// FuzzSeriesObserve: arbitrary events never panic the series cache; the second occurrence of
// any event is a series of two, the third writes nothing, and Finish after 6 min idle writes
// the final count of three and empties the cache.
func FuzzSeriesObserve(f *testing.F) {
	f.Add("Pod", "ns", "name", "Normal", "Reason", "Action", "note", int64(0))
	f.Add("", "", "", "", "", "", "", int64(-1<<62))
	f.Fuzz(func(t *testing.T, kind, ns, name, typ, reason, action, note string, nanos int64) {
		s := events.NewSeries()
		at := time.Unix(0, nanos)
		ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, EventTime: metav1.NewMicroTime(at),
			Regarding: v1.ObjectReference{Kind: kind, Namespace: ns, Name: name}, Type: typ, Reason: reason, Action: action, Note: note}
		if w, ok := s.Observe(ev, at); !ok || w.Patch != nil {
			t.Fatal("first occurrence must be a create")
		}
		if w, ok := s.Observe(ev, at); !ok || w.Event.Series == nil || w.Event.Series.Count != 2 {
			t.Fatal("second occurrence must be a series of 2")
		}
		if _, ok := s.Observe(ev, at); ok {
			t.Fatal("third occurrence must write nothing")
		}
		later := at.Add(events.SeriesFinish + time.Second)
		if later.Before(at) {
			return // overflow at the end of time
		}
		ws := s.Finish(later)
		if len(ws) != 1 || ws[0].Event.Series.Count != 3 {
			t.Fatalf("finish: %d writes", len(ws))
		}
		s.Finished(ws[0], false)
		if s.Len() != 0 {
			t.Fatal("finished series kept")
		}
	})
}
