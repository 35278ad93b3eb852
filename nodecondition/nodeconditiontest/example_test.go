package nodeconditiontest_test

import (
	"fmt"

	"github.com/nodestate/nodestate/nodecondition/nodeconditiontest"
	sim "github.com/nodestate/nodestate/nodecondition/simulation"
)

// Check a simulated timeline against every invariant.
func ExampleCheckTimeline() {
	sc := sim.ScenarioZoneOutage()
	tl, err := sim.Simulate(sc)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(nodeconditiontest.CheckTimeline(sc, tl))
	fmt.Println(nodeconditiontest.MaxHeartbeatGap(sc, sc.Nodes[3]))
	// Output:
	// <nil>
	// 10s
}
