package containerstate

import (
	"fmt"
	"testing"
)

// TestStateNames checks the names of the API states, the CRI runtime states
// and the probe results, and that a value outside each set prints as its
// number instead of being looked up.
func TestStateNames(t *testing.T) {
	tests := []struct {
		reason string
		value  fmt.Stringer
		want   string
	}{
		{reason: "no state", value: NoState, want: "NoState"},
		{reason: "waiting", value: Waiting, want: "Waiting"},
		{reason: "running", value: Running, want: "Running"},
		{reason: "terminated", value: Terminated, want: "Terminated"},
		{reason: "the State after Terminated is undefined", value: Terminated + 1, want: "State(4)"},
		{reason: "a large undefined State", value: State(255), want: "State(255)"},

		{reason: "the CRI created state", value: RuntimeCreated, want: "created"},
		{reason: "the CRI running state", value: RuntimeRunning, want: "running"},
		{reason: "the CRI exited state", value: RuntimeExited, want: "exited"},
		{reason: "the CRI unknown state", value: RuntimeUnknown, want: "unknown"},
		{reason: "the zero RuntimeState is undefined", value: RuntimeState(0), want: "RuntimeState(0)"},
		{reason: "the RuntimeState after unknown is undefined", value: RuntimeUnknown + 1, want: "RuntimeState(5)"},

		{reason: "no probe result yet", value: ProbeNone, want: "none"},
		{reason: "a probe that passed", value: ProbeSuccess, want: "success"},
		{reason: "a probe that failed", value: ProbeFailure, want: "failure"},
		{reason: "the ProbeResult after failure is undefined", value: ProbeFailure + 1, want: "ProbeResult(3)"},
	}
	for _, tt := range tests {
		if got := safeString(tt.value); got != tt.want {
			t.Errorf("%s: String() = %q, want %q", tt.reason, got, tt.want)
		}
	}
}

// safeString returns s.String(), or the panic it raised, so that a String
// method that panics fails its row instead of the whole test.
func safeString(s fmt.Stringer) (str string) {
	defer func() {
		if r := recover(); r != nil {
			str = fmt.Sprintf("panic: %v", r)
		}
	}()
	return s.String()
}
