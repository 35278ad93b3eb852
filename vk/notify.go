package vk

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/statussync"
)

// NotifyPods registers virtual-kubelet's callback for pod statuses. From
// then on the provider calls it, from one goroutine, with the pod each time
// the cached status of a pod it runs has a new version (at most once per
// version; versions that came in between are covered by the newest), and
// again at a full sync when the API server's copy drifted from the node's.
// The pod handed is the API server's copy (the informer's) with the node's
// status merged over it as the kubelet merges it (others' conditions kept,
// a terminal phase held back while containers could still run). A status
// that was cached before the callback was registered is sent then. It does
// not block.
func (p *Provider) NotifyPods(_ context.Context, cb func(*v1.Pod)) {
	if !p.ready() || cb == nil {
		return
	}
	p.mu.Lock()
	p.notifyPod = cb
	p.mu.Unlock()
	kick(p.podKick)
}

// notifyLoop hands new status versions to virtual-kubelet when the cache
// changes, deletes finished pods once the API server shows their final
// status, and every FullSyncPeriod does both for every pod.
func (p *Provider) notifyLoop(ctx context.Context) {
	full := p.clock.NewTimer(p.opts.FullSyncPeriod)
	defer full.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.cache.Changed():
			p.pass(ctx, false)
		case <-p.podKick:
			p.pass(ctx, false)
		case <-full.C():
			p.pass(ctx, true)
			full.Reset(p.opts.FullSyncPeriod)
		}
	}
}

// pass is one round of the notifier: every pod whose cached version is
// ahead of the one sent is sent; a full pass also sends a pod whose API
// copy drifted and checks every finished pod for deletion, a quick one only
// those the watch or the runner named.
func (p *Provider) pass(ctx context.Context, full bool) {
	p.mu.Lock()
	cb := p.notifyPod
	check := p.check
	p.check = map[types.UID]bool{}
	p.mu.Unlock()
	uids := p.runner.Pods()
	seen := make(map[types.UID]bool, len(uids))
	for _, uid := range uids {
		seen[uid] = true
		if ctx.Err() != nil {
			return
		}
		p.sync(ctx, uid, cb, full, full || check[uid])
	}
	p.prune(seen)
}

// sync does a pass's work for pod uid.
func (p *Provider) sync(ctx context.Context, uid types.UID, cb func(*v1.Pod), full, checkDelete bool) {
	st := p.sent[uid]
	v := p.cache.Version(uid)
	if v == 0 {
		return
	}
	known, ok := p.runner.Pod(uid)
	if !ok {
		return
	}
	server, err := p.pods.Pods(known.Namespace).Get(known.Name)
	if err != nil || server.UID != uid {
		server = nil
	}
	p.mu.Lock()
	finished := p.finished[uid]
	p.mu.Unlock()

	if checkDelete && finished && server != nil && canBeDeleted(server) &&
		(st.deleteSent.IsZero() || p.clock.Since(st.deleteSent) >= p.opts.FullSyncPeriod) {
		// A deletion asked for is not asked again until a full period has
		// passed without the watch showing the pod gone; a failed one is
		// tried again at the next check.
		st.deleteSent = p.clock.Now()
		if !p.deleteFinished(ctx, server) {
			st.deleteSent = time.Time{}
		}
		p.sent[uid] = st
	}
	// A pod the API server no longer has gets no status: the kubelet's
	// status manager drops it, and virtual-kubelet would wait for a pod it
	// no longer knows.
	if cb == nil || server == nil || (v == st.version && !full) {
		return
	}
	status, ok := p.cache.GetPodStatus(uid)
	if !ok {
		return
	}
	merged := p.cacheOpts.Merge(&server.Status, &status, !finished)
	resend := v == st.version
	// virtual-kubelet writes nothing over a terminal phase: handing such a
	// pod again every full sync would be for nothing.
	if resend && (podphase.IsTerminal(server.Status.Phase) || !p.drifted(server, &merged)) {
		return
	}
	out := server.DeepCopy()
	out.Status = merged
	if resend && out.ResourceVersion == st.rv {
		// virtual-kubelet drops a pod equal to the one it was last handed;
		// it writes the status with the server's resourceVersion anyway.
		out.ResourceVersion = ""
	}
	cb(out)
	st.version, st.rv = v, out.ResourceVersion
	p.sent[uid] = st
	p.count(func(s *Stats) {
		s.Notified++
		if resend {
			s.Resent++
		}
	})
}

// drifted reports whether the API server's copy differs from the status
// the node would write over it in anything the kubelet owns.
func (p *Provider) drifted(server *v1.Pod, merged *v1.PodStatus) bool {
	a, b := server.Status.DeepCopy(), merged.DeepCopy()
	statussync.Normalize(&server.Spec, a)
	statussync.Normalize(&server.Spec, b)
	return !p.cacheOpts.EqualByKubelet(a, b)
}

// canBeDeleted is the status manager's rule: the pod is being deleted and
// its terminal phase is written (its containers stopped: the runner has
// finished it).
func canBeDeleted(pod *v1.Pod) bool {
	return pod.DeletionTimestamp != nil && !statussync.IsMirror(pod) && podphase.IsTerminal(pod.Status.Phase)
}

// prune forgets what the provider kept of pods the runner no longer has.
func (p *Provider) prune(known map[types.UID]bool) {
	for uid := range p.sent {
		if !known[uid] {
			delete(p.sent, uid)
		}
	}
	// A pod added since the pass began is not in known: ask the runner.
	var gone []types.UID
	p.mu.Lock()
	for uid := range p.finished {
		if !known[uid] {
			gone = append(gone, uid)
		}
	}
	for _, uid := range p.byName {
		if !known[uid] {
			gone = append(gone, uid)
		}
	}
	p.mu.Unlock()
	if len(gone) == 0 {
		return
	}
	forget := map[types.UID]bool{}
	for _, uid := range gone {
		if _, ok := p.runner.Pod(uid); !ok {
			forget[uid] = true
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid := range forget {
		delete(p.finished, uid)
	}
	for k, uid := range p.byName {
		if forget[uid] {
			delete(p.byName, k)
		}
	}
}
