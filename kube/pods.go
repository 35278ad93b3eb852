package kube

import (
	"context"
	"errors"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodestate/nodestate/podrunner"
)

// gauges sets the running pods and containers from the pods' newest statuses.
func (n *Node) gauges() {
	pods, running, exited := 0, 0, 0
	for _, p := range n.pods {
		if !p.running {
			continue
		}
		if p.sandboxReady {
			pods++
		}
		running += p.nRunning
		exited += p.nExited
	}
	n.metrics.runningPods.Set(float64(pods))
	n.metrics.runningContainers.WithLabelValues("running").Set(float64(running))
	n.metrics.runningContainers.WithLabelValues("exited").Set(float64(exited))
}

// deliver puts a watched pod into the inbox; it runs on the informer's
// goroutine and never blocks on the node's loop.
func (n *Node) deliver(pod *corev1.Pod, deleted bool) {
	if pod.Spec.NodeName != n.opts.Name {
		return
	}
	n.engine.Observe(pod)
	n.mu.Lock()
	if deleted {
		n.gone[pod.UID] = pod
		delete(n.inbox, pod.UID)
	} else {
		n.inbox[pod.UID] = pod
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// runCtx is the context of the node's Run, for the API reads of the loop.
func (n *Node) runCtx() context.Context {
	if n.ctx == nil {
		return context.Background()
	}
	return n.ctx
}

// podsLoop is the goroutine of the node's pods until ctx ends: admission,
// and the runner's Advance, on which the runner's hooks and the pods'
// runtimes run (the volume gate's API reads among them). The node's status
// and Lease have a goroutine of their own (reportLoop), so that nothing
// here delays a Lease renewal.
func (n *Node) podsLoop(ctx context.Context) error {
	n.ctx = ctx
	var t clock.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		now := n.clock.Now()
		n.mu.Lock()
		n.podsSince = now
		n.mu.Unlock()
		n.receive(now)
		next := n.runner.Advance(now)
		n.gauges()
		n.mu.Lock()
		n.podsSince = time.Time{}
		n.mu.Unlock()
		var tc <-chan time.Time
		if !next.IsZero() {
			d := next.Sub(n.clock.Now())
			if d <= 0 {
				continue // due already (a clock that moved meanwhile)
			}
			if t == nil {
				t = n.clock.NewTimer(d)
			} else {
				t.Reset(d)
			}
			tc = t.C()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-n.wake:
		case <-n.runner.Wakeup():
		case <-tc:
			continue
		}
		if t != nil && !t.Stop() {
			select {
			case <-t.C():
			default:
			}
		}
	}
}

// receive takes the inbox: new pods are admitted, known ones handed to the
// runner, gone ones forgotten.
func (n *Node) receive(now time.Time) {
	n.mu.Lock()
	inbox, gone := n.inbox, n.gone
	if len(inbox) == 0 && len(gone) == 0 {
		n.mu.Unlock()
		return
	}
	n.inbox, n.gone = map[types.UID]*corev1.Pod{}, map[types.UID]*corev1.Pod{}
	n.mu.Unlock()
	for uid, last := range gone {
		if p, ok := n.pods[uid]; ok {
			n.forget(p, last)
		}
	}
	fresh := make([]*corev1.Pod, 0, len(inbox))
	for uid, pod := range inbox {
		p, ok := n.pods[uid]
		if !ok {
			fresh = append(fresh, pod)
			continue
		}
		p.api = pod
		switch {
		case p.inRunner:
			if err := n.runner.Update(pod); err != nil {
				n.log.Error(err, "pod update", "pod", pod.Namespace+"/"+pod.Name)
			}
		case pod.DeletionTimestamp != nil && !p.terminated:
			// A pod found terminal when the node started, now deleted:
			// its final status lets the status engine delete it.
			n.terminate(p, now)
		}
	}
	// Admit in creation order, as the kubelet sorts the pods of one update.
	slices.SortFunc(fresh, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return compareStrings(string(a.UID), string(b.UID))
	})
	for _, pod := range fresh {
		n.start(pod, now)
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// terminate caches the final status of a pod the node found terminal.
func (n *Node) terminate(p *nodePod, now time.Time) {
	p.terminated = true
	if err := n.cache.TerminatePod(p.api, now); err != nil {
		n.log.Error(err, "terminal pod", "pod", p.api.Namespace+"/"+p.api.Name)
	}
}

// start admits a pod the node has not seen and hands it to the runner.
func (n *Node) start(pod *corev1.Pod, now time.Time) {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		// A terminal pod never runs again; a deleted one is removed.
		p := &nodePod{api: pod, finished: true}
		n.pods[pod.UID] = p
		if pod.DeletionTimestamp != nil {
			n.terminate(p, now)
		}
		return
	}
	var running []*corev1.Pod
	for _, p := range n.pods {
		if p.running {
			running = append(running, p.api)
		}
	}
	taints, pressures := n.rep.admission()
	if rej := admit(pod, running, n.opts.Allocatable, taints, pressures); rej != nil {
		n.reject(pod, rej, now)
		return
	}
	rt, err := n.opts.Runtime(pod)
	if err != nil {
		n.reject(pod, &Rejection{Reason: ReasonRuntimeRejected, Message: err.Error()}, now)
		return
	}
	if needsGate(pod) {
		rt = &gatedRuntime{Runtime: rt, n: n, pod: pod}
	}
	p := &nodePod{api: pod, running: true, inRunner: true, firstSeen: now}
	n.pods[pod.UID] = p
	if err := n.runner.Add(pod, rt); err != nil {
		delete(n.pods, pod.UID)
		r := &Rejection{Reason: ReasonRuntimeRejected, Message: err.Error()}
		if errors.Is(err, podrunner.ErrPodCIDRExhausted) {
			r = &Rejection{Reason: "PodCIDRExhausted", Message: "no free IP address in the node's pod CIDR " + n.runner.PodCIDR()}
		}
		n.reject(pod, r, now)
		return
	}
	n.count(func(s *NodeStats) { s.Admitted++; s.Running++ })
	n.metrics.admissions.WithLabelValues("admitted", "").Inc()
}

// reject fails a pod the node will not run, as the kubelet's rejectPod does.
func (n *Node) reject(pod *corev1.Pod, r *Rejection, now time.Time) {
	if err := n.runner.Reject(pod, now, r.Reason, r.Message); err != nil {
		n.log.Error(err, "rejected pod", "pod", pod.Namespace+"/"+pod.Name)
	}
	n.pods[pod.UID] = &nodePod{api: pod, finished: true, inRunner: true}
	n.count(func(s *NodeStats) { s.Rejected++ })
	n.metrics.admissions.WithLabelValues("rejected", r.Reason).Inc()
}

// forget drops a pod the API server no longer has; last is its last
// object. A pod still running is killed by the runner first, and dropped
// once its machine is finished.
func (n *Node) forget(p *nodePod, last *corev1.Pod) {
	if p.inRunner {
		if err := n.runner.Remove(p.api.UID, last); err != nil {
			n.log.Error(err, "pod removal", "pod", p.api.Namespace+"/"+p.api.Name)
		}
	}
	if p.running {
		p.removed = true
		return
	}
	n.logs.forget(p.api)
	delete(n.pods, p.api.UID)
}
