package containerstate

import (
	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/kubeversion"
)

// CheckStatusTransition is the kubelet status manager's check of a new pod
// status against the old one (spec section 12.2): a container that was
// Terminated may not be reported non-terminated unless it may restart. It
// returns nil when the update is allowed, and a [*TransitionError] (or an
// error wrapping ErrSpecMismatch for init statuses out of spec order)
// otherwise; the kubelet then drops the update. Ephemeral containers are not
// checked. A nil spec or status allows everything.
func (f Features) CheckStatusTransition(spec *v1.PodSpec, old, new *v1.PodStatus) error {
	if spec == nil || old == nil || new == nil {
		return nil
	}
	if spec.RestartPolicy == v1.RestartPolicyAlways {
		return nil
	}
	if f.RestartAllContainersOnContainerExits && AnyRestartAllRule(spec) {
		return nil
	}
	for i := range old.ContainerStatuses {
		if err := f.checkOne(spec, findContainer(spec.Containers, old.ContainerStatuses[i].Name), Regular, &old.ContainerStatuses[i], new.ContainerStatuses); err != nil {
			return err
		}
	}
	for i := range old.InitContainerStatuses {
		st := &old.InitContainerStatuses[i]
		if i >= len(spec.InitContainers) || spec.InitContainers[i].Name != st.Name {
			return &InputError{Container: st.Name, Err: ErrSpecMismatch}
		}
		c := &spec.InitContainers[i]
		if IsSidecar(c) {
			continue
		}
		if err := f.checkOne(spec, c, Init, st, new.InitContainerStatuses); err != nil {
			return err
		}
	}
	return nil
}

func (f Features) checkOne(spec *v1.PodSpec, c *v1.Container, kind Kind, old *v1.ContainerStatus, news []v1.ContainerStatus) error {
	t := old.State.Terminated
	if t == nil {
		return nil
	}
	if t.ExitCode != 0 && spec.RestartPolicy == v1.RestartPolicyOnFailure {
		return nil
	}
	if f.ContainerRestartRules && f.ShouldRestart(spec, c, t.ExitCode) {
		return nil
	}
	for i := range news {
		if news[i].Name == old.Name && news[i].State.Terminated == nil {
			return &TransitionError{Container: old.Name, Kind: kind, ExitCode: t.ExitCode}
		}
	}
	return nil
}

// ValidateStatusTransition is the API server's rule on a pod status update
// (spec section 12.1), evaluated against the old pod's spec: a terminated
// container may go back to a non-terminated state only if it may restart.
// Ephemeral containers never may. It returns a [*TransitionError] for the
// first container that breaks the rule, or nil. It is the rule of
// Kubernetes 1.37 (and 1.35, 1.36); [Options.ValidateStatusTransition]
// applies the rule of the Options' Version.
func (f Features) ValidateStatusTransition(oldSpec *v1.PodSpec, old, new *v1.PodStatus) error {
	return f.validateTransition(kubeversion.Default, oldSpec, old, new)
}

// ValidateStatusTransition is [Features.ValidateStatusTransition] as the API
// server of Kubernetes minor o.Version applies it (docs/versions.md, row
// CS-V5). From 1.35 ContainerShouldRestart decides for init and regular
// containers when the ContainerRestartRules gate is on or the old spec
// already uses a container restart policy or rule, and any transition is
// allowed when the RestartAllContainersOnContainerExits gate is on or the
// old spec already has a RestartAllContainers rule (and restart rules are
// allowed). In 1.34 ContainerShouldRestart decides for regular containers
// only, and only with the ContainerRestartRules gate on; init containers and
// every container with the gate off follow the pod's restartPolicy (sidecars
// always may restart). In 1.33 the pod's restartPolicy decides for every
// container, whatever the gates.
func (o Options) ValidateStatusTransition(oldSpec *v1.PodSpec, old, new *v1.PodStatus) error {
	return o.Features.validateTransition(o.Version, oldSpec, old, new)
}

func (f Features) validateTransition(v kubeversion.Version, oldSpec *v1.PodSpec, old, new *v1.PodStatus) error {
	if oldSpec == nil || old == nil || new == nil {
		return nil
	}
	// rulesFor says whether ContainerShouldRestart decides for a container
	// of that kind (CS-V5).
	var rulesFor func(Kind) bool
	switch {
	case v.AtLeast(kubeversion.V1_35):
		rules := f.ContainerRestartRules || usesContainerPolicies(oldSpec)
		restartAll := f.RestartAllContainersOnContainerExits || AnyRestartAllRule(oldSpec)
		if rules && restartAll && AnyRestartAllRule(oldSpec) {
			return nil
		}
		rulesFor = func(Kind) bool { return rules }
	case v.AtLeast(kubeversion.V1_34):
		rulesFor = func(k Kind) bool { return f.ContainerRestartRules && k == Regular }
	default:
		rulesFor = func(Kind) bool { return false }
	}
	allowed := func(c *v1.Container, kind Kind, exit int32) bool {
		if kind == Ephemeral {
			return false
		}
		if rulesFor(kind) {
			return c != nil && f.ShouldRestart(oldSpec, c, exit)
		}
		if kind == Init && IsSidecar(c) {
			return true
		}
		return oldSpec.RestartPolicy == v1.RestartPolicyAlways ||
			(oldSpec.RestartPolicy == v1.RestartPolicyOnFailure && exit != 0)
	}
	lists := [...]struct {
		kind     Kind
		old, new []v1.ContainerStatus
		find     func(string) *v1.Container
	}{
		{Init, old.InitContainerStatuses, new.InitContainerStatuses, func(n string) *v1.Container { return findContainer(oldSpec.InitContainers, n) }},
		{Regular, old.ContainerStatuses, new.ContainerStatuses, func(n string) *v1.Container { return findContainer(oldSpec.Containers, n) }},
		{Ephemeral, old.EphemeralContainerStatuses, new.EphemeralContainerStatuses, func(string) *v1.Container { return nil }},
	}
	for _, l := range lists {
		for i := range l.old {
			t := l.old[i].State.Terminated
			if t == nil || allowed(l.find(l.old[i].Name), l.kind, t.ExitCode) {
				continue
			}
			for j := range l.new {
				if l.new[j].Name == l.old[i].Name && l.new[j].State.Terminated == nil {
					return &TransitionError{Container: l.old[i].Name, Kind: l.kind, ExitCode: t.ExitCode}
				}
			}
		}
	}
	return nil
}

// AnyRestartAllRule reports whether some init or regular container of the
// spec has a restart rule with action RestartAllContainers.
func AnyRestartAllRule(spec *v1.PodSpec) bool {
	if spec == nil {
		return false
	}
	for _, list := range [...][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			for _, r := range list[i].RestartPolicyRules {
				if r.Action == v1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
			}
		}
	}
	return false
}

// usesContainerPolicies reports whether a regular container, or an init
// container other than a sidecar, has its own restart policy or rules.
func usesContainerPolicies(spec *v1.PodSpec) bool {
	for i := range spec.Containers {
		if spec.Containers[i].RestartPolicy != nil || len(spec.Containers[i].RestartPolicyRules) > 0 {
			return true
		}
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if (c.RestartPolicy != nil && !IsSidecar(c)) || len(c.RestartPolicyRules) > 0 {
			return true
		}
	}
	return false
}

func findContainer(list []v1.Container, name string) *v1.Container {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}
