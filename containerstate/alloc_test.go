//go:build !race

package containerstate

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestStepAllocatesNothing counts allocations (not time) of accepted events
// through a crash-loop cycle. The race detector allocates on its own, so this
// test runs without it.
func TestStepAllocatesNothing(t *testing.T) {
	spec := &v1.PodSpec{Containers: []v1.Container{{Name: "app", ReadinessProbe: &v1.Probe{}}}}
	m, err := NewMachine(DefaultOptions(), Pod{Spec: spec, Name: "web", Namespace: "default", UID: "u"}, "app")
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, RetiredIDs+3) // an ID comes back only once it is forgotten
	for n := range ids {
		ids[n] = "c://" + string(rune('a'+n))
	}
	backoff := BackOffEvent(t0, 10*time.Second, "app", "web", "default", "u")
	i, cycle := 0, 0
	allocs := testing.AllocsPerRun(200, func() {
		id := ids[cycle%len(ids)]
		cycle++
		for _, ev := range [...]Event{
			{Kind: Created, ContainerID: id}, {Kind: Started, ContainerID: id},
			{Kind: ReadinessProbe, Result: ProbeSuccess}, {Kind: Unknown, ContainerID: id}, {Kind: Started, ContainerID: id},
			{Kind: Exited, ContainerID: id, ExitCode: 1, Reason: ReasonError}, backoff, {Kind: Removed, ContainerID: id},
		} {
			i++
			ev.At = t0.Add(time.Duration(i) * time.Second)
			if err := m.Step(ev); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("Step allocated %v times per cycle of accepted events", allocs)
	}
}
