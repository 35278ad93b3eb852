package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The shim of Kubernetes v1.34.4: the upstream APIs whose presence or
// signature differs between the releases the suite compares with.

const release = "v1.34.4"

// noShouldRestart is empty: the release has ContainerShouldRestart.
const noShouldRestart = ""

// restartAllVariants: RestartAllContainersOnContainerExits does not exist
// in this release (added in 1.35), which behaves as with it off.
func restartAllVariants() []bool { return []bool{false} }

func setRestartAll(on bool) error {
	if on {
		return fmt.Errorf("%s has no RestartAllContainersOnContainerExits gate", release)
	}
	return nil
}

func shouldRestart(c v1.Container, spec v1.PodSpec, exit int32) (bool, error) {
	return podutil.ContainerShouldRestart(c, spec, exit), nil
}

func observedGeneration(old *v1.PodStatus, generation int64, t v1.PodConditionType) int64 {
	return podutil.CalculatePodConditionObservedGeneration(old, generation, t)
}

// restartingCondition: the release has no AllContainersRestarting
// condition.
func restartingCondition(*v1.Pod, *kubecontainer.PodStatus, *v1.PodStatus, v1.PodPhase) (v1.PodCondition, bool) {
	return v1.PodCondition{}, false
}
