package nodecondition

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// ConditionWrite is a node status update the controller issues: the node's
// full condition list after marking. Conditions belongs to the caller.
type ConditionWrite struct {
	Node       string             // the node written
	Conditions []v1.NodeCondition // its full condition list
}

// TaintChange is one taint added to or removed from a node.
type TaintChange struct {
	Node  string   // the node changed
	Taint v1.Taint // the taint (NoExecute taints carry TimeAdded)
	Added bool     // true when added, false when removed
}

// PodRef names a pod and the node it is bound to.
type PodRef struct {
	Namespace, Name, Node string // the pod's namespace and name, and its node
}

// ZoneChange is a zone moving from one state to another.
type ZoneChange struct {
	Zone     string    // the zone key (see ZoneKey)
	From, To ZoneState // the old and new states
}

// NodeEvent is an event the controller records on a node, such as
// {Reason: "NodeNotReady", Message: "Node n status is now: NodeNotReady"}.
type NodeEvent struct {
	Node, Reason, Message string // the node, the event reason and message
}

// Pass is what one monitor, tainting or informer-update call decided. It
// owns its slices (and the Conditions of its Writes): the Controller keeps no
// reference to them, so a Pass stays as it was across later calls and may be
// handed to another goroutine. A slice with nothing in it is nil.
type Pass struct {
	// Time is when the pass ran.
	Time time.Time
	// Writes are the node status updates (conditions marked Unknown).
	Writes []ConditionWrite
	// Taints are the taint changes, NoSchedule and NoExecute, already applied
	// to the controller's view.
	Taints []TaintChange
	// PodsNotReady are the pods whose Ready condition is to be set False,
	// each with a Warning pod event ReasonNodeNotReady / MessagePodNodeNotReady.
	PodsNotReady []PodRef
	// Events are the node events to record.
	Events []NodeEvent
	// Zones are the zone state changes.
	Zones []ZoneChange
	// Skipped are the nodes skipped by the live-lease check in this pass.
	Skipped []string
}

func (p *Pass) reset(now time.Time) {
	p.Time = now
	p.Writes = p.Writes[:0]
	p.Taints = p.Taints[:0]
	p.PodsNotReady = p.PodsNotReady[:0]
	p.Events = p.Events[:0]
	p.Zones = p.Zones[:0]
	p.Skipped = p.Skipped[:0]
}

// take returns an owned copy of the pass the Controller accumulated: a pass
// with nothing in it allocates nothing.
func (p *Pass) take() Pass {
	out := Pass{
		Time:         p.Time,
		Writes:       clip(p.Writes),
		Taints:       clip(p.Taints),
		PodsNotReady: clip(p.PodsNotReady),
		Events:       clip(p.Events),
		Zones:        clip(p.Zones),
		Skipped:      clip(p.Skipped),
	}
	for i := range out.Writes {
		out.Writes[i].Conditions = clip(out.Writes[i].Conditions)
	}
	return out
}

// clip returns a copy of s with no spare capacity, or nil when s is empty.
func clip[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}
