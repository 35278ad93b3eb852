package agent

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
)

// maxSyncsPerInstant bounds the syncs of one pod at one instant: more means the machine keeps
// asking for a sync with nothing happening, which is a bug, not a pod.
const maxSyncsPerInstant = 100

// probeFailure is the output of a failing readiness probe in the Unhealthy event.
const probeFailure = "HTTP probe failed with statuscode: 503"

// pod is one pod the agent runs: its API object, the podlifecycle machine that decides what
// the kubelet does with it, and the simulated runtime that carries the decisions out.
type pod struct {
	api       *v1.Pod // as the server stored it at creation
	m         *podlifecycle.Machine
	rt        *simruntime.Runtime
	behaviors map[string]behavior
	ip        string
	res       podlifecycle.Result // reused by every sync
	told      int                 // how many of the node's images the machine was told of
	synced    bool                // the machine synced at least once
	nextSync  time.Time           // the machine's NextSync
	finished  bool                // the final status is cached and TerminatePod'ed
	last      v1.PodStatus        // the newest status the machine produced
}

// wake returns when the pod next has something to do, zero for never.
func (p *pod) wake() time.Time {
	if p.finished {
		return time.Time{}
	}
	w, r := p.nextSync, p.rt.Next()
	if w.IsZero() || (!r.IsZero() && r.Before(w)) {
		w = r
	}
	return w
}

func (a *Agent) newPod(pl plan, api *v1.Pod, index int) (*pod, error) {
	rt, err := simruntime.New(simruntime.DefaultOptions(), api, pl.runtimeBehaviours())
	if err != nil {
		return nil, fmt.Errorf("agent: pod %s/%s: %w", api.Namespace, api.Name, err)
	}
	m, err := podlifecycle.New(a.lifecycle, api)
	if err != nil {
		return nil, fmt.Errorf("agent: pod %s/%s: %w", api.Namespace, api.Name, err)
	}
	return &pod{api: api, m: m, rt: rt, behaviors: pl.behaviors,
		ip: fmt.Sprintf("10.244.%d.%d", 1+index/250, 2+index%250)}, nil
}

// observe returns what the runtime observed of p up to now, in the words a node's runtime
// would use (the registry's error, the image's size, the probe's output, the pod's IP), after
// the images other pods pulled onto the node.
func (a *Agent) observe(p *pod, now time.Time) []podlifecycle.Observation {
	var obs []podlifecycle.Observation
	for ; p.told < len(a.images); p.told++ {
		if img := a.images[p.told]; usesImage(p.api, img) {
			obs = append(obs, podlifecycle.Observation{Kind: podlifecycle.ImagePresent, Image: img})
		}
	}
	for _, o := range p.rt.Due(now) {
		b := p.behaviors[o.Container]
		switch o.Kind {
		case podlifecycle.SandboxReady:
			o.IP = p.ip
		case podlifecycle.ImagePullFailed:
			if b.pullError != "" {
				o.Message = b.pullError
			}
		case podlifecycle.ImagePulled:
			o.Size = b.imageSize
			if !slices.Contains(a.images, o.Image) {
				a.images = append(a.images, o.Image)
				p.told++ // p learns it from its own pull
			}
		case podlifecycle.ProbeResult:
			if o.Outcome == podlifecycle.ProbeFailure {
				o.Message = probeFailure
			}
		}
		obs = append(obs, o)
	}
	return obs
}

func usesImage(api *v1.Pod, img string) bool {
	for _, list := range [][]v1.Container{api.Spec.InitContainers, api.Spec.Containers} {
		for i := range list {
			if list[i].Image == img {
				return true
			}
		}
	}
	return false
}

// advance syncs p as often as is due at now: whenever the runtime has something to report or
// the machine asked for a sync. Each sync's actions go to the runtime, its events to the
// recorder, its statuses to the cache; a finished pod is TerminatePod'ed.
func (a *Agent) advance(ctx context.Context, p *pod, now time.Time) error {
	for i := 0; !p.finished; i++ {
		obs := a.observe(p, now)
		if len(obs) == 0 && p.synced && now.Before(p.nextSync) {
			return nil
		}
		if i == maxSyncsPerInstant {
			return fmt.Errorf("agent: pod %s/%s: %d syncs at %v without progress", p.api.Namespace, p.api.Name, i, now)
		}
		if err := p.m.StepTo(now, p.api, obs, &p.res); err != nil {
			return fmt.Errorf("agent: pod %s/%s: %w", p.api.Namespace, p.api.Name, err)
		}
		p.synced, p.nextSync = true, p.res.NextSync
		_ = p.rt.Do(now, p.res.Actions) // a Runtime made by simruntime.New never fails
		for _, e := range p.res.Events {
			ref := &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.api.Namespace, Name: p.api.Name,
				UID: p.api.UID, FieldPath: e.FieldPath}
			a.events.record(ctx, ref, e.Type, e.Reason, e.Message)
		}
		for i := range p.res.Statuses {
			if err := a.setStatus(p, p.res.Statuses[i], now); err != nil {
				return err
			}
		}
		if p.res.Finished {
			if err := a.cache.TerminatePod(p.api, now); err != nil {
				return fmt.Errorf("agent: pod %s/%s: %w", p.api.Namespace, p.api.Name, err)
			}
			a.stats.Versions++
			p.finished = true
		}
	}
	return nil
}

// setStatus caches one status version the machine produced.
func (a *Agent) setStatus(p *pod, st v1.PodStatus, now time.Time) error {
	a.stats.StatusesSet++
	_, stored, err := a.cache.SetPodStatus(p.api, st, now)
	if err != nil {
		return fmt.Errorf("agent: pod %s/%s: %w", p.api.Namespace, p.api.Name, err)
	}
	if stored {
		a.stats.Versions++
	}
	p.last = *st.DeepCopy()
	return nil
}
