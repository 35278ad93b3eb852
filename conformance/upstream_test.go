package conformance

import (
	"errors"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	proberesults "k8s.io/kubernetes/pkg/kubelet/prober/results"
)

// These tests prove the upstreamPod harness on hand-written histories: the
// calls and events the kuberuntime manager records must be the ones
// spec/podlifecycle.md gives for each sync, before the harness is trusted
// to compare podlifecycle with the kubelet on generated histories.

const (
	image       = "busybox:1.36"
	podRef      = "foo_foo-ns(12345678)"
	alreadyHere = `Container image "busybox:1.36" already present on machine and can be accessed by the pod`
)

// upstreamTestPod is the P3 fixture's pod (spec/podlifecycle.md section 13)
// with the given containers.
func upstreamTestPod(init []v1.Container, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "foo-ns", UID: "12345678"},
		Spec:       v1.PodSpec{InitContainers: init, Containers: containers},
	}
}

func container(name string) v1.Container { return v1.Container{Name: name, Image: image} }

func sidecar(name string) v1.Container {
	c := container(name)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func execProbe() *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
}

// started is the Normal events of one start of a present image.
func started(path string) []string {
	return []string{
		`Normal Pulled ` + path + ` ` + strconv.Quote(alreadyHere),
		`Normal Created ` + path + ` "Container created"`,
		`Normal Started ` + path + ` "Container started"`,
	}
}

func cat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// check compares one sync with what the spec says, in the canonical order
// for the calls and events upstream makes from goroutines or a map.
func check(t *testing.T, p *upstreamPod, step string, got upstreamSync, calls, events, failures []string) {
	t.Helper()
	diffLines(t, step+": CRI calls", callStrings(p.canonical(got.Calls)), calls)
	diffLines(t, step+": events", eventStrings(canonicalEvents(got.Events)), events)
	diffLines(t, step+": failed results", got.Failures, failures)
}

// TestUpstreamInitThenRegular: a pod with an init container and a regular
// container whose image must be pulled, the first pull failing.
func TestUpstreamInitThenRegular(t *testing.T) {
	pod := upstreamTestPod([]v1.Container{container("init1")}, v1.Container{Name: "main", Image: "app:1.0"})
	p := newUpstreamPod(t, pod, image) // app:1.0 is not on the node

	// spec section 2.2, 3.1, 3.3 step 4 (PL02 with init containers, PL12):
	// the first sync creates the sandbox with attempt 0, no SandboxChanged
	// event, and starts init container 0 only.
	check(t, p, "first sync", p.sync(false),
		[]string{"RunPodSandbox attempt=0", "CreateContainer init1#0", "StartContainer init1#0"},
		started("spec.initContainers{init1}"), nil)

	// spec section 3.5: a running regular init container is waited for.
	p.advance(time.Second)
	check(t, p, "init1 running", p.sync(false), nil, nil, nil)

	// spec section 2.3, 2.5, 3.5 (PL11), 5 steps 2, 5 (PL41): init1 exited
	// with 0, so the pod is initialized and main starts; its image is absent
	// under IfNotPresent and the pull fails: Pulling, Failed with the
	// runtime's text, then Error: ErrImagePull; nothing is created.
	p.advance(time.Second)
	p.exit("init1", 0)
	p.failPulls(errors.New("404 not found"))
	check(t, p, "init1 exited 0, pull fails", p.sync(false),
		[]string{"PullImage app:1.0"},
		[]string{
			`Normal Pulling spec.containers{main} "Pulling image \"app:1.0\""`,
			`Warning Failed spec.containers{main} "Failed to pull image \"app:1.0\": 404 not found"`,
			`Warning Failed spec.containers{main} "Error: ErrImagePull"`,
		},
		[]string{"StartContainer main: ErrImagePull: 404 not found"})

	// spec section 5 step 4, pitfall 12.4 (PL41): within the 10 s pull
	// back-off the image is not pulled; BackOff is Normal and the result
	// names the previous error.
	p.advance(5 * time.Second)
	check(t, p, "in pull back-off", p.sync(false), nil,
		[]string{
			`Normal BackOff spec.containers{main} "Back-off pulling image \"app:1.0\""`,
			`Warning Failed spec.containers{main} "Error: ImagePullBackOff"`,
		},
		[]string{`StartContainer main: ImagePullBackOff: Back-off pulling image "app:1.0": ErrImagePull: 404 not found`})

	// spec section 5 step 5: 10 s after the failed pull it is tried again
	// and succeeds; main is created and started. The exited init container
	// is kept (section 4.1 step 3 keeps the newest exited instance).
	p.advance(5 * time.Second)
	check(t, p, "pull back-off over", p.sync(false),
		[]string{"PullImage app:1.0", "CreateContainer main#0", "StartContainer main#0"},
		[]string{
			`Normal Pulling spec.containers{main} "Pulling image \"app:1.0\""`,
			`Normal Pulled spec.containers{main} "Successfully pulled image \"app:1.0\" in <d> (<d> including waiting). Image size: 0 bytes."`,
			`Normal Created spec.containers{main} "Container created"`,
			`Normal Started spec.containers{main} "Container started"`,
		}, nil)

	// PL01, PL45: a steady pod gets no action and no event.
	p.advance(time.Minute)
	check(t, p, "steady", p.sync(false), nil, nil, nil)
}

// TestUpstreamCrashLoop: a regular container that keeps failing under
// restartPolicy Always, through the crash-loop back-off.
func TestUpstreamCrashLoop(t *testing.T) {
	p := newUpstreamPod(t, upstreamTestPod(nil, container("main")), image)
	check(t, p, "first sync", p.sync(false),
		[]string{"RunPodSandbox attempt=0", "CreateContainer main#0", "StartContainer main#0"},
		started("spec.containers{main}"), nil)

	// Pitfall 12.2 (upstream #133472), section 4.2 step 1, PL03: the first
	// crash restarts at once and starts the back-off key.
	p.advance(5 * time.Second)
	p.exit("main", 1)
	check(t, p, "first crash", p.sync(false),
		[]string{"CreateContainer main#1", "StartContainer main#1"},
		started("spec.containers{main}"), nil)

	// Section 4.2 step 1, PL42: the second crash is within the 10 s back-off
	// counted from its finishedAt: Warning BackOff and CrashLoopBackOff, no
	// call.
	p.advance(5 * time.Second)
	p.exit("main", 1)
	backOff := func(d string) ([]string, []string) {
		return []string{`Warning BackOff spec.containers{main} "Back-off restarting failed container main in pod ` + podRef + `"`},
			[]string{"StartContainer main: CrashLoopBackOff: back-off " + d + " restarting failed container=main pod=" + podRef}
	}
	events, failures := backOff("10s")
	check(t, p, "second crash", p.sync(false), nil, events, failures)

	p.advance(9 * time.Second)
	check(t, p, "9 s later", p.sync(false), nil, events, failures)

	// 10 s after finishedAt the back-off is over: restart, and the delay
	// doubles (containerstate.md section 10).
	p.advance(time.Second)
	check(t, p, "back-off over", p.sync(false),
		[]string{"CreateContainer main#2", "StartContainer main#2"},
		started("spec.containers{main}"), nil)

	p.advance(5 * time.Second)
	p.exit("main", 2)
	events, failures = backOff("20s")
	check(t, p, "third crash", p.sync(false), nil, events, failures)
	p.advance(19 * time.Second)
	check(t, p, "19 s later", p.sync(false), nil, events, failures)
	p.advance(time.Second)
	check(t, p, "20 s later", p.sync(false),
		[]string{"CreateContainer main#3", "StartContainer main#3"},
		started("spec.containers{main}"), nil)

	// Section 3.6, 3.8, PL08, PL35: a liveness Failure kills the running
	// container with the probe's own grace and restarts it; the back-off is
	// checked against the previous exited instance (pitfall 12.2), which
	// finished 30 s ago, within the 40 s delay the last restart set.
	p.advance(10 * time.Second)
	ten := int64(10)
	p.pod.Spec.Containers[0].LivenessProbe = execProbe()
	p.pod.Spec.Containers[0].LivenessProbe.TerminationGracePeriodSeconds = &ten
	p.setProbe(p.liveness, "main", proberesults.Failure)
	events, failures = backOff("40s")
	check(t, p, "liveness failure", p.sync(false),
		[]string{"StopContainer main#3 timeout=10"},
		cat([]string{`Normal Killing spec.containers{main} "Container main failed liveness probe, will be restarted"`}, events),
		failures)
}

// TestUpstreamSidecarStartupProbe: a sidecar with a startup probe holds the
// regular container back until its startup result is Success.
func TestUpstreamSidecarStartupProbe(t *testing.T) {
	sc := sidecar("sc")
	sc.StartupProbe = execProbe()
	sc.LivenessProbe = execProbe()
	p := newUpstreamPod(t, upstreamTestPod([]v1.Container{sc}, container("main")), image)

	check(t, p, "first sync", p.sync(false),
		[]string{"RunPodSandbox attempt=0", "CreateContainer sc#0", "StartContainer sc#0"},
		started("spec.initContainers{sc}"), nil)

	// Section 3.5 (PL19), pitfall 12.6: no startup result yet: wait.
	p.advance(time.Second)
	check(t, p, "no startup result", p.sync(false), nil, nil, nil)
	p.setProbe(p.startup, "sc", proberesults.Unknown)
	check(t, p, "startup Unknown", p.sync(false), nil, nil, nil)

	// Section 2.4, 3.5 (PL18): startup Success on the last init container
	// initializes the pod; the liveness probe without a result does not
	// hold the regular containers back.
	p.advance(time.Second)
	p.setProbe(p.startup, "sc", proberesults.Success)
	check(t, p, "startup Success", p.sync(false),
		[]string{"CreateContainer main#0", "StartContainer main#0"},
		started("spec.containers{main}"), nil)

	// Section 3.5, 3.8 (PL20 without the regular restarts): the sidecar's
	// liveness Failure kills it with the pod grace (30 s after defaulting)
	// and the "Init container" message, and starts it again; main is kept.
	p.advance(time.Second)
	p.setProbe(p.liveness, "sc", proberesults.Failure)
	check(t, p, "sidecar liveness failure", p.sync(false),
		[]string{"StopContainer sc#0 timeout=30", "CreateContainer sc#1", "StartContainer sc#1"},
		cat([]string{`Normal Killing spec.initContainers{sc} "Init container sc failed liveness probe"`}, started("spec.initContainers{sc}")),
		nil)

	// The new instance has no startup result: it is waited for, and main,
	// active in the same sandbox, keeps the pod initialized.
	p.advance(time.Second)
	check(t, p, "new sidecar instance", p.sync(false), nil, nil, nil)
}

// TestUpstreamTermination: graceful termination of a pod with two sidecars
// and two regular containers, one with a preStop hook.
func TestUpstreamTermination(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace int64 // the pod worker's effective grace, section 7.2
		stop  int64 // the StopContainer timeout, section 7.4
	}{
		// Section 7.4, 7.5 (PL33 without its timing): the effective grace
		// goes to every container.
		{name: "grace 30", grace: 30, stop: 30},
		// Section 7.6 (PL38): grace 0 from the API is 1 in the pod worker
		// and 2 at the runtime.
		{name: "grace 0", grace: 1, stop: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			main1 := container("main1")
			main1.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"drain"}}}}
			p := newUpstreamPod(t, upstreamTestPod([]v1.Container{sidecar("sc1"), sidecar("sc2")}, main1, container("main2")), image)

			// Section 2.4, 3.5 (PL17, PL25): sidecars start one per sync,
			// then the regular containers all in one sync in spec order.
			check(t, p, "sync 1", p.sync(false),
				[]string{"RunPodSandbox attempt=0", "CreateContainer sc1#0", "StartContainer sc1#0"},
				started("spec.initContainers{sc1}"), nil)
			check(t, p, "sync 2", p.sync(false),
				[]string{"CreateContainer sc2#0", "StartContainer sc2#0"},
				started("spec.initContainers{sc2}"), nil)
			check(t, p, "sync 3", p.sync(false),
				[]string{"CreateContainer main1#0", "StartContainer main1#0", "CreateContainer main2#0", "StartContainer main2#0"},
				cat(started("spec.containers{main1}"), started("spec.containers{main2}")), nil)

			// Section 3.6, 7.1: with a deletionTimestamp nothing is started
			// any more; a sync while containers run does nothing.
			p.advance(time.Second)
			p.deleteAt(tc.grace)
			check(t, p, "deleted", p.sync(false), nil, nil, nil)

			// Section 7.3 step 3, 7.4, 7.5: every running container gets
			// Killing "Stopping container <c>" at once, main1's preStop runs
			// (exec), regular containers stop first, then sidecars from last
			// to first, then the sandbox.
			got := p.terminate(&tc.grace)
			if got.Err != nil {
				t.Fatalf("KillPod: %v", got.Err)
			}
			stop := func(c string) string { return "StopContainer " + c + "#0 timeout=" + strconv.FormatInt(tc.stop, 10) }
			check(t, p, "terminate", got,
				[]string{"ExecSync main1#0", stop("main1"), stop("main2"), stop("sc2"), stop("sc1"), "StopPodSandbox attempt=0"},
				[]string{
					`Normal Killing spec.containers{main1} "Stopping container main1"`,
					`Normal Killing spec.containers{main2} "Stopping container main2"`,
					`Normal Killing spec.initContainers{sc1} "Stopping container sc1"`,
					`Normal Killing spec.initContainers{sc2} "Stopping container sc2"`,
				}, nil)
			// The canonical order is only a sort of goroutine order; the
			// order upstream enforces must hold in the raw calls too:
			// both regular stops before sc2's, sc2's before sc1's.
			order := map[string]int{}
			for i, c := range got.Calls {
				if c.Op == "StopContainer" {
					order[c.Name] = i
				}
			}
			if !(order["main1"] < order["sc2"] && order["main2"] < order["sc2"] && order["sc2"] < order["sc1"]) {
				t.Errorf("raw stop order %v: want main1 and main2 before sc2 before sc1", callStrings(got.Calls))
			}
			// Section 7.3 step 4: nothing runs after KillPod.
			for _, c := range p.status().ContainerStatuses {
				if c.State == kubecontainer.ContainerStateRunning {
					t.Errorf("container %s still running after KillPod", c.Name)
				}
			}
		})
	}
}

// TestUpstreamRunSteps: the declarative form of a history gives the same
// syncs as the calls it stands for (the crash loop's start, first and
// second crash, and a termination).
func TestUpstreamRunSteps(t *testing.T) {
	grace := int64(5)
	p := newUpstreamPod(t, upstreamTestPod(nil, container("main")), image)
	got := p.run([]upstreamStep{
		{},
		{Advance: 5 * time.Second, Exits: map[string]int32{"main": 1}},
		{Advance: 5 * time.Second, Exits: map[string]int32{"main": 1}},
		{Advance: 10 * time.Second},
		{Advance: time.Second, Delete: &grace},
		{Terminate: true, Grace: &grace},
	})
	want := [][]string{
		{"RunPodSandbox attempt=0", "CreateContainer main#0", "StartContainer main#0"},
		{"CreateContainer main#1", "StartContainer main#1"},
		nil,
		{"CreateContainer main#2", "StartContainer main#2"},
		nil,
		{"StopContainer main#2 timeout=5", "StopPodSandbox attempt=0"},
	}
	for i := range want {
		diffLines(t, "step "+strconv.Itoa(i), callStrings(p.canonical(got[i].Calls)), want[i])
	}
	if len(got[2].Failures) != 1 {
		t.Errorf("step 2 failures %q, want the CrashLoopBackOff start", got[2].Failures)
	}
}
