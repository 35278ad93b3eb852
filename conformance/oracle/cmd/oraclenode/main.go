// Command oraclenode is the oracle node: the real kubelet of Kubernetes
// v1.37.2 (k8s.io/kubernetes/cmd/kubelet/app.RunKubelet, so NewMainKubelet
// with its real prober, status manager, pod workers, PLEG, image manager,
// crash-loop and pull back-off, and its own event recorder writing core/v1
// Events) as a node of a control plane, on the in-process CRI runtime of
// package cri, whose containers behave as the pod's "sim.nodestate.io/"
// annotations say (podlifecycle/simruntime's grammar). A pod created once
// for this node and once for a nodestate node runs the same simulated
// processes on both.
//
//	oraclenode --kubeconfig node.kubeconfig --name oracle-1 --root-dir /tmp/oracle-1 -v 2
//
// The kubeconfig authenticates as system:node:<name> (Node authorization,
// NodeRestriction). Nothing of the host is changed: no cgroups (a stub
// container manager whose pod cgroups are read back as a cgroup v2 host
// would give them, see cgroups.go), no mounts (a fake mounter, host
// utilities and subpaths), no iptables, a cadvisor that reads nothing (see
// machine.go), an OS interface that makes no directories, files or
// symlinks (the kubelet's /var/log/containers links among them), and the
// CRI runtime in memory on a unix socket in the root directory. The
// kubelet writes only under --root-dir (volumes, its checkpoints and image
// records, the runtime's empty container logs). What it reads of the
// host: its OOM watcher reads the kernel log (/dev/kmsg) and records a
// SystemOOM event on the Node for each OOM kill it finds there, as every
// kubelet does. A user who may not read the kernel log (kernel.dmesg_restrict
// 1, which makes the kubelet fail to start) gets the command run again in
// a user namespace of its own, where the kubelet goes on without the
// watcher (its KubeletInUserNamespace gate) and the Node reports
// nodeInfo.runningInUserNamespace true.
//
// # Configuration
//
// The kubelet's configuration is its defaults (options.NewKubeletFlags and
// options.NewKubeletConfiguration, with the v1beta1 defaults and
// kubeletconfig's feature gates at their 1.37 defaults), so every value
// that sets pod-status timing is the kubelet's: syncFrequency 1m,
// nodeStatusUpdateFrequency 10s, nodeStatusReportFrequency 5m,
// nodeLeaseDurationSeconds 40, the 1s PLEG relist, image pull back-off and
// crash-loop back-off 10s doubling to 300s, serializeImagePulls true,
// registryPullQPS 5 / burst 10, eventRecordQPS 50 / burst 100, kubeAPIQPS
// 50 / burst 100, maxPods 110, container garbage collection with
// minimum age 0, one dead container kept per container and no total limit,
// image garbage collection at 85%/80% (never reached: the image filesystem
// is nearly empty), the default hard eviction thresholds (never reached:
// the machine reports no usage; set as the kubelet's configuration file
// loading sets them for a file without evictionHard, which a kubelet
// started with flags alone does not, and reserved by node allocatable).
// These values differ from the defaults:
//
//   - rootDirectory, certDirectory (<root>/pki), podLogsDir
//     (<root>/pod-logs): the default /var/lib/kubelet and /var/log/pods
//     are the host's; the command writes only under --root-dir.
//   - hostnameOverride (--name) and nodeIP (--node-ip): the node's name and
//     InternalIP. The kubelet checks that the node IP belongs to a network
//     interface of the host and is not a loopback address; without
//     --node-ip it takes the address of the default route's interface.
//   - containerRuntimeEndpoint and imageServiceEndpoint: the in-process
//     runtime's socket.
//   - port (--kubelet-port, default 10250) and address 127.0.0.1 (default
//     0.0.0.0): the kubelet's server runs with the legacy flag defaults
//     (anonymous authentication, authorization AlwaysAllow, which the node
//     identity cannot replace with webhook checks), so it listens on
//     loopback only. readOnlyPort 0 (the config file's default; the
//     legacy flag default is 10255), so that nodes on one host do not
//     collide. Neither changes a pod status.
//   - maxPods (--max-pods, default 110, the kubelet's): a comparison that
//     runs more pods at once than a kubelet takes raises it on both nodes.
//   - serializeImagePulls and registryPullQPS (--serialize-image-pulls,
//     --registry-pull-qps; defaults true and 5, the kubelet's): a comparison
//     that starts many pods at once turns them off, as which pod's pull
//     waits or is refused then depends on the order of the kubelet's
//     goroutines.
//   - kubeAPIQPS and eventRecordQPS (--kube-api-qps, --event-qps, default
//     50 with a burst of 100, the kubelet's): a comparison that starts
//     hundreds of pods at once raises them, or the kubelet's status writes
//     queue behind its own rate limit for tens of seconds and its event
//     queue (1,000 events) overflows.
//   - clusterDNS [--cluster-dns, 10.0.0.10] (default none): without it
//     the kubelet records a MissingClusterDNS warning on the pod and the
//     Node whenever it makes a sandbox config for a ClusterFirst pod (each
//     sandbox and container start), which no real cluster shows; the
//     address is only written into sandbox configs.
//   - resolvConf "" (default /etc/resolv.conf): the host's resolver file
//     is not read, so a host with many search domains cannot add
//     DNSConfigForming warnings; it only feeds sandbox configs.
//   - makeIPTablesUtilChains false (default true): no iptables rules on the
//     host.
//   - cgroupRoot "/" (default ""): what the kubelet's own start sets when
//     cgroupsPerQOS is true and no root is given; the stub container
//     manager makes no cgroups either way.
//
// Besides the configuration, the dependencies differ from a kubelet on a
// machine: the node has --cpus CPUs, --memory bytes and a root filesystem
// of --ephemeral-storage bytes (default 4, 16Gi and 100Gi, as nodestate's
// nodes), its container manager is the stub (no cgroups) but reports the
// ephemeral-storage capacity and the node allocatable reservations as the
// kubelet's own does (allocatable.go), the OS image and runtime are named
// as nodestate's simulated nodes name theirs, the machine, system and boot
// IDs are the node's name, the eviction manager finds no
// usage statistics (it logs that every 10 s and never evicts), and the
// volume plugins are emptyDir, secret, configMap, downwardAPI, projected
// and a hostPath that touches nothing (no CSI, so no CSINode object). The
// kubelet's API clients are made as the kubelet's command makes them (its
// QPS and burst, protobuf, an events client at the event QPS, a heartbeat
// client without rate limit) and carry the user agent "kubelet/<version>
// ...", so managedFields name the manager "kubelet"; a separate client (50
// QPS) reads each new sandbox's pod for the runtime. What the kubelet's
// command does before RunKubelet is not done: no configuration file or
// validation, no client certificate rotation, no healthz server on port
// 10248.
//
// The binary must be built with the version ldflags (see
// kube/hack/build-oracle.sh), or the Node reports a kubeletVersion of
// v0.0.0-master.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"k8s.io/apimachinery/pkg/api/resource"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	kubeletapp "k8s.io/kubernetes/cmd/kubelet/app"

	"github.com/nodestate/nodestate/conformance/oracle/cri"
)

func main() {
	if needsUserNamespace() {
		code, err := runInUserNamespace()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(code)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	var c config
	var memory, storage string
	fs := flag.CommandLine
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the node's identity (system:node:<name>); required")
	fs.StringVar(&c.name, "name", "", "the node's name; required")
	fs.StringVar(&c.nodeIP, "node-ip", "", "the node's InternalIP, an address of a network interface of the host (default: the kubelet picks the default route's)")
	fs.StringVar(&c.podCIDR, "pod-cidr", "10.244.0.0/24", "the range pod IPs come from, one address per sandbox")
	fs.IntVar(&c.port, "kubelet-port", 10250, "the kubelet server's port, on 127.0.0.1")
	fs.StringVar(&c.rootDir, "root-dir", "", "the kubelet's root directory, which it may write; required")
	fs.StringVar(&c.clusterDNS, "cluster-dns", "10.0.0.10", "the cluster DNS address written into sandbox configs; empty for none")
	fs.IntVar(&c.cpus, "cpus", 4, "the node's CPU capacity")
	fs.StringVar(&memory, "memory", "16Gi", "the node's memory capacity")
	fs.StringVar(&storage, "ephemeral-storage", "100Gi", "the size of the node's root filesystem: its ephemeral-storage capacity")
	fs.IntVar(&c.maxPods, "max-pods", 110, "the kubelet's maxPods: the node's pod capacity")
	fs.BoolVar(&c.serializeImagePulls, "serialize-image-pulls", true, "the kubelet's serializeImagePulls: one image pull at a time")
	fs.IntVar(&c.registryPullQPS, "registry-pull-qps", 5, "the kubelet's registryPullQPS (burst 10); 0 for no limit")
	fs.IntVar(&c.kubeAPIQPS, "kube-api-qps", 50, "the kubelet's kubeAPIQPS (burst twice that)")
	fs.IntVar(&c.eventQPS, "event-qps", 50, "the kubelet's eventRecordQPS (burst twice that)")
	fs.StringVar(&c.featureGates, "feature-gates", "", "kubelet feature gates, as the kubelet's --feature-gates (A=true,B=false)")
	klog.InitFlags(fs)
	flag.Parse()
	switch {
	case c.kubeconfig == "":
		return fmt.Errorf("oraclenode: --kubeconfig is required")
	case c.name == "":
		return fmt.Errorf("oraclenode: --name is required")
	case c.rootDir == "":
		return fmt.Errorf("oraclenode: --root-dir is required")
	case c.cpus < 1:
		return fmt.Errorf("oraclenode: --cpus %d: want at least 1", c.cpus)
	case c.maxPods < 1:
		return fmt.Errorf("oraclenode: --max-pods %d: want at least 1", c.maxPods)
	case c.kubeAPIQPS < 1 || c.eventQPS < 1:
		return fmt.Errorf("oraclenode: --kube-api-qps %d, --event-qps %d: want at least 1", c.kubeAPIQPS, c.eventQPS)
	case c.registryPullQPS < 0:
		return fmt.Errorf("oraclenode: --registry-pull-qps %d: want 0 or more", c.registryPullQPS)
	}
	q, err := resource.ParseQuantity(memory)
	if err != nil || q.Sign() <= 0 {
		return fmt.Errorf("oraclenode: --memory %q: want a positive quantity", memory)
	}
	c.memory = uint64(q.Value())
	s, err := resource.ParseQuantity(storage)
	if err != nil || s.Sign() <= 0 {
		return fmt.Errorf("oraclenode: --ephemeral-storage %q: want a positive quantity", storage)
	}
	c.storage = uint64(s.Value())
	if c.featureGates != "" {
		if err := utilfeature.DefaultMutableFeatureGate.Set(c.featureGates); err != nil {
			return fmt.Errorf("oraclenode: --feature-gates: %w", err)
		}
	}
	if c.rootDir, err = filepath.Abs(c.rootDir); err != nil {
		return err
	}
	if err := os.MkdirAll(c.rootDir, 0o750); err != nil {
		return fmt.Errorf("oraclenode: root directory: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background())

	sock := filepath.Join(c.rootDir, "cri.sock")
	if len(sock) > 100 {
		return fmt.Errorf("oraclenode: socket path %s is too long for a unix socket; use a shorter --root-dir", sock)
	}
	_ = os.Remove(sock)
	endpoint := "unix://" + sock

	server, err := kubeletServer(c, endpoint)
	if err != nil {
		return err
	}
	cl, err := newClients(c.kubeconfig, &server.KubeletConfiguration)
	if err != nil {
		return err
	}
	opts := cri.DefaultOptions()
	opts.PodCIDR = c.podCIDR
	opts.Token = token()
	opts.Pods = apiPods{client: cl.pods}
	opts.Logger = klog.Background().WithName("cri")
	rt, err := cri.New(opts)
	if err != nil {
		return err
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("oraclenode: runtime socket: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- rt.Serve(ctx, l) }()

	deps, err := dependencies(ctx, c, cl, &server.KubeletConfiguration, endpoint)
	if err != nil {
		return err
	}
	if err := kubeletapp.RunKubelet(ctx, server, deps); err != nil {
		return fmt.Errorf("oraclenode: running the kubelet: %w", err)
	}
	klog.InfoS("oraclenode: kubelet running", "node", c.name, "rootDir", c.rootDir)
	select {
	case <-ctx.Done():
		// The kubelet has no way to stop; the process ends here.
		return nil
	case err := <-served:
		return fmt.Errorf("oraclenode: the runtime stopped serving: %w", err)
	}
}

// token is a random token for the runtime's IDs, so that a node started
// again never reports the ID of a container an API server already shows.
func token() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
