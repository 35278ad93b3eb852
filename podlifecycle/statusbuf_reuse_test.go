package podlifecycle

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStatusFollowsTheSpecOfAWaitingContainer: the status of a container
// that has no instance yet is built from the spec of the pod of the sync:
// after an update of its image, it shows the new image, though nothing the
// runtime reported about it changed (spec/containerstate.md section 4.1).
func TestStatusFollowsTheSpecOfAWaitingContainer(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "bar-image:1"}}
	s := newSim(t, pod, DefaultOptions())
	s.settle() // init1 runs; foo1 and foo2 wait
	for i, image := range []string{"busybox:2", "busybox:3"} {
		s.now = s.now.Add(time.Second)
		p := s.pod.DeepCopy()
		p.Spec.Containers[i].Image = image
		s.pod = p
		s.settle()
		st := s.lastStatus()
		if got := st.ContainerStatuses[i].Image; got != image {
			t.Errorf("%s's status after its image became %s: image %s", st.ContainerStatuses[i].Name, image, got)
		}
	}
}

// TestContainerstate9_StartedFollowsTheStartupProbe: a running container
// whose startup probe has not passed is not started, whatever its liveness
// result (a new instance's liveness is Success); it is once the startup
// probe passed (containerstate.md section 9, section 6).
func TestContainerstate9_StartedFollowsTheStartupProbe(t *testing.T) {
	pod := onePod("app:1")
	c := &pod.Spec.Containers[0]
	c.StartupProbe, c.LivenessProbe = execProbe(10, 1000), execProbe(10, 0)
	s := newSim(t, pod, DefaultOptions())
	s.probe["foo1"] = ProbeFailure
	s.settle()
	st := s.lastStatus().ContainerStatuses[0]
	if st.State.Running == nil || st.Started == nil || *st.Started {
		t.Fatalf("before the startup probe passed: state %+v, started %v; want running, not started", st.State, st.Started)
	}
	s.probe["foo1"] = ProbeSuccess
	s.now = s.now.Add(10 * time.Second)
	s.settle()
	if st := s.lastStatus().ContainerStatuses[0]; st.Started == nil || !*st.Started {
		t.Errorf("after the startup probe passed: started %v, want true", st.Started)
	}
}

// TestContainerstate4_4_InitInferredCompleted: a machine that takes over a
// pod whose regular container already runs, and whose init container the
// runtime no longer has, shows the init container Completed (1.36 and
// later, kubernetes#131317; spec/containerstate.md section 4.4).
func TestContainerstate4_4_InitInferredCompleted(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "app:1"}}
	m, err := New(DefaultOptions(), pod)
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	obs := []Observation{{Kind: SandboxReady, IP: "10.0.0.1"},
		{Kind: ContainerCreated, Container: "foo1", ContainerID: "c://1"}, {Kind: ContainerStarted, Container: "foo1", ContainerID: "c://1"}}
	if err := m.StepTo(t0, pod, obs, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Statuses) == 0 {
		t.Fatal("no status")
	}
	init := r.Statuses[0].InitContainerStatuses[0]
	if init.State.Terminated == nil || init.State.Terminated.Reason != "Completed" {
		t.Errorf("init1: %+v, want Terminated, Completed", init.State)
	}
}

// TestRule3_2_ResetWithAnEphemeralContainer: a RestartAllContainers reset
// is over once no init or regular container has an instance left; a
// running ephemeral container, which the reset leaves alone, does not hold
// the pod back (rule 3.2, spec/podphase.md section 7).
func TestRule3_2_ResetWithAnEphemeralContainer(t *testing.T) {
	s := newSim(t, withEphemeral(restartAllPod(), "debug"), DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Minute)
	s.exit("foo1", 42)
	for i := 0; i < 12; i++ {
		r := s.step()
		for _, a := range r.Actions {
			if a.Kind == RemoveContainer {
				s.emit(Observation{Kind: ContainerRemoved, Container: a.Container, ContainerID: a.ContainerID})
			}
		}
	}
	if n := s.count(StartContainer, "foo1"); n != 2 {
		t.Errorf("foo1 started %d times, want again after the reset", n)
	}
	if n := s.count(StartContainer, "debug"); n != 1 {
		t.Errorf("debug started %d times, want once", n)
	}
}

// TestCrashKeyKeptAcrossPodCopies: the crash-loop key of a container is
// not computed again for a pod object whose container has the same name,
// image and resources (a status echo, a new object of the same pod): it
// costs no allocation (issue 29).
func TestCrashKeyKeptAcrossPodCopies(t *testing.T) {
	pod := lifecyclePod(1)
	m, err := New(DefaultOptions(), pod)
	if err != nil {
		t.Fatal(err)
	}
	c := m.find("foo1")
	want := m.crashKeyOf(c)
	copies := [2]*v1.Pod{pod.DeepCopy(), pod.DeepCopy()}
	i := 0
	allocs := testing.AllocsPerRun(20, func() {
		m.adopt(copies[i%2])
		i++
		if got := m.crashKeyOf(c); got != want {
			t.Fatalf("key %s, want %s", got, want)
		}
	})
	if allocs != 0 {
		t.Errorf("the key of a pod copy allocates %v times, want 0", allocs)
	}
}

// TestReusedStatusesAreExact: a machine that reuses the statuses of the
// containers whose inputs did not change, and skips the generations whose
// inputs did not change at all, returns at every Step what a machine that
// converts every container at every sync returns. The containers' names
// are not in the order of their statuses (which are sorted by name), one
// crashes again and again while another's readiness flips, an image
// changes, an ephemeral container comes, and the pod is deleted.
func TestReusedStatusesAreExact(t *testing.T) {
	pod := podP3()
	pod.Spec.InitContainers = []v1.Container{{Name: "zinit", Image: "bar:1"},
		{Name: "side", Image: "bar:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways), ReadinessProbe: execProbe(3, 1)}}
	pod.Spec.Containers = []v1.Container{{Name: "zz", Image: "app:1", ReadinessProbe: execProbe(2, 1)},
		{Name: "mm", Image: "app:1"}, {Name: "aa", Image: "app:1"}}
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(5))
	s := newSim(t, pod, DefaultOptions())
	slow, err := New(DefaultOptions(), pod)
	if err != nil {
		t.Fatal(err)
	}
	RegenerateAlways(slow)
	var rs Result
	n := 0
	step := func() {
		t.Helper()
		obs := append([]Observation(nil), s.obs...)
		r := s.step()
		for _, a := range r.Actions {
			if a.Kind == StartContainer && a.Container == "zinit" {
				s.exit("zinit", 0)
			}
		}
		if err := slow.StepTo(s.now, s.pod, obs, &rs); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(rs, *r, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("Step %d at +%v differs (-converting +reusing):\n%s", n, s.now.Sub(t0), d)
		}
		for i := range r.Statuses {
			if !reflect.DeepEqual(rs.Statuses[i], r.Statuses[i]) {
				t.Fatalf("Step %d at +%v: status %d differs in a nil or empty list", n, s.now.Sub(t0), i)
			}
		}
		n++
	}
	run := func(d time.Duration) {
		t.Helper()
		end := s.now.Add(d)
		for i := 0; i < 200; i++ {
			step()
			if len(s.obs) > 0 {
				continue
			}
			next := s.all[len(s.all)-1].NextSync
			if next.IsZero() || next.After(end) {
				s.now = end
				return
			}
			if next.After(s.now) {
				s.now = next
			}
		}
	}
	flip := []ProbeOutcome{ProbeFailure, ProbeSuccess}
	run(5 * time.Second)
	for i := 0; i < 6; i++ {
		s.probe["zz"] = flip[i%2]
		s.probe["side"] = flip[(i/2)%2]
		if i%2 == 0 {
			s.exit("mm", 1)
		}
		if i == 3 {
			p := s.pod.DeepCopy()
			p.Spec.Containers[2].Image = "app:2"
			s.pod = p
		}
		if i == 4 {
			s.pod = withEphemeral(s.pod, "debug")
		}
		run(7 * time.Second)
	}
	s.pod = deleted(s.pod, s.now, 5)
	run(20 * time.Second)
	if !s.all[len(s.all)-1].Finished {
		t.Fatalf("the pod did not finish after %d Steps", n)
	}
}

// TestTakeOverAPodWithItsStatus: a machine made for a pod whose API status
// a machine before it wrote (a runner that started again) generates its
// first status against that one: a container whose status it gives again
// keeps it, one that runs now shows running.
func TestTakeOverAPodWithItsStatus(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "app:1"}}
	s := newSim(t, pod, DefaultOptions())
	s.settle() // init1 runs, foo1 waits
	before := s.lastStatus()
	if w := waiting(before, "foo1"); w == "" {
		t.Fatalf("foo1 does not wait: %+v", before.ContainerStatuses)
	}
	taken := s.pod.DeepCopy()
	taken.Status = *before.DeepCopy()
	m, err := New(DefaultOptions(), taken)
	if err != nil {
		t.Fatal(err)
	}
	id := s.lastID("init1")
	var r Result
	obs := []Observation{{Kind: SandboxReady, IP: "10.0.0.1"},
		{Kind: ContainerCreated, Container: "init1", ContainerID: id}, {Kind: ContainerStarted, Container: "init1", ContainerID: id}}
	if err := m.StepTo(s.now.Add(time.Second), taken, obs, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Statuses) == 0 {
		t.Fatal("no first status")
	}
	st := &r.Statuses[0]
	if got, want := waiting(st, "foo1"), waiting(before, "foo1"); got != want {
		t.Errorf("foo1 waits with %q, want %q as before", got, want)
	}
	if st.InitContainerStatuses[0].State.Running == nil {
		t.Errorf("init1: %+v, want running", st.InitContainerStatuses[0].State)
	}
}

// TestCopyOutAllocations: copyOut copies a status in the allocations its
// documentation counts: one for the conditions, one for the container
// statuses, one for what they point to with the pod's start time and its
// (up to two) pod IPs, one for the terminations and two for the volume
// mounts and their modes, however many there are.
func TestCopyOutAllocations(t *testing.T) {
	now := metav1.NewTime(t0)
	mounts := []v1.VolumeMountStatus{{Name: "a", MountPath: "/a"}, {Name: "b", MountPath: "/b"}, {Name: "c", MountPath: "/c"}}
	st := &v1.PodStatus{Phase: v1.PodRunning, StartTime: &now,
		Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}},
		PodIP:      "10.0.0.1", PodIPs: []v1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}},
		ContainerStatuses: []v1.ContainerStatus{
			{Name: "foo1", State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}, VolumeMounts: mounts},
			{Name: "foo2", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1}}, VolumeMounts: mounts[:1]},
		}}
	var out v1.PodStatus
	allocs := testing.AllocsPerRun(20, func() { out = copyOut(st) })
	if !reflect.DeepEqual(&out, st.DeepCopy()) {
		t.Fatalf("copyOut differs from DeepCopy:\n%s", cmp.Diff(st.DeepCopy(), &out))
	}
	if allocs != 6 {
		t.Errorf("copyOut allocates %v times, want 6", allocs)
	}
}

// TestRule6_ReadinessRunForEachContainer: the readiness run a status asks
// for once it finds a started container not ready is asked for each such
// container, whatever the containers before it (containerstate.md section
// 9): a container restarted at an instant off its worker's ticks is probed
// at once, though the one before it is ready.
func TestRule6_ReadinessRunForEachContainer(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[0].ReadinessProbe = execProbe(10, 0)
	pod.Spec.Containers[1].ReadinessProbe = execProbe(10, 0)
	s := newSim(t, pod, DefaultOptions())
	wakeUntil(t, s, t0.Add(5*time.Second), nil)
	s.now = t0.Add(5500 * time.Millisecond)
	s.exit("foo2", 1) // the first crash restarts at once
	var at []time.Duration
	wakeUntil(t, s, t0.Add(9*time.Second), func(r *Result) {
		if probeRuns(r, "foo2", Readiness) > 0 {
			at = append(at, s.now.Sub(t0))
		}
	})
	if len(at) != 1 || at[0] != 5500*time.Millisecond {
		t.Errorf("foo2's readiness runs at %v, want one at its restart, 5.5s", at)
	}
}

// TestSettledStatusesAreNotConvertedAgain: while one container's readiness
// flips, the statuses of the others, whose inputs stay the same, are
// neither converted again nor, once both of the machine's buffers hold
// them, copied: every generation converts the flipping container alone
// (the reuse that TestReusedStatusesAreExact shows to be exact).
func TestSettledStatusesAreNotConvertedAgain(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = []v1.Container{{Name: "flip", Image: "app:1", ReadinessProbe: execProbe(2, 1)},
		{Name: "b", Image: "app:1"}, {Name: "c", Image: "app:1"}, {Name: "d", Image: "app:1"}}
	s := newSim(t, pod, DefaultOptions())
	flip := func(out ProbeOutcome) {
		t.Helper()
		s.probe["flip"] = out
		s.now = s.now.Add(2 * time.Second)
		s.settle()
	}
	s.settle()
	for i := 0; i < 4; i++ { // both buffers come to hold b, c and d
		flip([]ProbeOutcome{ProbeFailure, ProbeSuccess}[i%2])
	}
	gen, conv, copied, statuses := s.m.generated, s.m.converted, s.m.copied, len(s.all)
	for i := 0; i < 6; i++ {
		flip([]ProbeOutcome{ProbeFailure, ProbeSuccess}[i%2])
	}
	n := 0
	for _, r := range s.all[statuses:] {
		n += len(r.Statuses)
	}
	if n < 6 {
		t.Fatalf("%d statuses for 6 readiness flips", n)
	}
	t.Logf("%d generations, %d conversions", s.m.generated-gen, s.m.converted-conv)
	if g, c := s.m.generated-gen, s.m.converted-conv; c != g || g < 6 {
		t.Errorf("%d generations converted %d container statuses, want one each (the flipping container's)", g, c)
	}
	if c := s.m.copied - copied; c != 0 {
		t.Errorf("%d settled statuses copied, want none: both buffers hold them", c)
	}
	// A new pod object (the status written back) makes the next generation
	// convert every container again; those that give their status again
	// keep it numbered as the same content, so the generation after that
	// copies nothing either.
	copied = s.m.copied
	for i := 0; i < 4; i++ {
		echo := s.pod.DeepCopy()
		echo.Status = *s.lastStatus()
		echo.ResourceVersion += "e"
		s.pod = echo
		flip([]ProbeOutcome{ProbeFailure, ProbeSuccess}[i%2])
		flip([]ProbeOutcome{ProbeSuccess, ProbeFailure}[i%2])
	}
	if c := s.m.copied - copied; c != 0 {
		t.Errorf("after new pod objects: %d settled statuses copied, want none", c)
	}
}

// TestGrowKeepsTheStorage: grow keeps a list whose capacity suffices,
// with the storage its elements point to, and makes a longer one keep its
// elements when it does not.
func TestGrowKeepsTheStorage(t *testing.T) {
	s := make([]v1.ContainerStatus, 1, 2)
	s[0].State.Running = &v1.ContainerStateRunning{}
	for _, n := range []int{1, 2} {
		if g := grow(s, n); len(g) != n || &g[0] != &s[0] {
			t.Errorf("grow to %d of a list of capacity 2: length %d, same storage %v", n, len(g), &g[0] == &s[0])
		}
	}
	g := grow(s, 3)
	if len(g) != 3 || cap(g) < 3 || g[0].State.Running != s[0].State.Running {
		t.Errorf("grow to 3 of a list of capacity 2: length %d, capacity %d, first element kept %v", len(g), cap(g), g[0].State.Running == s[0].State.Running)
	}
}
