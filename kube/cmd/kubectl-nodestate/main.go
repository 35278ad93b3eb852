// Command kubectl-nodestate is a kubectl plugin that explains live objects
// with nodestate's models of the kubelet and the node-lifecycle controller.
// With the binary on the PATH, kubectl runs it as `kubectl nodestate`:
//
//	kubectl nodestate explain pod NAME [-n NAMESPACE] [-o json|yaml]
//	kubectl nodestate explain node NAME [-o json|yaml] [--node-monitor-grace-period 50s] ...
//
// explain pod prints the pod's phase with the kubelet's rule and the
// containers that decided it, its conditions, the kubectl columns, what it
// waits for (an init container, a sidecar's startup probe, an image-pull or
// crash-loop back-off with the estimated time of the next attempt) and its
// events in time order.
//
// explain node prints the node's conditions, the age of its Lease, its taints
// and the timeline nodecondition's simulation predicts if the node stopped
// renewing its Lease now: when it turns Unknown, when it gets each taint and
// when each of its pods would be evicted, given their tolerations.
//
// It takes kubectl's connection flags (--kubeconfig, --context, -n and the
// others of k8s.io/cli-runtime). An error is one line on standard error and
// exit code 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, time.Now)
	stop()
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", oneLine(err))
		os.Exit(1)
	}
}

// oneLine keeps the first line of an error.
func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

const usage = `kubectl nodestate explains pods and nodes with nodestate's models of the kubelet and the controllers.

Usage:
  kubectl nodestate explain pod NAME [-n NAMESPACE] [-o json|yaml]
  kubectl nodestate explain node NAME [-o json|yaml] [controller-manager flags]

Flags:
`

func run(ctx context.Context, args []string, out, errOut io.Writer, now func() time.Time) error {
	fs := pflag.NewFlagSet("kubectl-nodestate", pflag.ContinueOnError)
	fs.SetOutput(errOut)
	c := newCommand(fs)
	c.now = now
	fs.Usage = func() {
		fmt.Fprint(errOut, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) != 3 || rest[0] != "explain" {
		fs.Usage()
		return fmt.Errorf("want: explain pod NAME, or explain node NAME; got %q", strings.Join(rest, " "))
	}
	switch rest[1] {
	case "pod", "pods", "po":
		return c.explainPod(ctx, rest[2], out)
	case "node", "nodes", "no":
		return c.explainNode(ctx, rest[2], out)
	}
	return fmt.Errorf("cannot explain %q: want pod or node", rest[1])
}
