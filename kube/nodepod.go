package kube

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/podlifecycle"
)

// maxSyncsPerInstant bounds the syncs of one pod at one instant: more means
// the machine keeps asking for a sync with nothing happening, a bug the node
// logs instead of spinning on.
const maxSyncsPerInstant = 100

// nodePod is one pod on the node: its newest API object, its machine and its
// runtime.
type nodePod struct {
	api      *corev1.Pod
	m        *podlifecycle.Machine
	rt       Runtime
	ip       string
	res      podlifecycle.Result
	told     int       // how many of the node's images the machine was told of
	changed  bool      // the API pod changed since the last sync
	nextSync time.Time // the machine's NextSync
	finished bool      // terminal and TerminatePod'ed, or never run
	gate     mountGate // its sandbox held until its volumes are set up

	firstSeen     time.Time // when the node admitted it
	startObserved bool      // its start duration is observed
	sandboxReady  bool      // its sandbox is up
	running       int       // containers running in its newest status
	exited        int       // containers terminated in its newest status
}

// update takes a newer API object of the pod.
func (p *nodePod) update(pod *corev1.Pod) {
	if pod.ResourceVersion == p.api.ResourceVersion && pod.DeletionTimestamp.Equal(p.api.DeletionTimestamp) {
		return
	}
	p.api, p.changed = pod, true
}

// wake returns when the pod next has something to do, zero for never.
func (p *nodePod) wake() time.Time {
	if p.finished || p.m == nil {
		return time.Time{}
	}
	w := p.nextSync
	for _, r := range [...]time.Time{p.rt.Next(), p.gate.wake()} {
		if w.IsZero() || (!r.IsZero() && r.Before(w)) {
			w = r
		}
	}
	return w
}

// observe collects what the runtime observed of p up to now, after the
// images other pods pulled onto the node.
func (n *Node) observe(p *nodePod, now time.Time) []podlifecycle.Observation {
	obs := p.gate.answer
	p.gate.answer = nil
	for ; p.told < len(n.images); p.told++ {
		if img := n.images[p.told]; usesImage(p.api, img) {
			obs = append(obs, podlifecycle.Observation{Kind: podlifecycle.ImagePresent, Image: img})
		}
	}
	for _, o := range p.rt.Due(now) {
		switch o.Kind {
		case podlifecycle.SandboxReady:
			o.IP = p.ip
			p.sandboxReady = true
		case podlifecycle.SandboxNotReady:
			p.sandboxReady = false
		case podlifecycle.ContainerStarted, podlifecycle.ContainerExited:
			n.logs.record(p.api, o, now)
		case podlifecycle.ImagePulled:
			if !slices.Contains(n.images, o.Image) {
				n.images = append(n.images, o.Image)
				p.told++ // p learns it from its own pull
			}
		}
		obs = append(obs, o)
	}
	return obs
}

func usesImage(pod *corev1.Pod, img string) bool {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Image == img {
				return true
			}
		}
	}
	return false
}

// advance syncs p as often as is due at now: when the runtime has something
// to report, the API pod changed or the machine asked for a sync. Each sync's
// actions go to the runtime, its events to the recorder, its statuses to the
// cache; a finished pod is TerminatePod'ed, after which the status engine
// deletes it once the API server has marked it for deletion.
func (n *Node) advance(ctx context.Context, p *nodePod, now time.Time) {
	if p.finished || p.m == nil {
		return
	}
	for i := 0; !p.finished; i++ {
		n.tryMount(ctx, p, now)
		obs := n.observe(p, now)
		if len(obs) == 0 && !p.changed && now.Before(p.nextSync) {
			return
		}
		if i == maxSyncsPerInstant {
			n.log.Info("pod syncs without progress", "pod", p.api.Namespace+"/"+p.api.Name, "syncs", i)
			p.nextSync = now.Add(time.Second)
			return
		}
		if err := p.m.StepTo(now, p.api, obs, &p.res); err != nil {
			n.log.Error(err, "pod sync", "pod", p.api.Namespace+"/"+p.api.Name)
			p.nextSync = now.Add(time.Second)
			return
		}
		n.count(func(s *NodeStats) { s.Syncs++ })
		p.changed, p.nextSync = false, p.res.NextSync
		n.do(ctx, p, now, p.res.Actions)
		for _, e := range p.res.Events {
			n.event(podRef(p.api, e.FieldPath), e.Type, e.Reason, e.Message)
		}
		for i := range p.res.Statuses {
			if _, _, err := n.cache.SetPodStatus(p.api, p.res.Statuses[i], now); err != nil {
				n.log.Error(err, "pod status", "pod", p.api.Namespace+"/"+p.api.Name)
			}
			p.running, p.exited = countStates(&p.res.Statuses[i])
		}
		n.metrics.observeResult(p, &p.res, now)
		if p.res.Finished {
			if err := n.cache.TerminatePod(p.api, now); err != nil {
				n.log.Error(err, "terminate pod", "pod", p.api.Namespace+"/"+p.api.Name)
			}
			p.finished, p.sandboxReady = true, false
			n.ips.put(p.ip)
			p.ip = ""
			n.count(func(s *NodeStats) { s.Finished++; s.Running-- })
		}
	}
}

// countStates counts the running and the terminated containers of a status.
func countStates(st *corev1.PodStatus) (running, exited int) {
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range list {
			switch {
			case list[i].State.Running != nil:
				running++
			case list[i].State.Terminated != nil:
				exited++
			}
		}
	}
	return running, exited
}
