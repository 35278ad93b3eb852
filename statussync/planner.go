package statussync

import (
	"errors"
	"slices"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/podphase"
)

// PlannerOptions configures a Planner. Start from [DefaultPlannerOptions]:
// zero retry periods are refused, not defaulted.
type PlannerOptions struct {
	// NoGet patches without reading the pod first when the planner knows
	// the server's copy (from its last write, a GET or Observe). A conflict
	// falls back to a GET. Off is the kubelet's GET-then-PATCH.
	NoGet bool
	// RetryInitial and RetryMax bound the per-pod back-off after a failed
	// request (1s doubling to 1m by default).
	RetryInitial, RetryMax time.Duration
	// DeletionSafety says whether a pod's containers could still run. Nil
	// uses the cached status: a pod the cache has not finished (see
	// Cache.TerminatePod) could run containers while any container status
	// is not Terminated.
	DeletionSafety DeletionSafety
}

// DefaultPlannerOptions returns the settings of [DefaultEngineOptions]:
// GET before PATCH, back-off from 1s doubling to 1m.
func DefaultPlannerOptions() PlannerOptions {
	return PlannerOptions{RetryInitial: time.Second, RetryMax: time.Minute}
}

func (o *PlannerOptions) validate() error {
	switch {
	case o.RetryInitial <= 0:
		return optionError("Planner.RetryInitial", o.RetryInitial.String(), "must be positive")
	case o.RetryMax < o.RetryInitial:
		return optionError("Planner.RetryMax", o.RetryMax.String(), "must be at least RetryInitial ("+o.RetryInitial.String()+")")
	}
	return nil
}

// podState is what the planner knows of one pod's API object.
type podState struct {
	apiUID     types.UID // the API object the rest is about
	apiVersion uint64    // last cache version the API holds
	server     *v1.Pod   // the server's copy as last seen
	notFound   uint64    // version for which the pod was not found
	failures   int
	retryAt    time.Time
	pending    bool // a fast pass syncs it once retryAt has passed
	// verified is the server copy last found to hold version verifiedAt of
	// the cache, so that a full pass compares each copy only once.
	verified   *v1.Pod
	verifiedAt uint64
	pass       uint64 // the last pass that saw the pod cached
}

type queued struct {
	e      *entry
	st     *podState
	apiUID types.UID
}

// syncing is the pod a pass is working on.
type syncing struct {
	queued
	noGet     bool // patch against st.server without a GET
	conflicts int
	req       Request
	waiting   bool // req is out, Done not called yet
}

// Planner decides what an Engine asks the API server, without a transport
// or a clock, the way raft's RawNode holds the logic of a raft Node: it owns
// the per-pod sync state (what the server holds, its last copy, back-off)
// and answers two questions, "which request now" ([Planner.Next]) and
// "this request ended like this" ([Planner.Done]); time is an argument.
// A pass is
//
//	p.Begin(now, full)
//	for {
//		req, ok := p.Next()
//		if !ok {
//			break
//		}
//		pod, err := call(req) // GetPod, PatchPodStatus or DeletePod
//		p.Done(now, pod, err)
//	}
//	result := p.End()
//
// It reads the cache's statuses at Begin and tells the cache when a version
// reached the server or a pod was deleted or recreated. A Planner is not
// safe for concurrent use: one owner drives it. The zero value plans
// nothing; use [NewPlanner].
type Planner struct {
	cache    *Cache
	opts     PlannerOptions
	states   map[types.UID]*podState
	observed map[types.UID]*v1.Pod
	// waited are the pods observed before the cache had them whose
	// observation a full pass kept for later; the next full pass that still
	// finds them uncached drops it.
	waited  map[types.UID]bool
	pass    uint64
	entries []*entry // the pass's snapshot, reused
	queue   []queued
	next    int
	cur     *syncing
	res     Result
	out     Outcome
}

// NewPlanner returns a planner for the statuses of cache. It returns an
// error wrapping ErrInvalidOptions for a nil cache or invalid options.
func NewPlanner(opts PlannerOptions, cache *Cache) (*Planner, error) {
	if cache == nil || cache.pods == nil {
		return nil, optionError("cache", "nil", "must be a Cache from NewCache")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Planner{cache: cache, opts: opts, states: make(map[types.UID]*podState)}, nil
}

// Observe gives the planner a pod as the API server has it, typically from
// a watch; it takes effect at the next Begin. The planner uses it as the
// base of its next patch and, in a full pass, writes the kubelet's status
// again if the server's kubelet-owned status differs (drift). The planner
// keeps pod; the caller must not change it afterwards. A nil pod or one
// without a UID is ignored.
func (p *Planner) Observe(pod *v1.Pod) {
	if p.cache == nil || pod == nil || pod.UID == "" {
		return
	}
	uid := p.cache.staticUID(pod.UID)
	if p.observed == nil {
		p.observed = make(map[types.UID]*v1.Pod)
	}
	if cur := p.observed[uid]; cur == nil || !olderRV(pod.ResourceVersion, cur.ResourceVersion) {
		p.observed[uid] = pod
	}
}

// olderRV reports whether resource version a is older than b, when both are
// numbers (the API server's are, though clients must not rely on it).
func olderRV(a, b string) bool {
	if a == "" || b == "" {
		return false // unknown, and no error to allocate
	}
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}

// Begin starts a pass at now. The fast pass (full false) syncs every pod
// whose cached version is ahead of the API's and whose back-off is over.
// The full pass also writes again the status of pods whose server copy
// drifted from the cache, retries deletions of finished pods, asks again
// for pods the server did not have, and forgets the state of pods no
// longer cached. Terminal statuses go first. A pass not ended is abandoned.
func (p *Planner) Begin(now time.Time, full bool) {
	if p.cache == nil {
		return
	}
	p.reset()
	p.pass++
	p.res = Result{At: now}
	observed := p.observed
	p.observed = nil

	p.cache.mu.RLock()
	entries := p.entries[:0]
	for _, en := range p.cache.pods {
		entries = append(entries, en)
	}
	p.cache.mu.RUnlock()
	p.entries = entries

	queue := p.queue[:0]
	for _, en := range entries {
		st := p.states[en.uid]
		if st == nil {
			st = &podState{}
			p.states[en.uid] = st
		}
		st.pass, st.pending = p.pass, false
		apiUID := en.uid
		if p.cache.opts.Mirrors != nil {
			if m, static := p.cache.opts.Mirrors.MirrorUID(en.uid); static {
				if m == "" {
					continue // no mirror pod yet: nothing to write to
				}
				apiUID = m
			}
		}
		if st.apiUID != apiUID {
			// Another API object (a recreated mirror pod): what the server
			// holds is known of none of it. The kubelet keys its synced
			// versions by mirror pod UID for the same reason.
			*st = podState{apiUID: apiUID, pass: p.pass}
		}
		if pod := observed[en.uid]; pod != nil {
			if st.server == nil || !olderRV(pod.ResourceVersion, st.server.ResourceVersion) {
				st.server = pod
			}
			delete(observed, en.uid)
			delete(p.waited, en.uid)
		}
		if st.retryAt.After(now) {
			st.pending = st.apiVersion < en.version && st.notFound != en.version
			continue
		}
		// A pod the server said it does not have is asked for again only
		// when its status changes, or by a full pass once its back-off is
		// over (a 404 from a stale cache in front of the server heals).
		if st.notFound == en.version && !full {
			continue
		}
		switch {
		case st.apiVersion < en.version:
		case !full:
			continue
		case canBeDeleted(st.server, en):
		case st.server != nil && (st.server != st.verified || st.verifiedAt != en.version) && p.drifted(st.server, en):
			st.apiVersion = 0
		default:
			st.verified, st.verifiedAt = st.server, en.version
			continue
		}
		queue = append(queue, queued{e: en, st: st, apiUID: apiUID})
	}
	p.keepEarly(observed, full)
	if full {
		for uid, st := range p.states {
			if st.pass != p.pass {
				delete(p.states, uid)
			}
		}
	}
	slices.SortFunc(queue, func(a, b queued) int {
		ta, tb := podphase.IsTerminal(a.e.status.Phase), podphase.IsTerminal(b.e.status.Phase)
		switch {
		case ta && !tb:
			return -1
		case tb && !ta:
			return 1
		case a.e.uid < b.e.uid:
			return -1
		case a.e.uid > b.e.uid:
			return 1
		}
		return 0
	})
	p.queue = queue
	p.res.Attempted = len(queue)
}

// keepEarly keeps for the next pass the observations of pods the cache does
// not have yet (a watch delivers a pod before its first status is set), so
// that the first patch needs no GET. A full pass that finds such a pod still
// uncached the second time drops its observation: a pod that never gets a
// status holds no memory for long.
func (p *Planner) keepEarly(early map[types.UID]*v1.Pod, full bool) {
	for uid, pod := range early {
		if full {
			if p.waited[uid] {
				delete(p.waited, uid)
				continue
			}
			if p.waited == nil {
				p.waited = make(map[types.UID]bool)
			}
			p.waited[uid] = true
		}
		p.Observe(pod)
	}
}

// reset forgets the pass in progress and the entries it held.
func (p *Planner) reset() {
	clear(p.entries)
	clear(p.queue)
	p.queue, p.next, p.cur = p.queue[:0], 0, nil
}

// Next returns the next request of the pass, the same one until Done is
// called for it, and false when the pass has nothing more to ask.
func (p *Planner) Next() (Request, bool) {
	for {
		if s := p.cur; s != nil && s.waiting {
			return s.req, true
		}
		p.cur = nil
		if p.next >= len(p.queue) {
			return Request{}, false
		}
		q := p.queue[p.next]
		p.next++
		en, st := q.e, q.st
		// A finished pod is read first unless its known copy is deleting:
		// whether it may be deleted depends on a deletionTimestamp another
		// writer set, which the planner's own writes do not show.
		s := &syncing{queued: q, noGet: p.opts.NoGet && st.server != nil && st.server.UID == q.apiUID &&
			!(en.finished && st.server.DeletionTimestamp == nil)}
		p.cur = s
		p.out = Outcome{}
		if s.noGet {
			p.patch(s, st.server, p.res.At)
		} else {
			p.ask(s, VerbGet, nil)
		}
	}
}

func (p *Planner) ask(s *syncing, verb Verb, patch []byte) {
	s.req = Request{Verb: verb, Namespace: s.e.namespace, Name: s.e.name, UID: s.apiUID, Patch: patch, Pod: s.e.uid, Version: s.e.version}
	s.waiting = true
}

// Done reports how the request Next returned ended at now: the pod the
// server answered (for a GET or a PATCH; nil otherwise) and the error, an
// apimachinery StatusError for the server's answers. It returns what the
// request meant for its pod. A Done without a request out does nothing.
func (p *Planner) Done(now time.Time, pod *v1.Pod, err error) Outcome {
	s := p.cur
	if s == nil || !s.waiting {
		return Outcome{}
	}
	s.waiting = false
	p.out = Outcome{}
	en, st := s.e, s.st
	if err == nil && pod == nil && s.req.Verb != VerbDelete {
		err = errNoPod
	}
	switch s.req.Verb {
	case VerbGet:
		switch {
		case apierrors.IsNotFound(err):
			st.notFound = en.version
			p.fail(s, now)
		case err != nil:
			p.fail(s, now)
		case p.cache.staticUID(pod.UID) != en.uid:
			p.drop(s) // deleted and recreated under the same name
		default:
			p.patch(s, pod, now)
		}
	case VerbPatch:
		switch {
		case err == nil:
			p.synced(s, pod, now)
		case apierrors.IsConflict(err) && s.conflicts == 0:
			s.conflicts++ // the server moved on: read it and try again
			s.noGet = false
			p.ask(s, VerbGet, nil)
		case recreated(err):
			p.drop(s)
		case apierrors.IsNotFound(err):
			st.notFound, st.server = en.version, nil
			p.fail(s, now)
		default:
			// The write may have been stored (a lost answer, a timeout):
			// the known copy is no base for the next patch, and whether the
			// server holds this version is unknown, so the pod is read and
			// written again after its back-off. Without this, a finished pod
			// whose conditional patch failed this way counted as synced, was
			// never read again, and its deletion was never seen.
			st.server = nil
			st.apiVersion = 0
			p.fail(s, now)
		}
	case VerbDelete:
		if err != nil && !apierrors.IsNotFound(err) {
			p.fail(s, now)
			break
		}
		p.cache.remove(en.uid, nil)
		delete(p.states, en.uid)
		p.res.Deleted++
		p.out.Deleted = true
	}
	return p.out
}

var errNoPod = errors.New("no pod in the answer")

// patch computes the patch from server's copy to the merged status and asks
// for it, or records the version as synced when there is nothing to send.
func (p *Planner) patch(s *syncing, server *v1.Pod, now time.Time) {
	en := s.e
	merged := p.cache.opts.Merge(&server.Status, &en.status, p.couldHaveRunningContainers(server, en))
	// The patch carries the resourceVersion of the copy it was computed
	// against, so a write stored late cannot overwrite a newer one.
	patch, unchanged, err := Patch(server.UID, server.ResourceVersion, &server.Status, &merged)
	switch {
	case err != nil:
		p.fail(s, now)
	case unchanged && s.noGet:
		// Nothing to change against a copy the server has not confirmed:
		// another writer may have changed the pod since (without a watch,
		// nothing says so). A patch of the preconditions alone is a
		// conditional read: the server answers 409 if the copy is stale.
		s.noGet = false
		p.ask(s, VerbPatch, patch)
	case unchanged:
		p.synced(s, server, now)
	default:
		p.ask(s, VerbPatch, patch)
	}
}

// synced records that the server holds en's version in written, and asks
// for the deletion of a finished pod.
func (p *Planner) synced(s *syncing, written *v1.Pod, now time.Time) {
	en, st := s.e, s.st
	st.server, st.apiVersion, st.failures, st.retryAt, st.notFound = written, en.version, 0, time.Time{}, 0
	// The answer holds what was just merged from this version, unless
	// another writer changed a kubelet-owned field between the read and the
	// write: then the next full pass writes again.
	st.verified, st.verifiedAt = nil, 0
	if !p.drifted(written, en) {
		st.verified, st.verifiedAt = written, en.version
	}
	p.res.Synced++
	p.out.Synced, p.out.Since = true, en.at
	p.cache.synced(en.uid, en.version)
	if canBeDeleted(written, en) {
		p.ask(s, VerbDelete, nil)
	}
}

func (p *Planner) drop(s *syncing) {
	p.cache.remove(s.e.uid, s.e)
	delete(p.states, s.e.uid)
	p.res.Dropped++
	p.out.Dropped = true
}

func (p *Planner) fail(s *syncing, now time.Time) {
	st, en := s.st, s.e
	p.res.Failed++
	st.failures++
	d := p.opts.RetryInitial
	for i := 1; i < st.failures && d < p.opts.RetryMax; i++ {
		if d > p.opts.RetryMax/2 {
			d = p.opts.RetryMax // doubling would pass the maximum, or overflow
			break
		}
		d *= 2
	}
	st.retryAt = now.Add(min(d, p.opts.RetryMax))
	st.pending = st.apiVersion < en.version && st.notFound != en.version
	p.out.Failed, p.out.RetryAt = true, st.retryAt
}

// End ends the pass and returns what it did. Pods the pass did not reach
// (the caller stopped early) keep their state and are synced by a later
// pass.
func (p *Planner) End() Result {
	res := p.res
	p.reset()
	p.res = Result{}
	return res
}

// NextWake returns the earliest time after now at which a fast pass will
// have work because a pod's back-off ends, and false when there is none.
// Pods that wait for a full pass (a 404, a failed deletion) do not count,
// nor do back-offs that ended already, so a runner that sleeps until
// NextWake wakes at most once per back-off.
func (p *Planner) NextWake(now time.Time) (time.Time, bool) {
	var next time.Time
	for _, st := range p.states {
		if st.pending && st.retryAt.After(now) && (next.IsZero() || st.retryAt.Before(next)) {
			next = st.retryAt
		}
	}
	return next, !next.IsZero()
}

// drifted reports whether the server's kubelet-owned status differs from
// what the planner would write over it.
func (p *Planner) drifted(server *v1.Pod, en *entry) bool {
	s := server.Status.DeepCopy()
	Normalize(&en.pod.Spec, s)
	merged := p.cache.opts.Merge(&server.Status, &en.status, p.couldHaveRunningContainers(server, en))
	Normalize(&en.pod.Spec, &merged)
	return !p.cache.opts.EqualByKubelet(s, &merged)
}

func canBeDeleted(pod *v1.Pod, en *entry) bool {
	return pod != nil && pod.DeletionTimestamp != nil && !IsMirror(pod) && podphase.IsTerminal(pod.Status.Phase) && en.finished
}

func (p *Planner) couldHaveRunningContainers(server *v1.Pod, en *entry) bool {
	if p.opts.DeletionSafety != nil {
		return p.opts.DeletionSafety.PodCouldHaveRunningContainers(server)
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
