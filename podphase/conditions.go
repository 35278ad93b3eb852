package podphase

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/internal/podcond"
	"github.com/nodestate/nodestate/kubeversion"
)

// The reasons the kubelet writes on the conditions it owns
// (spec/podphase.md section 8.5).
const (
	ReasonUnknownContainerStatuses    = "UnknownContainerStatuses"
	ReasonPodCompleted                = "PodCompleted"
	ReasonPodFailed                   = "PodFailed"
	ReasonContainersNotReady          = "ContainersNotReady"
	ReasonContainersNotInitialized    = "ContainersNotInitialized"
	ReasonReadinessGatesNotReady      = "ReadinessGatesNotReady"
	ReasonRestartAllContainersStarted = "RestartAllContainersStarted"
	ReasonPodSandboxNotReady          = "PodSandboxNotReady"
)

// MessageRestartAllContainersStarted is the message of a True
// AllContainersRestarting condition.
const MessageRestartAllContainersStarted = "container exited with restart policy rule"

// Sandbox is what the kubelet knows of a pod's sandbox, which decides the
// PodReadyToStartContainers condition. The zero value is a ready sandbox.
type Sandbox uint8

// The sandbox states, in the order the kubelet checks them.
const (
	// SandboxReady: one sandbox, ready, in the right network mode, with an
	// IP when it reports network status. PodReadyToStartContainers is True.
	SandboxReady Sandbox = iota
	// SandboxMissing: no sandbox exists.
	SandboxMissing
	// SandboxMultipleReady: more than one sandbox is ready.
	SandboxMultipleReady
	// SandboxNotReady: the newest sandbox is not ready.
	SandboxNotReady
	// SandboxNetworkChanged: the sandbox's network namespace mode no
	// longer matches the pod.
	SandboxNetworkChanged
	// SandboxNoIP: a non-host-network sandbox reports no IP.
	SandboxNoIP
)

var sandboxMessages = [...]string{
	SandboxMissing:        "no pod sandbox exists",
	SandboxMultipleReady:  "multiple pod sandboxes are ready and need to be reconciled",
	SandboxNotReady:       "pod sandbox is not ready",
	SandboxNetworkChanged: "network namespace mode changed and sandbox needs to be recreated",
	SandboxNoIP:           "pod sandbox has no IP address",
}

// Message returns the message of a False PodReadyToStartContainers
// condition for s, or "" for SandboxReady and unknown values.
func (s Sandbox) Message() string {
	if int(s) < len(sandboxMessages) {
		return sandboxMessages[s]
	}
	return ""
}

// ConditionsInput is what the kubelet's condition generators read.
type ConditionsInput struct {
	// Pod is the pod as the API server has it: its spec, its generation and
	// the conditions other writers own, which are preserved. Required.
	Pod *v1.Pod

	// Status is the new status: its Phase and its container statuses with
	// ready and started applied. Its Conditions are not read. Required.
	Status *v1.PodStatus

	// Old is the previous status the kubelet holds (the status manager's
	// cached status). It supplies DisruptionTarget, the resize conditions,
	// the lastTransitionTime of unchanged conditions, the old Initialized
	// and AllContainersRestarting values and the old container states. Nil
	// means Pod.Status.
	Old *v1.PodStatus

	// Sandbox is the state of the pod's sandbox.
	Sandbox Sandbox

	// RuntimeCleanedUp is true when no container of the spec has a
	// runtime status left, which ends an in-place restart of all
	// containers.
	RuntimeCleanedUp bool

	// Now stamps the conditions whose status changed.
	Now time.Time
}

// kubeletOwned reports whether the kubelet's value of condition type t
// replaces the API server's (spec section 8.1).
func (o Options) kubeletOwned(t v1.PodConditionType) bool {
	switch t {
	case v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
		v1.PodResizeInProgress, v1.PodResizePending, v1.PodReadyToStartContainers:
		return true
	case v1.AllContainersRestarting:
		return o.Features.RestartAllContainersOnContainerExits
	}
	return false
}

// Conditions returns the pod conditions of a status as the kubelet of
// Kubernetes 1.37 writes them, with the default feature gates. It is
// [Options.Conditions] on [DefaultOptions].
func Conditions(in ConditionsInput) ([]v1.PodCondition, error) {
	return DefaultOptions().Conditions(in)
}

// Conditions returns the conditions of in.Status as the kubelet writes
// them (spec/podphase.md section 8), in the kubelet's order: the conditions
// it does not own, copied from in.Pod; the resize conditions and
// DisruptionTarget from in.Old; then PodReadyToStartContainers,
// Initialized, Ready, ContainersReady, PodScheduled and, when some
// container has a RestartAllContainers rule, AllContainersRestarting.
//
// Each kubelet condition carries in.Pod's generation as observedGeneration
// (AllContainersRestarting carries none); for o.Version 1.33 only where the
// old condition of its type had one. A False PodReadyToStartContainers has
// reason PodSandboxNotReady and the sandbox's message from 1.37 on, neither
// before. lastTransitionTime is in.Now,
// except that a condition whose status equals the old one of its type keeps
// the old time.
//
// It returns an [*OptionError] for an invalid o.Version (see
// [Options].Version), [ErrNilPod] for a nil in.Pod and an error wrapping
// [ErrInvalidInput] for a nil in.Status.
func (o Options) Conditions(in ConditionsInput) ([]v1.PodCondition, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if in.Pod == nil {
		return nil, ErrNilPod
	}
	if in.Status == nil {
		return nil, fmt.Errorf("%w: nil status", ErrInvalidInput)
	}
	return o.appendConditions(nil, &in, nil), nil
}

// appendConditions is Conditions on valid input, appending to conds (a new
// slice when nil). spare are other conditions whose messages a generated
// message of the same text may share (those storage held before), besides
// the old status's.
func (o Options) appendConditions(conds []v1.PodCondition, in *ConditionsInput, spare []v1.PodCondition) []v1.PodCondition {
	pod, s := in.Pod, in.Status
	old := in.Old
	if old == nil {
		old = &pod.Status
	}
	// The messages spare holds, read before conds (which may be spare's
	// storage) is written.
	spareInit, spareReady := conditionMessage(spare, v1.PodInitialized), conditionMessage(spare, v1.ContainersReady)
	gen := pod.Generation
	terminal := s.Phase == v1.PodSucceeded || s.Phase == v1.PodFailed

	if conds == nil {
		conds = make([]v1.PodCondition, 0, len(pod.Status.Conditions)+7)
	}
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; !o.kubeletOwned(c.Type) {
			conds = append(conds, *c)
		}
	}
	tracking := o.Version.AtLeast(kubeversion.V1_34)
	if !terminal {
		for i := range old.Conditions {
			if t := old.Conditions[i].Type; t == v1.PodResizePending || t == v1.PodResizeInProgress {
				c := old.Conditions[i]
				switch {
				case !tracking:
					// 1.33 overwrites a resize condition's observedGeneration
					// with its own rule; 1.34 keeps the condition's value.
					c.ObservedGeneration = observedGeneration(false, old, gen, c.Type)
				case gen == 0:
					c.ObservedGeneration = 0
				}
				conds = append(conds, c)
			}
		}
	}
	if c := podcond.Find(old.Conditions, v1.DisruptionTarget); c != nil {
		conds = podcond.ReplaceOrAppend(conds, *c)
	}

	ready2start := v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue,
		ObservedGeneration: observedGeneration(tracking, old, gen, v1.PodReadyToStartContainers)}
	if in.Sandbox != SandboxReady {
		ready2start.Status = v1.ConditionFalse
		if o.Version.AtLeast(kubeversion.V1_37) {
			// kubernetes#135300: the reason and message arrived in 1.37.
			ready2start.Reason, ready2start.Message = ReasonPodSandboxNotReady, in.Sandbox.Message()
		}
	}
	conds = append(conds, ready2start)

	initialized := o.initializedCondition(pod, s, old, spareInit)
	initialized.ObservedGeneration = observedGeneration(tracking, old, gen, v1.PodInitialized)
	conds = append(conds, initialized)

	containersReady := containersReadyCondition(&pod.Spec, s, old, spareReady)
	containersReady.ObservedGeneration = observedGeneration(tracking, old, gen, v1.ContainersReady)
	ready := readyCondition(&pod.Spec, conds, containersReady)
	ready.ObservedGeneration = observedGeneration(tracking, old, gen, v1.PodReady)
	conds = append(conds, ready, containersReady,
		v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue, ObservedGeneration: observedGeneration(tracking, old, gen, v1.PodScheduled)})

	if o.Features.RestartAllContainersOnContainerExits && containerstate.AnyRestartAllRule(&pod.Spec) {
		conds = append(conds, o.restartingCondition(&pod.Spec, s, old, in.RuntimeCleanedUp))
	}

	for i := range conds {
		stamp(old.Conditions, &conds[i], in.Now)
	}
	return conds
}

// observedGeneration is the observedGeneration the kubelet writes on a
// condition of type t: the pod's generation when PodObservedGenerationTracking
// is on (from 1.34), and otherwise only when the old condition of that type
// already carries one, so that a value once written is not cleared
// (docs/versions.md, row PP-V3).
func observedGeneration(tracking bool, old *v1.PodStatus, gen int64, t v1.PodConditionType) int64 {
	if tracking {
		return gen
	}
	for i := range old.Conditions {
		if old.Conditions[i].Type == t && old.Conditions[i].ObservedGeneration != 0 {
			return gen
		}
	}
	return 0
}

// stampedType reports whether the status manager recomputes the
// lastTransitionTime of conditions of type t (spec section 8.3).
func stampedType(t v1.PodConditionType) bool {
	switch t {
	case v1.ContainersReady, v1.PodReady, v1.PodInitialized, v1.PodReadyToStartContainers,
		v1.PodScheduled, v1.DisruptionTarget, v1.AllContainersRestarting:
		return true
	}
	return false
}

// noStatuses is the kubelet's "container statuses are nil".
func noStatuses(s *v1.PodStatus) bool {
	return s.InitContainerStatuses == nil && s.ContainerStatuses == nil
}

// listMessage renders the kubelet's "containers with <kind> status: [a b]"
// messages, joined with ", ". It returns prev or alt when that is the same
// text, so that a condition generated again shares an earlier message
// instead of allocating a new one.
func listMessage(prev, alt string, kinds [2]string, lists [2][]string) string {
	var buf [256]byte
	b := buf[:0]
	for i, l := range lists {
		if len(l) == 0 {
			continue
		}
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, "containers with "...)
		b = append(b, kinds[i]...)
		b = append(b, " status: ["...)
		for j, name := range l {
			if j > 0 {
				b = append(b, ' ')
			}
			b = append(b, name...)
		}
		b = append(b, ']')
	}
	if string(b) == prev {
		return prev
	}
	if string(b) == alt {
		return alt
	}
	return string(b)
}

// conditionMessage is the message of the condition of type t in cs, or "".
func conditionMessage(cs []v1.PodCondition, t v1.PodConditionType) string {
	if c := podcond.Find(cs, t); c != nil {
		return c.Message
	}
	return ""
}

// initializedCondition is the Initialized rule list of spec section 8.4.
func (o Options) initializedCondition(pod *v1.Pod, s, old *v1.PodStatus, spareMessage string) v1.PodCondition {
	c := v1.PodCondition{Type: v1.PodInitialized}
	spec := &pod.Spec
	if noStatuses(s) && len(spec.InitContainers) > 0 {
		c.Status, c.Reason = v1.ConditionFalse, ReasonUnknownContainerStatuses
		return c
	}
	var ubuf, ibuf [8]string
	unknown, incomplete := ubuf[:0], ibuf[:0]
	inits := newStatusIndex(s.InitContainerStatuses)
	for i := range spec.InitContainers {
		ic := &spec.InitContainers[i]
		st := inits.find(ic.Name, i)
		switch {
		case st == nil:
			unknown = append(unknown, ic.Name)
		case containerstate.IsSidecar(ic):
			if st.Started == nil || !*st.Started {
				incomplete = append(incomplete, ic.Name)
			}
		case !st.Ready:
			incomplete = append(incomplete, ic.Name)
		}
	}
	if s.Phase == v1.PodSucceeded && len(unknown) == 0 {
		c.Status, c.Reason = v1.ConditionTrue, ReasonPodCompleted
		return c
	}
	if anyRegularStarted(spec, s) {
		c.Status = v1.ConditionTrue
		return c
	}
	if len(unknown) > 0 || len(incomplete) > 0 {
		if o.Features.RestartAllContainersOnContainerExits {
			// Any True Initialized of the old status counts, duplicates included.
			if anyConditionTrue(old.Conditions, v1.PodInitialized) {
				c.Status = v1.ConditionTrue
				return c
			}
		}
		c.Status, c.Reason = v1.ConditionFalse, ReasonContainersNotInitialized
		c.Message = listMessage(conditionMessage(old.Conditions, v1.PodInitialized), spareMessage, [2]string{"unknown", "incomplete"}, [2][]string{unknown, incomplete})
		return c
	}
	c.Status = v1.ConditionTrue
	return c
}

// anyRegularStarted is the kubelet's HasAnyRegularContainerStarted: some
// regular container's status is Running or Terminated.
func anyRegularStarted(spec *v1.PodSpec, s *v1.PodStatus) bool {
	regular := newStatusIndex(s.ContainerStatuses)
	for i := range spec.Containers {
		st := regular.find(spec.Containers[i].Name, i)
		if st != nil && (st.State.Running != nil || st.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// containersReadyCondition is the ContainersReady rule list of spec section
// 8.4: sidecars first, in spec order, then regular containers. old, when
// not nil, is the status whose message it shares when the text is the same,
// as it shares spareMessage.
func containersReadyCondition(spec *v1.PodSpec, s, old *v1.PodStatus, spareMessage string) v1.PodCondition {
	c := v1.PodCondition{Type: v1.ContainersReady}
	if noStatuses(s) {
		c.Status, c.Reason = v1.ConditionFalse, ReasonUnknownContainerStatuses
		return c
	}
	var ubuf, rbuf [8]string
	unknown, unready := ubuf[:0], rbuf[:0]
	check := func(name string, st *v1.ContainerStatus) {
		switch {
		case st == nil:
			unknown = append(unknown, name)
		case !st.Ready:
			unready = append(unready, name)
		}
	}
	inits := newStatusIndex(s.InitContainerStatuses)
	for i := range spec.InitContainers {
		if ic := &spec.InitContainers[i]; containerstate.IsSidecar(ic) {
			check(ic.Name, inits.find(ic.Name, i))
		}
	}
	regular := newStatusIndex(s.ContainerStatuses)
	for i := range spec.Containers {
		check(spec.Containers[i].Name, regular.find(spec.Containers[i].Name, i))
	}
	switch {
	case s.Phase == v1.PodSucceeded && len(unknown) == 0:
		c.Status, c.Reason = v1.ConditionFalse, ReasonPodCompleted
	case s.Phase == v1.PodFailed:
		c.Status, c.Reason = v1.ConditionFalse, ReasonPodFailed
	case len(unknown) > 0 || len(unready) > 0:
		c.Status, c.Reason = v1.ConditionFalse, ReasonContainersNotReady
		prev := ""
		if old != nil {
			prev = conditionMessage(old.Conditions, v1.ContainersReady)
		}
		c.Message = listMessage(prev, spareMessage, [2]string{"unknown", "unready"}, [2][]string{unknown, unready})
	default:
		c.Status = v1.ConditionTrue
	}
	return c
}

// readyCondition is the Ready rule of spec section 8.4, with the readiness
// gates checked against the conditions assembled so far.
func readyCondition(spec *v1.PodSpec, conds []v1.PodCondition, containersReady v1.PodCondition) v1.PodCondition {
	c := v1.PodCondition{Type: v1.PodReady}
	if containersReady.Status != v1.ConditionTrue {
		c.Status, c.Reason, c.Message = containersReady.Status, containersReady.Reason, containersReady.Message
		return c
	}
	var msgs []string
	for _, g := range spec.ReadinessGates {
		gc := podcond.Find(conds, g.ConditionType)
		switch {
		case gc == nil:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(g.ConditionType)))
		case gc.Status != v1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(g.ConditionType), gc.Status))
		}
	}
	if len(msgs) > 0 {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, ReasonReadinessGatesNotReady, strings.Join(msgs, ", ")
		return c
	}
	c.Status = v1.ConditionTrue
	return c
}

// ReadyConditionStale reports whether pod's Ready condition, as the API
// server holds it, disagrees in status or message with the one its
// readiness gates and container statuses give. The kubelet syncs such a
// pod at once when an update of its status alone arrives (a readiness gate
// another controller set; the status manager's readiness reconcile,
// spec/podlifecycle.md rule 4.5); any other status-only update syncs
// nothing. A pod without readiness gates, or whose status has no Ready
// condition, is never stale; nor is a nil pod.
func ReadyConditionStale(pod *v1.Pod) bool {
	if pod == nil || len(pod.Spec.ReadinessGates) == 0 {
		return false
	}
	cur := podcond.Find(pod.Status.Conditions, v1.PodReady)
	if cur == nil {
		return false
	}
	want := readyCondition(&pod.Spec, pod.Status.Conditions, containersReadyCondition(&pod.Spec, &pod.Status, nil, ""))
	return cur.Status != want.Status || cur.Message != want.Message
}

// firstRuleRestartsAll reports whether the first restart rule of c that
// matches exitCode has the action RestartAllContainers.
func firstRuleRestartsAll(c *v1.Container, exitCode int32) bool {
	r, ok := containerstate.MatchingRule(c, exitCode)
	return ok && r.Action == v1.ContainerRestartRuleActionRestartAllContainers
}

// triggeredRestartAll reports whether some container of the spec is
// Terminated in one of the statuses with an exit code whose first matching
// rule restarts all containers.
func triggeredRestartAll(spec *v1.PodSpec, statuses ...*v1.PodStatus) bool {
	for _, s := range statuses {
		for _, l := range [...]struct {
			specs    []v1.Container
			statuses []v1.ContainerStatus
		}{{spec.InitContainers, s.InitContainerStatuses}, {spec.Containers, s.ContainerStatuses}} {
			idx := newStatusIndex(l.statuses)
			for i := range l.specs {
				st := idx.find(l.specs[i].Name, i)
				if st != nil && st.State.Terminated != nil && firstRuleRestartsAll(&l.specs[i], st.State.Terminated.ExitCode) {
					return true
				}
			}
		}
	}
	return false
}

// restartingCondition is the AllContainersRestarting table of spec section
// 7.
func (o Options) restartingCondition(spec *v1.PodSpec, s, old *v1.PodStatus, cleanedUp bool) v1.PodCondition {
	c := v1.PodCondition{Type: v1.AllContainersRestarting, Status: v1.ConditionFalse}
	// Any True AllContainersRestarting of the old status counts, as the
	// kubelet's ShouldAllContainersRestart reads every condition.
	restarting := anyConditionTrue(old.Conditions, v1.AllContainersRestarting) || triggeredRestartAll(spec, s, old)
	switch {
	case s.Phase == v1.PodSucceeded:
		c.Reason = ReasonPodCompleted
	case s.Phase == v1.PodFailed:
		c.Reason = ReasonPodFailed
	case !restarting, cleanedUp:
	default:
		c.Status, c.Reason, c.Message = v1.ConditionTrue, ReasonRestartAllContainersStarted, MessageRestartAllContainersStarted
	}
	return c
}
