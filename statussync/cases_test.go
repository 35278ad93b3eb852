package statussync

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/internal/podcond"
)

func wantRequests(t *testing.T, id string, got map[string]int, want map[string]int) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: API requests mismatch (-want +got):\n%s", id, d)
	}
}

// S1: a first status is version 1 and gets a start time.
func TestS1FirstStatus(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := testPod("u1", "p1", "app")
	if !h.set(pod, runningStatus("app")) {
		t.Fatal("S1: the first status is a change")
	}
	if v := h.cache.Version(pod.UID); v != 1 {
		t.Errorf("S1: version %d, want 1", v)
	}
	s, _ := h.cache.GetPodStatus(pod.UID)
	if s.StartTime == nil || s.StartTime.IsZero() {
		t.Error("S1: the cached StartTime is set")
	}
}

// S2 and S5: startTime comes from the pod when nothing is cached, and never
// changes once set.
func TestS2S5StartTime(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := testPod("u1", "p1")
	earlier := metav1.NewTime(t0.Add(-time.Minute))
	pod.Status.StartTime = &earlier
	h.set(pod, runningStatus("app"))
	s, _ := h.cache.GetPodStatus(pod.UID)
	if !s.StartTime.Equal(&earlier) {
		t.Errorf("S2: StartTime %v, want the pod's %v", s.StartTime, earlier)
	}

	h = newHarness(t, DefaultOptions())
	pod = testPod("u2", "p2")
	first := metav1.NewTime(t0.Add(1500 * time.Millisecond))
	st := runningStatus("app")
	st.StartTime = &first
	h.set(pod, st)
	h.clock.Step(time.Minute)
	st2 := runningStatus("app")
	st2.Conditions = []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue)}
	h.set(pod, st2)
	s, _ = h.cache.GetPodStatus(pod.UID)
	if want := metav1.NewTime(t0.Add(time.Second)); !s.StartTime.Equal(&want) {
		t.Errorf("S5: StartTime %v, want the first value cut to seconds %v", s.StartTime, want)
	}
}

// S4, S7, S10, S13: each real change is one update; an equal status none.
func TestS4S7S10S13Updates(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := h.create(testPod("u1", "p1", "app"))
	var last map[string]int
	h.set(pod, runningStatus("app"))
	if h.set(pod, runningStatus("app")) {
		t.Error("S7: setting the same status again before a sync is no change")
	}
	if v := h.cache.Version(pod.UID); v != 1 {
		t.Errorf("S7: version %d, want 1", v)
	}
	h.sync()
	wantRequests(t, "S10", h.requests(&last), map[string]int{"get": 1, "patch": 1})
	b := runningStatus("app")
	b.Conditions = []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue)}
	h.set(pod, b)
	h.sync()
	wantRequests(t, "S4", h.requests(&last), map[string]int{"get": 1, "patch": 1})
	if h.set(pod, b) {
		t.Error("S13: the last status again is no change")
	}
	h.sync()
	wantRequests(t, "S13", h.requests(&last), map[string]int{})
	got, _ := h.api.Pod("default", "p1")
	if c := podcond.Find(got.Status.Conditions, v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("S4: the server holds the second status, got %+v", got.Status.Conditions)
	}
}

// S8 and S40: lastTransitionTime is kept while a condition's status does not
// change, and is now when it changes; the caller's value is overwritten.
func TestS8S40TransitionTimes(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := h.create(testPod("u1", "p1", "app"))
	s := runningStatus("app")
	ready := cond(v1.PodReady, v1.ConditionTrue)
	ready.LastTransitionTime = metav1.NewTime(t0.Add(-time.Hour)) // the caller's, overwritten
	s.Conditions = []v1.PodCondition{ready}
	h.set(pod, s)
	c, _ := h.cache.GetPodStatus(pod.UID)
	if got := podcond.Find(c.Conditions, v1.PodReady).LastTransitionTime; !got.Time.Equal(t0) {
		t.Errorf("S40 no old condition: LTT %v, want now %v", got, t0)
	}
	h.sync()
	h.clock.Step(time.Minute)
	var last = h.api.Requests()
	if h.set(pod, s) {
		t.Error("S8: the same Ready=True again is no update")
	}
	h.sync()
	wantRequests(t, "S8", h.requests(&last), map[string]int{})
	s.Conditions = []v1.PodCondition{cond(v1.PodReady, v1.ConditionFalse)}
	h.set(pod, s)
	c, _ = h.cache.GetPodStatus(pod.UID)
	if got := podcond.Find(c.Conditions, v1.PodReady).LastTransitionTime; !got.Time.Equal(t0.Add(time.Minute)) {
		t.Errorf("S40 status changed: LTT %v, want now", got)
	}
	s.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "Other"}}
	h.clock.Step(time.Minute)
	h.set(pod, s)
	c, _ = h.cache.GetPodStatus(pod.UID)
	if got := podcond.Find(c.Conditions, v1.PodReady).LastTransitionTime; !got.Time.Equal(t0.Add(time.Minute)) {
		t.Errorf("S40 status same: the old LTT is kept, got %v", got)
	}
}

// S11: the server has another pod under the name: the entry is dropped.
func TestS11Recreated(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	h.create(testPod("first", "p1"))
	second := testPod("second", "p1")
	h.set(second, runningStatus("app"))
	var last map[string]int
	r := h.sync()
	wantRequests(t, "S11", h.requests(&last), map[string]int{"get": 1})
	if _, ok := h.cache.GetPodStatus("second"); ok || r.Attempted != 1 {
		t.Errorf("S11: the entry for the recreated pod is dropped (result %+v)", r)
	}
}

// S14: a status the server already has is recorded without a patch.
func TestS14NoOpPatch(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := h.create(testPod("u1", "p1"))
	h.set(pod, runningStatus("app"))
	h.sync()
	h.engine.planner.states[pod.UID].apiVersion-- // as if the write was not recorded
	var last = h.api.Requests()
	h.engine.SyncOnce(context.Background(), true)
	wantRequests(t, "S14", h.requests(&last), map[string]int{"get": 1})
	if h.engine.planner.states[pod.UID].apiVersion != h.cache.Version(pod.UID) {
		t.Error("S14: the version is recorded again")
	}
}

// S16: conditions the kubelet does not own do not make a status differ.
func TestS16NonOwnedIgnored(t *testing.T) {
	o := DefaultOptions()
	a, b := runningStatus("app"), runningStatus("app")
	a.Conditions = []v1.PodCondition{cond("www.example.com/feature", v1.ConditionTrue)}
	b.Conditions = []v1.PodCondition{cond("www.example.com/feature", v1.ConditionFalse)}
	if !o.EqualByKubelet(&a, &b) {
		t.Error("S16: a non-kubelet condition is ignored")
	}
	b.Conditions = append(b.Conditions, cond(v1.PodReady, v1.ConditionTrue))
	if o.EqualByKubelet(&a, &b) {
		t.Error("6.1: an owned condition present on one side only is a difference")
	}
	if o.EqualByKubelet(&b, &a) {
		t.Error("6.1: removing an owned condition is a difference too")
	}
	a.ObservedGeneration = 2
	plain := runningStatus("app")
	if o.EqualByKubelet(&a, &plain) {
		t.Error("6.1: the status observedGeneration is compared")
	}
}

// S17: each terminated message is cut to 12 KiB divided by the number of
// containers in the spec. (Upstream's test uses a spec without containers;
// nodestate refuses statuses for containers the spec lacks, so the spec here
// has the 48 containers.)
func TestS17MessageTruncation(t *testing.T) {
	var names []string
	for i := 0; i < 48; i++ {
		names = append(names, "c"+strings.Repeat("x", i))
	}
	pod := testPod("u1", "p1", names...)
	s := v1.PodStatus{Phase: v1.PodRunning}
	for i, n := range names {
		msg := strings.Repeat("m", 200)
		if i%2 == 0 {
			msg = strings.Repeat("m", 1000)
		}
		s.ContainerStatuses = append(s.ContainerStatuses, v1.ContainerStatus{Name: n,
			State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Message: msg}}})
	}
	h := newHarness(t, DefaultOptions())
	h.set(pod, s)
	got, _ := h.cache.GetPodStatus(pod.UID)
	total := 0
	for _, cs := range got.ContainerStatuses {
		n := len(cs.State.Terminated.Message)
		if n < 192 || n > 256 {
			t.Errorf("S17: message of %s is %d bytes, want 192..256", cs.Name, n)
		}
		total += n
	}
	if total > 12*1024 {
		t.Errorf("S17: total %d bytes exceeds 12 KiB", total)
	}
}

type fakeMirrors struct{ static, mirror types.UID }

func (f *fakeMirrors) MirrorUID(uid types.UID) (types.UID, bool) {
	if uid == f.static {
		return f.mirror, true
	}
	return "", false
}

func (f *fakeMirrors) StaticUID(uid types.UID) types.UID {
	if f.mirror != "" && uid == f.mirror {
		return f.static
	}
	return uid
}

// S19, S20: a static pod is synced only once its mirror pod exists, to the
// mirror pod.
func TestS19S20StaticPods(t *testing.T) {
	m := &fakeMirrors{static: "static-uid"}
	o := DefaultOptions()
	o.Mirrors = m
	h := newHarness(t, o)
	static := testPod("static-uid", "kube-apiserver-node1")
	static.Annotations = map[string]string{ConfigSourceAnnotation: "file"}
	h.set(static, runningStatus("app"))
	var last map[string]int
	if r := h.engine.SyncOnce(context.Background(), true); r.Attempted != 0 {
		t.Errorf("S19: nothing to sync without a mirror pod, got %+v", r)
	}
	wantRequests(t, "S19", h.requests(&last), map[string]int{})

	mirror := testPod("mirror-uid", "kube-apiserver-node1")
	mirror.Annotations = map[string]string{ConfigMirrorAnnotation: "hash", ConfigSourceAnnotation: "file"}
	h.create(mirror)
	m.mirror = "mirror-uid"
	if s, ok := h.cache.GetPodStatus("mirror-uid"); !ok || s.Phase != v1.PodRunning {
		t.Error("S20: GetPodStatus of the mirror UID returns the static pod's status")
	}
	if r := h.engine.SyncOnce(context.Background(), true); r.Attempted != 1 || r.Synced != 1 {
		t.Errorf("S20: the full pass syncs the static pod once, got %+v", r)
	}
	wantRequests(t, "S20", h.requests(&last), map[string]int{"get": 1, "patch": 1})
	if r := h.engine.SyncOnce(context.Background(), true); r.Attempted != 0 {
		t.Errorf("S20: nothing changed, nothing to do, got %+v", r)
	}
	wantRequests(t, "S20 again", h.requests(&last), map[string]int{})
}

func termState(code int32) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
}

var unknownState = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137,
	Reason: containerstate.ReasonContainerStatusUnknown, Message: containerstate.MessageUnknownTerminated}}

func waitingState() v1.ContainerState {
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: containerstate.ReasonPodInitializing}}
}

func named(n string, s v1.ContainerState) v1.ContainerStatus {
	return v1.ContainerStatus{Name: n, State: s}
}

// S22 to S29: TerminatePod's defaulting.
func TestS22ToS29TerminatePod(t *testing.T) {
	spec := v1.PodSpec{RestartPolicy: v1.RestartPolicyNever,
		InitContainers: []v1.Container{{Name: "i0"}, {Name: "i1"}, {Name: "i2"}},
		Containers:     []v1.Container{{Name: "a0"}, {Name: "a1"}, {Name: "a2"}}}
	tests := []struct {
		id          string
		reason      string
		cached      *v1.PodStatus
		podStatus   v1.PodStatus
		wantInit    []v1.ContainerState
		wantRegular []v1.ContainerState
		wantPhase   v1.PodPhase
		extraInits  []v1.Container
	}{
		{id: "S22", reason: "empty states become unknown, terminated ones stay, Failed and its message stay",
			cached: &v1.PodStatus{Phase: v1.PodFailed, Message: "boom",
				InitContainerStatuses: []v1.ContainerStatus{named("i0", v1.ContainerState{}), named("i1", termState(0)), named("i2", termState(3))},
				ContainerStatuses:     []v1.ContainerStatus{named("a0", v1.ContainerState{}), named("a1", termState(2)), named("a2", termState(0))}},
			podStatus:   v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{named("a0", v1.ContainerState{})}},
			wantInit:    []v1.ContainerState{unknownState, termState(0), termState(3)},
			wantRegular: []v1.ContainerState{unknownState, termState(2), termState(0)},
			wantPhase:   v1.PodFailed},
		{id: "S23", reason: "a trailing Waiting init container stays; a Waiting regular container of an initialized pod becomes unknown",
			cached: &v1.PodStatus{Phase: v1.PodRunning,
				InitContainerStatuses: []v1.ContainerStatus{named("i0", termState(0)), named("i1", termState(0)), named("i2", waitingState())},
				ContainerStatuses:     []v1.ContainerStatus{named("a0", runningState()), named("a1", waitingState()), named("a2", termState(0))}},
			podStatus:   v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{named("a0", runningState())}},
			wantInit:    []v1.ContainerState{termState(0), termState(0), waitingState()},
			wantRegular: []v1.ContainerState{unknownState, unknownState, termState(0)},
			wantPhase:   v1.PodFailed},
		{id: "S25", reason: "init [W, W]: only the first is defaulted",
			cached:    &v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{named("i0", waitingState()), named("i1", waitingState())}},
			wantInit:  []v1.ContainerState{unknownState, waitingState()},
			wantPhase: v1.PodFailed},
		{id: "S26", reason: "init [W, W, T(1), W]: gaps filled, the trailing Waiting kept",
			extraInits: []v1.Container{{Name: "i3"}},
			cached: &v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{
				named("i0", waitingState()), named("i1", waitingState()), named("i2", termState(1)), named("i3", waitingState())}},
			wantInit:  []v1.ContainerState{unknownState, unknownState, termState(1), waitingState()},
			wantPhase: v1.PodFailed},
		{id: "S28", reason: "a last init container Waiting with a last termination exit 0 counts as started",
			cached: &v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{
				named("i0", termState(0)), named("i1", termState(0)),
				{Name: "i2", State: waitingState(), LastTerminationState: termState(0)}}},
			wantInit:  []v1.ContainerState{termState(0), termState(0), unknownState},
			wantPhase: v1.PodFailed},
		{id: "S29", reason: "a regular container with a last termination makes the pod initialized",
			cached:      &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{named("a0", waitingState()), named("a1", runningState())}},
			podStatus:   v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "a0", State: waitingState(), LastTerminationState: termState(1)}}},
			wantRegular: []v1.ContainerState{unknownState, unknownState},
			wantPhase:   v1.PodFailed},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		pod := testPod("u1", "p1")
		pod.Spec = *spec.DeepCopy()
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, tt.extraInits...)
		pod.Status = tt.podStatus
		if tt.cached != nil {
			// Seed the cache as the kubelet would have it.
			e := &entry{version: 1, uid: pod.UID, name: pod.Name, namespace: pod.Namespace, pod: pod.DeepCopy(), status: *tt.cached.DeepCopy()}
			h.cache.pods[pod.UID] = e
		}
		if err := h.cache.TerminatePod(pod, h.now()); err != nil {
			t.Fatalf("%s: %v", tt.id, err)
		}
		got, _ := h.cache.GetPodStatus(pod.UID)
		for i, want := range tt.wantInit {
			if d := cmp.Diff(want, got.InitContainerStatuses[i].State); d != "" {
				t.Errorf("%s: %s: init %d mismatch (-want +got):\n%s", tt.id, tt.reason, i, d)
			}
		}
		for i, want := range tt.wantRegular {
			if d := cmp.Diff(want, got.ContainerStatuses[i].State); d != "" {
				t.Errorf("%s: %s: container %d mismatch (-want +got):\n%s", tt.id, tt.reason, i, d)
			}
		}
		if got.Phase != tt.wantPhase || (tt.id == "S22" && got.Message != "boom") {
			t.Errorf("%s: phase %q message %q", tt.id, got.Phase, got.Message)
		}
		if !h.cache.pods[pod.UID].finished {
			t.Errorf("%s: the pod is finished", tt.id)
		}
	}
}

func runningState() v1.ContainerState {
	return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
}

// S31, S32: container readiness.
func TestS31S32Readiness(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := testPod("u1", "p1", "c1", "c2")
	if _, err := h.cache.SetContainerReadiness(pod.UID, "c://c1", true, h.now()); !errors.Is(err, ErrNotCached) {
		t.Errorf("S31: before any status: error %v, want ErrNotCached", err)
	}
	if _, ok := h.cache.GetPodStatus(pod.UID); ok {
		t.Error("S31: nothing cached")
	}
	h.set(pod, runningStatus("c1", "c2"))
	v := h.cache.Version(pod.UID)
	if changed, err := h.cache.SetContainerReadiness(pod.UID, "c://c1", false, h.now()); changed || err != nil || h.cache.Version(pod.UID) != v {
		t.Errorf("S32 unchanged: changed=%v err=%v", changed, err)
	}
	readyOf := func() v1.ConditionStatus {
		s, _ := h.cache.GetPodStatus(pod.UID)
		if c := podcond.Find(s.Conditions, v1.PodReady); c != nil {
			return c.Status
		}
		return ""
	}
	if changed, err := h.cache.SetContainerReadiness(pod.UID, "c://c1", true, h.now()); !changed || err != nil || readyOf() != v1.ConditionFalse {
		t.Errorf("S32 c1 ready: changed=%v err=%v Ready=%q, want an update and Ready False", changed, err, readyOf())
	}
	if changed, err := h.cache.SetContainerReadiness(pod.UID, "c://c2", true, h.now()); !changed || err != nil || readyOf() != v1.ConditionTrue {
		t.Errorf("S32 c1+c2 ready: changed=%v err=%v Ready=%q, want an update and Ready True", changed, err, readyOf())
	}
	if _, err := h.cache.SetContainerReadiness(pod.UID, "c://nope", true, h.now()); !errors.Is(err, ErrUnknownContainer) {
		t.Errorf("S32 unknown container: error %v", err)
	}
	// SetContainerStartup: nil to false is a change, false to false is not.
	if changed, _ := h.cache.SetContainerStartup(pod.UID, "c://c1", false, h.now()); !changed {
		t.Error("7 SetContainerStartup: nil to false is a change")
	}
	if changed, _ := h.cache.SetContainerStartup(pod.UID, "c://c1", false, h.now()); changed {
		t.Error("7 SetContainerStartup: false to false is not")
	}
}

// S34: the engine forgets the state of pods no longer cached on a full pass.
func TestS34ForgetsUnknownUIDs(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := h.create(testPod("u1", "p1"))
	h.set(pod, runningStatus("app"))
	h.sync()
	h.engine.planner.states["gone"] = &podState{apiVersion: 3}
	h.engine.SyncOnce(context.Background(), true)
	if _, ok := h.engine.planner.states["gone"]; ok {
		t.Error("S34: the state of an unknown UID is removed")
	}
	if _, ok := h.engine.planner.states[pod.UID]; !ok {
		t.Error("S34: the state of a cached pod is kept")
	}
}

// S35: a server copy equal to the cache, up to sub-second timestamps, is no
// drift.
func TestS35NoDrift(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := h.create(testPod("u1", "p1"))
	h.set(pod, runningStatus("app"))
	h.sync()
	server, _ := h.api.Pod("default", "p1")
	server.Status.ContainerStatuses[0].State.Running.StartedAt = metav1.NewTime(t0.Add(300 * time.Millisecond))
	h.engine.Observe(server)
	var last = h.api.Requests()
	h.engine.SyncOnce(context.Background(), true)
	wantRequests(t, "S35", h.requests(&last), map[string]int{})
	// Drift in a kubelet-owned field is written back.
	_ = h.api.Update("default", "p1", func(p *v1.Pod) { p.Status.Phase = v1.PodPending })
	drifted, _ := h.api.Pod("default", "p1")
	h.engine.Observe(drifted)
	h.engine.SyncOnce(context.Background(), true)
	wantRequests(t, "4 needsReconcile", h.requests(&last), map[string]int{"get": 1, "patch": 1})
	if p, _ := h.api.Pod("default", "p1"); p.Status.Phase != v1.PodRunning {
		t.Errorf("4 needsReconcile: the kubelet's phase is written back, got %q", p.Status.Phase)
	}
}
