package podlifecycle

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The reasons of the events the kubelet records about a pod and its
// containers (spec/podlifecycle.md section 10). Reason strings are
// behaviour: they are the API's.
const (
	// Container events (fieldPath set).
	ReasonPulling             = "Pulling"
	ReasonPulled              = "Pulled"
	ReasonFailed              = "Failed"
	ReasonBackOff             = "BackOff" // Normal for pulls, Warning for crash loops
	ReasonErrImageNeverPull   = "ErrImageNeverPull"
	ReasonInspectFailed       = "InspectFailed"
	ReasonCreated             = "Created"
	ReasonStarted             = "Started"
	ReasonKilling             = "Killing"
	ReasonUnhealthy           = "Unhealthy"
	ReasonProbeWarning        = "ProbeWarning"
	ReasonFailedPostStartHook = "FailedPostStartHook"
	ReasonFailedPreStopHook   = "FailedPreStopHook"

	// Pod events (no fieldPath).
	ReasonSandboxChanged                  = "SandboxChanged"
	ReasonFailedCreatePodSandBox          = "FailedCreatePodSandBox"
	ReasonFailedPodSandBoxStatus          = "FailedPodSandBoxStatus"
	ReasonFailedPrepareDynamicResources   = "FailedPrepareDynamicResources"
	ReasonNetworkNotReady                 = "NetworkNotReady"
	ReasonFailedMount                     = "FailedMount"
	ReasonFailedToRetrieveImagePullSecret = "FailedToRetrieveImagePullSecret"
	ReasonLifecycleHTTPFallback           = "LifecycleHTTPFallback"
	ReasonFailedKillPod                   = "FailedKillPod"
	ReasonExceededGracePeriod             = "ExceededGracePeriod"
	ReasonDeadlineExceeded                = "DeadlineExceeded"
	ReasonFailedSync                      = "FailedSync"
)

// Fixed event messages (spec/podlifecycle.md section 10), as Kubernetes 1.37
// words them; [CreatedMessage] and [StartedMessage] give the older wording.
const (
	MessageCreated             = "Container created"
	MessageStarted             = "Container started"
	MessagePostStartHookFailed = "PostStartHook failed"
	MessagePreStopHookFailed   = "PreStopHook failed"
	MessageSandboxChanged      = "Pod sandbox changed, it will be killed and re-created."
	MessageExceededGracePeriod = "Container runtime did not kill the pod within specified grace period."
	MessageDeadlineExceeded    = "Pod was active on the node longer than the specified deadline"
	// MessageKillUnknownContainer and MessageKillUnknownInitContainer are
	// the Killing messages of a container in state unknown.
	MessageKillUnknownContainer     = `Container is in "unknown" state, try killing it before restart`
	MessageKillUnknownInitContainer = `Init container is in "unknown" state, try killing it before restart`
	// MessageKillFailedPostStartHook is the Killing message after a failed
	// postStart hook.
	MessageKillFailedPostStartHook = "FailedPostStartHook"
	// MessageKillRestartAll is the Killing message of a RestartAllContainers
	// reset.
	MessageKillRestartAll = "killing"
)

// FieldPath returns the event field path of the named container of kind k:
// spec.containers{name}, spec.initContainers{name} or
// spec.ephemeralContainers{name}; "" for any other kind.
func FieldPath(k containerstate.Kind, name string) string {
	switch k {
	case containerstate.Regular:
		return "spec.containers{" + name + "}"
	case containerstate.Init:
		return "spec.initContainers{" + name + "}"
	case containerstate.Ephemeral:
		return "spec.ephemeralContainers{" + name + "}"
	}
	return ""
}

// Reference returns the object reference the kubelet records e about:
// the pod (kind Pod, apiVersion v1, its namespace, name, UID and
// resourceVersion) with e's field path, "spec.containers{app}" for a
// container's events and empty for the pod's own, as the kubelet's
// container references and pod events carry them. Hand it to an events
// recorder as the involved object. A nil pod gives nil.
func (e Event) Reference(pod *v1.Pod) *v1.ObjectReference {
	if pod == nil {
		return nil
	}
	return &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
		UID: pod.UID, ResourceVersion: pod.ResourceVersion, FieldPath: e.FieldPath}
}

// PodRef is how messages name a pod: <name>_<namespace>(<uid>).
func PodRef(name, namespace string, uid types.UID) string {
	return name + "_" + namespace + "(" + string(uid) + ")"
}

// HookFailedMessage is the message of a lifecycle hook that failed with
// err (the runtime's error: "command 'drain' exited with 1: " for an exec
// hook whose command exited 1, as the CRI client words it), by the kind of
// handler: the waiting message of PostStartHookError. output is what an
// exec hook printed.
func HookFailedMessage(h *v1.LifecycleHandler, container, podRef, err, output string) string {
	switch {
	case h == nil:
		return err
	case h.Exec != nil:
		return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q", h.Exec.Command, container, podRef, err, output)
	case h.HTTPGet != nil:
		return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v", h.HTTPGet.Path, container, podRef, err)
	case h.Sleep != nil:
		return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v", h.Sleep.Seconds, container, podRef, err)
	}
	return err
}

// PullingMessage is the Pulling message: Pulling image "<img>".
func PullingMessage(image string) string { return "Pulling image " + strconv.Quote(image) }

// PulledMessage is the Pulled message of a successful pull, durations
// truncated to milliseconds.
func PulledMessage(image string, pull, total time.Duration, size int64) string {
	return "Successfully pulled image " + strconv.Quote(image) + " in " + pull.Truncate(time.Millisecond).String() +
		" (" + total.Truncate(time.Millisecond).String() + " including waiting). Image size: " +
		strconv.FormatInt(size, 10) + " bytes."
}

// CreatedMessage is the Created message for container under Kubernetes
// minor v: [MessageCreated] from 1.35, "Created container: <name>" before
// (kubernetes#134043; docs/versions.md row PL-V6). A v that is none of
// kubeversion's constants gives 1.37's message.
func CreatedMessage(container string, v kubeversion.Version) string {
	if v.AtLeast(kubeversion.V1_35) {
		return MessageCreated
	}
	return "Created container: " + container
}

// StartedMessage is the Started message for container under Kubernetes
// minor v: [MessageStarted] from 1.35, "Started container <name>" before. A
// v that is none of kubeversion's constants gives 1.37's message.
func StartedMessage(container string, v kubeversion.Version) string {
	if v.AtLeast(kubeversion.V1_35) {
		return MessageStarted
	}
	return "Started container " + container
}

// AlreadyPresentMessage is the Pulled message of a present image; ensured
// is the KubeletEnsureSecretPulledImages gate.
func AlreadyPresentMessage(image string, ensured bool) string {
	m := "Container image " + strconv.Quote(image) + " already present on machine"
	if ensured {
		m += " and can be accessed by the pod"
	}
	return m
}

// PullFailedMessage is the Failed message of a failed pull.
func PullFailedMessage(image, err string) string {
	return "Failed to pull image " + strconv.Quote(image) + ": " + err
}

// ErrorMessage is the Failed message "Error: <name or message>".
func ErrorMessage(nameOrMessage string) string { return "Error: " + nameOrMessage }

// PreCreateHookFailedMessage and PreStartHookFailedMessage are the Failed
// messages of the internal hooks.
func PreCreateHookFailedMessage(m string) string {
	return "Internal PreCreateContainer hook failed: " + m
}

// PreStartHookFailedMessage: see PreCreateHookFailedMessage.
func PreStartHookFailedMessage(m string) string {
	return "Internal PreStartContainer hook failed: " + m
}

// PullBackOffMessage is the (Normal) BackOff message of a pull in back-off.
func PullBackOffMessage(image string) string { return "Back-off pulling image " + strconv.Quote(image) }

// NeverPullMessage is the ErrImageNeverPull message.
func NeverPullMessage(image string) string {
	return "Container image " + strconv.Quote(image) + " is not present with pull policy of Never"
}

// InspectFailedMessage is the InspectFailed message of a failed lookup.
func InspectFailedMessage(ref, err string) string {
	return "Failed to inspect image " + strconv.Quote(ref) + ": " + err
}

// DefaultTagFailedMessage is the InspectFailed message of an unparsable image.
func DefaultTagFailedMessage(image, err string) string {
	return "Failed to apply default image tag " + strconv.Quote(image) + ": " + err
}

// CrashLoopBackOffMessage is the (Warning) BackOff message of a restart held
// by crash-loop back-off.
func CrashLoopBackOffMessage(container, pod, namespace string, uid types.UID) string {
	return "Back-off restarting failed container " + container + " in pod " + PodRef(pod, namespace, uid)
}

// StoppingMessage is the Killing message of a whole-pod kill.
func StoppingMessage(container string) string { return "Stopping container " + container }

// KillMessage is the Killing message for reason r of a container of kind k
// (sidecars are init containers), as in spec/podlifecycle.md section 3.8;
// restart adds ", will be restarted" for a regular container.
func KillMessage(r KillReason, k containerstate.Kind, container string, restart bool) string {
	var m string
	init := k == containerstate.Init
	switch r {
	case KillChanged:
		if init {
			return "Init container " + container + " definition changed"
		}
		return "Container " + container + " definition changed, will be restarted"
	case KillLivenessProbe, KillStartupProbe:
		probe := "liveness"
		if r == KillStartupProbe {
			probe = "startup"
		}
		if init {
			return "Init container " + container + " failed " + probe + " probe"
		}
		m = "Container " + container + " failed " + probe + " probe"
	case KillFailedPostStartHook:
		return MessageKillFailedPostStartHook
	case KillRestartAllContainers:
		return MessageKillRestartAll
	default:
		return StoppingMessage(container)
	}
	if restart {
		m += ", will be restarted"
	}
	return m
}

// ProbeFailedMessage is the Unhealthy message of a failed probe.
func ProbeFailedMessage(p Probe, output string) string {
	return p.String() + " probe failed: " + output
}

// ProbeErroredMessage is the Unhealthy message of a probe that errored;
// result is the probe result the error gave ("unknown" in practice).
func ProbeErroredMessage(p Probe, result, err string) string {
	return p.String() + " probe errored and resulted in " + result + " state: " + err
}

// ProbeWarningMessage is the ProbeWarning message.
func ProbeWarningMessage(p Probe, output string) string {
	return p.String() + " probe warning: " + output
}

// FailedCreatePodSandBoxMessage is the FailedCreatePodSandBox message.
func FailedCreatePodSandBoxMessage(err string) string { return "Failed to create pod sandbox: " + err }

// FailedPodSandBoxStatusMessage is the FailedPodSandBoxStatus message.
func FailedPodSandBoxStatusMessage(err string) string {
	return "Unable to get pod sandbox status: " + err
}

// FailedPrepareDynamicResourcesMessage is that event's message.
func FailedPrepareDynamicResourcesMessage(err string) string {
	return "Failed to prepare dynamic resources: " + err
}

// NetworkNotReadyMessage is the NetworkNotReady message.
func NetworkNotReadyMessage(err string) string { return "network is not ready: " + err }

// FailedMountMessage is the FailedMount message.
func FailedMountMessage(err string) string { return "Unable to attach or mount volumes: " + err }

// FailedToRetrieveImagePullSecretMessage is that event's message.
func FailedToRetrieveImagePullSecretMessage(names []string) string {
	return "Unable to retrieve some image pull secrets (" + strings.Join(names, ", ") +
		"); attempting to pull the image may not succeed."
}

// LifecycleHTTPFallbackMessage is the LifecycleHTTPFallback message.
func LifecycleHTTPFallbackMessage(hostPort string) string {
	return "request to HTTPS lifecycle hook " + hostPort + " got HTTP response, retry with HTTP succeeded"
}

// FailedKillPodMessage is the FailedKillPod message.
func FailedKillPodMessage(err string) string { return "error killing pod: " + err }

// FailedSyncMessage is the FailedSync message.
func FailedSyncMessage(err string) string { return "error determining status: " + err }

// String is the probe's name in event messages: Startup, Readiness, Liveness.
func (p Probe) String() string {
	switch p {
	case Startup:
		return "Startup"
	case Readiness:
		return "Readiness"
	case Liveness:
		return "Liveness"
	}
	return "Probe(" + strconv.Itoa(int(p)) + ")"
}

// normal and warning build events.
func normal(reason, message, fieldPath string) Event {
	return Event{Type: v1.EventTypeNormal, Reason: reason, Message: message, FieldPath: fieldPath}
}

func warning(reason, message, fieldPath string) Event {
	return Event{Type: v1.EventTypeWarning, Reason: reason, Message: message, FieldPath: fieldPath}
}
