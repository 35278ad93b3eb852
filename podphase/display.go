package podphase

import (
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
)

// ReasonNodeLost is the pod reason ("NodeLost") with which a deleting pod
// shows the STATUS Unknown in kubectl.
const ReasonNodeLost = "NodeLost"

// Row is one line of `kubectl get pods` for a pod: the READY, STATUS and
// RESTARTS columns, the extra columns of `-o wide`, and the numbers behind
// them.
type Row struct {
	// Ready is the READY column, "ready/total".
	Ready string
	// Status is the STATUS column, as [DisplayStatus] returns it.
	Status string
	// Restarts is the RESTARTS column: "N", or "N (<age> ago)" when N is not
	// zero and a last termination time is known.
	Restarts string

	// ReadyContainers and TotalContainers make up Ready. The total counts
	// regular containers and sidecars.
	ReadyContainers, TotalContainers int
	// RestartCount is the number in Restarts.
	RestartCount int
	// LastRestart is the latest last-termination time among the containers
	// counted in RestartCount; zero when none is known.
	LastRestart time.Time

	// Completed is kubectl's table-row condition Completed: true for a
	// Succeeded or Failed pod, with CompletedReason "Succeeded" or "Failed"
	// and CompletedMessage "The pod has completed successfully." or "The
	// pod failed.".
	Completed bool
	// CompletedReason and CompletedMessage go with Completed; both are ""
	// when it is false.
	CompletedReason, CompletedMessage string

	// IP, Node, NominatedNode and ReadinessGates are the `-o wide`
	// columns; an empty value shows as "<none>". ReadinessGates is
	// "true/total" over the pod's readiness gates.
	IP, Node, NominatedNode, ReadinessGates string
}

// DisplayStatus returns the STATUS column `kubectl get pods` shows for pod,
// exactly as kubectl v0.37 computes it (spec/podphase.md section 9): the
// phase or the pod's reason, SchedulingGated, Init:N/M, Init:<reason>,
// Init:Signal:N, Init:ExitCode:N, the first container's waiting or
// terminated reason, Signal:N, ExitCode:N, Completed versus Running versus
// NotReady, Terminating, and Unknown for a deleting pod lost with its node.
//
// A nil pod, and a pod with no phase, no reason and no container statuses,
// give "" as kubectl prints. DisplayStatus allocates only to build an
// Init:, Signal: or ExitCode: string.
func DisplayStatus(pod *v1.Pod) string {
	if pod == nil {
		return ""
	}
	var d display
	d.compute(pod, true)
	return d.status()
}

// DisplayStatus is [DisplayStatus] as the kubectl of o.Version prints it.
// kubectl reads no feature gate when it prints a pod (sidecars, the one
// gated input, are GA and recognised by their restartPolicy), so Features
// do not matter; Version does: before 1.35, when the first regular
// container completed, STATUS shows Completed (or Running, NotReady) even
// though another container failed, where 1.35 and later show the failed
// container's reason (docs/versions.md, row PP-V5). An invalid Version
// prints as the zero Version's kubectl, 1.37's.
func (o Options) DisplayStatus(pod *v1.Pod) string {
	if pod == nil {
		return ""
	}
	var d display
	d.compute(pod, o.failedReason())
	return d.status()
}

// failedReason reports whether kubectl prefers a failed container's reason
// to Completed (kubernetes#124766, in 1.35).
func (o Options) failedReason() bool { return o.Version.AtLeast(kubeversion.V1_35) }

// Columns is [Options.Columns] on [DefaultOptions].
func Columns(pod *v1.Pod, now time.Time) (Row, error) {
	return DefaultOptions().Columns(pod, now)
}

// Columns returns kubectl's row for pod with the ages in RESTARTS measured
// at now, as the kubectl of o.Version prints it (see
// [Options.DisplayStatus]). It returns an [*OptionError] for an invalid
// o.Version (see [Options].Version) and [ErrNilPod] for a nil pod.
func (o Options) Columns(pod *v1.Pod, now time.Time) (Row, error) {
	if err := o.validate(); err != nil {
		return Row{}, err
	}
	if pod == nil {
		return Row{}, ErrNilPod
	}
	var d display
	d.compute(pod, o.failedReason())
	r := Row{
		Status:          d.status(),
		ReadyContainers: d.ready,
		TotalContainers: d.total,
		RestartCount:    d.restarts,
		Ready:           strconv.Itoa(d.ready) + "/" + strconv.Itoa(d.total),
		Restarts:        strconv.Itoa(d.restarts),
		IP:              none(podIP(pod)),
		Node:            none(pod.Spec.NodeName),
		NominatedNode:   none(pod.Status.NominatedNodeName),
		ReadinessGates:  readinessGates(pod),
	}
	switch pod.Status.Phase {
	case v1.PodSucceeded:
		r.Completed, r.CompletedReason, r.CompletedMessage = true, string(v1.PodSucceeded), "The pod has completed successfully."
	case v1.PodFailed:
		r.Completed, r.CompletedReason, r.CompletedMessage = true, string(v1.PodFailed), "The pod failed."
	}
	if !d.lastRestart.IsZero() {
		r.LastRestart = d.lastRestart
		if d.restarts != 0 {
			r.Restarts += " (" + duration.HumanDuration(now.Sub(d.lastRestart)) + " ago)"
		}
	}
	return r, nil
}

// display holds the running values of kubectl's printPod.
type display struct {
	reason      string
	kind        uint8 // plainReason, or numberedReason: reason+extra[/of]
	extra       int   // the number of a numbered reason
	of          int   // the n of Init:i/n; -1 for none
	ready       int
	total       int
	restarts    int
	lastRestart time.Time
}

const (
	plainReason uint8 = iota
	numberedReason
)

// set replaces the displayed reason by a plain string.
func (d *display) set(reason string) { d.reason, d.kind = reason, plainReason }

// setNumbered replaces it by prefix + n, followed by "/of" when of is not
// negative; the string is built only when read.
func (d *display) setNumbered(prefix string, n, of int) {
	d.reason, d.extra, d.of, d.kind = prefix, n, of, numberedReason
}

func (d *display) status() string {
	if d.kind != numberedReason {
		return d.reason
	}
	var buf [64]byte
	b := append(buf[:0], d.reason...)
	b = strconv.AppendInt(b, int64(d.extra), 10)
	if d.of >= 0 {
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(d.of), 10)
	}
	return string(b)
}

// terminatedReason is the display reason of a terminated state: its reason,
// else Signal:<n>, else ExitCode:<n>, each after prefix.
func terminatedReason(prefix string, t *v1.ContainerStateTerminated) (string, int, bool) {
	switch {
	case t.Reason != "":
		return prefix + t.Reason, 0, false
	case t.Signal != 0:
		return prefix + "Signal:", int(t.Signal), true
	}
	return prefix + "ExitCode:", int(t.ExitCode), true
}

func (d *display) setTerminated(prefix string, t *v1.ContainerStateTerminated) {
	r, n, numbered := terminatedReason(prefix, t)
	if numbered {
		d.setNumbered(r, n, -1)
	} else {
		d.set(r)
	}
}

func laterRestart(last time.Time, st *v1.ContainerStatus) time.Time {
	if t := st.LastTerminationState.Terminated; t != nil && last.Before(t.FinishedAt.Time) {
		return t.FinishedAt.Time
	}
	return last
}

// compute follows printPod, rule by rule (spec section 9). failedReason
// is the rule of kubectl 1.35 and later that a failed container's reason
// replaces Completed.
func (d *display) compute(pod *v1.Pod, failedReason bool) {
	spec, status := &pod.Spec, &pod.Status

	// 9.1, 9.2, 9.3
	d.total = len(spec.Containers)
	for i := range spec.InitContainers {
		if containerstate.IsSidecar(&spec.InitContainers[i]) {
			d.total++
		}
	}
	d.set(string(status.Phase))
	if status.Reason != "" {
		d.set(status.Reason)
	}
	for i := range status.Conditions {
		if c := &status.Conditions[i]; c.Type == v1.PodScheduled && c.Reason == v1.PodReasonSchedulingGated {
			d.set(v1.PodReasonSchedulingGated)
		}
	}

	initializing, sidecarRestarts, sidecarLast := d.initLoop(spec, status)
	if !initializing || firstConditionTrue(status.Conditions, v1.PodInitialized) {
		d.restarts, d.lastRestart = sidecarRestarts, sidecarLast
		d.regulars(status, failedReason)
	}

	// 9.7
	if pod.DeletionTimestamp != nil {
		if status.Reason == ReasonNodeLost {
			d.set(string(v1.PodUnknown))
		} else if status.Phase != v1.PodSucceeded && status.Phase != v1.PodFailed {
			d.set("Terminating")
		}
	}
}

// initLoop is rule 9.5, the init loop: it reports whether an init container
// still initializes the pod, and the restarts of the sidecars (and the
// latest of them), which rule 9.6 counts again.
func (d *display) initLoop(spec *v1.PodSpec, status *v1.PodStatus) (initializing bool, sidecarRestarts int, sidecarLast time.Time) {
	for i := range status.InitContainerStatuses {
		st := &status.InitContainerStatuses[i]
		d.restarts += int(st.RestartCount)
		d.lastRestart = laterRestart(d.lastRestart, st)
		isSidecar := containerstate.IsSidecar(findContainer(spec.InitContainers, st.Name, i))
		if isSidecar {
			sidecarRestarts += int(st.RestartCount)
			sidecarLast = laterRestart(sidecarLast, st)
		}
		switch s := &st.State; {
		case s.Terminated != nil && s.Terminated.ExitCode == 0:
			continue
		case isSidecar && st.Started != nil && *st.Started:
			if st.Ready {
				d.ready++
			}
			continue
		case s.Terminated != nil:
			d.setTerminated("Init:", s.Terminated)
		case s.Waiting != nil && s.Waiting.Reason != "" && s.Waiting.Reason != "PodInitializing":
			d.set("Init:" + s.Waiting.Reason)
		default:
			d.setNumbered("Init:", i, len(spec.InitContainers))
		}
		return true, sidecarRestarts, sidecarLast
	}
	return false, sidecarRestarts, sidecarLast
}

// regulars is rule 9.6: the regular containers, last to first, so the
// first reason wins, then what replaces Completed.
func (d *display) regulars(status *v1.PodStatus, failedReason bool) {
	hasRunning := false
	var errReason string
	var errNumber int
	var errNumbered, hasErr bool
	for i := len(status.ContainerStatuses) - 1; i >= 0; i-- {
		st := &status.ContainerStatuses[i]
		d.restarts += int(st.RestartCount)
		d.lastRestart = laterRestart(d.lastRestart, st)
		s := &st.State
		switch {
		case s.Waiting != nil && s.Waiting.Reason != "":
			d.set(s.Waiting.Reason)
		case s.Terminated != nil:
			d.setTerminated("", s.Terminated)
			if s.Terminated.ExitCode != 0 {
				errReason, errNumber, errNumbered = terminatedReason("", s.Terminated)
				hasErr = true
			}
		case st.Ready && s.Running != nil:
			hasRunning = true
			d.ready++
		}
	}
	if d.kind != plainReason || d.reason != "Completed" {
		return
	}
	switch {
	case hasRunning && anyConditionTrue(status.Conditions, v1.PodReady):
		d.set(string(v1.PodRunning))
	case !failedReason:
		if hasRunning {
			d.set("NotReady")
		}
	case hasErr && errNumbered:
		d.setNumbered(errReason, errNumber, -1)
	case hasErr:
		d.set(errReason)
	case hasRunning:
		d.set("NotReady")
	}
}

// findContainer returns the container named name, trying index hint first;
// nil when there is none.
func findContainer(cs []v1.Container, name string, hint int) *v1.Container {
	if hint < len(cs) && cs[hint].Name == name {
		return &cs[hint]
	}
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

// firstConditionTrue reports whether the first condition of type t is True,
// as kubectl reads a duplicated Initialized condition.
func firstConditionTrue(cs []v1.PodCondition, t v1.PodConditionType) bool {
	for i := range cs {
		if cs[i].Type == t {
			return cs[i].Status == v1.ConditionTrue
		}
	}
	return false
}

// anyConditionTrue reports whether some condition of type t is True, as
// kubectl reads a duplicated Ready condition.
func anyConditionTrue(cs []v1.PodCondition, t v1.PodConditionType) bool {
	for i := range cs {
		if cs[i].Type == t && cs[i].Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

func none(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// podIP is the IP column: status.podIP when set, else the first of
// status.podIPs. The API server's v1 defaults make podIP win when the two
// disagree, and kubectl prints what they leave.
func podIP(pod *v1.Pod) string {
	if pod.Status.PodIP != "" {
		return pod.Status.PodIP
	}
	if len(pod.Status.PodIPs) > 0 {
		return pod.Status.PodIPs[0].IP
	}
	return ""
}

// readinessGates is the READINESS GATES column: how many gates have a True
// condition (the first condition of the gate's type decides), over the
// number of gates.
func readinessGates(pod *v1.Pod) string {
	gates := pod.Spec.ReadinessGates
	if len(gates) == 0 {
		return "<none>"
	}
	n := 0
	for _, g := range gates {
		if firstConditionTrue(pod.Status.Conditions, g.ConditionType) {
			n++
		}
	}
	return strconv.Itoa(n) + "/" + strconv.Itoa(len(gates))
}
