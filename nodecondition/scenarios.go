package nodecondition

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

func i64(v int64) *int64 { return &v }

// podsForOutage are the four kinds of pod of spec timeline 4.1: no
// toleration, tolerationSeconds 0, the default 300 s tolerations, and a
// DaemonSet-style toleration with no seconds.
func podsForOutage() []SimPod {
	return []SimPod{
		{Name: "no-toleration", NoDefaultTolerations: true},
		{Name: "zero-seconds", Tolerations: []v1.Toleration{
			{Key: TaintUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: i64(0)},
			{Key: TaintNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: i64(0)}}},
		{Name: "default-toleration"},
		{Name: "daemonset", Tolerations: []v1.Toleration{
			{Key: TaintUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
			{Key: TaintNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}},
	}
}

// ScenarioKubeletStops is spec timeline 4.1: node-1's kubelet stops right
// after its lease renewal at t=0, in a zone with two healthy nodes.
func ScenarioKubeletStops() Scenario {
	return Scenario{
		Name:     "kubelet stops at t=0",
		Duration: 7 * time.Minute,
		Nodes: []SimNode{
			{Name: "node-1", Zone: "zone-a", Down: []Interval{{From: 0}}, Pods: podsForOutage()},
			{Name: "node-2", Zone: "zone-a"},
			{Name: "node-3", Zone: "zone-a"},
		},
	}
}

// ScenarioMemoryPressure is spec timeline 4.3: memory.available drops below
// the 100Mi hard threshold at 60 s and recovers at 120 s.
func ScenarioMemoryPressure() Scenario {
	return Scenario{
		Name:     "memory pressure comes and goes",
		Duration: 8 * time.Minute,
		Nodes: []SimNode{
			{Name: "node-1", Zone: "zone-a", Signals: []SignalStep{
				{At: 60 * time.Second, Signal: SignalMemoryAvailable, Available: 50 << 20, Capacity: 16 << 30},
				{At: 120 * time.Second, Signal: SignalMemoryAvailable, Available: 4 << 30, Capacity: 16 << 30},
			}},
			{Name: "node-2", Zone: "zone-a"},
		},
	}
}

// ScenarioFlappingNetwork has node-1's network plugin fail three times: the
// kubelet reports Ready False (spec timeline 4.2) and the NoExecute taint
// comes and goes with it.
func ScenarioFlappingNetwork() Scenario {
	return Scenario{
		Name:     "a flapping network",
		Duration: 6 * time.Minute,
		Nodes: []SimNode{
			{Name: "node-1", Zone: "zone-a",
				NetworkDown: []Interval{{From: 30 * time.Second, To: 50 * time.Second}, {From: 70 * time.Second, To: 90 * time.Second}, {From: 200 * time.Second, To: 260 * time.Second}},
				Pods:        podsForOutage()},
			{Name: "node-2", Zone: "zone-a"},
			{Name: "node-3", Zone: "zone-a"},
		},
	}
}

// ScenarioZoneOutage stops every kubelet of zone-a while zone-b stays
// healthy: zone-a goes FullDisruption and its nodes are tainted at the
// healthy rate, one every 10 s.
func ScenarioZoneOutage() Scenario {
	pod := func(name string) []SimPod { return []SimPod{{Name: name}} }
	return Scenario{
		Name:     "a zone outage",
		Duration: 7 * time.Minute,
		Nodes: []SimNode{
			{Name: "a-1", Zone: "zone-a", Down: []Interval{{From: 0}}, Pods: pod("web-a1")},
			{Name: "a-2", Zone: "zone-a", Down: []Interval{{From: 0}}, Pods: pod("web-a2")},
			{Name: "a-3", Zone: "zone-a", Down: []Interval{{From: 0}}, Pods: pod("web-a3")},
			{Name: "b-1", Zone: "zone-b", Pods: pod("web-b1")},
			{Name: "b-2", Zone: "zone-b", Pods: pod("web-b2")},
		},
	}
}

// ScenarioClusterOutage stops every kubelet: every zone is FullDisruption,
// the controller enters its master disruption mode and evicts nothing.
func ScenarioClusterOutage() Scenario {
	return Scenario{
		Name:     "every zone down",
		Duration: 7 * time.Minute,
		Nodes: []SimNode{
			{Name: "a-1", Zone: "zone-a", Down: []Interval{{From: 0}}, Pods: podsForOutage()},
			{Name: "b-1", Zone: "zone-b", Down: []Interval{{From: 0}}},
		},
	}
}

// NamedScenarios returns the built-in scenarios by short name:
// kubelet-stops, memory-pressure, flapping-network, zone-outage, cluster-outage.
func NamedScenarios() map[string]Scenario {
	return map[string]Scenario{
		"kubelet-stops":    ScenarioKubeletStops(),
		"memory-pressure":  ScenarioMemoryPressure(),
		"flapping-network": ScenarioFlappingNetwork(),
		"zone-outage":      ScenarioZoneOutage(),
		"cluster-outage":   ScenarioClusterOutage(),
	}
}
