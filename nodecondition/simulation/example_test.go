package simulation_test

import (
	"fmt"

	sim "github.com/nodestate/nodestate/nodecondition/simulation"
)

// A kubelet stops right after renewing its lease: the whole timeline.
func ExampleSimulate_kubeletStops() {
	tl, err := sim.Simulate(sim.ScenarioKubeletStops())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range tl.Entries {
		if e.Kind == sim.KindPodDeleted || (e.Kind == sim.KindCondition && e.Subject == "Ready") || e.Kind == sim.KindTaintAdded {
			fmt.Println(e)
		}
	}
	// Output:
	// 50.1s node-1 Ready True -> Unknown NodeStatusUnknown (controller) [50.1s..54.6s]
	// 50.1s node-1 taint added node.kubernetes.io/unreachable:NoSchedule [50.1s..54.6s]
	// 50.1s node-1 taint added node.kubernetes.io/unreachable:NoExecute [50.1s..54.6s]
	// 50.1s node-1 pod deleted default/zero-seconds DeletionByTaintManager [50.1s..54.6s]
	// 50.1s node-1 pod deleted default/wrong-value DeletionByTaintManager [50.1s..54.6s]
	// 5m50.1s node-1 pod deleted default/pending DeletionByTaintManager [5m50.1s..5m54.6s]
	// 5m50.1s node-1 pod deleted default/plain DeletionByTaintManager [5m50.1s..5m54.6s]
}

// A scenario from text: the first monitor pass 2 s after the last renewal,
// passes exactly 5 s apart, and the DefaultTolerationSeconds plugin off, so a
// pod with no toleration goes with the NoExecute taint.
func ExampleParseScenario() {
	sc, err := sim.ParseScenario(`
name phase 2s
duration 2m
phase 2s
default-tolerations off
node n1 zone=a down=0s- pods=web
node n2 zone=a
node n3 zone=a`)
	if err != nil {
		fmt.Println(err)
		return
	}
	tl, _ := sim.Simulate(sc)
	for _, e := range tl.Entries {
		if e.Kind == sim.KindPodDeleted || (e.Kind == sim.KindCondition && e.Subject == "Ready") {
			fmt.Println(e)
		}
	}
	_, err = sim.ParseScenario("node n1 down=1m-30s")
	fmt.Println(err)
	// Output:
	// 57s n1 Ready True -> Unknown NodeStatusUnknown (controller)
	// 57s n1 pod deleted default/web DeletionByTaintManager
	// simulation: invalid scenario: line 1: interval "1m-30s": end must be a duration after the start
}
