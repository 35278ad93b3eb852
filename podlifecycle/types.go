package podlifecycle

import (
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

// ObservationKind says what a runtime observed. Each kind uses the
// [Observation] fields its documentation names; the others must be zero.
type ObservationKind uint8

// The observation kinds.
const (
	// SandboxReady: sandbox Attempt is ready with pod IP IP (empty for a
	// host-network pod). It answers [CreateSandbox].
	SandboxReady ObservationKind = iota + 1
	// SandboxNotReady: sandbox Attempt is gone or not ready any more (the
	// runtime lost it, or it answers [KillSandbox]).
	SandboxNotReady
	// SandboxCreateFailed: [CreateSandbox] for Attempt failed with Message.
	SandboxCreateFailed
	// ImagePresent: Image is on the node (the runner's image inventory); an
	// IfNotPresent container with that image is then not pulled.
	ImagePresent
	// ImagePulled: the [PullImage] for Container's Image succeeded; Duration
	// is how long the pull took and Size the image size in bytes.
	ImagePulled
	// ImagePullFailed: the [PullImage] for Container's Image failed with the
	// runtime's error text Message (a text starting with
	// "RegistryUnavailable" or "SignatureValidationFailed" selects that
	// error, spec/podlifecycle.md section 5).
	ImagePullFailed
	// ContainerCreated: the runtime created instance ContainerID of Container
	// from the image whose ref is ImageRef (optional), with Resources and
	// User (optional).
	ContainerCreated
	// ContainerCreateFailed: creating Container failed. Reason is
	// CreateContainerError (the default when empty) or
	// CreateContainerConfigError; Message is the error text.
	ContainerCreateFailed
	// ContainerStarted: instance ContainerID of Container runs since At. A
	// non-empty ImageRef and non-nil Resources and User replace those of
	// ContainerCreated.
	ContainerStarted
	// ContainerStartFailed: starting instance ContainerID failed with
	// Message (RunContainerError). The instance stays created.
	ContainerStartFailed
	// ContainerExited: instance ContainerID exited at At with ExitCode and
	// the runtime's Reason ("Completed", "Error", "OOMKilled", or empty)
	// and Message.
	ContainerExited
	// ContainerUnknown: the runtime reports instance ContainerID UNKNOWN.
	ContainerUnknown
	// ContainerRemoved: instance ContainerID is gone from the runtime (it
	// answers [RemoveContainer]).
	ContainerRemoved
	// ProbeResult: one run of Probe on instance ContainerID gave Outcome,
	// with Message as the probe's output or error text.
	ProbeResult
	// HookResult: Hook on instance ContainerID finished; Failed says whether
	// it failed, Message is the runtime's error (for an exec hook, the CRI
	// client's "command '<cmd>' exited with <code>: <stderr>") and Output
	// what an exec hook printed; the machine words the handler's message
	// around them as the kubelet does (HookFailedMessage).
	HookResult
)

// Observation is one thing the runtime observed since the previous sync: a
// tagged value whose Kind says which fields are set. Observations are
// applied in order; a slice of them is what a relist finds.
type Observation struct {
	// Kind says what was observed.
	Kind ObservationKind
	// At is when it happened. Zero means the now of the Step it is handed
	// to. It must not be later than that now.
	At time.Time
	// Container is the container's name in the spec (empty for sandbox
	// and image-inventory observations).
	Container string
	// ContainerID identifies the container instance, "<runtime>://<id>".
	ContainerID string
	// Attempt is the sandbox attempt.
	Attempt uint32
	// IP is the pod IP of a ready sandbox.
	IP string
	// Image is the image of ImagePresent and ImagePulled.
	Image string
	// ImageRef is, for ContainerCreated and ContainerStarted, the runtime's
	// ref of the instance's image (the CRI container status's imageRef,
	// such as "docker.io/library/nginx@sha256:<digest>"): the container
	// status's imageID. Empty reports none, and the status has no imageID.
	ImageRef string
	// Resources are, for ContainerCreated and ContainerStarted, the CPU and
	// memory resources the runtime reports it applied to the instance (the
	// CRI container status's resources); nil reports none, and the
	// kubelet's rules for missing values apply (spec/containerstate.md
	// section 4.6). A running instance's become the container status's
	// resources. The machine keeps a copy.
	Resources *containerstate.ActuatedResources
	// User is, for ContainerCreated and ContainerStarted, the user the
	// runtime reports the instance runs as (the container status's user);
	// nil reports none. The machine keeps a copy.
	User *v1.ContainerUser
	// ExitCode is the exit code of ContainerExited.
	ExitCode int32
	// Reason and Message are the runtime's words (see each kind).
	Reason, Message string
	// Output is what an exec hook printed, for HookResult.
	Output string
	// Probe and Outcome are the probe and its outcome of ProbeResult.
	Probe   Probe
	Outcome ProbeOutcome
	// Hook and Failed are the hook and whether it failed, for HookResult.
	Hook   Hook
	Failed bool
	// Duration is how long an image pull took; Size the image's size in
	// bytes.
	Duration time.Duration
	Size     int64
	// MissingSecrets are, for ImagePullFailed, the pod's named image pull
	// secrets the runner could not retrieve; they add the Warning
	// FailedToRetrieveImagePullSecret (spec/podlifecycle.md section 4.1).
	MissingSecrets []string
}

// ActionKind says what a runtime is asked to do.
type ActionKind uint8

// The action kinds.
const (
	// CreateSandbox: create sandbox Attempt. Answered by SandboxReady or
	// SandboxCreateFailed.
	CreateSandbox ActionKind = iota + 1
	// KillSandbox: stop every sandbox of the pod (Attempt is the newest),
	// ready or not, as every whole-pod kill does. Answered by
	// SandboxNotReady; the actions after it in the Result do not wait for
	// the answer.
	KillSandbox
	// PullImage: make Image available for Container under PullPolicy
	// (Always or IfNotPresent; the machine never asks for a Never image).
	// Answered by ImagePulled or ImagePullFailed. When it fails, the
	// runner skips the StartContainer of the same container that follows
	// it in the same Result.
	PullImage
	// StartContainer: create and start Container (kind Kind) from Image,
	// as its RestartCount'th restart. Answered by ContainerCreated then
	// ContainerStarted, or by ContainerCreateFailed / ContainerStartFailed.
	// When a regular init container's start fails, the runner skips the
	// remaining StartContainer actions of the Result (spec/podlifecycle.md
	// section 4.1, step 6).
	StartContainer
	// KillContainer: stop instance ContainerID of Container with the grace
	// period Grace (at least 2 s, spec/podlifecycle.md section 7.4; the
	// runtime sends SIGKILL when it runs out). Reason and Message say why.
	// Answered by ContainerExited (or ContainerRemoved / ContainerUnknown).
	KillContainer
	// RemoveContainer: remove instance ContainerID, which is not running:
	// a RestartAllContainers reset (keeping its logs), the purge of every
	// init container instance before a new sandbox, or the prune of an
	// init container's older exited instances (spec/podlifecycle.md section
	// 4.1 steps 2 and 3). Answered by ContainerRemoved; the machine drops
	// purged and pruned instances at once and ignores the answer.
	RemoveContainer
	// RunHook: run Hook of instance ContainerID. A postStart hook follows
	// the StartContainer it belongs to and blocks the next start of the
	// same Result. Answered by HookResult.
	RunHook
	// RunProbe: run Probe once on instance ContainerID. Answered by
	// ProbeResult. With Options.Version 1.35 or 1.36 an exec probe is not
	// asked for once the pod is being deleted: the machine records the
	// errored Unhealthy event the kubelet of those minors records instead
	// (docs/versions.md row PL-V5).
	RunProbe
)

// Action is one thing the runtime should do, a tagged value whose Kind
// says which fields are set. A Result's actions are carried out in order.
type Action struct {
	// Kind says what to do.
	Kind ActionKind
	// Container is the container's name (empty for sandbox actions) and
	// ContainerKind the list of the spec it is in.
	Container     string
	ContainerKind containerstate.Kind
	// ContainerID is the instance a kill, removal, hook or probe is for.
	ContainerID string
	// Attempt is the sandbox attempt of CreateSandbox and KillSandbox.
	Attempt uint32
	// Image and PullPolicy are the image of PullImage and StartContainer,
	// as written in the spec, and its effective pull policy.
	Image      string
	PullPolicy v1.PullPolicy
	// RestartCount is the restart count of the instance StartContainer
	// creates.
	RestartCount int32
	// Grace is the grace period of KillContainer, in whole seconds, and
	// for RunHook of a PreStop hook the time the hook has before the
	// container is stopped (the kill's grace): a hook still running then
	// is ended by the stop, as the kubelet's is.
	Grace time.Duration
	// Reason is why a container is killed; Message is the Killing
	// event's text (spec/podlifecycle.md section 3.8).
	Reason  KillReason
	Message string
	// Hook is the hook of RunHook.
	Hook Hook
	// Probe is the probe of RunProbe.
	Probe Probe
}

// KillReason is why the kubelet kills a container (spec/podlifecycle.md
// section 3.8).
type KillReason uint8

// The kill reasons.
const (
	// KillUnknown is a whole-pod kill, a termination or an unknown state.
	KillUnknown KillReason = iota
	// KillChanged is a container whose image changed.
	KillChanged
	// KillLivenessProbe is a liveness failure.
	KillLivenessProbe
	// KillStartupProbe is a startup probe failure.
	KillStartupProbe
	// KillFailedPostStartHook is a failed postStart hook.
	KillFailedPostStartHook
	// KillRestartAllContainers is a RestartAllContainers reset.
	KillRestartAllContainers
)

// Probe names a container probe.
type Probe uint8

// The probes.
const (
	// Startup is the startupProbe.
	Startup Probe = iota + 1
	// Readiness is the readinessProbe.
	Readiness
	// Liveness is the livenessProbe.
	Liveness
)

// ProbeOutcome is the outcome of one probe run, before thresholds.
type ProbeOutcome uint8

// The probe outcomes (spec/podlifecycle.md section 6, step 10).
const (
	// ProbeSuccess is a probe that passed.
	ProbeSuccess ProbeOutcome = iota + 1
	// ProbeWarning passed with a warning (an HTTP redirect); it counts as
	// a success and records ProbeWarning.
	ProbeWarning
	// ProbeFailure is a probe that failed.
	ProbeFailure
	// ProbeError is a probe that could not be run; its result is
	// discarded after an Unhealthy event.
	ProbeError
)

// Hook names a lifecycle hook.
type Hook uint8

// The hooks.
const (
	// PostStart runs right after a container starts.
	PostStart Hook = iota + 1
	// PreStop runs before a container is stopped.
	PreStop
)

// Event is an event the kubelet would record about the pod.
type Event struct {
	// Type is v1.EventTypeNormal or v1.EventTypeWarning.
	Type string
	// Reason is one of the Reason constants.
	Reason string
	// Message is the exact message.
	Message string
	// FieldPath is the involved object's field path:
	// spec.containers{name}, spec.initContainers{name},
	// spec.ephemeralContainers{name}, or "" for the pod itself.
	FieldPath string
}

// WorkerState is where the pod worker is with the pod; it never goes
// backwards (spec/podlifecycle.md section 1).
type WorkerState uint8

// The pod worker states.
const (
	// Syncing: the pod runs.
	Syncing WorkerState = iota
	// Terminating: its containers are being stopped.
	Terminating
	// Terminated: every container and sandbox is stopped.
	Terminated
	// Finished: the final status was produced; nothing more happens.
	Finished
)

// Result is what one sync decided. Reuse one Result across calls of
// [Machine.StepTo] to keep steady-state syncs free of allocations: StepTo
// truncates and refills its slices, so what a previous call returned in
// them is overwritten. Copy what must outlive the next call.
type Result struct {
	// Actions are what the runtime should do now, in order.
	Actions []Action
	// Statuses are the status versions this sync produced, in order:
	// none when nothing changed, two when the sync created the sandbox
	// (spec/podlifecycle.md section 15, decision 6).
	Statuses []v1.PodStatus
	// Events are the events the kubelet would record, in order.
	Events []Event
	// NextSync is when the next sync is due (spec/podlifecycle.md section
	// 11, item 4): the machine's exact instant, no jitter unless
	// Options.Rand is set. It is zero once Finished: nothing more is due.
	NextSync time.Time
	// State is the pod worker's state after this sync.
	State WorkerState
	// Finished is true once every container and sandbox stopped after a
	// deletion or a terminal phase, and the terminal status is in
	// Statuses or was in an earlier Result: the pod is ready for
	// statussync's TerminatePod.
	Finished bool
}

// Reset empties r, keeping its slices' storage.
func (r *Result) Reset() {
	if r == nil {
		return
	}
	r.Actions = r.Actions[:0]
	r.Statuses = r.Statuses[:0]
	r.Events = r.Events[:0]
	r.NextSync = time.Time{}
	r.State = Syncing
	r.Finished = false
}

// Rand is a source of random numbers; *math/rand/v2.Rand and
// *math/rand.Rand satisfy it. It adds the kubelet's jitter to probe ticks
// and requeues.
type Rand interface{ Float64() float64 }
