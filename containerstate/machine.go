package containerstate

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Machine is the state of one container of a pod, moved by the events a
// runtime reports and the kubelet's own actions. It computes the container's
// status with the same rules as [Options.Convert]: each accepted event
// updates the runtime view (the two newest instances, the last start error,
// the probe results) and the status is converted from it with the previous
// status as the old one, as the kubelet does at every sync.
//
// A Machine is not safe for concurrent use. Step never allocates for an
// accepted event.
type Machine struct {
	opts      Options
	container *v1.Container // a private deep copy
	t         target

	status statusValue

	newest, prev       Instance
	hasNewest, hasPrev bool
	// retired are the IDs of the instances replaced before prev, newest
	// last, in a ring so that Step never allocates.
	retired            [RetiredIDs]string
	retiredLen         int
	attempts           int32 // instances created so far: the next one's restart count
	imageID            string
	startErr           StartError
	hasStartErr        bool
	startErrEpoch      int32 // attempts when startErr was recorded
	startup, readiness ProbeResult
	unknownSince       time.Time

	last    time.Time
	hasLast bool
}

// RetiredIDs is how many replaced instances, beyond the previous one, a
// Machine remembers so that it can refuse events about them. A runtime
// garbage-collects dead instances long before that many accumulate.
const RetiredIDs = 16

// NewMachine returns a machine for container name of the pod, with the
// default options, in the state the kubelet reports before the runtime has
// the container: Waiting with reason ContainerCreating, or PodInitializing
// when the pod has init containers.
func NewMachine(pod Pod, name string) (*Machine, error) {
	return DefaultOptions().NewMachine(pod, name)
}

// NewMachine returns a machine for container name of the pod with these
// options. It returns an [*InputError] for a nil spec or a name the spec
// lacks, and an [*OptionError] for invalid options.
func (o Options) NewMachine(pod Pod, name string) (*Machine, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	t, err := resolve(pod, name)
	if err != nil {
		return nil, err
	}
	c := t.container.DeepCopy()
	spec := pod.Spec.DeepCopy()
	t.container = *c
	t.pod.Spec = spec
	m := &Machine{opts: o, container: c, t: t}
	m.status = o.convert(&m.t, statusValue{}, false, nil, nil, nil, time.Time{}, time.Time{})
	o.applyProbes(&m.t, &m.status, &Probes{}, time.Time{})
	return m, nil
}

// Name returns the container's name.
func (m *Machine) Name() string { return m.t.container.Name }

// Kind returns which list of the pod spec the container is in.
func (m *Machine) Kind() Kind { return m.t.kind }

// State returns the state the container's status reports.
func (m *Machine) State() State { return m.status.state.kind }

// RestartCount returns the status's restartCount.
func (m *Machine) RestartCount() int32 { return m.status.restartCount }

// Ready returns the status's ready field.
func (m *Machine) Ready() bool { return m.status.ready }

// Started returns the status's started field (false when unset).
func (m *Machine) Started() bool { return m.status.hasStarted && m.status.started }

// Last returns the time of the last accepted event, and false before any.
func (m *Machine) Last() (time.Time, bool) { return m.last, m.hasLast }

// Newest returns the newest runtime instance of the container, and false
// when the runtime has none.
func (m *Machine) Newest() (Instance, bool) { return m.newest, m.hasNewest }

// ShouldBeRestarted reports whether the kubelet would start the container
// (again) now: the pod is not being deleted and the newest instance is
// absent, created, unknown, or exited with a restart allowed
// (ShouldContainerBeRestarted).
func (m *Machine) ShouldBeRestarted() bool {
	return m.opts.shouldBeRestarted(&m.t, m.newestPtr())
}

func (m *Machine) newestPtr() *Instance {
	if m.hasNewest {
		return &m.newest
	}
	return nil
}

// Status returns the container status the kubelet would report after the
// events accepted so far.
func (m *Machine) Status() v1.ContainerStatus { return m.status.toAPI() }

// Step applies one event. It returns a [*StepError] wrapping ErrUnknownEvent,
// ErrInvalidEvent, ErrStale, ErrOlderInstance, ErrBackwards or
// ErrTerminatedRunning when the event is impossible, and then leaves the
// machine exactly as it was. Everything a relisting runtime can report is
// accepted, including skipped states (an instance first seen exited) and the
// same observation repeated.
func (m *Machine) Step(ev Event) error {
	n := *m
	if err := n.apply(&ev); err != nil {
		return &StepError{Container: m.t.container.Name, Event: ev, Last: m.last, Err: err}
	}
	n.last, n.hasLast = ev.At, true
	newest := n.newestPtr()
	var prev *Instance
	if n.hasPrev {
		prev = &n.prev
	}
	var startErr *StartError
	if n.hasStartErr {
		startErr = &n.startErr
	}
	n.status = n.opts.convert(&n.t, n.status, true, newest, prev, startErr, ev.At, n.unknownSince)
	probes := Probes{Startup: n.startup, Readiness: n.readiness}
	n.opts.applyProbes(&n.t, &n.status, &probes, ev.At)
	*m = n
	return nil
}

func (m *Machine) apply(ev *Event) error {
	if ev.Kind < PullStarted || ev.Kind > PodChanged {
		return ErrUnknownEvent
	}
	if ev.At.IsZero() {
		return ErrInvalidEvent
	}
	if m.hasLast && ev.At.Before(m.last) {
		return ErrStale
	}
	switch ev.Kind {
	case PullStarted, LivenessProbe:
		if ev.Kind == LivenessProbe && ev.Result > ProbeFailure {
			return ErrInvalidEvent
		}
		return nil
	case PullFailed, PullBackOff, CreateFailed, StartFailed, BackOff:
		reason, ok := failureReason(ev)
		if !ok {
			return ErrInvalidEvent
		}
		m.startErr, m.hasStartErr, m.startErrEpoch = StartError{Reason: reason, Message: ev.Message}, true, m.attempts
		return nil
	case PullSucceeded:
		m.imageID = ev.ImageID
		return nil
	case StartupProbe, ReadinessProbe:
		if ev.Result > ProbeFailure || !m.hasNewest {
			return ErrInvalidEvent
		}
		if ev.ContainerID != "" && ev.ContainerID != m.newest.ID {
			return ErrOlderInstance
		}
		if ev.Kind == StartupProbe {
			m.startup = ev.Result
		} else {
			m.readiness = ev.Result
		}
		return nil
	case PodChanged:
		m.t.pod.PodFacts = ev.Pod
		return nil
	case Removed:
		return m.remove(ev)
	}
	return m.observe(ev)
}

var runtimeStateOf = [...]RuntimeState{Created: RuntimeCreated, Started: RuntimeRunning, Exited: RuntimeExited, Unknown: RuntimeUnknown}

// observe applies a runtime state report about one instance.
func (m *Machine) observe(ev *Event) error {
	if ev.ContainerID == "" {
		return ErrNoContainerID
	}
	to := runtimeStateOf[ev.Kind]
	switch {
	case m.hasNewest && ev.ContainerID == m.newest.ID:
		return m.advance(ev, to)
	case m.hasPrev && ev.ContainerID == m.prev.ID, m.isRetired(ev.ContainerID):
		return ErrOlderInstance
	}
	// A new instance. One still alive in our view was lost to a relist
	// without its exit being seen: the kubelet's word for that is
	// ContainerStatusUnknown, exit 137.
	if m.hasNewest && m.newest.State != RuntimeExited {
		m.newest.State = RuntimeExited
		m.newest.ExitCode = ExitCodeUnknown
		m.newest.Reason, m.newest.Message = ReasonContainerStatusUnknown, MessageUnknownTerminated
		m.newest.FinishedAt = ev.At
	}
	if m.hasPrev {
		m.retire(m.prev.ID)
	}
	if m.hasNewest {
		m.prev, m.hasPrev = m.newest, true
	}
	image := ev.Image
	if image == "" {
		image = m.t.container.Image
	}
	imageID := ev.ImageID
	if imageID == "" {
		imageID = m.imageID
	}
	m.newest = Instance{ID: ev.ContainerID, CreatedAt: ev.At, Image: image, ImageID: imageID, RestartCount: m.attempts}
	m.hasNewest = true
	m.attempts++
	m.startup, m.readiness = ProbeNone, ProbeNone
	m.unknownSince = time.Time{}
	return m.advance(ev, to)
}

// advance moves the newest instance to runtime state to.
func (m *Machine) advance(ev *Event, to RuntimeState) error {
	inst := &m.newest
	from := inst.State
	switch from {
	case RuntimeExited:
		if to == RuntimeExited && ev.ExitCode == inst.ExitCode && ev.Reason == inst.Reason && ev.Message == inst.Message {
			return nil // the same exit, relisted
		}
		return ErrTerminatedRunning
	case RuntimeRunning, RuntimeUnknown:
		if to == RuntimeCreated {
			return ErrBackwards
		}
	}
	switch to {
	case RuntimeRunning:
		// A start time the runtime gives wins; otherwise the first time the
		// instance was seen running stays, across an UNKNOWN spell.
		if !ev.StartedAt.IsZero() {
			inst.StartedAt = ev.StartedAt
		} else if inst.StartedAt.IsZero() {
			inst.StartedAt = ev.At
		}
		m.hasStartErr = false
	case RuntimeExited:
		// An error recorded before this instance was created is about an
		// earlier attempt: this one was started. One recorded since (a
		// postStart hook failure) stands until a start succeeds.
		if m.startErrEpoch < m.attempts {
			m.hasStartErr = false
		}
		if !ev.StartedAt.IsZero() {
			inst.StartedAt = ev.StartedAt
		}
		inst.FinishedAt = ev.At
		inst.ExitCode = ev.ExitCode
		inst.Reason, inst.Message = ev.Reason, ev.Message
	case RuntimeUnknown:
		if from != RuntimeUnknown {
			m.unknownSince = ev.At
		}
	}
	if to != RuntimeUnknown {
		m.unknownSince = time.Time{}
	}
	inst.State = to
	return nil
}

// remove applies a Removed event.
func (m *Machine) remove(ev *Event) error {
	switch {
	case ev.ContainerID == "":
		return ErrNoContainerID
	case m.hasPrev && ev.ContainerID == m.prev.ID:
		m.retire(m.prev.ID)
		m.prev, m.hasPrev = Instance{}, false
	case m.hasNewest && ev.ContainerID == m.newest.ID:
		m.retire(m.newest.ID)
		m.newest, m.hasNewest = m.prev, m.hasPrev
		m.prev, m.hasPrev = Instance{}, false
		m.startup, m.readiness = ProbeNone, ProbeNone
		m.unknownSince = time.Time{}
	default:
		return ErrOlderInstance
	}
	return nil
}

func (m *Machine) retire(id string) {
	m.retired[m.retiredLen%RetiredIDs] = id
	m.retiredLen++
}

func (m *Machine) isRetired(id string) bool {
	for i := range min(m.retiredLen, RetiredIDs) {
		if m.retired[i] == id {
			return true
		}
	}
	return false
}
