package podlifecycle

import (
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/podphase"
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

// plan is computePodActions' result (section 3). The index lists hold
// indexes into each spec list, ascending.
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
	// sandboxStopped: the KillSandbox of a KillPod plan was issued.
	sandboxStopped bool
	// sandboxAsked: its CreateSandbox was issued; the starts follow once
	// the sandbox is ready.
	sandboxAsked bool
	// kills are the instances of toKill, by ID: the sync goes on once
	// they all stopped (section 4.1 step 2).
	kills []instRef
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

func (p *plan) reset() {
	p.killPod, p.createSandbox, p.attempt, p.sandboxStopped, p.sandboxAsked = false, false, 0, false, false
	p.initToStart, p.toStart, p.ephToStart, p.toKill = p.initToStart[:0], p.toStart[:0], p.ephToStart[:0], p.toKill[:0]
	p.toReset, p.prune, p.kills = p.toReset[:0], p.prune[:0], p.kills[:0]
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
// the runtime (spec/podlifecycle.md sections 3.1 to 3.8).
func (m *Machine) computePodActions() {
	p := &m.plan
	p.reset()
	for i := range m.ctrs {
		m.ctrs[i].busyAtPlan = m.ctrs[i].inFlight
	}
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
		// The starts after the purge read the status the sync began with:
		// the back-off reference is the newest instance exited then, not
		// one the whole-pod kill stops (4.2 step 1).
		is := m.inits()
		for i := range is {
			is[i].purgedRef = time.Time{}
			for j := range is[i].insts {
				if in := &is[i].insts[j]; in.state == containerstate.RuntimeExited {
					is[i].purgedRef = in.finished
					break
				}
			}
		}
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
	// 3.6 regular containers.
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

// sync is one full kubelet sync at now.
func (m *Machine) sync(now time.Time, res *Result) {
	m.dirty = false
	if m.cont {
		if m.pod.DeletionTimestamp == nil {
			m.resume(now, res)
			return
		}
		// The termination takes over; the rest of the interrupted sync is
		// not carried out.
		m.endCont()
	}
	m.pendingErr = false
	var crashExpiry, timer time.Time
	status := m.generate(now, false, res)
	m.marked = status != nil && conditionTrue(status, v1.AllContainersRestarting)
	if m.state == Syncing && (m.pod.DeletionTimestamp != nil || (status != nil && podphase.IsTerminal(status.Phase))) {
		m.state = Terminating
	}
	if m.state == Terminating {
		timer = m.terminate(now, res)
		if m.state == Terminated {
			m.syncAt = time.Time{}
			return
		}
		m.syncAt = earliest(timer, now.Add(m.opts.SyncFrequency))
		return
	}
	m.computePodActions()
	crashExpiry, timer = m.execute(now, res)
	if m.cont {
		m.syncAt = m.waitAt(now, timer)
		return
	}
	m.schedule(now, crashExpiry, timer)
}

// schedule sets the next sync after one that ended at now (rule 4.5): the
// earliest crash-loop expiry, the error requeue, else the resync period,
// and the kill timer and the deadline when earlier.
func (m *Machine) schedule(now, crashExpiry, timer time.Time) {
	delay := m.opts.SyncFrequency
	switch {
	case !crashExpiry.IsZero():
		delay = crashExpiry.Sub(now)
		if delay < 0 {
			delay = 0
		}
		if delay > m.opts.SyncFrequency {
			delay = m.opts.SyncFrequency
		}
	case m.pendingErr:
		delay = min(m.opts.ErrorRequeue, m.opts.SyncFrequency)
	}
	if m.opts.Rand != nil {
		delay += time.Duration(m.opts.Rand.Float64() * 0.5 * float64(delay))
	}
	m.syncAt = earliest(now.Add(delay), timer)
	if dl := m.deadlineAt(); dl.After(now) {
		m.syncAt = earliest(m.syncAt, dl)
	}
}

// execute carries the plan out (section 4.1) as far as the kubelet's
// SyncPod goes before it blocks on a kill: it returns the earliest
// crash-loop expiry met and the earliest kill timer. When kills are under
// way it sets m.cont, and resume carries out the rest of the same plan
// once they are answered: SyncPod kills first, then prunes, then starts.
func (m *Machine) execute(now time.Time, res *Result) (crashExpiry, timer time.Time) {
	p := &m.plan
	if p.createSandbox && m.sb.exists && !m.sb.changed {
		res.Events = append(res.Events, normal(ReasonSandboxChanged, MessageSandboxChanged, ""))
		m.sb.changed = true
	}
	if p.killPod {
		t, done := m.killPodPhase(now, res)
		m.cont = !done
		return time.Time{}, t
	}
	// The reset list is carried out in order, one entry after the other, as
	// the kubelet does: a kill is waited for before the next entry (4.1).
	for _, r := range p.toReset {
		if r.in.removing {
			continue
		}
		if r.in.state == containerstate.RuntimeRunning {
			if !r.in.kill.active {
				m.beginKill(r.c, r.in, KillRestartAllContainers, MessageKillRestartAll, 0, false, false, now, res)
				m.progressKill(r.c, r.in, now, res)
			}
			break
		}
		r.in.removing = true
		res.Actions = append(res.Actions, Action{Kind: RemoveContainer, Container: r.c.name, ContainerKind: r.c.kind, ContainerID: r.in.id})
	}
	for _, k := range p.toKill {
		if k.in.kill.active {
			continue
		}
		if k.restart {
			// 4.2 step 1: the restart in this sync is backed off against
			// the newest instance that had exited when the sync began,
			// the one before the killed one.
			k.c.restartAfterKill = true
			k.c.backoffRef = time.Time{}
			for j := range k.c.insts {
				if in := &k.c.insts[j]; in != k.in && in.state == containerstate.RuntimeExited {
					k.c.backoffRef = in.finished
					break
				}
			}
		}
		m.beginKill(k.c, k.in, k.reason, k.message, m.podGrace(k.c, k.reason), false, false, now, res)
		k.in.kill.restart = k.restart
		p.kills = append(p.kills, instRef{c: m.indexOf(k.c), id: k.in.id})
	}
	timer = m.progressKills(now, res)
	if !m.killsDone() {
		m.cont = true
		return time.Time{}, timer
	}
	crashExpiry = m.startPhase(now, res)
	m.endCont()
	return crashExpiry, timer
}

// killPodPhase is step 2 of section 4.1 with KillPod: the whole-pod kill
// of every running instance, then the sandbox stop, then, with a new
// sandbox, the purge of every init container instance and the creation
// (step 4); without one, the prune (step 3). It reports whether the plan
// is carried out, and the earliest kill timer when it is not. Like the
// kubelet, it waits for the containers to stop, not for the sandbox: the
// runner carries out the KillSandbox before what follows it.
func (m *Machine) killPodPhase(now time.Time, res *Result) (time.Time, bool) {
	p := &m.plan
	if !m.killPod(now, -1, res) {
		return m.progressKills(now, res), false
	}
	// killPodWithSyncResult stops every sandbox of the pod, ready or not.
	if !p.sandboxStopped && m.sb.exists {
		res.Actions = append(res.Actions, Action{Kind: KillSandbox, Attempt: m.sb.attempt})
		m.sb.stopping = m.sb.ready
		p.sandboxStopped = true
	}
	if !p.createSandbox {
		m.prune(res)
		return time.Time{}, true
	}
	// Every init container runs again in the new sandbox. The prune that
	// follows in the kubelet finds nothing left to remove.
	is := m.inits()
	for i := range is {
		if len(is[i].insts) > 0 {
			is[i].purgedRC, is[i].hasPurgedRC = is[i].insts[0].restartCount+1, true
		}
		for j := range is[i].insts {
			res.Actions = append(res.Actions, Action{Kind: RemoveContainer, Container: is[i].name,
				ContainerKind: containerstate.Init, ContainerID: is[i].insts[j].id})
		}
		for j := range is[i].insts {
			m.retire(is[i].name, is[i].insts[j].id)
		}
		is[i].insts = is[i].insts[:0]
	}
	res.Actions = append(res.Actions, Action{Kind: CreateSandbox, Attempt: p.attempt})
	m.sb.creating, m.sb.pending, m.sb.ready = true, p.attempt, false
	p.sandboxAsked = true
	return time.Time{}, false // the starts of the plan wait for the sandbox
}

// killsDone reports whether every instance the plan kills has stopped (or
// is gone).
func (m *Machine) killsDone() bool {
	for _, r := range m.plan.kills {
		if r.c < 0 {
			continue
		}
		if in := m.ctrs[r.c].instance(r.id); in != nil && in.state != containerstate.RuntimeExited {
			return false
		}
	}
	return true
}

// prune carries out section 4.1 step 3: it removes the init container
// instances the plan prunes. The machine drops them at once, as it does
// with a purge: the next sync's status no longer has them, as the
// kubelet's does not.
func (m *Machine) prune(res *Result) {
	for _, r := range m.plan.prune {
		c := &m.ctrs[r.c]
		if c.instance(r.id) == nil {
			continue
		}
		res.Actions = append(res.Actions, Action{Kind: RemoveContainer, Container: c.name, ContainerKind: c.kind, ContainerID: r.id})
		c.remove(r.id)
		m.retire(c.name, r.id)
	}
}

// startPhase is the rest of SyncPod once the kills are over (section 4.1
// steps 3, 5 to 7): the prune, then the ephemeral, init and regular starts.
// It returns the earliest crash-loop expiry that held a start.
func (m *Machine) startPhase(now time.Time, res *Result) (crashExpiry time.Time) {
	p := &m.plan
	m.prune(res)
	start := func(c *ctr) bool {
		if c.busyAtPlan {
			// Its start was under way when the plan was decided: done for
			// this plan, even if it was answered while the kills ran.
			return true
		}
		if n := newest(c); n != nil && n.kill.active && n.state != containerstate.RuntimeExited {
			return true // started once the kill is done
		}
		ok, until := m.start(c, now, res)
		crashExpiry = earliest(crashExpiry, until)
		return ok
	}
	es := m.ephemerals()
	for _, i := range p.ephToStart {
		start(&es[i])
	}
	is := m.inits()
	for _, i := range p.initToStart {
		if !start(&is[i]) && !is[i].sidecar {
			break // a regular init container that cannot start ends the sync (4.1 step 6)
		}
	}
	rs := m.regulars()
	for _, i := range p.toStart {
		start(&rs[i])
	}
	m.clearPurgedRC()
	return crashExpiry
}

// clearPurgedRC ends the validity of the purged instances' restart
// counts: only the starts of the sync that purged them read them; later
// ones find no instance (the purge removed their logs too).
func (m *Machine) clearPurgedRC() {
	for i := range m.ctrs {
		m.ctrs[i].hasPurgedRC = false
	}
}

// resume goes on with the sync whose kills were under way (m.cont): the
// kubelet's SyncPod blocks on each kill, so the rest of its plan (the
// sandbox, the prune, the starts) follows only once they are answered,
// with the plan decided when the sync began. Nothing else is decided
// meanwhile. Once done, the next sync is due at once, as the kubelet's
// relist after a sync that acted finds the stopped containers.
func (m *Machine) resume(now time.Time, res *Result) {
	if p := &m.plan; p.sandboxAsked {
		if m.sb.creating {
			m.syncAt = m.waitAt(now, time.Time{})
			return
		}
		if !m.sb.ready {
			// The creation failed: the sync ends with its error and the
			// requeue failedSync set; the next sync decides again.
			m.endCont()
			return
		}
		// Section 15 decision 6: the status with the sandbox ready, then
		// the starts the sync decided when it began (rule 3.3).
		m.generate(now, false, res)
		crashExpiry := m.startPhase(now, res)
		m.endCont()
		m.schedule(now, crashExpiry, time.Time{})
		return
	}
	if m.plan.killPod {
		if t, done := m.killPodPhase(now, res); !done {
			m.syncAt = m.waitAt(now, t)
			return
		}
	} else {
		if t := m.progressKills(now, res); !m.killsDone() {
			m.syncAt = m.waitAt(now, t)
			return
		}
		m.startPhase(now, res)
	}
	m.endCont()
	m.dirty, m.syncAt = true, now
}

// waitAt is when a sync waiting for its kills looks again without an
// observation: the kill timer, else the resync period.
func (m *Machine) waitAt(now, timer time.Time) time.Time {
	return earliest(timer, now.Add(m.opts.SyncFrequency))
}

// endCont ends the sync resume was carrying out. A killed container's
// back-off reference held only for that sync: later syncs check it against
// its newest exited instance, the killed one (section 4.2 step 1).
func (m *Machine) endCont() {
	m.cont = false
	for i := range m.ctrs {
		m.ctrs[i].restartAfterKill, m.ctrs[i].backoffRef = false, time.Time{}
	}
}

// indexOf is the position of c in m.ctrs.
func (m *Machine) indexOf(c *ctr) int {
	for i := range m.ctrs {
		if &m.ctrs[i] == c {
			return i
		}
	}
	return -1
}

func conditionTrue(st *v1.PodStatus, t v1.PodConditionType) bool {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return st.Conditions[i].Status == v1.ConditionTrue
		}
	}
	return false
}

// defaultPullPolicy is the API server's default imagePullPolicy (section 5).
func defaultPullPolicy(image string) v1.PullPolicy {
	name := image
	if i := indexByte(name, '@'); i >= 0 {
		return v1.PullIfNotPresent
	}
	if i := lastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	i := lastIndexByte(name, ':')
	if i < 0 || name[i+1:] == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

func indexByte(s string, b byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}

func lastIndexByte(s string, b byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == b {
			return i
		}
	}
	return -1
}

// start is one StartContainer (section 4.2): crash-loop back-off, the image
// under its pull policy and pull back-off, then create and start. It
// reports whether the start was issued (or is already under way) and the
// crash-loop expiry that held it.
func (m *Machine) start(c *ctr, now time.Time, res *Result) (bool, time.Time) {
	if c.inFlight {
		return true, time.Time{}
	}
	fp := FieldPath(c.kind, c.name)
	// 4.2 step 1: crash-loop back-off against the newest exited instance.
	var ref time.Time
	switch {
	case c.restartAfterKill:
		ref = c.backoffRef
	case c.removedByReset:
	default:
		for j := range c.insts {
			if c.insts[j].state == containerstate.RuntimeExited {
				ref = c.insts[j].finished
				break
			}
		}
		if len(c.insts) == 0 && c.hasPurgedRC {
			ref = c.purgedRef // the status the purging sync began with still had it
		}
	}
	if !ref.IsZero() {
		key := containerstate.CrashLoopKey(m.name, m.ns, m.uid, c.spec)
		if delay, until, blocked := m.crash.CrashLoop(key, ref, now); blocked {
			res.Events = append(res.Events, warning(ReasonBackOff, CrashLoopBackOffMessage(c.name, m.name, m.ns, m.uid), fp))
			ev := containerstate.BackOffEvent(now, delay, c.name, m.name, m.ns, m.uid)
			c.setStartErr(ev.Reason, ev.Message)
			return false, until
		}
	}
	// Section 5: the image.
	img := c.spec.Image
	policy := c.spec.ImagePullPolicy
	if policy == "" {
		policy = defaultPullPolicy(img)
	}
	pull := false
	switch {
	case policy != v1.PullAlways && m.images[img]:
		res.Events = append(res.Events, normal(ReasonPulled, AlreadyPresentMessage(img, m.opts.EnsureSecretPulledImages), fp))
	case policy == v1.PullNever:
		ev := containerstate.NeverPullEvent(now, img)
		res.Events = append(res.Events, warning(ReasonErrImageNeverPull, ev.Message, fp),
			warning(ReasonFailed, ErrorMessage(ev.Reason), fp))
		c.setStartErr(ev.Reason, ev.Message)
		m.pendingErr = true
		return false, time.Time{}
	default:
		if m.pulls.ImagePull(containerstate.ImagePullKey(m.uid, img), now) {
			ev := containerstate.PullBackOffEvent(now, img, c.lastPull.Reason, c.lastPull.Message)
			res.Events = append(res.Events, normal(ReasonBackOff, PullBackOffMessage(img), fp),
				warning(ReasonFailed, ErrorMessage(ev.Reason), fp))
			c.setStartErr(ev.Reason, ev.Message)
			m.pendingErr = true
			return false, time.Time{}
		}
		res.Events = append(res.Events, normal(ReasonPulling, PullingMessage(img), fp))
		pull = true
	}
	if pull {
		res.Actions = append(res.Actions, Action{Kind: PullImage, Container: c.name, ContainerKind: c.kind, Image: img, PullPolicy: policy})
	}
	// 4.2 step 3: the newest instance's restart count + 1.
	rc := int32(0)
	if n := newest(c); n != nil {
		rc = n.restartCount + 1
	} else if c.hasPurgedRC {
		rc = c.purgedRC
	}
	c.startRC = rc
	res.Actions = append(res.Actions, Action{Kind: StartContainer, Container: c.name, ContainerKind: c.kind,
		Image: img, PullPolicy: policy, RestartCount: rc})
	if c.spec.Lifecycle != nil && c.spec.Lifecycle.PostStart != nil {
		res.Actions = append(res.Actions, Action{Kind: RunHook, Container: c.name, ContainerKind: c.kind, Hook: PostStart})
	}
	c.inFlight, c.restartAfterKill, c.backoffRef = true, false, time.Time{}
	return true, time.Time{}
}

// terminate is SyncTerminatingPod spread over syncs (section 7.3): kill
// every running instance with the effective grace, stop the sandbox, then
// the terminal status. It returns the earliest kill timer.
func (m *Machine) terminate(now time.Time, res *Result) time.Time {
	override := int64(-1)
	if m.pod.DeletionTimestamp != nil {
		m.override = effectiveGrace(m.override, m.pod.DeletionGracePeriodSeconds, nil, m.spec.TerminationGracePeriodSeconds)
		override = m.override
	}
	done := m.killPod(now, override, res)
	timer := m.progressKills(now, res)
	// A start or a sandbox creation under way finishes first, as the
	// kubelet's sync that issued it blocks until it returns; what it started
	// is then killed.
	if !done || m.startUnanswered() || m.sb.creating {
		return timer
	}
	// KillPod stops every sandbox of the pod, ready or not (section 7.3
	// step 3); the terminal status waits for a ready one to stop.
	if m.sb.exists && !m.sb.termStopped {
		res.Actions = append(res.Actions, Action{Kind: KillSandbox, Attempt: m.sb.attempt})
		m.sb.termStopped, m.sb.stopping = true, m.sb.ready
	}
	if m.sb.ready {
		return time.Time{}
	}
	m.generate(now, true, res)
	m.state = Terminated
	return time.Time{}
}

// effectiveGrace is the pod worker's effective grace (section 7.2): prev is
// the previous value (0 none); it can only shrink; at least 1.
func effectiveGrace(prev int64, deletion, override, spec *int64) int64 {
	g := prev
	overridden := false
	if deletion != nil && (g == 0 || *deletion < g) {
		g, overridden = *deletion, true
	}
	if override != nil && (g == 0 || *override < g) {
		g, overridden = *override, true
	}
	if !overridden && g == 0 && spec != nil {
		g = *spec
	}
	if g < 1 {
		g = 1
	}
	return g
}

// nextWake is when the next Step is due: the next full sync or probe tick.
func (m *Machine) nextWake() time.Time {
	if m.state >= Terminated {
		return time.Time{}
	}
	return earliest(m.syncAt, m.nextProbe())
}
