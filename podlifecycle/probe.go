package podlifecycle

import (
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
	v1 "k8s.io/api/core/v1"
)

// probeState is one probe worker of one container instance
// (spec/podlifecycle.md section 6). A new instance starts with the zero
// value: readiness not ready, liveness not failed, startup unknown.
type probeState struct {
	result   containerstate.ProbeResult // the stored result
	count    int32                      // consecutive identical outcomes
	lastOK   bool                       // the counted outcome
	counted  bool
	onHold   bool
	ended    bool
	inFlight bool
	// seen: the worker has seen the instance's container ID in a status
	// and stored the initial value (section 6, step 3).
	seen bool
	// again: a run was asked while one was in flight; it follows at once
	// (the worker's one-slot trigger channel).
	again bool
	next  time.Time // the next tick; zero before the first
}

// probeSpec returns c's probe p, or nil.
func probeSpec(c *v1.Container, p Probe) *v1.Probe {
	if c == nil {
		return nil
	}
	switch p {
	case Startup:
		return c.StartupProbe
	case Readiness:
		return c.ReadinessProbe
	case Liveness:
		return c.LivenessProbe
	}
	return nil
}

func orDefault(v, d int32) int32 {
	if v <= 0 {
		return d
	}
	return v
}

// record counts one outcome (success or failure) of probe p against its
// thresholds (section 6, steps 11 and 12) and reports whether the stored
// result changed.
func (ps *probeState) record(spec *v1.Probe, p Probe, ok bool) bool {
	if ps.counted && ps.lastOK == ok {
		ps.count++
	} else {
		ps.lastOK, ps.counted, ps.count = ok, true, 1
	}
	var threshold int32
	want := containerstate.ProbeFailure
	if ok {
		threshold, want = orDefault(spec.SuccessThreshold, 1), containerstate.ProbeSuccess
	} else {
		threshold = orDefault(spec.FailureThreshold, 3)
	}
	if ps.count < threshold {
		return false
	}
	changed := ps.result != want
	ps.result = want
	if (p == Liveness && want == containerstate.ProbeFailure) || p == Startup {
		ps.onHold, ps.count, ps.counted = true, 0, false
	}
	return changed
}

// probeResult handles one ProbeResult observation for the newest, running
// instance in; it reports whether a stored result changed.
func (m *Machine) probeResult(c *ctr, in *inst, o *Observation, fp string, res *Result) bool {
	ps := &in.probes[o.Probe-1]
	ps.inFlight = false
	if ps.again {
		// The run asked while this one was in flight follows at once and
		// restarts the ticker.
		ps.again = false
		c.readyFrom = o.At
		ps.next = m.firstTick(c, in, o.Probe)
	}
	spec := probeSpec(c.spec, o.Probe)
	if spec == nil || ps.onHold || ps.ended {
		return false
	}
	switch o.Outcome {
	case ProbeError:
		res.Events = append(res.Events, warning(ReasonUnhealthy, ProbeErroredMessage(o.Probe, "unknown", o.Message), fp))
		return false
	case ProbeWarning:
		res.Events = append(res.Events, warning(ReasonProbeWarning, ProbeWarningMessage(o.Probe, o.Message), fp))
	case ProbeFailure:
		res.Events = append(res.Events, warning(ReasonUnhealthy, ProbeFailedMessage(o.Probe, o.Message), fp))
	}
	return ps.record(spec, o.Probe, o.Outcome != ProbeFailure)
}

// started is whether instance in of c counts as started: running, and its
// startup probe (if any) stored Success.
func started(c *ctr, in *inst) bool {
	if in == nil || in.state != containerstate.RuntimeRunning {
		return false
	}
	return c.spec.StartupProbe == nil || in.probes[Startup-1].result == containerstate.ProbeSuccess
}

// cancelledExecError is the error text of an exec probe whose context was
// cancelled: the kubelet's CRI client returns the gRPC status of the
// cancelled call (code Canceled, the context's own message) unchanged, and
// the exec prober passes it on (docs/versions.md row PL-V5).
const cancelledExecError = "rpc error: code = Canceled desc = context canceled"

// execProbesCancelledAtDeletion reports whether exec probes stop running
// once the pod is being deleted: in 1.35 and 1.36 the probe workers run on
// the pod worker's sync context, which a deletion cancels, and only the
// exec handler uses it; 1.33 and 1.34 ran the workers on a background
// context and 1.37 detaches it, so their exec probes keep counting (row
// PL-V5).
func (m *Machine) execProbesCancelledAtDeletion() bool {
	v := m.opts.Version
	return v.AtLeast(kubeversion.V1_35) && !v.AtLeast(kubeversion.V1_37)
}

// probeTicks emits the probe runs due at now: on each worker's ticker, from
// the first tick at which the instance is older than initialDelaySeconds
// (section 6; section 15, decision 4).
func (m *Machine) probeTicks(now time.Time, res *Result) {
	deleting := m.pod.DeletionTimestamp != nil
	for i := range m.ctrs {
		c := &m.ctrs[i]
		if c.kind == containerstate.Ephemeral || (c.kind == containerstate.Init && !c.sidecar) || len(c.insts) == 0 || c.spec == nil {
			continue
		}
		in := &c.insts[0]
		if in.state != containerstate.RuntimeRunning || in.shownRunning.IsZero() {
			continue // no status shows it running yet: the workers wait (section 6, step 2)
		}
		for p := Startup; p <= Liveness; p++ {
			spec := probeSpec(c.spec, p)
			if spec == nil {
				continue
			}
			ps := &in.probes[p-1]
			if ps.ended || ps.onHold || ps.inFlight {
				continue
			}
			if m.state != Syncing && p != Readiness && c.kind == containerstate.Regular {
				continue // liveness and startup of regular containers stop at termination (7.3)
			}
			period := time.Duration(orDefault(spec.PeriodSeconds, 10)) * time.Second
			if ps.next.IsZero() {
				ps.next = m.firstSeenTick(c, in, p)
			}
			if now.Before(ps.next) {
				continue
			}
			for !now.Before(ps.next) {
				ps.next = ps.next.Add(period)
			}
			if deleting && p != Readiness {
				ps.result, ps.ended = containerstate.ProbeSuccess, true // section 6, step 6
				continue
			}
			isStarted := started(c, in)
			if (p == Startup && isStarted) || (p != Startup && !isStarted) {
				continue // section 6, step 8
			}
			if deleting && spec.Exec != nil && m.execProbesCancelledAtDeletion() {
				// Section 6 step 9 with the error the runtime call gives
				// for the cancelled context; the result is discarded.
				res.Events = append(res.Events, warning(ReasonUnhealthy,
					ProbeErroredMessage(p, "unknown", cancelledExecError), c.fieldPath))
				continue
			}
			ps.inFlight = true
			res.Actions = append(res.Actions, Action{Kind: RunProbe, Container: c.name, ContainerKind: c.kind,
				ContainerID: in.id, Probe: p})
		}
	}
}

// nextProbe returns the earliest probe tick still to come, or zero.
func (m *Machine) nextProbe() time.Time {
	var t time.Time
	for i := range m.ctrs {
		c := &m.ctrs[i]
		if len(c.insts) == 0 || c.insts[0].state != containerstate.RuntimeRunning || c.insts[0].shownRunning.IsZero() || c.spec == nil ||
			c.kind == containerstate.Ephemeral || (c.kind == containerstate.Init && !c.sidecar) {
			continue
		}
		in := &c.insts[0]
		for p := Startup; p <= Liveness; p++ {
			ps := &in.probes[p-1]
			if probeSpec(c.spec, p) == nil || ps.ended || ps.onHold || ps.inFlight ||
				(m.state != Syncing && p != Readiness && c.kind == containerstate.Regular) {
				continue
			}
			next := ps.next
			if next.IsZero() {
				next = m.firstSeenTick(c, in, p)
			}
			if at, ok := m.sightAt(c, in, p); ok {
				next = earliest(next, at)
			}
			t = earliest(t, next)
		}
	}
	return t
}

// earliest returns the earlier of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// markShown records, after a sync at now, that its status shows every
// newest instance that is not running as stopped, and, when the sync
// generated one, every running instance as running.
func (m *Machine) markShown(now time.Time, generated bool) {
	for i := range m.ctrs {
		c := &m.ctrs[i]
		if len(c.insts) == 0 {
			continue
		}
		in := &c.insts[0]
		switch {
		case in.state != containerstate.RuntimeRunning:
			in.shownStopped = true
		case generated && in.shownRunning.IsZero():
			in.shownRunning = now
		}
	}
}

// initialValue stores the initial value of probe p for instance in, once,
// when its worker first sees the container ID (section 6, step 3): the
// result cache has no entry for a new ID, so storing readiness Failure or
// startup Unknown is a change, and a change syncs the pod at once (rule
// 4.5; liveness Success syncs nothing, only a liveness Failure does). The
// kubelet's status showing a started container not ready thus asks for a
// readiness run, whose initial Failure syncs the pod again, whose status
// asks again: a readiness successThreshold of 2 is reached in that second
// run, not a period later (oracle case gen-28).
//
// The worker is the container's, not the instance's: the run of identical
// outcomes it counts goes on from the last instance it probed (the kubelet
// resets it only when it stores a liveness Failure or a startup result),
// so a restarted container whose readiness passed before is ready after
// its first success, whatever the successThreshold (oracle case gen-97).
func (m *Machine) initialValue(c *ctr, p Probe) {
	in := &c.insts[0]
	ps := &in.probes[p-1]
	if ps.seen {
		return
	}
	ps.seen = true
	for i := 1; i < len(c.insts); i++ {
		if prev := &c.insts[i].probes[p-1]; prev.seen {
			ps.count, ps.lastOK, ps.counted = prev.count, prev.lastOK, prev.counted
			break
		}
	}
	switch p {
	case Readiness:
		ps.result = containerstate.ProbeFailure
		m.dirty = true
	case Startup:
		m.dirty = true
	}
}

// sightTicks stores the initial values of the workers whose tick at or
// before now is the first to find their instance running in a status.
func (m *Machine) sightTicks(now time.Time) {
	for i := range m.ctrs {
		c := &m.ctrs[i]
		if !probed(c) || c.insts[0].state != containerstate.RuntimeRunning {
			continue
		}
		in := &c.insts[0]
		for p := Startup; p <= Liveness; p++ {
			if at, ok := m.sightAt(c, in, p); ok && !now.Before(at) {
				m.initialValue(c, p)
			}
		}
	}
}

// sightAt is the tick of probe p's worker that first finds running
// instance in in a status, if it is still to be taken.
func (m *Machine) sightAt(c *ctr, in *inst, p Probe) (time.Time, bool) {
	if probeSpec(c.spec, p) == nil || in.probes[p-1].seen || in.shownRunning.IsZero() {
		return time.Time{}, false
	}
	return m.tickAfterShown(c, in, p), true
}

// tickAfterShown is the first tick of probe p's worker after the status
// that first showed instance in running; a tick at that very instant is
// taken as before it.
func (m *Machine) tickAfterShown(c *ctr, in *inst, p Probe) time.Time {
	return gridAt(m.tickerFrom(c, p), probePeriod(c, p), in.shownRunning.Add(time.Nanosecond))
}

// stoppedProbe reports whether probe p of c's newest instance in, which is
// not running, still has a tick that changes something: its worker reads a
// status that shows the instance stopped, is neither ended nor on hold, and
// has not stored Failure yet (section 6, steps 4 and 5).
func stoppedProbe(c *ctr, in *inst, p Probe) bool {
	if probeSpec(c.spec, p) == nil || !in.shownStopped || in.started.IsZero() {
		return false
	}
	ps := &in.probes[p-1]
	return !ps.ended && !ps.onHold && ps.result != containerstate.ProbeFailure
}

// probed reports whether c's probes run at all: regular containers and
// sidecars.
func probed(c *ctr) bool {
	return c.spec != nil && len(c.insts) > 0 && c.kind != containerstate.Ephemeral && (c.kind != containerstate.Init || c.sidecar)
}

// stoppedTicks runs the probe ticks due at now of instances that stopped
// (section 6, step 5): a worker that finds its container not running in the
// status stores Failure without probing, and a changed result syncs the pod
// at once, as any readiness or startup change and a liveness Failure do
// (rule 4.5). So a crashed container with a readiness probe that passed is
// synced again about a period after its exit, and shows CrashLoopBackOff
// from then on. The worker ends unless the container will run again.
func (m *Machine) stoppedTicks(now time.Time) {
	if m.state != Syncing {
		return // a terminating pod's sync is not repeated for it; a terminal one's workers ended (step 1)
	}
	for i := range m.ctrs {
		c := &m.ctrs[i]
		if !probed(c) || c.insts[0].state == containerstate.RuntimeRunning {
			continue
		}
		in := &c.insts[0]
		for p := Startup; p <= Liveness; p++ {
			if !stoppedProbe(c, in, p) {
				continue
			}
			ps := &in.probes[p-1]
			next := m.stoppedTickAt(c, in, p)
			if now.Before(next) {
				continue
			}
			ps.next = next
			for !now.Before(ps.next) {
				ps.next = ps.next.Add(probePeriod(c, p))
			}
			ps.result = containerstate.ProbeFailure
			m.dirty = true
			if c.kind != containerstate.Init && !m.marked && !m.restarts(c, in.exitCode) {
				ps.ended = true
			}
		}
	}
}

// stoppedTickAt is the first tick of a stopped instance's worker that can
// see it stopped: the worker's next tick, or, for a worker that never
// ticked (the instance stopped before its first probe), the first tick of
// its period counted from the instance's start.
func (m *Machine) stoppedTickAt(c *ctr, in *inst, p Probe) time.Time {
	ps := &in.probes[p-1]
	if !ps.next.IsZero() {
		return ps.next
	}
	end := in.finished
	if end.Before(in.started) {
		end = in.started
	}
	return gridAt(m.tickerFrom(c, p), probePeriod(c, p), end)
}

func probePeriod(c *ctr, p Probe) time.Duration {
	return time.Duration(orDefault(probeSpec(c.spec, p).PeriodSeconds, 10)) * time.Second
}

// nextStoppedTick returns the earliest tick still to come that would store
// Failure for a stopped instance, or zero.
func (m *Machine) nextStoppedTick() time.Time {
	var t time.Time
	if m.state != Syncing {
		return t
	}
	for i := range m.ctrs {
		c := &m.ctrs[i]
		if !probed(c) || c.insts[0].state == containerstate.RuntimeRunning {
			continue
		}
		for p := Startup; p <= Liveness; p++ {
			if stoppedProbe(c, &c.insts[0], p) {
				t = earliest(t, m.stoppedTickAt(c, &c.insts[0], p))
			}
		}
	}
	return t
}

// tickerFrom is when probe p's worker of c last started its ticker: the
// pod's first sync, or for readiness the last run a status asked for.
func (m *Machine) tickerFrom(c *ctr, p Probe) time.Time {
	if p == Readiness && !c.readyFrom.IsZero() {
		return c.readyFrom
	}
	return m.workers
}

// gridAt is the first tick at or after t of a ticker started at from with
// period.
func gridAt(from time.Time, period time.Duration, t time.Time) time.Time {
	if !t.After(from) || period <= 0 {
		return from
	}
	n := (t.Sub(from) + period - 1) / period
	return from.Add(n * period)
}

// firstTick is the first tick of probe p's worker that probes instance in:
// the first at which the status shows it running and its whole seconds of
// age reach initialDelaySeconds (section 6, steps 3 and 7).
func (m *Machine) firstTick(c *ctr, in *inst, p Probe) time.Time {
	spec := probeSpec(c.spec, p)
	return gridAt(m.tickerFrom(c, p), probePeriod(c, p), in.started.Add(time.Duration(spec.InitialDelaySeconds)*time.Second))
}

// firstSeenTick is the first tick of probe p's worker that probes
// instance in on its ticker: firstTick, unless that comes no later than
// the status that first showed the instance running, as the worker reads
// that status (step 2); then its first tick after it (a tick at that very
// instant counts as before it). A run a status asks for (readinessRuns)
// reads the status that asked for it.
func (m *Machine) firstSeenTick(c *ctr, in *inst, p Probe) time.Time {
	t := m.firstTick(c, in, p)
	if !t.After(in.shownRunning) {
		t = m.tickAfterShown(c, in, p)
	}
	return t
}

// readinessRuns asks for a readiness run at once for every container a
// status about to be generated at now finds started, running and not
// ready (its stored result is not Success), as the prober manager's status
// update does: the run restarts the worker's ticker (containerstate.md
// section 9). The run probes only once the container is old enough
// (initialDelaySeconds); the ticker restarts either way.
func (m *Machine) readinessRuns(now time.Time) {
	for i := range m.ctrs {
		c := &m.ctrs[i]
		if !probed(c) || c.spec.ReadinessProbe == nil || c.insts[0].state != containerstate.RuntimeRunning {
			continue
		}
		in := &c.insts[0]
		ps := &in.probes[Readiness-1]
		if !started(c, in) || ps.result == containerstate.ProbeSuccess || ps.ended || ps.onHold {
			continue
		}
		if ps.inFlight {
			ps.again = true
			continue
		}
		m.initialValue(c, Readiness)
		c.readyFrom = now
		ps.next = m.firstTick(c, in, Readiness)
	}
}
