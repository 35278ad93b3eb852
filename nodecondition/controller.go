package nodecondition

import (
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Reasons and messages the node-lifecycle controller writes.
const (
	ReasonNodeStatusUnknown      = "NodeStatusUnknown"
	MessageNodeStatusUnknown     = "Kubelet stopped posting node status."
	ReasonNodeStatusNeverUpdated = "NodeStatusNeverUpdated"
	MessageNodeNeverUpdated      = "Kubelet never posted node status."
	// ReasonNodeNotReady is the reason of the node event and of the Warning
	// pod event recorded when the controller marks the node's pods not ready.
	ReasonNodeNotReady = "NodeNotReady"
	// MessagePodNodeNotReady is the message of that pod event.
	MessagePodNodeNotReady = "Node is not ready"
	// LabelExcludeDisruption leaves a node out of zone counting.
	LabelExcludeDisruption = "node.kubernetes.io/exclude-disruption"
	// TaintRetryDelay is how long a queued node whose Ready condition is
	// missing waits before the tainting pass tries it again.
	TaintRetryDelay = 50 * time.Millisecond
)

// LeaseLookup reads a node's Lease from the API server, bypassing any cache:
// the live lookup of the NodeControllerLeaseCircuitBreaker gate. It returns
// the Lease's resourceVersion and whether it exists; an error skips the node
// for the pass.
type LeaseLookup interface {
	LiveLease(node string) (resourceVersion string, found bool, err error)
}

type leaseView struct {
	renew   time.Time
	rv      string
	present bool
}

type podRecord struct {
	ref        PodRef
	readyKnown bool
	ready      v1.ConditionStatus
	tols       []v1.Toleration
}

type nodeRecord struct {
	name          string
	zone          string
	excluded      bool
	created       time.Time
	unschedulable bool
	conds         []v1.NodeCondition
	taints        []v1.Taint
	lease         leaseView
	pods          []*podRecord

	seen              bool
	probe             time.Time
	readyTransition   time.Time
	savedReady        v1.NodeCondition
	hasSavedReady     bool
	savedLease        leaseView
	retryPodsNotReady bool
}

type zoneRecord struct {
	active   bool // has a state; false once a pass counted none of its nodes
	state    ZoneState
	limiter  bucket
	q        queue
	counted  int
	notReady int
}

// Controller is the node-lifecycle controller as a value: it holds the
// controller's view of nodes, leases and pods (what its informers would show),
// its per-node health bookkeeping and its per-zone states and tainting queues.
// Monitor is the 5 s health pass; Taint is the 100 ms NoExecute tainting pass.
// Time is an argument; it is not safe for concurrent use. Use NewController:
// the zero value's passes and updates return ErrNotInitialized, its other
// methods do nothing or report nothing.
type Controller struct {
	opts  ControllerOptions
	nodes map[string]*nodeRecord
	order []*nodeRecord // sorted by name
	zones map[string]*zoneRecord
	zkeys []string // sorted zone keys
	pods  map[PodKey]*podRecord
	last  time.Time

	orphanLeases map[string]leaseView // leases of nodes not seen yet

	// pendingLease is the controller-wide record of the live-lease check.
	pendingLease     string
	pendingLeaseRV   string
	pendingLeaseUsed bool

	pass    Pass
	scratch []v1.NodeCondition
}

// PodKey identifies a pod.
type PodKey struct {
	Namespace, Name string // the pod's namespace and name
}

// NewController returns a controller with an empty view, or a
// *OptionError (ErrInvalidOptions) when opts do not validate.
func NewController(opts ControllerOptions) (*Controller, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Controller{opts: opts, nodes: map[string]*nodeRecord{}, zones: map[string]*zoneRecord{}, pods: map[PodKey]*podRecord{},
		orphanLeases: map[string]leaseView{}}, nil
}

// Options returns the controller's options.
func (c *Controller) Options() ControllerOptions {
	if c == nil {
		return ControllerOptions{}
	}
	return c.opts
}

// initialized reports whether c came from NewController.
func (c *Controller) initialized() bool { return c != nil && c.nodes != nil }

func (c *Controller) checkTime(op string, now time.Time) error {
	if now.Before(c.last) {
		return timeErr(op, now, c.last)
	}
	c.last = now
	return nil
}

// UpsertNode records a node as the informer shows it (labels, creation time,
// unschedulable, taints and conditions) and returns the NoSchedule taint
// changes the node-update handler makes for it.
func (c *Controller) UpsertNode(now time.Time, node *v1.Node) (Pass, error) {
	if !c.initialized() {
		return Pass{}, notInit("Controller", "UpsertNode")
	}
	if node == nil {
		return Pass{}, &InputError{Op: "UpsertNode", Value: "<nil>", Reason: "a node is required"}
	}
	if node.Name == "" {
		return Pass{}, &InputError{Op: "UpsertNode", Value: `""`, Reason: "a node needs a name"}
	}
	if err := c.checkTime("UpsertNode", now); err != nil {
		return Pass{}, err
	}
	c.pass.reset(now)
	n, ok := c.nodes[node.Name]
	if !ok {
		n = &nodeRecord{name: node.Name}
		c.nodes[node.Name] = n
		i := sort.Search(len(c.order), func(i int) bool { return c.order[i].name >= node.Name })
		c.order = append(c.order, nil)
		copy(c.order[i+1:], c.order[i:])
		c.order[i] = n
		// Informers deliver in any order: pick up the lease and the pods
		// that arrived before the node.
		if l, ok := c.orphanLeases[node.Name]; ok {
			n.lease = l
			delete(c.orphanLeases, node.Name)
		}
		for _, p := range c.pods {
			if p.ref.Node == node.Name {
				n.pods = append(n.pods, p)
			}
		}
		sort.Slice(n.pods, func(i, j int) bool {
			a, b := n.pods[i].ref, n.pods[j].ref
			return a.Namespace < b.Namespace || (a.Namespace == b.Namespace && a.Name < b.Name)
		})
	}
	// A node whose zone labels change stays in its old zone's tainting
	// queue, as in the node-lifecycle controller, which keys its queues by
	// the zone it reads off the node at the time: that zone's tainting pass
	// takes it in turn (3.5), and the next monitor pass queues it in the new
	// zone too.
	n.zone = ZoneKey(node.Labels)
	_, n.excluded = node.Labels[LabelExcludeDisruption]
	n.created = node.CreationTimestamp.Time
	n.unschedulable = node.Spec.Unschedulable
	n.taints = append(n.taints[:0], node.Spec.Taints...)
	n.conds = append(n.conds[:0], node.Status.Conditions...)
	c.noScheduleTaints(now, n)
	return c.pass.take(), nil
}

// UpdateStatus records new conditions for a known node (a kubelet status
// PATCH as the informer shows it) and returns the NoSchedule taint changes.
func (c *Controller) UpdateStatus(now time.Time, node string, conds []v1.NodeCondition) (Pass, error) {
	if !c.initialized() {
		return Pass{}, notInit("Controller", "UpdateStatus")
	}
	n, ok := c.nodes[node]
	if !ok {
		return Pass{}, &InputError{Op: "UpdateStatus", Value: strconv.Quote(node), Reason: "unknown node"}
	}
	if err := c.checkTime("UpdateStatus", now); err != nil {
		return Pass{}, err
	}
	c.pass.reset(now)
	n.conds = append(n.conds[:0], conds...)
	c.noScheduleTaints(now, n)
	return c.pass.take(), nil
}

// DeleteNode forgets a node and its bookkeeping; its pods stay known. A node
// queued for its NoExecute taint stays in the queue until the tainting pass
// drops it, with a token (3.5).
func (c *Controller) DeleteNode(node string) {
	if !c.initialized() {
		return
	}
	n, ok := c.nodes[node]
	if !ok {
		return
	}
	delete(c.nodes, node)
	for i, o := range c.order {
		if o == n {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	// The node stays in its zone's tainting queue: the tainting pass drops
	// it when its turn comes, and that attempt uses a token like any other
	// (3.5), as the node-lifecycle controller's does when the node it
	// re-reads is gone.
}

// UpsertLease records a node lease as the lease informer shows it. On a
// zero Controller it does nothing.
func (c *Controller) UpsertLease(node string, renew time.Time, resourceVersion string) {
	if !c.initialized() {
		return
	}
	l := leaseView{renew: renew, rv: resourceVersion, present: true}
	if n, ok := c.nodes[node]; ok {
		n.lease = l
		return
	}
	c.orphanLeases[node] = l
}

// DeleteLease forgets a node's lease.
func (c *Controller) DeleteLease(node string) {
	if !c.initialized() {
		return
	}
	delete(c.orphanLeases, node)
	if n, ok := c.nodes[node]; ok {
		n.lease = leaseView{}
	}
}

// Conditions returns a copy of the controller's view of a node's conditions.
func (c *Controller) Conditions(node string) []v1.NodeCondition {
	if c == nil {
		return nil
	}
	if n, ok := c.nodes[node]; ok {
		return append([]v1.NodeCondition(nil), n.conds...)
	}
	return nil
}

// Taints returns a copy of the controller's view of a node's taints.
func (c *Controller) Taints(node string) []v1.Taint {
	if c == nil {
		return nil
	}
	if n, ok := c.nodes[node]; ok {
		return append([]v1.Taint(nil), n.taints...)
	}
	return nil
}

// ZoneStates returns the current state of every zone.
func (c *Controller) ZoneStates() map[string]ZoneState {
	if c == nil {
		return map[string]ZoneState{}
	}
	out := make(map[string]ZoneState, len(c.zones))
	for k, z := range c.zones {
		if z.active {
			out[k] = z.state
		}
	}
	return out
}

// Probe returns the controller's probe time for a node: the last time it saw
// a heartbeat (status or lease) by its own clock.
func (c *Controller) Probe(node string) (time.Time, bool) {
	if c == nil {
		return time.Time{}, false
	}
	n, ok := c.nodes[node]
	if !ok || !n.seen {
		return time.Time{}, false
	}
	return n.probe, true
}

// Queued reports whether a node waits in its zone's NoExecute tainting queue.
func (c *Controller) Queued(node string) bool {
	if c == nil {
		return false
	}
	n, ok := c.nodes[node]
	if !ok {
		return false
	}
	z, ok := c.zones[n.zone]
	return ok && z.q.set[node]
}

// NextTaint returns when the next tainting pass can act: the time of the
// earliest queued node, or false when every queue is empty or stopped.
func (c *Controller) NextTaint() (time.Time, bool) {
	var t time.Time
	ok := false
	if c == nil {
		return t, ok
	}
	for _, z := range c.zones {
		if len(z.q.items) > 0 && z.limiter.qps > 0 && (!ok || z.q.items[0].at.Before(t)) {
			t, ok = z.q.items[0].at, true
		}
	}
	return t, ok
}

// ZoneRate returns a zone's current NoExecute tainting rate in nodes per
// second (math.Inf(1) for no limit, 0 when tainting is stopped) and whether
// the zone has a state.
func (c *Controller) ZoneRate(zone string) (float64, bool) {
	if c == nil {
		return 0, false
	}
	z, ok := c.zones[zone]
	if !ok || !z.active {
		return 0, false
	}
	return z.limiter.qps, true
}

func readyOf(conds []v1.NodeCondition) *v1.NodeCondition {
	for i := range conds {
		if conds[i].Type == v1.NodeReady {
			return &conds[i]
		}
	}
	return nil
}

func condOf(conds []v1.NodeCondition, t v1.NodeConditionType) *v1.NodeCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
