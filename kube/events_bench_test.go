package kube_test

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
)

var benchStart = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func benchEvent(pod int, msg string) *v1.Event {
	ref := v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: fmt.Sprintf("pod-%d", pod), UID: types.UID(fmt.Sprintf("uid-%d", pod)), APIVersion: "v1", FieldPath: "spec.containers{app}"}
	return &v1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d.%x", pod, benchStart.UnixNano()), Namespace: "default"},
		InvolvedObject:      ref,
		Reason:              "BackOff",
		Message:             msg,
		Source:              v1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp:      metav1.NewTime(benchStart),
		LastTimestamp:       metav1.NewTime(benchStart),
		Count:               1,
		Type:                v1.EventTypeWarning,
		ReportingController: "kubelet",
		ReportingInstance:   "node-1",
	}
}

// stream is one benchmark workload: the event for iteration i and the time step before it.
type stream struct {
	name  string
	event func(i int) *v1.Event
	step  time.Duration
	// prime is how many events to feed before timing (at least one, so that a repeat is a
	// repeat; 25 empty the spam bucket).
	prime int
	want  events.Decision // 0: any
}

func streams() []stream {
	repeat := benchEvent(0, "Back-off restarting failed container app in pod pod-0")
	unique := make([]*v1.Event, 8192)
	for i := range unique {
		unique[i] = benchEvent(i, "Started container app")
	}
	similar := make([]*v1.Event, 64)
	for i := range similar {
		similar[i] = benchEvent(0, fmt.Sprintf("Failed to pull image \"registry.example/app:%d\": not found", i))
	}
	return []stream{
		// 300 s between repeats gives back the token each one takes: every event is a patch.
		{name: "repeat", event: func(int) *v1.Event { return repeat }, step: 300 * time.Second, want: events.Patch},
		{name: "spam", event: func(int) *v1.Event { return repeat }, prime: events.DefaultBurst, want: events.Skip},
		{name: "new", event: func(i int) *v1.Event { return unique[i%len(unique)] }, step: time.Millisecond, want: events.Create},
		{name: "aggregate", event: func(i int) *v1.Event { return similar[i%len(similar)] }, step: 300 * time.Second},
	}
}

// BenchmarkCorrelator runs the same streams through client-go's EventCorrelator and nodestate's
// Correlator: each event is correlated and, when written, fed back with UpdateState.
// "nodestate" uses Correlate (a new event and patch per result, like client-go's API);
// "nodestate-reuse" uses CorrelateTo with one event and one patch buffer for the run, as the
// broadcaster does.
func BenchmarkCorrelator(b *testing.B) {
	for _, s := range streams() {
		b.Run(s.name+"/client-go", func(b *testing.B) {
			fc := testingclock.NewFakeClock(benchStart)
			c := record.NewEventCorrelator(fc)
			now := benchStart
			one := func(i int) *record.EventCorrelateResult {
				now = now.Add(s.step)
				fc.SetTime(now)
				ev := s.event(i)
				ev.LastTimestamp = metav1.NewTime(now)
				res, err := c.EventCorrelate(ev)
				if err != nil {
					b.Fatal(err)
				}
				if !res.Skip {
					c.UpdateState(res.Event)
				}
				return res
			}
			for i := range max(s.prime, 1) {
				one(i)
			}
			i := 1
			b.ReportAllocs()
			for b.Loop() {
				res := one(i)
				if s.want == events.Skip && !res.Skip || s.want == events.Patch && (res.Skip || res.Event.Count < 2) {
					b.Fatalf("unexpected result %+v", res)
				}
				i++
			}
		})
		b.Run(s.name+"/nodestate", func(b *testing.B) {
			c, err := events.NewCorrelator(events.DefaultCorrelatorOptions())
			if err != nil {
				b.Fatal(err)
			}
			now := benchStart
			one := func(i int) events.Result {
				now = now.Add(s.step)
				ev := s.event(i)
				ev.LastTimestamp = metav1.NewTime(now)
				res, err := c.Correlate(ev, now)
				if err != nil {
					b.Fatal(err)
				}
				if res.Decision != events.Skip {
					c.UpdateState(res.Event)
				}
				return res
			}
			for i := range max(s.prime, 1) {
				one(i)
			}
			i := 1
			b.ReportAllocs()
			for b.Loop() {
				if res := one(i); s.want != 0 && res.Decision != s.want {
					b.Fatalf("decision %v, want %v", res.Decision, s.want)
				}
				i++
			}
		})
		b.Run(s.name+"/nodestate-reuse", func(b *testing.B) {
			c, err := events.NewCorrelator(events.DefaultCorrelatorOptions())
			if err != nil {
				b.Fatal(err)
			}
			var dst v1.Event
			var buf []byte
			now := benchStart
			one := func(i int) events.Decision {
				now = now.Add(s.step)
				ev := s.event(i)
				ev.LastTimestamp = metav1.NewTime(now)
				d, _, patch, err := c.CorrelateTo(ev, now, &dst, buf)
				if err != nil {
					b.Fatal(err)
				}
				if patch != nil {
					buf = patch
				}
				if d != events.Skip {
					c.UpdateState(&dst)
				}
				return d
			}
			for i := range max(s.prime, 1) {
				one(i)
			}
			i := 1
			b.ReportAllocs()
			for b.Loop() {
				if d := one(i); s.want != 0 && d != s.want {
					b.Fatalf("decision %v, want %v", d, s.want)
				}
				i++
			}
		})
	}
}
