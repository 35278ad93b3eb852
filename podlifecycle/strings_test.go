package podlifecycle

import "testing"

// TestEnumStrings: every kind, hook, kill reason and worker state prints
// its constant's name, and a value outside them (the zero kind, the first
// past the last) its type and number, never a panic.
func TestEnumStrings(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{ActionKind(0).String(), "ActionKind(0)"},
		{CreateSandbox.String(), "CreateSandbox"},
		{RunProbe.String(), "RunProbe"},
		{ActionKind(len(actionNames)).String(), "ActionKind(9)"},
		{ObservationKind(0).String(), "ObservationKind(0)"},
		{SandboxReady.String(), "SandboxReady"},
		{HookResult.String(), "HookResult"},
		{ObservationKind(len(observationNames)).String(), "ObservationKind(16)"},
		{PostStart.String(), "PostStart"},
		{PreStop.String(), "PreStop"},
		{Hook(9).String(), "Hook(9)"},
		{KillUnknown.String(), "Unknown"},
		{KillRestartAllContainers.String(), "RestartAllContainers"},
		{KillReason(len(killReasonNames)).String(), "KillReason(6)"},
		{Syncing.String(), "Syncing"},
		{Finished.String(), "Finished"},
		{WorkerState(len(stateNames)).String(), "WorkerState(4)"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
