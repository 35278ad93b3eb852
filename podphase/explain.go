package podphase

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/containerstate"
)

// Rule names the decision step of the kubelet's getPhase that settled a
// phase (spec/podphase.md section 3.3).
type Rule uint8

// The decision steps, in the order the kubelet tries them.
const (
	// RuleNilPod: there is no pod; the result is Pending.
	RuleNilPod Rule = iota
	// RuleInitFailed (step 1): a regular init container failed and will not
	// be restarted, so the pod is Failed.
	RuleInitFailed
	// RuleInitPending (step 2): a regular init container has not completed.
	RuleInitPending
	// RuleSidecarPending (step 2): a sidecar has not started and no regular
	// container has run in the current sandbox.
	RuleSidecarPending
	// RuleWaiting (step 3): a container is waiting and has never run.
	RuleWaiting
	// RuleRunning (step 4): some container runs and every container has a
	// status.
	RuleRunning
	// RuleTerminated (step 5.1): the pod worker terminated the pod, so its
	// stopped containers decide Succeeded or Failed whatever their restart
	// policy.
	RuleTerminated
	// RuleRestarting (steps 5.2, 5.3): every container stopped and at least
	// one will be restarted, so the pod is still Running.
	RuleRestarting
	// RuleSucceeded (steps 5.2, 5.3): every container stopped, none will be
	// restarted, and all exited 0.
	RuleSucceeded
	// RuleFailed (steps 5.2, 5.3): every container stopped, none will be
	// restarted, and some failed.
	RuleFailed
	// RuleUnknownStatus (step 6): a container has no status or no state.
	RuleUnknownStatus
	// RuleNotStarted (step 6): no container is running or has stopped.
	RuleNotStarted
	// RuleTerminalPhase: the pod's status already holds Succeeded or
	// Failed, which the kubelet never changes (generateAPIPodStatus steps 3
	// and 6), whatever the container statuses say.
	RuleTerminalPhase
)

var ruleNames = [...]string{
	RuleNilPod:         "NilPod",
	RuleInitFailed:     "InitFailed",
	RuleInitPending:    "InitPending",
	RuleSidecarPending: "SidecarPending",
	RuleWaiting:        "Waiting",
	RuleRunning:        "Running",
	RuleTerminated:     "Terminated",
	RuleRestarting:     "Restarting",
	RuleSucceeded:      "Succeeded",
	RuleFailed:         "Failed",
	RuleUnknownStatus:  "UnknownStatus",
	RuleNotStarted:     "NotStarted",
	RuleTerminalPhase:  "TerminalPhase",
}

// String returns the rule's name, such as "SidecarPending".
func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return fmt.Sprintf("Rule(%d)", uint8(r))
}

// Input is a pod together with what only the kubelet knows about it.
type Input struct {
	// Pod is the pod: its spec and the container statuses of its current
	// status. Required.
	Pod *v1.Pod

	// Terminal is true when the pod worker has terminated the pod (the
	// kubelet's podIsTerminal: SyncTerminatingPod after the containers are
	// stopped, and SyncTerminatedPod). Restart policies then stop mattering.
	Terminal bool

	// Initialized says whether a regular container is active in the pod's
	// current sandbox (the kubelet's podHasInitialized, from the runtime's
	// view). Nil derives it from the statuses as [Phase] does; pass false
	// after a sandbox was recreated to get the kubelet's Pending for a pod
	// whose sidecars are starting again.
	Initialized *bool

	// Static is true for a static pod (from a file or URL on the node),
	// which the kubelet exempts from the terminal-phase rule of step 5.1.
	Static bool
}

// Explanation is a phase with the reason for it.
type Explanation struct {
	// Phase is the kubelet's phase: Pending, Running, Succeeded or Failed.
	Phase v1.PodPhase
	// Rule is the decision step that settled the phase.
	Rule Rule
	// Reason is one line a person can read, such as
	// `container "app" is waiting (CrashLoopBackOff)`.
	Reason string
	// Containers names the containers that decided, in spec order (init
	// containers first). It is empty when no container decided (no
	// containers at all, or a nil pod).
	Containers []string
}

// String returns "Phase (Rule): Reason".
func (e Explanation) String() string {
	return fmt.Sprintf("%s (%s): %s", e.Phase, e.Rule, e.Reason)
}

// Explain returns the phase of in.Pod with its explanation, with the
// Kubernetes 1.37 default feature gates. It is [Options.Explain] on
// [DefaultOptions].
func Explain(in Input) (Explanation, error) {
	return DefaultOptions().Explain(in)
}

// Explain returns the phase the kubelet computes for in.Pod given the
// kubelet-only facts in in, and explains it. The phase equals [Options.Phase]
// when in.Terminal and in.Static are false and in.Initialized is nil.
//
// As with [Options.Phase], a pod whose status.phase is Succeeded or Failed
// keeps it ([RuleTerminalPhase]); the reason then names the pod's own reason
// and message when it has one (status.reason Evicted: the kubelet evicted
// it; DeadlineExceeded: it ran past its deadline) and says what the
// container statuses alone give when that differs.
//
// It returns an [*OptionError] for an invalid o.Version (see
// [Options].Version), an error wrapping [ErrNilPod] for a nil pod, an
// [*UnknownContainerError] for a status naming no container of the spec, and
// a [*DuplicateStatusError] for two statuses with one name. The API server
// rejects such pods; a kubelet never writes them.
func (o Options) Explain(in Input) (Explanation, error) {
	if err := o.validate(); err != nil {
		return Explanation{}, err
	}
	pod := in.Pod
	if pod == nil {
		return Explanation{Phase: v1.PodPending, Rule: RuleNilPod, Reason: "there is no pod"}, ErrNilPod
	}
	phase, rule, err := o.phaseRule(&in, pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses)
	if err != nil {
		return Explanation{}, err
	}
	if final := pod.Status.Phase; IsTerminal(final) {
		e := Explanation{Phase: final, Rule: RuleTerminalPhase, Reason: terminalReason(&pod.Status) + " and a terminal phase never changes"}
		if phase != final {
			e.Reason += " (the container statuses alone give " + string(phase) + ")"
		}
		return e, nil
	}
	e := Explanation{Phase: phase, Rule: rule}
	e.Containers = o.deciders(pod, rule, phase)
	e.Reason = reason(pod, rule, phase, e.Containers)
	return e, nil
}

// phaseRule is getPhase on in.Pod's spec with the statuses given for its
// status's, and the kubelet-only facts of in: the phase Explain explains,
// before the terminal-phase rule.
func (o Options) phaseRule(in *Input, initStatuses, statuses []v1.ContainerStatus) (v1.PodPhase, Rule, error) {
	spec := &in.Pod.Spec
	if err := checkStatuses(spec, initStatuses, statuses); err != nil {
		return "", 0, err
	}
	t := o.tally(spec, initStatuses, statuses)
	initialized := t.derivedInitialized
	if in.Initialized != nil {
		initialized = *in.Initialized
	}
	phase, rule := o.decide(spec, &t, in.Terminal, initialized, in.Static)
	return phase, rule, nil
}

// terminalReason says why a pod is in its terminal phase, from the pod
// reason and message the kubelet wrote with it: an eviction or a deadline
// handler fails the pod whatever its containers say.
func terminalReason(s *v1.PodStatus) string {
	detail := ""
	if s.Message != "" {
		detail = ": " + s.Message
	}
	switch s.Reason {
	case "":
		return "the pod is already " + string(s.Phase)
	case ReasonEvicted:
		return "the kubelet evicted the pod (" + ReasonEvicted + detail + "), so it is " + string(s.Phase)
	case ReasonDeadlineExceeded:
		return "the pod ran past its activeDeadlineSeconds (" + ReasonDeadlineExceeded + detail + "), so it is " + string(s.Phase)
	}
	return "the pod is already " + string(s.Phase) + " (" + s.Reason + detail + ")"
}

// checkStatuses rejects statuses the API server would not accept.
func checkStatuses(spec *v1.PodSpec, initStatuses, statuses []v1.ContainerStatus) error {
	lists := [...]struct {
		field    string
		statuses []v1.ContainerStatus
		specs    []v1.Container
	}{
		{"initContainerStatuses", initStatuses, spec.InitContainers},
		{"containerStatuses", statuses, spec.Containers},
	}
	for _, l := range lists {
		// Small lists are checked in place; larger ones with sets, so the
		// check stays linear.
		const small = 16
		var specNames, seen map[string]bool
		if len(l.statuses) > small {
			specNames = make(map[string]bool, len(l.specs))
			for i := range l.specs {
				specNames[l.specs[i].Name] = true
			}
			seen = make(map[string]bool, len(l.statuses))
		}
		for i := range l.statuses {
			name := l.statuses[i].Name
			known, dup := false, false
			if specNames != nil {
				known, dup = specNames[name], seen[name]
				seen[name] = true
			} else {
				known = (i < len(l.specs) && l.specs[i].Name == name) || hasContainer(l.specs, name)
				for j := 0; j < i && !dup; j++ {
					dup = l.statuses[j].Name == name
				}
			}
			if !known {
				return &UnknownContainerError{Field: l.field, Name: name}
			}
			if dup {
				return &DuplicateStatusError{Field: l.field, Name: name}
			}
		}
	}
	return nil
}

func hasContainer(specs []v1.Container, name string) bool {
	for i := range specs {
		if specs[i].Name == name {
			return true
		}
	}
	return false
}

// deciders lists the containers whose status settled rule.
func (o Options) deciders(pod *v1.Pod, rule Rule, phase v1.PodPhase) []string {
	var want, without effect
	sidecarsOnly, regularOnly := false, false
	switch rule {
	case RuleInitFailed:
		want = effFailedInitFinal
		if !o.Features.ContainerRestartRules {
			want = effFailedInit
		}
	case RuleInitPending:
		want = effPendingInit
	case RuleSidecarPending:
		want, sidecarsOnly = effPendingSidecar, true
	case RuleWaiting:
		want = effWaiting
	case RuleRunning:
		want = effRunning
	case RuleTerminated, RuleSucceeded, RuleFailed:
		want, regularOnly = effStopped, true
		if phase == v1.PodFailed {
			without = effSucceeded
		}
	case RuleRestarting:
		want, regularOnly = effStopped, true
		if o.Features.ContainerRestartRules {
			without = effStoppedFinal
		} else if pod.Spec.RestartPolicy != v1.RestartPolicyAlways {
			without = effSucceeded
		}
	case RuleUnknownStatus:
		want = effUnknown
	default:
		return nil
	}
	var names []string
	spec := &pod.Spec
	inits := newStatusIndex(pod.Status.InitContainerStatuses)
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		st := inits.find(c.Name, i)
		var e effect
		if containerstate.IsSidecar(c) {
			if regularOnly {
				continue
			}
			e = sidecarEffect(st)
		} else {
			if sidecarsOnly || regularOnly {
				continue
			}
			e = o.regularInitEffect(spec, c, st)
		}
		if e&want != 0 && e&without == 0 {
			names = append(names, c.Name)
		}
	}
	if sidecarsOnly {
		return names
	}
	regular := newStatusIndex(pod.Status.ContainerStatuses)
	for i := range spec.Containers {
		c := &spec.Containers[i]
		e := o.regularEffect(spec, c, regular.find(c.Name, i))
		if e&want != 0 && e&without == 0 {
			names = append(names, c.Name)
		}
	}
	return names
}

// reason writes the one-line explanation.
func reason(pod *v1.Pod, rule Rule, phase v1.PodPhase, names []string) string {
	// verb picks the singular or plural form for the named containers.
	verb := func(one, many string) string {
		if len(names) > 1 {
			return many
		}
		return one
	}
	who := func(kind string) string { return kind + verb("", "s") + " " + quoteNames(names) }
	switch rule {
	case RuleInitFailed:
		return who("init container") + " failed and will not be restarted"
	case RuleInitPending:
		return who("init container") + verb(" has", " have") + " not completed"
	case RuleSidecarPending:
		return who("sidecar") + verb(" has", " have") + " not started and no regular container has run in this sandbox"
	case RuleWaiting:
		if w := waitingReason(pod, names); w != "" {
			return who("container") + verb(" is", " are") + " waiting (" + w + ")"
		}
		return who("container") + verb(" is", " are") + " waiting"
	case RuleRunning:
		return who("container") + verb(" is", " are") + " running and every container has a status"
	case RuleTerminated:
		if phase == v1.PodSucceeded {
			return "the pod was terminated and " + who("container") + " succeeded"
		}
		return "the pod was terminated and " + who("container") + " failed"
	case RuleRestarting:
		return who("container") + " stopped and will be restarted"
	case RuleSucceeded:
		return who("container") + " succeeded and none will be restarted"
	case RuleFailed:
		return who("container") + " failed and will not be restarted"
	case RuleUnknownStatus:
		return who("container") + verb(" has", " have") + " no status yet"
	case RuleNotStarted:
		return "no container is running or has stopped"
	}
	return "there is no pod"
}

// quoteNames renders `"a"`, `"a" and "b"` or `"a", "b" and 3 more`.
func quoteNames(names []string) string {
	const shown = 2
	var b strings.Builder
	for i, n := range names {
		if i == shown {
			fmt.Fprintf(&b, " and %d more", len(names)-shown)
			break
		}
		if i > 0 {
			if i == len(names)-1 {
				b.WriteString(" and ")
			} else {
				b.WriteString(", ")
			}
		}
		fmt.Fprintf(&b, "%q", n)
	}
	return b.String()
}

// waitingReason returns the waiting reason of the first named container that
// has one.
func waitingReason(pod *v1.Pod, names []string) string {
	for _, n := range names {
		for _, list := range [...][]v1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
			for i := range list {
				if list[i].Name == n && list[i].State.Waiting != nil && list[i].State.Waiting.Reason != "" {
					return list[i].State.Waiting.Reason
				}
			}
		}
	}
	return ""
}
