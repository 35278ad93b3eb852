package nodecondition

import (
	"math"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// ControllerConfig holds the node-lifecycle controller settings.
// DefaultControllerConfig gives the Kubernetes 1.37 defaults.
type ControllerConfig struct {
	// MonitorPeriod is the health-check pass period (--node-monitor-period, 5 s).
	MonitorPeriod time.Duration
	// GracePeriod is how long a node may go without a heartbeat before it is
	// marked Unknown (--node-monitor-grace-period, 50 s).
	GracePeriod time.Duration
	// StartupGracePeriod applies while the node has no Ready condition (--node-startup-grace-period, 60 s).
	StartupGracePeriod time.Duration
	// EvictionRate is the NoExecute tainting rate per zone, nodes/s
	// (--node-eviction-rate, 0.1). math.Inf(1) means no limit.
	EvictionRate float64
	// SecondaryEvictionRate is used in PartialDisruption by large zones (--secondary-node-eviction-rate, 0.01).
	SecondaryEvictionRate float64
	// UnhealthyZoneThreshold is the not-ready share that makes a zone PartialDisruption (0.55).
	UnhealthyZoneThreshold float64
	// LargeClusterThreshold: a zone with strictly more nodes is large (50).
	LargeClusterThreshold int
	// TaintingPeriod is the NoExecute tainting loop period (100 ms).
	TaintingPeriod time.Duration
	// LeaseCircuitBreaker is the NodeControllerLeaseCircuitBreaker gate (beta, on):
	// a live Lease lookup before marking a node Unknown.
	LeaseCircuitBreaker bool
}

// DefaultControllerConfig returns the Kubernetes 1.37 defaults.
func DefaultControllerConfig() ControllerConfig {
	return ControllerConfig{
		MonitorPeriod:          5 * time.Second,
		GracePeriod:            50 * time.Second,
		StartupGracePeriod:     60 * time.Second,
		EvictionRate:           0.1,
		SecondaryEvictionRate:  0.01,
		UnhealthyZoneThreshold: 0.55,
		LargeClusterThreshold:  50,
		TaintingPeriod:         100 * time.Millisecond,
		LeaseCircuitBreaker:    true,
	}
}

// Validate reports the first invalid setting as a *ConfigError.
func (c ControllerConfig) Validate() error {
	if err := allPositive(
		namedPeriod{"MonitorPeriod", c.MonitorPeriod},
		namedPeriod{"GracePeriod", c.GracePeriod},
		namedPeriod{"StartupGracePeriod", c.StartupGracePeriod},
		namedPeriod{"TaintingPeriod", c.TaintingPeriod},
	); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"EvictionRate", c.EvictionRate}, {"SecondaryEvictionRate", c.SecondaryEvictionRate}} {
		if p.v < 0 || math.IsNaN(p.v) {
			return &ConfigError{Field: p.name, Value: fmtFloat(p.v), Reason: "must be a rate >= 0"}
		}
	}
	if !(c.UnhealthyZoneThreshold >= 0 && c.UnhealthyZoneThreshold <= 1) {
		return &ConfigError{Field: "UnhealthyZoneThreshold", Value: fmtFloat(c.UnhealthyZoneThreshold), Reason: "must be in [0, 1]"}
	}
	if c.LargeClusterThreshold < 0 {
		return &ConfigError{Field: "LargeClusterThreshold", Value: fmtFloat(float64(c.LargeClusterThreshold)), Reason: "must not be negative"}
	}
	return nil
}

// CheckTiming checks a kubelet and a controller configuration against each
// other: a grace period that is not longer than the lease renew interval
// marks a healthy node Unknown between two renewals.
func CheckTiming(k KubeletConfig, c ControllerConfig) error {
	if k.Thresholds == nil {
		k.Thresholds = DefaultHardThresholds()
	}
	if err := k.Validate(); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if c.GracePeriod <= k.LeaseRenewInterval() {
		return &ConfigError{Field: "GracePeriod", Value: c.GracePeriod.String(),
			Reason: "must be longer than the kubelet's lease renew interval " + k.LeaseRenewInterval().String()}
	}
	return nil
}

// LeaseLookup reads a node's Lease from the API server, bypassing any cache:
// the live lookup of the NodeControllerLeaseCircuitBreaker gate. It returns
// the Lease's resourceVersion and whether it exists; an error skips the node
// for the pass.
type LeaseLookup interface {
	LiveLease(node string) (resourceVersion string, found bool, err error)
}

// ConditionWrite is a node status update the controller issues: the node's
// full condition list after marking. Conditions belong to the Controller and
// are valid until its next call.
type ConditionWrite struct {
	Node       string             // the node written
	Conditions []v1.NodeCondition // its full condition list
}

// TaintChange is one taint added to or removed from a node.
type TaintChange struct {
	Node  string   // the node changed
	Taint v1.Taint // the taint (NoExecute taints carry TimeAdded)
	Added bool     // true when added, false when removed
}

// PodRef names a pod and the node it is bound to.
type PodRef struct {
	Namespace, Name, Node string // the pod's namespace and name, and its node
}

// ZoneChange is a zone moving from one state to another.
type ZoneChange struct {
	Zone     string    // the zone key (see ZoneKey)
	From, To ZoneState // the old and new states
}

// NodeEvent is an event the controller records on a node, such as
// {Reason: "NodeNotReady", Message: "Node n status is now: NodeNotReady"}.
type NodeEvent struct {
	Node, Reason, Message string // the node, the event reason and message
}

// Pass is what one monitor or tainting pass decided. Its slices belong to the
// Controller and are valid until its next call.
type Pass struct {
	// Time is when the pass ran.
	Time time.Time
	// Writes are the node status updates (conditions marked Unknown).
	Writes []ConditionWrite
	// Taints are the taint changes, NoSchedule and NoExecute, already applied
	// to the controller's view.
	Taints []TaintChange
	// PodsNotReady are the pods whose Ready condition is to be set False,
	// each with a Warning pod event ReasonNodeNotReady / MessagePodNodeNotReady.
	PodsNotReady []PodRef
	// Events are the node events to record.
	Events []NodeEvent
	// Zones are the zone state changes.
	Zones []ZoneChange
	// Skipped are the nodes skipped by the live-lease check in this pass.
	Skipped []string
}

func (p *Pass) reset(now time.Time) {
	p.Time = now
	p.Writes = p.Writes[:0]
	p.Taints = p.Taints[:0]
	p.PodsNotReady = p.PodsNotReady[:0]
	p.Events = p.Events[:0]
	p.Zones = p.Zones[:0]
	p.Skipped = p.Skipped[:0]
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
// Time is an argument; it is not safe for concurrent use.
type Controller struct {
	cfg   ControllerConfig
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

// NewController returns a controller with an empty view.
func NewController(cfg ControllerConfig) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Controller{cfg: cfg, nodes: map[string]*nodeRecord{}, zones: map[string]*zoneRecord{}, pods: map[PodKey]*podRecord{},
		orphanLeases: map[string]leaseView{}}, nil
}

// Config returns the controller's configuration.
func (c *Controller) Config() ControllerConfig { return c.cfg }

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
	if node == nil || node.Name == "" {
		return Pass{}, &ConfigError{Field: "node", Value: "<unnamed>", Reason: "a node needs a name"}
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
	if zone := ZoneKey(node.Labels); ok && zone != n.zone {
		if z, found := c.zones[n.zone]; found {
			z.q.remove(n.name)
		}
	}
	n.zone = ZoneKey(node.Labels)
	_, n.excluded = node.Labels[LabelExcludeDisruption]
	n.created = node.CreationTimestamp.Time
	n.unschedulable = node.Spec.Unschedulable
	n.taints = append(n.taints[:0], node.Spec.Taints...)
	n.conds = append(n.conds[:0], node.Status.Conditions...)
	c.noScheduleTaints(now, n)
	return c.pass, nil
}

// UpdateStatus records new conditions for a known node (a kubelet status
// PATCH as the informer shows it) and returns the NoSchedule taint changes.
func (c *Controller) UpdateStatus(now time.Time, node string, conds []v1.NodeCondition) (Pass, error) {
	n, ok := c.nodes[node]
	if !ok {
		return Pass{}, &ConfigError{Field: "node", Value: node, Reason: "unknown node"}
	}
	if err := c.checkTime("UpdateStatus", now); err != nil {
		return Pass{}, err
	}
	c.pass.reset(now)
	n.conds = append(n.conds[:0], conds...)
	c.noScheduleTaints(now, n)
	return c.pass, nil
}

// DeleteNode forgets a node and its bookkeeping; its pods stay known.
func (c *Controller) DeleteNode(node string) {
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
	if z, ok := c.zones[n.zone]; ok {
		z.q.remove(node)
	}
}

// UpsertLease records a node lease as the lease informer shows it.
func (c *Controller) UpsertLease(node string, renew time.Time, resourceVersion string) {
	l := leaseView{renew: renew, rv: resourceVersion, present: true}
	if n, ok := c.nodes[node]; ok {
		n.lease = l
		return
	}
	c.orphanLeases[node] = l
}

// DeleteLease forgets a node's lease.
func (c *Controller) DeleteLease(node string) {
	delete(c.orphanLeases, node)
	if n, ok := c.nodes[node]; ok {
		n.lease = leaseView{}
	}
}

// UpsertPod records a pod as the pod informer shows it: its node, its Ready
// condition and its tolerations. It returns true when the pod workers would
// mark it not ready at once (bound to a node whose Ready is not True, with a
// Ready condition that is not False).
func (c *Controller) UpsertPod(pod *v1.Pod) bool {
	if pod == nil || pod.Name == "" {
		return false
	}
	key := PodKey{pod.Namespace, pod.Name}
	p, ok := c.pods[key]
	if ok && p.ref.Node != pod.Spec.NodeName {
		c.unbind(p)
	}
	if !ok {
		p = &podRecord{}
		c.pods[key] = p
	}
	oldNode := p.ref.Node
	p.ref = PodRef{Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName}
	p.tols = append(p.tols[:0], pod.Spec.Tolerations...)
	p.readyKnown = false
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.PodReady {
			p.readyKnown, p.ready = true, pod.Status.Conditions[i].Status
		}
	}
	n := c.nodes[p.ref.Node]
	if n == nil {
		return false
	}
	if !ok || oldNode != p.ref.Node {
		n.pods = append(n.pods, p)
	}
	r := readyOf(n.conds)
	return (r == nil || r.Status != v1.ConditionTrue) && p.readyKnown && p.ready != v1.ConditionFalse
}

// DeletePod forgets a pod.
func (c *Controller) DeletePod(ns, name string) {
	if p, ok := c.pods[PodKey{ns, name}]; ok {
		c.unbind(p)
		delete(c.pods, PodKey{ns, name})
	}
}

func (c *Controller) unbind(p *podRecord) {
	n := c.nodes[p.ref.Node]
	if n == nil {
		return
	}
	for i, q := range n.pods {
		if q == p {
			n.pods[i] = n.pods[len(n.pods)-1]
			n.pods = n.pods[:len(n.pods)-1]
			return
		}
	}
}

// MarkPodsNotReadyFailed tells the controller that setting the pods of node
// not ready failed; later passes retry while the node's Ready is not True.
func (c *Controller) MarkPodsNotReadyFailed(node string) {
	if n, ok := c.nodes[node]; ok {
		n.retryPodsNotReady = true
	}
}

// Conditions returns a copy of the controller's view of a node's conditions.
func (c *Controller) Conditions(node string) []v1.NodeCondition {
	if n, ok := c.nodes[node]; ok {
		return append([]v1.NodeCondition(nil), n.conds...)
	}
	return nil
}

// Taints returns a copy of the controller's view of a node's taints.
func (c *Controller) Taints(node string) []v1.Taint {
	if n, ok := c.nodes[node]; ok {
		return append([]v1.Taint(nil), n.taints...)
	}
	return nil
}

// ZoneStates returns the current state of every zone.
func (c *Controller) ZoneStates() map[string]ZoneState {
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
	n, ok := c.nodes[node]
	if !ok || !n.seen {
		return time.Time{}, false
	}
	return n.probe, true
}

// Queued reports whether a node waits in its zone's NoExecute tainting queue.
func (c *Controller) Queued(node string) bool {
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
	for _, z := range c.zones {
		if len(z.q.items) > 0 && z.limiter.qps > 0 && (!ok || z.q.items[0].at.Before(t)) {
			t, ok = z.q.items[0].at, true
		}
	}
	return t, ok
}

func (c *Controller) queuedAny() bool {
	for _, z := range c.zones {
		if len(z.q.items) > 0 {
			return true
		}
	}
	return false
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

func (c *Controller) zone(key string, now time.Time) *zoneRecord {
	z, ok := c.zones[key]
	if !ok {
		z = &zoneRecord{active: true, state: ZoneInitial, limiter: newBucket(c.cfg.EvictionRate, now), q: queue{set: map[string]bool{}}}
		c.zones[key] = z
		i := sort.SearchStrings(c.zkeys, key)
		c.zkeys = append(c.zkeys, "")
		copy(c.zkeys[i+1:], c.zkeys[i:])
		c.zkeys[i] = key
	}
	return z
}

// Monitor runs one health pass at now (monitorNodeHealth): it marks nodes
// whose heartbeats stopped Unknown, decides NoExecute taints, lists the pods
// to mark not ready and updates the zone states. live is the live Lease lookup
// of the lease circuit breaker; nil means the controller's view is current,
// so the lookup would agree with it. With nothing changing it allocates nothing.
func (c *Controller) Monitor(now time.Time, live LeaseLookup) (Pass, error) {
	if err := c.checkTime("Monitor", now); err != nil {
		return Pass{}, err
	}
	c.pass.reset(now)
	for _, k := range c.zkeys {
		z := c.zones[k]
		z.counted, z.notReady = 0, 0
	}
	for _, n := range c.order {
		if c.leasePending() {
			c.pass.Skipped = append(c.pass.Skipped, n.name)
			continue
		}
		if !n.seen {
			// A node seen for the first time in a zone with no state gives the
			// zone a new limiter and an empty queue.
			if z := c.zone(n.zone, now); !z.active {
				z.active, z.state, z.limiter = true, ZoneInitial, newBucket(c.cfg.EvictionRate, now)
				z.q.items = z.q.items[:0]
				clear(z.q.set)
			}
		}
		observed, skip := c.updateHealth(now, n, live)
		if skip {
			c.pass.Skipped = append(c.pass.Skipped, n.name)
			continue
		}
		cur := readyOf(n.conds)
		if !n.excluded {
			z := c.zone(n.zone, now)
			if !z.active {
				z.active, z.state = true, ZoneInitial
			}
			z.counted++
			if cur == nil || cur.Status != v1.ConditionTrue {
				z.notReady++
			}
		}
		if cur == nil {
			continue
		}
		c.taintDecision(now, n, cur.Status)
		switch {
		case observed == v1.ConditionTrue && cur.Status != v1.ConditionTrue:
			c.pass.Events = append(c.pass.Events, NodeEvent{Node: n.name, Reason: ReasonNodeNotReady, Message: "Node " + n.name + " status is now: NodeNotReady"})
			c.markPods(n)
		case n.retryPodsNotReady && cur.Status != v1.ConditionTrue:
			c.markPods(n)
		}
		n.retryPodsNotReady = false
	}
	c.handleDisruption(now)
	return c.pass, nil
}

// leasePending is the controller-wide readiness check of the lease circuit
// breaker: while a live Lease resourceVersion is recorded that the cached
// Lease of its node does not show yet, every node is skipped.
func (c *Controller) leasePending() bool {
	if !c.cfg.LeaseCircuitBreaker || !c.pendingLeaseUsed {
		return false
	}
	if n, ok := c.nodes[c.pendingLease]; ok && n.lease.present && n.lease.rv != c.pendingLeaseRV {
		return true
	}
	c.pendingLeaseUsed = false
	return false
}

func (c *Controller) markPods(n *nodeRecord) {
	for _, p := range n.pods {
		if p.readyKnown && p.ready != v1.ConditionFalse {
			c.pass.PodsNotReady = append(c.pass.PodsNotReady, p.ref)
		}
	}
}

// updateHealth is tryUpdateNodeHealth. It returns the Ready status observed at
// the start of the pass ("" when missing) and whether the node is skipped.
func (c *Controller) updateHealth(now time.Time, n *nodeRecord, live LeaseLookup) (observed v1.ConditionStatus, skip bool) {
	cur := readyOf(n.conds)
	grace := c.cfg.GracePeriod
	observedCond := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionUnknown,
		LastHeartbeatTime: metav1.NewTime(n.created), LastTransitionTime: metav1.NewTime(n.created)}
	if cur == nil {
		grace = c.cfg.StartupGracePeriod
		if n.seen {
			// The saved status is overwritten before the comparison below,
			// so a Ready condition that disappears does not reset the probe.
			n.hasSavedReady = false
		} else {
			n.seen, n.probe, n.readyTransition, n.hasSavedReady, n.savedLease = true, n.created, n.created, false, leaseView{}
		}
	} else {
		observedCond = *cur
	}
	// The lease comparison below uses the record as it was before a branch
	// replaced it: a replaced record keeps no lease, so the next pass counts
	// any lease as a renewal (one extra pass of credit after a heartbeat).
	saved := n.savedLease
	switch {
	case !n.seen:
		n.seen, n.probe, n.readyTransition = true, now, now
		n.savedReady, n.hasSavedReady, n.savedLease = *cur, true, leaseView{}
	case !n.hasSavedReady && cur != nil:
		n.probe, n.readyTransition = now, now
		n.savedReady, n.hasSavedReady, n.savedLease = *cur, true, leaseView{}
	case n.hasSavedReady && cur != nil && !n.savedReady.LastHeartbeatTime.Equal(&cur.LastHeartbeatTime):
		if !n.savedReady.LastTransitionTime.Equal(&cur.LastTransitionTime) {
			n.readyTransition = now
		}
		n.probe = now
		n.savedReady, n.savedLease = *cur, leaseView{}
	}
	if n.lease.present && (!saved.present || saved.renew.Before(n.lease.renew)) {
		n.savedLease = n.lease
		n.probe = now
	}
	if !now.After(n.probe.Add(grace)) {
		return observedCond.Status, false
	}
	if c.cfg.LeaseCircuitBreaker && live != nil {
		rv, found, err := live.LiveLease(n.name)
		if err != nil {
			return observedCond.Status, true
		}
		savedRV := ""
		if n.savedLease.present {
			savedRV = n.savedLease.rv
		}
		if found && rv != savedRV {
			c.pendingLease, c.pendingLeaseRV, c.pendingLeaseUsed = n.name, rv, true
			return observedCond.Status, true
		}
	}
	// Mark a copy: it is written, and becomes the view, only if Ready
	// changed; otherwise the marking is dropped like the controller's copy.
	ts := metav1.NewTime(now)
	c.scratch = append(c.scratch[:0], n.conds...)
	for _, t := range [...]v1.NodeConditionType{v1.NodeReady, v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
		cond := condOf(c.scratch, t)
		if cond == nil {
			c.scratch = append(c.scratch, v1.NodeCondition{Type: t, Status: v1.ConditionUnknown, Reason: ReasonNodeStatusNeverUpdated,
				Message: MessageNodeNeverUpdated, LastHeartbeatTime: metav1.NewTime(n.created), LastTransitionTime: ts})
		} else if cond.Status != v1.ConditionUnknown {
			cond.Status, cond.Reason, cond.Message, cond.LastTransitionTime = v1.ConditionUnknown, ReasonNodeStatusUnknown, MessageNodeStatusUnknown, ts
		}
	}
	if cur = readyOf(c.scratch); !conditionEqual(cur, &observedCond) {
		n.conds = append(n.conds[:0], c.scratch...)
		cur = readyOf(n.conds)
		c.pass.Writes = append(c.pass.Writes, ConditionWrite{Node: n.name, Conditions: n.conds})
		n.savedReady, n.hasSavedReady, n.readyTransition = *cur, true, now
		c.noScheduleTaints(now, n)
	}
	return observedCond.Status, false
}

func conditionEqual(a, b *v1.NodeCondition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.LastHeartbeatTime.Equal(&b.LastHeartbeatTime) && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}

func hasTaint(ts []v1.Taint, key string, effect v1.TaintEffect) bool {
	for i := range ts {
		if ts[i].Key == key && ts[i].Effect == effect {
			return true
		}
	}
	return false
}

func (c *Controller) addTaint(n *nodeRecord, t v1.Taint) {
	if hasTaint(n.taints, t.Key, t.Effect) {
		return
	}
	n.taints = append(n.taints, t)
	c.pass.Taints = append(c.pass.Taints, TaintChange{Node: n.name, Taint: t, Added: true})
}

func (c *Controller) removeTaint(n *nodeRecord, key string, effect v1.TaintEffect) {
	for i := range n.taints {
		if n.taints[i].Key == key && n.taints[i].Effect == effect {
			t := n.taints[i]
			n.taints = append(n.taints[:i], n.taints[i+1:]...)
			c.pass.Taints = append(c.pass.Taints, TaintChange{Node: n.name, Taint: t})
			return
		}
	}
}

func noExecute(key string, now time.Time) v1.Taint {
	ts := metav1.NewTime(now)
	return v1.Taint{Key: key, Effect: v1.TaintEffectNoExecute, TimeAdded: &ts}
}

// taintDecision is processTaintBaseEviction for the Ready status the pass ends with.
func (c *Controller) taintDecision(now time.Time, n *nodeRecord, ready v1.ConditionStatus) {
	z := c.zone(n.zone, now)
	switch ready {
	case v1.ConditionFalse:
		c.noExecuteFor(now, n, z, TaintNotReady, TaintUnreachable)
	case v1.ConditionUnknown:
		c.noExecuteFor(now, n, z, TaintUnreachable, TaintNotReady)
	case v1.ConditionTrue:
		c.removeTaint(n, TaintNotReady, v1.TaintEffectNoExecute)
		c.removeTaint(n, TaintUnreachable, v1.TaintEffectNoExecute)
		z.q.remove(n.name)
	}
}

// noExecuteFor moves node n towards the NoExecute taint key: a node that has
// the other one gets the swap at once; otherwise it is queued for the
// zone's rate-limited tainting pass (re-queued when it lacks key).
func (c *Controller) noExecuteFor(now time.Time, n *nodeRecord, z *zoneRecord, key, other string) {
	if hasTaint(n.taints, other, v1.TaintEffectNoExecute) {
		c.removeTaint(n, other, v1.TaintEffectNoExecute)
		c.addTaint(n, noExecute(key, now))
		return
	}
	if !hasTaint(n.taints, key, v1.TaintEffectNoExecute) {
		z.q.remove(n.name)
	}
	z.q.add(n.name, now)
}

// Taint runs one NoExecute tainting pass at now (doNoExecuteTaintingPass):
// each zone's queue hands out nodes as its token bucket allows, and each
// node gets the not-ready or unreachable NoExecute taint its Ready calls for.
func (c *Controller) Taint(now time.Time) (Pass, error) {
	if err := c.checkTime("Taint", now); err != nil {
		return Pass{}, err
	}
	c.pass.reset(now)
	for _, k := range c.zkeys {
		z := c.zones[k]
		for len(z.q.items) > 0 && !z.q.items[0].at.After(now) {
			if !z.limiter.take(now) {
				break
			}
			it := z.q.items[0]
			z.q.items = append(z.q.items[:0], z.q.items[1:]...)
			z.q.set[it.node] = false
			n := c.nodes[it.node]
			if n == nil {
				continue
			}
			r := readyOf(n.conds)
			switch {
			case r == nil:
				z.q.set[it.node] = true
				z.q.insert(queued{it.node, now.Add(TaintRetryDelay)})
			case r.Status == v1.ConditionFalse:
				c.addTaint(n, noExecute(TaintNotReady, now))
				c.removeTaint(n, TaintUnreachable, v1.TaintEffectNoExecute)
			case r.Status == v1.ConditionUnknown:
				c.addTaint(n, noExecute(TaintUnreachable, now))
				c.removeTaint(n, TaintNotReady, v1.TaintEffectNoExecute)
			}
		}
	}
	return c.pass, nil
}

var noScheduleKeys = [...]string{TaintNotReady, TaintUnreachable, TaintMemoryPressure, TaintDiskPressure, TaintPIDPressure, TaintNetworkUnavailable, TaintUnschedulable}

// noScheduleTaints is the node-update handler: the NoSchedule taints follow
// the conditions (and spec.unschedulable); only the controller's keys change.
func (c *Controller) noScheduleTaints(now time.Time, n *nodeRecord) {
	var want [len(noScheduleKeys)]bool
	for i := range n.conds {
		cd := &n.conds[i]
		switch {
		case cd.Type == v1.NodeReady && cd.Status == v1.ConditionFalse:
			want[0] = true
		case cd.Type == v1.NodeReady && cd.Status == v1.ConditionUnknown:
			want[1] = true
		case cd.Type == v1.NodeMemoryPressure && cd.Status == v1.ConditionTrue:
			want[2] = true
		case cd.Type == v1.NodeDiskPressure && cd.Status == v1.ConditionTrue:
			want[3] = true
		case cd.Type == v1.NodePIDPressure && cd.Status == v1.ConditionTrue:
			want[4] = true
		case cd.Type == v1.NodeNetworkUnavailable && cd.Status == v1.ConditionTrue:
			want[5] = true
		}
	}
	want[6] = n.unschedulable
	for i, k := range noScheduleKeys {
		has := hasTaint(n.taints, k, v1.TaintEffectNoSchedule)
		switch {
		case want[i] && !has:
			c.addTaint(n, v1.Taint{Key: k, Effect: v1.TaintEffectNoSchedule})
		case !want[i] && has:
			c.removeTaint(n, k, v1.TaintEffectNoSchedule)
		}
	}
}

// handleDisruption updates zone states and limiters after a pass.
func (c *Controller) handleDisruption(now time.Time) {
	allAreFull := true
	for _, k := range c.zkeys {
		z := c.zones[k]
		if z.counted == 0 {
			continue
		}
		if ComputeZoneState(z.counted-z.notReady, z.notReady, c.cfg.UnhealthyZoneThreshold) != ZoneFullDisruption {
			allAreFull = false
		}
	}
	allWereFull := true
	for _, k := range c.zkeys {
		z := c.zones[k]
		if !z.active {
			continue
		}
		if z.counted == 0 {
			z.active, z.state = false, ZoneInitial
			continue
		}
		if z.state != ZoneFullDisruption {
			allWereFull = false
		}
	}
	if allAreFull && allWereFull {
		return
	}
	if allAreFull {
		for _, n := range c.order {
			c.removeTaint(n, TaintNotReady, v1.TaintEffectNoExecute)
			c.removeTaint(n, TaintUnreachable, v1.TaintEffectNoExecute)
			if z, ok := c.zones[n.zone]; ok {
				z.q.remove(n.name)
			}
		}
		for _, k := range c.zkeys {
			if z := c.zones[k]; z.active {
				z.limiter.swap(0, now)
				c.setState(k, z, ZoneFullDisruption)
			}
		}
		return
	}
	if allWereFull {
		for _, n := range c.order {
			if n.seen {
				n.probe, n.readyTransition = now, now
			}
		}
		for _, k := range c.zkeys {
			z := c.zones[k]
			if !z.active {
				continue
			}
			st := ComputeZoneState(z.counted-z.notReady, z.notReady, c.cfg.UnhealthyZoneThreshold)
			z.limiter.swap(c.rateFor(st, z.counted), now)
			c.setState(k, z, st)
		}
		return
	}
	for _, k := range c.zkeys {
		z := c.zones[k]
		if !z.active {
			continue
		}
		st := ComputeZoneState(z.counted-z.notReady, z.notReady, c.cfg.UnhealthyZoneThreshold)
		if st == z.state {
			continue
		}
		z.limiter.swap(c.rateFor(st, z.counted), now)
		c.setState(k, z, st)
	}
}

func (c *Controller) setState(k string, z *zoneRecord, st ZoneState) {
	if z.state != st {
		c.pass.Zones = append(c.pass.Zones, ZoneChange{Zone: k, From: z.state, To: st})
		z.state = st
	}
}

func (c *Controller) rateFor(st ZoneState, size int) float64 {
	switch st {
	case ZonePartialDisruption:
		if size > c.cfg.LargeClusterThreshold {
			return c.cfg.SecondaryEvictionRate
		}
		return 0
	default:
		return c.cfg.EvictionRate
	}
}
