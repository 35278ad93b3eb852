// Command vknode runs a virtual-kubelet node whose pods run on nodestate's
// simulated runtime, against any cluster, until it is interrupted. It is
// virtual-kubelet's own pod and node controllers (node.NewPodController,
// node.NewNodeController) on the nodestate provider of package vk: the pods
// bound to the node get the kubelet's statuses and events, IPs from
// --pod-cidr and the node's address as host IP; the node reports the
// kubelet's conditions and renews its Lease as the kubelet does.
//
//	go run ./cmd/vknode --kubeconfig node.kubeconfig [--node vk-1] [--pod-cidr 10.244.0.0/24] [--address 127.0.0.1] [-v 0]
//
// How each container behaves is set per pod by the annotation
// "sim.nodestate.io/<container>" (for example "run 3s exit 1",
// "ignore-sigterm 10s", "readiness fail 0s-20s"); without one a container
// runs until it is deleted and its probes pass. The kubeconfig's user
// should be the node's identity (system:node:NAME in the group
// system:nodes, under Node authorization and NodeRestriction). -v 1 and up
// log more, virtual-kubelet's debug messages from 1 on.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/virtual-kubelet/virtual-kubelet/log"
	vkslog "github.com/virtual-kubelet/virtual-kubelet/log/slog"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nodestate/nodestate/vk"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil && !errors.Is(err, context.Canceled) {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "vknode:", err)
		}
		os.Exit(2)
	}
}

// run parses args, runs the node until ctx ends and logs to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("vknode", flag.ContinueOnError)
	fs.SetOutput(out)
	kubeconfig := fs.String("kubeconfig", "", "path to the kubeconfig (required)")
	name := fs.String("node", "vk-1", "the node's name")
	cidr := fs.String("pod-cidr", "10.244.0.0/24", "the range pod IPs come from")
	address := fs.String("address", "127.0.0.1", "the node's InternalIP, and its pods' host IP")
	verbosity := fs.Int("v", 0, "log verbosity: 0 is errors and notable events, higher is more")
	workers := fs.Int("workers", 2, "virtual-kubelet's pod controller workers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" {
		return errors.New("--kubeconfig is required")
	}
	if *workers < 1 {
		return fmt.Errorf("--workers %d: want at least 1", *workers)
	}
	handler := slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.Level(-*verbosity)})
	vkLevel := slog.LevelInfo
	if *verbosity > 0 {
		vkLevel = slog.LevelDebug
	}
	log.L = vkslog.FromSlog(slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: vkLevel})))

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	// The kubelet's client rate limit (--kube-api-qps, --kube-api-burst).
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	opts := vk.DefaultOptions()
	opts.Name, opts.Address, opts.Runner.PodCIDR = *name, *address, *cidr
	opts.Logger = logr.FromSlogHandler(handler)
	return runNode(ctx, opts, client, *workers)
}

// runNode runs a provider for opts and virtual-kubelet's controllers on it
// until ctx ends or one of them fails.
func runNode(ctx context.Context, opts vk.Options, client kubernetes.Interface, workers int) error {
	p, err := vk.NewProvider(opts, vk.SimulatedRuntime, client)
	if err != nil {
		return err
	}
	pods, err := node.NewPodController(p.PodControllerConfig())
	if err != nil {
		return err
	}
	nodes, err := node.NewNodeController(p, p.Node(), client.CoreV1().Nodes(), p.NodeControllerOptions(client)...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 3)
	go func() { errs <- p.Run(ctx) }()
	go func() { errs <- pods.Run(ctx, workers) }()
	go func() { errs <- nodes.Run(ctx) }()
	opts.Logger.Info("node running", "node", opts.Name, "podCIDR", opts.Runner.PodCIDR, "address", opts.Address)
	first := <-errs
	cancel()
	for range 2 {
		if err := <-errs; first == nil {
			first = err
		}
	}
	if first == nil {
		first = ctx.Err()
	}
	return first
}
