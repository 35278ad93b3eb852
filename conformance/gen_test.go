package conformance

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/containerstate/containerstatetest"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podphase/podphasetest"
)

// The generators below draw the pods the differential properties compare
// on. Half of them come from podphasetest.Pod: pods a kubelet could report,
// with consistent statuses, phase and conditions. The other half are wild:
// a podphasetest spec with statuses of every shape another writer, an older
// kubelet or a lost node can leave behind (missing statuses, no state,
// waiting with no reason, terminations with empty reasons and signals,
// statuses out of spec order or for a container the spec does not have),
// any phase including "" and Unknown, pod reasons such as Evicted and
// NodeLost, and duplicated conditions. Both kinds then get extra
// conditions, a deletion timestamp and network fields at random.

// Shrinking goes towards the first element of each list, so each list
// starts with its plainest value.
var (
	waitingReasons = []string{"", "ContainerCreating", "PodInitializing", "CrashLoopBackOff", "ErrImagePull",
		"ImagePullBackOff", "CreateContainerConfigError", "RunContainerError", "InvalidImageName"}
	terminatedReasons = []string{"", "Completed", "Error", "OOMKilled", "ContainerStatusUnknown", "StartError",
		"ContainerCannotRun", "DeadlineExceeded"}
	exitCodes  = []int32{0, 1, 2, 42, 127, 128, 137, 143, 255, -1, -1073741510}
	signals    = []int32{0, 9, 15, 2}
	phases     = []v1.PodPhase{v1.PodRunning, v1.PodPending, v1.PodSucceeded, v1.PodFailed, "", v1.PodUnknown}
	podReasons = []string{"", "Evicted", podphase.ReasonNodeLost, "DeadlineExceeded", "UnexpectedAdmissionError",
		"Shutdown", "Terminated", "NodeAffinity", "OutOfcpu", "Completed"}
	conditionStatuses = []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown, ""}
	conditionReasons  = []string{"", "PodCompleted", "ContainersNotReady", "ContainersNotInitialized", "PodFailed",
		v1.PodReasonSchedulingGated, v1.PodReasonUnschedulable, "TerminationByKubelet", "EvictionByEvictionAPI"}
)

// podGen returns the generator of pods for the display and conditions
// properties. Times are set around anchor, the instant the test started, so
// that the ages kubectl prints cover seconds to years and, rarely, a clock
// skewed into the future.
func podGen(anchor time.Time) *rapid.Generator[*v1.Pod] {
	return rapid.Custom(func(t *rapid.T) *v1.Pod {
		var pod *v1.Pod
		if rapid.Bool().Draw(t, "wild") {
			pod = wildPod(t, anchor)
		} else {
			pod = podphasetest.Pod().Draw(t, "kubeletPod")
			retime(pod, anchor)
		}
		extraConditions(t, pod)
		if rapid.IntRange(0, 7).Draw(t, "deleting") == 7 {
			ts := metav1.NewTime(anchor.Add(-time.Minute))
			pod.DeletionTimestamp = &ts
		}
		network(t, pod)
		return pod
	})
}

// retime moves the times of a podphasetest pod, which lie in the day after
// podphasetest.Epoch, so that they end at anchor.
func retime(pod *v1.Pod, anchor time.Time) {
	shift := anchor.Sub(podphasetest.Epoch.Add(24 * time.Hour))
	move := func(tm *metav1.Time) {
		if tm != nil && !tm.IsZero() {
			tm.Time = tm.Add(shift)
		}
	}
	move(&pod.CreationTimestamp)
	move(pod.Status.StartTime)
	for _, list := range [][]v1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			for _, s := range []*v1.ContainerState{&list[i].State, &list[i].LastTerminationState} {
				if s.Running != nil {
					move(&s.Running.StartedAt)
				}
				if s.Terminated != nil {
					move(&s.Terminated.StartedAt)
					move(&s.Terminated.FinishedAt)
				}
			}
		}
	}
	for i := range pod.Status.Conditions {
		move(&pod.Status.Conditions[i].LastTransitionTime)
	}
}

// wildPod draws a pod whose statuses need not be consistent with its spec
// or with one another.
func wildPod(t *rapid.T, anchor time.Time) *v1.Pod {
	var spec v1.PodSpec
	if rapid.Bool().Draw(t, "richRules") {
		// containerstatetest's specs: the empty pod policy, init containers
		// with any policy, up to three rules of several codes each, and
		// ephemeral containers.
		spec = *containerstatetest.PodSpec().Draw(t, "ruleSpec")
		for i := range rapid.IntRange(0, 2).Draw(t, "gates") {
			spec.ReadinessGates = append(spec.ReadinessGates, v1.PodReadinessGate{ConditionType: v1.PodConditionType(fmt.Sprintf("example.com/gate-%d", i))})
		}
	} else {
		spec = podphasetest.Spec().Draw(t, "spec")
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod", Namespace: "default", UID: "uid-1",
			Generation: rapid.Int64Range(1, 3).Draw(t, "generation"), CreationTimestamp: metav1.NewTime(anchor.Add(-48 * time.Hour))},
		Spec: spec,
		Status: v1.PodStatus{
			Phase:  rapid.SampledFrom(phases).Draw(t, "phase"),
			Reason: rapid.SampledFrom(podReasons).Draw(t, "podReason"),
		},
	}
	if pod.Status.Reason != "" {
		pod.Status.Message = "message of " + pod.Status.Reason
	}
	// nil and empty lists differ upstream (UnknownContainerStatuses), so
	// both are drawn.
	pod.Status.InitContainerStatuses = wildStatuses(t, anchor, "init", spec.InitContainers)
	pod.Status.ContainerStatuses = wildStatuses(t, anchor, "regular", spec.Containers)
	for _, e := range spec.EphemeralContainers {
		pod.Status.EphemeralContainerStatuses = append(pod.Status.EphemeralContainerStatuses, wildStatus(t, anchor, e.Name))
	}
	return pod
}

// wildStatuses draws the status list for containers: each container's
// status may be missing, the list may be shuffled and may name a container
// the spec does not have.
func wildStatuses(t *rapid.T, anchor time.Time, label string, containers []v1.Container) []v1.ContainerStatus {
	if rapid.IntRange(0, 9).Draw(t, label+"StatusesNil") == 9 {
		return nil
	}
	list := []v1.ContainerStatus{}
	for i := range containers {
		if rapid.IntRange(0, 7).Draw(t, label+"Missing") == 7 {
			continue
		}
		list = append(list, wildStatus(t, anchor, containers[i].Name))
	}
	if rapid.IntRange(0, 11).Draw(t, label+"Stranger") == 11 {
		list = append(list, wildStatus(t, anchor, "stranger"))
	}
	if len(list) > 1 && rapid.IntRange(0, 5).Draw(t, label+"Shuffled") == 5 {
		list = rapid.Permutation(list).Draw(t, label+"Order")
	}
	return list
}

// wildStatus draws one container status of any shape.
func wildStatus(t *rapid.T, anchor time.Time, name string) v1.ContainerStatus {
	st := v1.ContainerStatus{Name: name, Image: "image:1", ImageID: "image@sha256:1",
		Ready:        rapid.Bool().Draw(t, "ready"),
		RestartCount: int32(rapid.SampledFrom([]int{0, 1, 2, 5, 30}).Draw(t, "restartCount")),
	}
	switch rapid.IntRange(0, 2).Draw(t, "started") {
	case 1:
		st.Started = new(bool)
	case 2:
		started := true
		st.Started = &started
	}
	switch rapid.IntRange(0, 3).Draw(t, "state") {
	case 0:
		st.State.Running = &v1.ContainerStateRunning{StartedAt: when(t, anchor, "startedAt")}
		st.ContainerID = "containerd://" + name
	case 1:
		reason := rapid.SampledFrom(waitingReasons).Draw(t, "waitingReason")
		st.State.Waiting = &v1.ContainerStateWaiting{Reason: reason}
		if reason != "" {
			st.State.Waiting.Message = "message of " + reason
		}
	case 2:
		st.State.Terminated = terminated(t, anchor, "")
		st.ContainerID = "containerd://" + name
	case 3:
		// No state at all: what a status written without one looks like.
	}
	switch rapid.IntRange(0, 2).Draw(t, "lastState") {
	case 1:
		st.LastTerminationState.Terminated = terminated(t, anchor, "last")
	case 2:
		// A last state with no time: kubectl's RESTARTS shows no age then.
		st.LastTerminationState.Terminated = terminated(t, anchor, "last")
		st.LastTerminationState.Terminated.FinishedAt = metav1.Time{}
	}
	return st
}

func terminated(t *rapid.T, anchor time.Time, label string) *v1.ContainerStateTerminated {
	return &v1.ContainerStateTerminated{
		ExitCode:    rapid.SampledFrom(exitCodes).Draw(t, label+"exitCode"),
		Signal:      rapid.SampledFrom(signals).Draw(t, label+"signal"),
		Reason:      rapid.SampledFrom(terminatedReasons).Draw(t, label+"terminatedReason"),
		StartedAt:   metav1.NewTime(anchor.Add(-72 * time.Hour)),
		FinishedAt:  when(t, anchor, label+"finishedAt"),
		ContainerID: "containerd://old",
	}
}

// when draws an instant before anchor, from a second to three years, or
// rarely up to a minute after it (a node clock ahead of kubectl's).
func when(t *rapid.T, anchor time.Time, label string) metav1.Time {
	scale := rapid.SampledFrom([]time.Duration{time.Hour, time.Second, time.Minute, 24 * time.Hour, 365 * 24 * time.Hour}).Draw(t, label+"Scale")
	d := time.Duration(rapid.IntRange(1, 40).Draw(t, label+"Amount")) * scale
	if rapid.IntRange(0, 19).Draw(t, label+"Skewed") == 19 {
		d = -time.Duration(rapid.IntRange(1, 60).Draw(t, label+"Skew")) * time.Second
	}
	return metav1.NewTime(anchor.Add(-d).Truncate(time.Second))
}

// extraConditions adds conditions another writer could leave, duplicates of
// the kubelet's types included.
func extraConditions(t *rapid.T, pod *v1.Pod) {
	types := []v1.PodConditionType{v1.PodReady, v1.PodInitialized, v1.PodScheduled, v1.ContainersReady,
		v1.PodReadyToStartContainers, v1.DisruptionTarget, v1.AllContainersRestarting, "example.com/custom"}
	for _, g := range pod.Spec.ReadinessGates {
		types = append(types, g.ConditionType)
	}
	n := rapid.IntRange(0, 3).Draw(t, "extraConditions")
	for i := 0; i < n; i++ {
		c := v1.PodCondition{
			Type:   rapid.SampledFrom(types).Draw(t, "conditionType"),
			Status: rapid.SampledFrom(conditionStatuses).Draw(t, "conditionStatus"),
			Reason: rapid.SampledFrom(conditionReasons).Draw(t, "conditionReason"),
		}
		at := rapid.IntRange(0, len(pod.Status.Conditions)).Draw(t, "conditionAt")
		pod.Status.Conditions = append(pod.Status.Conditions[:at], append([]v1.PodCondition{c}, pod.Status.Conditions[at:]...)...)
	}
}

// network draws the -o wide fields.
func network(t *rapid.T, pod *v1.Pod) {
	switch rapid.IntRange(0, 3).Draw(t, "podIPs") {
	case 1:
		pod.Status.PodIP = "10.0.0.7"
		pod.Status.PodIPs = []v1.PodIP{{IP: "10.0.0.7"}}
	case 2:
		pod.Status.PodIP = "10.0.0.7"
		pod.Status.PodIPs = []v1.PodIP{{IP: "10.0.0.7"}, {IP: "fd00::7"}}
	case 3:
		// An old writer that set podIP only, or fields that disagree, which
		// the API server's defaults resolve.
		pod.Status.PodIP = "10.0.0.8"
		if rapid.IntRange(0, 7).Draw(t, "podIPsDisagree") == 7 {
			pod.Status.PodIPs = []v1.PodIP{{IP: "10.0.0.9"}}
		}
	}
	if rapid.Bool().Draw(t, "nodeName") {
		pod.Spec.NodeName = "node-1"
	}
	if rapid.IntRange(0, 3).Draw(t, "nominated") == 3 {
		pod.Status.NominatedNodeName = "node-2"
	}
}

// describe prints a pod in a few lines a person can read: what a shrunk
// counterexample is reported with.
func describe(pod *v1.Pod, anchor time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pod generation=%d phase=%q reason=%q", pod.Generation, pod.Status.Phase, pod.Status.Reason)
	if pod.DeletionTimestamp != nil {
		b.WriteString(" deleting")
	}
	fmt.Fprintf(&b, "\n  spec restartPolicy=%s", pod.Spec.RestartPolicy)
	if pod.Spec.HostNetwork {
		b.WriteString(" hostNetwork")
	}
	for _, g := range pod.Spec.ReadinessGates {
		fmt.Fprintf(&b, " gate=%s", g.ConditionType)
	}
	for _, c := range pod.Spec.InitContainers {
		fmt.Fprintf(&b, "\n  initContainer %s%s", c.Name, containerSpec(c))
	}
	for _, c := range pod.Spec.Containers {
		fmt.Fprintf(&b, "\n  container %s%s", c.Name, containerSpec(c))
	}
	for _, l := range []struct {
		name string
		list []v1.ContainerStatus
	}{{"initContainerStatuses", pod.Status.InitContainerStatuses}, {"containerStatuses", pod.Status.ContainerStatuses}} {
		if l.list == nil {
			fmt.Fprintf(&b, "\n  %s: nil", l.name)
			continue
		}
		fmt.Fprintf(&b, "\n  %s:", l.name)
		if len(l.list) == 0 {
			b.WriteString(" []")
		}
		for _, s := range l.list {
			fmt.Fprintf(&b, "\n    %s: %s ready=%v started=%s restarts=%d", s.Name, state(s.State, anchor), s.Ready, ptr(s.Started), s.RestartCount)
			if s.LastTerminationState != (v1.ContainerState{}) {
				fmt.Fprintf(&b, " last=%s", state(s.LastTerminationState, anchor))
			}
		}
	}
	b.WriteString("\n  conditions:")
	for _, c := range pod.Status.Conditions {
		fmt.Fprintf(&b, " %s=%s", c.Type, c.Status)
		if c.Reason != "" {
			fmt.Fprintf(&b, "(%s)", c.Reason)
		}
	}
	if pod.Status.PodIP != "" || len(pod.Status.PodIPs) > 0 || pod.Spec.NodeName != "" || pod.Status.NominatedNodeName != "" {
		fmt.Fprintf(&b, "\n  podIP=%q podIPs=%v node=%q nominated=%q", pod.Status.PodIP, pod.Status.PodIPs, pod.Spec.NodeName, pod.Status.NominatedNodeName)
	}
	return b.String()
}

func containerSpec(c v1.Container) string {
	var b strings.Builder
	if c.RestartPolicy != nil {
		fmt.Fprintf(&b, " restartPolicy=%s", *c.RestartPolicy)
	}
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes != nil {
			fmt.Fprintf(&b, " rule=%s(%s %v)", r.Action, r.ExitCodes.Operator, r.ExitCodes.Values)
		}
	}
	return b.String()
}

func state(s v1.ContainerState, anchor time.Time) string {
	switch {
	case s.Waiting != nil:
		return fmt.Sprintf("waiting(%q)", s.Waiting.Reason)
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		at := "no time"
		if !s.Terminated.FinishedAt.IsZero() {
			at = anchor.Sub(s.Terminated.FinishedAt.Time).String() + " before start"
		}
		return fmt.Sprintf("terminated(exit=%d signal=%d reason=%q, %s)", s.Terminated.ExitCode, s.Terminated.Signal, s.Terminated.Reason, at)
	}
	return "no state"
}

func ptr(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}
