package kube

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
)

// KubeletVersion is the version a Node reports in its nodeInfo by default:
// the Kubernetes release whose kubelet nodestate follows. A node made with
// DefaultOptionsFor reports the release of its version instead.
const KubeletVersion = "v1.37.2"

// Options configures a Node. Start from DefaultOptions.
type Options struct {
	// Name is the node's name; the client should authenticate as
	// system:node:<Name> in the group system:nodes.
	Name string
	// Clock is the node's time. Nil is the real clock.
	Clock clock.Clock
	// Capacity and Allocatable are the node's resources ("cpu", "memory",
	// "pods", ...). Allocatable bounds what admission accepts.
	Capacity, Allocatable corev1.ResourceList
	// RuntimeVersion is the Node's containerRuntimeVersion,
	// "<runtime name>://<version>" as a CRI runtime names itself (its name is
	// the scheme of its container IDs). Empty reports none.
	RuntimeVersion string
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

// DefaultOptionsFor returns DefaultOptions(name) for a node that
// behaves as the kubelet of Kubernetes minor v: its pods' lifecycle and pod
// status cache take v's defaults (podlifecycle.DefaultOptionsFor, and
// through Lifecycle statussync's), its node status loop takes
// nodecondition.DefaultKubeletOptionsFor(v), and its nodeInfo reports v's
// release (v.Release(), for example "v1.34.4"). The events package has no
// version-dependent rule (docs/versions.md row EV-V1). A v that is none of
// kubeversion's constants is kept in Lifecycle and Kubelet, so that NewNode
// refuses it.
func DefaultOptionsFor(name string, v kubeversion.Version) Options {
	opts := DefaultOptions(name)
	opts.Lifecycle = podlifecycle.DefaultOptionsFor(v)
	opts.Lifecycle.Rand = processRand{}
	opts.Kubelet = nodecondition.DefaultKubeletOptionsFor(v)
	return opts
}

// noGetEngineOptions are the status engine's defaults in NoGet mode: the
// node's watch delivers every pod it runs, so the engine knows the
// server's copy and patches it without the kubelet's GET first; the
// resourceVersion precondition on every patch keeps that safe (a stale copy
// conflicts and is read again). A deliberate difference from the kubelet:
// about one request per status version instead of two.
func noGetEngineOptions() statussync.EngineOptions {
	o := statussync.DefaultEngineOptions()
	o.Planner.NoGet = true
	return o
}

func lifecycleWithJitter() podlifecycle.Options {
	o := podlifecycle.DefaultOptions()
	o.Rand = processRand{}
	return o
}

// processRand is the process-wide source of math/rand/v2 as a
// podlifecycle.Rand: a node on a real clock jitters its requeues and first
// probe delays as the kubelet does.
type processRand struct{}

func (processRand) Float64() float64 { return rand.Float64() }

// DefaultOptions returns the options of a node called name: 4 CPUs,
// 16 GiB, 100 GiB of ephemeral storage and 110 pods, in the kubelet's
// formats (nodecondition.Capacity), with the kubelet's node allocatable
// (nodecondition.Allocatable: 100Mi of memory and 10% of the storage
// reserved by the default hard eviction thresholds), the simulated
// runtime's containerRuntimeVersion, pod IPs from
// 10.244.0.0/24, address 127.0.0.1 and port 10250, no Hostname address,
// the kubelet's jitter of requeues and probe delays (from the process-wide
// random source), the status engine in NoGet mode (no GET before a status
// PATCH: the node's watch has the pod), and the kubelet's defaults for
// everything else.
func DefaultOptions(name string) Options {
	res := nodecondition.Capacity(4000, 16<<30, 100<<30, 110)
	return Options{
		Name: name, Capacity: res, Allocatable: nodecondition.Allocatable(res, nil, nodecondition.DefaultHardThresholds()),
		RuntimeVersion: simruntime.RuntimeVersion,
		PodCIDR:        "10.244.0.0/24", Address: "127.0.0.1", Port: 10250,
		Lifecycle: lifecycleWithJitter(),
		Kubelet:   nodecondition.DefaultKubeletOptions(),
		Status:    noGetEngineOptions(),
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
	opts    Options
	clock   clock.Clock
	log     logr.Logger

	metrics *nodeMetrics
	logs    *logStore

	cache  *statussync.Cache
	engine *statussync.Engine
	bcast  *events.Broadcaster
	rec    *events.Recorder

	// rep registers the node and reports its status and Lease, on the
	// report loop.
	rep *reporter

	// runner runs the admitted pods; the loop calls its Advance.
	runner *podrunner.Runner

	// inbox holds the newest version of each pod the watch delivered since the
	// loop last looked, and the last object of each it saw deleted; wake
	// tells the loop.
	mu      sync.Mutex
	inbox   map[types.UID]*corev1.Pod
	gone    map[types.UID]*corev1.Pod
	wake    chan struct{}
	started bool
	addr    string
	// podsSince is when the pods loop began the round it is in (zero
	// between rounds).
	podsSince time.Time

	// owned by the pods loop (and the runner's hooks, which run on it)
	ctx  context.Context
	pods map[types.UID]*nodePod

	stats   NodeStats
	statsMu sync.Mutex
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
	// PodUpdates counts the watch's updates of a pod the node runs;
	// PodUpdatesSynced those of them that made it sync the pod (a change of
	// spec, labels, annotations or deletion; podrunner.Stats). The node's
	// own status writes coming back cost no sync.
	PodUpdates, PodUpdatesSynced int
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
func NewNode(opts Options, client kubernetes.Interface) (*Node, error) {
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
		objects: apiObjects{client: client, clock: opts.Clock},
	}
	// The pods come from an informer, whose objects no one changes: the
	// cache and the engine keep them, not copies.
	co := statussync.Options{Features: opts.Lifecycle.Features, Version: opts.Lifecycle.Version, SharedPods: true}
	if n.cache, err = statussync.NewCache(co); err != nil {
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
	if n.engine, err = statussync.NewEngine(so, n.cache, &StatusTransport{Client: client}); err != nil {
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
	if n.rep, err = newReporter(&n.opts, client); err != nil {
		return nil, err
	}
	n.rep.event = func(reason, message string) { n.event(n.nodeRef(), corev1.EventTypeNormal, reason, message) }
	n.rep.count = n.count
	n.rep.images = func() []podrunner.Image { return n.runner.NodeImages() }
	n.rep.podCIDR = func(cidr string) {
		if cidr != n.runner.PodCIDR() {
			_ = n.runner.SetPodCIDR(cidr)
		}
	}
	if _, err := podlifecycle.New(opts.Lifecycle, probePod()); err != nil {
		return nil, fmt.Errorf("%w: lifecycle: %v", ErrInvalidOptions, err)
	}
	ro := podrunner.DefaultOptions()
	ro.Lifecycle, ro.Clock, ro.PodCIDR, ro.Logger = opts.Lifecycle, opts.Clock, opts.PodCIDR, opts.Logger
	ro.HostIPs = []string{opts.Address}
	ro.OnDemandRelistDelay = 10 * time.Millisecond // the kubelet's: a container that ran 1 ms is seen exited
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
	rs := n.runner.Stats()
	s.Syncs = int(rs.Steps)
	s.PodUpdates, s.PodUpdatesSynced = int(rs.Updates), int(rs.UpdatesSynced)
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

// PodCIDR returns the range the node hands pod IPs out from: its
// Options.PodCIDR, or the spec.podCIDR the cluster assigned its Node.
func (n *Node) PodCIDR() string { return n.runner.PodCIDR() }

// ServingAddress returns the address the node's HTTPS server listens on,
// once Run started it ("" before, or without Options.Listen).
func (n *Node) ServingAddress() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.addr
}

func (n *Node) event(ref *corev1.ObjectReference, eventtype, reason, message string) {
	// A refused or dropped event is counted by the broadcaster.
	_ = n.rec.Record(ref, nil, eventtype, reason, message)
}

func (n *Node) nodeRef() *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Node", Name: n.opts.Name, UID: types.UID(n.opts.Name)}
}
