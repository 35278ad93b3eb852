package containerstate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// TestTerminatedStatus traces section 13 (TerminatePod's container
// defaulting).
func TestTerminatedStatus(t *testing.T) {
	unknown := terminatedState(137, ReasonContainerStatusUnknown, MessageUnknownTerminated)
	spec := v1.PodSpec{InitContainers: []v1.Container{{Name: "i1"}, {Name: "i2"}, {Name: "i3"}}, Containers: []v1.Container{{Name: "a"}, {Name: "b"}}}
	tests := []struct {
		rule   string
		reason string
		pod    *v1.Pod
		base   *v1.PodStatus
		want   *v1.PodStatus
	}{
		{rule: "13 regular", reason: "an initialized pod: running and waiting containers become ContainerStatusUnknown, terminated ones stay",
			pod:  &v1.Pod{Spec: v1.PodSpec{Containers: spec.Containers}},
			base: podStatus(nil, []v1.ContainerStatus{named("a", runningState(at(0))), named("b", terminatedState(0, ReasonCompleted, ""))}),
			want: podStatus(nil, []v1.ContainerStatus{named("a", unknown), named("b", terminatedState(0, ReasonCompleted, ""))})},
		{rule: "13 regular", reason: "a pod not initialized keeps its regular containers as they are",
			pod:  &v1.Pod{Spec: spec, Status: *podStatus([]v1.ContainerStatus{named("i1", runningState(at(0)))}, []v1.ContainerStatus{named("a", waitingState(ReasonPodInitializing, ""))})},
			base: podStatus([]v1.ContainerStatus{named("i1", runningState(at(0))), named("i2", waitingState(ReasonPodInitializing, "")), named("i3", waitingState(ReasonPodInitializing, ""))}, []v1.ContainerStatus{named("a", waitingState(ReasonPodInitializing, ""))}),
			want: podStatus([]v1.ContainerStatus{named("i1", unknown), named("i2", waitingState(ReasonPodInitializing, "")), named("i3", waitingState(ReasonPodInitializing, ""))}, []v1.ContainerStatus{named("a", waitingState(ReasonPodInitializing, ""))})},
		{rule: "13 init", reason: "all init statuses Waiting: the first is still defaulted",
			pod:  &v1.Pod{Spec: spec},
			base: podStatus([]v1.ContainerStatus{named("i1", waitingState("", "")), named("i2", waitingState("", ""))}, nil),
			want: podStatus([]v1.ContainerStatus{named("i1", unknown), named("i2", waitingState("", ""))}, nil)},
		{rule: "13 init", reason: "a Waiting init status with a last termination has started and is defaulted",
			pod: &v1.Pod{Spec: spec},
			base: podStatus([]v1.ContainerStatus{named("i1", terminatedState(0, "", "")),
				{Name: "i2", State: waitingState(ReasonCrashLoopBackOff, ""), LastTerminationState: terminatedState(1, "", "")}, named("i3", waitingState("", ""))}, nil),
			want: podStatus([]v1.ContainerStatus{named("i1", terminatedState(0, "", "")),
				{Name: "i2", State: unknown, LastTerminationState: terminatedState(1, "", "")}, named("i3", waitingState("", ""))}, nil)},
		{rule: "13 ephemeral", reason: "ephemeral containers are never touched",
			pod:  &v1.Pod{},
			base: &v1.PodStatus{EphemeralContainerStatuses: []v1.ContainerStatus{named("d", runningState(at(0)))}},
			want: &v1.PodStatus{EphemeralContainerStatuses: []v1.ContainerStatus{named("d", runningState(at(0)))}}},
		{rule: "13 nil", reason: "a nil base gives an empty status", pod: &v1.Pod{}, want: &v1.PodStatus{}},
	}
	for _, tt := range tests {
		var before *v1.PodStatus
		if tt.base != nil {
			before = tt.base.DeepCopy()
		}
		got := TerminatedStatus(tt.pod, tt.base)
		if d := cmp.Diff(*tt.want, got); d != "" {
			t.Errorf("rule %s: %s: mismatch (-want +got):\n%s", tt.rule, tt.reason, d)
		}
		if d := cmp.Diff(before, tt.base); d != "" {
			t.Errorf("rule %s: the base status was modified:\n%s", tt.rule, d)
		}
	}
}

// TestHasPodInitialized traces hasPodInitialized in section 13.
func TestHasPodInitialized(t *testing.T) {
	sidecar := v1.Container{Name: "s", RestartPolicy: containerPolicy(v1.ContainerRestartPolicyAlways)}
	tests := []struct {
		reason string
		pod    *v1.Pod
		want   bool
	}{
		{reason: "nil pod", pod: nil, want: false},
		{reason: "no init containers", pod: &v1.Pod{}, want: true},
		{reason: "a regular container with a last termination",
			pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i"}}}, Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "a", State: waitingState("", ""), LastTerminationState: terminatedState(0, "", "")}}}}, want: true},
		{reason: "a regular container with no state counts as not waiting",
			pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i"}}}, Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "a"}}}}, want: true},
		{reason: "all regular containers waiting, no init statuses",
			pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i"}}}, Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{named("a", waitingState("", ""))}}}, want: false},
		{reason: "the last init container a sidecar running and started",
			pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{sidecar}}, Status: v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{{Name: "s", State: runningState(at(0)), Started: boolp(true)}}}}, want: true},
		{reason: "the last init container a sidecar running but not started",
			pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{sidecar}}, Status: v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{{Name: "s", State: runningState(at(0)), Started: boolp(false)}}}}, want: false},
		{reason: "the last init container a sidecar marked started but no longer running",
			pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{sidecar}}, Status: v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{{Name: "s", State: terminatedState(1, "", ""), Started: boolp(true)}}}}, want: false},
		{reason: "the last init container exited 0",
			pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i"}}}, Status: v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{named("i", terminatedState(0, "", ""))}}}, want: true},
		{reason: "the last init container exited 0 in its last termination",
			pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i"}}}, Status: v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{{Name: "i", State: waitingState("", ""), LastTerminationState: terminatedState(0, "", "")}}}}, want: true},
		{reason: "the last init container failed",
			pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i"}}}, Status: v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{named("i", terminatedState(1, "", ""))}}}, want: false},
		{reason: "a spec/status mismatch",
			pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i"}}}, Status: v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{named("x", terminatedState(0, "", ""))}}}, want: false},
	}
	for _, tt := range tests {
		if got := HasPodInitialized(tt.pod); got != tt.want {
			t.Errorf("rule 13 hasPodInitialized: %s: got %v, want %v", tt.reason, got, tt.want)
		}
	}
}
