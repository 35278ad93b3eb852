package containerstate

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/internal/reslist"
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
	// by writeTo. specMounts, when set, stands for the mounts of a default
	// entry, built from the spec only by writeTo.
	mounts        []v1.VolumeMountStatus
	specMounts    mountsFrom
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

// writeTo sets *dst to s's API form, reusing the member dst pointed to
// before when it is the one s needs.
func (s stateValue) writeTo(dst *v1.ContainerState) {
	keep := *dst
	*dst = v1.ContainerState{}
	switch s.kind {
	case Waiting:
		w := keep.Waiting
		if w == nil {
			w = new(v1.ContainerStateWaiting)
		}
		*w = v1.ContainerStateWaiting{Reason: s.reason, Message: s.message}
		dst.Waiting = w
	case Running:
		r := keep.Running
		if r == nil {
			r = new(v1.ContainerStateRunning)
		}
		*r = v1.ContainerStateRunning{StartedAt: apiTime(s.startedAt)}
		dst.Running = r
	case Terminated:
		t := keep.Terminated
		if t == nil {
			t = new(v1.ContainerStateTerminated)
		}
		*t = v1.ContainerStateTerminated{
			ExitCode: s.exitCode, Signal: s.signal, Reason: s.reason, Message: s.message,
			StartedAt: apiTime(s.startedAt), FinishedAt: apiTime(s.finishedAt), ContainerID: s.containerID,
		}
		dst.Terminated = t
	}
}

func apiTime(t time.Time) metav1.Time {
	if t.IsZero() {
		return metav1.Time{}
	}
	return metav1.NewTime(t)
}

// statusFromAPI sets *v to the status s.
func statusFromAPI(s *v1.ContainerStatus, v *statusValue) {
	*v = statusValue{
		name:         s.Name,
		state:        stateFromAPI(s.State),
		last:         stateFromAPI(s.LastTerminationState),
		restartCount: s.RestartCount,
		ready:        s.Ready,
		image:        s.Image,
		imageID:      s.ImageID,
		containerID:  s.ContainerID,
		mounts:       s.VolumeMounts,
		allocated:    s.AllocatedResources,
		user:         s.User,
	}
	if s.Resources != nil {
		v.resources.set, v.resources.base = true, *s.Resources
	}
	if s.Started != nil {
		v.hasStarted, v.started = true, *s.Started
	}
	if s.StopSignal != nil {
		v.hasStopSignal, v.stopSignal = true, *s.StopSignal
	}
}

// toAPI returns v's API form in new memory.
func (v *statusValue) toAPI(t *target) v1.ContainerStatus {
	var s v1.ContainerStatus
	v.writeTo(t, &s)
	return s
}

// writeTo sets *s to v's API form. The memory *s points to (states,
// started, resources, allocatedResources, user, volumeMounts, stopSignal)
// is overwritten and reused; what v shares with the spec, the old status
// or the runtime is copied, never shared.
func (v *statusValue) writeTo(t *target, s *v1.ContainerStatus) {
	keep := *s
	*s = v1.ContainerStatus{
		Name:         v.name,
		State:        keep.State,
		Ready:        v.ready,
		RestartCount: v.restartCount,
		Image:        v.image,
		ImageID:      v.imageID,
		ContainerID:  v.containerID,
	}
	v.state.writeTo(&s.State)
	s.LastTerminationState = keep.LastTerminationState
	v.last.writeTo(&s.LastTerminationState)
	s.Resources = v.resources.writeTo(keep.Resources)
	s.AllocatedResources = reslist.Copy(keep.AllocatedResources, v.allocated)
	s.User = copyUser(keep.User, v.user)
	if v.hasStarted {
		started := keep.Started
		if started == nil {
			started = new(bool)
		}
		*started = v.started
		s.Started = started
	}
	switch {
	case v.specMounts != mountsNone:
		s.VolumeMounts = appendSpecMounts(keep.VolumeMounts[:0], t.container, v.specMounts == mountsSpecRRO)
	case v.mounts != nil:
		s.VolumeMounts = copyMounts(keep.VolumeMounts, v.mounts)
	}
	if v.hasStopSignal {
		sig := keep.StopSignal
		if sig == nil {
			sig = new(v1.Signal)
		}
		*sig = v.stopSignal
		s.StopSignal = sig
	}
}

// copyUser returns a copy of src in dst's storage; nil for a nil src.
func copyUser(dst, src *v1.ContainerUser) *v1.ContainerUser {
	if src == nil {
		return nil
	}
	if dst == nil {
		dst = new(v1.ContainerUser)
	}
	linux := dst.Linux
	*dst = v1.ContainerUser{}
	if l := src.Linux; l != nil {
		if linux == nil {
			linux = new(v1.LinuxContainerUser)
		}
		groups := linux.SupplementalGroups
		*linux = v1.LinuxContainerUser{UID: l.UID, GID: l.GID}
		if l.SupplementalGroups != nil {
			linux.SupplementalGroups = append(groups[:0:cap(groups)], l.SupplementalGroups...)
			if linux.SupplementalGroups == nil {
				linux.SupplementalGroups = []int64{}
			}
		}
		dst.Linux = linux
	}
	return dst
}

// copyMounts returns a copy of src in dst's storage (a non-nil slice, as
// src is).
func copyMounts(dst, src []v1.VolumeMountStatus) []v1.VolumeMountStatus {
	dst = growMounts(dst, len(src))
	if dst == nil {
		dst = []v1.VolumeMountStatus{}
	}
	for i := range src {
		rro := dst[i].RecursiveReadOnly
		dst[i] = src[i]
		if src[i].RecursiveReadOnly != nil {
			if rro == nil {
				rro = new(v1.RecursiveReadOnlyMode)
			}
			*rro = *src[i].RecursiveReadOnly
			dst[i].RecursiveReadOnly = rro
		}
	}
	return dst
}

// growMounts returns dst with length n, keeping the elements' storage.
func growMounts(dst []v1.VolumeMountStatus, n int) []v1.VolumeMountStatus {
	if cap(dst) < n {
		grown := make([]v1.VolumeMountStatus, n)
		copy(grown, dst[:cap(dst)])
		return grown
	}
	return dst[:n]
}

// setStarted records a computed started value.
func (v *statusValue) setStarted(b bool) { v.hasStarted, v.started = true, b }
