package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// Each signal writes the heap profile of that moment; an unwritable path
// is reported, and the profiles stop with the function returned.
func TestHeapProfileOnSignal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.pprof")
	sig := make(chan os.Signal)
	reports := make(chan error)
	stop := serveHeapProfiles(sig, path, func(err error) { reports <- err })
	defer stop()
	sig <- syscall.SIGUSR1
	if err := <-reports; err != nil {
		t.Fatalf("writing the heap profile: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("%s is not a gzip-compressed profile: % x", path, b[:min(len(b), 8)])
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	sig <- syscall.SIGUSR1
	if err := <-reports; err == nil {
		t.Fatalf("writing the heap profile over a directory: no error")
	}
}

func TestContentTypeRefused(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"--kubeconfig", kubeconfig, "--kube-api-content-type", "application/yaml"}, &bytes.Buffer{})
	if err == nil || !strings.HasPrefix(err.Error(), `--kube-api-content-type "application/yaml": want application/vnd.kubernetes.protobuf or application/json`) {
		t.Fatalf("run with a YAML content type: %v, want a --kube-api-content-type error", err)
	}
}
