package containerstate

import (
	v1 "k8s.io/api/core/v1"
)

// TerminatedStatus returns a copy of base in which every container that could
// still look alive is reported failed, the container defaulting of the
// kubelet status manager's TerminatePod (spec section 13). base is the
// cached status when there is one, else pod.Status; pod is the pod as the
// caller has it, whose status (not base) decides whether the pod has
// initialized.
//
//   - Regular containers, once the pod has initialized (see
//     [HasPodInitialized]): every status that is not Terminated becomes
//     Terminated with reason ContainerStatusUnknown, the message
//     "The container could not be located when the pod was terminated" and
//     exit code 137.
//   - Init containers: the same, for every status except the trailing run of
//     never-started Waiting ones (a Waiting status with a last termination
//     has started); the first init status is always included.
//   - Ephemeral containers are left alone.
//
// Phase is not touched: that is the pod's rule (package podphase). A nil pod
// or base gives an empty status.
func TerminatedStatus(pod *v1.Pod, base *v1.PodStatus) v1.PodStatus {
	if base == nil {
		return v1.PodStatus{}
	}
	out := *base.DeepCopy()
	if pod == nil {
		return out
	}
	if HasPodInitialized(pod) {
		for i := range out.ContainerStatuses {
			markUnknown(&out.ContainerStatuses[i])
		}
	}
	for i := 0; i < startedInitPrefix(out.InitContainerStatuses); i++ {
		markUnknown(&out.InitContainerStatuses[i])
	}
	return out
}

func markUnknown(s *v1.ContainerStatus) {
	if s.State.Terminated != nil {
		return
	}
	s.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		Reason: ReasonContainerStatusUnknown, Message: MessageUnknownTerminated, ExitCode: ExitCodeUnknown,
	}}
}

// startedInitPrefix returns how many init statuses from the front have
// started: all but the trailing never-started Waiting ones, and at least one.
func startedInitPrefix(statuses []v1.ContainerStatus) int {
	n := len(statuses)
	for n > 1 {
		s := &statuses[n-1]
		if s.State.Waiting == nil || s.LastTerminationState.Terminated != nil {
			break
		}
		n--
	}
	return n
}

// HasPodInitialized reports whether the pod's status shows that its init
// containers are done, as the kubelet status manager decides it: the spec has
// no init containers; or some regular container has a last termination or a
// state other than Waiting (no state counts); or the last init status is a
// sidecar's that is Running and started, or a regular init container's that
// exited 0 now or in its last termination. A last init status whose name is
// not the spec's at its index, or a nil pod, gives false.
func HasPodInitialized(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	spec, st := &pod.Spec, &pod.Status
	if len(spec.InitContainers) == 0 {
		return true
	}
	for i := range st.ContainerStatuses {
		c := &st.ContainerStatuses[i]
		if c.LastTerminationState.Terminated != nil || c.State.Waiting == nil {
			return true
		}
	}
	// The last init status decides, checked against the spec entry at its
	// index.
	n := len(st.InitContainerStatuses)
	if n == 0 || n > len(spec.InitContainers) || spec.InitContainers[n-1].Name != st.InitContainerStatuses[n-1].Name {
		return false
	}
	last, ls := &spec.InitContainers[n-1], &st.InitContainerStatuses[n-1]
	if IsSidecar(last) {
		return ls.State.Running != nil && ls.Started != nil && *ls.Started
	}
	if t := ls.State.Terminated; t != nil && t.ExitCode == 0 {
		return true
	}
	t := ls.LastTerminationState.Terminated
	return t != nil && t.ExitCode == 0
}
