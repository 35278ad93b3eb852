package podphase_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podphase/podphasetest"
)

// failedContainer reports whether some regular container status is
// Terminated with a non-zero exit code.
func failedContainer(pod *v1.Pod) bool {
	for _, st := range pod.Status.ContainerStatuses {
		if t := st.State.Terminated; t != nil && t.ExitCode != 0 {
			return true
		}
	}
	return false
}

// kubectl's STATUS differs between minors only as docs/versions.md row
// PP-V5 says: 1.35 and later print what DisplayStatus prints; 1.33 and 1.34
// differ from it only for a pod with a failed regular container, where they
// print Completed or NotReady instead.
func TestPropertyDisplayVersions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podphasetest.Pod().Draw(t, "pod")
		v := rapid.SampledFrom(kubeversion.Supported()).Draw(t, "version")
		got, want := podphase.DefaultOptionsFor(v).DisplayStatus(pod), podphase.DisplayStatus(pod)
		switch {
		case got == want:
		case v.AtLeast(kubeversion.V1_35):
			t.Fatalf("%v: STATUS %q, 1.37 %q; the printer did not change after 1.35", v, got, want)
		case !failedContainer(pod):
			t.Fatalf("%v: STATUS %q, 1.37 %q, but no container failed", v, got, want)
		case got != "Completed" && got != "NotReady":
			t.Fatalf("%v: STATUS %q, 1.37 %q; the old printer keeps Completed or NotReady", v, got, want)
		}
	})
}

// The conditions differ between minors, with the same gates, only as rows
// PP-V3 and PP-V4 say: before 1.34 an observedGeneration may be 0 or the
// pod's generation instead of 1.37's value, and before 1.37 a False
// PodReadyToStartContainers has no reason and no message.
func TestPropertyConditionsVersions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podphasetest.Pod().Draw(t, "pod")
		pod.Generation = rapid.Int64Range(0, 5).Draw(t, "generation")
		for i := range pod.Status.Conditions {
			pod.Status.Conditions[i].ObservedGeneration = rapid.Int64Range(0, 5).Draw(t, "oldObserved")
		}
		if rapid.Bool().Draw(t, "resizing") {
			pod.Status.Conditions = append(pod.Status.Conditions, v1.PodCondition{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue,
				ObservedGeneration: rapid.Int64Range(0, 5).Draw(t, "resizeObserved")})
		}
		v := rapid.SampledFrom(kubeversion.Supported()).Draw(t, "version")
		in := podphase.ConditionsInput{Pod: pod, Status: &pod.Status, Now: podphasetest.Epoch.Add(3600e9),
			Sandbox: rapid.SampledFrom([]podphase.Sandbox{podphase.SandboxReady, podphase.SandboxMissing, podphase.SandboxNoIP}).Draw(t, "sandbox")}
		gates := containerstate.DefaultFeatures()
		got, err := podphase.Options{Features: gates, Version: v}.Conditions(in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := podphase.Options{Features: gates}.Conditions(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%v: %d conditions, 1.37 %d", v, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.ObservedGeneration != w.ObservedGeneration {
				if v.AtLeast(kubeversion.V1_34) || (g.ObservedGeneration != 0 && g.ObservedGeneration != pod.Generation) {
					t.Fatalf("%v %s: observedGeneration %d, 1.37 %d", v, g.Type, g.ObservedGeneration, w.ObservedGeneration)
				}
				g.ObservedGeneration = w.ObservedGeneration
			}
			if g.Type == v1.PodReadyToStartContainers && g.Status == v1.ConditionFalse && !v.AtLeast(kubeversion.V1_37) {
				if g.Reason != "" || g.Message != "" {
					t.Fatalf("%v: PodReadyToStartContainers has reason %q message %q before 1.37", v, g.Reason, g.Message)
				}
				g.Reason, g.Message = w.Reason, w.Message
			}
			if g != w {
				t.Fatalf("%v: condition %d is %+v, 1.37 %+v", v, i, g, w)
			}
		}
	})
}
