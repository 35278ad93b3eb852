package podlifecycle

import (
	"time"

	"github.com/nodestate/nodestate/containerstate"
)

// killState is the kubelet's killContainer for one instance, spread over
// syncs (spec/podlifecycle.md section 7.4): Killing at once, the preStop
// hook for at most g, the sidecar turn for at most what is left, then the
// stop with at least 2 s.
type killState struct {
	active   bool
	reason   KillReason
	message  string
	begin    time.Time
	g        int64 // seconds left of the grace
	hook     bool  // the preStop hook runs
	hookEnd  time.Time
	waitFrom time.Time
	order    bool // the sidecar order applies
	podKill  bool // part of a whole-pod kill
	stopped  bool // KillContainer issued
	restart  bool // start the container again once it stopped
}

// podGrace is the grace of a kill for reason r before the 2 s floor
// (section 3.8): deletionGracePeriodSeconds, else
// terminationGracePeriodSeconds (the probe's own for the probe reasons),
// else 2.
func (m *Machine) podGrace(c *ctr, r KillReason) int64 {
	p := m.pod
	if p.DeletionGracePeriodSeconds != nil {
		return *p.DeletionGracePeriodSeconds
	}
	if p.Spec.TerminationGracePeriodSeconds == nil {
		return 2
	}
	g := *p.Spec.TerminationGracePeriodSeconds
	var probe Probe
	switch r {
	case KillLivenessProbe:
		probe = Liveness
	case KillStartupProbe:
		probe = Startup
	}
	if probe != 0 {
		if s := probeSpec(c.spec, probe); s != nil && s.TerminationGracePeriodSeconds != nil {
			g = *s.TerminationGracePeriodSeconds
		}
	}
	return g
}

// beginKill starts killing instance in of c with grace g (seconds): the
// Killing event now and the preStop hook when there is one and g > 0. The
// stop follows from progressKill, which every caller runs after all kills
// of the sync began, so that the sidecar order sees them all.
func (m *Machine) beginKill(c *ctr, in *inst, r KillReason, message string, g int64, order, podKill bool, now time.Time, res *Result) {
	if in.kill.active {
		return
	}
	in.kill = killState{active: true, reason: r, message: message, begin: now, g: g, waitFrom: now, order: order, podKill: podKill}
	res.Events = append(res.Events, normal(ReasonKilling, message, c.fieldPath))
	if c.spec != nil && c.spec.Lifecycle != nil && c.spec.Lifecycle.PreStop != nil && g > 0 && r != KillRestartAllContainers {
		in.kill.hook = true
		in.kill.hookEnd = now.Add(time.Duration(g) * time.Second)
		res.Actions = append(res.Actions, Action{Kind: RunHook, Container: c.name, ContainerKind: c.kind, ContainerID: in.id, Hook: PreStop,
			Grace: time.Duration(g) * time.Second})
	}
}

// progressKill moves a kill on at now and returns when it needs to be
// looked at again (zero: not before an observation).
func (m *Machine) progressKill(c *ctr, in *inst, now time.Time, res *Result) time.Time {
	k := &in.kill
	if !k.active || k.stopped || in.state == containerstate.RuntimeExited {
		return time.Time{}
	}
	if k.hook {
		if now.Before(k.hookEnd) {
			return k.hookEnd
		}
		// The hook is left running; its time is spent (7.4 step 4).
		k.hook, k.g, k.waitFrom = false, 0, k.hookEnd
	}
	if k.order && k.g > 0 {
		turn, ok := m.turnTime(c)
		switch {
		case ok:
			if turn.Before(k.waitFrom) {
				turn = k.waitFrom
			}
			w := wholeSeconds(turn.Sub(k.waitFrom))
			if w > k.g {
				w = k.g
			}
			k.g -= w
		case !now.Before(k.waitFrom.Add(time.Duration(k.g) * time.Second)):
			k.g = 0 // waited out (7.4 step 5)
		default:
			return k.waitFrom.Add(time.Duration(k.g) * time.Second)
		}
	}
	g := k.g
	if g < 2 {
		g = 2
	}
	k.stopped = true
	res.Actions = append(res.Actions, Action{Kind: KillContainer, Container: c.name, ContainerKind: c.kind,
		ContainerID: in.id, Grace: time.Duration(g) * time.Second, Reason: k.reason, Message: k.message})
	return time.Time{}
}

// turnTime reports whether sidecar c's turn to stop has come (section 7.5):
// every regular container of the whole-pod kill and every later sidecar of
// it stopped. It returns the last of their stop times.
func (m *Machine) turnTime(c *ctr) (time.Time, bool) {
	var t time.Time
	for i := range m.ctrs {
		o := &m.ctrs[i]
		if o == c || len(o.insts) == 0 {
			continue
		}
		wait := o.kind == containerstate.Regular || (o.kind == containerstate.Init && o.sidecar && o.index > c.index)
		if !wait {
			continue
		}
		for j := range o.insts {
			in := &o.insts[j]
			// A kill from an earlier sync still under way counts too: the
			// kubelet's kill is synchronous, so it would be over by now.
			if !in.kill.active {
				continue
			}
			if in.state != containerstate.RuntimeExited {
				return time.Time{}, false
			}
			if in.finished.After(t) {
				t = in.finished
			}
		}
	}
	return t, true
}

// killPod starts the whole-pod kill of every running instance (section 7.4
// and 7.5): regular, init and ephemeral containers at once, sidecars in
// reverse order. override, when >= 0, replaces each kill's pod grace. It
// reports whether every instance has stopped.
func (m *Machine) killPod(now time.Time, override int64, res *Result) bool {
	hasSidecar := false
	for i := 0; i < m.nInit; i++ {
		hasSidecar = hasSidecar || m.ctrs[i].sidecar
	}
	done := true
	// Regular containers first so that the sidecars' turn sees them.
	for pass := 0; pass < 2; pass++ {
		for i := range m.ctrs {
			c := &m.ctrs[i]
			if (pass == 0) == c.sidecar {
				continue
			}
			for j := range c.insts {
				in := &c.insts[j]
				if in.state != containerstate.RuntimeRunning && !(in.kill.active && in.state != containerstate.RuntimeExited) {
					continue
				}
				done = false
				if in.kill.active {
					continue
				}
				g := override
				if g < 0 {
					g = m.podGrace(c, KillUnknown)
				}
				m.beginKill(c, in, KillUnknown, StoppingMessage(c.name), g, hasSidecar && c.sidecar, true, now, res)
			}
		}
	}
	return done
}

// progressKills moves every kill under way on and returns the earliest
// timer.
func (m *Machine) progressKills(now time.Time, res *Result) time.Time {
	var t time.Time
	for i := range m.ctrs {
		c := &m.ctrs[i]
		for j := range c.insts {
			t = earliest(t, m.progressKill(c, &c.insts[j], now, res))
		}
	}
	return t
}
