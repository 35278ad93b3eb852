// Command simulate prints the node-health timeline of a scenario: when
// conditions go Unknown, when taints come and go, when pods are marked not
// ready and when they are evicted, as a text table and a Mermaid timeline.
//
//	go run ./examples/simulate                          # the kubelet-stops scenario
//	go run ./examples/simulate -scenario zone-outage
//	go run ./examples/simulate -list
//	go run ./examples/simulate -spec 'node n1 zone=a down=20s-;node n2 zone=a;grace 40s'
//	go run ./examples/simulate -file my-scenario.txt -format mermaid
//	go run ./examples/simulate -kubernetes-version 1.33  # a 1.33 kubelet and controller
//
// The scenario text format is the one simulation.ParseScenario reads; in
// -spec, ";" separates lines. The named scenarios state the window each
// entry can land in across the monitor loop's phase (-window 0 turns it off).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/nodecondition/simulation"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "simulate:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(out)
	name := fs.String("scenario", "kubelet-stops", "named scenario to run (see -list)")
	list := fs.Bool("list", false, "list the named scenarios and exit")
	spec := fs.String("spec", "", `custom scenario text, lines separated by ";"`)
	file := fs.String("file", "", "read a custom scenario from this file")
	format := fs.String("format", "both", "output: table, mermaid or both")
	grace := fs.Duration("grace", 0, "override --node-monitor-grace-period")
	duration := fs.Duration("duration", 0, "override the scenario duration")
	seed := fs.Uint64("seed", 0, "seed of the kubelet report jitter")
	window := fs.Int("window", -1, "monitor phases to state each entry's window over (0: none; default: the scenario's)")
	phase := fs.Duration("phase", -1, "when the first monitor pass runs, in [0, monitor period) (default: the scenario's)")
	k8sVersion := fs.String("kubernetes-version", "", "the Kubernetes minor of the kubelets and the controller, 1.33 to 1.37 (default: the scenario's, 1.37 unless its text says)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	named := simulation.NamedScenarios()
	if *list {
		names := make([]string, 0, len(named))
		for n := range named {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(out, "%-18s %s\n", n, named[n].Name)
		}
		return nil
	}
	var sc simulation.Scenario
	switch {
	case *spec != "" || *file != "":
		text := strings.ReplaceAll(*spec, ";", "\n")
		if *file != "" {
			b, err := os.ReadFile(*file)
			if err != nil {
				return err
			}
			text = string(b)
		}
		var err error
		if sc, err = simulation.ParseScenario(text); err != nil {
			return err
		}
		if sc.Name == "" {
			sc.Name = "custom scenario"
		}
	default:
		var ok bool
		if sc, ok = named[*name]; !ok {
			return fmt.Errorf("no scenario %q (try -list)", *name)
		}
	}
	if *k8sVersion != "" {
		v, err := kubeversion.Parse(*k8sVersion)
		if err != nil {
			return fmt.Errorf("-kubernetes-version: %w", err)
		}
		sc.Version = v
		if sc.Controller != (nodecondition.ControllerOptions{}) {
			d := nodecondition.DefaultControllerOptionsFor(v)
			sc.Controller.Version, sc.Controller.LeaseCircuitBreaker = d.Version, d.LeaseCircuitBreaker
		}
		sc.Kubelet.Version = v // explicit kubelet options take v; zero ones are filled with v's defaults
	}
	if *grace > 0 {
		if sc.Controller == (nodecondition.ControllerOptions{}) {
			sc.Controller = nodecondition.DefaultControllerOptionsFor(sc.Version)
		}
		sc.Controller.GracePeriod = *grace
	}
	if *duration > 0 {
		sc.Duration = *duration
	}
	if *seed != 0 {
		sc.Seed = *seed
	}
	if *window >= 0 {
		sc.WindowPhases = *window
	}
	if *phase >= 0 {
		sc.MonitorPhase = *phase
	}
	tl, err := simulation.Simulate(sc)
	if err != nil {
		return err
	}
	switch *format {
	case "table":
		fmt.Fprint(out, tl.Table())
	case "mermaid":
		fmt.Fprint(out, tl.Mermaid())
	case "both":
		fmt.Fprintf(out, "# %s (%s of scenario time)\n\n", sc.Name, sc.Duration.Round(time.Second))
		fmt.Fprint(out, tl.Table())
		fmt.Fprint(out, "\n```mermaid\n"+tl.Mermaid()+"```\n")
	default:
		return fmt.Errorf("unknown -format %q: want table, mermaid or both", *format)
	}
	return nil
}
