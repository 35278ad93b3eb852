package podlifecycletest

import (
	"sort"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podlifecycle"
	v1 "k8s.io/api/core/v1"
)

// view is the runtime as a trace's observations show it, replayed step by
// step: what the machine knew when it decided each step's actions.
type view struct {
	round int // counts the sandboxes that became ready
	ready bool
	ctrs  map[string]*ctrView
}

type ctrView struct {
	name    string
	kind    containerstate.Kind
	index   int
	spec    *v1.Container
	sidecar bool
	insts   []*instView // oldest first
}

type instView struct {
	id                string
	round             int
	started, exited   bool
	startedAt, exitAt time.Time
	exitCode          int32
	reason            string
	removed           bool
	startupOK         bool // a startup probe success was observed
	restartKill       bool // a kill that restarts it (section 3.8) was issued
}

func newView(pod *v1.Pod) *view {
	v := &view{ctrs: map[string]*ctrView{}}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		v.ctrs[c.Name] = &ctrView{name: c.Name, kind: containerstate.Init, index: i, spec: c, sidecar: containerstate.IsSidecar(c)}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		v.ctrs[c.Name] = &ctrView{name: c.Name, kind: containerstate.Regular, index: i, spec: c}
	}
	for i := range pod.Spec.EphemeralContainers {
		c := &pod.Spec.EphemeralContainers[i]
		v.ctrs[c.Name] = &ctrView{name: c.Name, kind: containerstate.Ephemeral, index: i, spec: (*v1.Container)(&c.EphemeralContainerCommon)}
	}
	return v
}

func (c *ctrView) inst(id string) *instView {
	for _, in := range c.insts {
		if in.id == id {
			return in
		}
	}
	return nil
}

// remove marks instance id removed, and every older instance with it: the
// machine removes, for a reset or a new sandbox, every instance it still
// knows (it keeps only the newest few), and, for the prune of an init
// container (spec/podlifecycle.md section 4.1 step 3), the exited
// instances older than the newest exited one.
func (c *ctrView) remove(id string) {
	for i, in := range c.insts {
		if in.id == id {
			for _, old := range c.insts[:i+1] {
				old.removed = true
			}
			return
		}
	}
}

// live returns the instances not removed, newest first.
func (c *ctrView) live() []*instView {
	var out []*instView
	for i := len(c.insts) - 1; i >= 0; i-- {
		if !c.insts[i].removed {
			out = append(out, c.insts[i])
		}
	}
	return out
}

// apply takes a step's observations in, as the machine does before it syncs.
func (v *view) apply(obs []podlifecycle.Observation, now time.Time) {
	for _, o := range obs {
		at := o.At
		if at.IsZero() {
			at = now
		}
		switch o.Kind {
		case podlifecycle.SandboxReady:
			v.round++
			v.ready = true
			continue
		case podlifecycle.SandboxNotReady:
			v.ready = false
			continue
		}
		c := v.ctrs[o.Container]
		if c == nil {
			continue
		}
		switch o.Kind {
		case podlifecycle.ContainerCreated:
			if c.inst(o.ContainerID) == nil {
				c.insts = append(c.insts, &instView{id: o.ContainerID, round: v.round})
			}
		case podlifecycle.ContainerStarted:
			if in := c.inst(o.ContainerID); in != nil && !in.started {
				in.started, in.startedAt = true, at
			}
		case podlifecycle.ContainerExited:
			if in := c.inst(o.ContainerID); in != nil && !in.exited {
				in.exited, in.exitAt, in.exitCode, in.reason = true, at, o.ExitCode, o.Reason
			}
		case podlifecycle.ContainerRemoved:
			c.remove(o.ContainerID)
		case podlifecycle.ProbeResult:
			if in := c.inst(o.ContainerID); in != nil && o.Probe == podlifecycle.Startup &&
				(o.Outcome == podlifecycle.ProbeSuccess || o.Outcome == podlifecycle.ProbeWarning) {
				in.startupOK = true
			}
		}
	}
}

// initDone reports whether init container c has done its part of the
// current initialization (in the current sandbox, since the last
// RestartAllContainers reset): a regular init container exited with 0
// (and not OOMKilled), a sidecar started (spec/podlifecycle.md rules 2.3
// and 2.4).
func (v *view) initDone(c *ctrView) bool {
	for _, in := range c.insts {
		if in.round != v.round || in.removed {
			continue // an older sandbox, or removed by a reset (rule 3.2)
		}
		if c.sidecar && in.started {
			return true
		}
		if !c.sidecar && in.exited && in.exitCode == 0 && in.reason != containerstate.ReasonOOMKilled {
			return true
		}
	}
	return false
}

// sortedInits returns the init containers in spec order.
func (v *view) sortedInits(pod *v1.Pod) []*ctrView {
	out := make([]*ctrView, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		out[i] = v.ctrs[pod.Spec.InitContainers[i].Name]
	}
	return out
}

// sortedNames returns the names of the pod's containers, sorted.
func (v *view) sortedNames() []string {
	out := make([]string, 0, len(v.ctrs))
	for n := range v.ctrs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
