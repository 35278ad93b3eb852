package podlifecycle

import (
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podphase"
	v1 "k8s.io/api/core/v1"
)

// progress is how far the sync carrying out m.plan has gone: what it
// issued that a later resume must not issue again.
type progress struct {
	// sandboxStopped: the KillSandbox of a KillPod plan was issued.
	sandboxStopped bool
	// sandboxAsked: its CreateSandbox was issued; the starts follow once
	// the sandbox is ready.
	sandboxAsked bool
	// kills are the instances of the plan's toKill, by ID: the sync goes on
	// once they all stopped (section 4.1 step 2).
	kills []instRef
}

// sync is one full kubelet sync at now.
func (m *Machine) sync(now time.Time, res *Result) {
	m.dirty, m.heldUpdate, m.sandboxBlocked = false, false, time.Time{}
	m.nsync++
	m.relistAt = time.Time{}
	if m.hookKilled != "" && m.exited(m.hookKilled) {
		// The relist this sync waited for found the killed container
		// exited, after the sync began: its pod worker syncs once more at
		// the next relist (rule 4.5, oracle case "poststart-fails").
		m.hookKilled, m.relistAt = "", now.Add(relistPeriod)
	}
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
	status, generated := m.lastStatus, false
	if !m.hookKillUnderWay() {
		m.readinessRuns(now) // asked for by the status generation
		status, generated = m.generate(now, false, res), true
	}
	m.markShown(now, generated)
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
	for i := range m.ctrs {
		m.ctrs[i].busyAtPlan = m.ctrs[i].inFlight
	}
	m.plan = m.computePodActions(m.plan)
	m.prog = progress{kills: m.prog.kills[:0]}
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
	case m.pendingErr && m.sandboxRelist():
		delay = 0
		m.syncAt = now
		return
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
	if m.endedWorker() {
		// Each sync starts the ended worker again, whose first run stores
		// a result that changes and syncs the pod at the next relist
		// (rule 4.5, oracle case gen-142).
		m.relistAt = earliest(m.relistAt, now.Add(relistPeriod))
	}
}

// endedWorker reports whether a probe worker ended because its container
// exited and will not run again (section 6, step 5). The kubelet's sync
// starts the probe workers of the pod's containers again (AddPod), and a
// new worker's first run stores the initial value and then Failure for
// the stopped container, a change that syncs the pod, whose sync starts
// another: while the pod runs, it is synced at every relist.
func (m *Machine) endedWorker() bool {
	for i := range m.ctrs {
		c := &m.ctrs[i]
		if !probed(c) || c.insts[0].state == containerstate.RuntimeRunning {
			continue
		}
		for p := Startup; p <= Liveness; p++ {
			if probeSpec(c.spec, p) != nil && c.insts[0].probes[p-1].ended {
				return true
			}
		}
	}
	return false
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
	if p.createSandbox {
		m.notePurgeRefs()
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
		m.prog.kills = append(m.prog.kills, instRef{c: m.indexOf(k.c), id: k.in.id})
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

// notePurgeRefs keeps, for each init container, the finish of its newest
// exited instance before the whole-pod kill and the purge of a plan with a
// new sandbox: the starts after the purge are backed off against the
// status the sync began with, not an instance the kill stops (4.2 step 1).
func (m *Machine) notePurgeRefs() {
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
	if !m.prog.sandboxStopped && m.sb.exists {
		res.Actions = append(res.Actions, Action{Kind: KillSandbox, Attempt: m.sb.attempt})
		m.sb.stopping = m.sb.ready
		m.prog.sandboxStopped = true
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
	m.prog.sandboxAsked = true
	return time.Time{}, false // the starts of the plan wait for the sandbox
}

// killsDone reports whether every instance the plan kills has stopped (or
// is gone).
func (m *Machine) killsDone() bool {
	for _, r := range m.prog.kills {
		if r.c < 0 {
			continue
		}
		if in := m.ctrs[r.c].instance(r.id); in != nil && in.state != containerstate.RuntimeExited {
			return false
		}
	}
	return true
}

// resume goes on with the sync whose kills were under way (m.cont): the
// kubelet's SyncPod blocks on each kill, so the rest of its plan (the
// sandbox, the prune, the starts) follows only once they are answered,
// with the plan decided when the sync began. Nothing else is decided
// meanwhile. Once done, the next sync is due at once, as the kubelet's
// relist after a sync that acted finds the stopped containers.
func (m *Machine) resume(now time.Time, res *Result) {
	if m.prog.sandboxAsked {
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
		m.sandboxReadyStatus(now, res)
		crashExpiry := m.startPhase(now, res)
		m.endCont()
		m.schedule(now, crashExpiry, time.Time{})
		if !m.pendingErr && crashExpiry.IsZero() && !m.inFlight() {
			// Nothing of the sync is left to answer (the runtime already
			// reported its starts): the relist on demand after a sync
			// without error (a back-off is one) syncs at once (rule 4.1).
			m.syncAt = now
		}
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

// nextWake is when the next Step is due: the next full sync or probe tick.
func (m *Machine) nextWake() time.Time {
	if m.state >= Terminated {
		return time.Time{}
	}
	at := m.syncAt
	if !at.After(m.last) && m.syncBlocked() {
		at = time.Time{} // the answer that ends the wait syncs the pod
	}
	return earliest(earliest(at, m.relistAt), earliest(m.nextProbe(), m.nextStoppedTick()))
}

// hookKillUnderWay reports whether a container killed for its failed
// postStart hook has not exited yet: the kubelet kills it inside the
// SyncPod that started it, so no status shows it meanwhile (not even
// running and ready for the moment between the hook's failure and the
// exit, which would move the Ready condition's transition time).
func (m *Machine) hookKillUnderWay() bool {
	for i := range m.ctrs {
		for j := range m.ctrs[i].insts {
			in := &m.ctrs[i].insts[j]
			if in.kill.active && in.kill.reason == KillFailedPostStartHook && in.state != containerstate.RuntimeExited {
				return true
			}
		}
	}
	return false
}

// relistPeriod is the period of the kubelet's relist (its generic PLEG's).
const relistPeriod = time.Second

// exited reports whether the instance id is known to have exited, or is no
// longer kept.
func (m *Machine) exited(id string) bool {
	for i := range m.ctrs {
		if in := m.ctrs[i].instance(id); in != nil {
			return in.state == containerstate.RuntimeExited
		}
	}
	return true
}

// inFlight reports whether a pull or start of some container awaits its
// answer.
func (m *Machine) inFlight() bool {
	for i := range m.ctrs {
		if m.ctrs[i].inFlight {
			return true
		}
	}
	return false
}

// syncBlocked reports whether the sync under way still waits on a call the
// kubelet's SyncPod blocks on: a pull, a start or a postStart hook. Its pod
// worker syncs the pod again only once they returned, so the answers that
// came so far show in no status yet (a slow pull keeps the pod's status as
// the sync began; a postStart hook keeps its container from showing
// running, oracle case "poststart-fails"). A deletion waits too: the
// kubelet's pod worker runs the terminating sync only once SyncPod
// returned (the deletion cancels the sync's context, which the runtime's
// SyncPod does not use), so a container started behind a slow pull of a
// pod deleted meanwhile runs its postStart hook to its end before it is
// stopped (oracle case gen-15).
func (m *Machine) syncBlocked() bool {
	for i := range m.ctrs {
		if m.ctrs[i].inFlight || m.ctrs[i].postStart {
			return true
		}
	}
	return false
}
