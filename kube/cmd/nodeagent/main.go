// Command nodeagent runs nodestate's simulated node agent against a real
// cluster: it registers its Node, renews its Lease, creates its pods bound to
// itself, and runs them in real time, syncing their statuses and recording
// their events through client-go. At the end it prints the pods as kubectl
// get pods shows them and a summary.
//
//	go run ./cmd/nodeagent --kubeconfig ~/.kube/config [--node node-1] [--namespace default] [--pods 8] [--duration 1m]
//
// The kubeconfig's user must be able to create pods in the namespace (a
// node's own credentials cannot) and to write the Node and its Lease.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/nodestate/nodestate/examples/nodeagent/agent"
	"github.com/nodestate/nodestate/kube"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "nodeagent:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("nodeagent", flag.ContinueOnError)
	fs.SetOutput(out)
	kubeconfig := fs.String("kubeconfig", "", "path to the kubeconfig (required)")
	node := fs.String("node", "node-1", "the node's name")
	namespace := fs.String("namespace", "default", "the namespace of the pods")
	pods := fs.Int("pods", agent.DefaultPods, "number of pods to run")
	seed := fs.Uint64("seed", 1, "seed of every name, timing and jitter")
	d := fs.Duration("duration", time.Minute, "how long to run (real time)")
	noGet := fs.Bool("noget", false, "sync statuses without a GET before each PATCH")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" {
		return errors.New("--kubeconfig is required")
	}
	if *d <= 0 {
		return fmt.Errorf("--duration %v: want more than 0", *d)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	a, err := agent.New(agent.Options{NodeName: *node, Namespace: *namespace, Pods: *pods, Seed: *seed, NoGet: *noGet},
		clock.RealClock{}, &kube.StatusTransport{Client: client}, &kube.CoreEventSink{Client: client.CoreV1()}, &kube.Cluster{Client: client})
	if err != nil {
		return err
	}
	if err := a.Start(ctx); err != nil {
		return err
	}
	if err := a.Run(ctx, *d); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	list, err := client.CoreV1().Pods(*namespace).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", *node).String()})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "$ kubectl get pods --field-selector spec.nodeName=%s\n", *node)
	if err := agent.WriteTable(out, podPointers(list.Items), time.Now()); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return agent.WriteSummary(out, a.Stats(), *d)
}
func podPointers(items []corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
