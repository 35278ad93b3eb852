package events

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Series timing of client-go v0.37.2 tools/events (spec B.1).
const (
	// SeriesFinish is the finish period and the inactivity limit of series and singletons.
	SeriesFinish = 6 * time.Minute
	// SeriesRefresh is the period at which every open series is written again.
	SeriesRefresh = 30 * time.Minute
)

// SeriesKey is the isomorphic key of an events.k8s.io/v1 event: everything that identifies
// it except the note. The whole regarding and related references are part of it, field path and
// resourceVersion included. A struct, so keys never collide.
type SeriesKey struct {
	// Type, Action and Reason are the event's.
	Type, Action, Reason string
	// ReportingController and ReportingInstance identify who reports the event.
	ReportingController, ReportingInstance string
	// Regarding is the whole reference of the object the event is about; Related the whole
	// related reference, zero when there is none.
	Regarding, Related v1.ObjectReference
}

// KeyOf returns the isomorphic key of ev; the zero key for a nil ev.
func KeyOf(ev *eventsv1.Event) SeriesKey {
	if ev == nil {
		return SeriesKey{}
	}
	k := SeriesKey{
		Type: ev.Type, Action: ev.Action, Reason: ev.Reason,
		ReportingController: ev.ReportingController, ReportingInstance: ev.ReportingInstance,
		Regarding: ev.Regarding,
	}
	if ev.Related != nil {
		k.Related = *ev.Related
	}
	return k
}

// SeriesWrite is one write the series machine asks for: create Event when Patch is nil,
// otherwise patch it with Patch (the series) and create it if the patch finds nothing (404).
// Event is a copy the caller owns.
type SeriesWrite struct {
	// Key is the isomorphic key of the event.
	Key SeriesKey
	// Event is the event to write, a copy owned by the caller.
	Event *eventsv1.Event
	// Patch is the series patch, nil for a create.
	Patch []byte
}

// Series is the event cache of client-go's tools/events broadcaster as a value (spec B.3, B.4):
// the first occurrence of an isomorphic event is created; the second turns it into a series
// with count 2 and is written as a patch; later ones are counted locally and written only by
// Refresh (every 30 min) and Finish (every 6 min, for series idle longer than 6 min). Time is an
// argument. As in client-go the cache has no size bound: entries leave only through Finish,
// so its size follows the number of distinct events of the last 6 minutes. The zero value is
// an empty cache, ready to use. A Series is not safe for concurrent use.
type Series struct {
	cache map[SeriesKey]*eventsv1.Event
}

// NewSeries returns an empty series cache.
func NewSeries() *Series {
	return &Series{cache: make(map[SeriesKey]*eventsv1.Event)}
}

// Len returns the number of cached events (singletons and series).
func (s *Series) Len() int {
	if s == nil {
		return 0
	}
	return len(s.cache)
}

// Get returns a copy of the cached event for k, if any.
func (s *Series) Get(k SeriesKey) (*eventsv1.Event, bool) {
	if s == nil {
		return nil, false
	}
	ev, ok := s.cache[k]
	if !ok {
		return nil, false
	}
	return ev.DeepCopy(), true
}

// Observe records one occurrence of ev at now and returns the write it needs, if any: a create
// for a new event, a series patch with count 2 for the second occurrence, nothing for later
// ones (their note, time and name are discarded; the series keeps the first event's). ev is
// not modified; a nil ev (or a nil s) is ignored and needs no write.
func (s *Series) Observe(ev *eventsv1.Event, now time.Time) (SeriesWrite, bool) {
	if s == nil || ev == nil {
		return SeriesWrite{}, false
	}
	if s.cache == nil {
		s.cache = make(map[SeriesKey]*eventsv1.Event)
	}
	k := KeyOf(ev)
	cached, ok := s.cache[k]
	if !ok {
		c := ev.DeepCopy()
		s.cache[k] = c
		return SeriesWrite{Key: k, Event: c.DeepCopy()}, true
	}
	if cached.Series != nil {
		cached.Series.Count++
		cached.Series.LastObservedTime = metav1.NewMicroTime(now)
		return SeriesWrite{}, false
	}
	cached.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(now)}
	return s.write(k, cached), true
}

func (s *Series) write(k SeriesKey, cached *eventsv1.Event) SeriesWrite {
	w := SeriesWrite{Key: k, Event: cached.DeepCopy()}
	if cached.Series != nil {
		w.Patch = appendSeriesPatch(nil, cached.Series)
	}
	return w
}

// Refresh returns a write for every open series, for the 30 min refresh, in a stable order
// (client-go walks a map). After each successful write call Refreshed.
func (s *Series) Refresh() []SeriesWrite {
	if s == nil {
		return nil
	}
	var out []SeriesWrite
	for k, ev := range s.cache {
		if ev.Series != nil {
			out = append(out, s.write(k, ev))
		}
	}
	sortWrites(out)
	return out
}

// Refreshed replaces the cached event of w with the server's copy after a successful refresh
// write, as client-go does. A nil server copy, or a key no longer cached, changes nothing.
func (s *Series) Refreshed(w SeriesWrite, server *eventsv1.Event) {
	if s == nil || server == nil {
		return
	}
	if _, ok := s.cache[w.Key]; ok {
		s.cache[w.Key] = server.DeepCopy()
	}
}

// Finish returns the final write of every series whose last occurrence is more than 6 min
// before now, and silently forgets every singleton whose event time is more than 6 min before
// now (a later repeat then starts a new event, not a series). After each final write call
// Finished with whether the write asked for a retry.
func (s *Series) Finish(now time.Time) []SeriesWrite {
	if s == nil {
		return nil
	}
	limit := now.Add(-SeriesFinish)
	var out []SeriesWrite
	for k, ev := range s.cache {
		if ev.Series != nil {
			if ev.Series.LastObservedTime.Before(&metav1.MicroTime{Time: limit}) {
				out = append(out, s.write(k, ev))
			}
		} else if ev.EventTime.Time.Before(limit) {
			delete(s.cache, k)
		}
	}
	sortWrites(out)
	return out
}

// Finished forgets the series of w after its final write, unless retry is true (the write
// failed with a retryable error), in which case the next Finish tries again.
func (s *Series) Finished(w SeriesWrite, retry bool) {
	if s != nil && !retry {
		delete(s.cache, w.Key)
	}
}

func sortWrites(ws []SeriesWrite) {
	sort.Slice(ws, func(i, j int) bool {
		a, b := ws[i].Event, ws[j].Event
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		// Same name: rare (same object and nanosecond); order by the whole key.
		return fmt.Sprintf("%+v", ws[i].Key) < fmt.Sprintf("%+v", ws[j].Key)
	})
}

// appendSeriesPatch appends the strategic merge patch client-go sends for a series: the
// two-way patch from the event without series to the event, that is {"series":{...}} with the
// count and the last observed time in microseconds (null when unset).
func appendSeriesPatch(dst []byte, se *eventsv1.EventSeries) []byte {
	dst = append(dst, `{"series":{"count":`...)
	dst = strconv.AppendInt(dst, int64(se.Count), 10)
	dst = append(dst, `,"lastObservedTime":`...)
	if se.LastObservedTime.IsZero() {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '"')
		dst = se.LastObservedTime.UTC().AppendFormat(dst, metav1.RFC3339Micro)
		dst = append(dst, '"')
	}
	return append(dst, "}}"...)
}
