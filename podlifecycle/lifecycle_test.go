package podlifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func dump(t *testing.T, s *sim) {
	t.Helper()
	for i, r := range s.all {
		var st []string
		for _, x := range r.Statuses {
			st = append(st, string(x.Phase))
		}
		t.Logf("step %d: actions %v statuses %v next %v state %v", i, actionsOf(&r), st, r.NextSync.Sub(t0), r.State)
		for _, e := range r.Events {
			t.Logf("    %s %s %q %s", e.Type, e.Reason, e.Message, e.FieldPath)
		}
	}
}

// lastStatus is the newest status the sim's machine produced.
func (s *sim) lastStatus() *v1.PodStatus {
	for i := len(s.all) - 1; i >= 0; i-- {
		if n := len(s.all[i].Statuses); n > 0 {
			return &s.all[i].Statuses[n-1]
		}
	}
	return nil
}

func waiting(st *v1.PodStatus, name string) string {
	for _, l := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for _, c := range l {
			if c.Name == name && c.State.Waiting != nil {
				return c.State.Waiting.Reason + ": " + c.State.Waiting.Message
			}
		}
	}
	return ""
}

func condition(st *v1.PodStatus, t v1.PodConditionType) v1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func hasEvent(r *Result, reason, msg string) bool {
	for _, e := range r.Events {
		if e.Reason == reason && (msg == "" || e.Message == msg) {
			return true
		}
	}
	return false
}

func onePod(image string) *v1.Pod {
	p := podP3()
	p.Spec.Containers = p.Spec.Containers[:1]
	p.Spec.Containers[0].Image = image
	return p
}

// TestRule2_1And15_6_FirstSyncAndSandbox: the first status fixes startTime
// (rule 2.1); the sandbox comes first and PodReadyToStartContainers turns
// True in the status of the sync that sees it ready, before any pull
// (rule 2.2, section 15 decision 6), with nothing else changed: the pod IP
// shows after the starts.
func TestRule2_1And15_6_FirstSyncAndSandbox(t *testing.T) {
	s := newSim(t, onePod("busybox:1"), DefaultOptions())
	r := s.step()
	if got := actionsOf(r); !slices.Equal(got, []string{"CreateSandbox attempt=0"}) {
		t.Fatalf("first sync actions %v", got)
	}
	if len(r.Statuses) != 1 || r.Statuses[0].StartTime == nil || !r.Statuses[0].StartTime.Time.Equal(t0) {
		t.Fatalf("first status must fix startTime at now: %+v", r.Statuses)
	}
	if c := condition(&r.Statuses[0], v1.PodReadyToStartContainers); c != v1.ConditionFalse {
		t.Fatalf("PodReadyToStartContainers before the sandbox: %q", c)
	}
	r = s.step()
	if len(r.Statuses) != 1 || condition(&r.Statuses[0], v1.PodReadyToStartContainers) != v1.ConditionTrue {
		t.Fatalf("second version must have PodReadyToStartContainers True: %+v", r.Statuses)
	}
	if got := actionsOf(r); !slices.Equal(got, []string{"PullImage foo1 busybox:1 IfNotPresent", "StartContainer foo1"}) {
		t.Fatalf("second sync actions %v", got)
	}
	// The kubelet's sandbox-ready callback sets the condition in the status
	// it wrote last: the IP shows in the status of the sync after the
	// pulls and starts (oracle case "image-pull-slow").
	if r.Statuses[0].PodIP != "" {
		t.Fatalf("pod IP %q in the sandbox-ready version, want none yet", r.Statuses[0].PodIP)
	}
	r = s.step() // the pull and the start answered: the relist on demand
	if len(r.Statuses) == 0 || r.Statuses[len(r.Statuses)-1].PodIP != "10.0.0.1" {
		t.Fatalf("no status with the pod IP after the starts: %+v", r.Statuses)
	}
}

// TestRule2_3_InitContainersOneAtATime: init containers start one at a time
// in spec order, the regular containers all in one sync after the last
// (rules 2.3, 2.5, 3.5).
func TestRule2_3_InitContainersOneAtATime(t *testing.T) {
	s := newSim(t, podPI(), DefaultOptions())
	s.m.images["bar-image"], s.m.images["busybox"] = true, true // IfNotPresent... busybox defaults to Always
	var starts [][]string
	for i := 0; i < 12; i++ {
		r := s.step()
		var st []string
		for _, a := range r.Actions {
			if a.Kind == StartContainer {
				st = append(st, a.Container)
				if strings.HasPrefix(a.Container, "init") {
					s.now = s.now.Add(time.Second)
					s.exit(a.Container, 0)
				}
			}
		}
		if st != nil {
			starts = append(starts, st)
		}
	}
	want := [][]string{{"init1"}, {"init2"}, {"init3"}, {"foo1", "foo2", "foo3"}}
	if d := cmp.Diff(want, starts); d != "" {
		t.Fatalf("starts (-want +got):\n%s", d)
	}
	st := s.lastStatus()
	if st.Phase != v1.PodRunning || condition(st, v1.PodInitialized) != v1.ConditionTrue {
		t.Fatalf("phase %s, Initialized %s", st.Phase, condition(st, v1.PodInitialized))
	}
}

// TestRule2_4_SidecarStartupProbeGates: the init container after a sidecar
// waits for the sidecar's startup probe Success; liveness does not gate
// (rule 2.4, 3.5 step 3, section 6); the probe ticks on its worker's
// ticker, which runs from the pod's first sync.
func TestRule2_4_SidecarStartupProbeGates(t *testing.T) {
	pod := onePod("busybox:1")
	sc := v1.Container{Name: "sc", Image: "busybox:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways),
		StartupProbe: &v1.Probe{PeriodSeconds: 5, InitialDelaySeconds: 3, FailureThreshold: 3}}
	pod.Spec.InitContainers = []v1.Container{sc}
	s := newSim(t, pod, DefaultOptions())
	s.probe["sc"] = ProbeFailure
	s.settle()
	if s.count(StartContainer, "foo1") > 0 {
		t.Fatal("foo1 started before the sidecar's startup probe succeeded")
	}
	// The worker's ticker runs from the pod's first sync (t0) every 5 s;
	// its first tick at which the sidecar is 3 s old probes (section 6).
	next := s.all[len(s.all)-1].NextSync
	if !next.Equal(t0.Add(5 * time.Second)) {
		t.Fatalf("first probe due at the worker's first tick after start + initialDelay (+5s): got %v", next.Sub(t0))
	}
	s.now = next
	r := s.step()
	if got := actionsOf(r); !slices.Equal(got, []string{"RunProbe sc Startup"}) {
		t.Fatalf("probe tick: %v", got)
	}
	s.probe["sc"] = ProbeSuccess
	r = s.step()
	if !hasEvent(r, ReasonUnhealthy, "Startup probe failed: probe output") {
		t.Fatalf("no Unhealthy event: %v", r.Events)
	}
	if !r.NextSync.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("next tick at %v, want +10s", r.NextSync.Sub(t0))
	}
	s.now = r.NextSync
	s.step()
	r = s.step()
	if got := actionsOf(r); !slices.Contains(got, "StartContainer foo1") {
		t.Fatalf("foo1 must start once the startup probe succeeded: %v", got)
	}
}

// TestRule4_2_CrashLoopBackOff: the first crash restarts at once, the next
// ones wait 10 s, 20 s, 40 s...; the Warning BackOff event names the pod;
// the CrashLoopBackOff Waiting reason shows at the next sync, which is due at
// the expiry (rules 4.2, 4.5, section 12 pitfalls 2 and 11, section 15
// decision 1).
func TestRule4_2_CrashLoopBackOff(t *testing.T) {
	pod := onePod("busybox:1")
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	var delays []time.Duration
	for i := 0; i < 4; i++ {
		s.exit("foo1", 1)
		r := s.step()
		if len(actionsOf(r)) > 0 {
			// restarted at once
			s.step()
			continue
		}
		if !hasEvent(r, ReasonBackOff, "Back-off restarting failed container foo1 in pod foo_foo-ns(12345678)") {
			t.Fatalf("no BackOff event: %v", r.Events)
		}
		if r.Events[0].Type != v1.EventTypeWarning {
			t.Fatal("crash-loop BackOff must be Warning")
		}
		d := r.NextSync.Sub(s.now)
		delays = append(delays, d)
		s.now = r.NextSync
		r = s.step()
		if w := waiting(&r.Statuses[0], "foo1"); !strings.HasPrefix(w, "CrashLoopBackOff: back-off "+d.String()+" restarting failed container=foo1 pod=foo_foo-ns(12345678)") {
			t.Fatalf("status at the expiry: %q", w)
		}
		if got := actionsOf(r); !slices.Equal(got, []string{"StartContainer foo1 restart=" + string(rune('0'+len(delays)+1))}) {
			t.Fatalf("restart at expiry: %v", got)
		}
		s.step()
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second}
	if d := cmp.Diff(want, delays); d != "" {
		t.Fatalf("delays (-want +got):\n%s", d)
	}
}

// TestPL41_PullBackOff: IfNotPresent, image absent, pull error 404, back-off
// 1 s doubling, calls 1 s apart: ErrImagePull twice, ImagePullBackOff,
// ErrImagePull, ImagePullBackOff twice; Pull BackOff is Normal (section 5).
func TestPL41_PullBackOff(t *testing.T) {
	opts := DefaultOptions()
	opts.ImagePullBackoff = containerstate.BackoffOptions{Initial: time.Second, Max: time.Minute, ResetAfter: 2 * time.Minute}
	pod := onePod("missing:1")
	s := newSim(t, pod, opts)
	s.pullOK["missing:1"] = false
	s.step() // sandbox
	var got []string
	for i := 0; i < 6; i++ {
		// A pod update (here a label) syncs at once (rule 4.5), so each
		// call is a sync.
		s.pod = s.pod.DeepCopy()
		s.pod.Labels = map[string]string{"update": string(rune('a' + i))}
		r := s.step()
		for _, e := range r.Events {
			switch {
			case e.Reason == ReasonPulling:
				got = append(got, "ErrImagePull")
			case e.Reason == ReasonBackOff:
				if e.Type != v1.EventTypeNormal || e.Message != `Back-off pulling image "missing:1"` {
					t.Fatalf("pull BackOff event %+v", e)
				}
				got = append(got, "ImagePullBackOff")
			case e.Reason == ReasonFailed && i > 0 && e.Message == `Failed to pull image "missing:1": 404`:
			}
		}
		s.now = s.now.Add(time.Second)
	}
	want := []string{"ErrImagePull", "ErrImagePull", "ImagePullBackOff", "ErrImagePull", "ImagePullBackOff", "ImagePullBackOff"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	ev := s.events()
	for _, w := range []string{
		`Normal Pulling Pulling image "missing:1" spec.containers{foo1}`,
		`Warning Failed Failed to pull image "missing:1": 404 spec.containers{foo1}`,
		`Warning Failed Error: ErrImagePull spec.containers{foo1}`,
		`Warning Failed Error: ImagePullBackOff spec.containers{foo1}`,
	} {
		if !slices.Contains(ev, w) {
			t.Errorf("missing event %q", w)
		}
	}
	if w := waiting(s.lastStatus(), "foo1"); !strings.HasPrefix(w, "ImagePullBackOff: Back-off pulling image \"missing:1\": ErrImagePull: 404") &&
		!strings.HasPrefix(w, "ErrImagePull: 404") {
		t.Fatalf("waiting %q", w)
	}
}

// TestRule4_5_PullErrorRequeue: a pull error in the sync that made the
// sandbox is followed at once by the sync the relist makes for the new
// sandbox (rule 4.5; oracle case "image-pull-fails": ErrImagePull shows
// about a second after the start), whose status shows ErrImagePull and
// which finds the image in back-off (ImagePullBackOff, a BackOff event);
// that sync's error requeues after 10 s (section 15 decision 5), whose sync
// shows ImagePullBackOff and pulls again, the back-off being over.
func TestRule4_5_PullErrorRequeue(t *testing.T) {
	s := newSim(t, onePod("missing:1"), DefaultOptions())
	s.pullOK["missing:1"] = false
	s.step()
	s.step()
	r := s.step() // the failure, and the relist's sync at once
	if len(r.Statuses) != 1 || len(r.Actions) != 0 {
		t.Fatalf("statuses %d, actions %v: want the relist's sync, which pulls nothing in back-off", len(r.Statuses), actionsOf(r))
	}
	if w := waiting(&r.Statuses[0], "foo1"); w != "ErrImagePull: 404" {
		t.Fatalf("the relist's sync shows %q, want the failure (4.3)", w)
	}
	if !hasEvent(r, ReasonBackOff, `Back-off pulling image "missing:1"`) {
		t.Fatalf("no BackOff event in the relist's sync: %v", r.Events)
	}
	if d := r.NextSync.Sub(s.now); d != 10*time.Second {
		t.Fatalf("requeue %v, want the error requeue of 10 s", d)
	}
	s.now = r.NextSync
	r = s.step()
	if w := waiting(&r.Statuses[0], "foo1"); !strings.HasPrefix(w, "ImagePullBackOff: ") {
		t.Fatalf("the requeue's sync shows %q, want ImagePullBackOff (4.3)", w)
	}
	if got := actionsOf(r); !slices.Equal(got, []string{"PullImage foo1 missing:1 IfNotPresent", "StartContainer foo1"}) {
		t.Fatalf("back-off of 10 s is over at the requeue: %v", got)
	}
}

// TestPL44_MissingPullSecrets: a failed pull with missing named secrets adds
// FailedToRetrieveImagePullSecret.
func TestPL44_MissingPullSecrets(t *testing.T) {
	pod := onePod("missing:latest")
	pod.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "missing"}}
	m, err := New(DefaultOptions(), pod)
	if err != nil {
		t.Fatal(err)
	}
	m.Step(t0, pod, nil)
	r, _ := m.Step(t0, pod, []Observation{{Kind: SandboxReady, IP: "10.0.0.1"}})
	if got := actionsOf(&r); !slices.Equal(got, []string{"PullImage foo1 missing:latest Always", "StartContainer foo1"}) {
		t.Fatalf("actions %v", got)
	}
	r, err = m.Step(t0.Add(time.Second), pod, []Observation{{Kind: ImagePullFailed, Container: "foo1", Image: "missing:latest", Message: "404", MissingSecrets: []string{"missing"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !hasEvent(&r, ReasonFailedToRetrieveImagePullSecret, "Unable to retrieve some image pull secrets (missing); attempting to pull the image may not succeed.") {
		t.Fatalf("events %v", r.Events)
	}
	// The sandbox's relist syncs at once (rule 4.5): its status shows the failure.
	if w := waiting(&r.Statuses[len(r.Statuses)-1], "foo1"); !strings.HasPrefix(w, "ErrImagePull") {
		t.Fatalf("waiting %q", w)
	}
}

// TestPL45_NoEventsInSteadyState: a second sync with nothing changed records
// no event and no action.
func TestPL45_NoEventsInSteadyState(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.Containers[0].ImagePullPolicy = v1.PullIfNotPresent
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = s.all[len(s.all)-1].NextSync // the resync
	r := s.step()
	if len(r.Events) != 0 || len(r.Actions) != 0 || len(r.Statuses) != 0 {
		t.Fatalf("steady state: %+v", r)
	}
	if !r.NextSync.Equal(s.now.Add(time.Minute)) {
		t.Fatalf("resync %v", r.NextSync.Sub(s.now))
	}
}

// TestPL42_CrashLoopBackOffMessage: with a 1 s initial back-off, a container
// that exits again at once is held 1 s with the kubelet's message.
func TestPL42_CrashLoopBackOffMessage(t *testing.T) {
	opts := DefaultOptions()
	opts.CrashLoop.ReduceDefaultDecay = true
	pod := onePod("busybox:1")
	pod.Name, pod.Namespace = "foo", "new"
	pod.Spec.Containers[0].Name = "foocontainer"
	s := newSim(t, pod, opts)
	s.settle()
	s.exit("foocontainer", 1)
	s.step() // restarted at once, key advanced at finishedAt
	s.step()
	s.exit("foocontainer", 1)
	r := s.step()
	if !r.NextSync.Equal(s.now.Add(time.Second)) {
		t.Fatalf("expiry %v", r.NextSync.Sub(s.now))
	}
	s.now = s.now.Add(time.Second)
	r = s.step()
	if w := waiting(&r.Statuses[0], "foocontainer"); w != "CrashLoopBackOff: back-off 1s restarting failed container=foocontainer pod=foo_new(12345678)" {
		t.Fatalf("waiting %q", w)
	}
}

// TestPL43_ActiveDeadline: the deadline counts from startTime.
func TestPL43_ActiveDeadline(t *testing.T) {
	for _, tc := range []struct {
		id       string
		deadline *int64
		start    bool
		want     bool
	}{
		{"PL43 deadline 30 passed", ptr(int64(30)), true, true},
		{"PL43 deadline 120 not yet", ptr(int64(120)), true, false},
		{"PL43 no deadline", nil, true, false},
		{"PL43 no startTime", ptr(int64(30)), false, false},
	} {
		t.Run(tc.id, func(t *testing.T) {
			pod := onePod("busybox:1")
			pod.Spec.ActiveDeadlineSeconds = tc.deadline
			if tc.start {
				pod.Status.StartTime = &metav1.Time{Time: t0.Add(-time.Minute)}
			}
			s := newSim(t, pod, DefaultOptions())
			r := s.step()
			got := hasEvent(r, ReasonDeadlineExceeded, MessageDeadlineExceeded)
			if got != tc.want {
				t.Fatalf("DeadlineExceeded event %v, want %v", got, tc.want)
			}
			if tc.want {
				st := r.Statuses[0]
				if st.Phase != v1.PodFailed || st.Reason != "DeadlineExceeded" || st.Message != MessageDeadlineExceeded {
					t.Fatalf("status %s %s %s", st.Phase, st.Reason, st.Message)
				}
				if r.Events[0].Type != v1.EventTypeNormal || r.Events[0].FieldPath != "" {
					t.Fatalf("event %+v", r.Events[0])
				}
				s.settle()
				if !s.all[len(s.all)-1].Finished {
					t.Fatal("a pod past its deadline must end")
				}
			}
		})
	}
}

// TestRule8_DeadlineWakeUp: the next sync is due at startTime +
// activeDeadlineSeconds (section 8, 11.4).
func TestRule8_DeadlineWakeUp(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.ActiveDeadlineSeconds = ptr(int64(30))
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(45))
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	if next := s.all[len(s.all)-1].NextSync; !next.Equal(t0.Add(30 * time.Second)) {
		t.Fatalf("next %v", next.Sub(t0))
	}
	s.now = t0.Add(30 * time.Second)
	r := s.step()
	if !hasEvent(r, ReasonDeadlineExceeded, "") || r.State != Terminating {
		t.Fatalf("at the deadline: %+v", r)
	}
	if got := actionsOf(r); !slices.Equal(got, []string{"KillContainer foo1 grace=45s reason=Unknown"}) {
		t.Fatalf("kill with the pod grace: %v", got)
	}
}

// TestTerminalStatusKeepsPodIP: once no ready sandbox reports an IP, the
// status keeps the IPs of the previous one, as the kubelet's PLEG does for a
// pod without a ready sandbox and its terminal status does since
// kubernetes/kubernetes#125370: a pod that ran to completion shows its IP.
func TestTerminalStatusKeepsPodIP(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.exit("foo1", 0)
	s.settle()
	last := s.all[len(s.all)-1]
	if !last.Finished {
		t.Fatal("the pod did not finish")
	}
	var final *v1.PodStatus
	for i := range s.all {
		for j := range s.all[i].Statuses {
			final = &s.all[i].Statuses[j]
		}
	}
	if final == nil || final.Phase != v1.PodSucceeded || final.PodIP != "10.0.0.1" || len(final.PodIPs) != 1 || final.PodIPs[0].IP != "10.0.0.1" {
		t.Fatalf("terminal status %+v, want Succeeded with pod IP 10.0.0.1", final)
	}
}

// halfRand is a Rand whose every draw is 0.5: a jittered wait lasts a
// quarter more.
type halfRand struct{}

func (halfRand) Float64() float64 { return 0.5 }

// TestRule4_5_Jitter: with Options.Rand the pod worker's waits are
// jittered by up to half (wait.Jitter with factor 0.5, section 15 decision
// 5): the error requeue after a sync that found the image in back-off and
// after a failed pull, and the wait for a crash-loop back-off's end.
func TestRule4_5_Jitter(t *testing.T) {
	opts := DefaultOptions()
	opts.Rand = halfRand{}
	t.Run("error requeue", func(t *testing.T) {
		s := newSim(t, onePod("missing:1"), opts)
		s.pullOK["missing:1"] = false
		s.step()
		s.step()
		r := s.step() // the failure, and the relist's sync at once
		if d := r.NextSync.Sub(s.now); d != 12500*time.Millisecond {
			t.Fatalf("requeue %v, want 10 s and a quarter", d)
		}
		s.now = r.NextSync
		if got := actionsOf(s.step()); !slices.Contains(got, "PullImage foo1 missing:1 IfNotPresent") {
			t.Fatalf("actions %v, want the pull again", got)
		}
		r = s.step() // the pull fails again
		if d := r.NextSync.Sub(s.now); d != 12500*time.Millisecond {
			t.Fatalf("requeue after the failed pull %v, want 10 s and a quarter", d)
		}
	})
	t.Run("crash-loop back-off", func(t *testing.T) {
		s := newSim(t, onePod("busybox:1"), opts)
		s.settle()
		s.now = s.now.Add(time.Minute)
		s.exit("foo1", 1)
		s.settle() // the first restart, at once
		s.now = s.now.Add(time.Minute)
		s.exit("foo1", 1)
		r := s.step()
		if got := actionsOf(r); len(got) != 0 {
			t.Fatalf("actions %v, want the back-off", got)
		}
		if d := r.NextSync.Sub(s.now); d != 12500*time.Millisecond {
			t.Fatalf("next sync %v after the crash, want the 10 s back-off and a quarter", d)
		}
	})
}
