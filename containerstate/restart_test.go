package containerstate

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func containerPolicy(p v1.ContainerRestartPolicy) *v1.ContainerRestartPolicy { return &p }

func exitRule(action v1.ContainerRestartRuleAction, op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) v1.ContainerRestartRule {
	return v1.ContainerRestartRule{Action: action, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
}

// TestShouldRestart traces spec/containerstate.md section 3.1.
func TestShouldRestart(t *testing.T) {
	never, onFailure, always := v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyAlways
	restart, restartAll := v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers
	in, notIn := v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn

	tests := []struct {
		rule     string
		reason   string
		features Features
		pod      *v1.PodSpec
		c        *v1.Container
		exit     int32
		want     bool
	}{
		{rule: "3.1.2", reason: "pod policy Always restarts a clean exit", pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways}, c: &v1.Container{}, exit: 0, want: true},
		{rule: "3.1.2", reason: "pod policy OnFailure does not restart exit 0", pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyOnFailure}, c: &v1.Container{}, exit: 0, want: false},
		{rule: "3.1.2", reason: "pod policy OnFailure restarts a negative (Windows) exit code", pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyOnFailure}, c: &v1.Container{}, exit: -1073741510, want: true},
		{rule: "3.1.2", reason: "pod policy Never never restarts", pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever}, c: &v1.Container{}, exit: 1, want: false},
		{rule: "3.1.2", reason: "empty pod policy is the default Always", pod: &v1.PodSpec{}, c: &v1.Container{}, exit: 0, want: true},
		{rule: "3.1.2", reason: "an unknown pod policy is treated as Always", pod: &v1.PodSpec{RestartPolicy: "Sometimes"}, c: &v1.Container{}, exit: 0, want: true},
		{rule: "3.1.2", reason: "a nil pod spec is the API default Always", pod: nil, c: &v1.Container{}, exit: 3, want: true},
		{rule: "3.1.2", reason: "a nil container has no policy of its own", pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever}, c: nil, exit: 3, want: false},
		{rule: "3.1.1.2", reason: "container Always overrides pod Never", pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever}, c: &v1.Container{RestartPolicy: &always}, exit: 0, want: true},
		{rule: "3.1.1.2", reason: "container Never overrides pod Always", pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways}, c: &v1.Container{RestartPolicy: &never}, exit: 1, want: false},
		{rule: "3.1.1.2", reason: "container OnFailure restarts a failure", pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever}, c: &v1.Container{RestartPolicy: &onFailure}, exit: 2, want: true},
		{rule: "3.1.1.2", reason: "container OnFailure does not restart exit 0", pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways}, c: &v1.Container{RestartPolicy: &onFailure}, exit: 0, want: false},
		{rule: "3.1.1.2", reason: "an unrecognised container policy falls through to the pod policy", pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever}, c: &v1.Container{RestartPolicy: containerPolicy("Sometimes")}, exit: 0, want: false},
		{rule: "3.1.1.1", reason: "a Restart rule matching In overrides container Never",
			pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever},
			c:   &v1.Container{RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{exitRule(restart, in, 42)}}, exit: 42, want: true},
		{rule: "3.1.1.1", reason: "a rule that does not match leaves the container policy to decide",
			pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever},
			c:   &v1.Container{RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{exitRule(restart, in, 42)}}, exit: 1, want: false},
		{rule: "3.1.1.1", reason: "NotIn matches an exit code outside its values",
			pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever},
			c:   &v1.Container{RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{exitRule(restart, notIn, 0)}}, exit: 137, want: true},
		{rule: "3.1.1.1", reason: "only the first matching rule is consulted",
			pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever},
			c: &v1.Container{RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{
				exitRule("Ignore", in, 7), exitRule(restart, in, 7)}}, exit: 7, want: false},
		{rule: "3.1.1.1", reason: "a rule without exitCodes never matches",
			pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever},
			c:   &v1.Container{RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{{Action: restart}}}, exit: 7, want: false},
		{rule: "3.1.1.1", reason: "a rule without exitCodes is skipped and a later rule can match",
			pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever},
			c: &v1.Container{RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{
				{Action: restart}, exitRule(restart, in, 7)}}, exit: 7, want: true},
		{rule: "3.1.1.1", reason: "a rule with an unknown operator is skipped and a later rule can match",
			pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever},
			c: &v1.Container{RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{
				exitRule(restart, "Exists", 7), exitRule(restart, in, 7)}}, exit: 7, want: true},
		{rule: "3.1 (rules only with a container policy)", reason: "rules are ignored when the container has no restartPolicy",
			pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever},
			c:   &v1.Container{RestartPolicyRules: []v1.ContainerRestartRule{exitRule(restart, in, 7)}}, exit: 7, want: false},
		{rule: "3.1.1.1 RestartAllContainers", reason: "with the gate on (1.37 default) the container runs again",
			features: DefaultFeatures(),
			pod:      &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever},
			c:        &v1.Container{RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{exitRule(restartAll, in, 42)}}, exit: 42, want: true},
		{rule: "3.1.1.1 RestartAllContainers", reason: "with the gate off the match falls through to the container policy",
			features: Features{ContainerRestartRules: true},
			pod:      &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways},
			c:        &v1.Container{RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{exitRule(restartAll, in, 42)}}, exit: 42, want: false},
		{rule: "3.1.1.2 sidecar", reason: "a sidecar (init container with Always) restarts under pod Never",
			pod: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever}, c: &v1.Container{RestartPolicy: &always}, exit: 0, want: true},
	}
	for _, tt := range tests {
		f := tt.features
		if f == (Features{}) {
			f = DefaultFeatures()
		}
		if got := f.ShouldRestart(tt.pod, tt.c, tt.exit); got != tt.want {
			t.Errorf("rule %s: %s: ShouldRestart(exit %d) = %v, want %v", tt.rule, tt.reason, tt.exit, got, tt.want)
		}
		if f == DefaultFeatures() {
			if got := ShouldRestart(tt.pod, tt.c, tt.exit); got != tt.want {
				t.Errorf("rule %s: %s: package ShouldRestart(exit %d) = %v, want %v", tt.rule, tt.reason, tt.exit, got, tt.want)
			}
		}
	}
}
