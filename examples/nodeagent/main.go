// Command nodeagent runs a simulated node agent built from nodestate's packages, in virtual
// time: each pod through a podlifecycle machine (the kubelet's pod worker: init containers,
// sidecars, crash-loop and image-pull back-off, probes, kills) on a simulated runtime, their
// statuses cached and synced by statussync to an in-memory API server, the machines' kubelet
// events through the events broadcaster and its correlator, and the node's
// conditions and lease from nodecondition. At the end it prints the pods as `kubectl get pods`
// shows them, the events of the crash-looping pod as `kubectl describe` lists them, and a
// summary of what went over the wire.
//
//	go run ./examples/nodeagent [-pods 8] [-seed 1] [-duration 10m] [-noget] [-describe db-0]
//
// The same seed prints the same output.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nodestate/nodestate/examples/nodeagent/agent"
	"github.com/nodestate/nodestate/examples/nodeagent/agent/agenttest"
)

// maxDuration bounds the virtual time of a run.
const maxDuration = 24 * time.Hour

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "nodeagent:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("nodeagent", flag.ContinueOnError)
	fs.SetOutput(out)
	pods := fs.Int("pods", agent.DefaultPods, "number of pods to run")
	seed := fs.Uint64("seed", 1, "seed of every name, ID, timing and jitter")
	d := fs.Duration("duration", 10*time.Minute, "virtual time to run")
	noGet := fs.Bool("noget", false, "sync statuses without a GET before each PATCH")
	describe := fs.String("describe", "", "the pod whose events to list, by name or name prefix (default: the crash-looping pod)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *pods < 1 || *pods > agent.MaxPods {
		return fmt.Errorf("-pods %d: want 1 to %d", *pods, agent.MaxPods)
	}
	if *d <= 0 || *d > maxDuration {
		return fmt.Errorf("-duration %v: want more than 0 and at most %v", *d, maxDuration)
	}
	cfg := agent.Options{Pods: *pods, Seed: *seed, NoGet: *noGet}
	sim, err := agenttest.New(cfg)
	if err != nil {
		return err
	}
	if err := sim.Agent.Run(ctx, *d); err != nil {
		return err
	}
	now := sim.Clock.Now()

	fmt.Fprintf(out, "$ kubectl get pods    # node-1, seed %d, after %v of virtual time\n", *seed, *d)
	if err := agent.WriteTable(out, sim.Pods(), now); err != nil {
		return err
	}
	states := sim.Agent.Pods()
	shown, found := states[0], false
	for _, st := range states {
		if (*describe == "" && st.CrashLooping) || (*describe != "" && strings.HasPrefix(st.Pod.Name, *describe)) {
			shown, found = st, true
			break
		}
	}
	if *describe != "" && !found {
		return fmt.Errorf("-describe %q: no such pod", *describe)
	}
	fmt.Fprintf(out, "\n$ kubectl describe pod %s    # Events:\n", shown.Pod.Name)
	if err := agent.WriteEvents(out, agent.EventsFor(sim.Sink.Events(), shown.Pod.UID), now); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return agent.WriteSummary(out, sim.Agent.Stats(), *d)
}
