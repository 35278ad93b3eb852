// Command explain reads one pod as YAML or JSON, from a file named on the
// command line or from standard input, and prints what podphase makes of
// it: the phase the kubelet computes and why, kubectl's READY, STATUS and
// RESTARTS columns, and the conditions the kubelet would write.
//
//	kubectl get pod web-0 -o yaml | go run ./examples/explain
//	go run ./examples/explain pod.json
//
// The phase is computed from the container statuses as [podphase.Phase]
// does, without the runtime facts only a kubelet has. The rules are
// Kubernetes 1.37's unless -kubernetes-version names another supported
// minor (1.33 to 1.37, as 1.34, v1.34 or v1.34.4). The sandbox state for
// PodReadyToStartContainers is read from the pod's own condition when it
// has one. Ages are measured at -now (RFC 3339), by default the current
// time.
//
// Bad input is reported on one line on standard error, with exit code 2.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/podphase"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, time.Now()))
}

// run is the program, with its environment as arguments; it returns the
// exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, now time.Time) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	nowFlag := fs.String("now", "", "the time ages are measured at, RFC 3339 (default: the current time)")
	var version kubeversion.Version
	fs.TextVar(&version, "kubernetes-version", kubeversion.Default, "the Kubernetes minor whose rules apply, 1.33 to 1.37")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "explain: %v (usage: explain [-now RFC3339] [-kubernetes-version 1.N] [pod.yaml|pod.json])\n", err)
		return 2
	}
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			fmt.Fprintf(stderr, "explain: -now %q is not an RFC 3339 time\n", *nowFlag)
			return 2
		}
		now = t
	}
	pod, err := readPod(fs.Args(), stdin)
	if err != nil {
		fmt.Fprintf(stderr, "explain: %s\n", oneLine(err))
		return 2
	}
	if err := explain(stdout, podphase.DefaultOptionsFor(version), pod, now); err != nil {
		fmt.Fprintf(stderr, "explain: %s\n", oneLine(err))
		return 2
	}
	return 0
}

func readPod(args []string, stdin io.Reader) (*v1.Pod, error) {
	var data []byte
	var err error
	switch len(args) {
	case 0:
		data, err = io.ReadAll(stdin)
	case 1:
		data, err = os.ReadFile(args[0])
	default:
		return nil, fmt.Errorf("want at most one file, got %d arguments", len(args))
	}
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, errors.New("empty input: want a pod as YAML or JSON")
	}
	var pod v1.Pod
	if err := yaml.Unmarshal(data, &pod); err != nil {
		return nil, fmt.Errorf("input is not a pod in YAML or JSON: %w", err)
	}
	if pod.Kind != "" && pod.Kind != "Pod" {
		return nil, fmt.Errorf("input is a %s, want a Pod", pod.Kind)
	}
	if len(pod.Spec.Containers) == 0 {
		return nil, errors.New("input has no spec.containers: want a pod")
	}
	return &pod, nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// sandboxOf reads the sandbox state back from the pod's
// PodReadyToStartContainers condition.
func sandboxOf(pod *v1.Pod) podphase.Sandbox {
	for _, c := range pod.Status.Conditions {
		if c.Type != v1.PodReadyToStartContainers || c.Status == v1.ConditionTrue {
			continue
		}
		for s := podphase.SandboxMissing; s <= podphase.SandboxNoIP; s++ {
			if s.Message() == c.Message {
				return s
			}
		}
		return podphase.SandboxNotReady
	}
	return podphase.SandboxReady
}

func explain(w io.Writer, o podphase.Options, pod *v1.Pod, now time.Time) error {
	e, err := o.Explain(podphase.Input{Pod: pod})
	if err != nil {
		return err
	}
	row, err := o.Columns(pod, now)
	if err != nil {
		return err
	}
	status := pod.Status
	status.Phase = e.Phase
	conds, err := o.Conditions(podphase.ConditionsInput{Pod: pod, Status: &status, Sandbox: sandboxOf(pod), Now: now})
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "pod %s/%s\n", pod.Namespace, pod.Name)
	fmt.Fprintf(w, "phase: %s\n", e.Phase)
	fmt.Fprintf(w, "  rule: %s\n", e.Rule)
	fmt.Fprintf(w, "  why: %s\n", e.Reason)
	if pod.Status.Phase != "" && pod.Status.Phase != e.Phase {
		fmt.Fprintf(w, "  recorded phase: %s\n", pod.Status.Phase)
	}
	if e.Rule == podphase.RuleTerminalPhase {
		// Say also what the container statuses alone give.
		fresh := *pod
		fresh.Status.Phase = ""
		if alone, err := o.Explain(podphase.Input{Pod: &fresh}); err == nil {
			fmt.Fprintf(w, "  from the statuses alone: %s\n", alone)
		}
	}
	fmt.Fprintf(w, "kubectl: READY %s  STATUS %s  RESTARTS %s\n", row.Ready, row.Status, row.Restarts)
	fmt.Fprintln(w, "conditions:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range conds {
		cells := []string{string(c.Type), string(c.Status), c.Reason, c.Message}
		for len(cells) > 0 && cells[len(cells)-1] == "" {
			cells = cells[:len(cells)-1]
		}
		fmt.Fprintf(tw, "  %s\n", strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
