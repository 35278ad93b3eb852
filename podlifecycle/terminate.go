package podlifecycle

import "time"

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
