package conformance

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/podphase"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/features"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/status"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	utilpod "k8s.io/kubernetes/pkg/util/pod"
)

// upstreamConditions builds the conditions as the kubelet's
// generateAPIPodStatus assembles them, calling the exported generators of
// k8s.io/kubernetes/pkg/kubelet/status in the kubelet's order: the
// conditions the kubelet does not own, DisruptionTarget from the cached
// status, PodReadyToStartContainers, Initialized, Ready, ContainersReady,
// PodScheduled and, with the gate on and a RestartAllContainers rule in the
// spec, AllContainersRestarting.
func upstreamConditions(c conditionsCase) []v1.PodCondition {
	pod := c.pod.DeepCopy()
	s := c.status.DeepCopy()
	old := &pod.Status
	if c.old != nil {
		old = c.old.DeepCopy()
	}
	conds := make([]v1.PodCondition, 0, len(pod.Status.Conditions)+1)
	for _, cond := range pod.Status.Conditions {
		if !kubetypes.PodConditionByKubelet(cond.Type) {
			conds = append(conds, cond)
		}
	}
	if _, dt := podutil.GetPodConditionFromList(old.Conditions, v1.DisruptionTarget); dt != nil {
		conds = utilpod.ReplaceOrAppendPodCondition(conds, dt)
	}
	runtime := &kubecontainer.PodStatus{SandboxStatuses: c.sandboxes}
	for _, rc := range c.runtime {
		runtime.ContainerStatuses = append(runtime.ContainerStatuses, &kubecontainer.Status{
			Name: rc.Name, State: kubecontainer.State(rc.State), ExitCode: rc.ExitCode})
	}
	conds = append(conds, status.GeneratePodReadyToStartContainersCondition(pod, old, runtime))
	all := append(s.InitContainerStatuses, s.ContainerStatuses...)
	conds = append(conds, status.GeneratePodInitializedCondition(pod, old, all, s.Phase))
	conds = append(conds, status.GeneratePodReadyCondition(pod, old, conds, all, s.Phase))
	conds = append(conds, status.GenerateContainersReadyCondition(pod, old, all, s.Phase))
	conds = append(conds, v1.PodCondition{
		Type:               v1.PodScheduled,
		ObservedGeneration: podutil.CalculatePodConditionObservedGeneration(old, pod.Generation, v1.PodScheduled),
		Status:             v1.ConditionTrue,
	})
	if utilfeature.DefaultFeatureGate.Enabled(features.RestartAllContainersOnContainerExits) && podutil.AllContainersCouldRestart(&pod.Spec) {
		conds = append(conds, status.GenerateAllContainersRestartingCondition(pod, runtime, old, s.Phase))
	}
	return conds
}

// TestConditionsMatchUpstream compares podphase's conditions with the
// kubelet's generators (GeneratePodReadyToStartContainersCondition,
// GeneratePodInitializedCondition, GeneratePodReadyCondition,
// GenerateContainersReadyCondition), assembled as generateAPIPodStatus
// does, with RestartAllContainersOnContainerExits at its 1.37 default (on)
// and off.
func TestConditionsMatchUpstream(t *testing.T) {
	if up, ours := utilfeature.DefaultFeatureGate.Enabled(features.RestartAllContainersOnContainerExits), podphase.DefaultOptionsFor(profile).Features.RestartAllContainersOnContainerExits; up != ours {
		t.Fatalf("RestartAllContainersOnContainerExits defaults to %v upstream, %v in podphase.DefaultOptions", up, ours)
	}
	for _, gate := range []bool{true, false} {
		name := "Conditions vs kubelet/status Generate*Condition (RestartAllContainers on)"
		if !gate {
			name = "Conditions vs kubelet/status Generate*Condition (RestartAllContainers off)"
		}
		t.Run(name, func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.RestartAllContainersOnContainerExits, gate)
			opts := podphase.DefaultOptionsFor(profile)
			opts.Features.RestartAllContainersOnContainerExits = gate
			anchor := time.Now().Truncate(time.Second)
			inputs, mismatches := 0, 0
			defer func() { record(name, inputs, mismatches) }()
			rapid.Check(t, func(t *rapid.T) {
				c := conditionsGen(anchor).Draw(t, "case")
				if why := knownDifference(c, gate); why != "" {
					exclude(name, why)
					t.Skip(why)
				}
				inputs++
				got, err := opts.Conditions(podphase.ConditionsInput{Pod: c.pod, Status: c.status, Old: c.old, Sandbox: c.sandbox, RuntimeCleanedUp: c.cleanedUp, Now: anchor})
				if err != nil {
					t.Fatalf("podphase Conditions: %v", err)
				}
				want := upstreamConditions(c)
				if g, w := comparable(got), comparable(want); !equalConditions(g, w) {
					mismatches++
					t.Fatalf("%s\nnodestate: %s\nupstream:  %s", describeCase(c, anchor), conditionsString(g), conditionsString(w))
				}
			})
			if inputs < checks() {
				t.Fatalf("ran %d inputs, want at least %d", inputs, checks())
			}
		})
	}
}
