package controlplane

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProcessStop: Stop ends a process that heeds SIGTERM with SIGTERM, and
// one that ignores it with SIGKILL once the grace has passed; either way it
// returns once the process has exited, and may be called again.
func TestProcessStop(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	cases := []struct {
		name, script string
		grace        time.Duration
		want         string
	}{
		{"heeds SIGTERM", `echo started >"$1"; exec sleep 60`, time.Minute, "signal: terminated"},
		{"ignores SIGTERM", `trap "" TERM; echo started >"$1"; exec sleep 60`, 50 * time.Millisecond, "signal: killed"},
		{"no grace", `echo started >"$1"; exec sleep 60`, 0, "signal: killed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			// The script says it is past its set-up through a FIFO, whose
			// read blocks until then.
			fifo := filepath.Join(dir, "started")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := StartProcess("p", filepath.Join(dir, "p.log"), sh, "-c", c.script, "sh", fifo)
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(fifo); err != nil || string(b) != "started\n" {
				t.Fatalf("the script's start: %q, %v", b, err)
			}
			select {
			case <-p.Done():
				t.Fatalf("exited before Stop: %v", p.Err())
			default:
			}
			if p.Err() != nil {
				t.Fatalf("Err before exit = %v, want nil", p.Err())
			}
			p.Stop(c.grace)
			select {
			case <-p.Done():
			default:
				t.Fatal("Stop returned before the process exited")
			}
			if err := p.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Err = %v, want %q", err, c.want)
			}
			p.Stop(c.grace) // again: returns at once
		})
	}
}

// TestStartProcessFails: a program that cannot start is an error naming it,
// and no process is left.
func TestStartProcessFails(t *testing.T) {
	_, err := StartProcess("missing", filepath.Join(t.TempDir(), "m.log"), filepath.Join(t.TempDir(), "no-such-binary"))
	if err == nil || !strings.Contains(err.Error(), "starting missing") {
		t.Fatalf("err = %v, want one naming the process", err)
	}
	if _, err := StartProcess("p", filepath.Join(t.TempDir(), "no-dir", "p.log"), "true"); err == nil {
		t.Fatal("a log that cannot be created is not an error")
	}
}
