package cri

import (
	"context"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

// Messages of the exec results, as simruntime words them.
const (
	// ProbeFailedOutput is the output of an exec probe that fails: the
	// kubelet's Unhealthy event says "<Probe> probe failed: probe failed".
	ProbeFailedOutput = "probe failed"
	// ProbeErrorMessage is the message of the gRPC error an exec probe
	// that errors gets (code Unknown).
	ProbeErrorMessage = "probe could not run"
)

// execKind is what an ExecSync is for.
type execKind int

const (
	execOther execKind = iota
	execProbe
	execPostStart
	execPreStop
)

// ExecSync runs nothing: it answers an exec probe or hook from the
// container's behaviour. An exec whose timeout is 0 is a lifecycle hook
// (the kubelet runs hooks without a timeout and probes with their
// timeoutSeconds, at least 1). A probe is told from the others by its
// command (after the kubelet's static $(VAR) expansion), and its outcome
// is the first window of the behaviour that holds the container's age:
// success (and warning, which exec probes do not have) exit 0; fail exit 1
// with output "probe failed"; error a gRPC error, code Unknown, "probe
// could not run". A hook takes its duration, then exits 0, or 1 when it
// fails; when the container exits first, the hook ends with it, exit 137.
// An exec in a container that is not running fails as containerd's does.
func (r *Runtime) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	r.mu.Lock()
	c := r.containers[req.GetContainerId()]
	if c == nil {
		r.mu.Unlock()
		return nil, notFound("container", req.GetContainerId())
	}
	now := r.clock.Now()
	if st := c.state(now); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		r.mu.Unlock()
		return nil, status.Errorf(codes.Unknown, "failed to exec in container: container is in %s state", st)
	}
	kind, probe := c.classify(req.GetCmd(), req.GetTimeout())
	if req.GetTimeout() == 0 {
		c.hooks++
	}
	age := now.Sub(c.started)
	b := c.b
	r.mu.Unlock()

	switch kind {
	case execProbe:
		switch outcome(&b, probe, age) {
		case podlifecycle.ProbeFailure:
			return &runtimeapi.ExecSyncResponse{Stdout: []byte(ProbeFailedOutput), ExitCode: 1}, nil
		case podlifecycle.ProbeError:
			return nil, status.Error(codes.Unknown, ProbeErrorMessage)
		}
	case execPostStart, execPreStop:
		h := b.PostStart
		if kind == execPreStop {
			h = b.PreStop
		}
		ended, err := r.waitFor(ctx, c, now.Add(h.Duration))
		switch {
		case err != nil:
			return nil, err
		case ended:
			return &runtimeapi.ExecSyncResponse{ExitCode: 137}, nil
		case h.Fail:
			return &runtimeapi.ExecSyncResponse{ExitCode: 1}, nil
		}
	}
	return &runtimeapi.ExecSyncResponse{}, nil
}

// classify tells what an exec is for. r.mu must be held.
func (c *container) classify(cmd []string, timeout int64) (execKind, podlifecycle.Probe) {
	if timeout == 0 {
		return c.classifyHook(cmd)
	}
	if c.spec != nil {
		for _, p := range [...]struct {
			probe podlifecycle.Probe
			spec  *v1.Probe
		}{{podlifecycle.Startup, c.spec.StartupProbe}, {podlifecycle.Readiness, c.spec.ReadinessProbe}, {podlifecycle.Liveness, c.spec.LivenessProbe}} {
			if p.spec != nil && p.spec.Exec != nil && slices.Equal(expandStatic(p.spec.Exec.Command, c.spec.Env), cmd) {
				return execProbe, p.probe
			}
		}
		return execOther, 0
	}
	// No spec: the probe is the one the behaviour has windows for, if
	// there is only one.
	probes := map[podlifecycle.Probe]bool{}
	for _, w := range c.b.Probes {
		probes[w.Probe] = true
	}
	if len(probes) == 1 {
		for p := range probes {
			return execProbe, p
		}
	}
	return execOther, 0
}

// classifyHook tells a postStart hook from a preStop one: by command, and
// when both have the same (or the spec is not known), the first hook of an
// instance is its postStart.
func (c *container) classifyHook(cmd []string) (execKind, podlifecycle.Probe) {
	if c.spec == nil {
		if c.hooks == 0 {
			return execPostStart, 0
		}
		return execPreStop, 0
	}
	var post, pre bool
	if lc := c.spec.Lifecycle; lc != nil {
		post = lc.PostStart != nil && lc.PostStart.Exec != nil && slices.Equal(lc.PostStart.Exec.Command, cmd)
		pre = lc.PreStop != nil && lc.PreStop.Exec != nil && slices.Equal(lc.PreStop.Exec.Command, cmd)
	}
	switch {
	case post && (!pre || c.hooks == 0):
		return execPostStart, 0
	case pre:
		return execPreStop, 0
	}
	return execOther, 0
}

// outcome is what probe p reports at age d of an instance of b: the first
// window that holds d, else success.
func outcome(b *simruntime.Behaviour, p podlifecycle.Probe, d time.Duration) podlifecycle.ProbeOutcome {
	for _, w := range b.Probes {
		if w.Probe == p && d >= w.From && (w.To == 0 || d < w.To) {
			return w.Outcome
		}
	}
	return podlifecycle.ProbeSuccess
}

// expandStatic expands the $(VAR) references of a probe command with the
// container's literal env values, as the kubelet does before it runs an
// exec probe (values from sources are not known to it there either).
func expandStatic(cmd []string, env []v1.EnvVar) []string {
	vars := make(map[string]string, len(env))
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	mapping := expansion.MappingFuncFor(vars)
	out := make([]string, len(cmd))
	for i, s := range cmd {
		out[i] = expansion.Expand(s, mapping)
	}
	return out
}
