package containerstate

import (
	"strings"
)

// Transition is one row of the container state table: the events that can
// move a container's reported state From one state To another, and when.
type Transition struct {
	// From and To are the reported states before and after.
	From, To State
	// Events are the event kinds that can make this move.
	Events []EventKind
	// When says in which situations, for people.
	When string
}

// failures are the events that record why a start failed.
var failures = []EventKind{PullFailed, PullBackOff, CreateFailed, StartFailed, BackOff}

func kinds(groups ...[]EventKind) []EventKind {
	var out []EventKind
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// Transitions returns the table of every move of a container's reported
// state that [Machine.Step] can make, with the default and every other
// option. The model tests check that the machine never moves outside it, and
// the package documentation's diagram is generated from it.
func Transitions() []Transition {
	return []Transition{
		{From: Waiting, To: Waiting,
			Events: kinds([]EventKind{PullStarted, PullSucceeded, Created, Exited, Unknown, Removed, StartupProbe, ReadinessProbe, LivenessProbe, PodChanged, Tick}, failures),
			When:   "image pulls, start failures (shown as the reason), a created instance (empty reason), UNKNOWN without a running predecessor, an exit whose restart is pending behind a start failure"},
		{From: Waiting, To: Running, Events: []EventKind{Started},
			When: "the newest instance runs"},
		{From: Waiting, To: Terminated,
			Events: kinds([]EventKind{Exited, Removed, PodChanged, PullStarted, PullSucceeded, LivenessProbe, Tick}, failures),
			When: "the newest instance exited and no start failure is pending, or a start failure stops showing because the pod is being deleted; " +
				"an init container without an instance once a regular one exists is inferred Completed again at the next event after a start failure showed"},
		{From: Running, To: Running,
			Events: kinds([]EventKind{PullStarted, PullSucceeded, Started, Unknown, StartupProbe, ReadinessProbe, LivenessProbe, PodChanged, Tick}, failures),
			When:   "probe results and relists; UNKNOWN within nodestate's grace (ready false); a postStart hook failure before the kill"},
		{From: Running, To: Terminated,
			Events: kinds([]EventKind{Exited, Unknown, Removed, PullStarted, PullSucceeded, StartupProbe, ReadinessProbe, LivenessProbe, PodChanged, Tick}, failures),
			When:   "the instance exited; the UNKNOWN grace is over at a Tick at its end (Machine.NextWake) or any later event (ContainerStatusUnknown, exit 137); the running instance removed while an exited one remains"},
		{From: Running, To: Waiting, Events: kinds([]EventKind{Created, Exited, Unknown, Removed, PodChanged}, failures),
			When: "a new instance; an exit with a start failure pending and a restart allowed; the instance disappeared (lastState ContainerStatusUnknown); " +
				"a start failure of the replacement while the instance is UNKNOWN within nodestate's grace, or one that shows again when the pod stops being deleted"},
		{From: Terminated, To: Terminated,
			Events: kinds([]EventKind{PullStarted, PullSucceeded, Created, Started, Exited, Unknown, Removed, StartupProbe, ReadinessProbe, LivenessProbe, PodChanged, Tick}, failures),
			When: "no restart allowed, or the pod is being deleted; an exit relisted; a new instance that exited again; a container reported ContainerStatusUnknown that the runtime lists again; " +
				"a completed init container run again after its sandbox was recreated, whose status the API server's rule keeps"},
		{From: Terminated, To: Waiting,
			Events: kinds([]EventKind{Created, Unknown, Removed, PodChanged, PullStarted, PullSucceeded, StartupProbe, ReadinessProbe, LivenessProbe, Tick}, failures),
			When: "restart allowed: a start failure or back-off shows as the reason and the exit moves to lastState, at that event or any later one; a new instance; removed by an in-place restart of all containers; " +
				"an instance still UNKNOWN after it was reported ContainerStatusUnknown, at any later event"},
		{From: Terminated, To: Running, Events: []EventKind{Started, PodChanged},
			When: "a new instance runs (restart allowed); a running instance whose Terminated status the API server's rule kept, once an in-place restart of all containers begins"},
	}
}

// Allowed reports whether the table has event moving a container from one
// state to another.
func Allowed(from State, event EventKind, to State) bool {
	for _, t := range Transitions() {
		if t.From != from || t.To != to {
			continue
		}
		for _, e := range t.Events {
			if e == event {
				return true
			}
		}
	}
	return false
}

// Mermaid renders the transition table as a Mermaid state diagram. Self
// transitions are left out: the diagram shows how the state moves.
func Mermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	b.WriteString("    [*] --> Waiting: NewMachine\n")
	for _, t := range Transitions() {
		if t.From == t.To {
			continue
		}
		names := make([]string, len(t.Events))
		for i, e := range t.Events {
			names[i] = e.String()
		}
		b.WriteString("    " + t.From.String() + " --> " + t.To.String() + ": " + strings.Join(names, ", ") + "\n")
	}
	return b.String()
}
