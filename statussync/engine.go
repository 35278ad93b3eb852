package statussync

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// DefaultFullSyncPeriod is the kubelet's status sync period.
const DefaultFullSyncPeriod = 10 * time.Second

// Hooks receive what an Engine does, for metrics. Any of them may be nil.
// They run on the engine's goroutine and must not block.
type Hooks struct {
	// Request is called after each API request with its verb ("get",
	// "patch" or "delete") and its error (nil on success).
	Request func(verb string, err error)
	// Synced is called when a status version of pod uid reached the API
	// server, with the time since the first change it carries.
	Synced func(uid types.UID, version uint64, latency time.Duration)
	// PatchBytes is called with the size of each patch sent.
	PatchBytes func(n int)
	// Pass is called at the end of each pass with what it did.
	Pass func(full bool, r Result)
}

// EngineOptions configures an Engine. Start from [DefaultEngineOptions]:
// zero periods are refused, not defaulted.
type EngineOptions struct {
	// Clock is the engine's time: SyncOnce reads it, Run also waits on it.
	// Nil is the real clock.
	Clock clock.Clock
	// FullSyncPeriod is how often Run makes a full pass (10s).
	FullSyncPeriod time.Duration
	// Planner decides the requests: NoGet mode, back-off, deletion safety.
	Planner PlannerOptions
	// Hooks receive metrics.
	Hooks Hooks
}

// DefaultEngineOptions returns the kubelet's settings with a real clock.
func DefaultEngineOptions() EngineOptions {
	return EngineOptions{Clock: clock.RealClock{}, FullSyncPeriod: DefaultFullSyncPeriod, Planner: DefaultPlannerOptions()}
}

func (o *EngineOptions) validate() error {
	if o.FullSyncPeriod <= 0 {
		return optionError("FullSyncPeriod", o.FullSyncPeriod.String(), "must be positive")
	}
	return o.Planner.validate()
}

// Engine writes the statuses of a Cache to the API server through a
// Transport, the way the kubelet's status manager does, with these
// additions: terminal statuses go first; a pod the server does not have is
// not fetched again until its status changes; failed requests back off per
// pod; Observe feeds a watch for drift detection without extra reads;
// every patch carries a resourceVersion precondition; and NoGet cuts the
// requests per synced version from two toward one.
//
// An Engine is a thin loop around a [Planner], which makes every decision:
// SyncOnce is one pass of it with the transport's calls in between; Run
// makes passes when the cache changes, when a back-off ends and every
// FullSyncPeriod.
//
// Run drives it from a goroutine; SyncOnce drives it one pass at a time.
// Both may be called from any goroutine; passes never overlap. Observe is
// safe to call at any time. Use NewEngine: on the zero value SyncOnce does
// nothing and Run returns ErrNotInitialized.
type Engine struct {
	transport Transport
	cache     *Cache
	opts      EngineOptions

	syncMu  sync.Mutex
	planner *Planner

	obsMu    sync.Mutex
	observed map[types.UID]*v1.Pod // by API UID, the newest copy
}

// NewEngine returns an engine that syncs cache through transport. It
// returns an error wrapping ErrInvalidOptions for a nil cache or transport
// or invalid options.
func NewEngine(opts EngineOptions, cache *Cache, transport Transport) (*Engine, error) {
	if transport == nil {
		return nil, optionError("transport", "nil", "must be set")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	planner, err := NewPlanner(opts.Planner, cache)
	if err != nil {
		return nil, err
	}
	return &Engine{transport: transport, cache: cache, opts: opts, planner: planner}, nil
}

// Result counts what one pass did.
type Result struct {
	// At is the time the pass started.
	At time.Time
	// Attempted is the number of pods the pass tried to sync.
	Attempted int
	// Synced is the number whose cached version reached the server.
	Synced int
	// Deleted is the number of finished pods deleted.
	Deleted int
	// Failed is the number of failed requests (a pod whose PATCH conflicts
	// and whose GET then fails counts once).
	Failed int
	// Dropped is the number of cache entries forgotten because the server
	// has another pod under that name (it was recreated).
	Dropped int
}

// Observe gives the engine a pod as the API server has it, typically from a
// watch. The engine uses it as the base of its next patch and, in a full
// pass, writes the kubelet's status again if the server's kubelet-owned
// status differs from the cache (drift). It keeps a copy of pod, or with
// the cache's Options.SharedPods pod itself. A nil pod is ignored.
func (e *Engine) Observe(pod *v1.Pod) {
	if e.cache == nil || pod == nil || pod.UID == "" {
		return
	}
	cp := pod
	if !e.cache.opts.SharedPods {
		cp = pod.DeepCopy()
	}
	e.obsMu.Lock()
	if e.observed == nil {
		e.observed = make(map[types.UID]*v1.Pod)
	}
	if cur := e.observed[cp.UID]; cur == nil || !olderRV(cp.ResourceVersion, cur.ResourceVersion) {
		e.observed[cp.UID] = cp
	}
	e.obsMu.Unlock()
	e.cache.notify()
}

// SyncOnce makes one pass (see [Planner.Begin]): the fast pass (full false)
// syncs every pod whose cached version is ahead of the API's; the full pass
// also repairs drift, retries deletions and forgets pods no longer cached.
// It stops early when ctx ends.
func (e *Engine) SyncOnce(ctx context.Context, full bool) Result {
	if e.planner == nil {
		return Result{}
	}
	e.syncMu.Lock()
	defer e.syncMu.Unlock()
	now := e.opts.Clock.Now()

	e.obsMu.Lock()
	observed := e.observed
	e.observed = nil
	e.obsMu.Unlock()
	for _, pod := range observed {
		e.planner.Observe(pod)
	}

	p := e.planner
	p.Begin(now, full)
	for ctx.Err() == nil {
		req, ok := p.Next()
		if !ok {
			break
		}
		pod, err := e.call(ctx, req)
		if e.opts.Hooks.Request != nil {
			e.opts.Hooks.Request(req.Verb.String(), err)
		}
		if out := p.Done(now, pod, err); out.Synced && e.opts.Hooks.Synced != nil && !out.Since.IsZero() {
			e.opts.Hooks.Synced(req.Pod, req.Version, now.Sub(out.Since))
		}
	}
	res := p.End()
	if e.opts.Hooks.Pass != nil {
		e.opts.Hooks.Pass(full, res)
	}
	return res
}

// call makes one request through the transport.
func (e *Engine) call(ctx context.Context, req Request) (*v1.Pod, error) {
	switch req.Verb {
	case VerbGet:
		return e.transport.GetPod(ctx, req.Namespace, req.Name)
	case VerbPatch:
		if e.opts.Hooks.PatchBytes != nil {
			e.opts.Hooks.PatchBytes(len(req.Patch))
		}
		return e.transport.PatchPodStatus(ctx, req.Namespace, req.Name, req.Patch)
	case VerbDelete:
		return nil, e.transport.DeletePod(ctx, req.Namespace, req.Name, req.UID)
	}
	return nil, fmt.Errorf("statussync: unknown verb %v", req.Verb)
}

// Run syncs until ctx ends: a fast pass on every change signalled by the
// cache and when a pod's retry back-off ends, a full pass every
// FullSyncPeriod. It returns ctx.Err() and leaves no goroutine behind; on a
// zero Engine it returns ErrNotInitialized at once.
func (e *Engine) Run(ctx context.Context) error {
	if e.planner == nil {
		return ErrNotInitialized
	}
	clk := e.opts.Clock
	full := clk.NewTimer(e.opts.FullSyncPeriod)
	defer full.Stop()
	var retry clock.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		var retryC <-chan time.Time
		if retry != nil {
			retryC = retry.C()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-e.cache.Changed():
			e.SyncOnce(ctx, false)
		case <-full.C():
			full.Reset(e.opts.FullSyncPeriod)
			e.SyncOnce(ctx, true)
		case <-retryC:
			retry = nil
			e.SyncOnce(ctx, false)
		}
		if retry != nil {
			retry.Stop()
			retry = nil
		}
		now := clk.Now()
		e.syncMu.Lock()
		next, ok := e.planner.NextWake(now)
		e.syncMu.Unlock()
		if ok {
			retry = clk.NewTimer(next.Sub(now))
		}
	}
}
