package podphase

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

// ReasonDeadlineExceeded is the pod reason the kubelet's active-deadline
// handler writes when it fails a pod that ran past
// spec.activeDeadlineSeconds.
const ReasonDeadlineExceeded = "DeadlineExceeded"

// ReasonEvicted is the pod reason the kubelet's eviction manager writes when
// it fails a pod to reclaim a node resource (with a message such as "The node
// was low on resource: memory. ...").
const ReasonEvicted = "Evicted"

// Eviction is a decision of one of the kubelet's pod sync handlers (such as
// the active-deadline handler) to fail the pod with its own reason and
// message.
type Eviction struct {
	// Reason is the pod reason to write, such as [ReasonDeadlineExceeded].
	Reason string
	// Message is the pod message to write.
	Message string
}

// Settled is a phase after the kubelet's post-processing, with the pod
// reason and message that go with it.
type Settled struct {
	// Phase is the phase to write.
	Phase v1.PodPhase
	// Reason and Message are the pod reason and message to write with it.
	Reason, Message string
	// Illegal is true when the final guard forced the API server's terminal
	// phase back over a different one; the kubelet logs "Pod attempted
	// illegal phase transition" then.
	Illegal bool
}

// Settle applies the steps the kubelet takes after computing a phase
// (spec/podphase.md section 4.1, steps 3 to 6) and returns the phase to
// write with its reason and message:
//
//   - terminal stickiness: a non-terminal computed phase gives way to a
//     terminal phase of the old status, else of the API server's status;
//   - the reason and message are kept from the old status (falling back to
//     the API server's) while the phase is unchanged, and cleared when it
//     changes;
//   - a non-nil evict fails the pod with its reason and message;
//   - the final guard: when the API server's phase is terminal, any other
//     phase is replaced by it and Illegal is set.
//
// old is the kubelet's cached status; nil means api. A nil api is an empty
// status.
func Settle(computed v1.PodPhase, old, api *v1.PodStatus, evict *Eviction) Settled {
	if api == nil {
		api = &v1.PodStatus{}
	}
	if old == nil {
		old = api
	}
	s := Settled{Phase: computed}
	if !IsTerminal(s.Phase) {
		switch {
		case IsTerminal(old.Phase):
			s.Phase = old.Phase
		case IsTerminal(api.Phase):
			s.Phase = api.Phase
		}
	}
	if s.Phase == old.Phase {
		s.Reason, s.Message = old.Reason, old.Message
		if s.Reason == "" {
			s.Reason = api.Reason
		}
		if s.Message == "" {
			s.Message = api.Message
		}
	}
	if evict != nil {
		s.Phase, s.Reason, s.Message = v1.PodFailed, evict.Reason, evict.Message
	}
	if IsTerminal(api.Phase) && s.Phase != api.Phase {
		s.Phase, s.Illegal = api.Phase, true
	}
	return s
}

// StatusInput is what the kubelet holds when it generates a pod's status.
type StatusInput struct {
	// Input is the pod as the API server has it and what the kubelet knows
	// about it. Input.Pod.Status is the API server's status; the container
	// statuses below replace its own for the phase.
	Input

	// Old is the kubelet's cached status; nil when it has none (then the
	// API server's status is the old one).
	Old *v1.PodStatus

	// InitContainerStatuses and ContainerStatuses are the freshly converted
	// container statuses (see containerstate), with ready and started as
	// the probe results set them. The phase reads a sidecar's started from
	// here; the kubelet reads the value carried over from the previous
	// status, which is the same once a startup probe has succeeded.
	InitContainerStatuses, ContainerStatuses []v1.ContainerStatus

	// Evict, when not nil, is a pod sync handler's decision to fail the pod.
	Evict *Eviction

	// Sandbox is the state of the pod's sandbox; see [ConditionsInput].
	Sandbox Sandbox
	// RuntimeCleanedUp is true when no container of the spec has a runtime
	// status left; see [ConditionsInput].
	RuntimeCleanedUp bool

	// PodCgroup is what the kubelet reads back from the pod's cgroup; nil
	// when it reads nothing (a node agent without pod cgroups). It is read
	// only for a pod whose API phase is Running, with
	// InPlacePodLevelResourcesVerticalScaling (spec/podphase.md section
	// 4.3).
	PodCgroup *PodCgroup

	// Now stamps the conditions that changed.
	Now time.Time
}

// StatusResult is a generated status with the reasons behind it.
type StatusResult struct {
	// Status is the new status: the API server's status with the phase,
	// reason, message, conditions and container statuses replaced, the
	// qosClass of [QOSClass], and resources and allocatedResources as the
	// kubelet writes them (none without
	// InPlacePodLevelResourcesVerticalScaling).
	Status v1.PodStatus
	// Explanation explains the phase getPhase computed, before Settle.
	Explanation Explanation
	// Settled is the outcome of the post-processing, including whether the
	// final guard fired.
	Settled Settled
}

// GenerateStatus is [Options.GenerateStatus] on [DefaultOptions].
func GenerateStatus(in StatusInput) (StatusResult, error) {
	return DefaultOptions().GenerateStatus(in)
}

// GenerateStatus does the kubelet's whole-status step for a pod: it
// computes the phase from the new container statuses ([Options.Explain]),
// settles it against the old and the API server's statuses ([Settle]),
// builds the conditions ([Options.Conditions]) and, with
// InPlacePodLevelResourcesVerticalScaling (on from 1.36), the pod-level
// resources and allocatedResources (spec/podphase.md section 4.3:
// [PodRequests] as allocatedResources; as resources the allocated requests
// and limits of a pod whose API phase is not Running, the pod cgroup's
// values of a running one).
//
// It returns the errors of [Options.Explain] for an invalid o.Version, a
// nil pod or statuses that do not match the spec.
func (o Options) GenerateStatus(in StatusInput) (StatusResult, error) {
	if err := o.validate(); err != nil {
		return StatusResult{}, err
	}
	if in.Pod == nil {
		return StatusResult{}, ErrNilPod
	}
	probe := *in.Pod
	probe.Status = v1.PodStatus{InitContainerStatuses: in.InitContainerStatuses, ContainerStatuses: in.ContainerStatuses}
	explain := in.Input
	explain.Pod = &probe
	e, err := o.Explain(explain)
	if err != nil {
		return StatusResult{}, err
	}
	status := *in.Pod.Status.DeepCopy()
	settled := o.fill(&in, e.Phase, &status, nil, nil, nil)
	return StatusResult{Status: status, Explanation: e, Settled: settled}, nil
}

// GenerateStatusTo is [Options.GenerateStatusTo] on [DefaultOptions].
func GenerateStatusTo(in StatusInput, dst *v1.PodStatus) (Settled, error) {
	return DefaultOptions().GenerateStatusTo(in, dst)
}

// GenerateStatusTo is [Options.GenerateStatus] writing the status into
// *dst, for a caller that generates a pod's status again and again (a node
// agent's sync loop). It returns GenerateStatus's Settled; the Explanation
// is not computed ([Options.Explain] gives it).
//
// The status is equal to GenerateStatus's, field for field, but shares
// more: what it keeps of the API server's status (hostIPs, podIPs,
// startTime, the ephemeral container statuses, the resource claim
// statuses, ...) is in.Pod.Status's own, not a copy, and the container
// statuses are in's slices, as with GenerateStatus. The conditions are
// written into the storage of dst.Conditions and the pod-level resources
// and allocatedResources into that of dst.Resources and
// dst.AllocatedResources, which must therefore be the caller's own, shared
// with no other status (not with in.Old or in.Pod.Status). With room in
// that storage, and condition messages equal to those of the old status,
// generating a status again allocates nothing.
//
// It returns the errors of GenerateStatus, and an error wrapping
// [ErrInvalidInput] for a nil dst; on an error *dst is left as it was.
func (o Options) GenerateStatusTo(in StatusInput, dst *v1.PodStatus) (Settled, error) {
	if err := o.validate(); err != nil {
		return Settled{}, err
	}
	if in.Pod == nil {
		return Settled{}, ErrNilPod
	}
	if dst == nil {
		return Settled{}, fmt.Errorf("%w: nil destination status", ErrInvalidInput)
	}
	phase, _, err := o.phaseRule(&in.Input, in.InitContainerStatuses, in.ContainerStatuses)
	if err != nil {
		return Settled{}, err
	}
	// From here on nothing fails.
	conds, res, alloc := dst.Conditions, dst.Resources, dst.AllocatedResources
	*dst = in.Pod.Status
	return o.fill(&in, phase, dst, conds, res, alloc), nil
}

// fill turns status, a copy of the API server's status, into the
// generated one for the computed phase: the conditions are written into
// conds' storage (whose messages they may share) and the pod-level
// resources into res and alloc (new storage where nil).
func (o Options) fill(in *StatusInput, phase v1.PodPhase, status *v1.PodStatus, conds []v1.PodCondition, res *v1.ResourceRequirements, alloc v1.ResourceList) Settled {
	settled := Settle(phase, in.Old, &in.Pod.Status, in.Evict)
	status.Phase, status.Reason, status.Message = settled.Phase, settled.Reason, settled.Message
	status.InitContainerStatuses, status.ContainerStatuses = in.InitContainerStatuses, in.ContainerStatuses
	status.Conditions = o.appendConditions(conds[:0], &ConditionsInput{
		Pod: in.Pod, Status: status, Old: in.Old,
		Sandbox: in.Sandbox, RuntimeCleanedUp: in.RuntimeCleanedUp, Now: in.Now,
	}, conds)
	status.QOSClass = QOSClass(in.Pod)
	status.Resources, status.AllocatedResources = nil, nil
	if o.Features.InPlacePodLevelResourcesVerticalScaling {
		old := in.Old
		if old == nil {
			old = &in.Pod.Status
		}
		var reqs qlist
		reqs.podRequests(in.Pod)
		status.Resources = o.podResources(res, in.Pod, &reqs, old, in.PodCgroup)
		status.AllocatedResources = reqs.intoNonEmpty(alloc)
	}
	return settled
}
