// Command node runs nodestate nodes against a cluster until it is
// interrupted: one node, or with --nodes a fleet of many in one process.
// Each registers its Node, renews its Lease, and runs the pods the scheduler
// (or anyone setting spec.nodeName) binds to it on the simulated runtime,
// with the kubelet's statuses and events. How each container behaves is set
// per pod by annotations (see kube.BehaviourAnnotationPrefix); without them
// containers run until they are deleted and their probes pass.
//
//	go run ./cmd/node --kubeconfig ~/.kube/config [--node nodestate-1] [--pod-cidr 10.244.7.0/24] [--address 127.0.0.1] [--port 10250]
//
// One node serves kubectl logs, /metrics and /healthz over HTTPS on
// --address and --port, where the API server reaches it. Its kubeconfig's
// user should be the node's identity (system:node:NAME in the group
// system:nodes, under Node authorization); an administrator's works too.
//
// A fleet (see kube.Fleet and docs/fleet.md):
//
//	go run ./cmd/node --kubeconfig fleet.kubeconfig --nodes 100 --name-prefix fake- [--first 0] [--shard 0] [--fleet-cidr 10.244.0.0/16] [--node-cidr-mask-size 24] [--port 0]
//
// runs nodes fake-0 to fake-99 on one client (--kube-api-qps and
// --kube-api-burst set its rate limits), node k serving on port --port+k
// (0 serves nothing). Its user needs the ClusterRole that --print-rbac
// prints, not a node's identity.
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
	"path/filepath"
	goruntime "runtime"
	"runtime/pprof"
	"strconv"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kubeversion"
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
	k8sVersion := fs.String("kubernetes-version", kubeversion.Default.String(), "the Kubernetes minor whose kubelet the node behaves as and reports (1.33 to 1.37)")
	nodes := fs.Int("nodes", 0, "run a fleet of this many nodes, named --name-prefix followed by --first, --first+1, ... (0: one node called --node)")
	prefix := fs.String("name-prefix", "nodestate-", "the fleet's node names' prefix")
	first := fs.Int("first", 0, "the index of the fleet's first node (a shard of a larger fleet starts after the previous one)")
	shard := fs.String("shard", "0", "the fleet's shard, the value of the label "+kube.FleetShardLabel+" on its nodes")
	fleetCIDR := fs.String("fleet-cidr", "10.244.0.0/16", "the range the fleet's nodes' pod CIDRs are carved from")
	maskSize := fs.Int("node-cidr-mask-size", 24, "the prefix length of each fleet node's pod CIDR")
	qps := fs.Float64("kube-api-qps", 50, "the client's requests per second to the API server (shared by a fleet's nodes)")
	burst := fs.Int("kube-api-burst", 100, "the client's burst of requests to the API server")
	contentType := fs.String("kube-api-content-type", runtime.ContentTypeProtobuf, "the content type of requests to the API server, as the kubelet's flag of that name (its default too)")
	printRBAC := fs.Bool("print-rbac", false, "print the ClusterRole a fleet's user needs, as YAML, and exit")
	cpuProfile := fs.String("cpu-profile", "", "write a CPU profile of the whole run to this file (go tool pprof reads it)")
	heapProfile := fs.String("heap-profile", "", "on each SIGUSR1, write a profile of the live heap to this file (go tool pprof reads it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *heapProfile != "" {
		stop := heapProfileOnSignal(*heapProfile)
		defer stop()
	}
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	if *printRBAC {
		role := kube.FleetClusterRole("nodestate-fleet")
		role.TypeMeta = metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}
		b, err := yaml.Marshal(role)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	if *kubeconfig == "" {
		return errors.New("--kubeconfig is required")
	}
	if *nodes < 0 {
		return fmt.Errorf("--nodes %d: want 0 or more", *nodes)
	}
	if *nodes > 0 && *cidr != "" {
		return errors.New("--pod-cidr is for one node; a fleet carves its nodes' from --fleet-cidr")
	}
	version, err := kubeversion.Parse(*k8sVersion)
	if err != nil {
		return fmt.Errorf("--kubernetes-version: %w", err)
	}
	opts := kube.DefaultOptionsFor(*name, version)
	if *nodes > 0 {
		opts.Name = ""
	}
	if *cidr != "" {
		opts.PodCIDR = *cidr
	}
	if *address != "" {
		opts.Address = *address
	}
	if *port < 0 || *port > 65535 {
		return fmt.Errorf("--port %d: want 0 to 65535", *port)
	}
	listen := ""
	if *port > 0 {
		opts.Port = int32(*port)
		listen = opts.Address
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
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	switch cfg.ContentType = *contentType; *contentType {
	case runtime.ContentTypeProtobuf:
		// Answers as protobuf where the server has it, JSON otherwise.
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	case runtime.ContentTypeJSON:
	default:
		return fmt.Errorf("--kube-api-content-type %q: want %s or %s", *contentType, runtime.ContentTypeProtobuf, runtime.ContentTypeJSON)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if *nodes > 0 {
		fo := kube.DefaultFleetOptions(*prefix, *nodes)
		fo.First, fo.Shard, fo.PodCIDR, fo.NodeCIDRMaskSize, fo.Listen = *first, *shard, *fleetCIDR, *maskSize, listen
		opts.PodCIDR = ""
		fo.Node = opts
		return runFleet(ctx, client, fo, out)
	}
	if listen != "" {
		opts.Listen = net.JoinHostPort(listen, strconv.Itoa(*port))
	}
	n, err := kube.NewNode(opts, client)
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

// startCPUProfile starts profiling the process's CPU into path; the
// function it returns stops and writes the profile.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "node: --cpu-profile:", err)
		}
	}, nil
}

// heapProfileOnSignal writes a profile of the live heap to path on each
// SIGUSR1 until the function it returns is called: a caller measuring the
// memory of a state (every pod running) signals the node in that state.
func heapProfileOnSignal(path string) func() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	stop := serveHeapProfiles(sig, path, func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "node: --heap-profile:", err)
		}
	})
	return func() {
		signal.Stop(sig)
		stop()
	}
}

// serveHeapProfiles writes the heap profile to path for each value sig
// delivers and reports each write's outcome, until the function it returns
// is called.
func serveHeapProfiles(sig <-chan os.Signal, path string, report func(error)) func() {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-done:
				return
			case <-sig:
				report(writeHeapProfile(path))
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// writeHeapProfile collects garbage, so that the profile shows what is
// live, and writes the heap profile to path (through a temporary file
// renamed into place, so a reader never sees half a profile).
func writeHeapProfile(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	goruntime.GC()
	err = pprof.WriteHeapProfile(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// runFleet runs a fleet until ctx ends and says what it did.
func runFleet(ctx context.Context, client kubernetes.Interface, opts kube.FleetOptions, out io.Writer) error {
	f, err := kube.NewFleet(opts, client)
	if err != nil {
		return err
	}
	last := opts.NamePrefix + strconv.Itoa(opts.First+opts.Nodes-1)
	fmt.Fprintf(out, "fleet %s: %d nodes %s%d to %s running until interrupted\n", opts.Shard, opts.Nodes, opts.NamePrefix, opts.First, last)
	err = f.Run(ctx)
	st := f.Stats()
	fmt.Fprintf(out, "fleet %s: stopped; %d nodes, %d pods admitted, %d rejected, %d finished, %d running, %d syncs\n",
		opts.Shard, st.Nodes, st.Total.Admitted, st.Total.Rejected, st.Total.Finished, st.Total.Running, st.Total.Syncs)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
