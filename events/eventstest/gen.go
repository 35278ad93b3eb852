package eventstest

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"
)

// Step is one event of a generated stream and the instant it is observed.
type Step struct {
	// Event is the event as a recorder built it.
	Event *v1.Event
	// At is when the event is observed (its timestamps say the same).
	At time.Time
}

// StreamStart is the instant generated streams start from.
var StreamStart = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// gaps are the time steps between events: bursts, the 300 s spam refill, the 600 s
// aggregation window and just past it, and the 6 min series finish period.
var gaps = []time.Duration{0, time.Millisecond, time.Second, 5 * time.Second, 299 * time.Second,
	300 * time.Second, 600 * time.Second, 601 * time.Second, 6*time.Minute + time.Second}

// Event draws one core/v1 event as a recorder would build it at at: a pod or node from a small
// pool (so keys repeat), type Normal or Warning, a reason and message from small pools (so
// events dedup and aggregate), sometimes a field path, count 1 and both timestamps at at.
func Event(at time.Time) *rapid.Generator[*v1.Event] {
	return rapid.Custom(func(t *rapid.T) *v1.Event {
		obj := rapid.IntRange(0, 2).Draw(t, "object")
		ref := v1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: fmt.Sprintf("pod-%d", obj), UID: types.UID(fmt.Sprintf("uid-%d", obj)), APIVersion: "v1"}
		if obj == 2 {
			ref = v1.ObjectReference{Kind: "Node", Name: "node-1", UID: "node-uid", APIVersion: "v1"}
		}
		if rapid.IntRange(0, 3).Draw(t, "fieldPathDraw") == 0 {
			ref.FieldPath = fmt.Sprintf("spec.containers{c%d}", rapid.IntRange(0, 1).Draw(t, "container"))
		}
		ns := ref.Namespace
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		host := rapid.SampledFrom([]string{"node-1", "node-2"}).Draw(t, "host")
		return &v1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", ref.Name, at.UnixNano()), Namespace: ns},
			InvolvedObject:      ref,
			Reason:              rapid.SampledFrom([]string{"BackOff", "Failed", "Pulling"}).Draw(t, "reason"),
			Message:             fmt.Sprintf("message %d", rapid.IntRange(0, 13).Draw(t, "message")),
			Source:              v1.EventSource{Component: "kubelet", Host: host},
			FirstTimestamp:      metav1.NewTime(at),
			LastTimestamp:       metav1.NewTime(at),
			Count:               1,
			Type:                rapid.SampledFrom([]string{v1.EventTypeNormal, v1.EventTypeWarning}).Draw(t, "type"),
			ReportingController: "kubelet",
			ReportingInstance:   host,
		}
	})
}

// Stream draws a stream of between 1 and maxLen events with nondecreasing instants, mixing
// fresh events with runs of similar events (same identity, different messages, to reach the
// aggregation threshold) and bursts of identical repeats (to reach the spam filter's burst).
// A maxLen below 1 is read as 1.
func Stream(maxLen int) *rapid.Generator[[]Step] {
	maxLen = max(maxLen, 1)
	return rapid.Custom(func(t *rapid.T) []Step {
		n := rapid.IntRange(1, maxLen).Draw(t, "length")
		at := StreamStart
		var out []Step
		for len(out) < n {
			at = at.Add(rapid.SampledFrom(gaps).Draw(t, "gap"))
			ev := Event(at).Draw(t, "event")
			out = append(out, Step{Event: ev, At: at})
			if rapid.IntRange(0, 4).Draw(t, "similarDraw") == 0 {
				// a run of similar events: same identity, messages from the pool, so that
				// ten distinct messages come together and aggregate
				for range rapid.IntRange(1, 25).Draw(t, "similar") {
					if len(out) >= n {
						break
					}
					at = at.Add(rapid.SampledFrom(gaps[:6]).Draw(t, "similarGap"))
					sim := ev.DeepCopy()
					sim.FirstTimestamp, sim.LastTimestamp = metav1.NewTime(at), metav1.NewTime(at)
					sim.Message = fmt.Sprintf("message %d", rapid.IntRange(0, 13).Draw(t, "similarMessage"))
					out = append(out, Step{Event: sim, At: at})
				}
			}
			if rapid.IntRange(0, 5).Draw(t, "burstDraw") == 0 {
				for range rapid.IntRange(1, 30).Draw(t, "burst") {
					if len(out) >= n {
						break
					}
					at = at.Add(rapid.SampledFrom(gaps[:4]).Draw(t, "burstGap"))
					rep := ev.DeepCopy()
					rep.FirstTimestamp, rep.LastTimestamp = metav1.NewTime(at), metav1.NewTime(at)
					out = append(out, Step{Event: rep, At: at})
				}
			}
		}
		return out
	})
}
