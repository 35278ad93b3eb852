package podlifecycle

import (
	"strconv"
	"time"
)

var actionNames = [...]string{"", "CreateSandbox", "KillSandbox", "PullImage", "StartContainer", "KillContainer",
	"RemoveContainer", "RunHook", "RunProbe"}

// String is the kind's name, as in the constant.
func (k ActionKind) String() string {
	if int(k) < len(actionNames) && k != 0 {
		return actionNames[k]
	}
	return "ActionKind(" + strconv.Itoa(int(k)) + ")"
}

var observationNames = [...]string{"", "SandboxReady", "SandboxNotReady", "SandboxCreateFailed", "ImagePresent",
	"ImagePulled", "ImagePullFailed", "ContainerCreated", "ContainerCreateFailed", "ContainerStarted",
	"ContainerStartFailed", "ContainerExited", "ContainerUnknown", "ContainerRemoved", "ProbeResult", "HookResult"}

// String is the kind's name, as in the constant.
func (k ObservationKind) String() string {
	if int(k) < len(observationNames) && k != 0 {
		return observationNames[k]
	}
	return "ObservationKind(" + strconv.Itoa(int(k)) + ")"
}

// String is the hook's name.
func (h Hook) String() string {
	switch h {
	case PostStart:
		return "PostStart"
	case PreStop:
		return "PreStop"
	}
	return "Hook(" + strconv.Itoa(int(h)) + ")"
}

var killReasonNames = [...]string{"Unknown", "Changed", "LivenessProbe", "StartupProbe", "FailedPostStartHook", "RestartAllContainers"}

// String is the reason's name.
func (r KillReason) String() string {
	if int(r) < len(killReasonNames) {
		return killReasonNames[r]
	}
	return "KillReason(" + strconv.Itoa(int(r)) + ")"
}

var stateNames = [...]string{"Syncing", "Terminating", "Terminated", "Finished"}

// String is the state's name.
func (s WorkerState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "WorkerState(" + strconv.Itoa(int(s)) + ")"
}

// String renders the action on one line, for logs and golden traces:
// "StartContainer foo1", "KillContainer foo2 grace=30s reason=LivenessProbe".
func (a Action) String() string {
	s := a.Kind.String()
	switch a.Kind {
	case CreateSandbox, KillSandbox:
		s += " attempt=" + strconv.FormatUint(uint64(a.Attempt), 10)
	case PullImage:
		s += " " + a.Container + " " + a.Image + " " + string(a.PullPolicy)
	case StartContainer:
		s += " " + a.Container
		if a.RestartCount > 0 {
			s += " restart=" + strconv.Itoa(int(a.RestartCount))
		}
	case KillContainer:
		s += " " + a.Container + " grace=" + (a.Grace / time.Second * time.Second).String() + " reason=" + a.Reason.String()
	case RemoveContainer:
		s += " " + a.Container
	case RunHook:
		s += " " + a.Container + " " + a.Hook.String()
	case RunProbe:
		s += " " + a.Container + " " + a.Probe.String()
	}
	return s
}
