package podlifecycletest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podlifecycle"
	v1 "k8s.io/api/core/v1"
)

// Check is one invariant over a trace: Func returns nil or a *Violation
// naming the step that breaks it.
type Check struct {
	// Name is the invariant's name, as in Violation.Check.
	Name string
	// Func checks a trace; it never panics on a nil or empty trace.
	Func func(*Trace) error
}

// Checks returns every invariant, in a fixed order.
func Checks() []Check {
	return []Check{
		{"InitOrder", CheckInitOrder},
		{"RegularAfterInit", CheckRegularAfterInit},
		{"SidecarStartup", CheckSidecarStartup},
		{"CrashLoopBackoff", CheckCrashLoopBackoff},
		{"TerminationOrder", CheckTerminationOrder},
		{"TerminalPhase", CheckTerminalPhase},
		{"ContainerNames", CheckContainerNames},
		{"StatusTransitions", CheckStatusTransitions},
		{"Wakeups", CheckWakeups},
		{"StartsAnswered", CheckStartsAnswered},
		{"StatusFields", CheckStatusFields},
	}
}

// CheckAll runs every check of Checks and joins their violations (nil when
// the trace keeps every invariant).
func CheckAll(tr *Trace) error {
	var errs []error
	for _, c := range Checks() {
		if err := c.Func(tr); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// walk replays tr: for each step it applies the step's observations to the
// view and calls f, which sees what the machine saw when it decided.
func walk(tr *Trace, f func(i int, s *Step, v *view) error) error {
	if tr == nil || tr.Pod == nil {
		return nil
	}
	v := newView(tr.Pod)
	for i := range tr.Steps {
		s := &tr.Steps[i]
		v.apply(s.Observations, s.At)
		if err := f(i, s, v); err != nil {
			return err
		}
		for _, a := range s.Result.Actions {
			if c := v.ctrs[a.Container]; c != nil && a.Kind == podlifecycle.RemoveContainer {
				c.remove(a.ContainerID)
			}
		}
	}
	return nil
}

func violation(tr *Trace, check string, i int, format string, args ...any) *Violation {
	return &Violation{Check: check, Step: i, At: tr.Steps[i].At.Sub(tr.Start), Detail: fmt.Sprintf(format, args...)}
}

func starts(s *Step, kind containerstate.Kind) []podlifecycle.Action {
	var out []podlifecycle.Action
	for _, a := range s.Result.Actions {
		if a.Kind == podlifecycle.StartContainer && a.ContainerKind == kind {
			out = append(out, a)
		}
	}
	return out
}

// CheckInitOrder: init containers start one at a time in spec order
// (spec/podlifecycle.md rules 2.3 and 2.4, section 3.5). In each sandbox, an
// init container starts only once every init container before it has done
// its part (a regular one exited with 0, a sidecar started), a regular init
// container that succeeded is not started again, and no regular init
// container starts while another one runs (a sidecar that exited is
// restarted whenever its turn has come).
func CheckInitOrder(tr *Trace) error {
	return walk(tr, func(i int, s *Step, v *view) error {
		inits := v.sortedInits(s.Pod)
		for _, a := range starts(s, containerstate.Init) {
			c := v.ctrs[a.Container]
			if c == nil {
				continue
			}
			for _, p := range inits[:c.index] {
				if !v.initDone(p) {
					return violation(tr, "InitOrder", i, "init container %q started before init container %q completed", c.name, p.name)
				}
			}
			if !c.sidecar && v.initDone(c) {
				return violation(tr, "InitOrder", i, "init container %q started again after it succeeded in the same sandbox", c.name)
			}
			for _, p := range inits {
				if c.sidecar || p == c || p.sidecar {
					continue
				}
				for _, in := range p.insts {
					if in.round == v.round && !in.removed && in.started && !in.exited {
						return violation(tr, "InitOrder", i, "init container %q started while init container %q runs", c.name, p.name)
					}
				}
			}
		}
		return nil
	})
}

// CheckRegularAfterInit: no regular container starts before the pod is
// initialized in its current sandbox (spec/podlifecycle.md rules 2.5 and
// 2.6): every init container has done its part.
func CheckRegularAfterInit(tr *Trace) error {
	return walk(tr, func(i int, s *Step, v *view) error {
		for _, a := range starts(s, containerstate.Regular) {
			for _, p := range v.sortedInits(s.Pod) {
				if !v.initDone(p) {
					return violation(tr, "RegularAfterInit", i, "container %q started before init container %q completed", a.Container, p.name)
				}
			}
		}
		return nil
	})
}

// CheckSidecarStartup: the container after a sidecar with a startup probe
// (the next init container, or the regular containers after the last one)
// first starts in a sandbox only once the sidecar's running instance has
// reported a startup success (spec/podlifecycle.md rule 2.4, pitfall 6).
func CheckSidecarStartup(tr *Trace) error {
	return walk(tr, func(i int, s *Step, v *view) error {
		inits := v.sortedInits(s.Pod)
		for _, a := range s.Result.Actions {
			if a.Kind != podlifecycle.StartContainer {
				continue
			}
			c := v.ctrs[a.Container]
			if c == nil || c.kind == containerstate.Ephemeral {
				continue
			}
			var pred *ctrView
			first := true
			switch {
			case c.kind == containerstate.Init && c.index > 0:
				pred = inits[c.index-1]
				for _, in := range c.insts {
					first = first && (in.round != v.round || in.removed)
				}
			case c.kind == containerstate.Regular && len(inits) > 0:
				pred = inits[len(inits)-1]
				for _, r := range v.ctrs {
					for _, in := range r.insts {
						first = first && (r.kind != containerstate.Regular || in.round != v.round || in.removed)
					}
				}
			}
			if pred == nil || !pred.sidecar || pred.spec.StartupProbe == nil || !first {
				continue
			}
			var cur *instView
			for _, in := range pred.live() {
				if in.round == v.round && in.started {
					cur = in
					break
				}
			}
			if cur == nil || !cur.startupOK {
				return violation(tr, "SidecarStartup", i, "container %q started before sidecar %q reported a startup success", c.name, pred.name)
			}
		}
		return nil
	})
}

// restartKilling reports whether a Killing message is that of a kill that
// restarts the container and so leaves its crash-loop back-off to the exit
// before it (spec/podlifecycle.md section 3.8, pitfall 2): a probe failure,
// a changed definition or an unknown state, not a whole-pod kill, a failed
// postStart hook or a reset.
func restartKilling(msg string) bool {
	switch {
	case msg == podlifecycle.MessageKillUnknownContainer, msg == podlifecycle.MessageKillUnknownInitContainer:
		return true
	case strings.HasPrefix(msg, "Stopping container "), msg == podlifecycle.MessageKillFailedPostStartHook, msg == podlifecycle.MessageKillRestartAll:
		return false
	}
	return strings.HasSuffix(msg, "failed liveness probe") || strings.HasSuffix(msg, "failed startup probe") ||
		strings.Contains(msg, " failed liveness probe,") || strings.Contains(msg, " failed startup probe,") ||
		strings.Contains(msg, "definition changed")
}

// CheckCrashLoopBackoff: no container is started again before its
// crash-loop back-off since its last exit ended (spec/podlifecycle.md section
// 4.2 step 1; 10 s, 20 s, ... capped, per containerstate's back-off with the
// run's crash-loop options). Each attempt to start (a start, a pull, or a
// pull refused by pull back-off) advances the back-off, as the kubelet's
// does; after a kill that restarts the container, the exit before it is
// the reference.
func CheckCrashLoopBackoff(tr *Trace) error {
	if tr == nil || tr.Pod == nil {
		return nil
	}
	cfg, err := tr.Options.Machine.CrashLoop.BackoffOptions()
	if err != nil {
		return nil
	}
	b, _ := containerstate.NewBackoff(cfg)
	return walk(tr, func(i int, s *Step, v *view) error {
		tried := map[string]bool{}
		attempt := func(c *ctrView) error {
			if c == nil || tried[c.name] {
				return nil
			}
			tried[c.name] = true
			var ref time.Time
			skipKilled := true
			for _, in := range c.live() {
				if !in.exited {
					continue
				}
				if in.restartKill && skipKilled {
					skipKilled = false
					continue
				}
				ref = in.exitAt
				break
			}
			if ref.IsZero() {
				return nil
			}
			key := containerstate.CrashLoopKey(s.Pod.Name, s.Pod.Namespace, s.Pod.UID, c.spec)
			if b.InBackoffSince(key, ref, s.At) {
				return violation(tr, "CrashLoopBackoff", i, "container %q started %v after its exit, within its back-off of %v",
					c.name, s.At.Sub(ref), b.Get(key))
			}
			b.Next(key, ref, s.At)
			return nil
		}
		for j := range s.Result.Actions {
			a := &s.Result.Actions[j]
			c := v.ctrs[a.Container]
			switch a.Kind {
			case podlifecycle.RemoveContainer:
				if c != nil {
					c.remove(a.ContainerID)
				}
			case podlifecycle.StartContainer, podlifecycle.PullImage:
				if err := attempt(c); err != nil {
					return err
				}
			}
		}
		for _, e := range s.Result.Events {
			if (e.Reason == podlifecycle.ReasonBackOff && e.Type == v1.EventTypeNormal) || e.Reason == podlifecycle.ReasonErrImageNeverPull {
				if err := attempt(v.byFieldPath(e.FieldPath)); err != nil {
					return err
				}
			}
		}
		// A kill that restarts the container begins with its Killing event.
		for _, e := range s.Result.Events {
			if e.Reason != podlifecycle.ReasonKilling || !restartKilling(e.Message) {
				continue
			}
			if c := v.byFieldPath(e.FieldPath); c != nil {
				for _, in := range c.live() {
					if in.started && !in.exited {
						in.restartKill = true
						break
					}
				}
			}
		}
		return nil
	})
}

// byFieldPath returns the container an event's field path names, or nil.
// The paths are spelled here, not taken from podlifecycle.FieldPath, so
// that the check does not share a mistake with the machine
// (spec/podlifecycle.md section 10).
func (v *view) byFieldPath(fp string) *ctrView {
	for _, c := range v.ctrs {
		list := map[containerstate.Kind]string{containerstate.Init: "initContainers", containerstate.Regular: "containers",
			containerstate.Ephemeral: "ephemeralContainers"}[c.kind]
		if fp == "spec."+list+"{"+c.name+"}" {
			return c
		}
	}
	return nil
}

// podKill is one container's part of a whole-pod kill.
type podKill struct {
	c     *ctrView
	batch int           // the step of its Killing event
	begin time.Time     // when it began
	grace time.Duration // the kill's grace before the 2 s floor
	inst  *instView     // the instance killed
}

// CheckTerminationOrder: a whole-pod kill (termination, or a sync that
// keeps nothing) stops the regular containers before the sidecars and the
// sidecars in reverse spec order, each sidecar's stop waiting for the
// others at most its grace; every stop is issued within the grace (plus the
// kubelet's whole-second rounding) with a grace of at most max(grace, 2 s)
// (spec/podlifecycle.md sections 7.2, 7.4 to 7.6).
func CheckTerminationOrder(tr *Trace) error {
	var eff int64 // the effective grace of the deletion (section 7.2)
	kills := map[string]*podKill{}
	return walk(tr, func(i int, s *Step, v *view) error {
		g := int64(2)
		switch p := s.Pod; {
		case p.DeletionGracePeriodSeconds != nil:
			if eff == 0 || *p.DeletionGracePeriodSeconds < eff {
				eff = max(*p.DeletionGracePeriodSeconds, 1)
			}
			g = eff
		case p.Spec.TerminationGracePeriodSeconds != nil:
			g = *p.Spec.TerminationGracePeriodSeconds
		}
		for _, e := range s.Result.Events {
			if e.Reason != podlifecycle.ReasonKilling || !strings.HasPrefix(e.Message, "Stopping container ") {
				continue
			}
			c := v.byFieldPath(e.FieldPath)
			if c == nil {
				continue
			}
			k := &podKill{c: c, batch: i, begin: s.At, grace: time.Duration(g) * time.Second}
			for _, in := range c.live() {
				if in.started && !in.exited {
					k.inst = in
					break
				}
			}
			if k.inst != nil {
				kills[k.inst.id] = k
			}
		}
		for _, a := range s.Result.Actions {
			if a.Kind != podlifecycle.KillContainer {
				continue
			}
			k := kills[a.ContainerID]
			if k == nil {
				continue
			}
			if a.Grace > max(k.grace, 2*time.Second) {
				return violation(tr, "TerminationOrder", i, "container %q stopped with grace %v, more than the pod's %v", a.Container, a.Grace, k.grace)
			}
			if waited := s.At.Sub(k.begin); waited > k.grace+2*time.Second {
				return violation(tr, "TerminationOrder", i, "container %q stopped %v after its Killing event, past its grace %v", a.Container, waited, k.grace)
			}
			if !k.c.sidecar || s.At.Sub(k.begin) >= k.grace {
				continue
			}
			for _, o := range kills {
				if o.batch != k.batch || o == k || o.inst.exited {
					continue
				}
				if o.c.kind == containerstate.Regular {
					return violation(tr, "TerminationOrder", i, "sidecar %q stopped while container %q still runs", k.c.name, o.c.name)
				}
				if o.c.sidecar && o.c.index > k.c.index {
					return violation(tr, "TerminationOrder", i, "sidecar %q stopped while the later sidecar %q still runs", k.c.name, o.c.name)
				}
			}
		}
		return nil
	})
}
