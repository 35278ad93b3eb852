package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The profile is written even when the run ends in an error, so a failed
// run can still be looked at.
func TestCPUProfileWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	err := run(context.Background(), []string{"--cpu-profile", path}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--kubeconfig is required") {
		t.Fatalf("run without --kubeconfig: %v, want the missing kubeconfig", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("%s is not a gzip-compressed profile: % x", path, b[:min(len(b), 8)])
	}
}

func TestCPUProfileUnwritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "cpu.pprof")
	err := run(context.Background(), []string{"--cpu-profile", path, "--kubeconfig", "k"}, &bytes.Buffer{})
	if err == nil || !strings.HasPrefix(err.Error(), "--cpu-profile: ") {
		t.Fatalf("run with an unwritable profile: %v, want a --cpu-profile error", err)
	}
}
