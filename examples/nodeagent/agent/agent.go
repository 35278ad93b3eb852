package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Cluster is what the agent asks of the API server beyond pod statuses and events: the objects
// a node agent creates or keeps alive. Errors are the server's (apimachinery StatusErrors for a
// real server).
type Cluster interface {
	// CreatePod creates pod, already bound to the agent's node, and returns it as the server
	// stored it (with its UID and resourceVersion). The agent owns the argument and the result.
	CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
	// UpdateNode creates node when the server does not have it, and otherwise writes its
	// status (the conditions), as the kubelet's registration and status PATCH do.
	UpdateNode(ctx context.Context, node *v1.Node) error
	// RenewLease writes the node's Lease in kube-node-lease, creating it when missing.
	RenewLease(ctx context.Context, lease *coordinationv1.Lease) error
}

// Options configures an Agent. The zero value of a field means its default.
type Options struct {
	// NodeName is the node the agent runs ("node-1").
	NodeName string
	// Namespace holds the pods ("default").
	Namespace string
	// Pods is the number of pods to run (8). They are handed out in order of interest:
	// a crash-looping worker, a cache whose image cannot be pulled, a Job with a sidecar,
	// an API Deployment with an init container, a StatefulSet pod with two init containers,
	// then web replicas with readiness probes, and again with new replicas.
	Pods int
	// Seed draws every name, UID, container ID and timing, and the jitter of the
	// kubelet's loops.
	Seed uint64
	// NoGet syncs statuses in statussync's NoGet mode (one request per synced version
	// instead of the kubelet's GET and PATCH).
	NoGet bool
}

// DefaultPods is the default number of pods.
const DefaultPods = 8

// DefaultOptions returns the options whose fields are all at their defaults: node-1, the
// default namespace, DefaultPods pods, seed 0, the kubelet's GET and PATCH.
func DefaultOptions() Options {
	return Options{NodeName: "node-1", Namespace: "default", Pods: DefaultPods}
}

// Limits on the configuration, so that a flag cannot make a run unbounded.
const (
	MaxPods = 1000
)

// ErrInvalidOptions is matched (errors.Is) by the errors New returns for bad Options.
var ErrInvalidOptions = errors.New("agent: invalid options")

// Stats counts what the agent did.
type Stats struct {
	// StatusesSet is the number of statuses the agent computed and gave the cache;
	// Versions the number of new versions the cache stored (TerminatePod included);
	// Synced the number of versions that reached the API server.
	StatusesSet, Versions, Synced int
	// Requests counts the engine's API requests by verb (get, patch, delete), failed
	// ones included.
	Requests map[string]int
	// Passes and FullPasses count the engine's sync passes.
	Passes, FullPasses int
	// Events counts the events.
	Events EventStats
	// PodsCreated is the number of pods created; NodeReports the number of node writes
	// (registration and status reports); LeaseRenewals the number of lease renewals;
	// ClusterErrors the number of Cluster calls that failed.
	PodsCreated, NodeReports, LeaseRenewals, ClusterErrors int
	// NodeConditions are the node's conditions as last reported.
	NodeConditions []v1.NodeCondition
}

// Coalesced is the number of cached versions that never reached the server on their own
// because a newer one was written instead.
func (s Stats) Coalesced() int { return s.Versions - s.Synced }

// Agent is a simulated node agent: it runs each pod through a podlifecycle machine whose
// actions a simulated runtime carries out, caches and syncs the statuses the machines produce
// with statussync, records the machines' kubelet events through an events broadcaster, and
// keeps its node healthy with nodecondition's kubelet side.
//
// The agent runs on one goroutine and starts none. Time is its clock's: with a fake clock
// (k8s.io/utils/clock/testing) Run moves it from one due instant to the next, so ten minutes
// pass in a moment; with a real clock Run waits.
type Agent struct {
	opts      Options
	clock     clock.WithTicker
	cluster   Cluster
	transport statussync.Transport

	rng    *rand.Rand
	cache  *statussync.Cache
	engine *statussync.Engine
	runner *podrunner.Runner
	events *eventRecorder

	kubelet   *nodecondition.Kubelet
	lease     *nodecondition.LeaseRenewer
	node      *v1.Node
	nextNode  time.Time
	nextRenew time.Time
	nextFull  time.Time

	plans   []plan
	pods    []*pod
	byUID   map[types.UID]*pod
	started bool
	stats   Stats
}

// New returns an agent for opts that syncs pod statuses through transport, writes core/v1
// events to sink, creates its node, lease and pods through cluster, and reads time from clk.
func New(opts Options, clk clock.WithTicker, transport statussync.Transport, sink events.Sink, cluster Cluster) (*Agent, error) {
	if opts.NodeName == "" {
		opts.NodeName = "node-1"
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.Pods == 0 {
		opts.Pods = DefaultPods
	}
	if opts.Pods < 0 || opts.Pods > MaxPods {
		return nil, fmt.Errorf("%w: pods %d, want 1 to %d", ErrInvalidOptions, opts.Pods, MaxPods)
	}
	if clk == nil || transport == nil || sink == nil || cluster == nil {
		return nil, fmt.Errorf("%w: clock, transport, sink and cluster are required", ErrInvalidOptions)
	}
	a := &Agent{
		opts: opts, clock: clk, cluster: cluster, transport: transport,
		rng:   rand.New(rand.NewPCG(opts.Seed, 0x6e6f646561676e74)),
		byUID: map[types.UID]*pod{},
		stats: Stats{Requests: map[string]int{}},
	}
	var err error

	if a.cache, err = statussync.NewCache(statussync.DefaultOptions()); err != nil {
		return nil, err
	}
	eo := statussync.DefaultEngineOptions()
	eo.Clock = clk
	eo.Planner.NoGet = opts.NoGet
	eo.Hooks = statussync.Hooks{
		Request: func(verb string, _ error) { a.stats.Requests[verb]++ },
		Synced:  func(types.UID, uint64, time.Duration) { a.stats.Synced++ },
		Pass: func(full bool, _ statussync.Result) {
			a.stats.Passes++
			if full {
				a.stats.FullPasses++
			}
		},
	}
	if a.engine, err = statussync.NewEngine(eo, a.cache, transport); err != nil {
		return nil, err
	}

	jitter := rand.New(rand.NewPCG(opts.Seed, 0x6a6974746572))
	bo := events.DefaultBroadcasterOptions()
	bo.Clock, bo.Queue.Rand = clk, jitter
	bcast, err := events.NewBroadcaster(bo)
	if err != nil {
		return nil, err
	}
	// A sink without a goroutine: Flush writes it on the agent's goroutine.
	if err := bcast.AddSink(sink, events.DefaultCorrelatorOptions()); err != nil {
		return nil, err
	}
	var nameSeed [32]byte
	copy(nameSeed[:], fmt.Sprintf("nodeagent-%d", opts.Seed))
	rec, err := bcast.NewRecorder(v1.EventSource{Component: "kubelet", Host: opts.NodeName},
		events.RecorderOptions{Rand: rand.New(rand.NewChaCha8(nameSeed))})
	if err != nil {
		return nil, err
	}
	a.events = &eventRecorder{b: bcast, rec: rec}
	ro := podrunner.DefaultOptions()
	// The kubelet's jitter of requeues and first probe delays, drawn from the seed.
	ro.Lifecycle.Rand = rand.New(rand.NewPCG(opts.Seed, 0x6c6966656379636c))
	ro.Clock, ro.PodCIDR, ro.HostIPs = clk, "10.244.0.0/16", []string{"192.0.2.10"}
	ro.Hooks = podrunner.Hooks{Synced: a.synced, Finished: a.finished}
	if a.runner, err = podrunner.New(ro, a.cache, a.events); err != nil {
		return nil, err
	}

	kopts := nodecondition.DefaultKubeletOptions()
	kopts.Rand = jitter
	if a.kubelet, err = nodecondition.NewKubelet(kopts); err != nil {
		return nil, err
	}
	if a.lease, err = nodecondition.NewLeaseRenewer(kopts, opts.NodeName); err != nil {
		return nil, err
	}
	a.plans = workloads(opts.Pods, opts.NodeName, opts.Namespace, a.rng)
	return a, nil
}

// Start registers the node, takes its lease and creates the pods, at the clock's time.
func (a *Agent) Start(ctx context.Context) error {
	if a.started {
		return nil
	}
	a.started = true
	now := a.clock.Now()
	a.node = &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: a.opts.NodeName, CreationTimestamp: metav1.NewTime(now), Labels: map[string]string{
			v1.LabelHostname: a.opts.NodeName, v1.LabelOSStable: "linux", v1.LabelArchStable: "amd64",
		}},
		Status: v1.NodeStatus{
			Capacity:    v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110")},
			Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("3800m"), v1.ResourceMemory: resource.MustParse("15Gi"), v1.ResourcePods: resource.MustParse("110")},
			NodeInfo:    v1.NodeSystemInfo{KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.2.0", OperatingSystem: "linux", Architecture: "amd64"},
		},
	}
	if err := a.nodeStatus(ctx, now); err != nil {
		return err
	}
	if err := a.renew(ctx, now); err != nil {
		return err
	}
	a.nextFull = now.Add(statussync.DefaultFullSyncPeriod)
	for _, pl := range a.plans {
		pl.pod.CreationTimestamp = metav1.NewTime(now)
		created, err := a.cluster.CreatePod(ctx, pl.pod)
		if err != nil {
			return fmt.Errorf("agent: create pod %s/%s: %w", pl.pod.Namespace, pl.pod.Name, err)
		}
		a.stats.PodsCreated++
		p, err := a.addPod(pl, created)
		if err != nil {
			return err
		}
		a.pods = append(a.pods, p)
	}
	return nil
}

// Step does everything due at the clock's time: the pods' runtime happenings and syncs,
// the node status and lease, and a status sync pass (fast when the cache changed, full every
// 10 s). It returns when the agent next has work.
func (a *Agent) Step(ctx context.Context) (time.Time, error) {
	if !a.started {
		if err := a.Start(ctx); err != nil {
			return time.Time{}, err
		}
	}
	now := a.clock.Now()
	a.events.ctx = ctx
	a.events.flush(ctx)
	nextPods := a.runner.Advance(now)
	if s := a.runner.Stats(); s.StepErrors+s.StatusErrors+s.DroppedObservations+s.Stalls > 0 {
		return time.Time{}, fmt.Errorf("agent: the pod runner refused work: %+v", s)
	}
	if !now.Before(a.nextNode) {
		if err := a.nodeStatus(ctx, now); err != nil {
			return time.Time{}, err
		}
	}
	if !now.Before(a.nextRenew) {
		if err := a.renew(ctx, now); err != nil {
			return time.Time{}, err
		}
	}
	full := !now.Before(a.nextFull)
	changed := false
	select {
	case <-a.cache.Changed():
		changed = true
	default:
	}
	if full || changed {
		a.engine.SyncOnce(ctx, full)
	}
	if full {
		a.nextFull = now.Add(statussync.DefaultFullSyncPeriod)
	}
	next := slices.MinFunc([]time.Time{a.nextNode, a.nextRenew, a.nextFull}, time.Time.Compare)
	if t, ok := a.events.next(); ok && t.Before(next) {
		next = t
	}
	if !nextPods.IsZero() && nextPods.Before(next) {
		next = nextPods
	}
	if !next.After(now) {
		next = now.Add(time.Millisecond)
	}
	return next, ctx.Err()
}

// Run starts the agent and steps it until the clock has passed d from the start, then makes a
// last full sync pass. With a clock that can be set (the fake clock's SetTime) it jumps from
// one due instant to the next; otherwise it waits on the clock.
func (a *Agent) Run(ctx context.Context, d time.Duration) error {
	if err := a.Start(ctx); err != nil {
		return err
	}
	end := a.clock.Now().Add(d)
	setter, virtual := a.clock.(interface{ SetTime(time.Time) })
	for {
		next, err := a.Step(ctx)
		if err != nil {
			return err
		}
		if next.After(end) {
			break
		}
		if virtual {
			setter.SetTime(next)
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-a.clock.After(next.Sub(a.clock.Now())):
		}
	}
	if virtual {
		setter.SetTime(end)
	}
	a.engine.SyncOnce(ctx, true)
	return ctx.Err()
}

// nodeStatus runs the kubelet's eviction pass and condition setters and writes the node when
// the report rule says so.
func (a *Agent) nodeStatus(ctx context.Context, now time.Time) error {
	s := nodecondition.HealthySample()
	if _, err := a.kubelet.Observe(now, &s); err != nil {
		return err
	}
	r, err := a.kubelet.Status(now, nodecondition.Health{})
	if err != nil {
		return err
	}
	a.nextNode = now.Add(nodecondition.DefaultKubeletOptions().StatusUpdateFrequency)
	ref := &v1.ObjectReference{Kind: "Node", Name: a.opts.NodeName, UID: types.UID(a.opts.NodeName)}
	for _, reason := range r.Events {
		a.events.record(ctx, ref, v1.EventTypeNormal, reason, fmt.Sprintf("Node %s status is now: %s", a.opts.NodeName, reason))
	}
	if !r.Send {
		return nil
	}
	a.node.Status.Conditions = slices.Clone(r.Conditions)
	if err := a.cluster.UpdateNode(ctx, a.node.DeepCopy()); err != nil {
		a.kubelet.ReportFailed()
		a.stats.ClusterErrors++
		return nil
	}
	a.stats.NodeReports++
	a.stats.NodeConditions = slices.Clone(r.Conditions)
	return nil
}

// renew renews the node lease on the renewer's schedule. The renewer records an outcome
// (Renewed resets its failure count, Failed raises it), so the spec to write is built here,
// as Renewed builds it, and the renewer told only once the write's outcome is known.
func (a *Agent) renew(ctx context.Context, now time.Time) error {
	holder := a.opts.NodeName
	secs := int32(nodecondition.DefaultKubeletOptions().LeaseDuration / time.Second)
	renewTime := metav1.NewMicroTime(now)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: a.opts.NodeName, Namespace: nodecondition.LeaseNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &renewTime},
	}
	if err := a.cluster.RenewLease(ctx, lease); err != nil {
		a.stats.ClusterErrors++
		retry, ferr := a.lease.Failed(now)
		if ferr != nil {
			return ferr
		}
		a.nextRenew = retry
		return nil
	}
	_, next, err := a.lease.Renewed(now)
	if err != nil {
		return err
	}
	a.nextRenew = next
	a.stats.LeaseRenewals++
	return nil
}

// Stats returns what the agent did so far.
func (a *Agent) Stats() Stats {
	s := a.stats
	s.Requests = make(map[string]int, len(a.stats.Requests))
	for k, v := range a.stats.Requests {
		s.Requests[k] = v
	}
	s.Events = a.events.stats()
	s.NodeConditions = slices.Clone(a.stats.NodeConditions)
	// Each stored version raises a pod's version by one, from 1.
	for _, p := range a.pods {
		s.Versions += int(a.cache.Version(p.api.UID))
	}
	return s
}

// PodState is one pod as the agent sees it.
type PodState struct {
	// Pod is the pod as the agent created it (spec and metadata).
	Pod *v1.Pod
	// Computed is the newest status its podlifecycle machine produced.
	Computed v1.PodStatus
	// Cached is the status the cache holds for the pod.
	Cached v1.PodStatus
	// Version is the cached status version.
	Version uint64
	// Finished is true once the machine finished the pod and the agent TerminatePod'ed it.
	Finished bool
	// CrashLooping is true for a pod with a regular container whose instances exit with an
	// error.
	CrashLooping bool
}

// Pods returns the agent's pods in creation order.
func (a *Agent) Pods() []PodState {
	out := make([]PodState, 0, len(a.pods))
	for _, p := range a.pods {
		cached, _ := a.cache.GetPodStatus(p.api.UID)
		st := PodState{Pod: p.api.DeepCopy(), Computed: *p.last.DeepCopy(), Cached: cached,
			Version: a.cache.Version(p.api.UID), Finished: p.finished}
		for i := range p.api.Spec.Containers {
			if b := p.behaviors[p.api.Spec.Containers[i].Name]; b.runFor > 0 && b.exitCode != 0 {
				st.CrashLooping = true
			}
		}
		out = append(out, st)
	}
	return out
}
