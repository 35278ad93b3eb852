package statussync

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/internal/podcond"
)

// S37, S38: a deleting pod is deleted only once finished.
func TestS37S38Deletion(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := testPod("u1", "p1")
	ts := metav1.NewTime(t0)
	pod.DeletionTimestamp = &ts
	pod = h.create(pod)
	failed := v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: []v1.ContainerStatus{named("app", termState(1))}}
	h.set(pod, failed)
	var last map[string]int
	h.sync()
	wantRequests(t, "S37", h.requests(&last), map[string]int{"get": 1, "patch": 1})
	if _, ok := h.api.Pod("default", "p1"); !ok {
		t.Fatal("S37: not deleted before TerminatePod")
	}
	if err := h.cache.TerminatePod(pod, h.now()); err != nil {
		t.Fatal(err)
	}
	r := h.sync()
	wantRequests(t, "S38 (status already final)", h.requests(&last), map[string]int{"get": 1, "delete": 1})
	if _, ok := h.api.Pod("default", "p1"); ok || r.Deleted != 1 {
		t.Errorf("S38: the finished pod is deleted (result %+v)", r)
	}
	if _, ok := h.cache.GetPodStatus(pod.UID); ok {
		t.Error("S38: its cache entry is gone")
	}

	// A running pod being deleted: TerminatePod fails its containers, the
	// status is written, then the pod is deleted.
	pod2 := testPod("u2", "p2")
	pod2.DeletionTimestamp = &ts
	pod2 = h.create(pod2)
	h.set(pod2, runningStatus("app"))
	h.sync()
	h.requests(&last)
	if err := h.cache.TerminatePod(pod2, h.now()); err != nil {
		t.Fatal(err)
	}
	h.sync()
	wantRequests(t, "S38", h.requests(&last), map[string]int{"get": 1, "patch": 1, "delete": 1})
	if _, ok := h.api.Pod("default", "p2"); ok {
		t.Error("S38: the finished pod is deleted")
	}
}

// S41 to S46: the merge.
func TestS41ToS46Merge(t *testing.T) {
	o := DefaultOptions()
	dtKubelet := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "TerminationByKubelet"}
	dtAPI := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "EvictedByEvictionAPI"}
	readyTrue := []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue), cond(v1.ContainersReady, v1.ConditionTrue)}
	tests := []struct {
		id         string
		reason     string
		api, kube  v1.PodStatus
		couldRun   bool
		wantPhase  v1.PodPhase
		wantReason string
		wantDT     string
		wantReady  v1.ConditionStatus
		readyWhy   string
	}{
		{id: "S41", reason: "Failed with DisruptionTarget and nothing running: DT added, Ready and ContainersReady False (PodFailed)",
			api: v1.PodStatus{Phase: v1.PodRunning}, kube: v1.PodStatus{Phase: v1.PodFailed, Conditions: append([]v1.PodCondition{dtKubelet}, readyTrue...)},
			wantPhase: v1.PodFailed, wantDT: "TerminationByKubelet", wantReady: v1.ConditionFalse, readyWhy: "PodFailed"},
		{id: "S43", reason: "the API's DisruptionTarget stays while the kubelet runs the pod",
			api: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{dtAPI}}, kube: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{dtKubelet}},
			couldRun: true, wantPhase: v1.PodRunning, wantDT: "EvictedByEvictionAPI"},
		{id: "S44", reason: "going Failed with nothing running replaces the API's DisruptionTarget",
			api: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{dtAPI}}, kube: v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{dtKubelet}},
			wantPhase: v1.PodFailed, wantDT: "TerminationByKubelet"},
		{id: "S46 not running", reason: "Failed/Evicted is published with the kubelet's reason and message",
			api:       v1.PodStatus{Phase: v1.PodRunning, Reason: "Unknown"},
			kube:      v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted", Message: "Was Evicted", Conditions: readyTrue},
			wantPhase: v1.PodFailed, wantReason: "Evicted", wantReady: v1.ConditionFalse, readyWhy: "PodFailed"},
		{id: "S46 possibly running", reason: "the API's Running phase, reason and message stay while containers could run",
			api:      v1.PodStatus{Phase: v1.PodRunning, Reason: "Unknown"},
			kube:     v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted", Message: "Was Evicted", Conditions: readyTrue},
			couldRun: true, wantPhase: v1.PodRunning, wantReason: "Unknown", wantReady: v1.ConditionTrue},
		{id: "8.4", reason: "Succeeded forces Ready False with PodCompleted",
			api: v1.PodStatus{Phase: v1.PodRunning}, kube: v1.PodStatus{Phase: v1.PodSucceeded, Conditions: readyTrue},
			wantPhase: v1.PodSucceeded, wantReady: v1.ConditionFalse, readyWhy: "PodCompleted"},
	}
	for _, tt := range tests {
		apiCopy, kubeCopy := tt.api.DeepCopy(), tt.kube.DeepCopy()
		got := o.Merge(&tt.api, &tt.kube, tt.couldRun)
		if d := cmp.Diff(apiCopy, &tt.api); d != "" {
			t.Errorf("%s: the API status was modified", tt.id)
		}
		if d := cmp.Diff(kubeCopy, &tt.kube); d != "" {
			t.Errorf("%s: the kubelet status was modified", tt.id)
		}
		if got.Phase != tt.wantPhase || (tt.wantReason != "" && got.Reason != tt.wantReason) {
			t.Errorf("%s: %s: phase %q reason %q", tt.id, tt.reason, got.Phase, got.Reason)
		}
		if tt.wantDT != "" {
			if c := podcond.Find(got.Conditions, v1.DisruptionTarget); c == nil || c.Reason != tt.wantDT {
				t.Errorf("%s: %s: DisruptionTarget %+v, want reason %s", tt.id, tt.reason, c, tt.wantDT)
			}
		}
		if tt.wantReady != "" {
			for _, ty := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
				c := podcond.Find(got.Conditions, ty)
				if c == nil || c.Status != tt.wantReady || (tt.readyWhy != "" && c.Reason != tt.readyWhy) {
					t.Errorf("%s: %s: %s = %+v", tt.id, tt.reason, ty, c)
				}
			}
		}
	}
	// Owned conditions replace the API's, others are kept, claims come from the API.
	api := v1.PodStatus{Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionFalse), cond("example.com/gate", v1.ConditionTrue)},
		ResourceClaimStatuses: []v1.PodResourceClaimStatus{{Name: "gpu"}}}
	kube := v1.PodStatus{Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue), cond("example.com/gate", v1.ConditionFalse)}}
	got := o.Merge(&api, &kube, true)
	if podcond.Find(got.Conditions, v1.PodReady).Status != v1.ConditionTrue || podcond.Find(got.Conditions, "example.com/gate").Status != v1.ConditionTrue ||
		len(got.ResourceClaimStatuses) != 1 {
		t.Errorf("8.1/8.2: merged %+v", got)
	}
}

// S47: a finished pod stays finished.
func TestS47FinishedSticky(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := testPod("u1", "p1")
	h.set(pod, runningStatus("app"))
	if err := h.cache.TerminatePod(pod, h.now()); err != nil {
		t.Fatal(err)
	}
	st, _ := h.cache.GetPodStatus(pod.UID)
	st.Message = "later"
	h.set(pod, st)
	if !h.cache.pods[pod.UID].finished {
		t.Error("S47: the entry stays finished")
	}
	static := testPod("u2", "p2")
	static.Annotations = map[string]string{ConfigSourceAnnotation: "file"}
	h.set(static, runningStatus("app"))
	_ = h.cache.TerminatePod(static, h.now())
	st, _ = h.cache.GetPodStatus(static.UID)
	if st.Phase != v1.PodRunning {
		t.Errorf("7.1: a static pod keeps its phase, got %q", st.Phase)
	}
	st.Message = "later"
	h.set(static, st)
	if h.cache.pods[static.UID].finished {
		t.Error("S47: the sticky rule is skipped for static pods")
	}
}

// S49: a container that failed under OnFailure may run again; one that
// succeeded may not.
func TestS49Transitions(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := testPod("u1", "p1")
	pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	h.set(pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{named("app", termState(1))}})
	if _, _, err := h.cache.SetPodStatus(pod, runningStatus("app"), h.now()); err != nil {
		t.Errorf("S49: allowed, got %v", err)
	}
	h.set(pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{named("app", termState(0))}})
	v := h.cache.Version(pod.UID)
	_, _, err := h.cache.SetPodStatus(pod, runningStatus("app"), h.now())
	var te *containerstate.TransitionError
	if !errors.As(err, &te) || h.cache.Version(pod.UID) != v {
		t.Errorf("6.2: a succeeded container may not run again: error %v, version %d (want %d)", err, h.cache.Version(pod.UID), v)
	}
}

func TestBadInput(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	if _, _, err := h.cache.SetPodStatus(nil, v1.PodStatus{}, h.now()); !errors.Is(err, ErrNilPod) {
		t.Errorf("nil pod: %v", err)
	}
	if _, _, err := h.cache.SetPodStatus(testPod("", "p"), v1.PodStatus{}, h.now()); !errors.Is(err, ErrNoUID) {
		t.Errorf("empty UID: %v", err)
	}
	pod := testPod("u1", "p1", "app")
	if _, _, err := h.cache.SetPodStatus(pod, runningStatus("ghost"), h.now()); !errors.Is(err, ErrUnknownContainer) {
		t.Errorf("unknown container: %v", err)
	}
	if h.cache.Len() != 0 {
		t.Error("bad input changes nothing")
	}
	if err := h.cache.TerminatePod(nil, h.now()); !errors.Is(err, ErrNilPod) {
		t.Errorf("TerminatePod(nil): %v", err)
	}
	if _, err := NewEngine(EngineOptions{}, h.cache, h.api); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("zero engine options: %v", err)
	}
}

// S50, S52: the resize conditions.
func TestS50S52Resize(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	uid := types.UID("u1")
	if gen, changed := h.cache.SetResizeInProgress(uid, "r", "m", 3, h.now()); gen != 3 || !changed {
		t.Fatalf("11: a new InProgress condition: gen %d changed %v", gen, changed)
	}
	h.clock.Step(time.Second)
	gen, changed := h.cache.SetResizeInProgress(uid, "", "", 7, h.now())
	conds := h.cache.ResizeConditions(uid)
	if gen != 3 || changed || len(conds) != 1 || conds[0].Reason != "r" || conds[0].Message != "m" || conds[0].ObservedGeneration != 3 {
		t.Errorf("S50: empty reason and message keep r/m and the first generation: gen %d changed %v %+v", gen, changed, conds)
	}
	if !conds[0].LastTransitionTime.Time.Equal(t0) || !conds[0].LastProbeTime.Time.Equal(t0.Add(time.Second)) {
		t.Errorf("11: the same reason keeps the transition time, the probe time moves: %+v", conds[0])
	}
	if !h.cache.SetResizePending(uid, "NodeCapacity", "", 3, h.now()) || !h.cache.IsResizeDeferred(uid) {
		t.Error("11: a pending reason other than Infeasible becomes Deferred")
	}
	if h.cache.SetResizePending(uid, "Other", "", 3, h.now()) {
		t.Error("11: the same Deferred reason and generation is no change")
	}
	if !h.cache.SetResizePending(uid, ResizeReasonInfeasible, "", 3, h.now()) || !h.cache.IsResizeInfeasible(uid) {
		t.Error("11: Infeasible stays Infeasible and is a change")
	}
	if c := h.cache.ResizeConditions(uid); len(c) != 2 || c[0].Type != v1.PodResizePending {
		t.Errorf("11: pending first, then in progress: %+v", c)
	}
	if gen, ok := h.cache.ClearResizeInProgress(uid); gen != 3 || !ok {
		t.Errorf("S52: ClearInProgress returns (its gen, true), got (%d, %v)", gen, ok)
	}
	if c := h.cache.ResizeConditions(uid); len(c) != 1 || c[0].Type != v1.PodResizePending {
		t.Errorf("S52: only the pending condition remains: %+v", c)
	}
	if !h.cache.ClearResizePending(uid) || h.cache.ResizeConditions(uid) != nil {
		t.Error("S52: then nothing")
	}
	if _, ok := h.cache.ClearResizeInProgress(uid); ok || h.cache.ClearResizePending(uid) {
		t.Error("11: clearing what is not there is a no-op")
	}
	h.cache.BackfillResizeConditions([]*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: ResizeReasonInfeasible}}}}})
	if !h.cache.IsResizeInfeasible(uid) {
		t.Error("11: backfilled from the API")
	}
}
