package podlifecycle

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRule4_5_StatusOnlyUpdateIsNoSync: an update of the API pod that
// changes only its status and resourceVersion (the node's own status write
// coming back from a watch) syncs nothing, while a change of its labels,
// annotations or spec syncs at once (rule 4.5: the kubelet's pod config
// hands only semantic differences to the pod worker).
func TestRule4_5_StatusOnlyUpdateIsNoSync(t *testing.T) {
	s := newSim(t, onePod("app:1"), DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	before := s.m.nextWake()

	echo := s.pod.DeepCopy()
	echo.ResourceVersion = "42"
	echo.Status.Phase = v1.PodRunning
	echo.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
	s.pod = echo
	if r := s.step(); len(r.Statuses) != 0 || len(r.Actions) != 0 || !r.NextSync.Equal(before) {
		t.Fatalf("a status-only update synced: %d statuses, actions %v, next sync %v (was %v)", len(r.Statuses), r.Actions, r.NextSync, before)
	}
	for name, change := range map[string]func(p *v1.Pod){
		"label":      func(p *v1.Pod) { p.Labels = map[string]string{"tier": "web"} },
		"annotation": func(p *v1.Pod) { p.Annotations = map[string]string{"note": "x"} },
		"spec": func(p *v1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "k", Operator: v1.TolerationOpExists})
		},
	} {
		s.now = s.now.Add(time.Second)
		p := s.pod.DeepCopy()
		change(p)
		s.pod = p
		// A sync sets the next one at the resync interval from now.
		if r := s.step(); !r.NextSync.Equal(s.now.Add(DefaultOptions().SyncFrequency)) {
			t.Errorf("%s change: no sync (next sync +%v)", name, r.NextSync.Sub(s.now))
		}
	}
}

// TestChanged: the fields the kubelet's pod config compares, and nothing
// else (rule 4.5).
func TestChanged(t *testing.T) {
	base := onePod("app:1")
	grace := int64(30)
	tests := []struct {
		name   string
		change func(p *v1.Pod)
		want   bool
	}{
		{"identical copy", func(p *v1.Pod) {}, false},
		{"resourceVersion", func(p *v1.Pod) { p.ResourceVersion = "9" }, false},
		{"status", func(p *v1.Pod) { p.Status.Phase = v1.PodFailed; p.Status.Message = "x" }, false},
		{"generation alone", func(p *v1.Pod) { p.Generation = 3 }, false},
		{"labels", func(p *v1.Pod) { p.Labels = map[string]string{"a": "b"} }, true},
		{"annotations", func(p *v1.Pod) { p.Annotations = map[string]string{"a": "b"} }, true},
		{"deletionTimestamp", func(p *v1.Pod) { now := metav1.NewTime(t0); p.DeletionTimestamp = &now }, true},
		{"deletionGracePeriodSeconds", func(p *v1.Pod) { p.DeletionGracePeriodSeconds = &grace }, true},
		{"image", func(p *v1.Pod) { p.Spec.Containers[0].Image = "app:2" }, true},
		{"activeDeadlineSeconds", func(p *v1.Pod) { p.Spec.ActiveDeadlineSeconds = &grace }, true},
	}
	for _, tt := range tests {
		p := base.DeepCopy()
		tt.change(p)
		if got := Changed(base, p); got != tt.want {
			t.Errorf("%s: Changed = %v, want %v", tt.name, got, tt.want)
		}
	}
	if Changed(nil, nil) || !Changed(nil, base) || !Changed(base, nil) || Changed(base, base) {
		t.Error("nil and identical pods")
	}
	// A pod already being deleted: its grace compared by value.
	deleting := base.DeepCopy()
	deleting.DeletionGracePeriodSeconds = ptr(int64(30))
	same, shorter := deleting.DeepCopy(), deleting.DeepCopy()
	shorter.DeletionGracePeriodSeconds = ptr(int64(1))
	if Changed(deleting, same) || !Changed(deleting, shorter) {
		t.Errorf("deletionGracePeriodSeconds 30 to a copy of it: %v, to 1: %v; want false, true", Changed(deleting, same), Changed(deleting, shorter))
	}
	// What the machine reads of a pod besides its spec tells a grace or a
	// deadline of 1 from none.
	one := base.DeepCopy()
	one.DeletionGracePeriodSeconds = ptr(int64(1))
	if signature(one) == signature(base) {
		t.Error("a deletion grace of 1 has the signature of none")
	}
	one = base.DeepCopy()
	one.Spec.ActiveDeadlineSeconds = ptr(int64(1))
	if signature(one) == signature(base) {
		t.Error("an active deadline of 1 has the signature of none")
	}
}

// TestRule4_5_PulledThenCreateFailedWaitsForRequeue: a sync whose pull
// succeeds and whose container creation then fails ended with an error, so
// the pod is synced again at the error requeue (10 s), not at once: only a
// sync without error asks for an immediate relist (rules 4.1 and 4.5). The
// one exception is the sync that made the sandbox, whose relist finds the
// new sandbox and syncs at once, error or not, retrying the creation.
func TestRule4_5_PulledThenCreateFailedWaitsForRequeue(t *testing.T) {
	s := newSim(t, onePod("app"), DefaultOptions()) // untagged: pulled at every start
	s.step()                                        // the sandbox
	s.settle()                                      // pulled, created and started
	s.createFail["foo1"] = "failed to reserve container name"
	s.exit("foo1", 1) // the first crash: restarted in the sync its exit triggers
	r := s.step()
	if countKind(r, PullImage) != 1 || countKind(r, StartContainer) != 1 {
		t.Fatalf("want the pull and the start, got %v", r.Actions)
	}
	sync := s.now
	r = s.step() // ImagePulled, then ContainerCreateFailed
	if n := countKind(r, StartContainer); n != 0 {
		t.Fatalf("the failed creation was retried at once: %v", r.Actions)
	}
	if want := sync.Add(DefaultOptions().ErrorRequeue); !r.NextSync.Equal(want) {
		t.Fatalf("next sync at +%v, want the error requeue at +%v", r.NextSync.Sub(sync), want.Sub(sync))
	}
	s.now = r.NextSync
	if r := s.step(); countKind(r, StartContainer) != 1 {
		t.Fatalf("no start at the requeue: %v", r.Actions)
	}

	// The sync that made the sandbox.
	s = newSim(t, onePod("app"), DefaultOptions())
	s.createFail["foo1"] = "failed to reserve container name"
	s.step()
	s.step()
	if r := s.step(); countKind(r, StartContainer) != 1 || !r.NextSync.After(s.now) {
		t.Fatalf("the sandbox's relist sync: actions %v, next sync +%v; want a start, then the requeue", r.Actions, r.NextSync.Sub(s.now))
	}
}

// TestRule4_5_CrashLoopShowsErrorUntilTheRequeue: from the second crash on,
// the sync the exit triggers shows the container terminated with Error and
// records the back-off; the status turns CrashLoopBackOff only at the sync
// the back-off's requeue makes (its expiry), however many status-only
// updates arrive in between (spec/podlifecycle.md rules 4.3 and 4.5; what
// the real kubelet shows).
func TestRule4_5_CrashLoopShowsErrorUntilTheRequeue(t *testing.T) {
	s := newSim(t, onePod("app:1"), DefaultOptions())
	s.exitPastBackOff("foo1", 1) // the first crash restarts at once; this is the second run
	s.exit("foo1", 1)
	crash := s.now
	r := s.step()
	if got := waitingOrTerminated(r.Statuses); got != "Terminated/Error" {
		t.Fatalf("the exit's sync shows %s, want Terminated/Error", got)
	}
	if countKind(r, StartContainer) != 0 {
		t.Fatalf("restarted inside the back-off: %v", r.Actions)
	}
	backoff := containerstate.CrashLoopInitial // the second crash: the first back-off
	if want := crash.Add(backoff); !r.NextSync.Equal(want) {
		t.Fatalf("next sync at +%v, want the back-off's expiry +%v", r.NextSync.Sub(crash), backoff)
	}
	for i := 1; i < 5; i++ {
		s.now = crash.Add(time.Duration(i) * time.Second)
		echo := s.pod.DeepCopy()
		echo.ResourceVersion = "echo-" + string(rune('0'+i))
		s.pod = echo
		if r := s.step(); len(r.Statuses) != 0 {
			t.Fatalf("+%ds: a status-only update synced: %s", i, waitingOrTerminated(r.Statuses))
		}
	}
	s.now = crash.Add(backoff)
	r = s.step()
	if got := waitingOrTerminated(r.Statuses); got != "Waiting/CrashLoopBackOff" {
		t.Fatalf("the requeue's sync shows %s, want Waiting/CrashLoopBackOff", got)
	}
	if countKind(r, StartContainer) != 1 {
		t.Fatalf("no restart at the expiry: %v", r.Actions)
	}
}

// waitingOrTerminated renders the state of the first container of the last
// status: "Waiting/<reason>", "Terminated/<reason>", "Running" or "none".
func waitingOrTerminated(sts []v1.PodStatus) string {
	if len(sts) == 0 || len(sts[len(sts)-1].ContainerStatuses) == 0 {
		return "none"
	}
	st := sts[len(sts)-1].ContainerStatuses[0].State
	switch {
	case st.Waiting != nil:
		return "Waiting/" + st.Waiting.Reason
	case st.Terminated != nil:
		return "Terminated/" + st.Terminated.Reason
	case st.Running != nil:
		return "Running"
	}
	return "none"
}

// countKind counts the actions of kind k in r.
func countKind(r *Result, k ActionKind) int {
	n := 0
	for _, a := range r.Actions {
		if a.Kind == k {
			n++
		}
	}
	return n
}

// TestStartedImpliesCreated: a runtime that answers a start with the
// instance already running (or already exited), with no ContainerCreated
// before it, as a relist may first see a container in any state: the
// creation is implied, with its Created event; an instance of an ID no
// start is waiting for is still refused.
func TestStartedImpliesCreated(t *testing.T) {
	for _, kind := range []ObservationKind{ContainerStarted, ContainerExited} {
		m, err := New(DefaultOptions(), onePod("app:1"))
		if err != nil {
			t.Fatal(err)
		}
		pod := onePod("app:1")
		var res Result
		step := func(at time.Duration, obs ...Observation) {
			t.Helper()
			if err := m.StepTo(t0.Add(at), pod, obs, &res); err != nil {
				t.Fatalf("%v: %v", kind, err)
			}
		}
		step(0)
		step(0, Observation{Kind: SandboxReady, IP: "10.0.0.5"})
		if countKind(&res, StartContainer) != 1 {
			t.Fatalf("no start: %v", res.Actions)
		}
		step(time.Second, Observation{Kind: ImagePulled, Container: "foo1", Image: "app:1"},
			Observation{Kind: kind, Container: "foo1", ContainerID: "rt://foo1-1", ExitCode: 1})
		reasons := []string{}
		for _, e := range res.Events {
			reasons = append(reasons, e.Reason)
		}
		want := map[ObservationKind][]string{ContainerStarted: {ReasonPulled, ReasonCreated}, ContainerExited: {ReasonPulled, ReasonCreated}}[kind]
		if len(reasons) < 2 || reasons[0] != want[0] || reasons[1] != want[1] {
			t.Errorf("%v: events %v, want %v first", kind, reasons, want)
		}
		if kind != ContainerStarted {
			continue // the exit restarted the container: a start waits again
		}
		err = m.StepTo(t0.Add(2*time.Second), pod, []Observation{{Kind: ContainerStarted, Container: "foo1", ContainerID: "rt://other-9"}}, &res)
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%v: an instance no start waits for: %v", kind, err)
		}
	}
}

// TestRule6_Step5_StoppedContainerFailsItsProbes: section 6 step 5 and rule
// 4.5, measured on the real kubelet (oracle case "crashloop-readiness"): a
// probe worker that reads a status showing its container stopped stores
// Failure without probing; a readiness result that changes syncs the pod at
// once. So a crash-looping container with a readiness probe that passed
// shows Terminated/Error in the sync its exit triggers and, one probe
// period later, Waiting/CrashLoopBackOff (with a second BackOff event) until
// the restart. A container whose readiness never passed stores no change
// and causes no sync; a liveness worker stores Failure too; a container
// that will not run again ends its workers.
func TestRule6_Step5_StoppedContainerFailsItsProbes(t *testing.T) {
	withProbe := func(period int32, ready, live bool) *v1.Pod {
		p := onePod("app:1")
		probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}}, PeriodSeconds: period}
		if ready {
			p.Spec.Containers[0].ReadinessProbe = probe
		}
		if live {
			p.Spec.Containers[0].LivenessProbe = probe.DeepCopy()
		}
		return p
	}
	t.Run("readiness passed: CrashLoopBackOff a period after the exit", func(t *testing.T) {
		s := newSim(t, withProbe(2, true, false), DefaultOptions())
		s.exitPastBackOff("foo1", 1)
		s.now = s.now.Add(5 * time.Second) // probes ran; the new instance is ready
		s.settle()
		if !s.lastStatus().ContainerStatuses[0].Ready {
			t.Fatal("the restarted container never turned ready")
		}
		s.exit("foo1", 1)
		crash := s.now
		r := s.step()
		if got := waitingOrTerminated(r.Statuses); got != "Terminated/Error" {
			t.Fatalf("the exit's sync shows %s, want Terminated/Error", got)
		}
		tick := r.NextSync
		if d := tick.Sub(crash); d <= 0 || d > 2*time.Second {
			t.Fatalf("next wake +%v after the exit, want the readiness worker's next tick within its 2 s period", d)
		}
		s.now = tick
		r = s.step()
		if got := waitingOrTerminated(r.Statuses); got != "Waiting/CrashLoopBackOff" {
			t.Fatalf("the readiness Failure's sync shows %s, want Waiting/CrashLoopBackOff", got)
		}
		if n := countEvents(r, ReasonBackOff); n != 1 {
			t.Fatalf("%d BackOff events in the readiness Failure's sync, want 1 (a sync in back-off records one)", n)
		}
		if countKind(r, StartContainer) != 0 {
			t.Fatalf("restarted inside the back-off: %v", r.Actions)
		}
		if want := crash.Add(containerstate.CrashLoopInitial); !r.NextSync.Equal(want) {
			t.Fatalf("next sync at +%v, want the back-off's expiry +%v (Failure stored once, no more wakes)", r.NextSync.Sub(crash), want.Sub(crash))
		}
	})
	t.Run("readiness never passed: no change, no sync", func(t *testing.T) {
		s := newSim(t, withProbe(2, true, false), DefaultOptions())
		s.probe["foo1"] = ProbeFailure
		s.exitPastBackOff("foo1", 1)
		s.now = s.now.Add(5 * time.Second)
		s.settle()
		s.exit("foo1", 1)
		crash := s.now
		r := s.step()
		if want := crash.Add(containerstate.CrashLoopInitial); !r.NextSync.Equal(want) {
			t.Fatalf("next sync at +%v, want the back-off's expiry +%v: a Failure already stored changes nothing", r.NextSync.Sub(crash), want.Sub(crash))
		}
	})
	t.Run("liveness: Failure syncs", func(t *testing.T) {
		s := newSim(t, withProbe(3, false, true), DefaultOptions())
		s.exitPastBackOff("foo1", 1)
		s.now = s.now.Add(4 * time.Second)
		s.settle()
		s.exit("foo1", 1)
		crash := s.now
		r := s.step()
		if d := r.NextSync.Sub(crash); d <= 0 || d > 3*time.Second {
			t.Fatalf("next wake +%v after the exit, want the liveness worker's next tick", d)
		}
		s.now = r.NextSync
		if got := waitingOrTerminated(s.step().Statuses); got != "Waiting/CrashLoopBackOff" {
			t.Fatalf("the liveness Failure's sync shows %s, want Waiting/CrashLoopBackOff", got)
		}
	})
	t.Run("no restart: the worker ends after its Failure", func(t *testing.T) {
		p := withProbe(2, true, false)
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "foo2", Image: "busybox:1"}) // keeps the pod running
		s := newSim(t, p, DefaultOptions())
		s.settle()
		s.now = s.now.Add(5 * time.Second)
		s.settle()
		s.exit("foo1", 0)
		s.now = s.step().NextSync
		s.step()
		in := &s.m.find("foo1").insts[0]
		if ps := in.probes[Readiness-1]; !ps.ended || ps.result != containerstate.ProbeFailure {
			t.Fatalf("readiness worker %+v, want ended with Failure stored", ps)
		}
	})
}

// countEvents counts r's events of reason.
func countEvents(r *Result, reason string) int {
	n := 0
	for _, e := range r.Events {
		if e.Reason == reason {
			n++
		}
	}
	return n
}

// TestRule4_5_FailedPostStartHookSyncsTwice: a postStart hook that fails
// after running across a relist (1 s or longer) leaves the kubelet's pod
// worker one sync for the relist that found the container running, and the
// relist that sync waits for finds the kill's exit, which makes one more
// sync a relist later: the container shows PostStartHookError in the first,
// CrashLoopBackOff from the second, and each back-off records two BackOff
// events (rule 4.5; measured on the real kubelet: oracle case
// "poststart-fails"). No status shows the container between the hook's
// failure and its exit, since the kubelet kills it inside the sync that
// started it. A hook that fails at once leaves nothing for a relist to find
// in between: the back-off's expiry is the next sync.
func TestRule4_5_FailedPostStartHookSyncsTwice(t *testing.T) {
	for _, hookTook := range []time.Duration{time.Second, 300 * time.Millisecond} {
		pod := onePod("app:1")
		pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"false"}}}}
		s := newSim(t, pod, DefaultOptions())
		name := pod.Spec.Containers[0].Name
		s.hook[name] = true
		// The first failure is restarted at once; run to the second start.
		for i := 0; i < 20 && s.count(StartContainer, name) < 2; i++ {
			s.step()
		}
		if s.count(StartContainer, name) != 2 {
			t.Fatalf("no second start: %v", s.events())
		}
		// The second start's hook: its result comes hookTook later; the
		// kill is held so that the moment before the exit can be seen.
		hook := takeObs(s, hookResultObs)
		s.step() // created and started: nothing shown while the hook runs
		s.now = s.now.Add(hookTook)
		for _, o := range hook {
			o.At = s.now
			s.obs = append(s.obs, o)
		}
		s.holdKill[name] = true
		if r := s.step(); len(r.Statuses) != 0 || countKind(r, KillContainer) != 1 {
			t.Fatalf("hook took %v: the hook's failure: statuses %d (%s), actions %v; want the kill and no status", hookTook, len(r.Statuses), waitingOrTerminated(r.Statuses), r.Actions)
		}
		s.exit(name, 143)
		r := s.step()
		if got := waitingOrTerminated(r.Statuses); got != "Waiting/PostStartHookError" {
			t.Fatalf("hook took %v: the exit's sync shows %s, want Waiting/PostStartHookError", hookTook, got)
		}
		if !hasEvent(r, ReasonBackOff, "") {
			t.Fatalf("hook took %v: the exit's sync recorded no BackOff: %v", hookTook, r.Events)
		}
		exit := s.now
		if hookTook < time.Second {
			if want := exit.Add(containerstate.CrashLoopInitial); !r.NextSync.Equal(want) {
				t.Fatalf("hook took %v: next sync +%v, want the back-off's expiry +%v", hookTook, r.NextSync.Sub(exit), containerstate.CrashLoopInitial)
			}
			continue
		}
		if want := exit.Add(time.Second); !r.NextSync.Equal(want) {
			t.Fatalf("hook took %v: next sync +%v, want the next relist's, +1s", hookTook, r.NextSync.Sub(exit))
		}
		s.now = r.NextSync
		r = s.step()
		if got := waitingOrTerminated(r.Statuses); got != "Waiting/CrashLoopBackOff" || !hasEvent(r, ReasonBackOff, "") {
			t.Fatalf("the relist's sync shows %s with events %v, want Waiting/CrashLoopBackOff and a BackOff", got, r.Events)
		}
		if countKind(r, StartContainer) != 0 {
			t.Fatalf("restarted inside the back-off: %v", r.Actions)
		}
		if want := exit.Add(containerstate.CrashLoopInitial); !r.NextSync.Equal(want) {
			t.Fatalf("then next sync +%v, want the back-off's expiry +%v", r.NextSync.Sub(exit), containerstate.CrashLoopInitial)
		}
	}
}

// TestRule4_5_WaitOnAPullHoldsEverySync: while the sync under way waits on
// a pull (the kubelet's SyncPod blocks on it), nothing else syncs the pod:
// neither the active deadline that passes meanwhile nor a deletion shows in
// a status, and the deadline asks for no wake-up of its own; the pull's
// answer syncs the pod at once, which then fails it for the deadline (rule
// 4.5; measured on the real kubelet: the oracle's generated pods with an
// active deadline or a deletion during a slow pull).
func TestRule4_5_WaitOnAPullHoldsEverySync(t *testing.T) {
	for _, what := range []string{"deadline", "deletion"} {
		pod := onePod("app") // untagged: pulled
		if what == "deadline" {
			pod.Spec.ActiveDeadlineSeconds = ptr(int64(5))
		}
		s := newSim(t, pod, DefaultOptions())
		s.step() // the sandbox
		if r := s.step(); countKind(r, PullImage) != 1 {
			t.Fatalf("%s: no pull: %v", what, r.Actions)
		}
		answers := s.obs // the pull's, the creation's and the start's, held back
		s.obs = nil
		s.now = t0.Add(6 * time.Second)
		if what == "deletion" {
			s.pod = deleted(s.pod, s.now, 30)
		}
		r := s.step()
		if len(r.Statuses) != 0 || len(r.Actions) != 0 {
			t.Fatalf("%s during the pull: statuses %d (%s), actions %v; want none until the pull returns", what, len(r.Statuses), waitingOrTerminated(r.Statuses), r.Actions)
		}
		if what == "deadline" && !r.NextSync.IsZero() {
			t.Fatalf("%s during the pull: next sync +%v, want none: the pull's answer syncs", what, r.NextSync.Sub(t0))
		}
		s.now = t0.Add(8 * time.Second)
		for _, o := range answers {
			o.At = s.now
			s.obs = append(s.obs, o)
		}
		r = s.step()
		if what == "deadline" {
			if len(r.Statuses) == 0 || r.Statuses[0].Reason != "DeadlineExceeded" || !hasEvent(r, ReasonDeadlineExceeded, "") {
				t.Fatalf("the pull's answer: statuses %d, events %v; want the deadline's status at once", len(r.Statuses), r.Events)
			}
			continue
		}
		if countKind(r, KillContainer) != 1 {
			t.Fatalf("the pull's answer: actions %v, want the started container killed for the deletion", r.Actions)
		}
	}
}

// TestRule3_8_DeletionDoesNotCancelThePostStartHook: a deletion while a
// container's postStart hook runs does not cancel the hook (the kubelet
// runs SyncPod on a context no deletion cancels): no FailedPostStartHook,
// neither at the deletion nor when the hook's result comes, and the
// container is stopped by the termination ("Stopping container"), like
// the others (rule 3.8; measured on the real kubelet: the oracle's
// generated pod gen-112, deleted with grace 0 during a 4 s hook, recorded
// Killing "Stopping container app0" and no FailedPostStartHook, on both
// oracle nodes).
func TestRule3_8_DeletionDoesNotCancelThePostStartHook(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	pod.Spec.Containers[0].Image, pod.Spec.Containers[1].Image = "app:1", "app:1"
	pod.Spec.Containers[1].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"warm"}}}}
	s := newSim(t, pod, DefaultOptions())
	for i := 0; i < 5 && s.count(StartContainer, "foo2") == 0; i++ {
		s.step()
	}
	hook := takeObs(s, hookResultObs)
	s.step() // created and started; the hook runs
	s.now = s.now.Add(2 * time.Second)
	s.pod = deleted(s.pod, s.now, 30)
	s.step()
	for _, o := range hook {
		o.At = s.now // the hook's own result, a success, after the deletion
		s.obs = append(s.obs, o)
	}
	s.settle()
	events := s.events()
	for _, e := range events {
		if strings.Contains(e, ReasonFailedPostStartHook) {
			t.Fatalf("the hook failed at the deletion: %v", events)
		}
	}
	if !slices.ContainsFunc(events, func(e string) bool { return strings.Contains(e, "Stopping container foo2") }) {
		t.Fatalf("foo2 not stopped by the termination: %v", events)
	}
}

// TestRule4_5_FinishedAsksForNoWake: the Step that finishes a pod asks for
// no wake-up, even when a probe worker of a stopped container would tick
// again: nothing of a finished pod is synced or probed (rule 4.5).
func TestRule4_5_FinishedAsksForNoWake(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}}, PeriodSeconds: 10}
	name := pod.Spec.Containers[0].Name
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = s.now.Add(3 * time.Second)
	s.exit(name, 0)
	for i := 0; i < 20; i++ {
		r := s.step()
		if r.Finished {
			if !r.NextSync.IsZero() {
				t.Fatalf("the finishing Step asks for a wake-up at +%v", r.NextSync.Sub(t0))
			}
			return
		}
		if len(s.obs) == 0 {
			if r.NextSync.IsZero() {
				t.Fatal("not finished and no wake-up")
			}
			s.now = r.NextSync
		}
	}
	t.Fatal("the pod did not finish")
}

func hookResultObs(o Observation) bool { return o.Kind == HookResult }
