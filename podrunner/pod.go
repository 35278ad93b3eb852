package podrunner

import (
	"errors"
	"slices"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	v1 "k8s.io/api/core/v1"
)

// podEntry is one pod on the runner: its newest API object, its machine
// and runtime, and when it is next due. Owned by the goroutine that calls
// Advance.
type podEntry struct {
	api    *v1.Pod
	m      *podlifecycle.Machine
	rt     Runtime
	res    podlifecycle.Result
	ip     string
	ipPool *ipPool // the pool ip came from
	seq    uint64  // the order pods were added in
	told   int     // how many of the node's images the machine was told of

	wake time.Time // when it is next due; zero: nothing due
	hidx int       // index in the wake heap, -1 when not in it

	nextSync time.Time // the machine's NextSync
	changed  bool      // an update (or the first sync) to hand the machine
	notified bool      // its runtime has news (Notify)
	started  bool      // the machine stepped once
	finished bool      // the machine is finished (or the pod was rejected)
	removed  bool      // the API server no longer has it

	accepted *v1.Pod   // the API object the machine last took
	lastStep time.Time // when it last synced
	atOnce   int       // syncs at lastStep
	stepped  time.Time // when the machine last took a step: no observation may be older

	retry      []podlifecycle.Action // actions a refused Do is to be handed again, and those queued behind them
	retryAt    time.Time
	retryDelay time.Duration

	obs  []podlifecycle.Observation // the runtime's observations for the next step, reused
	imgs []podlifecycle.Observation // the same behind the node's new images, reused

	// held are changes the runtime reported that answer no action of the
	// runner's, waiting for the relist that sees them (Options.RelistPeriod).
	held []podlifecycle.Observation
	// answers are the answers to a sync's calls, waiting for its relist on
	// demand at answersAt (Options.OnDemandRelistDelay), which takes them
	// with every held change up to then.
	answers   []podlifecycle.Observation
	answersAt time.Time
	// killing are the container IDs with a KillContainer in flight, and
	// sandboxKill a KillSandbox: the exits that answer them are not held.
	killing     []string
	sandboxKill bool
}

// sync does what is due for p at now: hands a refused batch of actions to
// the runtime again, collects what the runtime observed, steps the machine
// when a trigger holds (see the package doc) and carries the result out.
func (r *Runner) sync(p *podEntry, now time.Time) {
	if p.lastStep.Equal(now) {
		p.atOnce++
	} else {
		p.lastStep, p.atOnce = now, 1
	}
	if p.atOnce > r.opts.MaxSyncsPerInstant {
		r.log.Info("pod syncs without progress; waiting", "pod", klog(p.api), "syncs", p.atOnce-1, "wait", r.opts.StallDelay)
		r.count(func(s *Stats) { s.Stalls++ })
		p.atOnce = 0
		r.heap.set(p, now.Add(r.opts.StallDelay))
		return
	}
	if len(p.retry) > 0 && !now.Before(p.retryAt) {
		r.retry(p, now)
	}
	news := r.observe(p, now)
	due := news || p.changed || !p.started || (!p.nextSync.IsZero() && !now.Before(p.nextSync))
	p.notified = false
	if !due {
		r.heap.set(p, r.wakeOf(p, now))
		return
	}
	obs := r.withImages(p)
	if err := r.step(p, now, obs); err != nil {
		// The pod the machine refused is an update it cannot take (one
		// that changed the containers); the runner goes on with the last
		// one it took.
		r.log.Error(err, "pod update refused; keeping the pod last accepted", "pod", klog(p.api))
		r.count(func(s *Stats) { s.StepErrors++ })
		if p.accepted != nil && p.api != p.accepted {
			p.api = p.accepted
		} else {
			p.changed = false
			p.obs = p.obs[:0]
			r.heap.set(p, earliest(now.Add(r.opts.StallDelay), r.wakeOf(p, now)))
		}
		return
	}
	p.obs = p.obs[:0]
	p.accepted = p.api
	p.changed, p.started, p.nextSync = false, true, p.res.NextSync
	res := &p.res
	if h := r.opts.Hooks.Synced; h != nil {
		h(now, p.api, obs, res)
	}
	if len(res.Actions) > 0 {
		r.do(p, now, res.Actions)
	}
	for i := range res.Events {
		e := &res.Events[i]
		r.rec.Event(e.Reference(p.api), e.Type, e.Reason, e.Message)
	}
	for i := range res.Statuses {
		st := &res.Statuses[i]
		r.setHostIPs(p.api, st)
		if _, _, err := r.cache.SetPodStatus(p.api, *st, now); err != nil {
			r.log.Error(err, "pod status refused", "pod", klog(p.api))
			r.count(func(s *Stats) { s.StatusErrors++ })
		}
	}
	// The cache keeps copies: these may go now rather than at the next
	// step, which for a settled pod may be far off.
	clear(res.Statuses)
	res.Statuses = res.Statuses[:0]
	if res.Finished {
		r.finish(p, now)
		return
	}
	r.heap.set(p, r.wakeOf(p, now))
}

// step hands obs to the machine. An observation the machine refuses is
// dropped, logged and counted, and the step is tried again with the rest
// of the batch; any other refusal is returned.
func (r *Runner) step(p *podEntry, now time.Time, obs []podlifecycle.Observation) error {
	for {
		err := p.m.StepTo(now, p.api, obs, &p.res)
		if err == nil {
			p.stepped = now
			r.count(func(s *Stats) { s.Steps++ })
			return nil
		}
		var ie *podlifecycle.InputError
		if !errors.As(err, &ie) || ie.Index < 0 || ie.Index >= len(obs) {
			return err
		}
		r.log.Error(err, "observation dropped", "pod", klog(p.api), "observation", obs[ie.Index].Kind.String(),
			"container", obs[ie.Index].Container)
		r.count(func(s *Stats) { s.DroppedObservations++ })
		obs = append(obs[:ie.Index], obs[ie.Index+1:]...)
	}
}

// do hands actions to the runtime. While an earlier batch the runtime
// refused waits for its retry, later actions queue behind it, so the
// runtime always gets them in order.
func (r *Runner) do(p *podEntry, now time.Time, actions []podlifecycle.Action) {
	if len(p.retry) > 0 {
		p.retry = append(p.retry, actions...)
		return
	}
	p.track(actions)
	if err := p.rt.Do(now, actions); err != nil {
		p.retry = append(p.retry[:0], actions...)
		r.refused(p, now, err)
	}
}

// track records the kills among actions, whose answers are taken at once.
func (p *podEntry) track(actions []podlifecycle.Action) {
	for i := range actions {
		switch a := &actions[i]; a.Kind {
		case podlifecycle.KillContainer:
			p.killing = append(p.killing, a.ContainerID)
		case podlifecycle.KillSandbox:
			p.sandboxKill = true
		}
	}
}

// spontaneous reports whether o is a change no action of the runner's
// asked for (an exit without a kill, a container lost, a sandbox that
// died without a KillSandbox), which the kubelet learns of at its next
// relist; an exit that answers a kill is taken off the kills in flight.
func (p *podEntry) spontaneous(o *podlifecycle.Observation) bool {
	switch o.Kind {
	case podlifecycle.ContainerExited:
		if p.sandboxKill {
			return false
		}
		for i, id := range p.killing {
			if id == o.ContainerID {
				p.killing = append(p.killing[:i], p.killing[i+1:]...)
				return false
			}
		}
		return true
	case podlifecycle.ContainerUnknown:
		return true
	case podlifecycle.SandboxNotReady:
		if p.sandboxKill {
			p.sandboxKill = false
			return false
		}
		return true
	}
	return false
}

// relistAt is the first relist at or after t: the relists run every
// Options.RelistPeriod from the runner's first Advance.
func (r *Runner) relistAt(t time.Time) time.Time {
	period := r.opts.RelistPeriod
	if period <= 0 || !t.After(r.epoch) {
		return t
	}
	n := (t.Sub(r.epoch) + period - 1) / period
	return r.epoch.Add(n * period)
}

// release moves the held changes a relist at or before now has seen into
// p.obs, in the order they happened.
func (r *Runner) release(p *podEntry, now time.Time) {
	kept := p.held[:0]
	for _, o := range p.held {
		if r.relistAt(o.At).After(now) {
			kept = append(kept, o)
			continue
		}
		if o.At.Before(p.stepped) {
			o.At = p.stepped // a step (a probe's, say) came in between
		}
		p.obs = append(p.obs, o)
	}
	clear(p.held[len(kept):])
	p.held = kept
}

// nextRelease is when the earliest held change is seen, or zero.
func (r *Runner) nextRelease(p *podEntry) time.Time {
	var t time.Time
	for i := range p.held {
		t = earliest(t, r.relistAt(p.held[i].At))
	}
	return t
}

// retry hands the refused actions to the runtime again.
func (r *Runner) retry(p *podEntry, now time.Time) {
	if err := p.rt.Do(now, p.retry); err != nil {
		r.refused(p, now, err)
		return
	}
	clear(p.retry)
	p.retry, p.retryAt, p.retryDelay = p.retry[:0], time.Time{}, 0
}

// refused schedules the retry of a batch the runtime refused with err.
func (r *Runner) refused(p *podEntry, now time.Time, err error) {
	if p.retryDelay == 0 {
		p.retryDelay = r.opts.RuntimeRetry
	} else {
		p.retryDelay = min(2*p.retryDelay, r.opts.RuntimeRetryMax)
	}
	p.retryAt = now.Add(p.retryDelay)
	r.log.Error(err, "runtime refused the actions; trying again", "pod", klog(p.api), "actions", len(p.retry), "after", p.retryDelay)
	r.count(func(s *Stats) { s.RuntimeErrors++ })
}

// observe collects what the runtime observed of p up to now, with the
// pod's IP in a ready sandbox that reported none and each time kept within
// what the machine accepts, into p.obs after what p's earlier stall left
// there. It reports whether there was any.
func (r *Runner) observe(p *podEntry, now time.Time) bool {
	n := len(p.obs)
	r.release(p, now)
	for _, o := range p.rt.Due(now) {
		switch o.Kind {
		case podlifecycle.SandboxReady:
			if o.IP == "" && p.ip != "" {
				o.IP = p.ip
			}
		case podlifecycle.ImagePulled:
			img := o.Image
			if img == "" {
				img = containerImage(p.api, o.Container)
			}
			r.pulled(p, img, o.Size)
		case podlifecycle.ContainerCreated:
			if o.ImageRef != "" {
				r.imageRef(containerImage(p.api, o.Container), o.ImageRef)
			}
		}
		// A runtime on a clock of its own may stamp a report a little
		// ahead of now, or behind a step already taken.
		if o.At.After(now) {
			o.At = now
		} else if !o.At.IsZero() && o.At.Before(p.stepped) {
			o.At = p.stepped
		}
		if p.spontaneous(&o) {
			if r.relistAt(o.At).After(now) {
				p.held = append(p.held, o)
				continue
			}
		} else if relisted(o.Kind) {
			if p.answersAt.IsZero() {
				// A periodic relist before the one on demand serves it.
				at := o.At
				if at.IsZero() {
					at = now
				}
				p.answersAt = earliest(at.Add(r.opts.OnDemandRelistDelay), r.relistAt(at))
			}
			if p.answersAt.After(now) {
				p.answers = append(p.answers, o)
				continue
			}
		}
		p.obs = append(p.obs, o)
	}
	if !p.answersAt.IsZero() && !now.Before(p.answersAt) {
		// The relist on demand that follows a sync that acted sees every
		// change up to it: a container that exited as soon as it started
		// is seen exited, never running. The changes go in time order, an
		// answer before a change at the same time: the answers held for
		// it go first, this call's in the order they came.
		for i := range p.answers {
			if p.answers[i].At.Before(p.stepped) {
				p.answers[i].At = p.stepped // a step (a probe's, say) came in between
			}
		}
		p.obs = slices.Insert(p.obs, n, p.answers...)
		clear(p.answers)
		p.answers, p.answersAt = p.answers[:0], time.Time{}
		kept := p.held[:0]
		for _, o := range p.held {
			if o.At.After(now) {
				kept = append(kept, o)
				continue
			}
			if o.At.Before(p.stepped) {
				o.At = p.stepped
			}
			p.obs = append(p.obs, o)
		}
		clear(p.held[len(kept):])
		p.held = kept
		slices.SortStableFunc(p.obs[n:], func(a, b podlifecycle.Observation) int { return a.At.Compare(b.At) })
	}
	return len(p.obs) > 0 || n > 0
}

// relisted reports whether an answer of kind k is taken at the relist on
// demand after the sync that made the call: a container's creation, start
// or stop, a hook's end, a sandbox's creation or stop.
func relisted(k podlifecycle.ObservationKind) bool {
	switch k {
	case podlifecycle.ContainerCreated, podlifecycle.ContainerStarted, podlifecycle.ContainerExited,
		podlifecycle.HookResult, podlifecycle.SandboxReady, podlifecycle.SandboxNotReady:
		return true
	}
	return false
}

// finish ends a pod whose machine is finished: its final status into the
// cache (TerminatePod) unless the API server no longer has it, its IP
// back, and a removed pod forgotten.
func (r *Runner) finish(p *podEntry, now time.Time) {
	p.finished = true
	if p.hidx >= 0 {
		r.heap.remove(p)
	}
	r.releaseIP(p)
	r.count(func(s *Stats) { s.Finished++; s.Running-- })
	if p.removed {
		r.forget(p)
	} else if err := r.cache.TerminatePod(p.api, now); err != nil {
		r.log.Error(err, "terminate pod", "pod", klog(p.api))
		r.count(func(s *Stats) { s.StatusErrors++ })
	}
	if h := r.opts.Hooks.Finished; h != nil {
		h(now, p.api)
	}
}

// wakeOf is when p is next due after a sync at now: the earliest of the
// machine's next sync, the runtime's next report and a retry of refused
// actions; now when it was notified or changed meanwhile.
func (r *Runner) wakeOf(p *podEntry, now time.Time) time.Time {
	if p.finished {
		return time.Time{}
	}
	if p.changed || p.notified {
		return now
	}
	w := earliest(p.nextSync, p.rt.Next())
	if len(p.retry) > 0 {
		w = earliest(w, p.retryAt)
	}
	if len(p.held) > 0 {
		w = earliest(w, r.nextRelease(p))
	}
	return earliest(w, p.answersAt)
}

// earliest returns the earlier of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
