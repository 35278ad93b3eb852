package podlifecycle

import (
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

// apply takes one validated observation into the machine's view of the
// runtime, recording the events the kubelet records when the runtime call
// behind it returns. Each kind of report has its handler below: the
// sandbox's, the image's, a start's failure, a container instance's state,
// a probe's result and a hook's.
func (m *Machine) apply(now time.Time, o *Observation, res *Result) {
	at := o.At
	if at.IsZero() {
		at = now
	}
	switch o.Kind {
	case SandboxReady, SandboxNotReady, SandboxCreateFailed:
		m.applySandbox(at, o, res)
		return
	case ImagePresent:
		if !m.images[o.Image] {
			m.images[o.Image] = true
		}
		return
	}
	c := m.find(o.Container)
	fp := c.fieldPath
	if o.ContainerID != "" && c.instance(o.ContainerID) == nil && m.isRetired(c.name, o.ContainerID) {
		// A late report about an instance the machine no longer keeps:
		// nothing of it is left to change; counted, not acted on.
		m.stats.RetiredObservations++
		return
	}
	switch o.Kind {
	case ImagePulled, ImagePullFailed:
		// A pull is a step of the sync that asked for it, not a runtime
		// event: the start after it decides whether the sync ended well
		// (a relist at once, rule 4.1) or with an error (the requeue,
		// rule 4.5).
		m.applyPull(c, at, o, fp, res)
	case ContainerCreateFailed, ContainerStartFailed:
		m.applyStartFailure(c, at, o, fp, res)
	case ProbeResult:
		in := c.instance(o.ContainerID)
		if in != &c.insts[0] || in.state != containerstate.RuntimeRunning {
			return // a result for an instance that is no longer current counts for nothing
		}
		if m.probeResult(c, in, o, fp, res) {
			m.dirty = true
		}
	case HookResult:
		m.applyHook(c, at, o, fp, res)
		m.dirty = true
	default:
		m.applyInstance(c, at, o, fp, res)
		m.dirty = true
	}
}

// applySandbox takes a report about the pod's sandbox.
func (m *Machine) applySandbox(at time.Time, o *Observation, res *Result) {
	switch o.Kind {
	case SandboxReady:
		if !m.sb.exists || o.Attempt >= m.sb.attempt {
			m.sb.attempt, m.sb.exists, m.sb.ready, m.sb.ip = o.Attempt, true, true, o.IP
			m.sb.creating, m.sb.changed, m.sb.stopping = false, false, false
			m.sb.readyAt = m.nsync
			m.dirty = true
		}
	case SandboxNotReady:
		// A sandbox that was not ready already changes nothing: the
		// answer to a KillSandbox of a stopped sandbox is no runtime
		// event, and the kubelet's relist finds nothing to sync.
		if o.Attempt == m.sb.attempt && (m.sb.ready || m.sb.stopping || m.sb.creating && m.sb.pending == o.Attempt) {
			m.sb.ready, m.sb.stopping = false, false
			// The old sandbox's stop does not end the creation of a new
			// one issued after it in the same sync.
			if m.sb.creating && m.sb.pending == o.Attempt {
				m.sb.creating = false
			}
			m.dirty = true
		}
	case SandboxCreateFailed:
		m.sb.creating = false
		m.clearPurgedRC()
		if m.pod.DeletionTimestamp == nil {
			res.Events = append(res.Events, warning(ReasonFailedCreatePodSandBox, FailedCreatePodSandBoxMessage(o.Message), ""))
		}
		m.failedSync(at)
	}
}

// applyPull takes the answer to a PullImage of c's image.
func (m *Machine) applyPull(c *ctr, at time.Time, o *Observation, fp string, res *Result) {
	img := o.Image
	if img == "" {
		img = c.spec.Image
	}
	if o.Kind == ImagePulled {
		if !m.images[img] {
			m.images[img] = true
		}
		res.Events = append(res.Events, normal(ReasonPulled, PulledMessage(img, o.Duration, o.Duration, o.Size), fp))
		m.pulls.GC(at)
		return
	}
	ev := containerstate.PullErrorEvent(at, img, o.Message)
	res.Events = append(res.Events,
		warning(ReasonFailed, PullFailedMessage(img, o.Message), fp),
		warning(ReasonFailed, ErrorMessage(ev.Reason), fp))
	if len(o.MissingSecrets) > 0 && ev.Reason == containerstate.ReasonErrImagePull {
		res.Events = append(res.Events, warning(ReasonFailedToRetrieveImagePullSecret,
			FailedToRetrieveImagePullSecretMessage(o.MissingSecrets), ""))
	}
	c.setStartErr(ev.Reason, ev.Message)
	c.lastPull = c.startErr
	m.pulls.Next(containerstate.ImagePullKey(m.uid, img), at, at)
	c.inFlight, c.postStart = false, false
	m.failedSync(at)
}

// applyStartFailure takes a refused create or start of c: the start's
// error shows in c's status and the sync ends with it (the requeue).
func (m *Machine) applyStartFailure(c *ctr, at time.Time, o *Observation, fp string, res *Result) {
	reason := containerstate.ReasonRunContainerError
	if o.Kind == ContainerCreateFailed {
		reason = o.Reason
		if reason == "" {
			reason = containerstate.ReasonCreateContainerError
		}
	}
	c.setStartErr(reason, o.Message)
	res.Events = append(res.Events, warning(ReasonFailed, ErrorMessage(o.Message), fp))
	c.inFlight, c.postStart = false, false
	m.failedSync(at)
}

// applyInstance takes a change of state of one of c's instances: created,
// started, exited, unknown or removed.
func (m *Machine) applyInstance(c *ctr, at time.Time, o *Observation, fp string, res *Result) {
	switch o.Kind {
	case ContainerCreated:
		if c.instance(o.ContainerID) == nil {
			rc := int32(0)
			switch {
			case c.inFlight:
				rc = c.startRC // the answer to the machine's start
			case len(c.insts) > 0:
				rc = c.insts[0].restartCount + 1
			}
			if len(c.insts) == maxInstances {
				m.retire(c.name, c.insts[maxInstances-1].id)
			}
			c.push(inst{id: o.ContainerID, state: containerstate.RuntimeCreated, created: at,
				image: c.spec.Image, restartCount: rc, sandbox: m.sb.attempt})
			res.Events = append(res.Events, normal(ReasonCreated, CreatedMessage(c.name, m.opts.Version), fp))
		}
		c.instance(o.ContainerID).report(o)
	case ContainerStarted:
		in := c.instance(o.ContainerID)
		in.report(o)
		if in.state == containerstate.RuntimeCreated {
			in.state, in.started = containerstate.RuntimeRunning, at
			res.Events = append(res.Events, normal(ReasonStarted, StartedMessage(c.name, m.opts.Version), fp))
			if c.spec.LivenessProbe != nil {
				in.probes[Liveness-1].result = containerstate.ProbeSuccess // section 6: the initial value
			}
		}
		c.hasStartErr, c.inFlight, c.everStarted, c.removedByReset = false, false, true, false
	case ContainerExited:
		in := c.instance(o.ContainerID)
		if in.state != containerstate.RuntimeExited {
			in.state, in.finished, in.exitCode = containerstate.RuntimeExited, at, o.ExitCode
			in.reason, in.message = o.Reason, o.Message
			if in.reason == "" {
				in.reason = containerstate.ReasonCompleted
				if o.ExitCode != 0 {
					in.reason = containerstate.ReasonError
				}
			}
			if in.started.IsZero() {
				in.started = at
			}
		}
		c.inFlight, c.postStart = false, false
	case ContainerUnknown:
		in := c.instance(o.ContainerID)
		if in.state != containerstate.RuntimeUnknown && in.state != containerstate.RuntimeExited {
			in.state, in.unknownSince = containerstate.RuntimeUnknown, at
		}
	case ContainerRemoved:
		if in := c.instance(o.ContainerID); in != nil && in.removing {
			c.removedByReset = true // 4.4: no back-off for the next start
		}
		if c.remove(o.ContainerID) {
			m.retire(c.name, o.ContainerID)
		}
	}
}

// postStartFailed takes the failure of the postStart hook of c's running
// instance in at at: FailedPostStartHook, the hook's error in c's waiting
// state, and the kill, which the kubelet carries out inside the sync that
// started the container (rule 3.8).
func (m *Machine) postStartFailed(c *ctr, in *inst, at time.Time, msg, output string, res *Result) {
	res.Events = append(res.Events, warning(ReasonFailedPostStartHook, MessagePostStartHookFailed, c.fieldPath))
	var h *v1.LifecycleHandler
	if c.spec.Lifecycle != nil {
		h = c.spec.Lifecycle.PostStart
	}
	c.setStartErr(containerstate.ReasonPostStartHookError, HookFailedMessage(h, c.name, PodRef(m.name, m.ns, m.uid), msg, output))
	m.beginKill(c, in, KillFailedPostStartHook, MessageKillFailedPostStartHook,
		m.podGrace(c, KillFailedPostStartHook), false, false, at, res)
	if at.Sub(in.started) >= relistPeriod {
		// A relist during the hook found the container running: the
		// kubelet's pod worker holds that for the sync after this one,
		// and the relist that sync waits for finds the kill's exit, which
		// makes one more (rule 4.5).
		m.hookKilled = in.id
	}
}

// applyHook takes the result of a PostStart or PreStop hook of c.
func (m *Machine) applyHook(c *ctr, at time.Time, o *Observation, fp string, res *Result) {
	in := c.instance(o.ContainerID)
	switch o.Hook {
	case PostStart:
		c.postStart = false
		// A deletion does not cancel the hook: the kubelet runs SyncPod,
		// and the hooks in it, on a context no deletion cancels (rule
		// 3.8).
		if o.Failed && in.state == containerstate.RuntimeRunning && !in.kill.active {
			m.postStartFailed(c, in, at, o.Message, o.Output, res)
		}
	case PreStop:
		if o.Failed {
			res.Events = append(res.Events, warning(ReasonFailedPreStopHook, MessagePreStopHookFailed, fp))
		}
		if k := &in.kill; k.active && k.hook {
			k.hook = false
			k.g -= wholeSeconds(at.Sub(k.begin))
			k.waitFrom = at
		}
	}
}

// report keeps what the runtime reports about instance in with o: its
// image ref, resources and user, each when o has one.
func (in *inst) report(o *Observation) {
	if o.ImageRef != "" {
		in.imageRef = o.ImageRef
	}
	if o.Resources != nil {
		in.resources = o.Resources.DeepCopy()
	}
	if o.User != nil {
		in.user = o.User.DeepCopy()
	}
}

// failedSync records that the sync whose call failed at at ended with an
// error: the failure is no runtime event, so it does not sync at once; the
// pod worker requeues the pod (rule 4.5, section 15 decision 5), unless the
// sync made the sandbox (sandboxRelist).
//
// sandboxRelist reports whether the sync under way is the rest of the one
// that made the pod's sandbox, and uses that up: the kubelet's relist finds
// the new sandbox and syncs the pod at once, error or not (rule 4.5), so a
// first pull, create or config error shows in a status about a second after
// the pod started (oracle case "image-pull-fails"), not at the requeue.
func (m *Machine) sandboxRelist() bool {
	if !m.sb.ready || m.sb.readyAt == 0 || m.nsync != m.sb.readyAt+1 {
		return false
	}
	m.sb.readyAt = 0
	return true
}

// failedSync records (see above).
func (m *Machine) failedSync(at time.Time) {
	if m.sandboxRelist() {
		m.syncAt = at
		return
	}
	d := min(m.opts.ErrorRequeue, m.opts.SyncFrequency)
	if m.opts.Rand != nil {
		d += time.Duration(m.opts.Rand.Float64() * 0.5 * float64(d))
	}
	if t := at.Add(d); m.syncAt.IsZero() || t.Before(m.syncAt) {
		m.syncAt = t
	}
}

// setStartErr stores the reason cache entry of c.
func (c *ctr) setStartErr(reason, message string) {
	c.startErr = containerstate.StartError{Reason: reason, Message: message}
	c.hasStartErr = true
}

// instance returns the instance with id, or nil.
func (c *ctr) instance(id string) *inst {
	for i := range c.insts {
		if c.insts[i].id == id {
			return &c.insts[i]
		}
	}
	return nil
}

// push adds in as the newest instance, dropping the oldest beyond
// maxInstances. The list grows one instance at a time: most containers
// never restart, and a node holds the instances of every pod it runs.
func (c *ctr) push(in inst) {
	if n := len(c.insts); n < maxInstances {
		if n == cap(c.insts) {
			c.insts = append(make([]inst, 0, n+1), c.insts...)
		}
		c.insts = c.insts[:n+1]
	}
	copy(c.insts[1:], c.insts[:len(c.insts)-1])
	c.insts[0] = in
}

// remove drops instance id and reports whether it had it.
func (c *ctr) remove(id string) bool {
	for i := range c.insts {
		if c.insts[i].id == id {
			c.insts = append(c.insts[:i], c.insts[i+1:]...)
			return true
		}
	}
	return false
}

// retire remembers that instance id of container name is no longer kept,
// so that late observations of it are accepted and ignored.
func (m *Machine) retire(name, id string) {
	if m.retired == nil {
		m.retired = make(map[string]string)
	}
	m.retired[id] = name
}

// isRetired reports whether id is a retired instance of name.
func (m *Machine) isRetired(name, id string) bool {
	owner, ok := m.retired[id]
	return ok && owner == name
}

// wholeSeconds is d in whole seconds, as the kubelet subtracts time spent.
func wholeSeconds(d time.Duration) int64 {
	if d < 0 {
		return 0
	}
	return int64(d / time.Second)
}
