package podlifecycle

import (
	"strconv"
	"testing"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// steadyMachine returns a machine whose pod runs, and the time of a Step
// with nothing due.
func steadyMachine(tb testing.TB) (*Machine, *v1.Pod, time.Time) {
	pod := podP3()
	pod.Spec.InitContainers = []v1.Container{{Name: "init", Image: "bar:1"},
		{Name: "sc", Image: "bar:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways)}}
	m, err := New(DefaultOptions(), pod)
	if err != nil {
		tb.Fatal(err)
	}
	var r Result
	now := t0
	obs := []Observation{}
	for i := 0; i < 20; i++ {
		if err := m.StepTo(now, pod, obs, &r); err != nil {
			tb.Fatal(err)
		}
		obs = obs[:0]
		for _, a := range r.Actions {
			switch a.Kind {
			case CreateSandbox:
				obs = append(obs, Observation{Kind: SandboxReady, Attempt: a.Attempt, IP: "10.0.0.1"})
			case StartContainer:
				id := "c://" + a.Container
				obs = append(obs, Observation{Kind: ContainerCreated, Container: a.Container, ContainerID: id},
					Observation{Kind: ContainerStarted, Container: a.Container, ContainerID: id})
				if a.Container == "init" {
					obs = append(obs, Observation{Kind: ContainerExited, Container: a.Container, ContainerID: id})
				}
			}
		}
	}
	if m.state != Syncing || r.NextSync.IsZero() {
		tb.Fatalf("not steady: %v %v", m.state, r.NextSync)
	}
	return m, pod, now.Add(time.Second)
}

// TestSteadyStateAllocatesNothing: a Step with nothing changed and nothing
// due allocates nothing (issue 12, performance).
func TestSteadyStateAllocatesNothing(t *testing.T) {
	m, pod, now := steadyMachine(t)
	var r Result
	allocs := testing.AllocsPerRun(100, func() {
		if err := m.StepTo(now, pod, nil, &r); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("steady-state sync allocates %v times", allocs)
	}
}

func BenchmarkSteadyState(b *testing.B) {
	m, pod, now := steadyMachine(b)
	var r Result
	b.ReportAllocs()
	for b.Loop() {
		if err := m.StepTo(now, pod, nil, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// lifecyclePod has an init container, a sidecar with a startup probe and a
// main container with a liveness probe.
func lifecyclePod(i int) *v1.Pod {
	pod := podP3()
	pod.Name, pod.UID = "p"+strconv.Itoa(i), types.UID("uid-p"+strconv.Itoa(i))
	pod.Spec.Containers = pod.Spec.Containers[:1]
	pod.Spec.Containers[0].Image = "main:1"
	pod.Spec.Containers[0].LivenessProbe = &v1.Probe{PeriodSeconds: 10}
	pod.Spec.InitContainers = []v1.Container{{Name: "init", Image: "init:1"},
		{Name: "sc", Image: "sc:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways), StartupProbe: &v1.Probe{PeriodSeconds: 1}}}
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
	return pod
}

type timedObs struct {
	at time.Time
	o  Observation
}

// runLifecycle runs one pod from first sync to finished in virtual time:
// pulls, the init container, the sidecar and its startup probe, the main
// container crashing five times through back-off, then a deletion with
// grace 30. It returns the number of Steps.
func runLifecycle(tb testing.TB, i int, res *Result, pend []timedObs, obs []Observation) int {
	pod := lifecyclePod(i)
	m, err := New(DefaultOptions(), pod)
	if err != nil {
		tb.Fatal(err)
	}
	now, starts, ids, steps := t0, 0, 0, 0
	deleted := false
	for steps = 0; steps < 1000; steps++ {
		obs = obs[:0]
		keep := pend[:0]
		for _, p := range pend {
			if !p.at.After(now) {
				obs = append(obs, p.o)
			} else {
				keep = append(keep, p)
			}
		}
		pend = keep
		if err := m.StepTo(now, pod, obs, res); err != nil {
			tb.Fatal(err)
		}
		if res.Finished {
			break
		}
		if debugLifecycle && steps < 80 {
			tb.Logf("%v step %d obs %d actions %v events %d next %v state %v", now.Sub(t0), steps, len(obs), actionsOf(res), len(res.Events), res.NextSync.Sub(t0), res.State)
		}
		for _, a := range res.Actions {
			switch a.Kind {
			case CreateSandbox:
				pend = append(pend, timedObs{now, Observation{Kind: SandboxReady, Attempt: a.Attempt, IP: "10.0.0.1"}})
			case KillSandbox:
				pend = append(pend, timedObs{now, Observation{Kind: SandboxNotReady, Attempt: a.Attempt}})
			case PullImage:
				pend = append(pend, timedObs{now, Observation{Kind: ImagePulled, Container: a.Container, Image: a.Image, Duration: time.Second}})
			case StartContainer:
				ids++
				id := "c://" + strconv.Itoa(ids)
				pend = append(pend, timedObs{now, Observation{Kind: ContainerCreated, Container: a.Container, ContainerID: id}},
					timedObs{now, Observation{Kind: ContainerStarted, Container: a.Container, ContainerID: id}})
				switch a.Container {
				case "init":
					pend = append(pend, timedObs{now.Add(time.Second), Observation{Kind: ContainerExited, Container: a.Container, ContainerID: id}})
				case "foo1":
					starts++
					if starts <= 6 {
						pend = append(pend, timedObs{now.Add(time.Second), Observation{Kind: ContainerExited, Container: a.Container, ContainerID: id, ExitCode: 1}})
					}
				}
			case KillContainer:
				pend = append(pend, timedObs{now.Add(time.Second), Observation{Kind: ContainerExited, Container: a.Container, ContainerID: a.ContainerID, ExitCode: 143}})
			case RunProbe:
				pend = append(pend, timedObs{now, Observation{Kind: ProbeResult, Container: a.Container, ContainerID: a.ContainerID, Probe: a.Probe, Outcome: ProbeSuccess}})
			case RunHook:
			}
		}
		if starts > 6 && !deleted && m.state == Syncing {
			pod = deleted2(pod, now)
			deleted = true
		}
		next := res.NextSync
		for _, p := range pend {
			next = earliest(next, p.at)
		}
		if next.After(now) {
			now = next
		}
	}
	if !res.Finished {
		tb.Fatalf("pod %d not finished after %d steps", i, steps)
	}
	return steps
}

var debugLifecycle = false

func deleted2(p *v1.Pod, at time.Time) *v1.Pod { return deleted(p, at, 30) }

func TestLifecycleFinishes(t *testing.T) {
	var r Result
	if n := runLifecycle(t, 0, &r, nil, nil); n < 10 {
		t.Fatalf("only %d steps", n)
	}
}

// BenchmarkLifecycle is one pod's whole life per op; run it with
// -benchtime=10000x for the 10,000 pods.
func BenchmarkLifecycle(b *testing.B) {
	var r Result
	pend := make([]timedObs, 0, 16)
	obs := make([]Observation, 0, 16)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		runLifecycle(b, i, &r, pend, obs)
		i++
	}
}

// TestResyncAllocatesNothing: the resync of a running pod with nothing
// changed skips its status generation (see generate) and allocates
// nothing; generating the status at every sync, it allocates nothing
// either: the status is generated into the machine's storage and copied
// out only when new (issue 29).
func TestResyncAllocatesNothing(t *testing.T) {
	for _, regenerate := range []bool{false, true} {
		m, pod, _ := steadyMachine(t)
		m.noSkip = regenerate
		var r Result
		next := m.nextWake()
		resync := func() {
			if err := m.StepTo(next, pod, nil, &r); err != nil {
				t.Fatal(err)
			}
			if len(r.Statuses) != 0 || len(r.Actions) != 0 {
				t.Fatalf("a resync at %v produced %d statuses and %d actions", next, len(r.Statuses), len(r.Actions))
			}
			next = r.NextSync
		}
		resync() // the first may generate: the last Step changed the view
		skipped := m.skipped
		if allocs := testing.AllocsPerRun(100, resync); allocs != 0 {
			t.Errorf("regenerate %v: a resync allocates %v times, want 0", regenerate, allocs)
		}
		if !regenerate && m.skipped-skipped != 101 {
			t.Errorf("%d of 101 resyncs skipped the status generation, want all", m.skipped-skipped)
		}
	}
}

// TestCrashKeyOf: the machine's crash-loop back-off key of a container is
// containerstate's CrashLoopKey of its spec, kept across pod objects whose
// container has the same name, image and resources, and computed again
// when one of them changes (a new image or new resources start a fresh
// back-off, spec/podlifecycle.md section 4.2).
func TestCrashKeyOf(t *testing.T) {
	pod := lifecyclePod(1)
	m, err := New(DefaultOptions(), pod)
	if err != nil {
		t.Fatal(err)
	}
	c := m.find("foo1")
	want := func(p *v1.Pod) string {
		return containerstate.CrashLoopKey(p.Name, p.Namespace, p.UID, &p.Spec.Containers[0])
	}
	if got := m.crashKeyOf(c); got != want(pod) {
		t.Fatalf("key %s, want %s", got, want(pod))
	}
	same := pod.DeepCopy()
	m.adopt(same)
	if got := m.crashKeyOf(c); got != want(same) || c.crashKeySpec != c.spec {
		t.Fatalf("a copy of the pod: key %s, want %s", got, want(same))
	}
	for _, change := range []func(*v1.Container){
		func(c *v1.Container) { c.Image = "main:2" },
		func(c *v1.Container) { c.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")} },
		func(c *v1.Container) { c.Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}} },
	} {
		changed := pod.DeepCopy()
		change(&changed.Spec.Containers[0])
		m.adopt(changed)
		if got := m.crashKeyOf(c); got != want(changed) || got == want(pod) {
			t.Fatalf("a changed container: key %s, want %s (not %s)", got, want(changed), want(pod))
		}
		m.adopt(pod)
		if got := m.crashKeyOf(c); got != want(pod) {
			t.Fatalf("back to the first pod: key %s, want %s", got, want(pod))
		}
	}
}

// maxLifecycleAllocs is issue 29's bound on the allocations of one pod's
// whole life (BenchmarkLifecycle's workload, the driver's own included).
const maxLifecycleAllocs = 300

// lifecycleAllocs is what that life allocated when last measured (Go 1.26:
// 247, 248 under the race detector; two more than when a container's
// instance list was made at its full length, which a node of many pods
// paid in memory). More than two above it fails: the
// status storage's lending and reuse (statusbuf.go) save about ten
// allocations each, which nothing else would show. Lower it when a change
// saves some; a Go release that allocates more for the same code moves it
// up.
const lifecycleAllocs = 247

// TestLifecycleAllocations: one pod's whole lifecycle, from the first sync
// through five crashes with back-off to the deletion, allocates at most
// maxLifecycleAllocs times (issue 29).
func TestLifecycleAllocations(t *testing.T) {
	var r Result
	pend := make([]timedObs, 0, 16)
	obs := make([]Observation, 0, 16)
	i := 0
	allocs := testing.AllocsPerRun(20, func() {
		runLifecycle(t, i, &r, pend, obs)
		i++
	})
	if allocs > maxLifecycleAllocs {
		t.Fatalf("one pod's lifecycle allocates %v times, want at most %d", allocs, maxLifecycleAllocs)
	}
	if allocs > lifecycleAllocs+2 {
		t.Fatalf("one pod's lifecycle allocates %v times, %d when last measured: what no longer reuses its storage?", allocs, lifecycleAllocs)
	}
	t.Logf("one pod's lifecycle allocates %v times", allocs)
}
