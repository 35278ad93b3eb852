package podlifecycle

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// The order of one sync's runtime calls (spec/podlifecycle.md section 4.1)
// when it kills: SyncPod blocks on each kill, then prunes the old init
// container instances, then starts; the machine carries out the same plan
// over the Steps that get the kills' answers.

// withSidecar is pod foo with sidecar side (busybox:1) and container foo1.
func withSidecar() *v1.Pod {
	p := onePod("busybox:1")
	p.Spec.InitContainers = []v1.Container{{Name: "side", Image: "busybox:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways)}}
	return p
}

// startsOf lists the StartContainer actions of r.
func startsOf(r *Result) []string {
	var out []string
	for _, a := range r.Actions {
		if a.Kind == StartContainer {
			out = append(out, a.String())
		}
	}
	return out
}

// removed lists the container IDs r removes.
func removed(r *Result) []string {
	var out []string
	for _, a := range r.Actions {
		if a.Kind == RemoveContainer {
			out = append(out, a.ContainerID)
		}
	}
	return out
}

// TestRule4_1_PruneInitContainers: spec/podlifecycle.md section 4.1 step 3
// (pruneInitContainersBeforeStart): of each init container only the newest
// instance that exited or is unknown is kept, whatever the sync decides;
// the older ones are removed before any start, and running instances are
// neither kept nor counted.
func TestRule4_1_PruneInitContainers(t *testing.T) {
	s := newSim(t, withSidecar(), DefaultOptions())
	s.settle()
	first := s.lastID("side")
	s.now = s.now.Add(time.Second)
	s.exit("side", 1)
	r := s.step() // one exited instance: kept; restarted at once (first crash)
	if got := removed(r); len(got) != 0 {
		t.Fatalf("removed %v with one exited instance", got)
	}
	s.settle()
	s.now = s.now.Add(time.Second)
	s.exit("side", 1)
	r = s.step() // the newer one exited too: the first goes; the restart is backed off
	if got := removed(r); !slices.Equal(got, []string{first}) {
		t.Fatalf("removed %v, want %v; actions %v", got, []string{first}, actionsOf(r))
	}
	if in := s.m.find("side").instance(first); in != nil {
		t.Fatalf("pruned instance %s still in the machine's view", first)
	}
	// The runtime's answer comes about an instance the machine dropped: it
	// is accepted and ignored.
	s.emit(Observation{Kind: ContainerRemoved, Container: "side", ContainerID: first})
	s.step()
	if s.m.Stats().RetiredObservations != 1 {
		t.Fatalf("the ContainerRemoved of the pruned instance was not counted as retired")
	}
}

// TestRule4_1_PruneAfterKillPod: spec/podlifecycle.md section 4.1 steps 2
// and 3: with KillPod and no new sandbox (rule 3.7, nothing left to run;
// a sidecar still runs, so the phase is not terminal), the prune follows
// the whole-pod kill and the sandbox stop, and removes what the sync saw
// exited when it began.
func TestRule4_1_PruneAfterKillPod(t *testing.T) {
	pod := withSidecar()
	pod.Spec.InitContainers = append(pod.Spec.InitContainers,
		v1.Container{Name: "side2", Image: "busybox:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways)})
	pod.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	first := s.lastID("side")
	s.now = s.now.Add(time.Second)
	s.exit("side", 1)
	s.settle()
	s.now = s.now.Add(time.Minute)
	s.exit("side", 1)
	s.exit("foo1", 0) // its own policy Never: nothing left (3.7)
	r := s.step()
	if got := actionsOf(r); !slices.Equal(got, []string{"KillContainer side2 grace=2s reason=Unknown"}) {
		t.Fatalf("the whole-pod kill: %v (state %v)", got, r.State)
	}
	r = s.step() // side2 stopped: the sandbox, then the prune
	want := []string{"KillSandbox attempt=0", "RemoveContainer side"}
	if got := actionsOf(r); !slices.Equal(got, want) {
		t.Fatalf("actions %v, want %v", got, want)
	}
	if got := removed(r); !slices.Equal(got, []string{first}) {
		t.Fatalf("removed %v, want %v", got, []string{first})
	}
}

// TestRule4_1_KillsBeforeStarts: spec/podlifecycle.md section 4.1 step 2
// before steps 3 and 7: a sync that kills one container (here for a
// liveness failure, rule 3.6) and starts others issues only the kill; the
// starts of the same plan follow, in spec order with the killed container
// in its place, in the Step that gets the stop, not before it.
func TestRule4_1_KillsBeforeStarts(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[1].LivenessProbe = &v1.Probe{PeriodSeconds: 10, FailureThreshold: 1}
	pod.Spec.Containers[1].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"drain"}}}}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	s.exit("foo1", 1)
	s.emit(Observation{Kind: ProbeResult, Container: "foo2", ContainerID: s.lastID("foo2"), Probe: Liveness, Outcome: ProbeFailure})
	r := s.step()
	if got := actionsOf(r); !slices.Equal(got, []string{"RunHook foo2 PreStop"}) {
		t.Fatalf("the sync's first actions %v: only the kill's preStop hook, no start", got)
	}
	if !hasEvent(r, ReasonKilling, "Container foo2 failed liveness probe, will be restarted") {
		t.Fatalf("events %v", r.Events)
	}
	r = s.step() // the hook returned: the stop
	if got := actionsOf(r); !slices.Equal(got, []string{"KillContainer foo2 grace=2s reason=LivenessProbe"}) {
		t.Fatalf("after the hook: %v", got)
	}
	r = s.step() // stopped: the starts of the same sync, in spec order
	if got := startsOf(r); !slices.Equal(got, []string{"StartContainer foo1 restart=1", "StartContainer foo2 restart=1"}) {
		t.Fatalf("after the stop: %v", got)
	}
	if !r.NextSync.IsZero() {
		t.Fatalf("NextSync %v, want none while the starts are unanswered: the sync waits on them, and their answers sync the pod (rule 4.5)", r.NextSync)
	}
	if r = s.step(); len(r.Statuses) == 0 {
		t.Fatalf("the starts' answers did not sync the pod, as the relist after a sync that acted does: %v", r.Actions)
	}
}

// TestRule3_6_ProbeKillWithoutRestartStartsNextSync: spec/podlifecycle.md
// rule 3.6: a running container's restart after a probe kill reads only its
// restartPolicy (Never here), not its rules; the rules decide at the next
// sync, from the exit code of the stopped instance. The Step that gets the
// stop ends the sync that killed it, so it starts nothing; the sync after
// it, due at once, starts it.
func TestRule3_6_ProbeKillWithoutRestartStartsNextSync(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	c := &pod.Spec.Containers[0]
	c.RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
	c.RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{137}}}}
	c.StartupProbe = &v1.Probe{InitialDelaySeconds: 5, PeriodSeconds: 10, FailureThreshold: 1}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	s.emit(Observation{Kind: ProbeResult, Container: "foo1", ContainerID: s.lastID("foo1"), Probe: Startup, Outcome: ProbeFailure})
	r := s.step()
	if got := actionsOf(r); !slices.Equal(got, []string{"KillContainer foo1 grace=2s reason=StartupProbe"}) {
		t.Fatalf("actions %v", got)
	}
	if !hasEvent(r, ReasonKilling, "Container foo1 failed startup probe") {
		t.Fatalf("events %v", r.Events)
	}
	r = s.step() // stopped with 137: the sync that killed it is over
	if got := actionsOf(r); len(got) != 0 {
		t.Fatalf("the Step that gets the stop: %v, want nothing", got)
	}
	if !r.NextSync.Equal(s.now) {
		t.Fatalf("NextSync %v, want %v", r.NextSync, s.now)
	}
	r = s.step() // the next sync: rule Restart on 137
	if got := startsOf(r); !slices.Equal(got, []string{"StartContainer foo1 restart=1"}) {
		t.Fatalf("the next sync: %v", got)
	}
}

// TestRule4_2_BackoffAfterProbeKill: spec/podlifecycle.md section 4.2 step 1
// and section 12 pitfall 2: the restart in the sync that killed a container
// is backed off against the instance before it; every later sync against
// the newest exited instance, the killed one, so the restart waits until
// its finishedAt plus the back-off.
func TestRule4_2_BackoffAfterProbeKill(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[0].LivenessProbe = &v1.Probe{PeriodSeconds: 10, FailureThreshold: 1}
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	t1 := s.now.Add(time.Second)
	s.now = t1
	s.exit("foo1", 1)
	r := s.step() // the first crash restarts at once; the back-off (10 s) starts at t1
	if got := actionsOf(r); !slices.Contains(got, "StartContainer foo1 restart=1") {
		t.Fatalf("actions %v", got)
	}
	s.settle()
	s.now = t1.Add(5 * time.Second)
	s.emit(Observation{Kind: ProbeResult, Container: "foo1", ContainerID: s.lastID("foo1"), Probe: Liveness, Outcome: ProbeFailure})
	s.step() // kill
	r = s.step()
	// Stopped at t1+5s: the restart of the killing sync is checked against
	// the instance that exited at t1, within its 10 s.
	if !hasEvent(r, ReasonBackOff, "") {
		t.Fatalf("the killing sync's restart: %v %v", actionsOf(r), r.Events)
	}
	s.settle()
	s.now = t1.Add(10 * time.Second)
	r = s.step()
	if got := actionsOf(r); slices.Contains(got, "StartContainer foo1 restart=2") {
		t.Fatalf("restarted at t1+10s, 10 s after the instance before the killed one: %v", got)
	}
	s.now = t1.Add(15 * time.Second)
	r = s.step()
	if got := actionsOf(r); !slices.Contains(got, "StartContainer foo1 restart=2") {
		t.Fatalf("not restarted at t1+15s, 10 s after the killed instance stopped: %v %v", got, r.Events)
	}
}

// TestRule4_1_StartUnderWayNotRepeated: spec/podlifecycle.md section 4.1:
// the kubelet's SyncPod blocks on a start until it returns, so a liveness
// Failure that arrives while a start is unanswered makes no sync until the
// start's answer came; the sync then kills the sidecar and does not issue
// the answered start again.
func TestRule4_1_StartUnderWayNotRepeated(t *testing.T) {
	pod := withSidecar()
	pod.Spec.InitContainers[0].LivenessProbe = &v1.Probe{PeriodSeconds: 10, FailureThreshold: 1}
	pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: "init2", Image: "busybox:1"})
	s := newSim(t, pod, DefaultOptions())
	var held []Observation
	for i := 0; i < 20 && held == nil; i++ {
		r := s.step()
		if slices.Contains(startsOf(r), "StartContainer init2") {
			// init2's pull and start are under way: hold their answers.
			held, s.obs = s.obs, nil
		}
	}
	if held == nil {
		t.Fatal("init2 never started")
	}
	s.now = s.now.Add(time.Second)
	s.emit(Observation{Kind: ProbeResult, Container: "side", ContainerID: s.lastID("side"), Probe: Liveness, Outcome: ProbeFailure})
	if r := s.step(); len(r.Actions) != 0 || len(r.Statuses) != 0 {
		t.Fatalf("a sync while init2's start is unanswered: actions %v, %d statuses", actionsOf(r), len(r.Statuses))
	}
	// init2 is created, runs and exits 0; then the sync the Failure asked for.
	for _, o := range held {
		s.emit(o) // at the sim's time
	}
	s.exit("init2", 0)
	r := s.step()
	if got := actionsOf(r); !slices.Contains(got, "KillContainer side grace=2s reason=LivenessProbe") || slices.Contains(startsOf(r), "StartContainer init2") {
		t.Fatalf("the sync after the start returned: %v, want the sidecar's kill and no second start of init2", got)
	}
	r = s.step()
	// init2 completed before the kill was decided: the pod is initialized,
	// and the sync after the stop restarts the sidecar and starts foo1,
	// init2 not again.
	if got := startsOf(r); !slices.Equal(got, []string{"StartContainer side restart=1", "StartContainer foo1"}) {
		t.Fatalf("after the stop: %v, want the killed sidecar's restart and foo1", got)
	}
}

// TestRule3_3_NewSandboxStartsTheSyncsCandidates: spec/podlifecycle.md
// rule 3.3 and section 12 pitfall 8: the sync that creates a new sandbox
// starts, once it is ready, the candidates it decided when it began: every
// regular container but a run-once one that succeeded, so a container
// whose own policy is Never, exited with a failure, is started again in
// the new sandbox (pod Always), although rule 3.6 would not restart it.
func TestRule3_3_NewSandboxStartsTheSyncsCandidates(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	s.exit("foo1", 1)
	if got := startsOf(s.step()); len(got) != 0 {
		t.Fatalf("foo1 restarted under its own policy Never: %v", got)
	}
	s.settle()
	s.now = s.now.Add(time.Minute)
	s.emit(Observation{Kind: SandboxNotReady})
	var got []string
	for i := 0; i < 6 && len(got) == 0; i++ {
		got = startsOf(s.step())
	}
	if want := []string{"StartContainer foo1 restart=1", "StartContainer foo2 restart=1"}; !slices.Equal(got, want) {
		t.Fatalf("starts in the new sandbox %v, want %v", got, want)
	}
}

// TestRule4_2_BackoffAcrossPurge: spec/podlifecycle.md section 4.2 step 1
// and section 4.1 step 2: the sync that purges the init containers for a
// new sandbox starts the first one with the back-off of the status it began
// with, which still had the instance that had just crashed; the crash-loop
// back-off holds it.
func TestRule4_2_BackoffAcrossPurge(t *testing.T) {
	s := newSim(t, withSidecar(), DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	s.exit("side", 1)
	if got := startsOf(s.step()); !slices.Equal(got, []string{"StartContainer side restart=1"}) {
		t.Fatalf("the first crash restarts at once: %v", got)
	}
	s.settle()
	s.now = s.now.Add(time.Second)
	s.exit("side", 1)
	s.emit(Observation{Kind: SandboxNotReady})
	backedOff := false
	for i := 0; i < 6 && !backedOff; i++ {
		r := s.step()
		if got := startsOf(r); slices.Contains(got, "StartContainer side restart=2") {
			t.Fatalf("side started in the new sandbox 0 s after its crash: %v", got)
		}
		backedOff = hasEvent(r, ReasonBackOff, CrashLoopBackOffMessage("side", "foo", "foo-ns", "12345678"))
	}
	if !backedOff {
		t.Fatal("no crash-loop BackOff for side in the new sandbox")
	}
}

// TestRule4_1_PruneLooksPastRunning: section 4.1 step 3 counts exited and
// unknown instances only, so a running newest instance hides none of the
// older ones: of two exited instances behind it, the older one goes.
func TestRule4_1_PruneLooksPastRunning(t *testing.T) {
	s := newSnap(t, podPS())
	oldest := s.add("restartable-init-1", exited, 1).id
	s.add("restartable-init-1", exited, 1)
	s.add("restartable-init-1", running, 0)
	p := s.m.computePodActions(plan{})
	if want := []instRef{{c: 0, id: oldest}}; !slices.Equal(p.prune, want) {
		t.Fatalf("prune %v, want %v", p.prune, want)
	}
}
