package nodecondition

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// NodeWriter writes what the controller decided about a node. Its methods
// are called from the runner's goroutines, one call at a time; the slices
// passed belong to the callee.
type NodeWriter interface {
	// WriteConditions replaces the node's status conditions (an UpdateStatus
	// of the node) with conditions, the node's full list after marking.
	WriteConditions(ctx context.Context, node string, conditions []v1.NodeCondition) error
	// WriteTaints adds the taints of changes with Added set to the node's
	// spec.taints and removes the others (matched by key and effect).
	WriteTaints(ctx context.Context, node string, changes []TaintChange) error
}

// PodStatusWriter sets a pod's Ready condition to False, as MarkPodsNotReady
// does (and records the Warning pod event ReasonNodeNotReady /
// MessagePodNodeNotReady). An error makes the next monitor pass try the
// node's pods again; a pod that is gone should return nil.
type PodStatusWriter interface {
	MarkPodNotReady(ctx context.Context, pod PodRef) error
}

// PodDeleter deletes a pod the taint-eviction controller evicts: it sets
// the DisruptionTarget condition (ReasonDeletionByTaintManager,
// MessageDeletionByTaintManager) and then deletes the pod with its default
// grace period.
type PodDeleter interface {
	DeletePod(ctx context.Context, pod PodKey) error
}

// RunnerOptions configures a Runner. DefaultRunnerOptions gives the defaults.
type RunnerOptions struct {
	// Clock drives the loops; nil is clock.RealClock{}.
	Clock clock.Clock
	// Leases is the live Lease lookup of the lease circuit breaker; nil means
	// the controller's view is current. It is called during the monitor pass,
	// with the Runner's lock held, so it should answer quickly.
	Leases LeaseLookup
}

// DefaultRunnerOptions returns the defaults: the real clock and no live
// Lease lookup.
func DefaultRunnerOptions() RunnerOptions { return RunnerOptions{} }

// Validate reports an invalid option; every RunnerOptions is valid today.
func (o RunnerOptions) Validate() error { return nil }

// RunnerStats counts what a Runner did. Failed writes are counted, never
// dropped silently: a failed pod status write is retried by the next monitor
// pass.
type RunnerStats struct {
	MonitorPasses, TaintPasses int // passes run
	ConditionWrites            int // successful WriteConditions calls
	TaintWrites                int // successful WriteTaints calls
	PodsMarkedNotReady         int // successful MarkPodNotReady calls
	PodsDeleted                int // successful DeletePod calls
	Failed                     int // calls of the three interfaces that returned an error
}

// Runner runs a Controller and an Evictor on a clock: the monitor pass every
// MonitorPeriod after the previous one ended (as wait.Until does), the
// NoExecute tainting pass when a queued node can be tainted, and the
// scheduled deletions when they come due, writing what they decide through
// NodeWriter, PodStatusWriter and PodDeleter. The informer side calls its
// Upsert and Delete methods, which take the time from the clock. A Runner is
// safe for concurrent use; it owns its Controller, which nothing else may
// call while the Runner lives. The zero value is not usable: use NewRunner.
type Runner struct {
	clk     clock.Clock
	leases  LeaseLookup
	nodes   NodeWriter
	pods    PodStatusWriter
	deleter PodDeleter

	mu      sync.Mutex
	ctrl    *Controller
	ev      Evictor
	stats   RunnerStats
	running bool
	kick    chan struct{}
}

// NewRunner returns a runner for ctrl that writes through nodes, pods and
// deleter. A nil deleter runs no taint-based deletion (the
// taint-eviction controller disabled). It starts no goroutine: Run does.
func NewRunner(opts RunnerOptions, ctrl *Controller, nodes NodeWriter, pods PodStatusWriter, deleter PodDeleter) (*Runner, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	switch {
	case !ctrl.initialized():
		return nil, &InputError{Op: "NewRunner", Value: "controller", Reason: "a Controller from NewController is required"}
	case nodes == nil:
		return nil, &InputError{Op: "NewRunner", Value: "<nil>", Reason: "a NodeWriter is required"}
	case pods == nil:
		return nil, &InputError{Op: "NewRunner", Value: "<nil>", Reason: "a PodStatusWriter is required"}
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Runner{clk: clk, leases: opts.Leases, nodes: nodes, pods: pods, deleter: deleter, ctrl: ctrl, kick: make(chan struct{}, 1)}, nil
}

func (r *Runner) initialized() bool { return r != nil && r.ctrl != nil }

// Stats returns what the runner did so far.
func (r *Runner) Stats() RunnerStats {
	if !r.initialized() {
		return RunnerStats{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// work is the I/O a decision calls for, done without the lock.
type work struct {
	pass    Pass
	deletes []PodKey
}

// Run runs the loops until ctx ends, then returns nil. The first monitor
// pass runs at once. It returns an error on a zero Runner or when the
// Runner already runs.
func (r *Runner) Run(ctx context.Context) error {
	if !r.initialized() {
		return notInit("Runner", "Run")
	}
	if ctx == nil {
		return &InputError{Op: "Run", Value: "<nil>", Reason: "a context is required"}
	}
	r.mu.Lock()
	if r.running {
		r.mu.Unlock()
		return &InputError{Op: "Run", Value: "Runner", Reason: "already running"}
	}
	r.running = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.running = false
		r.mu.Unlock()
	}()
	opts := r.ctrl.Options()
	nextMonitor, nextTaint := r.clk.Now(), r.clk.Now()
	for {
		if ctx.Err() != nil {
			return nil
		}
		now := r.clk.Now()
		if !now.Before(nextMonitor) {
			r.apply(ctx, r.decide(now, func() (Pass, error) { return r.ctrl.Monitor(now, r.leases) }, true))
			nextMonitor = r.clk.Now().Add(opts.MonitorPeriod)
		}
		if !now.Before(nextTaint) {
			r.apply(ctx, r.decide(now, func() (Pass, error) { return r.ctrl.Taint(now) }, false))
			nextTaint = now.Add(opts.TaintingPeriod)
		}
		r.apply(ctx, r.due(now))

		r.mu.Lock()
		wake := nextMonitor
		if at, ok := r.ctrl.NextTaint(); ok {
			wake = earliest(wake, later(at, nextTaint))
		}
		if at, ok := r.ev.Next(); ok {
			wake = earliest(wake, at)
		}
		r.mu.Unlock()
		timer := r.clk.NewTimer(wake.Sub(r.clk.Now()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C():
		case <-r.kick:
			timer.Stop()
		}
	}
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// decide runs one pass under the lock and evaluates the pods of every node
// whose NoExecute taints it changed.
func (r *Runner) decide(now time.Time, pass func() (Pass, error), monitor bool) work {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := pass()
	if err != nil {
		// Only a clock that went backwards gets here; the next pass runs on.
		return work{}
	}
	if monitor {
		r.stats.MonitorPasses++
	} else {
		r.stats.TaintPasses++
	}
	return work{pass: p, deletes: r.evaluateTainted(now, p.Taints)}
}

// evaluateTainted runs the Evictor over the pods of each node whose NoExecute
// taints changed and returns the pods to delete now. Called with the lock held.
func (r *Runner) evaluateTainted(now time.Time, changes []TaintChange) []PodKey {
	if r.deleter == nil {
		return nil
	}
	var out []PodKey
	for i, tc := range changes {
		if tc.Taint.Effect != v1.TaintEffectNoExecute || seenNode(changes[:i], tc.Node) {
			continue
		}
		taints := r.ctrl.Taints(tc.Node)
		r.ctrl.podsOf(tc.Node, func(ref PodRef, tols []v1.Toleration) {
			key := PodKey{Namespace: ref.Namespace, Name: ref.Name}
			if r.ev.Evaluate(now, key, tols, taints).Action == EvictionNow {
				out = append(out, key)
			}
		})
	}
	return out
}

// seenNode reports whether a NoExecute change of node is among changes.
func seenNode(changes []TaintChange, node string) bool {
	for _, c := range changes {
		if c.Node == node && c.Taint.Effect == v1.TaintEffectNoExecute {
			return true
		}
	}
	return false
}

// due takes the deletions that came due.
func (r *Runner) due(now time.Time) work {
	r.mu.Lock()
	defer r.mu.Unlock()
	return work{deletes: r.ev.Due(now)}
}

// apply performs the writes of w, without the lock, and records the
// outcome.
func (r *Runner) apply(ctx context.Context, w work) {
	ok := func(err error, counter *int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			r.stats.Failed++
			return
		}
		*counter++
	}
	for _, cw := range w.pass.Writes {
		ok(r.nodes.WriteConditions(ctx, cw.Node, cw.Conditions), &r.stats.ConditionWrites)
	}
	for i := 0; i < len(w.pass.Taints); {
		j := i + 1
		for j < len(w.pass.Taints) && w.pass.Taints[j].Node == w.pass.Taints[i].Node {
			j++
		}
		ok(r.nodes.WriteTaints(ctx, w.pass.Taints[i].Node, w.pass.Taints[i:j:j]), &r.stats.TaintWrites)
		i = j
	}
	for _, ref := range w.pass.PodsNotReady {
		err := r.pods.MarkPodNotReady(ctx, ref)
		ok(err, &r.stats.PodsMarkedNotReady)
		r.mu.Lock()
		if err != nil {
			r.ctrl.MarkPodsNotReadyFailed(ref.Node)
		} else {
			r.ctrl.podNotReady(PodKey{Namespace: ref.Namespace, Name: ref.Name})
		}
		r.mu.Unlock()
	}
	for _, key := range w.deletes {
		ok(r.deleter.DeletePod(ctx, key), &r.stats.PodsDeleted)
	}
}

// wake makes Run recompute when it next has work.
func (r *Runner) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// UpsertNode records a node from the node informer (Controller.UpsertNode at
// the clock's now) and writes the NoSchedule taint changes it calls for.
func (r *Runner) UpsertNode(ctx context.Context, node *v1.Node) error {
	return r.inform(ctx, "UpsertNode", func(now time.Time) (Pass, error) { return r.ctrl.UpsertNode(now, node) })
}

// UpdateStatus records a node's new conditions from the node informer
// (Controller.UpdateStatus at the clock's now) and writes the NoSchedule
// taint changes they call for.
func (r *Runner) UpdateStatus(ctx context.Context, node string, conds []v1.NodeCondition) error {
	return r.inform(ctx, "UpdateStatus", func(now time.Time) (Pass, error) { return r.ctrl.UpdateStatus(now, node, conds) })
}

func (r *Runner) inform(ctx context.Context, op string, call func(time.Time) (Pass, error)) error {
	if !r.initialized() {
		return notInit("Runner", op)
	}
	if ctx == nil {
		return &InputError{Op: op, Value: "<nil>", Reason: "a context is required"}
	}
	r.mu.Lock()
	now := r.clk.Now()
	p, err := call(now)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	r.apply(ctx, work{pass: p})
	return nil
}

// DeleteNode forgets a node (Controller.DeleteNode).
func (r *Runner) DeleteNode(node string) {
	if !r.initialized() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctrl.DeleteNode(node)
}

// UpsertLease records a node Lease from the lease informer (Controller.UpsertLease).
func (r *Runner) UpsertLease(node string, renew time.Time, resourceVersion string) {
	if !r.initialized() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctrl.UpsertLease(node, renew, resourceVersion)
}

// DeleteLease forgets a node's Lease (Controller.DeleteLease).
func (r *Runner) DeleteLease(node string) {
	if !r.initialized() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctrl.DeleteLease(node)
}

// UpsertPod records a pod from the pod informer (Controller.UpsertPod). A pod
// the pod workers mark not ready at once is written through the
// PodStatusWriter, and the taint-eviction controller evaluates the pod against
// its node's NoExecute taints (deleting it now, scheduling or cancelling its
// deletion). A nil pod does nothing.
func (r *Runner) UpsertPod(ctx context.Context, pod *v1.Pod) error {
	if !r.initialized() {
		return notInit("Runner", "UpsertPod")
	}
	if ctx == nil {
		return &InputError{Op: "UpsertPod", Value: "<nil>", Reason: "a context is required"}
	}
	if pod == nil {
		return nil
	}
	r.mu.Lock()
	now := r.clk.Now()
	var w work
	if r.ctrl.UpsertPod(pod) {
		w.pass.PodsNotReady = []PodRef{{Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName}}
	}
	key := PodKey{Namespace: pod.Namespace, Name: pod.Name}
	if ref, tols, ok := r.ctrl.pod(key); ok && r.deleter != nil {
		if r.ev.Evaluate(now, key, tols, r.ctrl.Taints(ref.Node)).Action == EvictionNow {
			w.deletes = []PodKey{key}
		}
	}
	r.mu.Unlock()
	r.wake()
	r.apply(ctx, w)
	return nil
}

// DeletePod forgets a pod (Controller.DeletePod) and any deletion scheduled
// for it.
func (r *Runner) DeletePod(namespace, name string) {
	if !r.initialized() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctrl.DeletePod(namespace, name)
	r.ev.Forget(PodKey{Namespace: namespace, Name: name})
}
