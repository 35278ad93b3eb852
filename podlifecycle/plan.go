package podlifecycle

import (
	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
	v1 "k8s.io/api/core/v1"
)

// killReq is one entry of ContainersToKill (section 3.8).
type killReq struct {
	c       *ctr
	in      *inst
	reason  KillReason
	message string
	restart bool
}

// plan is what one sync decides (section 3): the value computePodActions
// returns, read by the execution (sync.go, start.go) and never changed by
// it. The index lists hold indexes into each spec list, ascending.
type plan struct {
	killPod, createSandbox bool
	attempt                uint32
	initToStart            []int
	toStart                []int
	ephToStart             []int
	toKill                 []killReq
	toReset                []resetReq
	// prune are the init container instances step 3 of section 4.1
	// removes, decided from the view at the start of the sync.
	prune []instRef
}

// instRef names one instance by its container's position in Machine.ctrs
// and its ID: unlike an *inst it stays valid while instances are added.
type instRef struct {
	c  int
	id string
}

// resetReq is one entry of ContainersToReset (section 3.2).
type resetReq struct {
	c    *ctr
	in   *inst
	kill bool // kill before removing
}

// emptied returns p with no decision and its lists' storage kept, for the
// next computePodActions to fill.
func (p plan) emptied() plan {
	return plan{
		initToStart: p.initToStart[:0], toStart: p.toStart[:0], ephToStart: p.ephToStart[:0],
		toKill: p.toKill[:0], toReset: p.toReset[:0], prune: p.prune[:0],
	}
}

// addSorted inserts i into the ascending list s, once.
func addSorted(s []int, i int) []int {
	for j, v := range s {
		if v == i {
			return s
		}
		if v > i {
			s = append(s, 0)
			copy(s[j+1:], s[j:])
			s[j] = i
			return s
		}
	}
	return append(s, i)
}

// podPolicyNever is the pod's restartPolicy Never.
func (m *Machine) podPolicyNever() bool { return m.spec.RestartPolicy == v1.RestartPolicyNever }

// containerPolicy returns c's own restartPolicy when the gate reads it.
func (m *Machine) containerPolicy(c *ctr) (v1.ContainerRestartPolicy, bool) {
	if !m.opts.Features.ContainerRestartRules || c.spec.RestartPolicy == nil || c.sidecar {
		return "", false
	}
	return *c.spec.RestartPolicy, true
}

// restarts reports whether c, exited with exitCode, runs again: the
// kubelet asks ContainerShouldRestart (the container's own policy and rules,
// then the pod's) only when ContainerRestartRules is on, and the pod's
// restartPolicy alone when it is off, even for a container whose policy and
// rules the API server kept (it drops them on create with the gate off, but
// keeps them on an update of a pod that had them).
func (m *Machine) restarts(c *ctr, exitCode int32) bool {
	if !m.opts.Features.ContainerRestartRules {
		return m.opts.Features.ShouldRestart(m.spec, nil, exitCode)
	}
	return m.opts.Features.ShouldRestart(m.spec, c.spec, exitCode)
}

// sandboxCheck is section 2 step 2 / 3.1: whether a new sandbox is needed
// and its attempt.
func (m *Machine) sandboxCheck() (bool, uint32) {
	switch {
	case !m.sb.exists:
		return true, 0
	case !m.sb.ready:
		return true, m.sb.attempt + 1
	case !m.pod.Spec.HostNetwork && m.sb.ip == "":
		return true, m.sb.attempt + 1
	}
	return false, m.sb.attempt
}

// computePodActions decides one sync's actions from the machine's view of
// the runtime (spec/podlifecycle.md sections 3.1 to 3.8) and returns them in
// buf's storage (buf is emptied first). It reads the machine and changes
// nothing in it: the same view gives the same plan.
func (m *Machine) computePodActions(buf plan) plan {
	p := buf.emptied()
	m.decide(&p)
	return p
}

// decide fills the empty plan p (computePodActions).
func (m *Machine) decide(p *plan) {
	if m.sb.creating {
		return // the sandbox is being created: the kubelet's sync waits for it
	}
	create, attempt := m.sandboxCheck()
	p.killPod, p.createSandbox, p.attempt = create, create, attempt
	if m.marked && m.opts.Features.RestartAllContainersOnContainerExits && !create {
		p.killPod = false
		if m.startUnanswered() {
			// The kubelet's sync that issued the start blocks until it
			// returns, so no reset is decided before then: a later start
			// would count as initialization in the middle of the rerun.
			return
		}
		m.planReset(p)
		return
	}
	m.planPrune(p)
	if create {
		m.planSandbox(p)
		return
	}
	// 3.4 ephemeral containers: once each.
	es := m.ephemerals()
	for i := range es {
		if len(es[i].insts) == 0 && !es[i].everStarted {
			p.ephToStart = append(p.ephToStart, es[i].index)
		}
	}
	initialized := m.planInit(p)
	if p.killPod || !initialized {
		return
	}
	m.planRegulars(p)
}

// planRegulars is sections 3.6 (regular containers) and 3.7 (nothing
// left: kill the pod).
func (m *Machine) planRegulars(p *plan) {
	keep := 0
	rs := m.regulars()
	deleting := m.pod.DeletionTimestamp != nil
	for i := range rs {
		c := &rs[i]
		n := newest(c)
		if n == nil || n.state != containerstate.RuntimeRunning {
			restart := false
			switch {
			case deleting:
			case n == nil || n.state != containerstate.RuntimeExited:
				restart = true
			default:
				restart = m.restarts(c, n.exitCode)
			}
			if restart {
				p.toStart = append(p.toStart, c.index)
				if n != nil && n.state == containerstate.RuntimeUnknown {
					p.toKill = append(p.toKill, killReq{c: c, in: n, reason: KillUnknown, message: MessageKillUnknownContainer, restart: true})
				}
			}
			continue
		}
		if n.kill.active {
			// The kubelet's kill is synchronous: until the runtime reports
			// the stop, the container neither keeps the pod nor frees it.
			if n.kill.restart {
				p.toStart = append(p.toStart, c.index)
			} else {
				keep++
			}
			continue
		}
		restart := !m.podPolicyNever()
		if pol, ok := m.containerPolicy(c); ok {
			restart = pol != v1.ContainerRestartPolicyNever
		}
		reason := KillReason(0)
		switch {
		case n.image != c.spec.Image:
			reason, restart = KillChanged, true
		case n.probes[Liveness-1].result == containerstate.ProbeFailure:
			reason = KillLivenessProbe
		case n.probes[Startup-1].result == containerstate.ProbeFailure:
			reason = KillStartupProbe
		default:
			keep++
			continue
		}
		p.toKill = append(p.toKill, killReq{c: c, in: n, reason: reason,
			message: KillMessage(reason, containerstate.Regular, c.name, restart), restart: restart})
		if restart {
			p.toStart = append(p.toStart, c.index)
		}
	}
	// 3.7 nothing left.
	if keep == 0 && len(p.toStart) == 0 {
		p.killPod = true
		p.initToStart = p.initToStart[:0]
	}
}

// planPrune is section 4.1 step 3 (the kubelet's
// pruneInitContainersBeforeStart), decided from the view at the start of
// the sync: of each init container, regular or sidecar, only the newest
// instance that exited or is unknown is kept; the older ones are removed.
// Running and created instances are neither kept nor counted.
func (m *Machine) planPrune(p *plan) {
	is := m.inits()
	for i := range is {
		kept := false
		for j := range is[i].insts {
			in := &is[i].insts[j]
			if in.state != containerstate.RuntimeExited && in.state != containerstate.RuntimeUnknown {
				continue
			}
			if !kept {
				kept = true
				continue
			}
			p.prune = append(p.prune, instRef{c: i, id: in.id})
		}
	}
}

// startUnanswered reports whether a PullImage or StartContainer the
// machine issued is still unanswered.
func (m *Machine) startUnanswered() bool {
	for i := range m.ctrs {
		if m.ctrs[i].inFlight {
			return true
		}
	}
	return false
}

// isSource is whether instance in of c exited with a code whose first
// matching rule is RestartAllContainers (section 3.2).
func (m *Machine) isSource(c *ctr, in *inst) bool {
	if in.state != containerstate.RuntimeExited || !m.opts.Features.ContainerRestartRules {
		return false
	}
	r, ok := containerstate.MatchingRule(c.spec, in.exitCode)
	return ok && r.Action == v1.ContainerRestartRuleActionRestartAllContainers
}

// planReset is section 3.2: every instance of every regular container,
// then of every init container, sources last (regular, then init).
func (m *Machine) planReset(p *plan) {
	for pass := 0; pass < 2; pass++ {
		for _, list := range [2][]ctr{m.regulars(), m.inits()} {
			for i := range list {
				c := &list[i]
				for j := range c.insts {
					in := &c.insts[j]
					if m.isSource(c, in) != (pass == 1) {
						continue
					}
					p.toReset = append(p.toReset, resetReq{c: c, in: in, kill: in.state == containerstate.RuntimeRunning})
				}
			}
		}
	}
}

// planSandbox is section 3.3.
func (m *Machine) planSandbox(p *plan) {
	anyInstance := false
	for i := range m.ctrs {
		anyInstance = anyInstance || len(m.ctrs[i].insts) > 0
	}
	if m.podPolicyNever() && p.attempt != 0 && anyInstance {
		p.createSandbox = false
		return
	}
	rs := m.regulars()
	someSeen := false
	for i := range rs {
		c := &rs[i]
		n := newest(c)
		someSeen = someSeen || (n != nil && n.state != containerstate.RuntimeUnknown)
		runOnce := m.spec.RestartPolicy == v1.RestartPolicyOnFailure
		if pol, ok := m.containerPolicy(c); ok {
			runOnce = pol == v1.ContainerRestartPolicyOnFailure
		}
		if runOnce && n != nil && n.state == containerstate.RuntimeExited && n.exitCode == 0 {
			continue
		}
		p.toStart = append(p.toStart, c.index)
	}
	if len(p.toStart) == 0 && someSeen {
		p.createSandbox = false
		return
	}
	if m.nInit > 0 {
		p.toStart = p.toStart[:0]
		p.initToStart = append(p.initToStart, 0)
	}
}

// sandboxScopedInit reports whether the init-container decision reads the
// current sandbox only (1.37, docs/versions.md row PL-V7).
func (m *Machine) sandboxScopedInit() bool { return m.opts.Version.AtLeast(kubeversion.V1_37) }

// initializedForInit is where the walk of section 3.5 starts: from 1.37 a
// regular container has an instance in the current sandbox, in any state;
// before, the newest instance of a regular container, in any sandbox, is
// created or running (an exited one does not count). The old rule is why
// a container created in the sandbox a node reboot lost made the kubelet
// skip the init containers of the new sandbox (row PL-V7).
func (m *Machine) initializedForInit() bool {
	if m.sandboxScopedInit() {
		return m.activeInitialized()
	}
	rs := m.regulars()
	for i := range rs {
		if n := newest(&rs[i]); n != nil &&
			(n.state == containerstate.RuntimeCreated || n.state == containerstate.RuntimeRunning) {
			return true
		}
	}
	return false
}

// initInstance is the instance of init container c the walk of section 3.5
// reads: from 1.37 its active instance; before, its newest instance in any
// sandbox, so a leftover of an earlier sandbox counts (row PL-V7).
func (m *Machine) initInstance(c *ctr) *inst {
	if m.sandboxScopedInit() {
		return m.active(c)
	}
	return newest(c)
}

// planInit is section 3.5; it reports whether the pod is initialized.
func (m *Machine) planInit(p *plan) bool {
	if m.nInit == 0 {
		return true
	}
	initialized := m.initializedForInit()
	seen := initialized
	is := m.inits()
	last := len(is) - 1
	for i := last; i >= 0; i-- {
		c := &is[i]
		a := m.initInstance(c)
		if a == nil {
			if seen && c.sidecar {
				p.initToStart = addSorted(p.initToStart, i)
			}
			continue
		}
		if seen && !c.sidecar {
			continue
		}
		kill := func(r KillReason, msg string) {
			p.toKill = append(p.toKill, killReq{c: c, in: a, reason: r, message: msg, restart: true})
			p.initToStart = addSorted(p.initToStart, i)
		}
		switch a.state {
		case containerstate.RuntimeCreated:
			p.initToStart = addSorted(p.initToStart, i)
		case containerstate.RuntimeRunning:
			if !c.sidecar || a.kill.active {
				break
			}
			if c.spec.StartupProbe != nil {
				r := a.probes[Startup-1].result
				if r == containerstate.ProbeNone {
					break
				}
				if r == containerstate.ProbeFailure {
					kill(KillStartupProbe, KillMessage(KillStartupProbe, containerstate.Init, c.name, false))
					break
				}
			}
			if i == last {
				initialized = true
			} else if !seen {
				p.initToStart = addSorted(p.initToStart, i+1)
			}
			if a.image != c.spec.Image {
				kill(KillChanged, KillMessage(KillChanged, containerstate.Init, c.name, false))
				break
			}
			if c.spec.LivenessProbe != nil && a.probes[Liveness-1].result == containerstate.ProbeFailure {
				kill(KillLivenessProbe, KillMessage(KillLivenessProbe, containerstate.Init, c.name, false))
			}
		case containerstate.RuntimeExited:
			if c.sidecar {
				p.initToStart = addSorted(p.initToStart, i)
				break
			}
			if a.exitCode != 0 || a.reason == containerstate.ReasonOOMKilled {
				if m.restarts(c, a.exitCode) {
					p.initToStart = addSorted(p.initToStart, i)
					break
				}
				p.killPod = true
				p.initToStart = p.initToStart[:0]
				return false
			}
			if i == last {
				initialized = true
			} else {
				p.initToStart = addSorted(p.initToStart, i+1)
			}
		case containerstate.RuntimeUnknown:
			if c.sidecar {
				kill(KillUnknown, MessageKillUnknownInitContainer)
				break
			}
			restart := !m.podPolicyNever()
			if c.spec.RestartPolicy != nil && m.opts.Features.ContainerRestartRules {
				restart = *c.spec.RestartPolicy != v1.ContainerRestartPolicyNever
			}
			if !restart {
				p.killPod = true
				p.initToStart = p.initToStart[:0]
				return false
			}
			kill(KillUnknown, MessageKillUnknownInitContainer)
		}
		seen = true
	}
	if !seen {
		p.initToStart = addSorted(p.initToStart, 0)
	}
	return initialized
}
