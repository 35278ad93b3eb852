package containerstate

import (
	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/kubeversion"
)

// Features holds the Kubernetes feature gates that change container
// behaviour. Use [DefaultFeatures] for the Kubernetes 1.37 defaults and
// [DefaultFeaturesFor] for another minor's; the zero value is every gate
// off, which is a valid but older configuration.
type Features struct {
	// ContainerRestartRules (KEP-5307, beta and on by default since 1.35)
	// lets a container's own restartPolicy and restartPolicyRules decide
	// whether an exited container is restarted and whether a terminated
	// status may leave Terminated. When off, the kubelet decides those from
	// the pod's restartPolicy alone (sidecars always restart). The API server
	// drops the fields when the gate is off, so [Features.ShouldRestart]
	// itself, like the kubelet's ContainerShouldRestart, reads them whenever
	// they are set.
	ContainerRestartRules bool

	// RestartAllContainersOnContainerExits (KEP-5532, beta and on by default
	// since 1.36) gives the rule action RestartAllContainers its meaning: the
	// pod restarts every container in place, so the exited container runs
	// again. When off, a matching RestartAllContainers rule is passed over and
	// the container's restartPolicy decides.
	RestartAllContainersOnContainerExits bool

	// ChangeContainerStatusOnKubeletRestart (deprecated, off by default since
	// 1.35) resets started and ready after a kubelet restart. When off, a
	// running container keeps the started value of its previous status.
	ChangeContainerStatusOnKubeletRestart bool

	// InPlacePodVerticalScaling (KEP-1287; beta and on in 1.33 and 1.34, GA
	// and locked on from 1.35) fills resources and allocatedResources of
	// every status converted from a runtime instance (spec section 4.6).
	// When off, neither is written.
	InPlacePodVerticalScaling bool

	// InPlacePodLevelResourcesVerticalScaling (KEP-5419; alpha and off in
	// 1.35, beta and on from 1.36; absent before) writes the pod-level
	// resources and allocatedResources of the status (podphase's
	// GenerateStatus). Here it makes the kubelet's record of a container's
	// actuated limits fall back to the pod-level limits (section 4.6).
	InPlacePodLevelResourcesVerticalScaling bool

	// SupplementalGroupsPolicy (KEP-3619; beta and on in 1.33 and 1.34, GA
	// and locked on from 1.35) reports the user the runtime says a container
	// runs as (Instance.User) in the status's user field.
	SupplementalGroupsPolicy bool

	// ContainerStopSignals (KEP-4960; alpha and off in every supported
	// minor) reports the runtime's effective stop signal
	// (Instance.StopSignal) in the status's stopSignal field.
	ContainerStopSignals bool
}

// DefaultFeatures returns the feature gates as Kubernetes 1.37 sets them by
// default.
func DefaultFeatures() Features {
	return DefaultFeaturesFor(kubeversion.Default)
}

// ShouldRestart reports whether container c of the pod spec will be run
// again after it exits with exitCode, with the Kubernetes 1.37 default
// feature gates. It is [Features.ShouldRestart] on [DefaultFeatures].
//
// A nil pod spec counts as restartPolicy Always (the API default); a nil
// container has no policy of its own.
func ShouldRestart(pod *v1.PodSpec, c *v1.Container, exitCode int32) bool {
	return DefaultFeatures().ShouldRestart(pod, c, exitCode)
}

// ShouldRestart reports whether container c of the pod spec will be run
// again after it exits with exitCode, the way the kubelet's
// ContainerShouldRestart decides it:
//
//  1. When the container has its own restartPolicy, the first of its
//     restartPolicyRules whose exit-code test matches decides: Restart
//     restarts; RestartAllContainers restarts when that gate is on. A rule
//     without exitCodes or with an unknown operator never matches; a matched
//     rule with another action falls through. Then the container policy:
//     Always restarts, OnFailure restarts a non-zero exit, Never does not.
//  2. Otherwise the pod policy: Never does not restart, OnFailure restarts a
//     non-zero exit, and Always, empty or an unknown value restarts.
func (f Features) ShouldRestart(pod *v1.PodSpec, c *v1.Container, exitCode int32) bool {
	if c != nil && c.RestartPolicy != nil {
		if restart, decided := f.containerPolicyRestarts(c, exitCode); decided {
			return restart
		}
	}
	if pod == nil {
		return true
	}
	return policyRestarts(pod.RestartPolicy, exitCode)
}

// containerPolicyRestarts applies a container's own rules and policy. decided
// is false when the policy is a value the API does not define, so the pod
// policy decides instead.
func (f Features) containerPolicyRestarts(c *v1.Container, exitCode int32) (restart, decided bool) {
	if rule, ok := MatchingRule(c, exitCode); ok {
		switch rule.Action {
		case v1.ContainerRestartRuleActionRestart:
			return true, true
		case v1.ContainerRestartRuleActionRestartAllContainers:
			if f.RestartAllContainersOnContainerExits {
				return true, true
			}
		}
	}
	switch *c.RestartPolicy {
	case v1.ContainerRestartPolicyAlways:
		return true, true
	case v1.ContainerRestartPolicyOnFailure:
		return exitCode != 0, true
	case v1.ContainerRestartPolicyNever:
		return false, true
	}
	return false, false
}

// policyRestarts applies a pod-level restart policy; anything but Never and
// OnFailure is the default, Always.
func policyRestarts(p v1.RestartPolicy, exitCode int32) bool {
	switch p {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

// MatchingRule returns the first of c's restartPolicyRules whose exit-code
// requirement holds for exitCode: operator In and the code among the values,
// or NotIn and the code not among them. A rule without exitCodes or with an
// unknown operator never matches. A nil container has no rules.
func MatchingRule(c *v1.Container, exitCode int32) (v1.ContainerRestartRule, bool) {
	if c == nil {
		return v1.ContainerRestartRule{}, false
	}
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil {
			continue
		}
		in := false
		for _, v := range r.ExitCodes.Values {
			if v == exitCode {
				in = true
				break
			}
		}
		switch r.ExitCodes.Operator {
		case v1.ContainerRestartRuleOnExitCodesOpIn:
			if in {
				return r, true
			}
		case v1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !in {
				return r, true
			}
		}
	}
	return v1.ContainerRestartRule{}, false
}

// IsSidecar reports whether c is a restartable init container: an init
// container whose own restartPolicy is Always. A nil container is not.
func IsSidecar(c *v1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}
