// Command node runs one nodestate node against a cluster until it is
// interrupted: it registers the Node, renews its Lease, and runs the pods the
// scheduler (or anyone setting spec.nodeName) binds to it on the simulated
// runtime, with the kubelet's statuses and events. How each container behaves
// is set per pod by annotations (see kube.BehaviourAnnotationPrefix); without
// them containers run until they are deleted and their probes pass.
//
//	go run ./cmd/node --kubeconfig ~/.kube/config [--node nodestate-1] [--pod-cidr 10.244.7.0/24] [--address 127.0.0.1] [--port 10250]
//
// It serves kubectl logs, /metrics and /healthz over HTTPS on --address and
// --port, where the API server reaches it.
//
// The kubeconfig's user should be the node's identity (system:node:NAME in
// the group system:nodes, under Node authorization); an administrator's
// works too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nodestate/nodestate/kube"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "node:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	fs.SetOutput(out)
	kubeconfig := fs.String("kubeconfig", "", "path to the kubeconfig (required)")
	name := fs.String("node", "nodestate-1", "the node's name")
	cidr := fs.String("pod-cidr", "", "pod IP range when the cluster assigns none (default 10.244.0.0/24)")
	address := fs.String("address", "", "the node's InternalIP (default 127.0.0.1)")
	port := fs.Int("port", 10250, "the port of the node's HTTPS server (kubectl logs, /metrics, /healthz) on --address; 0 serves nothing")
	cpu := fs.String("cpu", "4", "CPU capacity")
	memory := fs.String("memory", "16Gi", "memory capacity")
	pods := fs.String("pods", "110", "pod capacity")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" {
		return errors.New("--kubeconfig is required")
	}
	opts := kube.DefaultNodeOptions(*name)
	if *cidr != "" {
		opts.PodCIDR = *cidr
	}
	if *address != "" {
		opts.Address = *address
	}
	if *port < 0 || *port > 65535 {
		return fmt.Errorf("--port %d: want 0 to 65535", *port)
	}
	if *port > 0 {
		opts.Port = int32(*port)
		opts.Listen = net.JoinHostPort(opts.Address, strconv.Itoa(*port))
	}
	res := corev1.ResourceList{}
	for k, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *memory, corev1.ResourcePods: *pods} {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return fmt.Errorf("--%s %q: %v", k, v, err)
		}
		res[k] = q
	}
	opts.Capacity, opts.Allocatable = res, res.DeepCopy()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	n, err := kube.NewNode(client, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "node %s: running until interrupted (serving on %s)\n", *name, opts.Listen)
	err = n.Run(ctx)
	st := n.Stats()
	fmt.Fprintf(out, "node %s: stopped; %d pods admitted, %d rejected, %d finished, %d running, %d syncs\n",
		*name, st.Admitted, st.Rejected, st.Finished, st.Running, st.Syncs)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
