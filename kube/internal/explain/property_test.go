package explain

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

// TestEventsInTimeOrder: whatever order the API lists a pod's events in,
// the report has every one of them once, oldest last-seen second first.
func TestEventsInTimeOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 12).Draw(t, "n")
		var in []corev1.Event
		for i := range n {
			last := time.Duration(rapid.IntRange(0, 20_000).Draw(t, "lastMs")) * time.Millisecond
			first := last - time.Duration(rapid.IntRange(0, 5_000).Draw(t, "spanMs"))*time.Millisecond
			e := corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i)},
				Reason:  rapid.SampledFrom([]string{"Scheduled", "Pulling", "Pulled", "Created", "Started", "BackOff", "Killing"}).Draw(t, "reason"),
				Message: fmt.Sprintf("m%d", i), Count: int32(rapid.IntRange(0, 5).Draw(t, "count"))}
			if rapid.Bool().Draw(t, "series") {
				e.EventTime = metav1.NewMicroTime(t0.Add(first))
				e.Series = &corev1.EventSeries{Count: e.Count, LastObservedTime: metav1.NewMicroTime(t0.Add(last))}
			} else {
				e.FirstTimestamp, e.LastTimestamp = metav1.NewTime(t0.Add(first).Truncate(time.Second)), metav1.NewTime(t0.Add(last).Truncate(time.Second))
			}
			in = append(in, e)
		}
		out := sortEvents(in)
		if len(out) != len(in) {
			t.Fatalf("%d events in, %d out", len(in), len(out))
		}
		seen := map[string]bool{}
		for i, e := range out {
			if seen[e.Message] {
				t.Fatalf("event %s twice", e.Message)
			}
			seen[e.Message] = true
			if e.Count < 1 {
				t.Fatalf("event %s with count %d", e.Message, e.Count)
			}
			if i > 0 && e.LastSeen.Truncate(time.Second).Before(out[i-1].LastSeen.Truncate(time.Second)) {
				t.Fatalf("event %d (%v) before event %d (%v)", i, e.LastSeen, i-1, out[i-1].LastSeen)
			}
		}
	})
}

// TestCrashLoopDelayBounded: the estimated back-off never shrinks with more
// restarts, starts at zero, and stays within the kubelet's 300 s cap.
func TestCrashLoopDelayBounded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := int32(rapid.IntRange(0, 10_000).Draw(t, "restarts"))
		a, b := crashLoopDelay(r, t0, t0.Add(time.Second)), crashLoopDelay(r+1, t0, t0.Add(time.Second))
		if a > b || a < 0 || b > 300*time.Second || (r == 0 && a != 0) {
			t.Fatalf("restarts %d: delay %v, then %v", r, a, b)
		}
	})
}
