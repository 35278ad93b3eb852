package vk

import (
	"context"
	"path"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
)

// The provider is what virtual-kubelet's controllers expect of a node.
var (
	_ node.PodLifecycleHandler = (*Provider)(nil)
	_ node.PodNotifier         = (*Provider)(nil)
	_ node.NodeProvider        = (*Provider)(nil)
	_ record.EventRecorder     = (*events.Recorder)(nil)
)

// Provider is a virtual-kubelet provider that runs its pods as a kubelet
// does, on any podrunner.Runtime: one podrunner.Runner (a podlifecycle
// machine per pod, the kubelet's sync triggers, pod IPs from the pod CIDR,
// the host IP), a statussync.Cache whose new versions go to
// virtual-kubelet through NotifyPods, the kubelet's events through an
// events broadcaster, and the node's conditions from nodecondition's
// kubelet side through NotifyNodeStatus. See the package doc.
//
// It implements node.PodLifecycleHandler, node.PodNotifier and
// node.NodeProvider. All its methods are safe for simultaneous use by
// multiple goroutines. Use NewProvider; the methods of the zero value
// return ErrNotInitialized (or nothing).
type Provider struct {
	opts      Options
	client    kubernetes.Interface
	runtimes  RuntimeFactory
	clock     clock.Clock
	log       logr.Logger
	cacheOpts statussync.Options

	cache   *statussync.Cache
	runner  *podrunner.Runner
	bcast   *events.Broadcaster
	rec     *events.Recorder // the kubelet's events
	ctrlRec *events.Recorder // virtual-kubelet's pod controller's own

	podFactory  informers.SharedInformerFactory
	podInformer corev1informers.PodInformer
	pods        corev1listers.PodLister
	nodeFactory informers.SharedInformerFactory
	nodes       corev1listers.NodeLister
	// refFactory holds the ConfigMap, Secret and Service informers
	// virtual-kubelet's pod controller requires; it is never started (see
	// PodControllerConfig).
	refFactory informers.SharedInformerFactory

	kubelet *nodecondition.Kubelet // owned by the node loop

	mu         sync.Mutex
	running    bool
	byName     map[types.NamespacedName]types.UID
	finished   map[types.UID]bool
	check      map[types.UID]bool // pods whose API copy changed: deletion to check
	notifyPod  func(*v1.Pod)
	notifyNode func(*v1.Node)
	nodeCtx    context.Context
	podKick    chan struct{}
	nodeKick   chan struct{}

	// owned by the notifier loop
	sent map[types.UID]sentState

	statsMu sync.Mutex
	stats   Stats
}

// sentState is what the notifier last handed virtual-kubelet for a pod.
type sentState struct {
	version    uint64
	rv         string    // the resourceVersion of the object handed
	deleteSent time.Time // when a deletion of its API object was last asked for
}

// Stats counts what a Provider did, and every piece of work it could not
// do.
type Stats struct {
	// Created, Updated and Deleted count the calls of virtual-kubelet's pod
	// controller that the provider took; Rejected the pods it failed at
	// once (the runtime factory refused them, or the pod CIDR was full).
	Created, Updated, Deleted, Rejected int
	// Notified counts pod statuses handed to virtual-kubelet; Resent those
	// among them sent again because the API server's copy drifted from the
	// node's.
	Notified, Resent uint64
	// PodsDeleted counts the finished pods whose API objects the provider
	// deleted (grace 0, UID precondition) once their final status was
	// written; DeleteErrors the deletions that failed (tried again at the
	// next full sync).
	PodsDeleted, DeleteErrors uint64
	// NodeReports counts node statuses handed to virtual-kubelet;
	// NodeReportsHeld the reports due before virtual-kubelet registered its
	// callback (sent once it has).
	NodeReports, NodeReportsHeld uint64
	// RuntimePanics and RuntimeTimeouts count runtime calls that panicked
	// or did not return within Options.RuntimeTimeout.
	RuntimePanics, RuntimeTimeouts uint64
	// Runner is the pod runner's count; Events the event broadcaster's.
	Runner podrunner.Stats
	Events events.Stats
}

// NewProvider returns a provider for the node opts.Name that makes each
// pod's runtime with runtimes and talks to the API server through client:
// a watch of the pods bound to the node (the informer virtual-kubelet's
// pod controller is given, see PodControllerConfig) and of the Node, the
// kubelet's events, and the deletion of finished pods. The node's own
// identity (system:node:<Name>) is enough. It returns an *OptionError for
// options it refuses, a nil factory or a nil client. It starts nothing:
// Run does.
func NewProvider(opts Options, runtimes RuntimeFactory, client kubernetes.Interface) (*Provider, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	switch {
	case runtimes == nil:
		return nil, &OptionError{Field: "runtimes", Value: nil, Reason: "a runtime factory is required"}
	case client == nil:
		return nil, &OptionError{Field: "client", Value: nil, Reason: "a client is required"}
	}
	p := &Provider{opts: opts, client: client, runtimes: runtimes, clock: opts.Clock, log: opts.Logger,
		byName: map[types.NamespacedName]types.UID{}, finished: map[types.UID]bool{}, check: map[types.UID]bool{},
		podKick: make(chan struct{}, 1), nodeKick: make(chan struct{}, 1), sent: map[types.UID]sentState{}}
	if p.clock == nil {
		p.clock = clock.RealClock{}
	}
	var err error
	p.cacheOpts = statussync.Options{Features: opts.Runner.Lifecycle.Features, Version: opts.Runner.Lifecycle.Version}
	if p.cache, err = statussync.NewCache(p.cacheOpts); err != nil {
		return nil, &OptionError{Field: "Runner.Lifecycle.Version", Value: opts.Runner.Lifecycle.Version.String(), Reason: "refused by statussync", Err: err}
	}
	bo := opts.Events
	bo.Clock = p.clock
	if p.bcast, err = events.NewBroadcaster(bo); err != nil {
		return nil, &OptionError{Field: "Events", Value: "", Reason: "refused by events", Err: err}
	}
	if p.rec, err = p.bcast.NewRecorder(v1.EventSource{Component: "kubelet", Host: opts.Name}, events.RecorderOptions{}); err != nil {
		return nil, err
	}
	if p.ctrlRec, err = p.bcast.NewRecorder(v1.EventSource{Component: path.Join(opts.Name, "pod-controller")}, events.RecorderOptions{}); err != nil {
		return nil, err
	}
	if p.kubelet, err = nodecondition.NewKubelet(opts.Kubelet); err != nil {
		return nil, &OptionError{Field: "Kubelet", Value: "", Reason: "refused by nodecondition", Err: err}
	}
	ro := opts.Runner
	ro.Clock, ro.Logger = p.clock, opts.Logger
	if len(ro.HostIPs) == 0 {
		ro.HostIPs = []string{opts.Address}
	}
	ro.Hooks = podrunner.Hooks{Finished: p.finishedHook}
	if p.runner, err = podrunner.New(ro, p.cache, p.rec); err != nil {
		return nil, &OptionError{Field: "Runner", Value: "", Reason: "refused by podrunner", Err: err}
	}

	p.podFactory = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", opts.Name).String()
	}))
	p.podInformer = p.podFactory.Core().V1().Pods()
	p.pods = p.podInformer.Lister()
	if _, err := p.podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { p.apiUpdate(obj) },
		DeleteFunc: p.apiDelete,
	}); err != nil {
		return nil, err
	}
	p.nodeFactory = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", opts.Name).String()
	}))
	p.nodes = p.nodeFactory.Core().V1().Nodes().Lister()
	p.refFactory = informers.NewSharedInformerFactory(client, 0)
	return p, nil
}

func (p *Provider) ready() bool { return p != nil && p.runner != nil }

// Run runs the provider until ctx ends: the pod and node watches, the pod
// runner, the loop that hands new statuses to virtual-kubelet and deletes
// finished pods, the node status loop and the event writer. It returns
// ctx's error once every goroutine it started has exited and the queued
// events were flushed (within Options.ShutdownTimeout). A Provider runs
// once; a second Run returns an error at once.
func (p *Provider) Run(ctx context.Context) error {
	if !p.ready() {
		return ErrNotInitialized
	}
	p.mu.Lock()
	if p.running {
		p.mu.Unlock()
		return errorString("vk: Run called twice")
	}
	p.running = true
	p.mu.Unlock()
	if err := p.bcast.StartRecordingToSink(&kube.CoreEventSink{Client: p.client.CoreV1()}, p.opts.Correlator); err != nil {
		return err
	}
	p.podFactory.Start(ctx.Done())
	p.nodeFactory.Start(ctx.Done())
	var wg sync.WaitGroup
	for _, loop := range []func(context.Context){
		func(ctx context.Context) { _ = p.runner.Run(ctx) },
		p.notifyLoop,
		p.nodeLoop,
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(ctx)
		}()
	}
	<-ctx.Done()
	wg.Wait()
	p.podFactory.Shutdown()
	p.nodeFactory.Shutdown()
	sctx, cancel := context.WithTimeout(context.Background(), p.opts.ShutdownTimeout)
	defer cancel()
	if err := p.bcast.Shutdown(sctx); err != nil {
		p.log.Error(err, "events not all written at shutdown")
	}
	return ctx.Err()
}

// Stats returns what the provider did so far.
func (p *Provider) Stats() Stats {
	if !p.ready() {
		return Stats{}
	}
	p.statsMu.Lock()
	s := p.stats
	p.statsMu.Unlock()
	s.Runner = p.runner.Stats()
	s.Events = p.bcast.Stats()
	return s
}

func (p *Provider) count(f func(*Stats)) {
	p.statsMu.Lock()
	f(&p.stats)
	p.statsMu.Unlock()
}

// Notify tells the provider that the runtime of pod uid has news: its Due
// is read at once. A runtime that knows when its next report is due
// (Runtime.Next) needs no Notify. A pod the provider does not run returns
// a *PodError wrapping ErrUnknownPod.
func (p *Provider) Notify(uid types.UID) error {
	if !p.ready() {
		return ErrNotInitialized
	}
	if err := p.runner.Notify(uid); err != nil {
		return &PodError{Op: "notify", UID: uid, Kind: ErrUnknownPod, Err: err}
	}
	return nil
}

// PodControllerConfig returns the configuration of virtual-kubelet's pod
// controller for this provider: the client's pods, the provider's pod
// informer (the pods bound to the node), a recorder for the controller's
// own events (source "<node>/pod-controller", as virtual-kubelet's nodeutil
// names it), and SkipDownwardAPIResolution: the provider hands the pod to
// its runtime as the API server has it. The ConfigMap, Secret and Service
// informers the controller requires are never started: it reads them only
// to resolve the downward API, which is skipped, and a node's identity may
// not list Secrets or ConfigMaps. The queues of pods to sync and of
// statuses to write back off per pod after a failure, as virtual-kubelet's
// default does, but without its limit of 10 items a second over all pods,
// which a kubelet does not have: the client's own rate limit paces the
// requests (the kubelet's is 50 a second, bursts of 100). Change what you
// need before node.NewPodController.
func (p *Provider) PodControllerConfig() node.PodControllerConfig {
	if !p.ready() {
		return node.PodControllerConfig{}
	}
	core := p.refFactory.Core().V1()
	return node.PodControllerConfig{
		PodClient: p.client.CoreV1(), PodInformer: p.podInformer, EventRecorder: p.ctrlRec, Provider: p,
		ConfigMapInformer: core.ConfigMaps(), SecretInformer: core.Secrets(), ServiceInformer: core.Services(),
		SkipDownwardAPIResolution:            true,
		SyncPodsFromKubernetesRateLimiter:    perPodBackoff(),
		SyncPodStatusFromProviderRateLimiter: perPodBackoff(),
	}
}

// perPodBackoff is the per-item half of client-go's default controller
// rate limiter: 5 ms doubling up to 1000 s while an item keeps failing.
func perPodBackoff() workqueue.TypedRateLimiter[any] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[any](5*time.Millisecond, 1000*time.Second)
}

// kick wakes a loop without blocking.
func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
