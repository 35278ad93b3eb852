package podphase

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// TransitionError reports a phase change the kubelet never makes.
type TransitionError struct {
	// From is the current phase and To the refused one.
	From, To v1.PodPhase
}

// Error implements error.
func (e *TransitionError) Error() string {
	if e == nil {
		return ErrIllegalTransition.Error()
	}
	return fmt.Sprintf("%v from %q to %q", ErrIllegalTransition, e.From, e.To)
}

// Unwrap returns [ErrIllegalTransition].
func (e *TransitionError) Unwrap() error { return ErrIllegalTransition }

// IsTerminal reports whether p is Succeeded or Failed.
func IsTerminal(p v1.PodPhase) bool {
	return p == v1.PodSucceeded || p == v1.PodFailed
}

// known reports whether p is one of the four phases the kubelet writes.
func known(p v1.PodPhase) bool {
	switch p {
	case v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed:
		return true
	}
	return false
}

// LegalTransition reports whether the kubelet can move a pod's phase from
// from to to (spec/podphase.md sections 3.4, 5 and 6):
//
//   - staying in the same phase is always legal;
//   - a terminal phase (Succeeded, Failed) never changes;
//   - the kubelet writes only Pending, Running, Succeeded and Failed, so no
//     move leads to Unknown, to "" or to a value the API does not define;
//   - from "" (a new pod), Unknown or an undefined value, any of the four
//     is legal (TerminatePod turns Unknown into Failed; a sync recomputes);
//   - Pending and Running may move both ways: Running goes back to Pending
//     when the sandbox is recreated and sidecars start again, when
//     containers wait again or lose their status, and during an in-place
//     restart of all containers (kubernetes#116429, KEP-5532); every
//     Pending of [Options.Explain] names one of these causes;
//   - Pending and Running may move to Succeeded or Failed.
func LegalTransition(from, to v1.PodPhase) bool {
	switch {
	case from == to:
		return true
	case IsTerminal(from):
		return false
	case !known(to):
		return false
	}
	return true
}

// CheckTransition returns nil when [LegalTransition] allows the move, and a
// [*TransitionError] otherwise.
func CheckTransition(from, to v1.PodPhase) error {
	if LegalTransition(from, to) {
		return nil
	}
	return &TransitionError{From: from, To: to}
}

// Guard returns the phase to write when a pod in phase current is computed
// to be in next: next when the move is legal, and current with a
// [*TransitionError] when it is not. It is the kubelet's final guard ("Pod
// attempted illegal phase transition") made general.
func Guard(current, next v1.PodPhase) (v1.PodPhase, error) {
	if err := CheckTransition(current, next); err != nil {
		return current, err
	}
	return next, nil
}

// TerminatedPhase returns the phase the kubelet's status manager writes
// when the pod worker has finished a pod (TerminatePod, spec/podphase.md
// section 5): Succeeded and Failed are kept; for a pod that is not static,
// any other value (Pending, Running, Unknown or one the API does not
// define) becomes Failed. A static pod keeps its phase.
func TerminatedPhase(p v1.PodPhase, static bool) v1.PodPhase {
	if IsTerminal(p) || static {
		return p
	}
	return v1.PodFailed
}
