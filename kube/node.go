package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
)

// KubeletVersion is the version a Node reports in its nodeInfo by default:
// the Kubernetes release whose kubelet nodestate follows. A node made with
// DefaultNodeOptionsFor reports the release of its version instead.
const KubeletVersion = "v1.37.2"

// NodeOptions configures a Node. Start from DefaultNodeOptions.
type NodeOptions struct {
	// Name is the node's name; the client should authenticate as
	// system:node:<Name> in the group system:nodes.
	Name string
	// Clock is the node's time. Nil is the real clock.
	Clock clock.WithTicker
	// Capacity and Allocatable are the node's resources ("cpu", "memory",
	// "pods", ...). Allocatable bounds what admission accepts.
	Capacity, Allocatable corev1.ResourceList
	// PodCIDR is the range pod IPs come from when the cluster did not assign
	// the node one (spec.podCIDR set by the controller manager wins).
	PodCIDR string
	// Address is the node's InternalIP. Port is its kubelet endpoint port,
	// where the API server asks for logs.
	Address string
	Port    int32
	// Hostname, when set, is reported as a Hostname address after the
	// InternalIP, as the kubelet reports its hostname. Empty reports none,
	// the default and a deliberate difference from the kubelet
	// (docs/faithfulness.md): the API server reaches a node at its first
	// preferred address type, Hostname unless told otherwise
	// (--kubelet-preferred-address-types), and a simulated node's name
	// rarely resolves to Address, so kubectl logs would fail. Set it where
	// the name resolves, or where the API server prefers InternalIP.
	Hostname string
	// Listen is where the node serves HTTPS (a self-signed certificate for
	// Address): /healthz, /metrics (Prometheus) and
	// /containerLogs/<namespace>/<pod>/<container> for kubectl logs. Use
	// Address:Port for the API server to reach it. Empty serves nothing.
	Listen string
	// Labels are added to the kubelet's own (hostname, os, arch).
	Labels map[string]string
	// Taints are registered with the node.
	Taints []corev1.Taint
	// Lifecycle configures each pod's podlifecycle machine. Its Version is
	// the minor the node behaves as (podlifecycle.DefaultOptionsFor sets its
	// gates and messages) and reports as its kubelet version. Its Features
	// and Version also configure the pod status cache (statussync.Options:
	// condition ownership, observedGeneration).
	Lifecycle podlifecycle.Options
	// Kubelet configures the node status and lease loops; its Version is
	// the kubelet minor of the node-status report rule
	// (nodecondition.DefaultKubeletOptionsFor).
	Kubelet nodecondition.KubeletOptions
	// Status configures the pod status engine; its Clock is replaced by the
	// node's.
	Status statussync.EngineOptions
	// Runtime makes each admitted pod's runtime. Nil is SimulatedRuntime.
	Runtime RuntimeFactory
	// Logger receives what the node does and what fails. The zero value
	// discards.
	Logger logr.Logger
}

// DefaultNodeOptionsFor returns DefaultNodeOptions(name) for a node that
// behaves as the kubelet of Kubernetes minor v: its pods' lifecycle and pod
// status cache take v's defaults (podlifecycle.DefaultOptionsFor, and
// through Lifecycle statussync's), its node status loop takes
// nodecondition.DefaultKubeletOptionsFor(v), and its nodeInfo reports v's
// release (v.Release(), for example "v1.34.4"). The events package has no
// version-dependent rule (docs/versions.md row EV-V1). A v that is none of
// kubeversion's constants is kept in Lifecycle and Kubelet, so that NewNode
// refuses it.
func DefaultNodeOptionsFor(name string, v kubeversion.Version) NodeOptions {
	opts := DefaultNodeOptions(name)
	opts.Lifecycle = podlifecycle.DefaultOptionsFor(v)
	opts.Kubelet = nodecondition.DefaultKubeletOptionsFor(v)
	return opts
}

// DefaultNodeOptions returns the options of a node called name: 4 CPUs,
// 16 GiB, 100 GiB of ephemeral storage and 110 pods, pod IPs from
// 10.244.0.0/24, address 127.0.0.1 and port 10250, no Hostname address,
// and the kubelet's defaults for everything else.
func DefaultNodeOptions(name string) NodeOptions {
	res := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("16Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
	}
	return NodeOptions{
		Name: name, Capacity: res, Allocatable: res.DeepCopy(),
		PodCIDR: "10.244.0.0/24", Address: "127.0.0.1", Port: 10250,
		Lifecycle: podlifecycle.DefaultOptions(),
		Kubelet:   nodecondition.DefaultKubeletOptions(),
		Status:    statussync.DefaultEngineOptions(),
	}
}

// Node is a node that runs the pods the API server binds to it: it
// registers its Node object, renews its Lease, reports its conditions,
// watches the pods whose spec.nodeName is its name, admits them as the kubelet
// does, runs each through a podlifecycle machine on its Runtime, writes their
// statuses with a statussync engine fed by the watch, records the kubelet's
// events, gives each pod an IP from its pod CIDR, and carries out graceful
// deletion: kill within the grace, then delete the pod with grace 0 and its
// UID as precondition.
//
// Run does the work; a Node runs once. Its own loop is one goroutine; the
// watch, the status engine and the event writer have theirs, all ended when
// Run returns.
type Node struct {
	client  kubernetes.Interface
	objects mountObjects // what pods' volumes and runtime classes name
	opts    NodeOptions
	clock   clock.WithTicker
	log     logr.Logger

	metrics *nodeMetrics
	logs    *logStore

	cache  *statussync.Cache
	engine *statussync.Engine
	bcast  *events.Broadcaster
	rec    *events.Recorder

	kubelet *nodecondition.Kubelet
	lease   *nodecondition.LeaseRenewer
	node    *corev1.Node
	// leaseObj is the Lease as last written, renewed with one PUT.
	leaseObj *coordinationv1.Lease

	// runner runs the admitted pods; the loop calls its Advance.
	runner *podrunner.Runner

	// inbox holds the newest version of each pod the watch delivered since the
	// loop last looked, and the last object of each it saw deleted; wake
	// tells the loop.
	mu       sync.Mutex
	inbox    map[types.UID]*corev1.Pod
	gone     map[types.UID]*corev1.Pod
	wake     chan struct{}
	started  bool
	lastLoop time.Time
	addr     string

	// owned by the loop (and the runner's hooks, which run on it)
	ctx       context.Context
	pods      map[types.UID]*nodePod
	nextNode  time.Time
	nextRenew time.Time
	stats     NodeStats
	statsMu   sync.Mutex
}

// NodeStats counts what a Node did.
type NodeStats struct {
	// Admitted and Rejected count pods by admission outcome; Finished the
	// pods whose containers all stopped after a deletion or a terminal phase.
	Admitted, Rejected, Finished int
	// Running is the number of pods the node currently runs.
	Running int
	// Syncs is the number of podlifecycle steps.
	Syncs int
	// NodeReports and LeaseRenewals count successful writes; NodeErrors and
	// LeaseErrors failed ones.
	NodeReports, LeaseRenewals, NodeErrors, LeaseErrors int
	// RegisterErrors counts the registrations of the Node that failed.
	RegisterErrors int
	// MountFailures counts the looks at a pod's volumes that found one not
	// set up (a FailedMount event each).
	MountFailures int
}

// NewNode returns a node for opts that talks to the API server through
// client. A refused field of opts gives an *OptionError (unwrapping to
// ErrInvalidOptions); a Version in Lifecycle or Kubelet that is none of
// kubeversion's constants is refused as "Lifecycle.Version" or
// "Kubelet.Version", and the error also matches
// kubeversion.ErrUnsupportedVersion.
func NewNode(client kubernetes.Interface, opts NodeOptions) (*Node, error) {
	if client == nil {
		return nil, optionError("client", "nil", "a client is required")
	}
	if opts.Name == "" {
		return nil, optionError("Name", "", "a node name is required")
	}
	if errs := validation.IsDNS1123Subdomain(opts.Name); len(errs) > 0 {
		return nil, optionError("Name", opts.Name, strings.Join(errs, "; "))
	}
	if _, err := podCIDR(opts.PodCIDR); err != nil {
		return nil, optionError("PodCIDR", opts.PodCIDR, err.Error())
	}
	if _, err := netip.ParseAddr(opts.Address); err != nil {
		return nil, optionError("Address", opts.Address, err.Error())
	}
	if opts.Port < 0 {
		return nil, optionError("Port", opts.Port, "must not be negative")
	}
	if err := versionError("Lifecycle.Version", opts.Lifecycle.Version); err != nil {
		return nil, err
	}
	if err := versionError("Kubelet.Version", opts.Kubelet.Version); err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Runtime == nil {
		opts.Runtime = SimulatedRuntime
	}
	var err error
	n := &Node{
		client: client, opts: opts, clock: opts.Clock, log: opts.Logger,
		inbox: map[types.UID]*corev1.Pod{}, gone: map[types.UID]*corev1.Pod{}, wake: make(chan struct{}, 1),
		pods:    map[types.UID]*nodePod{},
		logs:    &logStore{pods: map[types.NamespacedName]*podLogs{}},
		objects: apiObjects{client: client},
	}
	if n.cache, err = statussync.NewCache(statussync.Options{Features: opts.Lifecycle.Features, Version: opts.Lifecycle.Version}); err != nil {
		return nil, err
	}
	so := opts.Status
	so.Clock = opts.Clock
	user := so.Hooks
	so.Hooks.Request = func(verb string, err error) {
		result := "success"
		if err != nil {
			result = "error"
		}
		n.metrics.requests.WithLabelValues(verb, result).Inc()
		if user.Request != nil {
			user.Request(verb, err)
		}
	}
	so.Hooks.Synced = func(uid types.UID, version uint64, latency time.Duration) {
		n.metrics.statusSync.Observe(latency.Seconds())
		if user.Synced != nil {
			user.Synced(uid, version, latency)
		}
	}
	if n.engine, err = statussync.NewEngine(n.cache, &StatusTransport{Client: client}, so); err != nil {
		return nil, err
	}
	bo := events.DefaultBroadcasterOptions()
	bo.Clock = opts.Clock
	if n.bcast, err = events.NewBroadcaster(bo); err != nil {
		return nil, err
	}
	n.metrics = newNodeMetrics(n)
	if n.rec, err = n.bcast.NewRecorder(corev1.EventSource{Component: "kubelet", Host: opts.Name}, events.RecorderOptions{}); err != nil {
		return nil, err
	}
	if n.kubelet, err = nodecondition.NewKubelet(opts.Kubelet); err != nil {
		return nil, err
	}
	if n.lease, err = nodecondition.NewLeaseRenewer(opts.Kubelet, opts.Name); err != nil {
		return nil, err
	}
	if _, err := podlifecycle.New(opts.Lifecycle, probePod()); err != nil {
		return nil, fmt.Errorf("%w: lifecycle: %v", ErrInvalidOptions, err)
	}
	ro := podrunner.DefaultOptions()
	ro.Lifecycle, ro.Clock, ro.PodCIDR, ro.Logger = opts.Lifecycle, opts.Clock, opts.PodCIDR, opts.Logger
	ro.HostIPs = []string{opts.Address}
	ro.Hooks = podrunner.Hooks{Synced: n.synced, Finished: n.finished}
	if n.runner, err = podrunner.New(ro, n.cache, n.rec); err != nil {
		return nil, fmt.Errorf("%w: pod runner: %v", ErrInvalidOptions, err)
	}
	return n, nil
}

// podCIDR parses a node's pod CIDR: an IPv4 range of at least 4 addresses.
func podCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() || p.Bits() > 30 {
		return netip.Prefix{}, errors.New("want an IPv4 range of at least 4 addresses")
	}
	return p, nil
}

// probePod is a minimal valid pod, to check the lifecycle options early.
func probePod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
}

// Stats returns what the node did so far. It is safe to call while Run runs.
func (n *Node) Stats() NodeStats {
	n.statsMu.Lock()
	s := n.stats
	n.statsMu.Unlock()
	s.Syncs = int(n.runner.Stats().Steps)
	return s
}

func (n *Node) count(f func(*NodeStats)) {
	n.statsMu.Lock()
	f(&n.stats)
	n.statsMu.Unlock()
}

// Run registers the node and runs it until ctx ends, and returns ctx's error
// after a clean stop (pods are left to the API server, as a stopped kubelet
// leaves them). A registration the API server refuses or cannot take (an
// unreachable server, a 403 for a client that is not the node's identity) is
// logged, counted in NodeStats.RegisterErrors and tried again as the kubelet
// tries it, after 100 ms doubling up to 7 s, until ctx ends. A Node runs as a
// fleet of one: it watches only its own pods (the field selector
// spec.nodeName=<Name> that the Node authorizer requires of a node's
// identity).
func (n *Node) Run(ctx context.Context) error {
	if err := n.claim(); err != nil {
		return err
	}
	f := &Fleet{client: n.client, nodes: []*Node{n}, byName: map[string]*Node{n.opts.Name: n},
		selector: "spec.nodeName=" + n.opts.Name}
	return f.run(ctx)
}

// claim marks the node started, or fails when it already was.
func (n *Node) claim() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.started {
		return fmt.Errorf("kube: node %s: Run called twice", n.opts.Name)
	}
	n.started = true
	return nil
}

// Name returns the node's name.
func (n *Node) Name() string { return n.opts.Name }

// ServingAddress returns the address the node's HTTPS server listens on,
// once Run started it ("" before, or without NodeOptions.Listen).
func (n *Node) ServingAddress() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.addr
}

// gauges sets the running pods and containers from the pods' newest statuses.
func (n *Node) gauges() {
	pods, running, exited := 0, 0, 0
	for _, p := range n.pods {
		if !p.running {
			continue
		}
		if p.sandboxReady {
			pods++
		}
		running += p.nRunning
		exited += p.nExited
	}
	n.metrics.runningPods.Set(float64(pods))
	n.metrics.runningContainers.WithLabelValues("running").Set(float64(running))
	n.metrics.runningContainers.WithLabelValues("exited").Set(float64(exited))
}

// deliver puts a watched pod into the inbox; it runs on the informer's
// goroutine and never blocks on the node's loop.
func (n *Node) deliver(pod *corev1.Pod, deleted bool) {
	if pod.Spec.NodeName != n.opts.Name {
		return
	}
	n.engine.Observe(pod)
	n.mu.Lock()
	if deleted {
		n.gone[pod.UID] = pod
		delete(n.inbox, pod.UID)
	} else {
		n.inbox[pod.UID] = pod
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// runCtx is the context of the node's Run, for the API reads of the loop.
func (n *Node) runCtx() context.Context {
	if n.ctx == nil {
		return context.Background()
	}
	return n.ctx
}

// loop is the node's one goroutine until ctx ends: the pods (admission,
// and the runner's Advance, on which the runner's hooks and the pods'
// runtimes run), the node status and the Lease.
func (n *Node) loop(ctx context.Context) error {
	n.ctx = ctx
	var t clock.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		now := n.clock.Now()
		n.mu.Lock()
		n.lastLoop = now
		n.mu.Unlock()
		n.receive(now)
		nextPods := n.runner.Advance(now)
		n.gauges()
		if !now.Before(n.nextNode) {
			n.reportStatus(ctx, now)
		}
		if !now.Before(n.nextRenew) {
			n.renew(ctx, now)
		}
		next := n.nextNode
		if n.nextRenew.Before(next) {
			next = n.nextRenew
		}
		if !nextPods.IsZero() && nextPods.Before(next) {
			next = nextPods
		}
		d := max(next.Sub(n.clock.Now()), 0)
		if t == nil {
			t = n.clock.NewTimer(d)
		} else {
			t.Reset(d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-n.wake:
		case <-n.runner.Wakeup():
		case <-t.C():
			continue
		}
		if !t.Stop() {
			select {
			case <-t.C():
			default:
			}
		}
	}
}

// receive takes the inbox: new pods are admitted, known ones handed to the
// runner, gone ones forgotten.
func (n *Node) receive(now time.Time) {
	n.mu.Lock()
	inbox, gone := n.inbox, n.gone
	if len(inbox) == 0 && len(gone) == 0 {
		n.mu.Unlock()
		return
	}
	n.inbox, n.gone = map[types.UID]*corev1.Pod{}, map[types.UID]*corev1.Pod{}
	n.mu.Unlock()
	for uid, last := range gone {
		if p, ok := n.pods[uid]; ok {
			n.forget(p, last)
		}
	}
	fresh := make([]*corev1.Pod, 0, len(inbox))
	for uid, pod := range inbox {
		p, ok := n.pods[uid]
		if !ok {
			fresh = append(fresh, pod)
			continue
		}
		p.api = pod
		switch {
		case p.inRunner:
			if err := n.runner.Update(pod); err != nil {
				n.log.Error(err, "pod update", "pod", pod.Namespace+"/"+pod.Name)
			}
		case pod.DeletionTimestamp != nil && !p.terminated:
			// A pod found terminal when the node started, now deleted:
			// its final status lets the status engine delete it.
			n.terminate(p, now)
		}
	}
	// Admit in creation order, as the kubelet sorts the pods of one update.
	slices.SortFunc(fresh, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return compareStrings(string(a.UID), string(b.UID))
	})
	for _, pod := range fresh {
		n.start(pod, now)
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// terminate caches the final status of a pod the node found terminal.
func (n *Node) terminate(p *nodePod, now time.Time) {
	p.terminated = true
	if err := n.cache.TerminatePod(p.api, now); err != nil {
		n.log.Error(err, "terminal pod", "pod", p.api.Namespace+"/"+p.api.Name)
	}
}

// start admits a pod the node has not seen and hands it to the runner.
func (n *Node) start(pod *corev1.Pod, now time.Time) {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		// A terminal pod never runs again; a deleted one is removed.
		p := &nodePod{api: pod, finished: true}
		n.pods[pod.UID] = p
		if pod.DeletionTimestamp != nil {
			n.terminate(p, now)
		}
		return
	}
	var running []*corev1.Pod
	for _, p := range n.pods {
		if p.running {
			running = append(running, p.api)
		}
	}
	taints := n.opts.Taints
	if n.node != nil {
		taints = n.node.Spec.Taints
	}
	if rej := admit(pod, running, n.opts.Allocatable, taints, n.kubelet.Pressures()); rej != nil {
		n.reject(pod, rej, now)
		return
	}
	rt, err := n.opts.Runtime(pod)
	if err != nil {
		n.reject(pod, &Rejection{Reason: ReasonRuntimeRejected, Message: err.Error()}, now)
		return
	}
	if needsGate(pod) {
		rt = &gatedRuntime{Runtime: rt, n: n, pod: pod}
	}
	p := &nodePod{api: pod, running: true, inRunner: true, firstSeen: now}
	n.pods[pod.UID] = p
	if err := n.runner.Add(pod, rt); err != nil {
		delete(n.pods, pod.UID)
		r := &Rejection{Reason: ReasonRuntimeRejected, Message: err.Error()}
		if errors.Is(err, podrunner.ErrPodCIDRExhausted) {
			r = &Rejection{Reason: "PodCIDRExhausted", Message: "no free IP address in the node's pod CIDR " + n.runner.PodCIDR()}
		}
		n.reject(pod, r, now)
		return
	}
	n.count(func(s *NodeStats) { s.Admitted++; s.Running++ })
	n.metrics.admissions.WithLabelValues("admitted", "").Inc()
}

// reject fails a pod the node will not run, as the kubelet's rejectPod does.
func (n *Node) reject(pod *corev1.Pod, r *Rejection, now time.Time) {
	if err := n.runner.Reject(pod, now, r.Reason, r.Message); err != nil {
		n.log.Error(err, "rejected pod", "pod", pod.Namespace+"/"+pod.Name)
	}
	n.pods[pod.UID] = &nodePod{api: pod, finished: true, inRunner: true}
	n.count(func(s *NodeStats) { s.Rejected++ })
	n.metrics.admissions.WithLabelValues("rejected", r.Reason).Inc()
}

// forget drops a pod the API server no longer has; last is its last
// object. A pod still running is killed by the runner first, and dropped
// once its machine is finished.
func (n *Node) forget(p *nodePod, last *corev1.Pod) {
	if p.inRunner {
		if err := n.runner.Remove(p.api.UID, last); err != nil {
			n.log.Error(err, "pod removal", "pod", p.api.Namespace+"/"+p.api.Name)
		}
	}
	if p.running {
		p.removed = true
		return
	}
	n.logs.forget(p.api)
	delete(n.pods, p.api.UID)
}

func (n *Node) event(ref *corev1.ObjectReference, eventtype, reason, message string) {
	// A refused or dropped event is counted by the broadcaster.
	_ = n.rec.Record(ref, nil, eventtype, reason, message)
}

func (n *Node) nodeRef() *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Node", Name: n.opts.Name, UID: types.UID(n.opts.Name)}
}

// The kubelet's registration back-off: the first retry after
// registerRetryFirst, doubling up to registerRetryMax.
const (
	registerRetryFirst = 100 * time.Millisecond
	registerRetryMax   = 7 * time.Second
)

// registerUntilDone registers the node, trying again after each failure
// until it succeeds or ctx ends.
func (n *Node) registerUntilDone(ctx context.Context) error {
	delay := registerRetryFirst
	for {
		err := n.register(ctx)
		if err == nil || errors.Is(err, errOtherShard) {
			return err // another shard's Node is a configuration error, not a passing one
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n.count(func(s *NodeStats) { s.RegisterErrors++ })
		n.log.Error(err, "node registration failed; trying again", "after", delay)
		t := n.clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
		delay = min(2*delay, registerRetryMax)
	}
}

// errOtherShard is the registration error of a fleet node whose Node
// carries another shard's label.
var errOtherShard = errors.New("another shard's node")

// register creates the Node, or adopts it when it exists, and takes the pod
// CIDR the cluster assigned it.
func (n *Node) register(ctx context.Context) error {
	want := n.nodeObject()
	nodes := n.client.CoreV1().Nodes()
	got, err := nodes.Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		got, err = nodes.Get(ctx, n.opts.Name, metav1.GetOptions{})
		if shard, ok := n.opts.Labels[FleetShardLabel]; err == nil && ok && got.Labels[FleetShardLabel] != shard {
			// Another shard's node: taking it over would make two processes
			// write one Node and one Lease.
			return fmt.Errorf("kube: register node %s: %w: it exists with label %s=%q, not %q", n.opts.Name, errOtherShard, FleetShardLabel, got.Labels[FleetShardLabel], shard)
		}
		if err == nil {
			got.Status.Capacity, got.Status.Allocatable = want.Status.Capacity, want.Status.Allocatable
			got.Status.Addresses, got.Status.DaemonEndpoints, got.Status.NodeInfo = want.Status.Addresses, want.Status.DaemonEndpoints, want.Status.NodeInfo
			got, err = nodes.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("kube: register node %s: %w", n.opts.Name, err)
	}
	n.node = got
	if got.Spec.PodCIDR != "" && got.Spec.PodCIDR != n.runner.PodCIDR() {
		if _, err := podCIDR(got.Spec.PodCIDR); err == nil {
			_ = n.runner.SetPodCIDR(got.Spec.PodCIDR)
		}
	}
	return nil
}

// kubeletVersion is the release the node reports: its lifecycle version's.
func (n *Node) kubeletVersion() string {
	if v := n.opts.Lifecycle.Version; v.Valid() {
		return v.Release()
	}
	return KubeletVersion
}

func (n *Node) nodeObject() *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname: n.opts.Name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
	}
	for k, v := range n.opts.Labels {
		labels[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.opts.Name, Labels: labels},
		Spec:       corev1.NodeSpec{PodCIDR: n.opts.PodCIDR, PodCIDRs: []string{n.opts.PodCIDR}, Taints: slices.Clone(n.opts.Taints)},
		Status: corev1.NodeStatus{
			Capacity: n.opts.Capacity.DeepCopy(), Allocatable: n.opts.Allocatable.DeepCopy(),
			Addresses:       n.addresses(),
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: n.opts.Port}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: n.opts.Name, SystemUUID: n.opts.Name, BootID: n.opts.Name,
				KernelVersion: "nodestate", OSImage: "nodestate simulated node",
				ContainerRuntimeVersion: "nodestate://" + n.kubeletVersion(),
				KubeletVersion:          n.kubeletVersion(), OperatingSystem: "linux", Architecture: "amd64",
			},
			DeclaredFeatures: declaredFeatures(n.opts.Lifecycle.Version),
		},
	}
}

// addresses are the node's addresses in the kubelet's order: the InternalIP,
// then the Hostname when there is one.
func (n *Node) addresses() []corev1.NodeAddress {
	out := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.opts.Address}}
	if n.opts.Hostname != "" {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeHostName, Address: n.opts.Hostname})
	}
	return out
}

// nodeStatusUpdateRetry is how many times in a row the kubelet tries to write
// its node status before it waits for the next tick.
const nodeStatusUpdateRetry = 5

// reportStatus runs the kubelet's status computation and writes the Node's
// conditions when the report rule says so.
func (n *Node) reportStatus(ctx context.Context, now time.Time) {
	var s nodecondition.Sample
	s.Set(nodecondition.SignalMemoryAvailable, 12<<30, 16<<30)
	s.Set(nodecondition.SignalNodeFsAvailable, 70<<30, 100<<30)
	s.Set(nodecondition.SignalNodeFsInodesFree, 5_800_000, 6_553_600)
	s.Set(nodecondition.SignalImageFsAvailable, 70<<30, 100<<30)
	s.Set(nodecondition.SignalPIDAvailable, 4_190_000, 4_194_304)
	n.nextNode = now.Add(n.opts.Kubelet.StatusUpdateFrequency)
	if _, err := n.kubelet.Observe(now, &s); err != nil {
		n.log.Error(err, "node signals")
		return
	}
	r, err := n.kubelet.Status(now, nodecondition.Health{})
	if err != nil {
		n.log.Error(err, "node status")
		return
	}
	for _, reason := range r.Events {
		n.event(n.nodeRef(), corev1.EventTypeNormal, reason, fmt.Sprintf("Node %s status is now: %s", n.opts.Name, reason))
	}
	if !r.Send {
		return
	}
	// A strategic merge patch of the conditions (merged by type), as the
	// kubelet sends: no resourceVersion, so the controllers' own writes to
	// the Node (taints, annotations) never make it conflict; and, as the
	// kubelet, up to nodeStatusUpdateRetry attempts in a row.
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": r.Conditions}})
	if err != nil {
		n.log.Error(err, "node status patch")
		return
	}
	var cur *corev1.Node
	for range nodeStatusUpdateRetry {
		if cur, err = n.client.CoreV1().Nodes().PatchStatus(ctx, n.opts.Name, patch); err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		n.kubelet.ReportFailed()
		n.count(func(s *NodeStats) { s.NodeErrors++ })
		// ReportFailed makes the next computation send again; it comes at the
		// next status tick, as the kubelet's does, never in a hot loop.
		n.log.Error(err, "node status write")
		return
	}
	n.node = cur
	n.count(func(s *NodeStats) { s.NodeReports++ })
}

// renew writes the node's Lease on the renewer's schedule.
func (n *Node) renew(ctx context.Context, now time.Time) {
	holder := n.opts.Name
	secs := int32(n.opts.Kubelet.LeaseDuration / time.Second)
	at := metav1.NewMicroTime(now)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: n.opts.Name, Namespace: corev1.NamespaceNodeLease},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &at},
	}
	if n.node != nil && n.node.UID != "" {
		lease.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.opts.Name, UID: n.node.UID}}
	}
	// As the kubelet, renew the Lease last written with one PUT; read it
	// again only when there is none or that PUT fails (someone else wrote
	// it, or it was deleted).
	var err error
	if n.leaseObj != nil {
		l := n.leaseObj.DeepCopy()
		l.Spec = lease.Spec
		if l.OwnerReferences == nil {
			l.OwnerReferences = lease.OwnerReferences
		}
		if l, err = n.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{}); err == nil {
			n.leaseObj = l
		} else {
			n.leaseObj = nil
		}
	}
	if n.leaseObj == nil {
		n.leaseObj, err = renewLease(ctx, n.client, lease)
	}
	if err != nil {
		n.count(func(s *NodeStats) { s.LeaseErrors++ })
		n.log.Error(err, "lease renewal")
		next, ferr := n.lease.Failed(now)
		if ferr != nil {
			next = now.Add(time.Second)
		}
		n.nextRenew = next
		return
	}
	_, next, err := n.lease.Renewed(now)
	if err != nil {
		next = now.Add(n.opts.Kubelet.LeaseRenewInterval())
	}
	n.nextRenew = next
	n.count(func(s *NodeStats) { s.LeaseRenewals++ })
}
