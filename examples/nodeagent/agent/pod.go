package agent

import (
	"fmt"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
)

// probeFailure is the output of a failing readiness probe in the Unhealthy event.
const probeFailure = "HTTP probe failed with statuscode: 503"

// pod is one pod the agent runs: its API object and how its containers behave. The runner
// runs its machine and runtime.
type pod struct {
	api       *v1.Pod // as the server stored it at creation
	behaviors map[string]behavior
	last      v1.PodStatus // the newest status its machine produced
	finished  bool         // the runner finished it and TerminatePod'ed it
}

// nodeRuntime is the simulated runtime of one pod, reporting in the words a node's runtime
// would use: the registry's error, the image's size, the probe's output.
type nodeRuntime struct {
	*simruntime.Runtime
	behaviors map[string]behavior
}

func (r nodeRuntime) Due(now time.Time) []podlifecycle.Observation {
	obs := r.Runtime.Due(now)
	for i := range obs {
		o := &obs[i]
		b := r.behaviors[o.Container]
		switch o.Kind {
		case podlifecycle.ImagePullFailed:
			if b.pullError != "" {
				o.Message = b.pullError
			}
		case podlifecycle.ImagePulled:
			o.Size = b.imageSize
		case podlifecycle.ProbeResult:
			if o.Outcome == podlifecycle.ProbeFailure {
				o.Message = probeFailure
			}
		}
	}
	return obs
}

// addPod hands a created pod to the runner on its simulated runtime.
func (a *Agent) addPod(pl plan, api *v1.Pod) (*pod, error) {
	rt, err := simruntime.New(simruntime.DefaultOptions(), api, pl.runtimeBehaviours())
	if err != nil {
		return nil, fmt.Errorf("agent: pod %s/%s: %w", api.Namespace, api.Name, err)
	}
	p := &pod{api: api, behaviors: pl.behaviors}
	a.byUID[api.UID] = p
	if err := a.runner.Add(api, nodeRuntime{Runtime: rt, behaviors: pl.behaviors}); err != nil {
		return nil, fmt.Errorf("agent: pod %s/%s: %w", api.Namespace, api.Name, err)
	}
	return p, nil
}

// synced is the runner's hook after each sync: the agent keeps each pod's newest status.
func (a *Agent) synced(_ time.Time, api *v1.Pod, _ []podlifecycle.Observation, res *podlifecycle.Result) {
	p := a.byUID[api.UID]
	if p == nil {
		return
	}
	a.stats.StatusesSet += len(res.Statuses)
	if n := len(res.Statuses); n > 0 {
		p.last = *res.Statuses[n-1].DeepCopy()
	}
}

// finished is the runner's hook once a pod's machine is finished.
func (a *Agent) finished(_ time.Time, api *v1.Pod) {
	if p := a.byUID[api.UID]; p != nil {
		p.finished = true
	}
}
