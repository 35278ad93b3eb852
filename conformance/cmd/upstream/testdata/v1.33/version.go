package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The shim of Kubernetes v1.33.13: the upstream APIs whose presence or
// signature differs between the releases the suite compares with.

const release = "v1.33.13"

// noShouldRestart says why ShouldRestart is not compared.
const noShouldRestart = "pkg/api/v1/pod.ContainerShouldRestart does not exist in v1.33.13 " +
	"(added in 1.34 with ContainerRestartRules); the kubelet's ShouldContainerBeRestarted " +
	"reads the runtime's status and the pod policy only, and is not what containerstate.ShouldRestart models"

// restartAllVariants: RestartAllContainersOnContainerExits does not exist
// in this release (added in 1.35), which behaves as with it off.
func restartAllVariants() []bool { return []bool{false} }

func setRestartAll(on bool) error {
	if on {
		return fmt.Errorf("%s has no RestartAllContainersOnContainerExits gate", release)
	}
	return nil
}

func shouldRestart(v1.Container, v1.PodSpec, int32) (bool, error) {
	return false, fmt.Errorf("%s", noShouldRestart)
}

// observedGeneration is the release's GetPodObservedGenerationIfEnabledOnCondition
// (renamed CalculatePodConditionObservedGeneration in 1.34).
func observedGeneration(old *v1.PodStatus, generation int64, t v1.PodConditionType) int64 {
	return podutil.GetPodObservedGenerationIfEnabledOnCondition(old, generation, t)
}

// restartingCondition: the release has no AllContainersRestarting
// condition.
func restartingCondition(*v1.Pod, *kubecontainer.PodStatus, *v1.PodStatus, v1.PodPhase) (v1.PodCondition, bool) {
	return v1.PodCondition{}, false
}
