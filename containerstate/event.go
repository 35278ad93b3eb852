package containerstate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// EventKind is what happened to a container.
type EventKind uint8

// The event kinds: what a runtime reports about a container and what the
// kubelet does to it.
const (
	// PullStarted: the kubelet started pulling the image. No status change.
	PullStarted EventKind = iota + 1
	// PullFailed: the image could not be had. Reason is ErrImagePull (the
	// default), InvalidImageName, ErrImageNeverPull, ImageInspectError,
	// RegistryUnavailable or SignatureValidationFailed.
	PullFailed
	// PullBackOff: a pull was not tried because of image-pull back-off.
	// Reason is ImagePullBackOff. See [PullBackOffEvent].
	PullBackOff
	// PullSucceeded: the image is present; ImageID is its digest.
	PullSucceeded
	// Created: the runtime created instance ContainerID.
	Created
	// CreateFailed: the container could not be created. Reason is
	// CreateContainerError (the default), CreateContainerConfigError or
	// PreCreateHookError.
	CreateFailed
	// Started: instance ContainerID is running since StartedAt (default At).
	Started
	// StartFailed: the container could not be started. Reason is
	// RunContainerError (the default), PreStartHookError or
	// PostStartHookError.
	StartFailed
	// BackOff: a restart was held back by crash-loop back-off. Reason is
	// CrashLoopBackOff. See [BackOffEvent].
	BackOff
	// Exited: instance ContainerID stopped at At with ExitCode, and the
	// runtime's Reason and Message. See [ExitedEvent] and [OOMKilledEvent].
	Exited
	// Unknown: the runtime reports instance ContainerID in state UNKNOWN.
	Unknown
	// Removed: instance ContainerID is gone from the runtime.
	Removed
	// StartupProbe: a startup probe result (Result).
	StartupProbe
	// ReadinessProbe: a readiness probe result (Result).
	ReadinessProbe
	// LivenessProbe: a liveness probe result (Result). It changes no status
	// by itself: a failure makes the kubelet kill the container, which the
	// runtime then reports as Exited.
	LivenessProbe
	// PodChanged: the pod-level facts changed to Pod.
	PodChanged
	// Tick: time passed to At with nothing observed. It moves a container
	// whose UNKNOWN grace ends by At; see [Machine.NextWake] and
	// [Machine.Advance].
	Tick
)

// lastKind is the last defined event kind.
const lastKind = Tick

var eventKindNames = [...]string{
	PullStarted: "PullStarted", PullFailed: "PullFailed", PullBackOff: "PullBackOff", PullSucceeded: "PullSucceeded",
	Created: "Created", CreateFailed: "CreateFailed", Started: "Started", StartFailed: "StartFailed",
	BackOff: "BackOff", Exited: "Exited", Unknown: "Unknown", Removed: "Removed",
	StartupProbe: "StartupProbe", ReadinessProbe: "ReadinessProbe", LivenessProbe: "LivenessProbe",
	PodChanged: "PodChanged", Tick: "Tick",
}

// EventKinds returns every defined event kind, in order.
func EventKinds() []EventKind {
	kinds := make([]EventKind, 0, len(eventKindNames)-1)
	for k := PullStarted; k <= lastKind; k++ {
		kinds = append(kinds, k)
	}
	return kinds
}

// String returns the kind's name, for example "Exited".
func (k EventKind) String() string {
	if k >= PullStarted && k <= lastKind {
		return eventKindNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one observation about a container, with its time. Which fields
// matter depends on Kind; the others are ignored.
type Event struct {
	// Kind is what happened.
	Kind EventKind
	// At is when it happened. Events must come in time order.
	At time.Time
	// ContainerID is the instance, "<runtime>://<id>", for Created,
	// Started, Exited, Unknown and Removed.
	ContainerID string
	// Image and ImageID, for Created (both optional) and PullSucceeded.
	// ImageID is the runtime's image ref, the status's imageID.
	Image, ImageID string
	// Resources and User, for Created and Started (optional): what the
	// runtime reports it applied to the instance and the user it runs as
	// (see [Instance]). A Started event's replace the Created event's;
	// nil keeps them. The machine keeps the pointers and reads them only.
	Resources *ActuatedResources
	User      *v1.ContainerUser
	// ExitCode, for Exited.
	ExitCode int32
	// Reason and Message: the failure for PullFailed, PullBackOff,
	// CreateFailed, StartFailed and BackOff; the runtime's words for Exited.
	Reason, Message string
	// StartedAt, for Started and Exited, when it differs from At or the
	// start was not seen.
	StartedAt time.Time
	// Result, for the probe events.
	Result ProbeResult
	// Pod, for PodChanged.
	Pod PodFacts
}

// String describes the event in one line, for traces and test failures.
func (e Event) String() string {
	s := e.At.UTC().Format("15:04:05.000") + " " + e.Kind.String()
	if e.ContainerID != "" {
		s += " " + e.ContainerID
	}
	switch e.Kind {
	case Exited:
		s += " exit=" + strconv.Itoa(int(e.ExitCode))
	case StartupProbe, ReadinessProbe, LivenessProbe:
		s += " " + e.Result.String()
	case PodChanged:
		s += fmt.Sprintf(" deleting=%t restartingAll=%t regularCreated=%t", e.Pod.Deleting, e.Pod.RestartingAllContainers, e.Pod.RegularContainerCreated)
	}
	if e.Reason != "" {
		s += " " + e.Reason
	}
	if e.Message != "" {
		s += " " + strconv.Quote(e.Message)
	}
	return s
}

// failureReasons lists, per failure kind, the reasons it may carry; the
// first is the default for an empty Reason.
var failureReasons = [...][]string{
	PullFailed:   {ReasonErrImagePull, ReasonInvalidImageName, ReasonErrImageNeverPull, ReasonImageInspectError, ReasonRegistryUnavailable, ReasonSignatureValidationFailed},
	PullBackOff:  {ReasonImagePullBackOff},
	CreateFailed: {ReasonCreateContainerError, ReasonCreateContainerConfigError, ReasonPreCreateHookError},
	StartFailed:  {ReasonRunContainerError, ReasonPreStartHookError, ReasonPostStartHookError},
	BackOff:      {ReasonCrashLoopBackOff},
}

// failureReason returns the reason a failure event records, or false if the
// event's reason does not belong to its kind.
func failureReason(e *Event) (string, bool) {
	allowed := failureReasons[e.Kind]
	if e.Reason == "" {
		return allowed[0], true
	}
	for _, r := range allowed {
		if r == e.Reason {
			return r, true
		}
	}
	return "", false
}

// ExitedEvent is an Exited event with the reason containerd and CRI-O give:
// Completed for exit code 0, Error otherwise.
func ExitedEvent(at time.Time, containerID string, exitCode int32) Event {
	reason := ReasonError
	if exitCode == 0 {
		reason = ReasonCompleted
	}
	return Event{Kind: Exited, At: at, ContainerID: containerID, ExitCode: exitCode, Reason: reason}
}

// OOMKilledEvent is an Exited event for a container the kernel killed for
// memory: reason OOMKilled, exit code 137.
func OOMKilledEvent(at time.Time, containerID string) Event {
	return Event{Kind: Exited, At: at, ContainerID: containerID, ExitCode: ExitCodeUnknown, Reason: ReasonOOMKilled}
}

// StartErrorEvent is what containerd reports for a task that never started:
// Exited with reason StartError and exit code 128, carrying the runtime's
// message. The kubelet's start fails too; pair it with a StartFailed event.
func StartErrorEvent(at time.Time, containerID, message string) Event {
	return Event{Kind: Exited, At: at, ContainerID: containerID, ExitCode: ExitCodeStartError, Reason: ReasonStartError, Message: message}
}

// BackOffEvent is the BackOff event for a restart held back by crash-loop
// back-off, with the kubelet's message:
// "back-off 20s restarting failed container=app pod=web_default(uid)".
func BackOffEvent(at time.Time, delay time.Duration, container, pod, namespace string, uid types.UID) Event {
	return Event{Kind: BackOff, At: at, Reason: ReasonCrashLoopBackOff,
		Message: "back-off " + delay.String() + " restarting failed container=" + container + " pod=" + pod + "_" + namespace + "(" + string(uid) + ")"}
}

// PullBackOffEvent is the PullBackOff event for a pull held back by
// image-pull back-off, with the kubelet's message: `Back-off pulling image
// "img"`, followed by ": <reason>: <message>" of the last pull error when
// lastReason is not empty.
func PullBackOffEvent(at time.Time, image, lastReason, lastMessage string) Event {
	msg := "Back-off pulling image " + strconv.Quote(image)
	if lastReason != "" {
		msg += ": " + lastReason + ": " + lastMessage
	}
	return Event{Kind: PullBackOff, At: at, Reason: ReasonImagePullBackOff, Message: msg}
}

// InvalidImageNameEvent is the PullFailed event for an image reference that
// does not parse, with the kubelet's message.
func InvalidImageNameEvent(at time.Time, image string, err error) Event {
	return Event{Kind: PullFailed, At: at, Reason: ReasonInvalidImageName,
		Message: "Failed to apply default image tag " + strconv.Quote(image) + ": " + errString(err)}
}

// NeverPullEvent is the PullFailed event for an absent image with pull
// policy Never, with the kubelet's message.
func NeverPullEvent(at time.Time, image string) Event {
	return Event{Kind: PullFailed, At: at, Reason: ReasonErrImageNeverPull,
		Message: "Container image " + strconv.Quote(image) + " is not present with pull policy of Never"}
}

// ImageInspectErrorEvent is the PullFailed event for a runtime that could not
// inspect the image, with the kubelet's message (whose image ref is empty at
// that point, as in the kubelet).
func ImageInspectErrorEvent(at time.Time, err error) Event {
	return Event{Kind: PullFailed, At: at, Reason: ReasonImageInspectError,
		Message: "Failed to inspect image \"\": " + errString(err)}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// PullErrorEvent is the PullFailed event for a CRI image pull that failed
// with the error text criErr, classified as the kubelet does: an error that
// starts with "RegistryUnavailable" or "SignatureValidationFailed" gets that
// reason and the message "image pull failed for <img> because the registry
// is unavailable<rest>" (or "...because the signature validation
// failed<rest>"), where rest is the error text after its name; any other
// error is ErrImagePull with the error text as message.
func PullErrorEvent(at time.Time, image, criErr string) Event {
	for _, c := range [...]struct{ reason, because string }{
		{ReasonRegistryUnavailable, "the registry is unavailable"},
		{ReasonSignatureValidationFailed, "the signature validation failed"},
	} {
		if rest, ok := strings.CutPrefix(criErr, c.reason); ok {
			return Event{Kind: PullFailed, At: at, Reason: c.reason,
				Message: "image pull failed for " + image + " because " + c.because + rest}
		}
	}
	return Event{Kind: PullFailed, At: at, Reason: ReasonErrImagePull, Message: criErr}
}
