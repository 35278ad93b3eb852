package cri

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// probePod is a pod whose container "app" has exec startup, readiness and
// liveness probes with commands of their own, the readiness one with an
// env reference the kubelet expands.
func probePod(clauses string) *v1.Pod {
	beh := map[string]string{}
	if clauses != "" {
		beh["app"] = clauses
	}
	p := pod("p", beh)
	c := &p.Spec.Containers[0]
	c.Env = []v1.EnvVar{{Name: "WHAT", Value: "ready"}}
	c.StartupProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check", "started"}}}, TimeoutSeconds: 1}
	c.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check", "$(WHAT)"}}}, TimeoutSeconds: 1}
	c.LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check", "live"}}}, TimeoutSeconds: 1}
	return p
}

var probeCmds = map[string][]string{
	"startup":   {"check", "started"},
	"readiness": {"check", "ready"}, // expanded, as the kubelet sends it
	"liveness":  {"check", "live"},
}

// TestProbes checks the probe clauses: an exec probe's answer by the
// container's age since it started.
func TestProbes(t *testing.T) {
	tests := []struct {
		clause string
		probe  string
		age    time.Duration
		want   string // "success", "fail" or "error"
		why    string
	}{
		{"", "readiness", time.Minute, "success", "no behaviour: probes pass"},
		{"readiness fail 0s-10s", "readiness", 5 * time.Second, "fail", "inside the window: exit 1, output \"probe failed\""},
		{"readiness fail 0s-10s", "readiness", 10 * time.Second, "success", "the window's end is excluded: success outside every window"},
		{"readiness fail 0s-10s", "liveness", 5 * time.Second, "success", "a window is for its own probe only (told apart by command)"},
		{"liveness error 5s-", "liveness", time.Hour, "error", "an open-ended error window: a gRPC error"},
		{"liveness error 5s-", "liveness", 4 * time.Second, "success", "before the window"},
		{"startup warning 0s-", "startup", time.Second, "success", "warning is success for exec probes (they have no warning)"},
		{"startup fail 0s-30s", "startup", time.Second, "fail", "startup probe by its command"},
		{"readiness fail 0s-20s; readiness success 0s-", "readiness", time.Second, "fail", "the first window holding the age wins"},
		{"readiness success 0s-5s; readiness fail 0s-", "readiness", 6 * time.Second, "fail", "later windows count once the first ended"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			f := newFixture(t, nil)
			p := probePod(tc.clause)
			id := f.start(p, f.sandbox(p), "app")
			f.clk.Step(tc.age)
			resp, err := f.rt.ExecSync(context.Background(), &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: probeCmds[tc.probe], Timeout: 1})
			got := "success"
			switch {
			case err != nil:
				got = "error"
				if s := status.Convert(err); s.Code() != codes.Unknown || s.Message() != ProbeErrorMessage {
					t.Errorf("error %v, want code Unknown %q", err, ProbeErrorMessage)
				}
			case resp.ExitCode == 1:
				got = "fail"
				if string(resp.Stdout) != ProbeFailedOutput {
					t.Errorf("stdout %q, want %q", resp.Stdout, ProbeFailedOutput)
				}
			case resp.ExitCode != 0:
				t.Fatalf("exit code %d", resp.ExitCode)
			}
			if got != tc.want {
				t.Errorf("%s at %v: %s, want %s", tc.probe, tc.age, got, tc.want)
			}
		})
	}
}

// TestExecNotRunning checks an exec in an exited container: containerd's
// error.
func TestExecNotRunning(t *testing.T) {
	f := newFixture(t, nil)
	p := probePod("run 1s exit 0")
	id := f.start(p, f.sandbox(p), "app")
	f.clk.Step(time.Second)
	_, err := f.rt.ExecSync(context.Background(), &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: probeCmds["readiness"], Timeout: 1})
	const want = "rpc error: code = Unknown desc = failed to exec in container: container is in CONTAINER_EXITED state"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// hookPod is a pod whose container "app" has exec postStart and preStop
// hooks; same makes them the same command.
func hookPod(clauses string, same bool) *v1.Pod {
	p := pod("p", map[string]string{"app": clauses})
	pre := []string{"pre"}
	if same {
		pre = []string{"post"}
	}
	p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{
		PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"post"}}},
		PreStop:   &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: pre}},
	}
	return p
}

// TestHooks checks the poststart and prestop clauses: an exec hook (the
// kubelet runs them through ExecSync with timeout 0) takes its duration,
// then exits 0, or 1 when it fails, and ends with 137 when the container
// exits first.
func TestHooks(t *testing.T) {
	tests := []struct {
		clause string
		same   bool          // postStart and preStop have one command
		hook   string        // the hook run, in order: "post" or "pre"
		before []string      // hooks run (and done) before it
		kill   time.Duration // the container exits this long after the hook starts (0: not)
		takes  time.Duration
		code   int32
		why    string
	}{
		{clause: "poststart 5s", hook: "post", takes: 5 * time.Second, code: 0, why: "poststart <d>: the hook takes d and succeeds"},
		{clause: "poststart 2s fail", hook: "post", takes: 2 * time.Second, code: 1, why: "poststart <d> fail: non-zero exit after d"},
		{clause: "prestop 3s fail", hook: "pre", takes: 3 * time.Second, code: 1, why: "prestop <d> fail"},
		{clause: "run forever", hook: "pre", takes: 0, code: 0, why: "no hook clause: the hook succeeds at once"},
		{clause: "prestop 10s; run 4s exit 0", hook: "pre", takes: 4 * time.Second, code: 137,
			why: "a hook does not outlive its container: the container exits first, the hook ends with it"},
		{clause: "poststart 1s; prestop 7s", same: true, hook: "post", takes: time.Second, code: 0,
			why: "same command for both hooks: the first hook of an instance is its postStart"},
		{clause: "poststart 1s; prestop 7s fail", same: true, hook: "post", before: []string{"post"}, takes: 7 * time.Second, code: 1,
			why: "same command for both hooks: a later hook is the preStop"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			f := newFixture(t, nil)
			p := hookPod(tc.clause, tc.same)
			id := f.start(p, f.sandbox(p), "app")
			exec := func(cmd string) <-chan error {
				return async(func() error {
					resp, err := f.rt.ExecSync(context.Background(), &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{cmd}})
					if err == nil && resp.ExitCode != tc.code {
						return status.Errorf(codes.Internal, "exit code %d, want %d", resp.ExitCode, tc.code)
					}
					return err
				})
			}
			for _, b := range tc.before {
				done := exec(b)
				f.waiters(1)
				f.clk.Step(time.Second)
				<-done // its own exit code is not this case's
			}
			start := f.clk.Now()
			done := exec(tc.hook)
			if tc.takes > 0 {
				f.waiters(1)
				f.clk.Step(tc.takes - time.Millisecond)
				f.waiters(1)
				pending(t, done, "the hook")
				f.clk.Step(time.Millisecond)
			}
			if err := result(t, done, "the hook"); err != nil {
				t.Fatal(err)
			}
			if got := f.clk.Since(start); got != tc.takes {
				t.Errorf("the hook took %v, want %v", got, tc.takes)
			}
		})
	}
}

// TestHookKilled checks a preStop hook cut short by StopContainer's kill:
// the hook ends when the container exits.
func TestHookKilled(t *testing.T) {
	f := newFixture(t, nil)
	p := hookPod("prestop 60s; ignore-sigterm 60s", false)
	id := f.start(p, f.sandbox(p), "app")
	hook := async(func() error {
		resp, err := f.rt.ExecSync(context.Background(), &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"pre"}})
		if err == nil && resp.ExitCode != 137 {
			return status.Errorf(codes.Internal, "exit code %d, want 137", resp.ExitCode)
		}
		return err
	})
	f.waiters(1)
	stop := async(func() error {
		_, err := f.rt.StopContainer(context.Background(), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 2})
		return err
	})
	f.waiters(2)
	f.clk.Step(2 * time.Second)
	if err := result(t, stop, "StopContainer"); err != nil {
		t.Fatal(err)
	}
	if err := result(t, hook, "the hook"); err != nil {
		t.Fatal(err)
	}
	if st := f.status(id); st.ExitCode != 137 {
		t.Errorf("exit %d, want 137 (the grace ran out)", st.ExitCode)
	}
}
