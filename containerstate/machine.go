package containerstate

import (
	"strconv"
	"strings"
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

// NewMachine returns a machine for container name of the pod with the
// options o ([DefaultOptions] for the Kubernetes 1.37 defaults), in the state
// the kubelet reports before the runtime has the container: Waiting with
// reason ContainerCreating, or PodInitializing when the pod has init
// containers. It returns an [*OptionError] (ErrInvalidOptions) for invalid
// options, and an [*InputError] (ErrInvalidInput) for a nil spec or a name
// the spec lacks.
func NewMachine(o Options, pod Pod, name string) (*Machine, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	t, err := resolve(pod, name)
	if err != nil {
		return nil, err
	}
	c := t.container.DeepCopy()
	spec := pod.Spec.DeepCopy()
	t.container = c
	t.pod.Spec = spec
	m := &Machine{opts: o, container: c, t: t}
	o.convert(&m.t, &statusValue{}, false, nil, nil, nil, time.Time{}, time.Time{}, &m.status)
	o.applyProbes(&m.t, &m.status, &Probes{}, time.Time{})
	return m, nil
}

// Name returns the container's name ("" for a zero or nil Machine).
func (m *Machine) Name() string {
	if !m.initialized() {
		return ""
	}
	return m.t.container.Name
}

// Kind returns which list of the pod spec the container is in (zero for a
// zero or nil Machine).
func (m *Machine) Kind() Kind {
	if m == nil {
		return 0
	}
	return m.t.kind
}

// State returns the state the container's status reports (NoState for a
// zero or nil Machine).
func (m *Machine) State() State {
	if m == nil {
		return NoState
	}
	return m.status.state.kind
}

// RestartCount returns the status's restartCount.
func (m *Machine) RestartCount() int32 {
	if m == nil {
		return 0
	}
	return m.status.restartCount
}

// Ready returns the status's ready field.
func (m *Machine) Ready() bool { return m != nil && m.status.ready }

// Started returns the status's started field (false when unset).
func (m *Machine) Started() bool { return m != nil && m.status.hasStarted && m.status.started }

// Last returns the time of the last accepted event, and false before any.
func (m *Machine) Last() (time.Time, bool) {
	if m == nil {
		return time.Time{}, false
	}
	return m.last, m.hasLast
}

// Newest returns the newest runtime instance of the container, and false
// when the runtime has none.
func (m *Machine) Newest() (Instance, bool) {
	if m == nil {
		return Instance{}, false
	}
	return m.newest, m.hasNewest
}

// NextWake returns when the status next changes with no event, and true;
// or false when it changes only on an event. The one such change is the end
// of nodestate's UNKNOWN grace: a Running container whose runtime state
// turned UNKNOWN is reported Terminated (ContainerStatusUnknown) once
// Options.UnknownGrace has passed since the first UNKNOWN report. A runner
// calls [Machine.Advance] at that time (or steps any later event), as the
// kubelet's next sync would. A zero or nil Machine never wakes.
func (m *Machine) NextWake() (time.Time, bool) {
	if m == nil || !m.status.unknownHeld || m.status.state.kind != Running || m.opts.UnknownGrace <= 0 {
		return time.Time{}, false
	}
	return m.unknownSince.Add(m.opts.UnknownGrace), true
}

// Advance moves the machine's time to now with nothing observed: a Tick
// event. The status changes only when a wake-up ([Machine.NextWake]) is due
// by now. It returns the errors of [Machine.Step]: a [*StepError] wrapping
// ErrTimeWentBackwards for a time before the last accepted event, and one
// wrapping ErrNotInitialized on a zero Machine.
func (m *Machine) Advance(now time.Time) error {
	return m.Step(Event{Kind: Tick, At: now})
}

// ShouldBeRestarted reports whether the kubelet would start the container
// (again) now: the pod is not being deleted and the newest instance is
// absent, created, unknown, or exited with a restart allowed
// (ShouldContainerBeRestarted). It is false for a zero or nil Machine.
func (m *Machine) ShouldBeRestarted() bool {
	if !m.initialized() {
		return false
	}
	return m.opts.shouldBeRestarted(&m.t, m.newestPtr())
}

// initialized reports whether m was made by NewMachine.
func (m *Machine) initialized() bool { return m != nil && m.container != nil }

func (m *Machine) newestPtr() *Instance {
	if m.hasNewest {
		return &m.newest
	}
	return nil
}

// Status returns the container status the kubelet would report after the
// events accepted so far; the zero ContainerStatus for a zero or nil
// Machine.
func (m *Machine) Status() v1.ContainerStatus {
	if m == nil {
		return v1.ContainerStatus{}
	}
	return m.status.toAPI(&m.t)
}

// Step applies one event. When the event is impossible it returns a
// [*StepError] saying which field was wrong, wrapping ErrUnknownEvent,
// ErrInvalidEvent, ErrTimeWentBackwards, ErrOlderInstance, ErrBackwards,
// ErrTerminatedRunning, ErrNoContainerID or ErrNotRestartable (all but
// ErrTimeWentBackwards match ErrInvalidInput), and then leaves the machine
// exactly as it was. On a zero or nil Machine it returns one wrapping
// ErrNotInitialized. Everything a relisting runtime can report is
// accepted, including skipped states (an instance first seen exited) and the
// same observation repeated.
func (m *Machine) Step(ev Event) error {
	if !m.initialized() {
		return &StepError{Event: ev, Err: ErrNotInitialized}
	}
	n := *m
	if f := n.apply(&ev); f != faultNone {
		return &StepError{Container: m.t.container.Name, Event: ev, Last: m.last, Field: faultErrs[f].field, Detail: f.detail(m, &ev), Err: faultErrs[f].err}
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
	old := n.status
	n.opts.convert(&n.t, &old, true, newest, prev, startErr, ev.At, n.unknownSince, &n.status)
	probes := Probes{Startup: n.startup, Readiness: n.readiness}
	n.opts.applyProbes(&n.t, &n.status, &probes, ev.At)
	*m = n
	return nil
}

// fault is why apply refused an event, a small value so that accepting an
// event costs nothing more; Step turns it into a sentinel, the field at
// fault and words only when the event is refused.
type fault uint8

const (
	faultNone fault = iota
	faultKind
	faultZeroTime
	faultBackwards
	faultResult
	faultReason
	faultNoInstance
	faultEmptyID
	faultReplacedID
	faultCreatedAgain
	faultExitedAgain
	faultNoRestart
)

// faultErrs gives each fault its sentinel and the Event field it is about.
var faultErrs = [...]struct {
	err   error
	field string
}{
	faultKind:         {ErrUnknownEvent, "Kind"},
	faultZeroTime:     {ErrInvalidEvent, "At"},
	faultBackwards:    {ErrTimeWentBackwards, "At"},
	faultResult:       {ErrInvalidEvent, "Result"},
	faultReason:       {ErrInvalidEvent, "Reason"},
	faultNoInstance:   {ErrInvalidEvent, ""},
	faultEmptyID:      {ErrNoContainerID, "ContainerID"},
	faultReplacedID:   {ErrOlderInstance, "ContainerID"},
	faultCreatedAgain: {ErrBackwards, "Kind"},
	faultExitedAgain:  {ErrTerminatedRunning, "ContainerID"},
	faultNoRestart:    {ErrNotRestartable, "ContainerID"},
}

// detail describes the fault in ev, with the machine m as it was before.
func (f fault) detail(m *Machine, ev *Event) string {
	switch f {
	case faultKind:
		return "undefined kind " + strconv.Itoa(int(ev.Kind))
	case faultZeroTime:
		return "zero time"
	case faultBackwards:
		return "before the last accepted event at " + m.last.UTC().Format(time.RFC3339Nano)
	case faultResult:
		return "undefined probe result " + strconv.Itoa(int(ev.Result))
	case faultReason:
		return strconv.Quote(ev.Reason) + " is not a reason of " + ev.Kind.String() + " (" + strings.Join(failureReasons[ev.Kind], ", ") + ")"
	case faultNoInstance:
		return "no container instance to probe"
	case faultEmptyID:
		return "empty"
	case faultReplacedID:
		if !m.hasNewest {
			return strconv.Quote(ev.ContainerID) + " is unknown: the runtime has no instance of the container"
		}
		return strconv.Quote(ev.ContainerID) + " is not the newest instance " + strconv.Quote(m.newest.ID)
	case faultCreatedAgain:
		return "instance " + strconv.Quote(ev.ContainerID) + " is " + m.newest.State.String() + "; it cannot be created again"
	case faultExitedAgain:
		return "instance " + strconv.Quote(ev.ContainerID) + " exited with " + strconv.Itoa(int(m.newest.ExitCode)) +
			" (" + m.newest.Reason + ") at " + m.newest.FinishedAt.UTC().Format(time.RFC3339Nano)
	case faultNoRestart:
		return "the last instance exited with " + strconv.Itoa(int(m.status.state.exitCode)) + ", which " + m.restartRule() + " does not restart"
	}
	return ""
}

// restartRule names what decided that the container is not restarted.
func (m *Machine) restartRule() string {
	switch {
	case m.t.kind == Ephemeral:
		return "an ephemeral container"
	case m.t.container.RestartPolicy != nil:
		return "the container's restartPolicy " + string(*m.t.container.RestartPolicy)
	}
	return "restartPolicy " + string(m.t.pod.Spec.RestartPolicy)
}

func (m *Machine) apply(ev *Event) fault {
	if ev.Kind < PullStarted || ev.Kind > lastKind {
		return faultKind
	}
	if ev.At.IsZero() {
		return faultZeroTime
	}
	if m.hasLast && ev.At.Before(m.last) {
		return faultBackwards
	}
	switch ev.Kind {
	case PullStarted, Tick:
		return faultNone
	case LivenessProbe:
		if ev.Result > ProbeFailure {
			return faultResult
		}
		return faultNone
	case PullFailed, PullBackOff, CreateFailed, StartFailed, BackOff:
		reason, ok := failureReason(ev)
		if !ok {
			return faultReason
		}
		m.startErr, m.hasStartErr, m.startErrEpoch = StartError{Reason: reason, Message: ev.Message}, true, m.attempts
		return faultNone
	case PullSucceeded:
		m.imageID = ev.ImageID
		return faultNone
	case StartupProbe, ReadinessProbe:
		if ev.Result > ProbeFailure {
			return faultResult
		}
		if !m.hasNewest {
			return faultNoInstance
		}
		if ev.ContainerID != "" && ev.ContainerID != m.newest.ID {
			return faultReplacedID
		}
		if ev.Kind == StartupProbe {
			m.startup = ev.Result
		} else {
			m.readiness = ev.Result
		}
		return faultNone
	case PodChanged:
		m.t.pod.PodFacts = ev.Pod
		return faultNone
	case Removed:
		return m.remove(ev)
	}
	return m.observe(ev)
}

var runtimeStateOf = [...]RuntimeState{Created: RuntimeCreated, Started: RuntimeRunning, Exited: RuntimeExited, Unknown: RuntimeUnknown}

// observe applies a runtime state report about one instance.
func (m *Machine) observe(ev *Event) fault {
	if ev.ContainerID == "" {
		return faultEmptyID
	}
	to := runtimeStateOf[ev.Kind]
	switch {
	case m.hasNewest && ev.ContainerID == m.newest.ID:
		return m.advance(ev, to)
	case m.hasPrev && ev.ContainerID == m.prev.ID, m.isRetired(ev.ContainerID):
		return faultReplacedID
	case !m.mayRunAgain():
		return faultNoRestart
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
	m.newest = Instance{ID: ev.ContainerID, CreatedAt: ev.At, Image: image, ImageID: imageID, RestartCount: m.attempts,
		Resources: ev.Resources, User: ev.User}
	m.hasNewest = true
	m.attempts++
	m.startup, m.readiness = ProbeNone, ProbeNone
	m.unknownSince = time.Time{}
	return m.advance(ev, to)
}

// mayRunAgain reports whether the kubelet can create a new instance of the
// container. It cannot once the newest instance was seen to exit and that
// exit allows no restart by the API server's rule, the rule that also keeps
// the status Terminated (section 12.1). A regular init container of a pod
// whose restartPolicy is not Never is the exception: the kubelet runs the
// init containers again when it recreates the pod's sandbox.
func (m *Machine) mayRunAgain() bool {
	if !m.hasNewest || m.newest.State != RuntimeExited || m.status.state.kind != Terminated {
		return true
	}
	if m.t.kind == Init && m.t.pod.Spec.RestartPolicy != v1.RestartPolicyNever {
		return true
	}
	return m.opts.terminatedMayRestart(&m.t, m.status.state.exitCode)
}

// advance moves the newest instance to runtime state to.
func (m *Machine) advance(ev *Event, to RuntimeState) fault {
	inst := &m.newest
	from := inst.State
	switch from {
	case RuntimeExited:
		if to == RuntimeExited && ev.ExitCode == inst.ExitCode && ev.Reason == inst.Reason && ev.Message == inst.Message {
			return faultNone // the same exit, relisted
		}
		return faultExitedAgain
	case RuntimeRunning, RuntimeUnknown:
		if to == RuntimeCreated {
			return faultCreatedAgain
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
		if ev.Resources != nil {
			inst.Resources = ev.Resources
		}
		if ev.User != nil {
			inst.User = ev.User
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
	return faultNone
}

// remove applies a Removed event.
func (m *Machine) remove(ev *Event) fault {
	switch {
	case ev.ContainerID == "":
		return faultEmptyID
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
		return faultReplacedID
	}
	return faultNone
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
