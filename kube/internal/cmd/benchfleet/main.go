// Command benchfleet runs the same workload on a nodestate fleet, on KWOK
// and on nodes of the real kubelet's code (the oracle node, fewer of them,
// with as many pods a node), each on a control plane of its own (etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler v1.37.2, the controllers'
// --kube-api-qps raised), and writes a Markdown report: time from creating
// the Deployments to every pod Running and Ready, the simulator's CPU and
// memory, the API server's requests per pod by verb and resource, and a
// check of sampled pods against podphase. make bench-fleet runs it.
//
//	go run ./internal/cmd/benchfleet -kwok DIR -oracle DIR -nodes 100 -pods 1000,5000 -out ../docs/bench/fleet.md
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/podphase"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchfleet:", err)
		os.Exit(1)
	}
}

type config struct {
	nodes    int
	sizes    []shape
	qps      int
	kwokDir  string
	oracle   string // directory of the oracle node (the real kubelet's code), for the kubelet rows
	kubelets int    // nodes of the kubelet rows
	profDir  string // where the profiles are kept: the report's directory ("" with the report on stdout)
	binDir   string
	nodeBin  string
	sims     []string
	workload []string
}

func run() error {
	var cfg config
	pods := flag.String("pods", "1000,5000", "pod counts, comma-separated, each a run per simulator and workload on -nodes nodes; NODESxPODS sets the nodes of one")
	flag.IntVar(&cfg.nodes, "nodes", 100, "nodes per simulator where -pods does not say")
	flag.IntVar(&cfg.qps, "qps", 500, "--kube-api-qps and --kube-api-burst of the controller manager, the scheduler and the nodestate fleet")
	flag.StringVar(&cfg.kwokDir, "kwok", os.Getenv("NODESTATE_KWOK"), "directory of kwok and stages-fast.yaml (hack/build-kwok.sh)")
	flag.StringVar(&cfg.oracle, "oracle", os.Getenv("NODESTATE_ORACLE"), "directory of the oracle node (oraclenode), the real kubelet's code (kube/hack/build-oracle.sh), for -sims kubelet")
	flag.IntVar(&cfg.kubelets, "kubelet-nodes", 10, "nodes of the kubelet rows, one oracle node process each, with as many pods per node as the other rows")
	sims := flag.String("sims", "nodestate,kwok,kubelet", "simulators to run: nodestate, kwok, kubelet")
	workloads := flag.String("workloads", "plain,init-probe", "workloads: plain (one container) and init-probe (an init container and a readiness probe)")
	out := flag.String("out", "", "the report's path (default stdout)")
	flag.Parse()
	for _, s := range strings.Split(*pods, ",") {
		sh, err := parseShape(strings.TrimSpace(s), cfg.nodes)
		if err != nil {
			return fmt.Errorf("-pods %q: %w", *pods, err)
		}
		cfg.sizes = append(cfg.sizes, sh)
	}
	cfg.sims = strings.Split(*sims, ",")
	cfg.workload = strings.Split(*workloads, ",")
	if slices.Contains(cfg.sims, "kwok") && cfg.kwokDir == "" {
		return errors.New("-kwok (or NODESTATE_KWOK) is required to run kwok")
	}
	if slices.Contains(cfg.sims, "kubelet") && (cfg.oracle == "" || cfg.kubelets <= 0) {
		return errors.New("-oracle (or NODESTATE_ORACLE) and a positive -kubelet-nodes are required to run kubelet")
	}
	ctx := context.Background()
	var err error
	if cfg.binDir, err = controlplane.BinDir(ctx); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "benchfleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cfg.nodeBin = filepath.Join(tmp, "node")
	if *out != "" {
		cfg.profDir = filepath.Dir(*out)
	}
	if b, err := exec.Command("go", "build", "-o", cfg.nodeBin, "./cmd/node").CombinedOutput(); err != nil {
		return fmt.Errorf("building cmd/node: %v\n%s", err, b)
	}
	var results []result
	for _, size := range cfg.sizes {
		for _, wl := range cfg.workload {
			for _, sim := range cfg.sims {
				nodes, pods := size.nodes, size.pods
				if sim == "kubelet" {
					nodes, pods = cfg.kubelets, max(1, size.pods*cfg.kubelets/size.nodes)
				}
				fmt.Fprintf(os.Stderr, "benchfleet: %s, %s, %d nodes, %d pods\n", sim, wl, nodes, pods)
				r, err := runOne(ctx, &cfg, sim, wl, nodes, pods)
				if err != nil {
					return fmt.Errorf("%s %s %d pods: %w", sim, wl, size, err)
				}
				fmt.Fprintf(os.Stderr, "benchfleet: ready in %v, %.2f CPU-s, peak RSS %.0f MB\n", r.ready.Round(time.Millisecond), r.cpu.Seconds(), r.peakRSS)
				results = append(results, r)
			}
		}
	}
	report := render(&cfg, results)
	if *out == "" {
		_, err = os.Stdout.WriteString(report)
		return err
	}
	return os.WriteFile(*out, []byte(report), 0o644)
}

// result is one run.
type result struct {
	sim, workload       string
	nodes, pods         int
	ready               time.Duration // create to every pod Running and Ready
	p50, p99            time.Duration // a pod's creation to its Ready, from the informer
	cpu, workCPU        time.Duration // the simulator's CPU in all, and from create to ready
	peakRSS             float64       // MB, the simulator's VmHWM
	idleRSS, readyRSS   float64       // MB, VmRSS with the nodes Ready and no pod, and with every pod Ready
	requests            map[string]float64
	checked, mismatches int
	mismatch            []string
	profile             string // nodestate: go tool pprof -top of the run's CPU profile
	heap                string // nodestate: go tool pprof -top of the live heap with every pod Ready
	load                string // the machine's 1-minute load average when the Deployments were created
	// init-probe: pods whose main container's start and Ready condition
	// are both stamped, and those of them Ready sooner after the start
	// than the readiness probe's initial delay.
	probeTimed, readyEarly int
}

const (
	namespace  = "bench"
	kwokNodeAn = "kwok.x-k8s.io/node"
)

func runOne(ctx context.Context, cfg *config, sim, wl string, nodes, pods int) (result, error) {
	r := result{sim: sim, workload: wl, nodes: nodes, pods: pods}
	var names []string
	for i := range nodes {
		switch sim {
		case "kwok":
			names = append(names, "kwok-node-"+strconv.Itoa(i))
		case "kubelet":
			names = append(names, "kubelet-"+strconv.Itoa(i))
		default:
			names = append(names, "nodestate-"+strconv.Itoa(i))
		}
	}
	po := controlplane.Options{Controllers: true, ControllerQPS: cfg.qps}
	if sim == "kubelet" {
		po.Nodes = names // each oracle node has a node's credentials
	}
	p, err := controlplane.StartWith(ctx, cfg.binDir, po)
	if err != nil {
		return r, err
	}
	defer p.Stop()
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		return r, err
	}
	kubeconfig, err := p.Kubeconfig(controlplane.Admin)
	if err != nil {
		return r, err
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return r, err
	}
	if err := poll(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		_, err := admin.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return r, fmt.Errorf("the default ServiceAccount: %w", err)
	}

	sims := &procs{}
	defer sims.stop()
	var profile, heap string
	switch sim {
	case "nodestate":
		dir := cfg.profDir
		if dir == "" {
			dir = filepath.Dir(cfg.nodeBin)
		}
		profile = filepath.Join(dir, fmt.Sprintf("fleet-%s-%d-%d.cpu.pprof", wl, nodes, pods))
		heap = filepath.Join(dir, fmt.Sprintf("fleet-%s-%d-%d.heap.pprof", wl, nodes, pods))
		_ = os.Remove(heap) // heapTop waits for the file
		err = sims.start(exec.Command(cfg.nodeBin, "--kubeconfig", kubeconfig, "--nodes", strconv.Itoa(nodes), "--name-prefix", "nodestate-",
			"--fleet-cidr", "10.128.0.0/9", "--port", "0", "--pods", "110", "--kube-api-qps", strconv.Itoa(cfg.qps), "--kube-api-burst", strconv.Itoa(cfg.qps),
			"--cpu-profile", profile, "--heap-profile", heap))
	case "kwok":
		port, err := controlplane.FreePort()
		if err != nil {
			return r, err
		}
		if err := sims.start(exec.Command(filepath.Join(cfg.kwokDir, "kwok"), "--kubeconfig", kubeconfig, "--config", filepath.Join(cfg.kwokDir, "stages-fast.yaml"),
			"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector="+kwokNodeAn+"=fake",
			"--node-lease-duration-seconds=40", "--cidr=10.244.0.0/16", "--node-ip=10.1.0.1", "--server-address=127.0.0.1:"+strconv.Itoa(port))); err != nil {
			return r, err
		}
		for _, name := range names {
			if _, err := admin.CoreV1().Nodes().Create(ctx, kwokNode(name), metav1.CreateOptions{}); err != nil {
				return r, err
			}
		}
	case "kubelet":
		err = startKubelets(cfg, p, sims, names)
	default:
		return r, fmt.Errorf("unknown simulator %q", sim)
	}
	if err != nil {
		return r, err
	}
	if err := poll(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			n, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !readyAndUntainted(n) {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return r, fmt.Errorf("nodes Ready per the node-lifecycle controller: %w\n%s", err, tail(sims.log.String()))
	}
	r.idleRSS = sims.status("VmRSS")

	// Every pod's Ready time, from an informer on the namespace.
	created := map[string]time.Time{}
	readyAt := map[string]time.Time{}
	allReady := make(chan struct{})
	factory := informers.NewSharedInformerFactoryWithOptions(admin, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Pods().Informer()
	var mu sync.Mutex
	note := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Status.Phase != corev1.PodRunning || !podReady(pod) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, seen := readyAt[pod.Name]; seen {
			return
		}
		readyAt[pod.Name] = time.Now()
		created[pod.Name] = pod.CreationTimestamp.Time
		if len(readyAt) == pods {
			close(allReady)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, o any) { note(o) }}); err != nil {
		return r, err
	}
	infCtx, stopInf := context.WithCancel(ctx)
	defer func() { stopInf(); factory.Shutdown() }()
	factory.Start(infCtx.Done())
	factory.WaitForCacheSync(infCtx.Done())

	before, err := requestCounts(ctx, admin)
	if err != nil {
		return r, err
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		r.load = strings.Fields(string(b))[0]
	}
	cpu0 := sims.cpu()
	t0 := time.Now()
	deployments := (pods + 99) / 100
	for i := range deployments {
		replicas := pods / deployments
		if i < pods%deployments {
			replicas++
		}
		if _, err := admin.AppsV1().Deployments(namespace).Create(ctx, deployment(fmt.Sprintf("d%03d", i), int32(replicas), sim, wl), metav1.CreateOptions{}); err != nil {
			return r, err
		}
	}
	select {
	case <-allReady:
	case <-time.After(15 * time.Minute):
		return r, fmt.Errorf("%d of %d pods Ready after 15 minutes\n%s", len(readyAt), pods, tail(sims.log.String()))
	}
	r.ready = time.Since(t0)
	r.workCPU = sims.cpu() - cpu0
	r.readyRSS = sims.status("VmRSS")
	if heap != "" {
		if r.heap, err = heapTop(ctx, sims.cmds[0].Process, cfg.nodeBin, heap); err != nil {
			return r, err
		}
	}
	after, err := requestCounts(ctx, admin)
	if err != nil {
		return r, err
	}
	r.requests = map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			r.requests[k] = d / float64(pods)
		}
	}
	var lat []time.Duration
	for name, at := range readyAt {
		lat = append(lat, at.Sub(created[name]))
	}
	slices.Sort(lat)
	r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]

	// The sampling check: every 10th pod's phase and conditions against podphase.
	list, err := admin.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return r, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	if wl == "init-probe" {
		for i := range list.Items {
			if d, ok := startToReady(&list.Items[i]); ok {
				r.probeTimed++
				if d < probeDelay {
					r.readyEarly++
				}
			}
		}
	}
	for i := 0; i < len(list.Items); i += 10 {
		r.checked++
		if why := check(&list.Items[i]); why != "" {
			r.mismatches++
			if len(r.mismatch) < 3 {
				r.mismatch = append(r.mismatch, why)
			}
		}
	}
	for _, name := range names {
		n, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil || !readyAndUntainted(n) {
			return r, fmt.Errorf("node %s not Ready at the end: %v", name, err)
		}
	}

	r.peakRSS = sims.status("VmHWM")
	r.cpu = sims.stop()
	if profile != "" {
		top, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=15", cfg.nodeBin, profile).Output()
		if err != nil {
			return r, fmt.Errorf("reading the CPU profile: %w", err)
		}
		r.profile = string(top)
	}
	return r, nil
}

// renderPerNode writes the table of memory per node, beside the real
// kubelet's where it ran: its rows are the oracle node, the kubelet's own
// code on an in-memory runtime (conformance/oracle), one process a node,
// with as many pods a node as the other rows.
func renderPerNode(w func(string, ...any), rs []result) {
	w("## Per node\n\n")
	w("*kubelet* rows run the real kubelet's code (the oracle node of conformance/oracle, v1.37.2, on an in-memory CRI runtime\n")
	w("that runs the same simulated containers; the kubelet's defaults, client rate limits included), one process a node, with\n")
	w("as many pods a node as the fleet's rows of the same size. Their CPU and RSS are the sums over the processes.\n\n")
	w("| simulator | workload | nodes | pods per node | RSS per node, idle | RSS per node, pods Ready | CPU per pod | nodestate's idle RSS per node against it |\n")
	w("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		idle, ready := r.idleRSS/float64(r.nodes), r.readyRSS/float64(r.nodes)
		ratio := ""
		if r.sim == "kubelet" {
			for _, n := range rs {
				if n.sim == "nodestate" && n.workload == r.workload && n.pods/n.nodes == r.pods/r.nodes && n.idleRSS > 0 {
					ratio = fmt.Sprintf("1/%.0f", idle/(n.idleRSS/float64(n.nodes)))
				}
			}
		}
		w("| %s | %s | %d | %d | %.2f MB | %.2f MB | %.2f ms | %s |\n", r.sim, r.workload, r.nodes, r.pods/r.nodes, idle, ready,
			float64(r.workCPU.Microseconds())/1000/float64(r.pods), ratio)
	}
	w("\n")
}

// procs are a simulator's processes: one for a nodestate fleet or KWOK,
// one per node for the kubelet.
type procs struct {
	cmds   []*exec.Cmd
	exited []chan struct{}
	log    syncBuffer // their output, together
	cpuAll time.Duration
	dirs   []string // removed once they stopped
}

// start starts cmd with its output in the log.
func (p *procs) start(cmd *exec.Cmd) error {
	cmd.Stdout, cmd.Stderr = &p.log, &p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmds, p.exited = append(p.cmds, cmd), append(p.exited, done)
	return nil
}

// status is the sum of a kB field of the processes' /proc/PID/status, in MB.
func (p *procs) status(field string) float64 {
	sum := 0.0
	for _, c := range p.cmds {
		sum += procStatus(c.Process.Pid, field)
	}
	return sum
}

// cpu is the processes' CPU time so far.
func (p *procs) cpu() time.Duration {
	var sum time.Duration
	for _, c := range p.cmds {
		sum += procCPU(c.Process.Pid)
	}
	return sum
}

// stop ends the processes (SIGTERM, SIGKILL after 30 s) and returns their
// CPU time in all, from their rusage. A second call does nothing.
func (p *procs) stop() time.Duration {
	for _, c := range p.cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	for i, c := range p.cmds {
		select {
		case <-p.exited[i]:
		case <-time.After(30 * time.Second):
			_ = c.Process.Kill()
			<-p.exited[i]
		}
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			p.cpuAll += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	p.cmds, p.exited = nil, nil
	for _, d := range p.dirs {
		_ = os.RemoveAll(d)
	}
	p.dirs = nil
	return p.cpuAll
}

// syncBuffer is a bytes.Buffer for several writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startKubelets starts an oracle node, the real kubelet's code, for each
// of names, with its node credentials and the kubelet's defaults (client
// rate limits included) but for the pod CIDR and the ports.
func startKubelets(cfg *config, p *controlplane.Plane, sims *procs, names []string) error {
	root, err := os.MkdirTemp("", "benchfleet-kubelets-")
	if err != nil {
		return err
	}
	sims.dirs = append(sims.dirs, root)
	for i, name := range names {
		kubeconfig, err := p.Kubeconfig(controlplane.NodeUser(name))
		if err != nil {
			return err
		}
		port, err := controlplane.FreePort()
		if err != nil {
			return err
		}
		if err := sims.start(exec.Command(filepath.Join(cfg.oracle, "oraclenode"), "--kubeconfig", kubeconfig, "--name", name, "--root-dir", filepath.Join(root, name),
			"--kubelet-port", strconv.Itoa(port), "--pod-cidr", fmt.Sprintf("10.244.%d.0/24", i))); err != nil {
			return err
		}
	}
	return nil
}

// heapTop signals the node command to write its live heap's profile to
// path, waits for the file, and returns its top entries by space in use.
func heapTop(ctx context.Context, p *os.Process, bin, path string) (string, error) {
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		return "", fmt.Errorf("asking for the heap profile: %w", err)
	}
	if err := poll(ctx, time.Minute, func(context.Context) (bool, error) {
		_, err := os.Stat(path)
		return err == nil, nil
	}); err != nil {
		return "", fmt.Errorf("the heap profile %s: %w", path, err)
	}
	top, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=inuse_space", "-nodecount=20", bin, path).Output()
	if err != nil {
		return "", fmt.Errorf("reading the heap profile: %w", err)
	}
	return string(top), nil
}

// check compares a pod's status with what podphase computes from it: the
// phase, and the status of each condition the kubelet owns. It returns why
// they differ, or "".
func check(pod *corev1.Pod) string {
	if got, want := pod.Status.Phase, podphase.Phase(pod); got != want {
		return fmt.Sprintf("%s: phase %s, podphase %s", pod.Name, got, want)
	}
	want, err := podphase.Conditions(podphase.ConditionsInput{Pod: pod, Status: &pod.Status, Now: time.Now()})
	if err != nil {
		return pod.Name + ": " + err.Error()
	}
	have := map[corev1.PodConditionType]corev1.ConditionStatus{}
	for _, c := range pod.Status.Conditions {
		have[c.Type] = c.Status
	}
	for _, c := range want {
		if have[c.Type] != c.Status {
			return fmt.Sprintf("%s: condition %s is %q, podphase %q", pod.Name, c.Type, have[c.Type], c.Status)
		}
	}
	// Containers that never exit: podlifecycle starts each once, so each
	// runs, started and ready (the probe passes), with no restart and no
	// last state.
	if len(pod.Status.ContainerStatuses) != len(pod.Spec.Containers) {
		return fmt.Sprintf("%s: %d container statuses for %d containers", pod.Name, len(pod.Status.ContainerStatuses), len(pod.Spec.Containers))
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.RestartCount != 0 || c.State.Running == nil || !c.Ready || c.Started == nil || !*c.Started || c.LastTerminationState != (corev1.ContainerState{}) {
			return fmt.Sprintf("%s: container %s: restartCount %d, ready %v, started %v, state %+v, last state %+v; want 0, running, started and ready, no last state",
				pod.Name, c.Name, c.RestartCount, c.Ready, ptr.Deref(c.Started, false), c.State, c.LastTerminationState)
		}
	}
	if len(pod.Status.InitContainerStatuses) != len(pod.Spec.InitContainers) {
		return fmt.Sprintf("%s: %d init container statuses for %d init containers", pod.Name, len(pod.Status.InitContainerStatuses), len(pod.Spec.InitContainers))
	}
	for _, st := range pod.Status.InitContainerStatuses {
		if st.RestartCount != 0 {
			return fmt.Sprintf("%s: init container %s: restartCount %d, want 0", pod.Name, st.Name, st.RestartCount)
		}
		if t := st.State.Terminated; t == nil || t.ExitCode != 0 || t.Reason != "Completed" || t.FinishedAt.IsZero() {
			return fmt.Sprintf("%s: init container %s did not run to exit 0: %+v", pod.Name, st.Name, st.State)
		}
		for _, c := range pod.Status.ContainerStatuses {
			if c.State.Running != nil && c.State.Running.StartedAt.Before(&st.State.Terminated.FinishedAt) {
				return fmt.Sprintf("%s: container %s started before init container %s finished", pod.Name, c.Name, st.Name)
			}
		}
	}
	return ""
}

// probeDelay is the init-probe workload's readiness probe
// initialDelaySeconds.
const probeDelay = 5 * time.Second

// startToReady is the time from the pod's main container starting to its
// Ready condition turning True, from their second-resolution stamps: a
// true interval of 5 s or more never reads as less than 5 s.
func startToReady(pod *corev1.Pod) (time.Duration, bool) {
	if len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].State.Running == nil {
		return 0, false
	}
	started := pod.Status.ContainerStatuses[0].State.Running.StartedAt
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && !started.IsZero() && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Sub(started.Time), true
		}
	}
	return 0, false
}

func kwokNode(name string) *corev1.Node {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{kwokNodeAn: "fake"},
			Labels: map[string]string{"type": "kwok", corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64"}},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: kwokNodeAn, Value: "fake", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy()},
	}
}

// deployment is the workload: one container, and with init-probe an init
// container before it and a readiness probe that passes after 5 s. KWOK's
// pods get its nodeSelector and toleration.
func deployment(name string, replicas int32, sim, wl string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](30),
		Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}
	if wl == "init-probe" {
		spec.InitContainers = []corev1.Container{{Name: "init", Image: "registry.example/init:1"}}
		spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}},
			InitialDelaySeconds: 5, PeriodSeconds: 5}
	}
	if sim == "kwok" {
		spec.NodeSelector = map[string]string{"type": "kwok"}
		spec.Tolerations = []corev1.Toleration{{Key: kwokNodeAn, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}}}
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readyAndUntainted: Ready, and without the taints the node-lifecycle
// controller keeps on a node it does not see Ready.
func readyAndUntainted(n *corev1.Node) bool {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	return ready
}

// requestCounts reads apiserver_request_total by "VERB resource[/subresource]",
// leaving out the benchmark's own metrics scrapes.
func requestCounts(ctx context.Context, admin kubernetes.Interface) (map[string]float64, error) {
	b, err := admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	mf := families["apiserver_request_total"]
	if mf == nil {
		return nil, errors.New("no apiserver_request_total")
	}
	for _, m := range mf.GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		if l["resource"] == "" {
			continue
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		out[key] += m.GetCounter().GetValue()
	}
	return out, nil
}

// procCPU is a process's user and system CPU so far.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// procStatus reads a kB field of /proc/PID/status, in MB.
func procStatus(pid int, field string) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func poll(ctx context.Context, timeout time.Duration, cond wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return ok, err
	})
}

func tail(s string) string {
	if len(s) > 3000 {
		s = s[len(s)-3000:]
	}
	return s
}

// render writes the report.
func render(cfg *config, rs []result) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# A nodestate fleet beside KWOK and the real kubelet\n\n")
	w("Written by `make bench-fleet` (kube/internal/cmd/benchfleet) on %s. Each row is a run on a control plane of its own\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	w("(etcd, kube-apiserver, kube-controller-manager, kube-scheduler v1.37.2, the controller manager's and the scheduler's\n")
	w("`--kube-api-qps`/`--kube-api-burst` %d): the simulated nodes, then Deployments of at most 100 pods each (%s)\n", cfg.qps, sizes(cfg.sizes))
	w("created at once. *plain*: one container, no probe. *init-probe*: an init container before it and an exec readiness probe\n")
	w("(initialDelaySeconds 5, periodSeconds 5).\n\n")
	w("| simulator | workload | nodes | pods | create to all Ready | pod Ready p50 / p99 | CPU from create to Ready | CPU per pod | CPU in all | RSS nodes idle | RSS per pod | peak RSS | API requests per pod | podphase check | load |\n")
	w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		total := 0.0
		for _, v := range r.requests {
			total += v
		}
		w("| %s | %s | %d | %d | %.1f s | %.1f / %.1f s | %.2f s | %.2f ms | %.2f s | %.0f MB | %.1f KB | %.0f MB | %.1f | %d of %d differ | %s |\n",
			r.sim, r.workload, r.nodes, r.pods, r.ready.Seconds(), r.p50.Seconds(), r.p99.Seconds(), r.workCPU.Seconds(),
			float64(r.workCPU.Microseconds())/1000/float64(r.pods), r.cpu.Seconds(), r.idleRSS,
			(r.readyRSS-r.idleRSS)*1024/float64(r.pods), r.peakRSS, total, r.mismatches, r.checked, r.load)
	}
	w("\nCPU is the simulator process's user+system time (from /proc while the pods start; \"in all\" from its rusage at exit,\n")
	w("start and node registration included). RSS nodes idle: VmRSS with every node Ready and no pod; RSS per pod: the growth\n")
	w("of VmRSS from there to every pod Ready, per pod; peak RSS: VmHWM. The podphase check takes every 10th pod at the end and\n")
	w("compares its phase and the status of each condition the kubelet owns with what podphase computes from the pod, and\n")
	w("that each init container exited 0 (reason Completed) before the main container started, and that every container\n")
	w("runs, started and ready, with restartCount 0 and no last state: what podlifecycle does with containers that never exit.\n")
	w("Load: the machine's 1-minute load average when the Deployments were created (2: both cores already busy).\n\n")
	renderPerNode(w, rs)
	w("## API requests per pod, by verb and resource\n\n")
	w("From the API server's apiserver_request_total, between creating the Deployments and the last pod Ready, divided by the\n")
	w("pods: every client's requests (controllers, scheduler, the simulator, the benchmark's own informer). The simulators'\n")
	w("own are the pods/status PATCHes, pod GETs, events, leases and nodes/status.\n\n")
	keys := map[string]bool{}
	for _, r := range rs {
		for k, v := range r.requests {
			if v >= 0.01 {
				keys[k] = true
			}
		}
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	w("| request |")
	for _, r := range rs {
		w(" %s %s %d |", r.sim, r.workload, r.pods)
	}
	w("\n|---|")
	for range rs {
		w("---|")
	}
	w("\n")
	for _, k := range ks {
		w("| %s |", k)
		for _, r := range rs {
			w(" %.2f |", r.requests[k])
		}
		w("\n")
	}
	var seen []string
	for _, r := range rs {
		if r.workload != "init-probe" {
			continue
		}
		verdict := "so the probe's initial delay was waited for"
		if r.probeTimed == 0 {
			verdict = "no pod had both stamps, so nothing could be said"
		} else if r.readyEarly > 0 {
			verdict = "so the probe's initial delay was not waited for"
		}
		seen = append(seen, fmt.Sprintf("- %s, %d pods: %d of %d pods turned Ready less than %v after their container started (status startedAt to the Ready condition's lastTransitionTime), %s.",
			r.sim, r.pods, r.readyEarly, r.probeTimed, probeDelay, verdict))
	}
	if len(seen) > 0 {
		w("\n## What each simulator did with the init container and the readiness probe\n\n%s\n", strings.Join(seen, "\n"))
	}
	var notes []string
	for _, r := range rs {
		for _, m := range r.mismatch {
			notes = append(notes, fmt.Sprintf("- %s %s %d pods: %s", r.sim, r.workload, r.pods, m))
		}
	}
	if len(notes) > 0 {
		w("\n## podphase check: first differences\n\n%s\n", strings.Join(notes, "\n"))
	}
	for _, r := range rs {
		if r.heap == "" {
			continue
		}
		w("\n## Where nodestate's memory goes: %s, %d pods\n\n", r.workload, r.pods)
		w("The node command's live heap with every pod Ready (--heap-profile, written on SIGUSR1 after a collection), `go tool pprof -top -sample_index=inuse_space`\n")
		w("(the profile is written beside this report as fleet-%s-%d-%d.heap.pprof, and not committed):\n\n", r.workload, r.nodes, r.pods)
		for _, l := range strings.Split(strings.TrimSpace(r.heap), "\n") {
			w("    %s\n", l)
		}
	}
	for _, r := range rs {
		if r.profile == "" {
			continue
		}
		w("\n## Where nodestate's CPU goes: %s, %d pods\n\n", r.workload, r.pods)
		w("The node command's --cpu-profile over the whole run (registration, the pods, shutdown), `go tool pprof -top`:\n\n")
		for _, l := range strings.Split(strings.TrimSpace(r.profile), "\n") {
			w("    %s\n", l)
		}
	}
	w("\n## How it was run\n\n")
	var spec []string
	for _, sh := range cfg.sizes {
		spec = append(spec, fmt.Sprintf("%dx%d", sh.nodes, sh.pods))
	}
	w("    make bench-fleet BENCH_PODS=%s BENCH_WORKLOADS=%s\n\n", strings.Join(spec, ","), strings.Join(cfg.workload, ","))
	w("which builds the control plane (kube/hack/build-control-plane.sh), KWOK v0.8.0 from its Go module with its default\n")
	w("(\"fast\") stages (kube/hack/build-kwok.sh) and the oracle node (kube/hack/build-oracle.sh) into ~/.cache/nodestate,\n")
	w("and runs, per size and workload:\n\n")
	w("    node --kubeconfig admin.kubeconfig --nodes NODES --name-prefix nodestate- --fleet-cidr 10.128.0.0/9 --port 0 --pods 110 --kube-api-qps %d --kube-api-burst %d \\\n", cfg.qps, cfg.qps)
	w("      --cpu-profile fleet-WORKLOAD-NODES-PODS.cpu.pprof --heap-profile fleet-WORKLOAD-NODES-PODS.heap.pprof\n")
	w("    kwok --kubeconfig admin.kubeconfig --config stages-fast.yaml --manage-all-nodes=false \\\n")
	w("      --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake --node-lease-duration-seconds=40 \\\n")
	w("      --cidr=10.244.0.0/16 --node-ip=10.1.0.1 --server-address=127.0.0.1:PORT\n\n")
	w("    oraclenode --kubeconfig kubelet-K.kubeconfig --name kubelet-K --root-dir DIR/kubelet-K --kubelet-port PORT --pod-cidr 10.244.K.0/24\n\n")
	w("for K from 0 to %d, each with its node's credentials (system:node:kubelet-K).\n", cfg.kubelets-1)
	w("KWOK's nodes are created by the benchmark (annotation kwok.x-k8s.io/node=fake, label type=kwok, taint\n")
	w("kwok.x-k8s.io/node=fake:NoSchedule, 4 CPUs, 16 GiB, 110 pods, as nodestate's); its pods get the matching nodeSelector\n")
	w("and toleration. The fleet and KWOK run as the cluster's admin.\n\n")
	w("## Versions and machine\n\n")
	w("- kube-apiserver, kube-controller-manager, kube-scheduler v1.37.2, etcd v3.7.0; KWOK v0.8.0; %s\n", runtime.Version())
	w("- %s\n", machine())
	return b.String()
}

// shape is a run's size: its nodes and its pods.
type shape struct{ nodes, pods int }

// parseShape reads PODS (on nodes nodes) or NODESxPODS.
func parseShape(s string, nodes int) (shape, error) {
	n, p, found := strings.Cut(s, "x")
	if !found {
		n, p = strconv.Itoa(nodes), s
	}
	sh := shape{}
	var err1, err2 error
	sh.nodes, err1 = strconv.Atoi(n)
	sh.pods, err2 = strconv.Atoi(p)
	if err1 != nil || err2 != nil || sh.nodes <= 0 || sh.pods <= 0 {
		return shape{}, fmt.Errorf("%q: want PODS or NODESxPODS, positive counts", s)
	}
	return sh, nil
}

func sizes(s []shape) string {
	var out []string
	for _, sh := range s {
		out = append(out, fmt.Sprintf("%d pods on %d nodes", sh.pods, sh.nodes))
	}
	return strings.Join(out, ", then ")
}

func machine() string {
	model, mem := "", ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				mem = fmt.Sprintf("%.1f GiB", kb/1024/1024)
			}
		}
	}
	return fmt.Sprintf("%d cores (%s), %s memory, %s/%s; the cores were shared with other work during the run", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH)
}
