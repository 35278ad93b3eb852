package agent_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nodestate/nodestate/examples/nodeagent/agent"
	"github.com/nodestate/nodestate/examples/nodeagent/agent/agenttest"
)

// Three pods for three minutes of virtual time: the crash-looping worker, the cache whose
// image cannot be pulled, and the Job whose sidecar is stopped when its report completes. The
// worker's fifth instance exited 66 s ago and waits out its 80 s back-off: the kubelet syncs it
// again at the back-off's end (clamped to the 1 min resync), so until then its status is the
// exited instance's, Error, and kubectl's "(2m2s ago)" is the exit before it.
func ExampleAgent() {
	sim, err := agenttest.New(agent.Options{Pods: 3, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := sim.Agent.Run(context.Background(), 3*time.Minute); err != nil {
		fmt.Println(err)
		return
	}
	if err := agent.WriteTable(os.Stdout, sim.Pods(), sim.Clock.Now()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// NAME                      READY     STATUS             RESTARTS      AGE
	// cache-wrlmb2z544-tx2tr    0/1       ImagePullBackOff   0             3m
	// report-29469981-lfz7b     0/2       Completed          0             3m
	// worker-xgv7rb2xv2-67pcx   0/1       CrashLoopBackOff   4 (65s ago)   3m
}

// The events of the Job pod, as `kubectl describe` lists them.
func ExampleWriteEvents() {
	sim, err := agenttest.New(agent.Options{Pods: 3, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := sim.Agent.Run(context.Background(), 3*time.Minute); err != nil {
		fmt.Println(err)
		return
	}
	job := sim.Agent.Pods()[2].Pod
	if err := agent.WriteEvents(os.Stdout, agent.EventsFor(sim.Sink.Events(), job.UID), sim.Clock.Now()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Events:
	//   Type    Reason   Age    From     Message
	//   ----    ------   ----   ----     -------
	//   Normal  Pulling  3m     kubelet  spec.initContainers{log-shipper}: Pulling image "registry.example.com/logging/shipper:0.9.3"
	//   Normal  Pulled   2m58s  kubelet  spec.initContainers{log-shipper}: Successfully pulled image "registry.example.com/logging/shipper:0.9.3" in 2.9s (2.9s including waiting). Image size: 93923319 bytes.
	//   Normal  Created  2m58s  kubelet  spec.initContainers{log-shipper}: Container created
	//   Normal  Started  2m58s  kubelet  spec.initContainers{log-shipper}: Container started
	//   Normal  Pulling  2m58s  kubelet  spec.containers{report}: Pulling image "registry.example.com/batch/report:1.4.0"
	//   Normal  Pulled   2m54s  kubelet  spec.containers{report}: Successfully pulled image "registry.example.com/batch/report:1.4.0" in 3.5s (3.5s including waiting). Image size: 42122429 bytes.
	//   Normal  Created  2m54s  kubelet  spec.containers{report}: Container created
	//   Normal  Started  2m54s  kubelet  spec.containers{report}: Container started
	//   Normal  Killing  111s   kubelet  spec.initContainers{log-shipper}: Stopping container log-shipper
}
