package podlifecycle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
)

// TestRule3_2_ResetOrder: the reset list takes every instance of every
// container, and only an exited instance whose first matching rule is
// RestartAllContainers moves to the end: an exit matching a Restart rule
// keeps its place, and so does an older instance of a source's container
// (rule 3.2).
func TestRule3_2_ResetOrder(t *testing.T) {
	restartAll := []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}}}}
	restartOnOne := []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}}}}
	never := ptr(v1.ContainerRestartPolicyNever)
	t.Run("restart-rule-keeps-its-place", func(t *testing.T) {
		p := podP3()
		p.Spec.Containers[0].RestartPolicy, p.Spec.Containers[0].RestartPolicyRules = never, restartOnOne
		s := newSnap(t, p)
		s.add("foo1", exited, 1)
		s.add("foo2", running, 0)
		s.add("foo3", running, 0)
		s.m.marked = true
		want := planOf{R: []string{"foo1", "foo2*", "foo3*"}}
		if d := cmp.Diff(want, s.plan(), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("an exit matching a Restart rule is no source (-want +got):\n%s", d)
		}
	})
	t.Run("older-instance-of-a-source", func(t *testing.T) {
		p := podP3()
		p.Spec.Containers[0].RestartPolicy, p.Spec.Containers[0].RestartPolicyRules = never, restartAll
		s := newSnap(t, p)
		s.add("foo1", exited, 0) // older, exit 0: no rule matches
		s.add("foo1", exited, 1) // newest: the source
		s.add("foo2", running, 0)
		s.m.marked = true
		want := planOf{R: []string{"foo1", "foo2*", "foo1"}}
		if d := cmp.Diff(want, s.plan(), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("the source's older instance is reset in its place (-want +got):\n%s", d)
		}
	})
}

// TestRule3_5_InitUnknownPodPolicy: a regular init container in an unknown
// state with no restartPolicy of its own follows the pod's: killed and
// started again unless the pod's is Never, which kills the pod (rule 3.5).
func TestRule3_5_InitUnknownPodPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy v1.RestartPolicy
		want   planOf
	}{
		{"always", v1.RestartPolicyAlways, planOf{I: []int{1}, X: []string{"init2"}, XMsgs: []string{MessageKillUnknownInitContainer}}},
		{"never", v1.RestartPolicyNever, planOf{K: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := podPI()
			pod.Spec.RestartPolicy = tc.policy
			s := newSnap(t, pod)
			s.add("init1", exited, 0)
			s.add("init2", unknown, 0)
			if d := cmp.Diff(tc.want, s.plan(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("pod %s (-want +got):\n%s", tc.policy, d)
			}
		})
	}
}
