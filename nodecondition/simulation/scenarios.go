package simulation

import (
	"time"

	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

// NamedPassDuration is the monitor pass duration of the named scenarios: a
// pass over a handful of nodes takes milliseconds, and any positive duration
// makes the passes drift as the real controller's do (Scenario.MonitorPassDuration).
const NamedPassDuration = 10 * time.Millisecond

// NamedWindowPhases is how many monitor phases the named scenarios state
// their windows over.
const NamedWindowPhases = 10

// named gives a scenario the realistic monitor loop of the named scenarios.
func named(sc Scenario) Scenario {
	sc.MonitorPassDuration = NamedPassDuration
	sc.WindowPhases = NamedWindowPhases
	return sc
}

// podsForOutage are the kinds of pod of spec timeline 4.1 on a default API
// server, where the DefaultTolerationSeconds admission plugin gives a pod
// without its own not-ready or unreachable toleration the 300 s ones:
// "plain" (no toleration of its own, so 300 s), "zero-seconds" (0 s),
// "wrong-value" (a toleration the plugin counts but which does not match the
// taint, so none that applies), "daemonset" (no seconds, so never) and
// "pending" (no Ready condition yet, so never marked not ready).
func podsForOutage() []Pod {
	wrong := func(key string) v1.Toleration {
		return v1.Toleration{Key: key, Operator: v1.TolerationOpEqual, Value: "x", Effect: v1.TaintEffectNoExecute, TolerationSeconds: i64(600)}
	}
	return []Pod{
		{Name: "plain"},
		{Name: "zero-seconds", Tolerations: tolerationsFor(i64(0))},
		{Name: "wrong-value", Tolerations: []v1.Toleration{wrong(nc.TaintNotReady), wrong(nc.TaintUnreachable)}},
		{Name: "daemonset", Tolerations: tolerationsFor(nil)},
		{Name: "pending", NoReadyCondition: true},
	}
}

// ScenarioKubeletStops is spec timeline 4.1: node-1's kubelet stops right
// after its lease renewal at t=0, in a zone with two healthy nodes.
func ScenarioKubeletStops() Scenario {
	return named(Scenario{
		Name:     "kubelet stops at t=0",
		Duration: 7 * time.Minute,
		Nodes: []Node{
			{Name: "node-1", Zone: "zone-a", Down: []Interval{{From: 0}}, Pods: podsForOutage()},
			{Name: "node-2", Zone: "zone-a"},
			{Name: "node-3", Zone: "zone-a"},
		},
	})
}

// ScenarioMemoryPressure is spec timeline 4.3: memory.available drops below
// the 100Mi hard threshold at 60 s and recovers at 120 s.
func ScenarioMemoryPressure() Scenario {
	return named(Scenario{
		Name:     "memory pressure comes and goes",
		Duration: 8 * time.Minute,
		Nodes: []Node{
			{Name: "node-1", Zone: "zone-a", Signals: []SignalStep{
				{At: 60 * time.Second, Signal: nc.SignalMemoryAvailable, Available: 50 << 20, Capacity: 16 << 30},
				{At: 120 * time.Second, Signal: nc.SignalMemoryAvailable, Available: 4 << 30, Capacity: 16 << 30},
			}},
			{Name: "node-2", Zone: "zone-a"},
		},
	})
}

// ScenarioFlappingNetwork has node-1's network plugin fail three times: the
// kubelet reports Ready False (spec timeline 4.2) and the NoExecute taint
// comes and goes with it.
func ScenarioFlappingNetwork() Scenario {
	return named(Scenario{
		Name:     "a flapping network",
		Duration: 6 * time.Minute,
		Nodes: []Node{
			{Name: "node-1", Zone: "zone-a",
				NetworkDown: []Interval{{From: 30 * time.Second, To: 50 * time.Second}, {From: 70 * time.Second, To: 90 * time.Second}, {From: 200 * time.Second, To: 260 * time.Second}},
				Pods:        podsForOutage()},
			{Name: "node-2", Zone: "zone-a"},
			{Name: "node-3", Zone: "zone-a"},
		},
	})
}

// ScenarioZoneOutage stops every kubelet of zone-a while zone-b stays
// healthy: zone-a goes FullDisruption and its nodes are tainted at the
// healthy rate, one every 10 s.
func ScenarioZoneOutage() Scenario {
	pod := func(name string) []Pod { return []Pod{{Name: name}} }
	return named(Scenario{
		Name:     "a zone outage",
		Duration: 7 * time.Minute,
		Nodes: []Node{
			{Name: "a-1", Zone: "zone-a", Down: []Interval{{From: 0}}, Pods: pod("web-a1")},
			{Name: "a-2", Zone: "zone-a", Down: []Interval{{From: 0}}, Pods: pod("web-a2")},
			{Name: "a-3", Zone: "zone-a", Down: []Interval{{From: 0}}, Pods: pod("web-a3")},
			{Name: "b-1", Zone: "zone-b", Pods: pod("web-b1")},
			{Name: "b-2", Zone: "zone-b", Pods: pod("web-b2")},
		},
	})
}

// ScenarioClusterOutage stops every kubelet: every zone is FullDisruption,
// the controller enters its master disruption mode and evicts nothing.
func ScenarioClusterOutage() Scenario {
	return named(Scenario{
		Name:     "every zone down",
		Duration: 7 * time.Minute,
		Nodes: []Node{
			{Name: "a-1", Zone: "zone-a", Down: []Interval{{From: 0}}, Pods: podsForOutage()},
			{Name: "b-1", Zone: "zone-b", Down: []Interval{{From: 0}}},
		},
	})
}

// NamedScenarios returns the built-in scenarios by short name:
// kubelet-stops, memory-pressure, flapping-network, zone-outage, cluster-outage.
// They run on a default API server (DefaultTolerationSeconds on), with
// monitor passes of NamedPassDuration and windows over NamedWindowPhases phases.
func NamedScenarios() map[string]Scenario {
	return map[string]Scenario{
		"kubelet-stops":    ScenarioKubeletStops(),
		"memory-pressure":  ScenarioMemoryPressure(),
		"flapping-network": ScenarioFlappingNetwork(),
		"zone-outage":      ScenarioZoneOutage(),
		"cluster-outage":   ScenarioClusterOutage(),
	}
}
