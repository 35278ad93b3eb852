package simruntime

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podlifecycle"
	v1 "k8s.io/api/core/v1"
)

// Runtime is a simulated container runtime for one pod. It carries out a
// machine's [podlifecycle.Action]s in virtual time, following each
// container's [Behaviour], and holds the [podlifecycle.Observation]s they
// lead to until their time comes: a pull that takes 20 s reports at +20 s,
// an instance that runs 30 s reports its exit 30 s after it started.
//
// Within one Result, pulls, starts and postStart hooks happen one after the
// other, as the kubelet's sync does them; kills, preStop hooks, probes and
// sandbox calls happen at the time Do is called.
//
// Use New; the zero value has no pod and does nothing. A Runtime is not
// safe for concurrent use.
type Runtime struct {
	opts    Options
	idBase  string // "sim://" or "sim://<token>-"
	ctrs    map[string]*simCtr
	queue   []timedObs
	seq     int
	ids     int
	attempt uint32
	ready   bool
	host    bool
}

type simCtr struct {
	name    string
	kind    containerstate.Kind
	regInit bool
	b       Behaviour
	pulls   int
	insts   map[string]*simInst
	probes  [3]*v1.Probe  // the spec's startup, readiness and liveness probes
	hooks   *v1.Lifecycle // the spec's hooks
	// applied is what a runtime that applied the container's spec reports
	// for a running instance.
	applied *containerstate.ActuatedResources
}

type simInst struct {
	id      string
	started time.Time
	exitAt  time.Time // zero: runs until killed
	exitSeq int       // the queued exit, 0 none
	seqs    []int     // its queued create, start and postStart reports
	preStop int       // its queued preStop result, 0 none
	hookAt  time.Time // when that result comes
	gone    bool      // exited or removed
	// hookOpen: its preStop hook outlasts the kill's grace; its result,
	// due at hookAt unless the container stops first, is queued by the
	// stop (closeHook). hookTie: it takes exactly the grace, so it ends a
	// moment after the stop is called.
	hookOpen, hookTie bool
}

type timedObs struct {
	seq int
	obs podlifecycle.Observation
}

// New returns a runtime for pod with the given behaviours; a container
// without one gets DefaultBehaviour. Options out of range return an
// *OptionError; a nil pod, or behaviours for a container the pod lacks, an
// *InputError.
func New(opts Options, pod *v1.Pod, bs Behaviours) (*Runtime, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if pod == nil {
		return nil, &InputError{Reason: "nil pod"}
	}
	r := &Runtime{opts: opts, idBase: Scheme, ctrs: map[string]*simCtr{}, host: pod.Spec.HostNetwork}
	if opts.Token != "" {
		r.idBase = Scheme + opts.Token + "-"
	}
	add := func(c *v1.Container, kind containerstate.Kind) {
		reg := kind == containerstate.Init && !containerstate.IsSidecar(c)
		b, ok := bs[c.Name]
		if !ok {
			b = DefaultBehaviour(reg)
		}
		r.ctrs[c.Name] = &simCtr{name: c.Name, kind: kind, regInit: reg, b: b, insts: map[string]*simInst{},
			applied: Applied(pod.Spec.Resources, c), probes: [3]*v1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe}, hooks: c.Lifecycle}
	}
	for i := range pod.Spec.InitContainers {
		add(&pod.Spec.InitContainers[i], containerstate.Init)
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i], containerstate.Regular)
	}
	for i := range pod.Spec.EphemeralContainers {
		add((*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon), containerstate.Ephemeral)
	}
	for name := range bs {
		if _, ok := r.ctrs[name]; !ok {
			return nil, &InputError{Container: name, Reason: "behaviour for a container the pod does not have"}
		}
	}
	return r, nil
}

// Next returns when the runtime next has something to report, or the zero
// time when nothing is pending.
func (r *Runtime) Next() time.Time {
	if r == nil || len(r.queue) == 0 {
		return time.Time{}
	}
	return r.queue[0].obs.At
}

// Due removes and returns, in order, the observations that happened at or
// before now.
func (r *Runtime) Due(now time.Time) []podlifecycle.Observation {
	if r == nil {
		return nil
	}
	n := 0
	for n < len(r.queue) && !r.queue[n].obs.At.After(now) {
		n++
	}
	if n == 0 {
		return nil
	}
	out := make([]podlifecycle.Observation, n)
	for i := range out {
		out[i] = r.queue[i].obs
	}
	r.queue = append(r.queue[:0], r.queue[n:]...)
	return out
}

// push queues o, keeping the queue ordered by time and then by order of
// arrival; it returns the entry's sequence number.
func (r *Runtime) push(o podlifecycle.Observation) int {
	r.seq++
	e := timedObs{seq: r.seq, obs: o}
	i := sort.Search(len(r.queue), func(i int) bool { return r.queue[i].obs.At.After(o.At) })
	r.queue = append(r.queue, timedObs{})
	copy(r.queue[i+1:], r.queue[i:])
	r.queue[i] = e
	return e.seq
}

// cancel drops the queued entry seq.
func (r *Runtime) cancel(seq int) {
	for i := range r.queue {
		if r.queue[i].seq == seq {
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			return
		}
	}
}

// Do carries out actions, issued by a Step at now. It never fails on a
// Runtime made by New: an action the simulation cannot carry out (for a
// container the pod lacks, an instance that is gone) is skipped, as a
// runtime skips a call about a container it no longer has. A zero Runtime
// returns ErrNotInitialized and does nothing.
func (r *Runtime) Do(now time.Time, actions []podlifecycle.Action) error {
	if r == nil || r.ctrs == nil {
		return ErrNotInitialized
	}
	s := syncCalls{now: now, cur: now, lastID: map[string]string{}}
	for _, a := range actions {
		switch a.Kind {
		case podlifecycle.CreateSandbox:
			r.createSandbox(now, a)
			continue
		case podlifecycle.KillSandbox:
			r.killSandbox(now, a)
			continue
		}
		c := r.ctrs[a.Container]
		if c == nil {
			continue
		}
		switch a.Kind {
		case podlifecycle.PullImage:
			r.pull(&s, c, a)
		case podlifecycle.StartContainer:
			r.start(&s, c, a)
		case podlifecycle.RunHook:
			r.runHook(&s, c, a)
		case podlifecycle.KillContainer:
			r.kill(now, c, a)
		case podlifecycle.RemoveContainer:
			r.remove(now, c, a)
		case podlifecycle.RunProbe:
			r.probe(now, c, a)
		}
	}
	return nil
}

// syncCalls is what one Do carries from an action to the next, as the
// runtime calls of one kubelet sync follow each other.
type syncCalls struct {
	now        time.Time
	cur        time.Time         // the sync's own clock: pulls and postStart hooks block it
	skip       string            // a container whose pull failed: its start is skipped
	stopStarts bool              // a regular init container failed to start
	lastID     map[string]string // each container's instance started by this Do
}

// createSandbox makes the sandbox of attempt a.Attempt, ready at once.
func (r *Runtime) createSandbox(now time.Time, a podlifecycle.Action) {
	r.attempt, r.ready = a.Attempt, true
	ip := ""
	if !r.host {
		ip = r.opts.IP
	}
	r.push(podlifecycle.Observation{Kind: podlifecycle.SandboxReady, At: now, Attempt: a.Attempt, IP: ip})
}

// killSandbox stops the sandbox: whatever still runs in it dies with it; a
// start still to come (behind a slow pull or hook) fails.
func (r *Runtime) killSandbox(now time.Time, a podlifecycle.Action) {
	for _, name := range r.names() {
		sc := r.ctrs[name]
		for _, in := range sc.sortedInsts() {
			if in.started.After(now) {
				for _, seq := range append(in.seqs, in.exitSeq) {
					r.cancel(seq)
				}
				in.gone, in.exitSeq = true, 0
				delete(sc.insts, in.id)
				r.push(podlifecycle.Observation{Kind: podlifecycle.ContainerCreateFailed, At: in.started, Container: name,
					Message: "failed to create containerd container: sandbox " + strconv.Itoa(int(r.attempt)) + " is not ready"})
				continue
			}
			r.stop(sc, in, now, 137)
		}
	}
	r.ready = false
	r.push(podlifecycle.Observation{Kind: podlifecycle.SandboxNotReady, At: now, Attempt: a.Attempt})
}

// pull pulls c's image, blocking the sync for its pull time; a failed pull
// skips c's start, and every later start when c is a regular init container.
func (r *Runtime) pull(s *syncCalls, c *simCtr, a podlifecycle.Action) {
	c.pulls++
	s.cur = s.cur.Add(c.b.PullTime)
	if c.b.PullAlwaysFails || c.pulls <= c.b.PullFailures {
		r.push(podlifecycle.Observation{Kind: podlifecycle.ImagePullFailed, At: s.cur, Container: c.name, Image: a.Image,
			Message: "rpc error: code = NotFound desc = failed to pull and unpack image \"" + pulledName(a.Image) + "\": not found"})
		s.skip = c.name
		if c.regInit {
			s.stopStarts = true
		}
		return
	}
	r.push(podlifecycle.Observation{Kind: podlifecycle.ImagePulled, At: s.cur, Container: c.name, Image: a.Image,
		Duration: c.b.PullTime, Size: r.opts.ImageSize})
}

// start creates and starts a new instance of c, which exits after its run
// time when c's behaviour exits.
func (r *Runtime) start(s *syncCalls, c *simCtr, a podlifecycle.Action) {
	if s.stopStarts || s.skip == c.name {
		return
	}
	r.ids++
	in := &simInst{id: r.idBase + c.name + "-" + strconv.Itoa(r.ids), started: s.cur}
	c.insts[in.id] = in
	s.lastID[c.name] = in.id
	in.seqs = append(in.seqs,
		r.push(podlifecycle.Observation{Kind: podlifecycle.ContainerCreated, At: s.cur, Container: c.name, ContainerID: in.id,
			ImageRef: ImageRef(a.Image)}),
		r.push(podlifecycle.Observation{Kind: podlifecycle.ContainerStarted, At: s.cur, Container: c.name, ContainerID: in.id,
			Resources: c.applied.DeepCopy()}))
	if c.b.Exits {
		in.exitAt = s.cur.Add(c.b.Run)
		in.exitSeq = r.push(exitObs(c.name, in.id, in.exitAt, c.b.ExitCode))
	}
}

// runHook runs a PostStart hook (of the instance this sync started; it
// blocks the sync) or a PreStop hook (of the instance being killed).
func (r *Runtime) runHook(s *syncCalls, c *simCtr, a podlifecycle.Action) {
	id, h := a.ContainerID, c.b.PreStop
	var from, at time.Time
	if a.Hook == podlifecycle.PostStart {
		id, h = s.lastID[c.name], c.b.PostStart
		if id == "" {
			return // its start was skipped
		}
		from = s.cur
		s.cur = s.cur.Add(h.Duration)
		at = s.cur
	} else {
		from, at = s.now, s.now.Add(h.Duration)
	}
	in := c.insts[id]
	if in == nil || in.gone {
		return
	}
	o := podlifecycle.Observation{Kind: podlifecycle.HookResult, At: at, Container: c.name, ContainerID: id, Hook: a.Hook, Failed: h.Fail}
	if h.Fail {
		o.Message = c.hookError(a.Hook, 1)
	}
	// A hook cannot outlive its container: it ends with it, killed (exit
	// 137), as the oracle node's runtime ends it (a postStart hook that
	// fails so is the kubelet's FailedPostStartHook). The kubelet execs a
	// hook a moment after the call before it returned, so a container
	// that exits when the hook would end exits first, and one that exits
	// when the hook begins is gone before the exec, which fails.
	if !in.exitAt.IsZero() && !in.exitAt.After(o.At) {
		o.At, o.Failed, o.Message = in.exitAt, true, c.hookError(a.Hook, 137)
		if !in.exitAt.After(from) {
			o.At, o.Message = from, ExecExitedMessage
		}
	}
	if a.Hook == podlifecycle.PreStop {
		if !o.Failed && a.Grace > 0 && h.Duration >= a.Grace {
			// The hook takes its whole grace or more: the kubelet, whose
			// grace timer started before the hook's exec, stops the
			// container when the grace is up, and the hook ends no later
			// than that stop (exit).
			in.hookOpen, in.hookTie, in.hookAt = true, h.Duration == a.Grace, o.At
			return
		}
		in.preStop, in.hookAt = r.push(o), o.At
		return
	}
	s.cur = o.At // the sync waited for the hook's end
	in.seqs = append(in.seqs, r.push(o))
}

// kill stops an instance of c after the grace, or at once on SIGTERM when
// c does not ignore it for longer.
func (r *Runtime) kill(now time.Time, c *simCtr, a podlifecycle.Action) {
	in := c.insts[a.ContainerID]
	if in == nil || in.gone {
		return
	}
	if !in.exitAt.IsZero() && !in.exitAt.After(now) {
		r.closeHook(c, in, now, in.exitAt)
		return // already stopped; its exit is reported
	}
	at, code := now.Add(a.Grace), int32(137)
	if c.b.IgnoreSigterm < a.Grace {
		at, code = now.Add(c.b.IgnoreSigterm), 143
	}
	if !in.exitAt.IsZero() && !at.Before(in.exitAt) {
		r.closeHook(c, in, now, in.exitAt) // it exits on its own first
		return
	}
	r.closeHook(c, in, now, at)
	r.exit(c, in, at, code)
}

// remove removes an instance of c, once it has exited.
func (r *Runtime) remove(now time.Time, c *simCtr, a podlifecycle.Action) {
	at := now
	if in := c.insts[a.ContainerID]; in != nil {
		if !in.exitAt.IsZero() && in.exitAt.After(at) {
			at = in.exitAt
		}
		// A hook still running reports its result late, about an instance
		// the machine has retired; the machine accepts and ignores it.
		in.gone = true
	}
	r.push(podlifecycle.Observation{Kind: podlifecycle.ContainerRemoved, At: at, Container: c.name, ContainerID: a.ContainerID})
}

// probe runs one probe of an instance of c and reports its result as a CRI
// runtime words it.
func (r *Runtime) probe(now time.Time, c *simCtr, a podlifecycle.Action) {
	in := c.insts[a.ContainerID]
	if in == nil {
		return
	}
	o := podlifecycle.Observation{Kind: podlifecycle.ProbeResult, At: now, Container: c.name, ContainerID: in.id, Probe: a.Probe}
	exec := c.execProbe(a.Probe)
	switch {
	case !in.exitAt.IsZero() && !in.exitAt.After(now) && exec:
		// The runtime refuses an exec in a container that has exited
		// (containerd's error); the kubelet takes it as an error.
		o.Outcome, o.Message = podlifecycle.ProbeError, rpcUnknown+"failed to exec in container: container is in CONTAINER_EXITED state"
	case !in.exitAt.IsZero() && !in.exitAt.After(now):
		o.Outcome, o.Message = podlifecycle.ProbeFailure, "container not running"
	default:
		o.Outcome = c.b.outcome(a.Probe, now.Sub(in.started))
		switch o.Outcome {
		case podlifecycle.ProbeFailure:
			o.Message = "probe failed"
		case podlifecycle.ProbeWarning:
			if exec {
				// Only an HTTP probe can pass with a warning.
				o.Outcome = podlifecycle.ProbeSuccess
				break
			}
			o.Message = "redirect"
		case podlifecycle.ProbeError:
			o.Message = "probe could not run"
			if exec {
				o.Message = rpcUnknown + o.Message // the exec call's gRPC error
			}
		}
	}
	r.push(o)
}

// rpcUnknown starts the text of a gRPC error of code Unknown, as a CRI
// runtime's failed exec reaches the kubelet.
const rpcUnknown = "rpc error: code = Unknown desc = "

// execProbe reports whether the container's probe p runs a command.
func (c *simCtr) execProbe(p podlifecycle.Probe) bool {
	if p < podlifecycle.Startup || p > podlifecycle.Liveness {
		return false
	}
	pr := c.probes[p-1]
	return pr != nil && pr.Exec != nil
}

// stop ends instance in at now with code unless it already ended by then.
func (r *Runtime) stop(c *simCtr, in *simInst, now time.Time, code int32) {
	if in.gone || (!in.exitAt.IsZero() && !in.exitAt.After(now)) {
		return
	}
	r.closeHook(c, in, now, now)
	r.exit(c, in, now, code)
}

// closeHook queues the result of in's open preStop hook (hookOpen), whose
// container is stopped at stop and exits at at: the hook's own, or a
// failure when the container exits first.
func (r *Runtime) closeHook(c *simCtr, in *simInst, stop, at time.Time) {
	if !in.hookOpen {
		return
	}
	in.hookOpen = false
	end := in.hookAt
	if in.hookTie && stop.After(end) {
		end = stop
	}
	o := podlifecycle.Observation{Kind: podlifecycle.HookResult, At: end, Container: c.name, ContainerID: in.id,
		Hook: podlifecycle.PreStop, Failed: c.b.PreStop.Fail}
	if o.Failed {
		o.Message = c.hookError(podlifecycle.PreStop, 1)
	}
	if !end.Before(at) {
		o.At, o.Failed, o.Message = at, true, c.hookError(podlifecycle.PreStop, 137)
	}
	in.preStop = r.push(o)
}

// exit (re)schedules the exit of in at at with code; a preStop hook still
// running then fails at that time.
func (r *Runtime) exit(c *simCtr, in *simInst, at time.Time, code int32) {
	r.cancel(in.exitSeq)
	if in.preStop != 0 && in.hookAt.After(at) {
		r.cancel(in.preStop)
		in.preStop, in.hookAt = r.push(podlifecycle.Observation{Kind: podlifecycle.HookResult, At: at, Container: c.name,
			ContainerID: in.id, Hook: podlifecycle.PreStop, Failed: true, Message: c.hookError(podlifecycle.PreStop, 137)}), at
	}
	in.exitAt = at
	in.exitSeq = r.push(exitObs(c.name, in.id, at, code))
}

func (r *Runtime) names() []string {
	out := make([]string, 0, len(r.ctrs))
	for n := range r.ctrs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (c *simCtr) sortedInsts() []*simInst {
	out := make([]*simInst, 0, len(c.insts))
	for _, in := range c.insts {
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func exitObs(name, id string, at time.Time, code int32) podlifecycle.Observation {
	return podlifecycle.Observation{Kind: podlifecycle.ContainerExited, At: at, Container: name, ContainerID: id, ExitCode: code}
}

// ExecExitedMessage is the error of an exec hook in a container that has
// already exited, as the kubelet's CRI client reports containerd's.
const ExecExitedMessage = "rpc error: code = Unknown desc = failed to exec in container: container is in CONTAINER_EXITED state"

// hookError is the error of hook h of c that exited with code, as a CRI
// client words a failed exec ("command 'drain' exited with 1: ", with the
// hook's empty stderr), or a plain one for a hook that is no exec.
func (c *simCtr) hookError(h podlifecycle.Hook, code int) string {
	var handler *v1.LifecycleHandler
	if c.hooks != nil {
		handler = c.hooks.PostStart
		if h == podlifecycle.PreStop {
			handler = c.hooks.PreStop
		}
	}
	if handler == nil || handler.Exec == nil {
		return "hook failed"
	}
	return "command '" + strings.Join(handler.Exec.Command, " ") + "' exited with " + strconv.Itoa(code) + ": "
}
