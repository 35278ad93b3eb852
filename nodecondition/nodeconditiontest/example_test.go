package nodeconditiontest_test

import (
	"fmt"

	nc "github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/nodecondition/nodeconditiontest"
)

// Check a simulated timeline against every invariant.
func ExampleCheckTimeline() {
	sc := nc.ScenarioZoneOutage()
	tl, err := nc.Simulate(sc)
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
