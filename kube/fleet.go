package kube

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/nodestate/nodestate/events"
)

// FleetShardLabel is the label every node of a fleet carries, with the
// fleet's FleetOptions.Shard as value. A fleet does not adopt a Node of one
// of its names that carries another shard's value, so two processes given
// overlapping names fail at registration instead of both writing one Node.
const FleetShardLabel = "nodestate.io/shard"

// FleetOptions configures a Fleet. Start from DefaultFleetOptions.
type FleetOptions struct {
	// NamePrefix, First and Nodes name the fleet's nodes: NamePrefix
	// followed by the index i, for i from First to First+Nodes-1
	// ("fake-0", "fake-1", ...). Each name must be a valid Node name.
	NamePrefix string
	First      int
	Nodes      int
	// Shard is the value of FleetShardLabel on the fleet's nodes; a label
	// value, not empty.
	Shard string
	// PodCIDR is the range the nodes' pod CIDRs are carved from: node i
	// (its index, First included) gets the i-th subnet of prefix length
	// NodeCIDRMaskSize. Processes sharing one PodCIDR with disjoint indexes
	// never hand out one IP twice. A pod CIDR the cluster assigns a Node
	// (spec.podCIDR) wins, as for a single Node.
	PodCIDR          string
	NodeCIDRMaskSize int
	// Listen is the host the nodes serve HTTPS on (see Options.Listen):
	// the k-th node of this fleet (from 0) listens on Listen:(Node.Port+k)
	// and reports that port as its kubelet endpoint. Empty serves nothing,
	// and every node reports Node.Port.
	Listen string
	// Node is every node's options. Its Name, PodCIDR and Listen must be
	// empty: the fleet sets them per node. FleetShardLabel is added to its
	// Labels, and its Logger gets the node's name as the value "node".
	Node Options
}

// DefaultFleetOptions returns the options of a fleet of n nodes called
// prefix0 to prefix(n-1), shard "0", pod CIDRs the /24s of 10.244.0.0/16 (so
// at most 256 nodes), serving nothing, each node with DefaultOptions.
func DefaultFleetOptions(prefix string, n int) FleetOptions {
	node := DefaultOptions("")
	node.PodCIDR = ""
	return FleetOptions{NamePrefix: prefix, Nodes: n, Shard: "0",
		PodCIDR: "10.244.0.0/16", NodeCIDRMaskSize: 24, Node: node}
}

// Fleet runs many nodes in one process. They share one client, and with it
// its rate limits and connections, and one pod informer: a single watch of
// the pods whose spec.nodeName is set, each pod handed to the node it is
// bound to (pods bound to nodes outside the fleet are ignored). Everything
// else is each node's own, as with a single Node: its Node object, Lease,
// conditions, pod CIDR, admission, podlifecycle machines, status engine and
// event broadcaster, on goroutines of its own (its loop, its status engine,
// its event writer), so a node busy with a slow pod or a slow write never
// holds up another. The informer's handler only puts a pod in its node's
// inbox.
//
// Several processes run one large fleet as shards: each with its own
// First, Nodes and Shard (see docs/fleet.md).
//
// Use NewFleet; Run does the work and runs once. The zero Fleet has no
// nodes: its Run returns an error wrapping ErrNotInitialized, Stats counts
// nothing and Nodes is empty. A Fleet is safe for concurrent use: Stats and
// Nodes may be called while Run runs.
type Fleet struct {
	client kubernetes.Interface
	nodes  []*Node
	byName map[string]*Node
	// selector is the pod informer's field selector.
	selector string

	mu      sync.Mutex
	started bool
}

// FleetStats is what a fleet's nodes did.
type FleetStats struct {
	// Nodes is the number of nodes in the fleet.
	Nodes int
	// Total sums the NodeStats of every node.
	Total NodeStats
}

// NewFleet returns a fleet for opts that talks to the API server through
// client. Each field of opts is checked; a refused one gives an
// *OptionError (unwrapping to ErrInvalidOptions), a field of the node
// template named "Node.<field>" (an unsupported Version in the template,
// "Node.Lifecycle.Version" or "Node.Kubelet.Version", also matches
// kubeversion.ErrUnsupportedVersion, as with NewNode). It starts no
// goroutine.
//
// The client needs more than a node's identity, which may read and write
// only its own Node, Lease and pods: see FleetClusterRole.
func NewFleet(opts FleetOptions, client kubernetes.Interface) (*Fleet, error) {
	if client == nil {
		return nil, optionError("client", "nil", "a client is required")
	}
	if opts.Nodes < 1 {
		return nil, optionError("Nodes", opts.Nodes, "want at least 1")
	}
	if opts.First < 0 {
		return nil, optionError("First", opts.First, "must not be negative")
	}
	if opts.NamePrefix == "" {
		return nil, optionError("NamePrefix", "", "a name prefix is required")
	}
	for _, i := range []int{opts.First, opts.First + opts.Nodes - 1} {
		if errs := validation.IsDNS1123Subdomain(fleetNodeName(opts.NamePrefix, i)); len(errs) > 0 {
			return nil, optionError("NamePrefix", opts.NamePrefix, "node name "+fleetNodeName(opts.NamePrefix, i)+": "+strings.Join(errs, "; "))
		}
	}
	if opts.Shard == "" {
		return nil, optionError("Shard", "", "a shard name is required")
	}
	if errs := validation.IsValidLabelValue(opts.Shard); len(errs) > 0 {
		return nil, optionError("Shard", opts.Shard, strings.Join(errs, "; "))
	}
	fleetCIDR, err := netip.ParsePrefix(opts.PodCIDR)
	if err != nil || !fleetCIDR.Addr().Is4() {
		return nil, optionError("PodCIDR", opts.PodCIDR, "want an IPv4 range")
	}
	if opts.NodeCIDRMaskSize < fleetCIDR.Bits() || opts.NodeCIDRMaskSize > 30 {
		return nil, optionError("NodeCIDRMaskSize", opts.NodeCIDRMaskSize, fmt.Sprintf("want %d to 30 for the pod CIDR %s", fleetCIDR.Bits(), fleetCIDR))
	}
	if subnets := 1 << (opts.NodeCIDRMaskSize - fleetCIDR.Bits()); opts.First+opts.Nodes > subnets {
		return nil, optionError("PodCIDR", opts.PodCIDR, fmt.Sprintf("has %d subnets /%d, node indexes go to %d", subnets, opts.NodeCIDRMaskSize, opts.First+opts.Nodes-1))
	}
	if opts.Listen != "" {
		if strings.Contains(opts.Listen, ":") && net.ParseIP(opts.Listen) == nil {
			return nil, optionError("Listen", opts.Listen, "want a host without a port")
		}
		if opts.Node.Port <= 0 || int(opts.Node.Port)+opts.Nodes-1 > 65535 {
			return nil, optionError("Node.Port", opts.Node.Port, fmt.Sprintf("want a port from which %d ports up to 65535 are free", opts.Nodes))
		}
	}
	for field, v := range map[string]string{"Node.Name": opts.Node.Name, "Node.PodCIDR": opts.Node.PodCIDR, "Node.Listen": opts.Node.Listen} {
		if v != "" {
			return nil, optionError(field, v, "must be empty: the fleet sets it per node")
		}
	}

	f := &Fleet{client: client, byName: make(map[string]*Node, opts.Nodes), selector: "spec.nodeName!="}
	base := fleetCIDR.Masked().Addr().As4()
	start := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	size := uint32(1) << (32 - opts.NodeCIDRMaskSize)
	for k := range opts.Nodes {
		i := opts.First + k
		no := opts.Node
		no.Name = fleetNodeName(opts.NamePrefix, i)
		a := start + uint32(i)*size
		no.PodCIDR = netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}), opts.NodeCIDRMaskSize).String()
		no.Labels = maps.Clone(opts.Node.Labels)
		if no.Labels == nil {
			no.Labels = map[string]string{}
		}
		no.Labels[FleetShardLabel] = opts.Shard
		if opts.Listen != "" {
			no.Port = opts.Node.Port + int32(k)
			no.Listen = net.JoinHostPort(opts.Listen, strconv.Itoa(int(no.Port)))
		}
		no.Logger = opts.Node.Logger.WithValues("node", no.Name)
		n, err := NewNode(no, client)
		if err != nil {
			var oe *OptionError
			if errors.As(err, &oe) {
				return nil, &OptionError{Field: "Node." + oe.Field, Value: oe.Value, Reason: oe.Reason, Err: oe.Err}
			}
			return nil, err
		}
		f.nodes = append(f.nodes, n)
		f.byName[no.Name] = n
	}
	return f, nil
}

func fleetNodeName(prefix string, i int) string { return prefix + strconv.Itoa(i) }

// Nodes returns the fleet's nodes in index order. Run them only through
// the fleet: Node.Run of one of them fails once the fleet started, and the
// fleet's Run fails if one of them was run on its own.
func (f *Fleet) Nodes() []*Node {
	if f == nil {
		return nil
	}
	return append([]*Node(nil), f.nodes...)
}

// Stats returns what the fleet's nodes did so far. It is safe to call while
// Run runs. The zero Fleet has no nodes.
func (f *Fleet) Stats() FleetStats {
	st := FleetStats{Nodes: len(f.nodes)}
	for _, n := range f.nodes {
		s := n.Stats()
		t := &st.Total
		t.Admitted += s.Admitted
		t.Rejected += s.Rejected
		t.Finished += s.Finished
		t.Running += s.Running
		t.Syncs += s.Syncs
		t.PodUpdates += s.PodUpdates
		t.PodUpdatesSynced += s.PodUpdatesSynced
		t.NodeReports += s.NodeReports
		t.LeaseRenewals += s.LeaseRenewals
		t.NodeErrors += s.NodeErrors
		t.LeaseErrors += s.LeaseErrors
		t.RegisterErrors += s.RegisterErrors
		t.MountFailures += s.MountFailures
	}
	return st
}

// Run registers every node of the fleet (a few at a time) and runs them
// until ctx ends. A registration that fails is tried again as a single
// Node's is (counted in its NodeStats.RegisterErrors), and the nodes start
// once all are registered. Run returns ctx's error after a clean stop, with
// every goroutine it started ended, or at once the error of a node whose
// name another shard's Node holds (then no node runs). Use NewFleet: Run of
// the zero Fleet returns an error wrapping ErrNotInitialized.
func (f *Fleet) Run(ctx context.Context) error {
	if f.client == nil {
		return fmt.Errorf("%w: Fleet.Run of a Fleet not made by NewFleet", ErrNotInitialized)
	}
	f.mu.Lock()
	if f.started {
		f.mu.Unlock()
		return errors.New("kube: Fleet.Run called twice")
	}
	f.started = true
	f.mu.Unlock()
	for _, n := range f.nodes {
		if err := n.claim(); err != nil {
			return err
		}
	}
	return f.run(ctx)
}

// registerParallelism bounds the node registrations in flight when a fleet
// starts; the client's rate limiter paces them further.
const registerParallelism = 16

// run is the work of Fleet.Run and Node.Run, for nodes already claimed.
func (f *Fleet) run(ctx context.Context) (err error) {
	if err := f.registerAll(ctx); err != nil {
		return err
	}
	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()
	for _, n := range f.nodes {
		if n.opts.Listen == "" {
			continue
		}
		stop, addr, err := n.serve()
		if err != nil {
			return err
		}
		cleanups = append(cleanups, stop)
		n.mu.Lock()
		n.addr = addr
		n.mu.Unlock()
	}
	var recording []*events.Broadcaster
	cleanups = append(cleanups, func() {
		// Each broadcaster flushes what it holds; together at most 5 s.
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for _, b := range recording {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = b.Shutdown(shutdownCtx)
			}()
		}
		wg.Wait()
	})
	for _, n := range f.nodes {
		if err := n.bcast.StartRecordingToSink(&CoreEventSink{Client: f.client.CoreV1()}, events.DefaultCorrelatorOptions()); err != nil {
			return err
		}
		recording = append(recording, n.bcast)
		n.event(n.nodeRef(), corev1.EventTypeNormal, "Starting", "Starting kubelet.")
	}

	var wg sync.WaitGroup
	engineCtx, stopEngines := context.WithCancel(ctx)
	for _, n := range f.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = n.engine.Run(engineCtx)
		}()
	}
	cleanups = append(cleanups, func() {
		stopEngines()
		wg.Wait()
	})

	factory := informers.NewSharedInformerFactoryWithOptions(f.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = f.selector }))
	inf := factory.Core().V1().Pods().Informer()
	if err := inf.SetTransform(dropManagedFields); err != nil {
		return err
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f.dispatch(obj, false) },
		UpdateFunc: func(_, obj any) { f.dispatch(obj, false) },
		DeleteFunc: func(obj any) { f.dispatch(obj, true) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	cleanups = append(cleanups, factory.Shutdown)

	var loops sync.WaitGroup
	for _, n := range f.nodes {
		loops.Add(2)
		go func() {
			defer loops.Done()
			_ = n.podsLoop(ctx)
		}()
		go func() {
			defer loops.Done()
			_ = n.rep.reportLoop(ctx)
		}()
	}
	loops.Wait()
	return ctx.Err()
}

// registerAll registers the nodes, registerParallelism at a time.
func (f *Fleet) registerAll(ctx context.Context) error {
	sem := make(chan struct{}, registerParallelism)
	errs := make([]error, len(f.nodes))
	var wg sync.WaitGroup
	for i, n := range f.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = n.rep.registerUntilDone(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// dispatch hands a watched pod to the node it is bound to; it runs on the
// informer's goroutine.
func (f *Fleet) dispatch(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if n := f.byName[pod.Spec.NodeName]; n != nil {
		n.deliver(pod, deleted)
	}
}

// dropManagedFields removes what no node reads from a pod before the
// informer stores it: its managedFields, often the larger part of a small
// pod's metadata.
func dropManagedFields(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pod.ManagedFields = nil
	}
	return obj, nil
}

// FleetClusterRole returns the ClusterRole a fleet's client needs, named
// name. A node's own identity (system:node:NAME under the Node authorizer)
// may read and write only its own Node, Lease and pods, and lists pods only
// with the field selector spec.nodeName=NAME, so a fleet runs as another
// user (or service account) bound to this role:
//
//   - nodes: get, create (registration); nodes/status: update (adopting an
//     existing Node), patch (conditions);
//   - pods: get, list, watch (the fleet's one informer over the pods with
//     spec.nodeName set), delete (with grace 0 once a pod's containers
//     stopped); pods/status: patch;
//   - leases (coordination.k8s.io): get, create, update, used in the
//     kube-node-lease namespace only (bind that rule with a RoleBinding there
//     to narrow it);
//   - events: create, patch (the kubelet's events, in the pods' namespaces);
//   - configmaps, secrets, persistentvolumeclaims: get (whether a pod's
//     volumes can be set up; the objects' contents are not read);
//     runtimeclasses (node.k8s.io): get.
//
// Unlike a kubelet's identity, this role is not limited to the fleet's own
// objects: the fleet writes only the Nodes, Leases and pods of its names,
// but the API server does not enforce that.
func FleetClusterRole(name string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "create"}},
			{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"patch"}},
			{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "persistentvolumeclaims"}, Verbs: []string{"get"}},
			{APIGroups: []string{nodev1.GroupName}, Resources: []string{"runtimeclasses"}, Verbs: []string{"get"}},
		},
	}
}
