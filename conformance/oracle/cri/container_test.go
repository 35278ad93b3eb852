package cri

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestRunExit checks the run clause and the defaults: when an instance
// exits by itself, with which code and reason, and the times it reports.
func TestRunExit(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	tests := []struct {
		clause string
		init   bool                       // the container is an init container
		policy *v1.ContainerRestartPolicy // its restartPolicy
		runs   time.Duration              // how long it runs; 0 for ever
		code   int32
		reason string
		why    string
	}{
		{clause: "run 3s exit 1", runs: 3 * time.Second, code: 1, reason: "Error",
			why: "run <d> exit <code>: exits d after it started, a non-zero code is reported as Error"},
		{clause: "run 2s exit 0", runs: 2 * time.Second, code: 0, reason: "Completed",
			why: "exit 0 is reported as Completed, as containerd does"},
		{clause: "run 0s exit 2", runs: 0, code: 2, reason: "Error",
			why: "run 0s exits at once (the instance is exited the moment it starts)"},
		{clause: "", why: "no behaviour: a regular container runs forever"},
		{clause: "run forever", why: "run forever is the default"},
		{clause: "", init: true, runs: time.Second, code: 0, reason: "Completed",
			why: "simruntime.DefaultBehaviour: a regular init container without a behaviour runs 1 s and exits 0"},
		{clause: "", init: true, policy: &always,
			why: "a sidecar (init container with restartPolicy Always) runs forever like a regular container"},
		{clause: "run 5s exit 3", init: true, runs: 5 * time.Second, code: 3, reason: "Error",
			why: "an init container's own behaviour wins over the default"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			f := newFixture(t, nil)
			beh := map[string]string{}
			if tc.clause != "" {
				beh["app"] = tc.clause
			}
			p := pod("p", beh)
			if tc.init {
				p.Spec.InitContainers = []v1.Container{{Name: "app", Image: "busybox:1.36", RestartPolicy: tc.policy}}
				p.Spec.Containers[0].Name = "main"
			}
			sb := f.sandbox(p)
			id := f.start(p, sb, "app")
			st := f.status(id)
			if st.StartedAt != t0.UnixNano() || st.CreatedAt != t0.UnixNano() {
				t.Errorf("created %d started %d, want both %d", st.CreatedAt, st.StartedAt, t0.UnixNano())
			}
			if tc.runs == 0 && tc.reason == "" {
				f.clk.Step(1000 * time.Hour)
				if st := f.status(id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING || st.FinishedAt != 0 {
					t.Fatalf("after 1000h: %v finished %d, want running", st.State, st.FinishedAt)
				}
				return
			}
			if tc.runs > 0 {
				f.clk.Step(tc.runs - time.Nanosecond)
				if st := f.status(id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
					t.Fatalf("1ns before its exit: %v, want running", st.State)
				}
				f.clk.Step(time.Nanosecond)
			}
			st = f.status(id)
			if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != tc.code || st.Reason != tc.reason {
				t.Fatalf("got %v exit %d reason %q, want exited %d %q", st.State, st.ExitCode, st.Reason, tc.code, tc.reason)
			}
			if want := t0.Add(tc.runs).UnixNano(); st.FinishedAt != want {
				t.Errorf("finished %d, want %d", st.FinishedAt, want)
			}
			f.clk.Step(time.Hour)
			if got := f.status(id); got.FinishedAt != st.FinishedAt || got.ExitCode != st.ExitCode {
				t.Errorf("an exited container changed: %+v", got)
			}
		})
	}
}

// TestStop checks StopContainer against ignore-sigterm and the grace (the
// timeout the kubelet passes): when the container exits, with which code,
// and that the call returns only then.
func TestStop(t *testing.T) {
	tests := []struct {
		clause  string
		timeout int64
		at      time.Duration // when StopContainer is called, after the start
		exits   time.Duration // when the container exits, after the start
		code    int32
		why     string
	}{
		{clause: "", timeout: 30, exits: 0, code: 143,
			why: "a container that honours SIGTERM exits at once with 143 (kubemark's fake leaves 0)"},
		{clause: "ignore-sigterm 10s", timeout: 30, exits: 10 * time.Second, code: 143,
			why: "ignore-sigterm d shorter than the grace: it exits after d with 143"},
		{clause: "ignore-sigterm 60s", timeout: 5, exits: 5 * time.Second, code: 137,
			why: "ignore-sigterm d longer than the grace: SIGKILL at the grace, 137"},
		{clause: "ignore-sigterm 5s", timeout: 5, exits: 5 * time.Second, code: 137,
			why: "ignore-sigterm d equal to the grace: the grace runs out first, 137 (as simruntime: d < grace for 143)"},
		{clause: "ignore-sigterm 10s", timeout: 0, exits: 0, code: 137,
			why: "timeout 0: SIGKILL at once"},
		{clause: "run 3s exit 1; ignore-sigterm 60s", timeout: 30, at: time.Second, exits: 3 * time.Second, code: 1,
			why: "a container that exits by itself before the kill does so with its own code"},
		{clause: "run 20s exit 1; ignore-sigterm 5s", timeout: 30, at: time.Second, exits: 6 * time.Second, code: 143,
			why: "a kill that ends the container before its own exit wins"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			f := newFixture(t, nil)
			beh := map[string]string{}
			if tc.clause != "" {
				beh["app"] = tc.clause
			}
			p := pod("p", beh)
			id := f.start(p, f.sandbox(p), "app")
			f.clk.Step(tc.at)
			done := async(func() error {
				_, err := f.rt.StopContainer(context.Background(), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: tc.timeout})
				return err
			})
			if wait := tc.exits - tc.at; wait > 0 {
				f.waiters(1)
				pending(t, done, "StopContainer")
				f.clk.Step(wait - time.Millisecond)
				f.waiters(1)
				pending(t, done, "StopContainer")
				f.clk.Step(time.Millisecond)
			}
			if err := result(t, done, "StopContainer"); err != nil {
				t.Fatal(err)
			}
			st := f.status(id)
			if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != tc.code {
				t.Fatalf("got %v exit %d, want exited %d", st.State, st.ExitCode, tc.code)
			}
			if want := t0.Add(tc.exits).UnixNano(); st.FinishedAt != want {
				t.Errorf("finished %v after the start, want %v", time.Duration(st.FinishedAt-t0.UnixNano()), tc.exits)
			}
			// A second stop of an exited container does nothing.
			if _, err := f.rt.StopContainer(context.Background(), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 30}); err != nil {
				t.Fatal(err)
			}
			if got := f.status(id); got.ExitCode != tc.code || got.FinishedAt != st.FinishedAt {
				t.Errorf("a second stop changed the exit: %+v", got)
			}
		})
	}
}

// TestStopContext checks that a StopContainer waiting for a container that
// ignores SIGTERM returns when its context ends.
func TestStopContext(t *testing.T) {
	f := newFixture(t, nil)
	p := pod("p", map[string]string{"app": "ignore-sigterm 60s"})
	id := f.start(p, f.sandbox(p), "app")
	ctx, cancel := context.WithCancel(context.Background())
	done := async(func() error {
		_, err := f.rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 30})
		return err
	})
	f.waiters(1)
	cancel()
	if err := result(t, done, "StopContainer"); err == nil {
		t.Fatal("StopContainer returned no error after its context ended")
	}
}

// TestSandboxStop checks StopPodSandbox and RemovePodSandbox: what still
// runs is killed (137), the sandbox is not ready and reports no IP, and a
// removed sandbox takes its containers with it.
func TestSandboxStop(t *testing.T) {
	f := newFixture(t, nil)
	p := pod("p", map[string]string{"app": "ignore-sigterm 60s"})
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "done", Image: "busybox:1.36"})
	p.Annotations["sim.nodestate.io/done"] = "run 1s exit 0"
	sb := f.sandbox(p)
	app, done := f.start(p, sb, "app"), f.start(p, sb, "done")
	f.clk.Step(2 * time.Second)
	ctx := context.Background()
	if _, err := f.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	if st := f.status(app); st.ExitCode != 137 || st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.FinishedAt != t0.Add(2*time.Second).UnixNano() {
		t.Errorf("running container after the sandbox stopped: %v exit %d finished %d, want exited 137 at +2s", st.State, st.ExitCode, st.FinishedAt)
	}
	if st := f.status(done); st.ExitCode != 0 || st.FinishedAt != t0.Add(time.Second).UnixNano() {
		t.Errorf("exited container changed by the sandbox stop: exit %d finished %d", st.ExitCode, st.FinishedAt)
	}
	ss, err := f.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb})
	if err != nil {
		t.Fatal(err)
	}
	if ss.Status.State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY || ss.Status.Network.GetIp() != "" {
		t.Errorf("stopped sandbox: %v ip %q, want not ready without IP", ss.Status.State, ss.Status.Network.GetIp())
	}
	if _, err := f.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb,
		Config: &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app"}}}); err == nil {
		t.Error("CreateContainer in a stopped sandbox succeeded")
	}
	if _, err := f.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	lc, _ := f.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	ls, _ := f.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if len(lc.Containers) != 0 || len(ls.Items) != 0 {
		t.Errorf("after RemovePodSandbox: %d containers, %d sandboxes, want none", len(lc.Containers), len(ls.Items))
	}
	if _, err := f.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb}); err == nil {
		t.Error("status of a removed sandbox: no error")
	}
	if _, err := f.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Errorf("removing a removed sandbox: %v, want success", err)
	}
}

// TestListFilters checks the filters the kubelet's PLEG and GetPodStatus
// use: by sandbox, state, labels and ID.
func TestListFilters(t *testing.T) {
	f := newFixture(t, nil)
	a, b := pod("a", map[string]string{"app": "run 1s exit 0"}), pod("b", nil)
	sa, sbb := f.sandbox(a), f.sandbox(b)
	ca, cb := f.start(a, sa, "app"), f.start(b, sbb, "app")
	f.clk.Step(time.Second)
	exited := runtimeapi.ContainerState_CONTAINER_EXITED
	tests := []struct {
		filter *runtimeapi.ContainerFilter
		want   []string
		why    string
	}{
		{nil, []string{ca, cb}, "no filter: every container, oldest first"},
		{&runtimeapi.ContainerFilter{PodSandboxId: sbb}, []string{cb}, "by sandbox"},
		{&runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: exited}}, []string{ca}, "by state: a exited at +1s"},
		{&runtimeapi.ContainerFilter{LabelSelector: map[string]string{"io.kubernetes.pod.uid": "uid-a"}}, []string{ca}, "by label, as GetPodStatus does"},
		{&runtimeapi.ContainerFilter{Id: cb}, []string{cb}, "by ID"},
		{&runtimeapi.ContainerFilter{Id: "nope"}, nil, "an unknown ID: none"},
	}
	for _, tc := range tests {
		resp, err := f.rt.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: tc.filter})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range resp.Containers {
			got = append(got, c.Id)
			if c.ImageRef == "" || c.Metadata.GetName() != "app" {
				t.Errorf("%s: container %s lacks its image ref or name: %+v", tc.why, c.Id, c)
			}
		}
		if len(got) != len(tc.want) || (len(got) > 0 && (got[0] != tc.want[0] || got[len(got)-1] != tc.want[len(tc.want)-1])) {
			t.Errorf("%s: got %v, want %v", tc.why, got, tc.want)
		}
	}
}

// TestSandboxIPs checks the pod CIDR allocation: an address of its own per
// sandbox, none for the host network, handed out in turn and given back on
// removal.
func TestSandboxIPs(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.PodCIDR = "10.9.0.0/30" })
	ctx := context.Background()
	ip := func(sb string) string {
		ss, err := f.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb})
		if err != nil {
			t.Fatal(err)
		}
		return ss.Status.Network.GetIp()
	}
	a, b := f.sandbox(pod("a", nil)), f.sandbox(pod("b", nil))
	if ip(a) != "10.9.0.1" || ip(b) != "10.9.0.2" {
		t.Fatalf("IPs %s %s, want 10.9.0.1 and 10.9.0.2 (network and broadcast left out)", ip(a), ip(b))
	}
	h := pod("h", nil)
	h.Spec.HostNetwork = true
	hs := f.sandbox(h)
	if ip(hs) != "" {
		t.Errorf("host-network sandbox IP %q, want none", ip(hs))
	}
	f.pods["uid-c"] = pod("c", nil)
	if _, err := f.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig(pod("c", nil))}); err == nil {
		t.Error("a third sandbox in a /30 got an address")
	}
	if _, err := f.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: a}); err != nil {
		t.Fatal(err)
	}
	if c := f.sandbox(pod("c", nil)); ip(c) != "10.9.0.1" {
		t.Errorf("after a removal: %s, want the freed 10.9.0.1", ip(c))
	}
	ss, _ := f.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: hs})
	if got := ss.Status.GetLinux().GetNamespaces().GetOptions().GetNetwork(); got != runtimeapi.NamespaceMode_NODE {
		t.Errorf("host-network sandbox reports network mode %v, want NODE (the kubelet recreates a sandbox whose mode differs)", got)
	}
}

// TestBadAnnotation checks that a behaviour annotation that does not parse
// fails the sandbox, with simruntime's message.
func TestBadAnnotation(t *testing.T) {
	f := newFixture(t, nil)
	p := pod("p", map[string]string{"app": "run soon"})
	f.pods[string(p.UID)] = p
	_, err := f.rt.RunPodSandbox(context.Background(), &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig(p)})
	if err == nil {
		t.Fatal("a sandbox with a bad annotation ran")
	}
	const want = `rpc error: code = InvalidArgument desc = simruntime: invalid input: annotation sim.nodestate.io/app: line 1: clause "run soon": want "run forever" or "run <duration> exit <code>"`
	if err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}
}

// TestNoPodSpec checks the fallback when the pod cannot be looked up: the
// annotations still count, and every unannotated container runs forever.
func TestNoPodSpec(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Pods = nil })
	p := pod("p", map[string]string{"app": "run 2s exit 4"})
	sb := f.sandbox(p)
	id := f.start(p, sb, "app")
	f.clk.Step(2 * time.Second)
	if st := f.status(id); st.ExitCode != 4 || st.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("annotated container without a pod spec: %v exit %d, want exited 4", st.State, st.ExitCode)
	}
}

// TestOptions checks New's validation.
func TestOptions(t *testing.T) {
	tests := []struct {
		mod func(*Options)
		ok  bool
		why string
	}{
		{func(*Options) {}, true, "the defaults"},
		{func(o *Options) { o.PodCIDR = "fd00::/120" }, true, "an IPv6 pod CIDR"},
		{func(o *Options) { o.PodCIDR = "10.0.0.1/32" }, false, "a /32 has no room"},
		{func(o *Options) { o.PodCIDR = "nope" }, false, "not a prefix"},
		{func(o *Options) { o.Token = "a b" }, false, "a token with a space"},
		{func(o *Options) { o.ImageSize = -1 }, false, "a negative image size"},
		{func(o *Options) { o.RuntimeName = "" }, false, "no runtime name"},
		{func(o *Options) { o.RuntimeVersion = "" }, false, "no runtime version"},
	}
	for _, tc := range tests {
		o := DefaultOptions()
		tc.mod(&o)
		_, err := New(o)
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok=%v", tc.why, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: %v does not unwrap to ErrInvalidOptions", tc.why, err)
		}
	}
}

// TestContainerResources checks that a container reports the Linux
// resources the kubelet gave it, and the last update's after an update, as
// containerd does; the kubelet reads them into the status's resources.
func TestContainerResources(t *testing.T) {
	f := newFixture(t, nil)
	p := pod("p", nil)
	sb := f.sandbox(p)
	ref := f.pull(p, "busybox:1.36")
	ctx := context.Background()
	cr, err := f.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: ref},
		Linux: &runtimeapi.LinuxContainerConfig{Resources: &runtimeapi.LinuxContainerResources{CpuShares: 102, MemoryLimitInBytes: 1 << 27}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.status(cr.ContainerId).GetResources().GetLinux(); r.GetCpuShares() != 102 || r.GetMemoryLimitInBytes() != 1<<27 {
		t.Errorf("resources %+v, want the config's", r)
	}
	if _, err := f.rt.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: cr.ContainerId,
		Linux: &runtimeapi.LinuxContainerResources{CpuShares: 204}}); err != nil {
		t.Fatal(err)
	}
	if r := f.status(cr.ContainerId).GetResources().GetLinux(); r.GetCpuShares() != 204 {
		t.Errorf("resources %+v after an update, want the update's", r)
	}
}
