package podlifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sidecarPod has sidecars sc1..sc3 and container main, with the pod grace g.
func sidecarPod(g int64) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"}}
	for _, n := range []string{"sc1", "sc2", "sc3"} {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: n, Image: "img:1",
			RestartPolicy: ptr(v1.ContainerRestartPolicyAlways)})
	}
	p.Spec.Containers = []v1.Container{{Name: "main", Image: "img:1"}}
	p.Spec.TerminationGracePeriodSeconds = ptr(g)
	return p
}

func deleted(p *v1.Pod, at time.Time, g int64) *v1.Pod {
	p = p.DeepCopy()
	p.DeletionTimestamp = &metav1.Time{Time: at}
	p.DeletionGracePeriodSeconds = ptr(g)
	return p
}

// runTermination deletes a running sidecarPod and stops each container
// `after` its turn; it returns each container's kill grace and the whole
// seconds it waited for its turn.
func runTermination(t *testing.T, grace int64, after time.Duration) (map[string]time.Duration, map[string]time.Duration) {
	t.Helper()
	s := newSim(t, sidecarPod(grace), DefaultOptions())
	s.settle()
	del := s.now.Add(time.Second)
	s.now = del
	s.pod = deleted(s.pod, del, grace)
	graceOf, waited := map[string]time.Duration{}, map[string]time.Duration{}
	type pending struct {
		name string
		at   time.Time
	}
	var stops []pending
	for i := 0; i < 40 && !s.m.state.done(); i++ {
		r, err := s.m.Step(s.now, s.pod, s.obs)
		if err != nil {
			t.Fatal(err)
		}
		s.obs = nil
		for _, a := range r.Actions {
			switch a.Kind {
			case KillContainer:
				graceOf[a.Container] = a.Grace
				waited[a.Container] = s.now.Sub(del).Truncate(time.Second)
				stops = append(stops, pending{a.Container, s.now.Add(after)})
			case KillSandbox:
				s.emit(Observation{Kind: SandboxNotReady, Attempt: a.Attempt})
			}
		}
		// advance to the next stop or wake-up
		next := r.NextSync
		slices.SortFunc(stops, func(a, b pending) int { return a.at.Compare(b.at) })
		if len(stops) > 0 && (next.IsZero() || !stops[0].at.After(next)) {
			next = stops[0].at
			s.now = next
			s.exit(stops[0].name, 137)
			stops = stops[1:]
			continue
		}
		if next.IsZero() {
			break
		}
		s.now = next
	}
	if s.m.state != Finished {
		t.Fatalf("not finished: %v", s.m.state)
	}
	return graceOf, waited
}

func (w WorkerState) done() bool { return w >= Terminated }

// TestPL33_SidecarsStopInReverseOrder and PL34: regular containers first,
// then sidecars from last to first, each waiting at most the grace
// (spec/podlifecycle.md section 7.5, 7.4 step 5).
func TestPL33_SidecarsStopInReverseOrder(t *testing.T) {
	for _, tc := range []struct {
		id     string
		grace  int64
		after  time.Duration
		waited map[string]time.Duration
		graces map[string]time.Duration
	}{
		{"PL33", 30, 1250 * time.Millisecond,
			map[string]time.Duration{"main": 0, "sc3": 1 * time.Second, "sc2": 2 * time.Second, "sc1": 3 * time.Second},
			map[string]time.Duration{"main": 30 * time.Second, "sc3": 29 * time.Second, "sc2": 28 * time.Second, "sc1": 27 * time.Second}},
		{"PL34", 2, time.Second,
			map[string]time.Duration{"main": 0, "sc3": 1 * time.Second, "sc2": 2 * time.Second, "sc1": 2 * time.Second},
			map[string]time.Duration{"main": 2 * time.Second, "sc3": 2 * time.Second, "sc2": 2 * time.Second, "sc1": 2 * time.Second}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			graces, waited := runTermination(t, tc.grace, tc.after)
			if d := cmp.Diff(tc.waited, waited); d != "" {
				t.Errorf("%s whole seconds waited (-want +got):\n%s", tc.id, d)
			}
			if d := cmp.Diff(tc.graces, graces); d != "" {
				t.Errorf("%s stop grace (-want +got):\n%s", tc.id, d)
			}
		})
	}
}

// TestPL35_PL36_KillGrace: the grace of a kill by reason (section 3.8).
func TestPL35_PL36_KillGrace(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(60))
	pod.Spec.Containers[0].LivenessProbe = &v1.Probe{TerminationGracePeriodSeconds: ptr(int64(10))}
	m, _ := New(DefaultOptions(), pod)
	c := m.find("foo1")
	if g := m.podGrace(c, KillLivenessProbe); g != 10 {
		t.Errorf("PL35 LivenessProbe: %d, want 10", g)
	}
	if g := m.podGrace(c, KillUnknown); g != 60 {
		t.Errorf("PL35 Unknown: %d, want 60", g)
	}
	pod2 := onePod("busybox:1")
	m2, _ := New(DefaultOptions(), pod2)
	if g := m2.podGrace(m2.find("foo1"), KillUnknown); g != 2 {
		t.Errorf("PL36 no terminationGracePeriodSeconds: %d, want 2", g)
	}
	pod3 := pod.DeepCopy()
	pod3.DeletionGracePeriodSeconds = ptr(int64(5))
	m3, _ := New(DefaultOptions(), pod3)
	if g := m3.podGrace(m3.find("foo1"), KillLivenessProbe); g != 5 {
		t.Errorf("rule 3.8: deletionGracePeriodSeconds wins: %d", g)
	}
}

// TestPL37_PL38_EffectiveGrace: the pod worker's effective grace (7.2).
func TestPL37_PL38_EffectiveGrace(t *testing.T) {
	for _, tc := range []struct {
		id                      string
		prev                    int64
		deletion, override, spc *int64
		want                    int64
	}{
		{"PL37 spec grace 30, deletion 5", 0, ptr(int64(5)), nil, ptr(int64(30)), 5},
		{"PL37 spec grace 30, deletion 5, override 2", 0, ptr(int64(5)), ptr(int64(2)), ptr(int64(30)), 2},
		{"PL38 deletion 0 becomes 1", 0, ptr(int64(0)), nil, ptr(int64(30)), 1},
		{"rule 7.2 only shrinks", 5, ptr(int64(30)), nil, ptr(int64(30)), 5},
		{"rule 7.2 no deletion grace: the spec's", 0, nil, nil, ptr(int64(30)), 30},
		{"rule 7.2 an override alone is taken, longer than the spec's", 0, nil, ptr(int64(40)), ptr(int64(30)), 40},
		{"rule 7.2 a longer override does not lengthen", 5, nil, ptr(int64(40)), ptr(int64(30)), 5},
		{"rule 7.2 a longer deletion grace does not lengthen", 5, ptr(int64(40)), nil, ptr(int64(30)), 5},
	} {
		if got := effectiveGrace(tc.prev, tc.deletion, tc.override, tc.spc); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.id, got, tc.want)
		}
	}
}

// TestRule7_4_PreStopThenStop: deletion records Killing at once, runs the
// preStop hook (its action carrying the grace, the time the hook has before
// the stop), and stops with the grace minus the whole seconds the hook
// took, at least 2 s (7.4 steps 2-7).
func TestRule7_4_PreStopThenStop(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sleep", "3"}}}}
	m, _ := New(DefaultOptions(), pod)
	var r Result
	m.StepTo(t0, pod, nil, &r)
	m.StepTo(t0, pod, []Observation{{Kind: SandboxReady, IP: "1.2.3.4"}}, &r)
	m.StepTo(t0, pod, []Observation{{Kind: ImagePulled, Container: "foo1"}, {Kind: ContainerCreated, Container: "foo1", ContainerID: "c://1"},
		{Kind: ContainerStarted, Container: "foo1", ContainerID: "c://1"}}, &r)
	del := deleted(pod, t0.Add(10*time.Second), 30)
	m.StepTo(t0.Add(10*time.Second), del, nil, &r)
	if got := actionsOf(&r); !slices.Equal(got, []string{"RunHook foo1 PreStop"}) {
		t.Fatalf("actions %v", got)
	}
	if g := r.Actions[0].Grace; g != 30*time.Second {
		t.Fatalf("the hook's action carries grace %v, want the kill's 30s", g)
	}
	if !hasEvent(&r, ReasonKilling, "Stopping container foo1") {
		t.Fatalf("Killing at once: %v", r.Events)
	}
	if !r.NextSync.Equal(t0.Add(40 * time.Second)) {
		t.Fatalf("hook deadline %v", r.NextSync.Sub(t0))
	}
	m.StepTo(t0.Add(13500*time.Millisecond), del, []Observation{{Kind: HookResult, Container: "foo1", ContainerID: "c://1", Hook: PreStop, Failed: true}}, &r)
	if got := actionsOf(&r); !slices.Equal(got, []string{"KillContainer foo1 grace=27s reason=Unknown"}) {
		t.Fatalf("actions %v", got)
	}
	if !hasEvent(&r, ReasonFailedPreStopHook, MessagePreStopHookFailed) {
		t.Fatalf("events %v", r.Events)
	}
	m.StepTo(t0.Add(14*time.Second), del, []Observation{{Kind: ContainerExited, Container: "foo1", ContainerID: "c://1", ExitCode: 143}}, &r)
	if got := actionsOf(&r); !slices.Equal(got, []string{"KillSandbox attempt=0"}) {
		t.Fatalf("actions %v", got)
	}
	m.StepTo(t0.Add(14*time.Second), del, []Observation{{Kind: SandboxNotReady}}, &r)
	if !r.Finished || len(r.Statuses) == 0 || r.Statuses[len(r.Statuses)-1].Phase != v1.PodFailed {
		t.Fatalf("final: finished %v statuses %d", r.Finished, len(r.Statuses))
	}
}

// TestRule7_4_HookOutlivesGrace: a preStop hook still running after the
// grace is left running and the stop gets the 2 s floor (7.4 steps 4, 6;
// section 12 pitfall 5).
func TestRule7_4_HookOutlivesGrace(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 100}}}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	del := deleted(pod, s.now, 5)
	r, _ := s.m.Step(s.now, del, nil)
	if got := actionsOf(&r); !slices.Equal(got, []string{"RunHook foo1 PreStop"}) {
		t.Fatalf("actions %v", got)
	}
	r, _ = s.m.Step(r.NextSync, del, nil)
	if got := actionsOf(&r); !slices.Equal(got, []string{"KillContainer foo1 grace=2s reason=Unknown"}) {
		t.Fatalf("actions %v", got)
	}
}

// TestRule2_8_NeverWithSidecars: under restartPolicy Never, the regular
// container's exit kills the sidecars (3.7), and the pod ends Succeeded.
func TestRule2_8_NeverWithSidecars(t *testing.T) {
	pod := sidecarPod(30)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = s.now.Add(5 * time.Second)
	s.exit("main", 0)
	r := s.step()
	if r.Statuses[0].Phase != v1.PodRunning {
		t.Fatalf("rule 2.8: still Running while sidecars run: %s", r.Statuses[0].Phase)
	}
	var killed []string
	for _, a := range r.Actions {
		if a.Kind == KillContainer {
			killed = append(killed, a.Container)
		}
	}
	if !slices.Equal(killed, []string{"sc3"}) {
		t.Fatalf("the last sidecar goes first: %v", killed)
	}
	s.settle()
	last := s.all[len(s.all)-1]
	if !last.Finished || s.lastStatus().Phase != v1.PodSucceeded {
		t.Fatalf("finished %v phase %s", last.Finished, s.lastStatus().Phase)
	}
	for i := 1; i < len(s.all); i++ {
		if s.all[i].State < s.all[i-1].State {
			t.Fatalf("section 1: the worker state went backwards at step %d", i)
		}
	}
}

// TestRule9_PostStartHookFailure: Started, FailedPostStartHook, Killing with
// message FailedPostStartHook; PostStartHookError as the Waiting reason at
// the next sync; the restart goes through the restart policy (section 9).
func TestRule9_PostStartHookFailure(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"false"}}}}
	s := newSim(t, pod, DefaultOptions())
	s.hook["foo1"] = true
	s.step()
	r := s.step()
	if got := actionsOf(r); !slices.Equal(got, []string{"PullImage foo1 busybox:1 IfNotPresent", "StartContainer foo1", "RunHook foo1 PostStart"}) {
		t.Fatalf("actions %v", got)
	}
	r = s.step()
	var reasons []string
	for _, e := range r.Events {
		reasons = append(reasons, e.Reason+":"+e.Message)
	}
	want := []string{`Pulled:Successfully pulled image "busybox:1" in 1s (1s including waiting). Image size: 100 bytes.`,
		"Created:Container created", "Started:Container started", "FailedPostStartHook:PostStartHook failed", "Killing:FailedPostStartHook"}
	if d := cmp.Diff(want, reasons); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	if got := actionsOf(r); !slices.Equal(got, []string{"KillContainer foo1 grace=2s reason=FailedPostStartHook"}) {
		t.Fatalf("actions %v", got)
	}
	s.hook["foo1"] = false
	r = s.step() // exited 137; Always: restarted at once (first crash)
	if got := actionsOf(r); !slices.Contains(got, "StartContainer foo1 restart=1") {
		t.Fatalf("restart: %v", got)
	}
	// The sync that restarts it began with the status of the failed hook
	// (section 9): PostStartHookError with the exec handler's message.
	if w := waiting(&r.Statuses[0], "foo1"); w != `PostStartHookError: Exec lifecycle hook ([false]) for Container "foo1" in Pod "foo_foo-ns(12345678)" failed - error: hook failed, message: ""` {
		t.Fatalf("waiting %q", w)
	}
	// The hook of the second instance succeeds: nothing is recorded or
	// killed.
	from := len(s.all)
	s.settle()
	for _, r := range s.all[from:] {
		for _, e := range r.Events {
			if e.Reason == ReasonFailedPostStartHook || e.Reason == ReasonKilling {
				t.Errorf("after a hook that succeeded: %v", e)
			}
		}
		if got := actionsOf(&r); slices.ContainsFunc(got, func(a string) bool { return strings.HasPrefix(a, "KillContainer") }) {
			t.Errorf("after a hook that succeeded: %v", got)
		}
	}
	if st := s.lastStatus(); st.ContainerStatuses[0].State.Running == nil || st.ContainerStatuses[0].RestartCount != 1 {
		t.Errorf("after a hook that succeeded: %+v", st.ContainerStatuses[0])
	}
}

// TestRule3_6_LivenessKillRestarts: a liveness failure kills with the probe
// message and restarts; back-off is checked against the previous exited
// instance (4.2 step 1, section 12 pitfall 2).
func TestRule3_6_LivenessKillRestarts(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.Containers[0].LivenessProbe = &v1.Probe{PeriodSeconds: 10, FailureThreshold: 1}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.probe["foo1"] = ProbeFailure
	s.now = s.all[len(s.all)-1].NextSync
	r := s.step()
	if got := actionsOf(r); !slices.Equal(got, []string{"RunProbe foo1 Liveness"}) {
		t.Fatalf("actions %v", got)
	}
	r = s.step()
	if !hasEvent(r, ReasonUnhealthy, "Liveness probe failed: probe output") ||
		!hasEvent(r, ReasonKilling, "Container foo1 failed liveness probe, will be restarted") {
		t.Fatalf("events %v", r.Events)
	}
	r = s.step() // the kill is done: started again at once, no exited instance before
	if got := actionsOf(r); !slices.Contains(got, "StartContainer foo1 restart=1") {
		t.Fatalf("actions %v", got)
	}
}

// TestRule4_1_SandboxChanged: a lost sandbox records SandboxChanged, kills
// what runs, stops it, creates attempt 1 and reruns the init containers
// (4.1 steps 1-4, section 12 pitfall 8), the first with the restart count
// of the status the sync began with (4.2 step 3).
func TestRule4_1_SandboxChanged(t *testing.T) {
	pod := podPI()
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
	s := newSim(t, pod, DefaultOptions())
	s.stepExitingInits(10)
	s.now = s.now.Add(time.Minute)
	s.emit(Observation{Kind: SandboxNotReady})
	r := s.step()
	if !hasEvent(r, ReasonSandboxChanged, MessageSandboxChanged) {
		t.Fatalf("events %v", r.Events)
	}
	// What runs in the lost sandbox is killed with the pod's grace, no
	// override (KillPod without one).
	if got := actionsOf(r); !slices.Equal(got, []string{"KillContainer foo1 grace=30s reason=Unknown",
		"KillContainer foo2 grace=30s reason=Unknown", "KillContainer foo3 grace=30s reason=Unknown"}) {
		t.Fatalf("actions %v", got)
	}
	r = s.step()
	got := actionsOf(r)
	if !slices.Contains(got, "CreateSandbox attempt=1") || !slices.Contains(got, "RemoveContainer init1") {
		t.Fatalf("actions %v", got)
	}
	r = s.step()
	// Its restart count comes from the status the sync began with, which
	// still had the purged instance (4.2 step 3).
	if got := actionsOf(r); !slices.Contains(got, "StartContainer init1 restart=1") {
		t.Fatalf("init1 runs again: %v", got)
	}
	s.settle()
	s.exit("init1", 0)
	// A later sync: no instance of init2 is left, the count starts over.
	var next []string
	for i := 0; i < 5 && len(next) == 0; i++ {
		next = startsOf(s.step())
	}
	if !slices.Equal(next, []string{"StartContainer init2"}) {
		t.Fatalf("init2 runs again: %v", next)
	}
}

// TestRule7_3_DeletionDuringStart: a deletion while a start and the sandbox
// creation are under way waits for them and kills what they started, so no
// container or sandbox outlives a finished pod (7.3).
func TestRule7_3_DeletionDuringStart(t *testing.T) {
	pod := onePod("busybox:1")
	m, _ := New(DefaultOptions(), pod)
	var r Result
	m.StepTo(t0, pod, nil, &r) // CreateSandbox
	del := deleted(pod, t0, 5)
	m.StepTo(t0, del, nil, &r)
	if r.Finished {
		t.Fatal("finished while the sandbox is being created")
	}
	m.StepTo(t0, del, []Observation{{Kind: SandboxReady, IP: "10.0.0.3"}}, &r)
	if got := actionsOf(&r); !slices.Equal(got, []string{"KillSandbox attempt=0"}) {
		t.Fatalf("actions %v", got)
	}
	m.StepTo(t0, del, []Observation{{Kind: SandboxNotReady}}, &r)
	if !r.Finished {
		t.Fatal("not finished")
	}

	pod2 := onePod("busybox:1")
	m2, _ := New(DefaultOptions(), pod2)
	m2.StepTo(t0, pod2, nil, &r)
	m2.StepTo(t0, pod2, []Observation{{Kind: SandboxReady, IP: "10.0.0.3"}}, &r) // pull + start issued
	del2 := deleted(pod2, t0, 5)
	m2.StepTo(t0, del2, nil, &r)
	if r.Finished || len(r.Actions) != 0 {
		t.Fatalf("a start under way: finished %v actions %v", r.Finished, actionsOf(&r))
	}
	m2.StepTo(t0, del2, []Observation{{Kind: ImagePulled, Container: "foo1"}, {Kind: ContainerCreated, Container: "foo1", ContainerID: "c://9"},
		{Kind: ContainerStarted, Container: "foo1", ContainerID: "c://9"}}, &r)
	if got := actionsOf(&r); !slices.Equal(got, []string{"KillContainer foo1 grace=5s reason=Unknown"}) {
		t.Fatalf("what started is killed: %v", got)
	}
}

// TestRule7_3_DeletionDuringSlowPull: one container with a 10 s pull, the
// pod deleted at +1 s. The kubelet's SyncPod runs the pull and the start
// synchronously, and its pod worker runs the terminating sync only once
// SyncPod returned, so termination cannot overtake them (7.3, section 15,
// rule 4.5): the machine does not begin to terminate, stop the sandbox or
// finish while the StartContainer it issued is unanswered; once the pull
// and start are answered at +10 s it kills the new instance, then the
// sandbox, and only then reports Finished.
func TestRule7_3_DeletionDuringSlowPull(t *testing.T) {
	pod := onePod("busybox:1")
	m, _ := New(DefaultOptions(), pod)
	var r Result
	step := func(at time.Duration, p *v1.Pod, obs ...Observation) []string {
		t.Helper()
		if err := m.StepTo(t0.Add(at), p, obs, &r); err != nil {
			t.Fatalf("+%v: %v", at, err)
		}
		return actionsOf(&r)
	}
	step(0, pod)
	if got := step(0, pod, Observation{Kind: SandboxReady, IP: "10.0.0.3"}); !slices.Contains(got, "StartContainer foo1") {
		t.Fatalf("no start issued: %v", got)
	}
	del := deleted(pod, t0.Add(time.Second), 30)
	for _, at := range []time.Duration{time.Second, 5 * time.Second, 9 * time.Second} {
		if got := step(at, del); r.Finished || r.State != Syncing || len(got) != 0 {
			t.Fatalf("+%v with the start unanswered: state %v finished %v actions %v", at, r.State, r.Finished, got)
		}
	}
	got := step(10*time.Second, del, Observation{Kind: ImagePulled, Container: "foo1", Duration: 10 * time.Second},
		Observation{Kind: ContainerCreated, Container: "foo1", ContainerID: "c://1"},
		Observation{Kind: ContainerStarted, Container: "foo1", ContainerID: "c://1"})
	if !slices.Equal(got, []string{"KillContainer foo1 grace=30s reason=Unknown"}) || r.Finished {
		t.Fatalf("+10s: the started instance is killed first: finished %v actions %v", r.Finished, got)
	}
	if got := step(12*time.Second, del, Observation{Kind: ContainerExited, Container: "foo1", ContainerID: "c://1", ExitCode: 137}); !slices.Equal(got, []string{"KillSandbox attempt=0"}) || r.Finished {
		t.Fatalf("+12s: then the sandbox: finished %v actions %v", r.Finished, got)
	}
	step(12*time.Second, del, Observation{Kind: SandboxNotReady})
	if !r.Finished {
		t.Fatal("not finished once everything stopped")
	}
}

// TestRule7_4_NoPreStopWithoutGrace: a kill with a grace of 0 (a pod whose
// terminationGracePeriodSeconds is 0, killed for a failed liveness probe)
// runs no preStop hook and stops the container with the 2 s floor (7.4
// steps 3 and 6).
func TestRule7_4_NoPreStopWithoutGrace(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
	pod.Spec.Containers[0].LivenessProbe = &v1.Probe{PeriodSeconds: 10, FailureThreshold: 1}
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"drain"}}}}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.probe["foo1"] = ProbeFailure
	s.now = s.all[len(s.all)-1].NextSync
	if got := actionsOf(s.step()); !slices.Equal(got, []string{"RunProbe foo1 Liveness"}) {
		t.Fatalf("actions %v", got)
	}
	r := s.step()
	if got := actionsOf(r); !slices.Equal(got, []string{"KillContainer foo1 grace=2s reason=LivenessProbe"}) {
		t.Fatalf("actions %v, want the stop with the 2 s floor and no preStop hook", got)
	}
}

// TestPL38_DeletionGraceZeroRunsPreStop: a deletion with grace 0 has the
// effective grace 1 (7.2), so the preStop hook runs with 1 s before the
// stop with the 2 s floor (7.4 steps 3 to 6).
func TestPL38_DeletionGraceZeroRunsPreStop(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"drain"}}}}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	s.pod = deleted(s.pod, s.now, 0)
	r := s.step()
	if got := actionsOf(r); !slices.Equal(got, []string{"RunHook foo1 PreStop"}) {
		t.Fatalf("actions %v, want the preStop hook", got)
	}
	if want := s.now.Add(time.Second); !r.NextSync.Equal(want) {
		t.Fatalf("next sync %v, want the hook's end 1 s on", r.NextSync.Sub(s.now))
	}
	s.now = r.NextSync
	if got := actionsOf(s.step()); !slices.Equal(got, []string{"KillContainer foo1 grace=2s reason=Unknown"}) {
		t.Fatalf("actions %v, want the stop with the 2 s floor", got)
	}
}

// TestRule7_5_KillingEventsInOrder: a deletion records Killing for every
// container in the sync that begins the kill, the regular containers' first,
// then the sidecars' in spec order, the same order at every run (7.5;
// the kubelet kills the containers from goroutines, in no fixed order).
func TestRule7_5_KillingEventsInOrder(t *testing.T) {
	s := newSim(t, sidecarPod(30), DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	s.pod = deleted(s.pod, s.now, 30)
	r := s.step()
	var killing []string
	for _, e := range r.Events {
		if e.Reason == ReasonKilling {
			killing = append(killing, e.FieldPath)
		}
	}
	want := []string{"spec.containers{main}", "spec.initContainers{sc1}", "spec.initContainers{sc2}", "spec.initContainers{sc3}"}
	if !slices.Equal(killing, want) {
		t.Fatalf("Killing events about %v, want %v", killing, want)
	}
}

// TestRule4_5_DeletionWaitsForThePostStartHook: a pod deleted while the
// sync under way waits on a slow pull, whose container then starts and
// runs a postStart hook that fails (its container exits as the hook would
// end). The kubelet's pod worker terminates the pod only once SyncPod
// returned (rule 4.5, section 15), and SyncPod handles the hook's failure
// itself: FailedPostStartHook and the kill for it, and no "Stopping
// container" afterwards, as the container has already stopped (oracle case
// gen-15, deleted with grace 0 during a 13 s pull).
func TestRule4_5_DeletionWaitsForThePostStartHook(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"warm"}}}}
	m, _ := New(DefaultOptions(), pod)
	var r Result
	var events []string
	step := func(at time.Duration, p *v1.Pod, obs ...Observation) []string {
		t.Helper()
		if err := m.StepTo(t0.Add(at), p, obs, &r); err != nil {
			t.Fatalf("+%v: %v", at, err)
		}
		for _, e := range r.Events {
			events = append(events, e.Reason+" "+e.Message)
		}
		return actionsOf(&r)
	}
	step(0, pod)
	if got := step(0, pod, Observation{Kind: SandboxReady, IP: "10.0.0.3"}); !slices.Contains(got, "RunHook foo1 PostStart") {
		t.Fatalf("no start with its hook issued: %v", got)
	}
	del := deleted(pod, t0.Add(6*time.Second), 0)
	if got := step(6*time.Second, del); len(got) != 0 || r.State != Syncing {
		t.Fatalf("+6s, deleted during the pull: %v, state %v; want nothing until the sync under way returned", got, r.State)
	}
	if got := step(13*time.Second, del, Observation{Kind: ImagePulled, Container: "foo1", Duration: 13 * time.Second},
		Observation{Kind: ContainerCreated, Container: "foo1", ContainerID: "c://1"},
		Observation{Kind: ContainerStarted, Container: "foo1", ContainerID: "c://1"}); len(got) != 0 {
		t.Fatalf("+13s, started, its hook running: %v; want nothing until the hook returned", got)
	}
	events = events[:0]
	got := step(17*time.Second, del, Observation{Kind: HookResult, Container: "foo1", ContainerID: "c://1", Hook: PostStart, Failed: true},
		Observation{Kind: ContainerExited, Container: "foo1", ContainerID: "c://1", ExitCode: 1})
	want := []string{ReasonFailedPostStartHook + " " + MessagePostStartHookFailed, ReasonKilling + " " + MessageKillFailedPostStartHook}
	if !slices.Equal(events, want) {
		t.Fatalf("+17s, the hook failed: events %q, want %q (actions %v)", events, want, got)
	}
	for at := 17 * time.Second; !r.Finished && at < time.Minute; at += time.Second {
		if slices.Contains(got, "KillSandbox attempt=0") {
			step(at, del, Observation{Kind: SandboxNotReady})
		}
		got = step(at, del)
	}
	if !r.Finished || !slices.Equal(events, want) {
		t.Fatalf("after the hook: finished %v, events %q, want only %q", r.Finished, events, want)
	}
}
