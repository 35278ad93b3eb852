package containerstate

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// stateValue is a v1.ContainerState without pointers, so that the machine can
// move through states without allocating. kind None is a state with nothing
// set.
type stateValue struct {
	kind        State
	reason      string
	message     string
	startedAt   time.Time
	finishedAt  time.Time
	exitCode    int32
	signal      int32
	containerID string
}

// statusValue is the pointer-free twin of v1.ContainerStatus for the fields
// this package owns.
type statusValue struct {
	name         string
	state        stateValue
	last         stateValue
	restartCount int32
	ready        bool
	hasStarted   bool // Started is non-nil
	started      bool
	image        string
	imageID      string
	containerID  string
	// mounts, resources, allocated and user are shared with the spec, the
	// old status or the runtime instance they come from, and copied only
	// by toAPI.
	mounts        []v1.VolumeMountStatus
	resources     resourcesValue
	allocated     v1.ResourceList
	user          *v1.ContainerUser
	stopSignal    v1.Signal
	hasStopSignal bool
	// unknownHeld marks a Running state kept through nodestate's UNKNOWN
	// grace: the container is shown Running but never ready.
	unknownHeld bool
}

func waiting(reason, message string) stateValue {
	return stateValue{kind: Waiting, reason: reason, message: message}
}

func terminatedWith(reason, message string, exitCode int32) stateValue {
	return stateValue{kind: Terminated, reason: reason, message: message, exitCode: exitCode}
}

func stateFromAPI(s v1.ContainerState) stateValue {
	// The API allows more than one member to be set; the kubelet's readers
	// look at Running, then Terminated, then Waiting in various orders. We
	// take the furthest along, which is what every kubelet check agrees on
	// for a terminated container.
	switch {
	case s.Terminated != nil:
		t := s.Terminated
		return stateValue{kind: Terminated, reason: t.Reason, message: t.Message,
			startedAt: t.StartedAt.Time, finishedAt: t.FinishedAt.Time,
			exitCode: t.ExitCode, signal: t.Signal, containerID: t.ContainerID}
	case s.Running != nil:
		return stateValue{kind: Running, startedAt: s.Running.StartedAt.Time}
	case s.Waiting != nil:
		return stateValue{kind: Waiting, reason: s.Waiting.Reason, message: s.Waiting.Message}
	}
	return stateValue{}
}

func (s stateValue) toAPI() v1.ContainerState {
	switch s.kind {
	case Waiting:
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: s.reason, Message: s.message}}
	case Running:
		return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: apiTime(s.startedAt)}}
	case Terminated:
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode: s.exitCode, Signal: s.signal, Reason: s.reason, Message: s.message,
			StartedAt: apiTime(s.startedAt), FinishedAt: apiTime(s.finishedAt), ContainerID: s.containerID,
		}}
	}
	return v1.ContainerState{}
}

func apiTime(t time.Time) metav1.Time {
	if t.IsZero() {
		return metav1.Time{}
	}
	return metav1.NewTime(t)
}

func statusFromAPI(s *v1.ContainerStatus) statusValue {
	v := statusValue{
		name:         s.Name,
		state:        stateFromAPI(s.State),
		last:         stateFromAPI(s.LastTerminationState),
		restartCount: s.RestartCount,
		ready:        s.Ready,
		image:        s.Image,
		imageID:      s.ImageID,
		containerID:  s.ContainerID,
		mounts:       s.VolumeMounts,
		resources:    resourcesFromAPI(s.Resources),
		allocated:    s.AllocatedResources,
		user:         s.User,
	}
	if s.Started != nil {
		v.hasStarted, v.started = true, *s.Started
	}
	if s.StopSignal != nil {
		v.hasStopSignal, v.stopSignal = true, *s.StopSignal
	}
	return v
}

func (v *statusValue) toAPI() v1.ContainerStatus {
	s := v1.ContainerStatus{
		Name:                 v.name,
		State:                v.state.toAPI(),
		LastTerminationState: v.last.toAPI(),
		Ready:                v.ready,
		RestartCount:         v.restartCount,
		Image:                v.image,
		ImageID:              v.imageID,
		ContainerID:          v.containerID,
		Resources:            v.resources.toAPI(),
		AllocatedResources:   v.allocated.DeepCopy(),
		User:                 v.user.DeepCopy(),
	}
	if v.hasStarted {
		started := v.started
		s.Started = &started
	}
	if v.mounts != nil {
		s.VolumeMounts = make([]v1.VolumeMountStatus, len(v.mounts))
		for i := range v.mounts {
			v.mounts[i].DeepCopyInto(&s.VolumeMounts[i])
		}
	}
	if v.hasStopSignal {
		sig := v.stopSignal
		s.StopSignal = &sig
	}
	return s
}

// setStarted records a computed started value.
func (v *statusValue) setStarted(b bool) { v.hasStarted, v.started = true, b }
