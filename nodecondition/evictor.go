package nodecondition

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Reasons and messages of taint-based pod deletion.
const (
	ReasonDeletionByTaintManager  = "DeletionByTaintManager"
	MessageDeletionByTaintManager = "Taint manager: deleting due to NoExecute taint"
	ReasonTaintManagerEviction    = "TaintManagerEviction"
)

// Event returns the Normal pod event the taint-eviction controller records
// for a decision: "Marking for deletion Pod ns/name" when the pod is deleted
// (EvictionNow; for a scheduled deletion, when it comes due), "Cancelling
// deletion of Pod ns/name" for EvictionCancel. ok is false for the others.
func (d EvictionDecision) Event() (reason, message string, ok bool) {
	name := d.Pod.Namespace + "/" + d.Pod.Name
	switch d.Action {
	case EvictionNow:
		return ReasonTaintManagerEviction, "Marking for deletion Pod " + name, true
	case EvictionCancel:
		return ReasonTaintManagerEviction, "Cancelling deletion of Pod " + name, true
	}
	return "", "", false
}

// EvictionAction is what the taint-eviction controller does with one pod.
type EvictionAction uint8

// The eviction actions.
const (
	EvictionNone     EvictionAction = iota // nothing scheduled, nothing to do
	EvictionKept                           // an earlier scheduled deletion stays as it is
	EvictionSchedule                       // a deletion is scheduled for At
	EvictionNow                            // the pod is deleted at once
	EvictionCancel                         // a scheduled deletion is cancelled
)

// String names the action: none, kept, schedule, delete or cancel.
func (a EvictionAction) String() string {
	switch a {
	case EvictionKept:
		return "kept"
	case EvictionSchedule:
		return "schedule"
	case EvictionNow:
		return "delete"
	case EvictionCancel:
		return "cancel"
	}
	return "none"
}

// EvictionDecision is the outcome of evaluating one pod.
type EvictionDecision struct {
	Pod    PodKey         // the pod evaluated
	Action EvictionAction // what happens to it
	// At is when the pod is deleted (for EvictionSchedule, EvictionKept and EvictionNow).
	At time.Time
}

type scheduledEviction struct {
	created, at time.Time
}

// Evictor is the taint-eviction controller as a value: it evaluates a pod's
// tolerations against its node's NoExecute taints and keeps the scheduled
// deletions. Time is an argument; it is not safe for concurrent use. The zero
// value is ready to use (a nil *Evictor decides nothing and keeps nothing).
type Evictor struct {
	scheduled map[PodKey]scheduledEviction
	next      time.Time // earliest deletion time, valid unless dirty
	any       bool      // whether next holds a time
	dirty     bool
}

// NewEvictor returns an Evictor with nothing scheduled.
func NewEvictor() *Evictor { return &Evictor{scheduled: map[PodKey]scheduledEviction{}} }

// Evaluate decides what happens to pod, with tolerations tols, on a node that
// now has taints. It runs each time the node's NoExecute taints or the pod's
// tolerations change. A deletion already scheduled while the pod stays
// tolerated for a finite time is kept unchanged, even if tolerationSeconds changed.
func (e *Evictor) Evaluate(now time.Time, pod PodKey, tols []v1.Toleration, taints []v1.Taint) EvictionDecision {
	if e == nil {
		return EvictionDecision{Pod: pod}
	}
	if e.scheduled == nil {
		e.scheduled = map[PodKey]scheduledEviction{}
	}
	e.dirty = true
	old, had := e.scheduled[pod]
	cancel := func() EvictionDecision {
		if had {
			delete(e.scheduled, pod)
			return EvictionDecision{Pod: pod, Action: EvictionCancel}
		}
		return EvictionDecision{Pod: pod}
	}
	ok, d := TolerationTime(tols, taints)
	if !ok {
		delete(e.scheduled, pod)
		return EvictionDecision{Pod: pod, Action: EvictionNow, At: now}
	}
	if d < 0 {
		return cancel()
	}
	trigger := addClamped(now, d)
	start := now
	if had {
		start = old.created
		if addClamped(start, d).Before(trigger) {
			return EvictionDecision{Pod: pod, Action: EvictionKept, At: old.at}
		}
	}
	if d == 0 {
		delete(e.scheduled, pod)
		return EvictionDecision{Pod: pod, Action: EvictionNow, At: now}
	}
	e.scheduled[pod] = scheduledEviction{created: start, at: trigger}
	return EvictionDecision{Pod: pod, Action: EvictionSchedule, At: trigger}
}

// Forget drops any scheduled deletion of pod (the pod is gone).
func (e *Evictor) Forget(pod PodKey) {
	if e == nil {
		return
	}
	if _, ok := e.scheduled[pod]; ok {
		delete(e.scheduled, pod)
		e.dirty = true
	}
}

// Scheduled returns when pod is due for deletion, if it is.
func (e *Evictor) Scheduled(pod PodKey) (time.Time, bool) {
	if e == nil {
		return time.Time{}, false
	}
	s, ok := e.scheduled[pod]
	return s.at, ok
}

// Due removes and returns the pods whose deletion time is at or before now,
// in time order then by namespace and name.
func (e *Evictor) Due(now time.Time) []PodKey {
	if next, ok := e.Next(); !ok || next.After(now) {
		return nil
	}
	e.dirty = true
	var out []PodKey
	for k, s := range e.scheduled {
		if !s.at.After(now) {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := e.scheduled[out[i]].at, e.scheduled[out[j]].at
		if !a.Equal(b) {
			return a.Before(b)
		}
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	for _, k := range out {
		delete(e.scheduled, k)
	}
	return out
}

// Next returns the earliest scheduled deletion time, if any.
func (e *Evictor) Next() (time.Time, bool) {
	if e == nil {
		return time.Time{}, false
	}
	if !e.dirty {
		return e.next, e.any
	}
	var t time.Time
	ok := false
	for _, s := range e.scheduled {
		if !ok || s.at.Before(t) {
			t, ok = s.at, true
		}
	}
	e.next, e.any, e.dirty = t, ok, false
	return t, ok
}

func addClamped(t time.Time, d time.Duration) time.Time {
	return t.Add(d) // time.Add saturates
}
