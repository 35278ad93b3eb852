package containerstate

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func podStatus(init, regular []v1.ContainerStatus) *v1.PodStatus {
	return &v1.PodStatus{InitContainerStatuses: init, ContainerStatuses: regular}
}

func named(name string, s v1.ContainerState) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: s}
}

// TestCheckStatusTransition traces section 12.2 (the kubelet status
// manager's checkContainerStateTransition).
func TestCheckStatusTransition(t *testing.T) {
	never, onFailure := v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure
	spec := func(policy v1.RestartPolicy, c ...v1.Container) *v1.PodSpec {
		return &v1.PodSpec{RestartPolicy: policy, Containers: c}
	}
	term := func(code int32) v1.ContainerState { return terminatedState(code, "", "") }
	run := runningState(at(1))
	restartAll := v1.Container{Name: "b", RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{exitRule(v1.ContainerRestartRuleActionRestartAllContainers, v1.ContainerRestartRuleOnExitCodesOpIn, 42)}}

	tests := []struct {
		rule     string
		reason   string
		features Features
		gatesOff bool // every gate off (features is then ignored)
		spec     *v1.PodSpec
		old, new *v1.PodStatus
		want     error
	}{
		{rule: "12.2 Always", reason: "pod policy Always allows everything",
			spec: spec(v1.RestartPolicyAlways, v1.Container{Name: "a"}), old: podStatus(nil, []v1.ContainerStatus{named("a", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.2 Never", reason: "pod policy Never: a terminated container may not run again",
			spec: spec(v1.RestartPolicyNever, v1.Container{Name: "a"}), old: podStatus(nil, []v1.ContainerStatus{named("a", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)}), want: ErrTransition},
		{rule: "12.2 Never", reason: "staying terminated is fine",
			spec: spec(v1.RestartPolicyNever, v1.Container{Name: "a"}), old: podStatus(nil, []v1.ContainerStatus{named("a", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("a", term(1))})},
		{rule: "12.2 OnFailure", reason: "a failed container may restart under OnFailure",
			spec: spec(v1.RestartPolicyOnFailure, v1.Container{Name: "a"}), old: podStatus(nil, []v1.ContainerStatus{named("a", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("a", waitingState("", ""))})},
		{rule: "12.2 OnFailure", reason: "a succeeded container may not",
			spec: spec(v1.RestartPolicyOnFailure, v1.Container{Name: "a"}), old: podStatus(nil, []v1.ContainerStatus{named("a", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)}), want: ErrTransition},
		{rule: "12.2 rules", reason: "ContainerRestartRules on: a container policy OnFailure under pod Never allows a failed container back",
			features: DefaultFeatures(), spec: spec(v1.RestartPolicyNever, v1.Container{Name: "a", RestartPolicy: &onFailure}), old: podStatus(nil, []v1.ContainerStatus{named("a", term(3))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.2 rules", reason: "ContainerRestartRules off: the same update is refused",
			features: Features{}, spec: spec(v1.RestartPolicyNever, v1.Container{Name: "a", RestartPolicy: &onFailure}), old: podStatus(nil, []v1.ContainerStatus{named("a", term(3))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)}), want: ErrTransition},
		{rule: "12.2 RestartAll", reason: "with a RestartAllContainers rule anywhere, every transition is allowed",
			spec: spec(v1.RestartPolicyNever, v1.Container{Name: "a"}, restartAll), old: podStatus(nil, []v1.ContainerStatus{named("a", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.2 RestartAll", reason: "with its gate off, the rule does not open everything",
			features: Features{ContainerRestartRules: true}, spec: spec(v1.RestartPolicyNever, v1.Container{Name: "a"}, restartAll), old: podStatus(nil, []v1.ContainerStatus{named("a", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)}), want: ErrTransition},
		{rule: "12.2 init", reason: "a sidecar is always skipped",
			spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, InitContainers: []v1.Container{{Name: "s", RestartPolicy: containerPolicy(v1.ContainerRestartPolicyAlways)}}},
			old:  podStatus([]v1.ContainerStatus{named("s", term(0))}, nil), new: podStatus([]v1.ContainerStatus{named("s", run)}, nil)},
		{rule: "12.2 init", reason: "a regular init container follows the regular rules",
			spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, InitContainers: []v1.Container{{Name: "i"}}},
			old:  podStatus([]v1.ContainerStatus{named("i", term(0))}, nil), new: podStatus([]v1.ContainerStatus{named("i", run)}, nil), want: ErrTransition},
		{rule: "12.2 init", reason: "init statuses out of spec order are a mismatch",
			spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, InitContainers: []v1.Container{{Name: "i"}, {Name: "j"}}},
			old:  podStatus([]v1.ContainerStatus{named("j", term(0))}, nil), new: podStatus(nil, nil), want: ErrSpecMismatch},
		{rule: "12.2 OnFailure", reason: "with every gate off, a failed container may restart under pod OnFailure",
			gatesOff: true, spec: spec(v1.RestartPolicyOnFailure, v1.Container{Name: "a"}), old: podStatus(nil, []v1.ContainerStatus{named("a", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.2 OnFailure", reason: "with every gate off, a succeeded container may not under pod OnFailure",
			gatesOff: true, spec: spec(v1.RestartPolicyOnFailure, v1.Container{Name: "a"}), old: podStatus(nil, []v1.ContainerStatus{named("a", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)}), want: ErrTransition},
		{rule: "12.2 regular", reason: "every old terminated container is checked: one that may restart does not let a later one through",
			spec: spec(v1.RestartPolicyNever, v1.Container{Name: "a", RestartPolicy: &onFailure}, v1.Container{Name: "b"}),
			old:  podStatus(nil, []v1.ContainerStatus{named("a", term(1)), named("b", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run), named("b", run)}), want: ErrTransition},
		{rule: "12.2 init", reason: "a sidecar is skipped, the regular init container after it is still checked",
			spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, InitContainers: []v1.Container{{Name: "s", RestartPolicy: containerPolicy(v1.ContainerRestartPolicyAlways)}, {Name: "i"}}},
			old:  podStatus([]v1.ContainerStatus{named("s", term(0)), named("i", term(0))}, nil), new: podStatus([]v1.ContainerStatus{named("s", run), named("i", run)}, nil), want: ErrTransition},
		{rule: "12.2 nil", reason: "a nil spec allows everything",
			spec: nil, old: podStatus(nil, []v1.ContainerStatus{named("a", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.2 nil", reason: "a nil old status allows everything",
			spec: spec(v1.RestartPolicyNever, v1.Container{Name: "a"}), old: nil, new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.2 nil", reason: "a nil new status allows everything",
			spec: spec(v1.RestartPolicyNever, v1.Container{Name: "a"}), old: podStatus(nil, []v1.ContainerStatus{named("a", term(1))}), new: nil},
		{rule: "12.2 init", reason: "more init statuses than init containers are a mismatch",
			spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, InitContainers: []v1.Container{{Name: "i"}}},
			old:  podStatus([]v1.ContainerStatus{named("i", term(0)), named("j", term(0))}, nil), new: podStatus(nil, nil), want: ErrSpecMismatch},
		{rule: "12.2 ephemeral", reason: "ephemeral containers are not checked",
			spec: spec(v1.RestartPolicyNever), old: &v1.PodStatus{EphemeralContainerStatuses: []v1.ContainerStatus{named("d", term(0))}},
			new: &v1.PodStatus{EphemeralContainerStatuses: []v1.ContainerStatus{named("d", run)}}},
	}
	for _, tt := range tests {
		f := tt.features
		if f == (Features{}) && tt.rule != "12.2 rules" {
			f = DefaultFeatures()
		}
		if tt.gatesOff {
			f = Features{}
		}
		err := f.CheckStatusTransition(tt.spec, tt.old, tt.new)
		if (tt.want == nil && err != nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("rule %s: %s: error %v, want %v", tt.rule, tt.reason, err, tt.want)
		}
	}
	var te *TransitionError
	err := DefaultFeatures().CheckStatusTransition(spec(v1.RestartPolicyNever, v1.Container{Name: "a"}),
		podStatus(nil, []v1.ContainerStatus{named("a", term(-2))}), podStatus(nil, []v1.ContainerStatus{named("a", run)}))
	if !errors.As(err, &te) || te.Container != "a" || te.ExitCode != -2 || te.Kind != Regular {
		t.Fatalf("want a *TransitionError for container a exit -2, got %v", err)
	}
	if err.Error() != `containerstate: terminated container may not be transitioned to non-terminated state: container "a" (exit code -2)` {
		t.Fatalf("message %q", err.Error())
	}
}

// TestValidateStatusTransition traces section 12.1 (the API server).
func TestValidateStatusTransition(t *testing.T) {
	never, onFailure := v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure
	term := func(code int32) v1.ContainerState { return terminatedState(code, "", "") }
	run := runningState(at(1))
	tests := []struct {
		rule     string
		reason   string
		features Features
		spec     *v1.PodSpec
		old, new *v1.PodStatus
		wantErr  bool
	}{
		{rule: "12.1 rules on", reason: "a container allowed to restart by ContainerShouldRestart may leave Terminated",
			features: DefaultFeatures(), spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "a"}}},
			old: podStatus(nil, []v1.ContainerStatus{named("a", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.1 rules on", reason: "a status whose name is not in the spec never may",
			features: DefaultFeatures(), spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways},
			old: podStatus(nil, []v1.ContainerStatus{named("ghost", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("ghost", run)}), wantErr: true},
		{rule: "12.1 rules on", reason: "a container policy Never under pod Always may not",
			features: DefaultFeatures(), spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "a", RestartPolicy: &never}}},
			old: podStatus(nil, []v1.ContainerStatus{named("a", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)}), wantErr: true},
		{rule: "12.1 RestartAll", reason: "a RestartAllContainers rule allows every transition",
			features: DefaultFeatures(), spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "a", RestartPolicy: &never,
				RestartPolicyRules: []v1.ContainerRestartRule{exitRule(v1.ContainerRestartRuleActionRestartAllContainers, v1.ContainerRestartRuleOnExitCodesOpIn, 9)}}}},
			old: podStatus(nil, []v1.ContainerStatus{named("a", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.1 gate off", reason: "pod Always allows; sidecars are always allowed",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, InitContainers: []v1.Container{{Name: "s", RestartPolicy: containerPolicy(v1.ContainerRestartPolicyAlways)}}},
			old: podStatus([]v1.ContainerStatus{named("s", term(0))}, nil), new: podStatus([]v1.ContainerStatus{named("s", run)}, nil)},
		{rule: "12.1 gate off", reason: "OnFailure with exit 0 may not",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyOnFailure, Containers: []v1.Container{{Name: "a"}}},
			old: podStatus(nil, []v1.ContainerStatus{named("a", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)}), wantErr: true},
		{rule: "12.1 rules on", reason: "every old terminated container is checked: one allowed to restart does not let a later one through",
			features: DefaultFeatures(), spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "a", RestartPolicy: &onFailure}, {Name: "b"}}},
			old: podStatus(nil, []v1.ContainerStatus{named("a", term(1)), named("b", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run), named("b", run)}), wantErr: true},
		{rule: "12.1 rules in use", reason: "gate off, but the old spec already uses a container policy: ContainerShouldRestart decides, so OnFailure lets a failed container back under pod Never",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "a", RestartPolicy: &onFailure}}},
			old: podStatus(nil, []v1.ContainerStatus{named("a", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.1 RestartAll in use", reason: "gates off, but the old spec already has a RestartAllContainers rule: every transition is allowed",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "a"}, {Name: "r", RestartPolicy: &never,
				RestartPolicyRules: []v1.ContainerRestartRule{exitRule(v1.ContainerRestartRuleActionRestartAllContainers, v1.ContainerRestartRuleOnExitCodesOpIn, 9)}}}},
			old: podStatus(nil, []v1.ContainerStatus{named("a", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.1 gate off", reason: "pod policy Always lets any container back",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "a"}}},
			old: podStatus(nil, []v1.ContainerStatus{named("a", term(0))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.1 gate off", reason: "OnFailure lets a container that failed back",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyOnFailure, Containers: []v1.Container{{Name: "a"}}},
			old: podStatus(nil, []v1.ContainerStatus{named("a", term(2))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.1 gate off", reason: "Never keeps a regular init container Terminated",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, InitContainers: []v1.Container{{Name: "i"}}},
			old: podStatus([]v1.ContainerStatus{named("i", term(1))}, nil), new: podStatus([]v1.ContainerStatus{named("i", run)}, nil), wantErr: true},
		{rule: "12.1 rules on", reason: "a container that stays Terminated while another runs is no transition",
			features: DefaultFeatures(), spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "a"}, {Name: "b"}}},
			old: podStatus(nil, []v1.ContainerStatus{named("a", term(1)), named("b", run)}), new: podStatus(nil, []v1.ContainerStatus{named("a", term(1)), named("b", run)})},
		{rule: "12.1 gate off", reason: "with no container policy or rule in use the legacy rule looks only at the pod: Always lets back even a status the spec does not name",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, InitContainers: []v1.Container{{Name: "i"}}, Containers: []v1.Container{{Name: "a"}}},
			old: podStatus(nil, []v1.ContainerStatus{named("ghost", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("ghost", run)})},
		{rule: "12.1 rules in use", reason: "gate off, but an init container (not a sidecar) has its own restartPolicy Never: ContainerShouldRestart decides, and pod Always does not let it back",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, InitContainers: []v1.Container{{Name: "i", RestartPolicy: &never}}},
			old: podStatus([]v1.ContainerStatus{named("i", term(1))}, nil), new: podStatus([]v1.ContainerStatus{named("i", run)}, nil), wantErr: true},
		{rule: "12.1 gate off", reason: "regular containers without a policy or rule of their own do not put the rules in use: pod Always lets back a status the spec does not name",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "a"}, {Name: "b"}}},
			old: podStatus(nil, []v1.ContainerStatus{named("ghost", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("ghost", run)})},
		{rule: "12.1 gate off", reason: "a regular init container without a policy or rule of its own does not put the rules in use: pod Always lets back a status the spec does not name",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, InitContainers: []v1.Container{{Name: "i"}}},
			old: podStatus(nil, []v1.ContainerStatus{named("ghost", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("ghost", run)})},
		{rule: "12.1 gate off", reason: "a sidecar's own restartPolicy Always does not put the rules in use: pod Always lets back a status the spec does not name",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, InitContainers: []v1.Container{{Name: "s", RestartPolicy: containerPolicy(v1.ContainerRestartPolicyAlways)}}},
			old: podStatus(nil, []v1.ContainerStatus{named("ghost", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("ghost", run)})},
		{rule: "12.1 rules in use", reason: "gate off, but a sidecar has restartPolicyRules: ContainerShouldRestart decides, and a status the spec does not name may not come back",
			features: Features{}, spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, InitContainers: []v1.Container{{Name: "s", RestartPolicy: containerPolicy(v1.ContainerRestartPolicyAlways),
				RestartPolicyRules: []v1.ContainerRestartRule{exitRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 3)}}}},
			old: podStatus(nil, []v1.ContainerStatus{named("ghost", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("ghost", run)}), wantErr: true},
		{rule: "12.1 nil", reason: "a nil old spec allows everything",
			features: DefaultFeatures(), spec: nil, old: podStatus(nil, []v1.ContainerStatus{named("a", term(1))}), new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.1 nil", reason: "a nil old status allows everything",
			features: DefaultFeatures(), spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "a"}}}, old: nil, new: podStatus(nil, []v1.ContainerStatus{named("a", run)})},
		{rule: "12.1 nil", reason: "a nil new status allows everything",
			features: DefaultFeatures(), spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "a"}}}, old: podStatus(nil, []v1.ContainerStatus{named("a", term(1))}), new: nil},
		{rule: "12.1 ephemeral", reason: "ephemeral containers may never leave Terminated",
			features: DefaultFeatures(), spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways},
			old: &v1.PodStatus{EphemeralContainerStatuses: []v1.ContainerStatus{named("d", term(0))}}, new: &v1.PodStatus{EphemeralContainerStatuses: []v1.ContainerStatus{named("d", waitingState("", ""))}}, wantErr: true},
	}
	for _, tt := range tests {
		err := tt.features.ValidateStatusTransition(tt.spec, tt.old, tt.new)
		if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, ErrTransition)) {
			t.Errorf("rule %s: %s: error %v, want error %v", tt.rule, tt.reason, err, tt.wantErr)
		}
	}
}
