package containerstate

import (
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// State is the state of a container as the API reports it.
type State uint8

const (
	// NoState is a v1.ContainerState with none of its members set. The
	// kubelet never writes it, but another writer can.
	NoState State = iota
	// Waiting is v1.ContainerStateWaiting: not running yet, or held back.
	Waiting
	// Running is v1.ContainerStateRunning.
	Running
	// Terminated is v1.ContainerStateTerminated.
	Terminated
)

var stateNames = [...]string{NoState: "NoState", Waiting: "Waiting", Running: "Running", Terminated: "Terminated"}

// String returns the state's name, for example "Running".
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// StateOf returns the State of a v1.ContainerState. When more than one member
// is set, Terminated wins over Running, and Running over Waiting.
func StateOf(s v1.ContainerState) State { return stateFromAPI(s).kind }

// RuntimeState is a container state as a CRI runtime reports it.
type RuntimeState uint8

const (
	// RuntimeCreated is a container created but not started.
	RuntimeCreated RuntimeState = iota + 1
	// RuntimeRunning is a running container.
	RuntimeRunning
	// RuntimeExited is a container that ran, or tried to, and stopped.
	RuntimeExited
	// RuntimeUnknown is a container whose state the runtime cannot tell.
	RuntimeUnknown
)

var runtimeStateNames = [...]string{RuntimeCreated: "created", RuntimeRunning: "running", RuntimeExited: "exited", RuntimeUnknown: "unknown"}

// String returns the CRI name of the state, for example "exited".
func (s RuntimeState) String() string {
	if s >= RuntimeCreated && int(s) < len(runtimeStateNames) {
		return runtimeStateNames[s]
	}
	return "RuntimeState(" + strconv.Itoa(int(s)) + ")"
}

// Instance is one instance of a container in the runtime: what a CRI
// ListContainers plus ContainerStatus tells about it. A container that
// restarted has one instance per attempt.
type Instance struct {
	// ID is the container ID in the form "<runtime>://<id>".
	ID string
	// State is the runtime state.
	State RuntimeState
	// CreatedAt orders instances: the newest is the current state.
	CreatedAt time.Time
	// StartedAt is set once the instance ran.
	StartedAt time.Time
	// FinishedAt is set once it exited.
	FinishedAt time.Time
	// ExitCode is the exit code of an exited instance. Any int32 is valid;
	// Windows codes are negative.
	ExitCode int32
	// Reason and Message are the runtime's words for an exited instance,
	// for example "Completed", "Error", "OOMKilled". Message already
	// includes the termination message (see [TerminationMessage]).
	Reason, Message string
	// Image is the image the runtime reports. ImageID is the runtime's image
	// ref (the CRI imageRef, typically "<repository>@sha256:<digest>"): the
	// status's imageID.
	Image, ImageID string
	// RestartCount is the count the kubelet stored on the instance when it
	// created it: the previous attempt's count plus one.
	RestartCount int32
	// Resources are the CPU and memory resources the runtime reports it
	// applied to the instance; nil when it reports none. Only a running
	// instance's are read (spec section 4.6).
	Resources *ActuatedResources
	// User is the user the runtime reports the instance runs as; nil when
	// it reports none. It becomes the status's user with
	// SupplementalGroupsPolicy.
	User *v1.ContainerUser
	// StopSignal is the instance's effective stop signal as the runtime
	// reports it; nil when it reports none. It becomes the status's
	// stopSignal with ContainerStopSignals.
	StopSignal *v1.Signal
}

// ActuatedResources are what a runtime reports it applied to a container
// instance, as the kubelet reads a CRI container status: the CPU shares as a
// CPU request, the CFS quota as a CPU limit, the memory limit. A CRI runtime
// reports no memory request; the kubelet completes one from its own record
// (spec section 4.6). A nil field is a value the runtime does not report.
// The quantities are read, never changed.
type ActuatedResources struct {
	CPURequest, CPULimit, MemoryRequest, MemoryLimit *resource.Quantity
}

// Pod is what a container's status depends on beyond the container itself.
type Pod struct {
	// Spec is the pod's spec. It must not be nil and the caller must not
	// change it while a value built from it is in use.
	Spec *v1.PodSpec
	// Name and Namespace identify the pod in messages and back-off keys.
	Name, Namespace string
	// UID identifies the pod's incarnation.
	UID types.UID
	// PodFacts are the pod-level facts that change over its life.
	PodFacts
}

// PodFacts are the facts about a pod, beyond its spec, that change how its
// containers are reported.
type PodFacts struct {
	// Deleting is true once the pod has a deletionTimestamp.
	Deleting bool
	// RestartingAllContainers is true while the pod restarts every container
	// in place after a RestartAllContainers rule fired (KEP-5532).
	RestartingAllContainers bool
	// RegularContainerCreated is true once the runtime has an instance of any
	// regular container, which tells that the pod has initialized.
	RegularContainerCreated bool
	// RecursiveReadOnlyMounts is true when the runtime handler of the pod's
	// runtime class supports recursive read-only mounts (the CRI runtime
	// status lists the handler with that feature). It decides whether a
	// read-only mount asking for recursiveReadOnly IfPossible or Enabled
	// shows Enabled (spec section 4.1). False, the zero value, is a runtime
	// that lists no handlers.
	RecursiveReadOnlyMounts bool
}

// StartError is the last error of starting a container, as the kubelet's
// reason cache holds it: it shows as the Waiting reason and message until a
// start succeeds.
type StartError struct {
	// Reason is the Waiting reason, for example CrashLoopBackOff.
	Reason string
	// Message is the Waiting message.
	Message string
}

// ProbeResult is the outcome of a probe.
type ProbeResult uint8

const (
	// ProbeNone is no result yet.
	ProbeNone ProbeResult = iota
	// ProbeSuccess is a probe that passed.
	ProbeSuccess
	// ProbeFailure is a probe that failed its threshold.
	ProbeFailure
)

var probeResultNames = [...]string{ProbeNone: "none", ProbeSuccess: "success", ProbeFailure: "failure"}

// String returns "none", "success" or "failure".
func (r ProbeResult) String() string {
	if int(r) < len(probeResultNames) {
		return probeResultNames[r]
	}
	return "ProbeResult(" + strconv.Itoa(int(r)) + ")"
}

// Probes is what the prober knows of a container when it fills in started
// and ready.
type Probes struct {
	// Startup and Readiness are the cached probe results.
	Startup, Readiness ProbeResult
	// KubeletStartedAt, when set, enables the kubelet-restart grace: a
	// container that started more than 10s before the kubelet and has no
	// readiness result yet counts as ready (section 9, rule 4).
	KubeletStartedAt time.Time
	// PodReady is whether the API pod's Ready condition is True; the restart
	// grace does not apply to a container with a readiness probe otherwise.
	PodReady bool
}
