package podphase

import (
	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
)

// ReasonRestartingAllContainers is the Waiting and Terminated reason the
// kubelet gives a container that is being restarted in place because some
// container of the pod matched a RestartAllContainers rule (KEP-5532).
const ReasonRestartingAllContainers = "RestartingAllContainers"

// Options holds the feature switches and the Kubernetes minor that change
// the results of this package. Use [DefaultOptions] for the Kubernetes 1.37
// defaults and [DefaultOptionsFor] for another minor's; the zero value is
// every gate off with the Version-keyed rules of 1.37, a valid but older
// configuration.
//
// Options is a small value; copy it freely. Its methods are safe for
// simultaneous use by multiple goroutines.
type Options struct {
	// Features are the container gates shared with containerstate.
	// ContainerRestartRules decides whether getPhase reads per-container
	// restartability (the gate-on branches of the spec's section 3.3);
	// RestartAllContainersOnContainerExits gives RestartAllContainers rules,
	// the RestartingAllContainers reason and the AllContainersRestarting
	// condition their meaning. ChangeContainerStatusOnKubeletRestart has no
	// effect in this package.
	//
	// Gates that are locked on in 1.37 (SidecarContainers,
	// PodReadyToStartContainersCondition, PodObservedGenerationTracking)
	// are not switches: their behaviour follows Version.
	Features containerstate.Features

	// Version is the Kubernetes minor whose rules apply where no gate of
	// Features expresses the difference (docs/versions.md): before 1.34
	// PodObservedGenerationTracking is off and conditions carry an
	// observedGeneration only where the old condition had one (row PP-V3);
	// before 1.37 a False PodReadyToStartContainers has no reason and no
	// message (PP-V4); before 1.35 kubectl's STATUS shows Completed, not a
	// failed container's reason, when the first container completed (PP-V5);
	// a running pod's status.resources follow 1.35's memory request rules
	// before 1.36 (PP-V7) and show a CPU request read back through a cgroup
	// v2 weight before 1.37 (PP-V8).
	// The zero Version is 1.37. A value that is none of kubeversion's
	// constants (kubeversion.Version(99)) is refused by the methods with an
	// error result (Explain, GenerateStatus, Conditions, Columns) with an
	// [*OptionError] matching ErrInvalidInput and
	// kubeversion.ErrUnsupportedVersion; the methods without one (Phase,
	// DisplayStatus, KubeletOwned, OwnedConditionTypes) cannot refuse it and
	// treat it as the zero Version, 1.37.
	Version kubeversion.Version
}

// DefaultOptions returns the options as Kubernetes 1.37 sets them by
// default: [DefaultOptionsFor] the zero kubeversion.Version.
func DefaultOptions() Options {
	return DefaultOptionsFor(kubeversion.Default)
}

// DefaultOptionsFor returns the options of Kubernetes minor v: the feature
// gates of containerstate.DefaultFeaturesFor(v) and Version v. A v that is
// none of kubeversion's constants is kept as it is, with 1.37's gates, so
// that the methods with an error result refuse it.
func DefaultOptionsFor(v kubeversion.Version) Options {
	return Options{Features: containerstate.DefaultFeaturesFor(v), Version: v}
}

// Phase returns the phase the kubelet of Kubernetes 1.37, with its default
// feature gates, computes for pod during a normal sync (the pod worker has not
// terminated it). It is [Options.Phase] on [DefaultOptions].
//
// Phase never returns Unknown. A nil pod is Pending. A pod whose
// status.phase is already Succeeded or Failed keeps it, as the kubelet's
// post-processing does (a terminal phase never changes); otherwise the
// result is getPhase's. Whether the pod has
// initialized in its current sandbox, which only a kubelet knows, is derived
// from the statuses: it has when some regular container status is Running or
// Terminated or has a last termination state. Use [Options.Explain] to pass
// that fact, or the pod worker's, explicitly.
//
// Phase allocates nothing.
func Phase(pod *v1.Pod) v1.PodPhase {
	return DefaultOptions().Phase(pod)
}

// Phase is [Phase] with the feature switches of o.
func (o Options) Phase(pod *v1.Pod) v1.PodPhase {
	if pod == nil {
		return v1.PodPending
	}
	if IsTerminal(pod.Status.Phase) {
		return pod.Status.Phase
	}
	t := o.tally(&pod.Spec, pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses)
	phase, _ := o.decide(&pod.Spec, &t, false, t.derivedInitialized, false)
	return phase
}

// effect is what one container status adds to the phase counters of the
// spec's section 3.2, as a set of bits.
type effect uint16

const (
	effPendingInit     effect = 1 << iota // pendingRegularInit
	effFailedInit                         // failedInit
	effFailedInitFinal                    // failedInitNotRestartable
	effUnknown                            // unknown
	effRunning                            // running
	effPendingSidecar                     // pendingSidecar
	effWaiting                            // waiting
	effStopped                            // stopped
	effSucceeded                          // succeeded
	effStoppedFinal                       // stoppedNotRestartable
	effHasRun                             // a regular container ran: derives podHasInitialized
)

// tally holds the counters of getPhase.
type tally struct {
	pendingInit, failedInit, failedInitFinal  int
	unknown, running, pendingSidecar, waiting int
	stopped, succeeded, stoppedFinal          int
	derivedInitialized                        bool
}

func (t *tally) add(e effect) {
	if e&effPendingInit != 0 {
		t.pendingInit++
	}
	if e&effFailedInit != 0 {
		t.failedInit++
	}
	if e&effFailedInitFinal != 0 {
		t.failedInitFinal++
	}
	if e&effUnknown != 0 {
		t.unknown++
	}
	if e&effRunning != 0 {
		t.running++
	}
	if e&effPendingSidecar != 0 {
		t.pendingSidecar++
	}
	if e&effWaiting != 0 {
		t.waiting++
	}
	if e&effStopped != 0 {
		t.stopped++
	}
	if e&effSucceeded != 0 {
		t.succeeded++
	}
	if e&effStoppedFinal != 0 {
		t.stoppedFinal++
	}
	if e&effHasRun != 0 {
		t.derivedInitialized = true
	}
}

// tally runs the three passes of getPhase over the spec: regular init
// containers, sidecars, then regular containers, with their statuses.
func (o Options) tally(spec *v1.PodSpec, initStatuses, statuses []v1.ContainerStatus) tally {
	var t tally
	inits := newStatusIndex(initStatuses)
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if containerstate.IsSidecar(c) {
			continue
		}
		t.add(o.regularInitEffect(spec, c, inits.find(c.Name, i)))
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if !containerstate.IsSidecar(c) {
			continue
		}
		t.add(sidecarEffect(inits.find(c.Name, i)))
	}
	regular := newStatusIndex(statuses)
	for i := range spec.Containers {
		c := &spec.Containers[i]
		t.add(o.regularEffect(spec, c, regular.find(c.Name, i)))
	}
	return t
}

// statusIndex finds container statuses by name without allocating and, in
// the orders statuses come in, without a quadratic search: the kubelet
// sorts statuses by name, and hand-written statuses usually follow the
// spec. A lookup tries the container's own index, then the entry after the
// previous hit, then a binary search when the list is sorted by name, and
// only then a linear scan.
type statusIndex struct {
	list    []v1.ContainerStatus
	checked bool // whether sorted has been computed
	sorted  bool
	next    int
}

func newStatusIndex(list []v1.ContainerStatus) statusIndex {
	return statusIndex{list: list}
}

// isSorted reports whether the list is sorted by name, checking once.
func (x *statusIndex) isSorted() bool {
	if !x.checked {
		x.checked, x.sorted = true, true
		for i := 1; i < len(x.list); i++ {
			if x.list[i-1].Name > x.list[i].Name {
				x.sorted = false
				break
			}
		}
	}
	return x.sorted
}

// find returns a status named name, or nil. Which one of a repeated name
// (the API server rejects those) is left open.
func (x *statusIndex) find(name string, hint int) *v1.ContainerStatus {
	l := x.list
	if hint < len(l) && l[hint].Name == name {
		x.next = hint + 1
		return &l[hint]
	}
	if x.next < len(l) && l[x.next].Name == name {
		x.next++
		return &l[x.next-1]
	}
	if x.isSorted() {
		lo, hi := 0, len(l)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if l[mid].Name < name {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo < len(l) && l[lo].Name == name {
			x.next = lo + 1
			return &l[lo]
		}
		return nil
	}
	for i := range l {
		if l[i].Name == name {
			x.next = i + 1
			return &l[i]
		}
	}
	return nil
}

// restartable reports whether a container that exited with exitCode and
// terminated reason will run again, for the gate-on branches of getPhase.
func (o Options) restartable(spec *v1.PodSpec, c *v1.Container, exitCode int32, reason string) bool {
	if o.Features.RestartAllContainersOnContainerExits && reason == ReasonRestartingAllContainers {
		return true
	}
	return o.Features.ShouldRestart(spec, c, exitCode)
}

// regularInitEffect is pass 1 (spec section 3.2, first table).
func (o Options) regularInitEffect(spec *v1.PodSpec, c *v1.Container, st *v1.ContainerStatus) effect {
	if st == nil {
		return effPendingInit
	}
	var exit int32
	var reason string
	switch s := &st.State; {
	case s.Running != nil:
		return effPendingInit
	case s.Terminated != nil:
		if s.Terminated.ExitCode == 0 {
			return 0
		}
		exit, reason = s.Terminated.ExitCode, s.Terminated.Reason
	case s.Waiting != nil:
		last := st.LastTerminationState.Terminated
		if last == nil {
			return effPendingInit
		}
		if last.ExitCode == 0 {
			return 0
		}
		exit, reason = last.ExitCode, last.Reason
	default:
		return effPendingInit
	}
	e := effFailedInit
	if o.Features.ContainerRestartRules && !o.restartable(spec, c, exit, reason) {
		e |= effFailedInitFinal
	}
	return e
}

// sidecarEffect is pass 2 (spec section 3.2, second table).
func sidecarEffect(st *v1.ContainerStatus) effect {
	if st == nil {
		return effUnknown
	}
	switch s := &st.State; {
	case s.Running != nil:
		if st.Started == nil || !*st.Started {
			return effRunning | effPendingSidecar
		}
		return effRunning
	case s.Terminated != nil:
		return 0
	case s.Waiting != nil:
		if st.LastTerminationState.Terminated != nil {
			return 0
		}
		return effPendingSidecar | effWaiting
	}
	return effPendingSidecar | effUnknown
}

// regularEffect is pass 3 (spec section 3.2, third table).
func (o Options) regularEffect(spec *v1.PodSpec, c *v1.Container, st *v1.ContainerStatus) effect {
	if st == nil {
		return effUnknown
	}
	switch s := &st.State; {
	case s.Running != nil:
		return effRunning | effHasRun
	case s.Terminated != nil:
		e := effStopped | effHasRun
		if s.Terminated.ExitCode == 0 {
			e |= effSucceeded
		}
		if o.Features.ContainerRestartRules && !o.restartable(spec, c, s.Terminated.ExitCode, s.Terminated.Reason) {
			e |= effStoppedFinal
		}
		return e
	case s.Waiting != nil:
		last := st.LastTerminationState.Terminated
		if last == nil {
			return effWaiting
		}
		e := effStopped | effHasRun
		if o.Features.ContainerRestartRules && !o.restartable(spec, c, last.ExitCode, last.Reason) {
			e |= effStoppedFinal
		}
		return e
	}
	if st.LastTerminationState.Terminated != nil {
		return effUnknown | effHasRun
	}
	return effUnknown
}

// decide applies the decision steps of the spec's section 3.3 to the counters.
func (o Options) decide(spec *v1.PodSpec, t *tally, terminal, initialized, static bool) (v1.PodPhase, Rule) {
	policy := spec.RestartPolicy
	if o.Features.ContainerRestartRules {
		if t.failedInitFinal > 0 {
			return v1.PodFailed, RuleInitFailed
		}
	} else if t.failedInit > 0 && policy == v1.RestartPolicyNever {
		return v1.PodFailed, RuleInitFailed
	}
	if t.pendingInit > 0 {
		return v1.PodPending, RuleInitPending
	}
	if t.pendingSidecar > 0 && !initialized {
		return v1.PodPending, RuleSidecarPending
	}
	if t.waiting > 0 {
		return v1.PodPending, RuleWaiting
	}
	if t.running > 0 && t.unknown == 0 {
		return v1.PodRunning, RuleRunning
	}
	if t.running == 0 && t.stopped > 0 && t.unknown == 0 {
		if terminal && !static {
			if t.stopped == t.succeeded {
				return v1.PodSucceeded, RuleTerminated
			}
			return v1.PodFailed, RuleTerminated
		}
		if o.Features.ContainerRestartRules {
			if t.stopped != t.stoppedFinal {
				return v1.PodRunning, RuleRestarting
			}
			if t.stopped == t.succeeded {
				return v1.PodSucceeded, RuleSucceeded
			}
			return v1.PodFailed, RuleFailed
		}
		switch {
		case policy == v1.RestartPolicyAlways:
			return v1.PodRunning, RuleRestarting
		case t.stopped == t.succeeded:
			return v1.PodSucceeded, RuleSucceeded
		case policy == v1.RestartPolicyNever:
			return v1.PodFailed, RuleFailed
		}
		return v1.PodRunning, RuleRestarting
	}
	if t.unknown > 0 {
		return v1.PodPending, RuleUnknownStatus
	}
	return v1.PodPending, RuleNotStarted
}
