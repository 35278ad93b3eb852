package containerstate

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func at(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }

func boolp(b bool) *bool { return &b }

func waitingState(reason, message string) v1.ContainerState {
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason, Message: message}}
}

func runningState(startedAt time.Time) v1.ContainerState {
	return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: apiTime(startedAt)}}
}

func terminatedState(exit int32, reason, message string) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: exit, Reason: reason, Message: message}}
}

func withID(s v1.ContainerState, id string) v1.ContainerState {
	if s.Terminated != nil {
		s.Terminated.ContainerID = id
	}
	return s
}

func withTimes(s v1.ContainerState, started, finished time.Time) v1.ContainerState {
	if s.Terminated != nil {
		s.Terminated.StartedAt, s.Terminated.FinishedAt = metav1.NewTime(started), metav1.NewTime(finished)
	}
	return s
}

func onePod(policy v1.RestartPolicy, names ...string) Pod {
	spec := &v1.PodSpec{RestartPolicy: policy}
	for _, n := range names {
		spec.Containers = append(spec.Containers, v1.Container{Name: n, Image: "img-" + n})
	}
	return Pod{Spec: spec, Name: "web", Namespace: "default", UID: "uid-1"}
}
