package cri

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"
	utilexec "k8s.io/utils/exec"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

// TestRemote checks what the kubelet gets through its CRI client
// (k8s.io/cri-client) from the runtime served over gRPC, and that the
// messages the kubelet builds from it are the ones nodestate records for
// simruntime's observations.
func TestRemote(t *testing.T) {
	f := newFixture(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	served := async(func() error { return f.rt.Serve(ctx, l) })
	ep := "unix://" + sock
	rs, err := remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(ep).WithConnectionTimeout(10 * time.Second).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	is, err := remote.NewRemoteImageServiceBuilder().WithEndpoint(ep).WithConnectionTimeout(10 * time.Second).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = rs.Close(ctx)
		_ = is.Close(ctx)
		cancel()
		if err := result(t, served, "Serve"); err != nil {
			t.Error(err)
		}
	}()

	v, err := rs.Version(ctx, "v1")
	if err != nil || v.RuntimeName+"://" != simruntime.Scheme {
		t.Errorf("version %+v, %v: want runtime name %q", v, err, simruntime.Scheme)
	}

	t.Run("pull failure message", func(t *testing.T) {
		p := pod("pullfail", map[string]string{"app": "pull fail always"})
		cfg := sandboxConfig(p)
		f.pods[string(p.UID)] = p
		if _, err := rs.RunPodSandbox(ctx, cfg, ""); err != nil {
			t.Fatal(err)
		}
		_, err := is.PullImage(ctx, &runtimeapi.ImageSpec{Image: "busybox:1.36"}, nil, cfg)
		if err == nil {
			t.Fatal("pull succeeded")
		}
		// The kubelet's image manager records Failed "Failed to pull image
		// %q: %v" with the spec's image and the client's error.
		kubelet := fmt.Sprintf("Failed to pull image %q: %v", "busybox:1.36", err)
		want := podlifecycle.PullFailedMessage("busybox:1.36", simPullMessage(t, "busybox:1.36"))
		if kubelet != want {
			t.Errorf("the kubelet's message\n got %s\nwant %s (nodestate's)", kubelet, want)
		}
	})

	t.Run("exec probe results", func(t *testing.T) {
		p := probePod("readiness fail 0s-; liveness error 0s-")
		sb := f.sandbox(p)
		id := f.start(p, sb, "app")
		out, _, err := rs.ExecSync(ctx, id, probeCmds["readiness"], time.Second)
		var exit utilexec.CodeExitError
		if !errors.As(err, &exit) || exit.Code != 1 || string(out) != ProbeFailedOutput {
			t.Errorf("failing probe: %q, %v; want exit 1 with output %q", out, err, ProbeFailedOutput)
		}
		// The prober records Unhealthy "<Probe> probe failed: <output>".
		if got, want := "Readiness probe failed: "+string(out), podlifecycle.ProbeFailedMessage(podlifecycle.Readiness, simProbeMessage(t, "readiness fail 0s-", podlifecycle.Readiness)); got != want {
			t.Errorf("Unhealthy message %q, nodestate's %q", got, want)
		}
		_, _, err = rs.ExecSync(ctx, id, probeCmds["liveness"], time.Second)
		if err == nil || err.Error() != "rpc error: code = Unknown desc = "+ProbeErrorMessage {
			t.Errorf("erroring probe: %v, want the gRPC error %q", err, ProbeErrorMessage)
		}
		if out, _, err := rs.ExecSync(ctx, id, probeCmds["startup"], time.Second); err != nil || len(out) != 0 {
			t.Errorf("passing probe: %q, %v", out, err)
		}
	})

	t.Run("stop over gRPC", func(t *testing.T) {
		p := pod("stop", map[string]string{"app": "ignore-sigterm 10s"})
		id := f.start(p, f.sandbox(p), "app")
		done := async(func() error { return rs.StopContainer(ctx, id, 30) })
		f.waiters(1)
		f.clk.Step(10 * time.Second)
		if err := result(t, done, "StopContainer"); err != nil {
			t.Fatal(err)
		}
		st, err := rs.ContainerStatus(ctx, id, false)
		if err != nil || st.Status.ExitCode != 143 {
			t.Errorf("status %+v, %v: want exit 143", st.GetStatus(), err)
		}
	})
}

// simPullMessage is the message simruntime gives a failed pull of image.
func simPullMessage(t *testing.T, image string) string {
	t.Helper()
	p := pod("sim", map[string]string{"app": "pull fail always"})
	rt, err := simruntime.NewForPod(simruntime.DefaultOptions(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Do(t0, []podlifecycle.Action{{Kind: podlifecycle.PullImage, Container: "app", Image: image}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range rt.Due(t0) {
		if o.Kind == podlifecycle.ImagePullFailed {
			return o.Message
		}
	}
	t.Fatal("simruntime reported no failed pull")
	return ""
}

// simProbeMessage is the message simruntime gives a probe of a container
// with the given clauses, right after it started.
func simProbeMessage(t *testing.T, clauses string, probe podlifecycle.Probe) string {
	t.Helper()
	p := pod("sim", map[string]string{"app": clauses})
	rt, err := simruntime.NewForPod(simruntime.DefaultOptions(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Do(t0, []podlifecycle.Action{{Kind: podlifecycle.StartContainer, Container: "app", Image: "busybox:1.36"}}); err != nil {
		t.Fatal(err)
	}
	var id string
	for _, o := range rt.Due(t0) {
		if o.Kind == podlifecycle.ContainerStarted {
			id = o.ContainerID
		}
	}
	if err := rt.Do(t0.Add(time.Second), []podlifecycle.Action{{Kind: podlifecycle.RunProbe, Container: "app", ContainerID: id, Probe: probe}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range rt.Due(t0.Add(time.Second)) {
		if o.Kind == podlifecycle.ProbeResult {
			return o.Message
		}
	}
	t.Fatal("simruntime reported no probe result")
	return ""
}
