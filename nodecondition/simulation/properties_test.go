package simulation_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	nc "github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/nodecondition/nodeconditiontest"
	sim "github.com/nodestate/nodestate/nodecondition/simulation"
)

// Every generated scenario satisfies every timeline invariant, and the same
// scenario always gives the same timeline.
func TestPropertyTimelineInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := nodeconditiontest.Scenario().Draw(t, "scenario")
		tl, err := sim.Simulate(sc)
		if err != nil {
			t.Fatal(err)
		}
		if err := nodeconditiontest.CheckTimeline(sc, tl); err != nil {
			t.Fatalf("%v\n%s", err, tl.Table())
		}
		again, err := sim.Simulate(sc)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tl, again); diff != "" {
			t.Fatalf("simulation is not deterministic (-first +second):\n%s", diff)
		}
	})
}

// A node that heartbeats within the grace period is never marked Unknown
// (spec 5.1, 5.2): outages of at most 35 s plus the 10 s renew interval plus
// the 5 s pass period stay within 50 s.
func TestPropertyHeartbeatingNodeNeverUnknown(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		horizon := 10 * time.Minute
		sc := sim.Scenario{Duration: horizon}
		for i := range rapid.IntRange(1, 4).Draw(t, "nodes") {
			sc.Nodes = append(sc.Nodes, sim.Node{
				Name: fmt.Sprintf("node-%d", i),
				Zone: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "zone"),
				Down: nodeconditiontest.ShortOutages(horizon, 35*time.Second, 4).Draw(t, "down"),
			})
		}
		tl, err := sim.Simulate(sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tl.Entries {
			if e.Kind == sim.KindCondition && e.To == string(v1.ConditionUnknown) {
				t.Fatalf("%s went Unknown at %v although it heartbeats within the grace period\n%s", e.Node, e.At, tl.Table())
			}
		}
	})
}

// When every zone is fully disrupted nothing is evicted (spec 5.6): every
// kubelet stops at t=0, so every node goes Unknown in the same pass and the
// controller enters its master disruption mode before any taint.
func TestPropertyFullDisruptionEvictsNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sc := sim.Scenario{Duration: 8 * time.Minute}
		for i := range rapid.IntRange(1, 4).Draw(t, "nodes") {
			sc.Nodes = append(sc.Nodes, sim.Node{
				Name: fmt.Sprintf("node-%d", i),
				Zone: rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "zone"),
				Down: []sim.Interval{{From: 0}},
				Pods: nodeconditiontest.Pods(3).Draw(t, "pods"),
			})
			for j := range sc.Nodes[i].Pods {
				sc.Nodes[i].Pods[j].Name = fmt.Sprintf("n%d-%s", i, sc.Nodes[i].Pods[j].Name)
			}
		}
		tl, err := sim.Simulate(sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tl.Entries {
			if e.Kind == sim.KindPodDeleted || (e.Kind == sim.KindTaintAdded && e.Subject == taintUnreachableNE) {
				t.Fatalf("every kubelet is down, every zone FullDisruption, yet %v\n%s", e, tl.Table())
			}
		}
		if err := nodeconditiontest.CheckNoEvictionInFullDisruption(tl); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzParseScenario: any scenario text parses or gives a typed error; what
// parses simulates without error and satisfies the timeline invariants.
func FuzzParseScenario(f *testing.F) {
	f.Add("name x\nduration 3m\nnode n1 zone=a down=0s- pods=a:none,b:default,c:0,d:forever\nnode n2 zone=a")
	f.Add("node n1 network=10s-20s,1m- memory=30s:50Mi,1m:4Gi runtime=5s-9s\nseed 7\ngrace 40s")
	f.Add("grace 5s\nnode n")
	f.Add("phase 2s\npass-duration 10ms\nwindow 2\ndefault-tolerations off\nnode n down=0s- pods=a,b:pending")
	f.Fuzz(func(t *testing.T, text string) {
		sc, err := sim.ParseScenario(text)
		if err != nil {
			if !errors.Is(err, sim.ErrInvalidInput) && !errors.Is(err, nc.ErrInvalidOptions) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if sc.Duration > 30*time.Minute || len(sc.Nodes) > 20 || sc.WindowPhases > 3 {
			return // valid but too slow for a fuzz iteration
		}
		tl, err := sim.Simulate(sc)
		if err != nil {
			t.Fatalf("a parsed scenario failed: %v", err)
		}
		if err := nodeconditiontest.CheckTimeline(sc, tl); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzParseIntervals: no panic; parsed spans are well formed.
func FuzzParseIntervals(f *testing.F) {
	f.Add("30s-50s,200s-")
	f.Add("-1s-2s")
	f.Fuzz(func(t *testing.T, s string) {
		ivs, err := sim.ParseIntervals(s)
		if err != nil {
			if !errors.Is(err, sim.ErrInvalidInput) {
				t.Fatal(err)
			}
			return
		}
		for _, iv := range ivs {
			if iv.From < 0 || (iv.To != 0 && iv.To <= iv.From) {
				t.Fatalf("bad span %+v from %q", iv, s)
			}
		}
	})
}

// BenchmarkSimulateKubeletStops runs the kubelet-stops scenario end to end,
// with its window over 10 monitor phases (11 simulations).
func BenchmarkSimulateKubeletStops(b *testing.B) {
	s := sim.ScenarioKubeletStops()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sim.Simulate(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSimulateKubeletStopsOneRun runs the kubelet-stops scenario once,
// without the window's extra runs (the work of one simulation).
func BenchmarkSimulateKubeletStopsOneRun(b *testing.B) {
	s := sim.ScenarioKubeletStops()
	s.WindowPhases = 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sim.Simulate(s); err != nil {
			b.Fatal(err)
		}
	}
}
