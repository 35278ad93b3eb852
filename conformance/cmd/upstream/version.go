package main

import (
	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/features"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/status"
)

// The shim of Kubernetes v1.37.2: the upstream APIs whose presence or
// signature differs between the releases the suite compares with.

const release = "v1.37.2"

// noShouldRestart is empty: the release has ContainerShouldRestart.
const noShouldRestart = ""

// restartAllVariants are the settings of RestartAllContainersOnContainerExits
// the properties run with: its default (on, beta) first, then off.
func restartAllVariants() []bool { return []bool{true, false} }

func setRestartAll(on bool) error {
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(features.RestartAllContainersOnContainerExits): on})
}

func shouldRestart(c v1.Container, spec v1.PodSpec, exit int32) (bool, error) {
	return podutil.ContainerShouldRestart(c, spec, exit), nil
}

func observedGeneration(old *v1.PodStatus, generation int64, t v1.PodConditionType) int64 {
	return podutil.CalculatePodConditionObservedGeneration(old, generation, t)
}

// restartingCondition is generateAPIPodStatus's AllContainersRestarting
// condition: with the gate on, for a pod with a RestartAllContainers rule.
func restartingCondition(pod *v1.Pod, runtime *kubecontainer.PodStatus, old *v1.PodStatus, phase v1.PodPhase) (v1.PodCondition, bool) {
	if !utilfeature.DefaultFeatureGate.Enabled(features.RestartAllContainersOnContainerExits) || !podutil.AllContainersCouldRestart(&pod.Spec) {
		return v1.PodCondition{}, false
	}
	return status.GenerateAllContainersRestartingCondition(pod, runtime, old, phase), true
}
