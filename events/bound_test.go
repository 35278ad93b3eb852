package events_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/events"
)

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestCorrelatorMillionDistinctEvents: a million distinct events keep every cache of the
// correlator within its bound, and the heap does not grow with the number of events.
func TestCorrelatorMillionDistinctEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("a million events")
	}
	c := mustCorrelator(t, events.DefaultCorrelatorOptions())
	ev := newEvent(podRef("foo", "bar", ""), v1.EventTypeNormal, "Started", "started", t0)
	warm := heapAlloc()
	for i := range distinctEvents {
		ev.InvolvedObject.Name = "pod-" + strconv.Itoa(i)
		now := t0.Add(time.Duration(i) * time.Millisecond)
		res, err := c.Correlate(ev, now)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision != events.Create {
			t.Fatalf("event %d: %v, want a create", i, res.Decision)
		}
		c.UpdateState(res.Event)
		if i%50_000 == 0 || i == distinctEvents-1 {
			if a, d, s := c.Len(); a > events.DefaultCacheSize || d > events.DefaultCacheSize || s > events.DefaultCacheSize {
				t.Fatalf("after %d events the caches hold %d, %d, %d entries; the bound is %d", i+1, a, d, s, events.DefaultCacheSize)
			}
		}
	}
	// 3 caches of 4096 entries of a few hundred bytes each, plus the names they keep: a few MB.
	if grew := int64(heapAlloc()) - int64(warm); grew > 16<<20 {
		t.Fatalf("heap grew by %d bytes over a million events", grew)
	}
}

// nullSink accepts every write.
type nullSink struct{}

func (nullSink) Create(_ context.Context, ev *v1.Event) (*v1.Event, error) { return ev, nil }
func (nullSink) Patch(_ context.Context, ev *v1.Event, _ []byte) (*v1.Event, error) {
	return ev, nil
}

// TestBroadcasterMillionDistinctEvents: the same through recorder and broadcaster: the sink's
// correlator never holds more than its bound.
func TestBroadcasterMillionDistinctEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("a million events")
	}
	b, err := events.NewBroadcaster(events.DefaultBroadcasterOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.StartRecordingToSink(nullSink{}, events.DefaultCorrelatorOptions()); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecorder(v1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}}
	for i := range distinctEvents {
		pod.Name = "pod-" + strconv.Itoa(i)
		for {
			err := rec.Record(pod, nil, v1.EventTypeNormal, "Started", "started")
			if !errors.Is(err, events.ErrQueueFull) {
				if err != nil {
					t.Fatal(err)
				}
				break
			}
			runtime.Gosched() // the queue is full: let the sink catch up and record again
		}
		if i%100_000 == 0 {
			if n := b.Stats().Sinks[0].CacheEntries; n > events.DefaultCacheSize {
				t.Fatalf("after %d events the correlator holds %d entries", i, n)
			}
		}
	}
	if err := shutdownWithin(t, b, context.Background()); err != nil {
		t.Fatal(err)
	}
	st := b.Stats()
	if st.Submitted-st.Sinks[0].DroppedQueueFull != distinctEvents || st.Sinks[0].Created != distinctEvents || st.Sinks[0].CacheEntries > events.DefaultCacheSize || st.Sinks[0].CacheEntries < events.DefaultCacheSize {
		t.Fatalf("stats %+v: want a million created and a full, bounded cache", st)
	}
}
