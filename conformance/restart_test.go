package conformance

import (
	"testing"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/containerstate/containerstatetest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/features"
	"pgregory.net/rapid"
)

// TestShouldRestartMatchesUpstream compares containerstate.ShouldRestart with
// k8s.io/kubernetes/pkg/api/v1/pod.ContainerShouldRestart on generated pods
// and exit codes, with RestartAllContainersOnContainerExits at its 1.37
// default (on) and off.
func TestShouldRestartMatchesUpstream(t *testing.T) {
	for _, gate := range []bool{true, false} {
		name := "ShouldRestart vs ContainerShouldRestart (RestartAllContainers on)"
		if !gate {
			name = "ShouldRestart vs ContainerShouldRestart (RestartAllContainers off)"
		}
		t.Run(name, func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.RestartAllContainersOnContainerExits, gate)
			f := containerstate.DefaultFeaturesFor(profile)
			f.RestartAllContainersOnContainerExits = gate
			inputs, mismatches := 0, 0
			defer func() { record(name, inputs, mismatches) }()
			rapid.Check(t, func(t *rapid.T) {
				inputs++
				target := containerstatetest.Target().Draw(t, "target")
				exit := containerstatetest.ExitCode().Draw(t, "exit")
				c := target.Container
				got := f.ShouldRestart(target.Pod.Spec, &c, exit)
				want := podutil.ContainerShouldRestart(c, *target.Pod.Spec, exit)
				if gate && containerstate.ShouldRestart(target.Pod.Spec, &c, exit) != want {
					mismatches++
					t.Fatalf("%s\npackage ShouldRestart(exit %d) disagrees with upstream %v", describeTarget(target), exit, want)
				}
				if got != want {
					mismatches++
					t.Fatalf("%s\nShouldRestart(exit %d) = %v, upstream %v", describeTarget(target), exit, got, want)
				}
			})
			if inputs < checks() {
				t.Fatalf("ran %d inputs, want at least %d", inputs, checks())
			}
		})
	}
}
