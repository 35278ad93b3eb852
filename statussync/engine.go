package statussync

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodestate/nodestate/podphase"
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
// zero periods are invalid, not defaults.
type EngineOptions struct {
	// Clock is the engine's time: SyncOnce reads it, Run also waits on it.
	Clock clock.WithTicker
	// FullSyncPeriod is how often Run makes a full pass (10s).
	FullSyncPeriod time.Duration
	// NoGet patches without reading the pod first when the engine knows the
	// server's copy (from its last write, a GET or Observe): the patch then
	// carries that copy's resourceVersion, and a conflict falls back to a
	// GET. Off is the kubelet's GET-then-PATCH.
	NoGet bool
	// RetryInitial and RetryMax bound the per-pod back-off after a failed
	// request (1s doubling to 1m by default).
	RetryInitial, RetryMax time.Duration
	// DeletionSafety says whether a pod's containers could still run. Nil
	// uses the cached status: a pod the cache has not finished (see
	// Cache.TerminatePod) could run containers while any container status
	// is not Terminated.
	DeletionSafety DeletionSafety
	// Hooks receive metrics.
	Hooks Hooks
}

// DefaultEngineOptions returns the kubelet's settings with a real clock.
func DefaultEngineOptions() EngineOptions {
	return EngineOptions{Clock: clock.RealClock{}, FullSyncPeriod: DefaultFullSyncPeriod, RetryInitial: time.Second, RetryMax: time.Minute}
}

func (o *EngineOptions) validate() error {
	switch {
	case o.Clock == nil:
		return optionError("Clock", "must be set")
	case o.FullSyncPeriod <= 0:
		return optionError("FullSyncPeriod", "must be positive, got "+o.FullSyncPeriod.String())
	case o.RetryInitial <= 0 || o.RetryMax < o.RetryInitial:
		return optionError("RetryInitial/RetryMax", "need 0 < RetryInitial <= RetryMax, got "+o.RetryInitial.String()+" and "+o.RetryMax.String())
	}
	return nil
}

func optionError(field, reason string) error {
	return &OptionError{Field: field, Reason: reason}
}

// OptionError reports an engine option out of range.
type OptionError struct {
	// Field is the option's name.
	Field string
	// Reason says what is wrong.
	Reason string
}

// Error names the option and what is wrong with it.
func (e *OptionError) Error() string {
	return "statussync: invalid option " + e.Field + ": " + e.Reason
}

// Unwrap returns ErrInvalidOption.
func (e *OptionError) Unwrap() error { return ErrInvalidOption }

// podState is what the engine knows of one pod's API object. Only the sync
// goroutine touches it.
type podState struct {
	apiVersion uint64  // last cache version the API holds
	server     *v1.Pod // the server's copy as last seen
	notFound   uint64  // version for which the pod was not found
	failures   int
	retryAt    time.Time
	pending    bool // a fast pass syncs it once retryAt has passed
	// verified is the server copy last found to hold version verifiedAt of
	// the cache, so that a full pass compares each copy only once.
	verified   *v1.Pod
	verifiedAt uint64
	pass       uint64 // the last pass that saw the pod cached
}

// Engine writes the statuses of a Cache to the API server through a
// Transport, the way the kubelet's status manager does, with these
// additions: terminal statuses go first; a pod the server does not have is
// not fetched again until its status changes; failed requests back off per
// pod; Observe feeds a watch for drift detection without extra reads; and
// NoGet cuts the requests per synced version from two toward one.
//
// Run drives it from a goroutine; SyncOnce drives it one pass at a time.
// Both may be called from any goroutine; passes never overlap. Observe is
// safe to call at any time.
type Engine struct {
	cache     *Cache
	transport Transport
	opts      EngineOptions

	syncMu  sync.Mutex
	states  map[types.UID]*podState
	entries []*entry // reused by each pass
	pass    uint64

	obsMu    sync.Mutex
	observed map[types.UID]*v1.Pod
}

// NewEngine returns an engine that syncs cache through transport. It
// returns an error wrapping ErrInvalidOption for invalid options.
func NewEngine(cache *Cache, transport Transport, opts EngineOptions) (*Engine, error) {
	if cache == nil || transport == nil {
		return nil, optionError("cache/transport", "must not be nil")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Engine{cache: cache, transport: transport, opts: opts,
		states: make(map[types.UID]*podState), observed: make(map[types.UID]*v1.Pod)}, nil
}

// Result counts what one pass did.
type Result struct {
	// At is the engine clock's time when the pass started.
	At time.Time
	// Attempted is the number of pods the pass tried to sync.
	Attempted int
	// Synced is the number whose cached version reached the server.
	Synced int
	// Deleted is the number of finished pods deleted.
	Deleted int
	// Failed is the number of pods whose requests failed.
	Failed int
	// Dropped is the number of cache entries forgotten because the server
	// has another pod under that name (it was recreated).
	Dropped int
}

// Observe gives the engine a pod as the API server has it, typically from a
// watch. The engine uses it as the base of its next patch and, in a full
// pass, writes the kubelet's status again if the server's kubelet-owned
// status differs from the cache (drift).
func (e *Engine) Observe(pod *v1.Pod) {
	if pod == nil || pod.UID == "" {
		return
	}
	uid := pod.UID
	if e.cache.opts.Mirrors != nil {
		uid = e.cache.opts.Mirrors.StaticUID(uid)
	}
	cp := pod.DeepCopy()
	e.obsMu.Lock()
	if cur := e.observed[uid]; cur == nil || !olderRV(cp.ResourceVersion, cur.ResourceVersion) {
		e.observed[uid] = cp
	}
	e.obsMu.Unlock()
	e.cache.notify()
}

// olderRV reports whether resource version a is older than b, when both are
// numbers (the API server's are, though clients must not rely on it).
func olderRV(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}

type queued struct {
	e      *entry
	st     *podState
	apiUID types.UID
}

// SyncOnce makes one pass. The fast pass (full false) syncs every pod whose
// cached version is ahead of the API's. The full pass also writes again the
// status of pods whose server copy drifted from the cache, retries
// deletions of finished pods, and forgets the state of pods no longer
// cached. Terminal statuses are synced first.
func (e *Engine) SyncOnce(ctx context.Context, full bool) Result {
	e.syncMu.Lock()
	defer e.syncMu.Unlock()
	now := e.opts.Clock.Now()

	e.obsMu.Lock()
	var observed map[types.UID]*v1.Pod
	if len(e.observed) > 0 {
		observed, e.observed = e.observed, make(map[types.UID]*v1.Pod)
	}
	e.obsMu.Unlock()
	e.pass++

	e.cache.mu.RLock()
	entries := e.entries[:0]
	for _, en := range e.cache.pods {
		entries = append(entries, en)
	}
	e.cache.mu.RUnlock()
	e.entries = entries
	defer clear(e.entries) // hold no finished entries until the next pass

	var queue []queued
	for _, en := range entries {
		st := e.states[en.uid]
		if st == nil {
			st = &podState{}
			e.states[en.uid] = st
		}
		st.pass = e.pass
		st.pending = false
		if pod := observed[en.uid]; pod != nil && (st.server == nil || !olderRV(pod.ResourceVersion, st.server.ResourceVersion)) {
			st.server = pod
		}
		apiUID := en.uid
		if e.cache.opts.Mirrors != nil {
			if m, static := e.cache.opts.Mirrors.MirrorUID(en.uid); static {
				if m == "" {
					continue // no mirror pod yet: nothing to write to
				}
				apiUID = m
			}
		}
		// A pod the server said it does not have is asked for again only
		// when its status changes, or by a full pass once its back-off is
		// over (a 404 from a stale cache in front of the server heals).
		if st.retryAt.After(now) {
			st.pending = st.apiVersion < en.version && st.notFound != en.version
			continue
		}
		if st.notFound == en.version && !full {
			continue
		}
		switch {
		case st.apiVersion < en.version:
		case !full:
			continue
		case canBeDeleted(st.server, en):
		case st.server != nil && (st.server != st.verified || st.verifiedAt != en.version) && e.drifted(st.server, en):
			st.apiVersion = 0
		default:
			st.verified, st.verifiedAt = st.server, en.version
			continue
		}
		queue = append(queue, queued{e: en, st: st, apiUID: apiUID})
	}
	if full {
		// Forget the pods no longer cached.
		for uid, st := range e.states {
			if st.pass != e.pass {
				delete(e.states, uid)
			}
		}
	}
	sort.Slice(queue, func(i, j int) bool {
		ti, tj := podphase.IsTerminal(queue[i].e.status.Phase), podphase.IsTerminal(queue[j].e.status.Phase)
		if ti != tj {
			return ti
		}
		return queue[i].e.uid < queue[j].e.uid
	})

	res := Result{At: now, Attempted: len(queue)}
	for _, q := range queue {
		if ctx.Err() != nil {
			break
		}
		e.syncPod(ctx, q, now, &res)
	}
	if e.opts.Hooks.Pass != nil {
		e.opts.Hooks.Pass(full, res)
	}
	return res
}

// drifted reports whether the server's kubelet-owned status differs from
// what the engine would write over it.
func (e *Engine) drifted(server *v1.Pod, en *entry) bool {
	s := server.Status.DeepCopy()
	Normalize(&en.pod.Spec, s)
	merged := e.cache.opts.Merge(&server.Status, &en.status, e.couldHaveRunningContainers(server, en))
	Normalize(&en.pod.Spec, &merged)
	return !e.cache.opts.EqualByKubelet(s, &merged)
}

func canBeDeleted(pod *v1.Pod, en *entry) bool {
	return pod != nil && pod.DeletionTimestamp != nil && !IsMirror(pod) && podphase.IsTerminal(pod.Status.Phase) && en.finished
}

func (e *Engine) couldHaveRunningContainers(server *v1.Pod, en *entry) bool {
	if e.opts.DeletionSafety != nil {
		return e.opts.DeletionSafety.PodCouldHaveRunningContainers(server)
	}
	if en.finished {
		return false
	}
	for _, list := range [...][]v1.ContainerStatus{en.status.InitContainerStatuses, en.status.ContainerStatuses, en.status.EphemeralContainerStatuses} {
		for i := range list {
			if list[i].State.Terminated == nil {
				return true
			}
		}
	}
	return false
}

func (e *Engine) request(verb string, err error) {
	if e.opts.Hooks.Request != nil {
		e.opts.Hooks.Request(verb, err)
	}
}

func (e *Engine) fail(st *podState, en *entry, now time.Time, res *Result) {
	res.Failed++
	st.pending = st.apiVersion < en.version && st.notFound != en.version
	st.failures++
	d := e.opts.RetryInitial
	for i := 1; i < st.failures && d < e.opts.RetryMax; i++ {
		d *= 2
	}
	st.retryAt = now.Add(min(d, e.opts.RetryMax))
}

// recreated reports whether a patch error says that the pod under this name
// has another UID: the API server's 422 on metadata.uid.
func recreated(err error) bool {
	var se apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &se) || se.Status().Details == nil {
		return false
	}
	for _, c := range se.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

func (e *Engine) syncPod(ctx context.Context, q queued, now time.Time, res *Result) {
	en, st := q.e, q.st
	// A finished pod is read first unless its known copy is deleting:
	// whether it may be deleted depends on a deletionTimestamp that another
	// writer set, which the engine's own writes do not show.
	useBase := e.opts.NoGet && st.server != nil && st.server.UID == q.apiUID &&
		!(en.finished && st.server.DeletionTimestamp == nil)
	conflicts := 0
	for {
		server := st.server
		if !useBase {
			pod, err := e.transport.GetPod(ctx, en.namespace, en.name)
			e.request("get", err)
			if apierrors.IsNotFound(err) {
				st.notFound = en.version
				e.fail(st, en, now, res)
				return
			}
			if err != nil {
				e.fail(st, en, now, res)
				return
			}
			translated := pod.UID
			if e.cache.opts.Mirrors != nil {
				translated = e.cache.opts.Mirrors.StaticUID(pod.UID)
			}
			if translated != en.uid {
				// The pod was deleted and recreated under the same name.
				e.cache.remove(en.uid, en)
				delete(e.states, en.uid)
				res.Dropped++
				return
			}
			server = pod
		}
		merged := e.cache.opts.Merge(&server.Status, &en.status, e.couldHaveRunningContainers(server, en))
		// The patch carries the resourceVersion of the copy it was computed
		// against, so a write stored late cannot overwrite a newer one.
		patch, unchanged, err := Patch(server.UID, server.ResourceVersion, &server.Status, &merged)
		if err != nil {
			e.fail(st, en, now, res)
			return
		}
		written := server
		if !unchanged {
			if e.opts.Hooks.PatchBytes != nil {
				e.opts.Hooks.PatchBytes(len(patch))
			}
			written, err = e.transport.PatchPodStatus(ctx, en.namespace, en.name, patch)
			e.request("patch", err)
			switch {
			case err == nil:
			case apierrors.IsConflict(err) && conflicts == 0:
				conflicts++
				useBase = false // the server moved on: read it and try again
				continue
			case recreated(err):
				e.cache.remove(en.uid, en)
				delete(e.states, en.uid)
				res.Dropped++
				return
			case apierrors.IsNotFound(err):
				st.notFound, st.server = en.version, nil
				e.fail(st, en, now, res)
				return
			default:
				// The write may have been stored (a lost answer, a
				// timeout): the known copy is no base for the next patch.
				st.server = nil
				e.fail(st, en, now, res)
				return
			}
		}
		e.done(ctx, q, written, now, res)
		return
	}
}

// done records a version that reached the server and deletes the pod when
// it is finished.
func (e *Engine) done(ctx context.Context, q queued, written *v1.Pod, now time.Time, res *Result) {
	en, st := q.e, q.st
	st.server, st.apiVersion, st.failures, st.retryAt, st.notFound = written, en.version, 0, time.Time{}, 0
	// The answer holds what was just merged from this version, unless
	// another writer changed a kubelet-owned field between the read and the
	// write: then the next full pass writes it again.
	st.verified, st.verifiedAt = nil, 0
	if !e.drifted(written, en) {
		st.verified, st.verifiedAt = written, en.version
	}
	res.Synced++
	if e.opts.Hooks.Synced != nil && !en.at.IsZero() {
		e.opts.Hooks.Synced(en.uid, en.version, now.Sub(en.at))
	}
	e.cache.synced(en.uid, en.version)
	if !canBeDeleted(written, en) {
		return
	}
	err := e.transport.DeletePod(ctx, en.namespace, en.name, written.UID)
	e.request("delete", err)
	if err != nil && !apierrors.IsNotFound(err) {
		e.fail(st, en, now, res)
		return
	}
	e.cache.remove(en.uid, nil)
	delete(e.states, en.uid)
	res.Deleted++
}

// Run syncs until ctx ends: a fast pass on every change signalled by the
// cache and when a pod's retry back-off ends, a full pass every
// FullSyncPeriod. It returns ctx.Err() and leaves no goroutine behind.
func (e *Engine) Run(ctx context.Context) error {
	ticker := e.opts.Clock.NewTicker(e.opts.FullSyncPeriod)
	defer ticker.Stop()
	var retry clock.Timer
	for {
		var retryC <-chan time.Time
		if retry != nil {
			retryC = retry.C()
		}
		select {
		case <-ctx.Done():
			if retry != nil {
				retry.Stop()
			}
			return ctx.Err()
		case <-e.cache.Changed():
			e.SyncOnce(ctx, false)
		case <-ticker.C():
			e.SyncOnce(ctx, true)
		case <-retryC:
			retry = nil
			e.SyncOnce(ctx, false)
		}
		if next, ok := e.nextRetry(); ok {
			if retry != nil {
				retry.Stop()
			}
			retry = e.opts.Clock.NewTimer(max(next.Sub(e.opts.Clock.Now()), 0))
		}
	}
}

// nextRetry returns the earliest end of a pod's retry back-off.
func (e *Engine) nextRetry() (time.Time, bool) {
	e.syncMu.Lock()
	defer e.syncMu.Unlock()
	now := e.opts.Clock.Now()
	var next time.Time
	for _, st := range e.states {
		// Only a back-off a fast pass ends wakes Run, and only once: a pod
		// that waits for the full pass (a 404, a failed deletion) or whose
		// back-off has passed does not.
		if st.pending && st.retryAt.After(now) && (next.IsZero() || st.retryAt.Before(next)) {
			next = st.retryAt
		}
	}
	return next, !next.IsZero()
}
