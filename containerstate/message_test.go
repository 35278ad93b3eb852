package containerstate

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestTerminationMessage traces section 7.
func TestTerminationMessage(t *testing.T) {
	long := strings.Repeat("x", 5000) + "END"
	var logs strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&logs, "line %d\n", i)
	}
	fallback := v1.TerminationMessageFallbackToLogsOnError
	tests := []struct {
		rule   string
		reason string
		in     TerminationInput
		want   string
	}{
		{rule: "7", reason: "the file's content, appended to the runtime message with \": \"",
			in: TerminationInput{RuntimeMessage: "exit", Path: "/dev/termination-log", PathMounted: true, File: []byte("bye")}, want: "exit: bye"},
		{rule: "7", reason: "no separator when the runtime message is empty",
			in: TerminationInput{Path: "/p", PathMounted: true, File: []byte("bye")}, want: "bye"},
		{rule: "7", reason: "only the last 4096 bytes of the file",
			in: TerminationInput{Path: "/p", PathMounted: true, File: []byte(long)}, want: long[len(long)-4096:]},
		{rule: "7", reason: "a read error other than a missing file says so, and the logs are not read",
			in:   TerminationInput{Path: "/p", PathMounted: true, FileErr: errors.New("permission denied"), Policy: fallback, ExitCode: 1, Logs: []byte("log")},
			want: "Error on reading termination log /p: permission denied"},
		{rule: "7", reason: "fallback: failed, file missing: the logs",
			in:   TerminationInput{Path: "/p", PathMounted: true, FileErr: fmt.Errorf("open: %w", fs.ErrNotExist), Policy: fallback, ExitCode: 1, Logs: []byte("panic: boom\n")},
			want: "panic: boom\n"},
		{rule: "7", reason: "fallback: an empty file reads the logs",
			in: TerminationInput{Path: "/p", PathMounted: true, Policy: fallback, ExitCode: 2, Logs: []byte("oops\n")}, want: "oops\n"},
		{rule: "7", reason: "fallback: the path not among the mounts reads the logs",
			in: TerminationInput{Path: "/p", File: []byte("ignored"), Policy: fallback, ExitCode: 2, Logs: []byte("oops\n")}, want: "oops\n"},
		{rule: "7", reason: "fallback: no path reads the logs",
			in: TerminationInput{Policy: fallback, ExitCode: 2, Logs: []byte("oops\n")}, want: "oops\n"},
		{rule: "7", reason: "fallback with an empty log: the runtime message alone",
			in: TerminationInput{Policy: fallback, ExitCode: 1, RuntimeMessage: "exit 1"}, want: "exit 1"},
		{rule: "7", reason: "fallback only for a failure: exit 0 keeps the empty message",
			in: TerminationInput{Policy: fallback, ExitCode: 0, Logs: []byte("fine\n")}, want: ""},
		{rule: "7", reason: "fallback skipped for ContainerCannotRun",
			in: TerminationInput{Policy: fallback, ExitCode: 1, Reason: ReasonContainerCannotRun, RuntimeMessage: "cannot run", Logs: []byte("x\n")}, want: "cannot run"},
		{rule: "7", reason: "policy File never reads the logs",
			in: TerminationInput{Policy: v1.TerminationMessageReadFile, ExitCode: 1, Logs: []byte("x\n")}, want: ""},
		{rule: "7", reason: "the log fallback keeps the last 80 lines",
			in:   TerminationInput{Policy: fallback, ExitCode: 1, Logs: []byte(logs.String())},
			want: logs.String()[strings.Index(logs.String(), "line 21\n"):]},
		{rule: "7", reason: "and of them the last 2048 bytes",
			in:   TerminationInput{Policy: fallback, ExitCode: 1, Logs: []byte(strings.Repeat("y", 3000))},
			want: strings.Repeat("y", 2048)},
	}
	for _, tt := range tests {
		if got := TerminationMessage(tt.in); got != tt.want {
			t.Errorf("rule %s: %s: got %q, want %q", tt.rule, tt.reason, got, tt.want)
		}
	}
}

func TestTerminationMessageLimit(t *testing.T) {
	for _, tt := range []struct{ n, want int }{{0, 12288}, {1, 12288}, {3, 4096}, {5, 2457}} {
		if got := TerminationMessageLimit(tt.n); got != tt.want {
			t.Errorf("rule 7: limit for %d containers: %d, want %d", tt.n, got, tt.want)
		}
	}
}
