package nodeconditiontest

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	nc "github.com/nodestate/nodestate/nodecondition"
	sim "github.com/nodestate/nodestate/nodecondition/simulation"
)

// Outages generates up to max disjoint kubelet outage spans within horizon,
// on a one-second grid, in time order. The last span may be open (To == 0).
func Outages(horizon time.Duration, max int) *rapid.Generator[[]sim.Interval] {
	return rapid.Custom(func(t *rapid.T) []sim.Interval {
		n := rapid.IntRange(0, max).Draw(t, "outages")
		var out []sim.Interval
		cur := time.Duration(0)
		for i := 0; i < n && cur < horizon; i++ {
			from := cur + time.Duration(rapid.IntRange(0, int(horizon/time.Second)/2).Draw(t, "gap"))*time.Second
			if from >= horizon {
				break
			}
			length := time.Duration(rapid.IntRange(1, 240).Draw(t, "length")) * time.Second
			to := from + length
			if i == n-1 && rapid.Bool().Draw(t, "open") {
				to = 0
			}
			out = append(out, sim.Interval{From: from, To: to})
			if to == 0 {
				break
			}
			cur = to + time.Second
		}
		return out
	})
}

// ShortOutages generates outage spans no longer than maxLen, so that a node
// with them keeps heartbeating within a grace period longer than maxLen plus
// the renew interval and the monitor period. A maxLen under a second gives none.
func ShortOutages(horizon, maxLen time.Duration, max int) *rapid.Generator[[]sim.Interval] {
	return rapid.Custom(func(t *rapid.T) []sim.Interval {
		n := rapid.IntRange(0, max).Draw(t, "outages")
		var out []sim.Interval
		cur := time.Duration(0)
		for i := 0; i < n && maxLen >= time.Second; i++ {
			from := cur + time.Duration(rapid.IntRange(1, 120).Draw(t, "gap"))*time.Second
			to := from + time.Duration(rapid.IntRange(1, int(maxLen/time.Second)).Draw(t, "length"))*time.Second
			if to >= horizon {
				break
			}
			out = append(out, sim.Interval{From: from, To: to})
			cur = to
		}
		return out
	})
}

// Tolerations generates the tolerations a pod may carry for the not-ready and
// unreachable NoExecute taints: none, seconds (0 to 400, or negative), or
// forever, sometimes as a wildcard.
func Tolerations() *rapid.Generator[[]v1.Toleration] {
	return rapid.Custom(func(t *rapid.T) []v1.Toleration {
		var out []v1.Toleration
		for _, key := range []string{nc.TaintNotReady, nc.TaintUnreachable} {
			switch rapid.IntRange(0, 3).Draw(t, "kind "+key) {
			case 0: // none
			case 1:
				s := int64(rapid.IntRange(-5, 400).Draw(t, "seconds "+key))
				out = append(out, v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &s})
			case 2:
				out = append(out, v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute})
			case 3:
				s := int64(rapid.IntRange(0, 400).Draw(t, "wild seconds "+key))
				out = append(out, v1.Toleration{Operator: v1.TolerationOpExists, TolerationSeconds: &s})
			}
		}
		return out
	})
}

// Pods generates up to max pods with generated tolerations.
func Pods(max int) *rapid.Generator[[]sim.Pod] {
	return rapid.Custom(func(t *rapid.T) []sim.Pod {
		n := rapid.IntRange(0, max).Draw(t, "pods")
		out := make([]sim.Pod, n)
		for i := range out {
			out[i] = sim.Pod{Name: fmt.Sprintf("pod-%d", i), Tolerations: Tolerations().Draw(t, "tolerations"),
				NoReadyCondition: rapid.IntRange(0, 4).Draw(t, "no ready condition") == 0}
		}
		return out
	})
}

// MemorySeries generates memory.available steps within horizon (capacity
// 16Gi), crossing the default 100Mi hard threshold now and then.
func MemorySeries(horizon time.Duration, max int) *rapid.Generator[[]sim.SignalStep] {
	return rapid.Custom(func(t *rapid.T) []sim.SignalStep {
		n := rapid.IntRange(0, max).Draw(t, "steps")
		out := make([]sim.SignalStep, 0, n)
		for i := 0; i < n; i++ {
			at := time.Duration(rapid.IntRange(0, int(horizon/time.Second)).Draw(t, "at")) * time.Second
			avail := rapid.OneOf(rapid.Int64Range(0, 200<<20), rapid.Int64Range(1<<30, 16<<30)).Draw(t, "available")
			out = append(out, sim.SignalStep{At: at, Signal: nc.SignalMemoryAvailable, Available: avail, Capacity: 16 << 30})
		}
		return out
	})
}

// Sample generates one eviction-signal sample: each signal known or not,
// with available between 0 and a capacity up to 1Ti.
func Sample() *rapid.Generator[nc.Sample] {
	return rapid.Custom(func(t *rapid.T) nc.Sample {
		var s nc.Sample
		for i := 0; i < nc.NumSignals; i++ {
			if !rapid.Bool().Draw(t, "known") {
				continue
			}
			capacity := rapid.Int64Range(0, 1<<40).Draw(t, "capacity")
			s.Set(nc.Signal(i), rapid.Int64Range(0, capacity).Draw(t, "available"), capacity)
		}
		return s
	})
}

// Health generates kubelet health inputs: usually healthy, sometimes with
// runtime or network errors, missing capacity or a warning.
func Health() *rapid.Generator[nc.Health] {
	return rapid.Custom(func(t *rapid.T) nc.Health {
		var h nc.Health
		if rapid.IntRange(0, 2).Draw(t, "runtime") == 0 {
			h.Errors = append(h.Errors, rapid.SampledFrom([]string{nc.MessageRuntimeDown, nc.MessageRuntimeNotChecked}).Draw(t, "runtime error"))
		}
		if rapid.IntRange(0, 3).Draw(t, "network") == 0 {
			h.Errors = append(h.Errors, rapid.SampledFrom([]string{nc.MessageNetworkUnknown, sim.MessageNetworkPluginNotReady}).Draw(t, "network error"))
		}
		if rapid.IntRange(0, 9).Draw(t, "capacity") == 0 {
			h.MissingCapacity = []string{"cpu"}
		}
		if rapid.IntRange(0, 9).Draw(t, "warning") == 0 {
			h.Warning = "swap is on"
		}
		return h
	})
}

// HeartbeatNode generates a node of a scenario: a zone among zones, kubelet,
// lease and status outage schedules, network flaps, a memory series and pods.
func HeartbeatNode(name string, zones []string, horizon time.Duration) *rapid.Generator[sim.Node] {
	return rapid.Custom(func(t *rapid.T) sim.Node {
		return sim.Node{
			Name:        name,
			Zone:        rapid.SampledFrom(zones).Draw(t, "zone"),
			Down:        Outages(horizon, 2).Draw(t, "down"),
			LeaseDown:   Outages(horizon, 1).Draw(t, "lease down"),
			StatusDown:  Outages(horizon, 1).Draw(t, "status down"),
			NetworkDown: Outages(horizon, 2).Draw(t, "network down"),
			Signals:     MemorySeries(horizon, 3).Draw(t, "memory"),
			Pods:        Pods(3).Draw(t, "pods"),
		}
	})
}

// Scenario generates a small scenario: 1 to 5 nodes in 1 to 3 zones over up
// to 10 minutes, with the default options, any monitor phase, a pass
// duration up to 50 ms and the DefaultTolerationSeconds plugin on or off.
func Scenario() *rapid.Generator[sim.Scenario] {
	return rapid.Custom(func(t *rapid.T) sim.Scenario {
		horizon := time.Duration(rapid.IntRange(60, 600).Draw(t, "horizon seconds")) * time.Second
		zones := []string{"zone-a", "zone-b", "zone-c"}[:rapid.IntRange(1, 3).Draw(t, "zones")]
		n := rapid.IntRange(1, 5).Draw(t, "nodes")
		s := sim.Scenario{Name: "generated", Duration: horizon, Seed: rapid.Uint64().Draw(t, "seed"),
			MonitorPhase:               time.Duration(rapid.IntRange(0, 4999).Draw(t, "monitor phase ms")) * time.Millisecond,
			MonitorPassDuration:        time.Duration(rapid.IntRange(0, 50).Draw(t, "pass duration ms")) * time.Millisecond,
			NoDefaultTolerationSeconds: rapid.Bool().Draw(t, "no default tolerations"),
		}
		for i := 0; i < n; i++ {
			node := HeartbeatNode(fmt.Sprintf("node-%d", i), zones, horizon).Draw(t, "node")
			for j := range node.Pods {
				node.Pods[j].Name = fmt.Sprintf("%s-%s", node.Name, node.Pods[j].Name)
			}
			s.Nodes = append(s.Nodes, node)
		}
		return s
	})
}
