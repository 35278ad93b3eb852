package containerstate_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/containerstate/containerstatetest"
	"github.com/nodestate/nodestate/kubeversion"
)

// apiDrops removes from spec what the API server of minor v drops or
// refuses, its gates being off: container-level restartPolicy and rules of
// regular containers, rules of init containers and any init container
// policy but Always (sidecars) before 1.35, and RestartAllContainers rules
// before 1.36.
func apiDrops(spec *v1.PodSpec, v kubeversion.Version) {
	strip := func(cs []v1.Container, regular bool) {
		for i := range cs {
			c := &cs[i]
			if !v.AtLeast(kubeversion.V1_35) {
				c.RestartPolicyRules = nil
				if regular || (c.RestartPolicy != nil && *c.RestartPolicy != v1.ContainerRestartPolicyAlways) {
					c.RestartPolicy = nil
				}
			}
			if !v.AtLeast(kubeversion.V1_36) {
				kept := c.RestartPolicyRules[:0:0]
				for _, r := range c.RestartPolicyRules {
					if r.Action != v1.ContainerRestartRuleActionRestartAllContainers {
						kept = append(kept, r)
					}
				}
				c.RestartPolicyRules = kept
			}
		}
	}
	strip(spec.InitContainers, false)
	strip(spec.Containers, true)
}

// TestInvariantsPerVersion runs the invariant checker over generated
// runtime sequences with the profiles of 1.36 and 1.37, on pods as that
// minor's API server stores them: the machine accepts every runtime
// sequence and keeps its invariants.
//
// Before 1.36 the checker's "restartCount never decreases" is not the
// kubelet's: without RestartAllContainersOnContainerExits the kubelet
// reports the runtime's count, which goes down when the newest instance
// disappears before an older one (TestVersionDifferences, CS-V2/restartCount).
// Those profiles are left out until that is settled.
func TestInvariantsPerVersion(t *testing.T) {
	for _, v := range []kubeversion.Version{kubeversion.V1_36, kubeversion.V1_37} {
		t.Run(v.String(), func(t *testing.T) {
			opts := containerstate.DefaultOptionsFor(v)
			rapid.Check(t, func(t *rapid.T) {
				target := containerstatetest.Target().Draw(t, "target")
				spec := target.Pod.Spec.DeepCopy()
				apiDrops(spec, v)
				target.Pod.Spec = spec
				for _, list := range [][]v1.Container{spec.InitContainers, spec.Containers} {
					for _, c := range list {
						if c.Name == target.Name {
							target.Container = c
						}
					}
				}
				events := containerstatetest.Events(target).Draw(t, "events")
				m, err := containerstate.NewMachine(opts, target.Pod, target.Name)
				if err != nil {
					t.Fatalf("NewMachine: %v", err)
				}
				check := containerstatetest.NewChecker(target, opts.Features)
				if err := check.Step(containerstate.Event{}, m.Status()); err != nil {
					t.Fatal(err)
				}
				for _, ev := range events {
					if err := m.Step(ev); err != nil {
						t.Fatalf("%v: a runtime sequence was refused: %v", v, err)
					}
					if err := check.Step(ev, m.Status()); err != nil {
						t.Fatalf("%v: %v", v, err)
					}
				}
			})
		})
	}
}
