package nodecondition_test

import (
	"fmt"

	"github.com/nodestate/nodestate/kubeversion"
	nc "github.com/nodestate/nodestate/nodecondition"
)

// The minor changes the controller's live Lease lookup (a 1.37 gate) and
// when its NoExecute decision sees a node marked Unknown; the timings are
// the same in every minor.
func ExampleDefaultControllerOptionsFor() {
	for _, v := range []kubeversion.Version{kubeversion.V1_33, kubeversion.V1_36, kubeversion.V1_37} {
		o := nc.DefaultControllerOptionsFor(v)
		fmt.Println(v, o.LeaseCircuitBreaker, o.GracePeriod, o.MonitorPeriod)
	}
	// Output:
	// 1.33 false 50s 5s
	// 1.36 false 50s 5s
	// 1.37 true 50s 5s
}
