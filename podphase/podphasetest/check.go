package podphasetest

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/podphase"
)

// The sentinels of the check errors: every error a Check function returns
// wraps one of them.
var (
	// ErrInvariant is wrapped by every error reporting a broken invariant.
	ErrInvariant = errors.New("podphasetest: invariant broken")
	// ErrInvalidInput is returned for a nil pod or status, which the checks
	// refuse to judge.
	ErrInvalidInput = errors.New("podphasetest: invalid input")
)

// CheckPhase returns an error unless p is one of the four phases the kubelet
// writes: Pending, Running, Succeeded or Failed.
func CheckPhase(p v1.PodPhase) error {
	switch p {
	case v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed:
		return nil
	}
	return fmt.Errorf("%w: phase %q is not one the kubelet writes", ErrInvariant, p)
}

// CheckConditions returns an error when the conditions of status break an
// invariant of the kubelet's conditions for pod:
//
//   - each condition type appears at most once;
//   - Ready=True implies ContainersReady=True and every readiness gate of
//     the spec has a True condition;
//   - a terminal phase has neither Ready=True nor ContainersReady=True.
func CheckConditions(pod *v1.Pod, status *v1.PodStatus) error {
	if pod == nil || status == nil {
		return fmt.Errorf("%w: nil pod or status", ErrInvalidInput)
	}
	seen := make(map[v1.PodConditionType]v1.ConditionStatus, len(status.Conditions))
	for _, c := range status.Conditions {
		if _, dup := seen[c.Type]; dup {
			return fmt.Errorf("%w: condition %s appears twice", ErrInvariant, c.Type)
		}
		seen[c.Type] = c.Status
	}
	if seen[v1.PodReady] == v1.ConditionTrue {
		if seen[v1.ContainersReady] != v1.ConditionTrue {
			return fmt.Errorf("%w: Ready is True but ContainersReady is %q", ErrInvariant, seen[v1.ContainersReady])
		}
		for _, g := range pod.Spec.ReadinessGates {
			if seen[g.ConditionType] != v1.ConditionTrue {
				return fmt.Errorf("%w: Ready is True but readiness gate %s is %q", ErrInvariant, g.ConditionType, seen[g.ConditionType])
			}
		}
	}
	if podphase.IsTerminal(status.Phase) {
		for _, t := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
			if seen[t] == v1.ConditionTrue {
				return fmt.Errorf("%w: %s is True in terminal phase %s", ErrInvariant, t, status.Phase)
			}
		}
	}
	return nil
}

// CheckUpdate returns an error when the status update from old to new
// breaks an invariant the kubelet keeps:
//
//   - the phase change is legal ([podphase.LegalTransition]): a terminal
//     phase is never left and the new phase is one of the four;
//   - no container's restartCount goes down;
//   - a condition whose status did not change keeps its
//     lastTransitionTime.
func CheckUpdate(old, new *v1.PodStatus) error {
	if old == nil || new == nil {
		return fmt.Errorf("%w: nil status", ErrInvalidInput)
	}
	if err := podphase.CheckTransition(old.Phase, new.Phase); err != nil {
		return fmt.Errorf("%w: %w", ErrInvariant, err)
	}
	for _, lists := range [][2][]v1.ContainerStatus{
		{old.InitContainerStatuses, new.InitContainerStatuses},
		{old.ContainerStatuses, new.ContainerStatuses},
	} {
		for _, o := range lists[0] {
			for _, n := range lists[1] {
				if n.Name == o.Name && n.RestartCount < o.RestartCount {
					return fmt.Errorf("%w: restartCount of container %q went down from %d to %d", ErrInvariant, o.Name, o.RestartCount, n.RestartCount)
				}
			}
		}
	}
	for _, o := range old.Conditions {
		for _, n := range new.Conditions {
			if n.Type == o.Type && n.Status == o.Status && !n.LastTransitionTime.Equal(&o.LastTransitionTime) {
				return fmt.Errorf("%w: condition %s stayed %s but its lastTransitionTime moved from %v to %v", ErrInvariant,
					o.Type, o.Status, o.LastTransitionTime, n.LastTransitionTime)
			}
		}
	}
	return nil
}

// CheckExplanation returns an error when e names a container pod does not
// have, or its phase is not one of the four.
func CheckExplanation(pod *v1.Pod, e podphase.Explanation) error {
	if err := CheckPhase(e.Phase); err != nil {
		return err
	}
	if pod == nil {
		if len(e.Containers) > 0 {
			return fmt.Errorf("%w: explanation of a nil pod names containers %v", ErrInvariant, e.Containers)
		}
		return nil
	}
	for _, name := range e.Containers {
		if !inSpec(pod.Spec.InitContainers, name) && !inSpec(pod.Spec.Containers, name) {
			return fmt.Errorf("%w: explanation names container %q, which the pod does not have", ErrInvariant, name)
		}
	}
	if e.Reason == "" {
		return fmt.Errorf("%w: explanation of phase %s has no reason", ErrInvariant, e.Phase)
	}
	return nil
}

// CheckDisplay returns an error when [podphase.DisplayStatus] is empty for
// a pod that has a phase.
func CheckDisplay(pod *v1.Pod) error {
	if pod != nil && pod.Status.Phase != "" && podphase.DisplayStatus(pod) == "" {
		return fmt.Errorf("%w: empty STATUS for a pod in phase %s", ErrInvariant, pod.Status.Phase)
	}
	return nil
}

func inSpec(cs []v1.Container, name string) bool {
	for i := range cs {
		if cs[i].Name == name {
			return true
		}
	}
	return false
}
