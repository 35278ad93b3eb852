package podphase

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSettle traces spec section 11.5 (G rows) and section 4.1 steps 3 to 6.
func TestSettle(t *testing.T) {
	tests := []struct {
		id       string
		reason   string
		computed v1.PodPhase
		old      *v1.PodStatus
		api      *v1.PodStatus
		evict    *Eviction
		want     Settled
	}{
		{id: "G01", reason: "the cached terminal phase wins over a non-terminal computed one; reason kept with the phase",
			computed: v1.PodPending, old: &v1.PodStatus{Phase: v1.PodSucceeded, Reason: "Test", Message: "test"}, api: &v1.PodStatus{Phase: v1.PodRunning},
			want: Settled{Phase: v1.PodSucceeded, Reason: "Test", Message: "test"}},
		{id: "G02", reason: "API and cache Succeeded", computed: v1.PodPending,
			old: &v1.PodStatus{Phase: v1.PodSucceeded, Reason: "Test", Message: "test"}, api: &v1.PodStatus{Phase: v1.PodSucceeded},
			want: Settled{Phase: v1.PodSucceeded, Reason: "Test", Message: "test"}},
		{id: "G04", reason: "phase unchanged: reason and message kept", computed: v1.PodPending,
			old: &v1.PodStatus{Phase: v1.PodPending, Reason: "Test", Message: "test"}, api: &v1.PodStatus{Phase: v1.PodRunning},
			want: Settled{Phase: v1.PodPending, Reason: "Test", Message: "test"}},
		{id: "G05", reason: "phase changed: reason and message cleared", computed: v1.PodRunning,
			old: &v1.PodStatus{Phase: v1.PodPending, Reason: "Test", Message: "test"}, api: &v1.PodStatus{Phase: v1.PodPending},
			want: Settled{Phase: v1.PodRunning}},
		{id: "4.1/3-api", reason: "no cached terminal phase: the API's terminal phase wins", computed: v1.PodRunning,
			old: &v1.PodStatus{Phase: v1.PodRunning}, api: &v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted"},
			want: Settled{Phase: v1.PodFailed}},
		{id: "4.1/4-fallback", reason: "empty cached reason falls back to the API's", computed: v1.PodRunning,
			old: &v1.PodStatus{Phase: v1.PodRunning}, api: &v1.PodStatus{Phase: v1.PodRunning, Reason: "R", Message: "M"},
			want: Settled{Phase: v1.PodRunning, Reason: "R", Message: "M"}},
		{id: "4.1/1-no-cache", reason: "without a cache the API status is the old one", computed: v1.PodRunning,
			api:  &v1.PodStatus{Phase: v1.PodRunning, Reason: "R"},
			want: Settled{Phase: v1.PodRunning, Reason: "R"}},
		{id: "4.1/5-evict", reason: "an active-deadline handler fails the pod with its reason", computed: v1.PodRunning,
			api: &v1.PodStatus{Phase: v1.PodRunning}, evict: &Eviction{Reason: ReasonDeadlineExceeded, Message: "too long"},
			want: Settled{Phase: v1.PodFailed, Reason: ReasonDeadlineExceeded, Message: "too long"}},
		{id: "4.1/6-guard", reason: "the API is terminal and the computed terminal phase differs: forced back, flagged", computed: v1.PodFailed,
			old: &v1.PodStatus{Phase: v1.PodRunning}, api: &v1.PodStatus{Phase: v1.PodSucceeded},
			want: Settled{Phase: v1.PodSucceeded, Illegal: true}},
		{id: "4.1/6-guard-evict", reason: "an eviction cannot turn a Succeeded pod Failed", computed: v1.PodSucceeded,
			api: &v1.PodStatus{Phase: v1.PodSucceeded}, evict: &Eviction{Reason: "Evicted"},
			want: Settled{Phase: v1.PodSucceeded, Reason: "Evicted", Illegal: true}},
		{id: "4.1/nil-api", reason: "a nil API status is empty", computed: v1.PodRunning,
			want: Settled{Phase: v1.PodRunning}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			got := Settle(tc.computed, tc.old, tc.api, tc.evict)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (%s): mismatch (-want +got):\n%s", tc.id, tc.reason, diff)
			}
		})
	}
}

// TestGenerateStatus traces G01's conditions and G04/G05 end to end.
func TestGenerateStatus(t *testing.T) {
	spec := specOf(never, nil, ab...)
	t.Run("G01", func(t *testing.T) {
		pod := &v1.Pod{Spec: spec, Status: v1.PodStatus{Phase: v1.PodRunning}}
		old := &v1.PodStatus{Phase: v1.PodSucceeded, Reason: "Test", Message: "test"}
		done := []v1.ContainerStatus{status(t, "A", "T0"), status(t, "B", "T0")}
		res, err := GenerateStatus(StatusInput{Input: Input{Pod: pod}, Old: old, ContainerStatuses: done, Sandbox: SandboxMissing, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status.Phase != v1.PodSucceeded || res.Status.Reason != "Test" || res.Status.Message != "test" {
			t.Errorf("phase/reason/message = %s/%s/%s", res.Status.Phase, res.Status.Reason, res.Status.Message)
		}
		wantConds := []v1.PodCondition{
			want(v1.PodReadyToStartContainers, v1.ConditionFalse, ReasonPodSandboxNotReady, "no pod sandbox exists"),
			want(v1.PodInitialized, v1.ConditionTrue, ReasonPodCompleted, ""),
			want(v1.PodReady, v1.ConditionFalse, ReasonPodCompleted, ""),
			want(v1.ContainersReady, v1.ConditionFalse, ReasonPodCompleted, ""),
			want(v1.PodScheduled, v1.ConditionTrue, "", ""),
		}
		var got []v1.PodCondition
		for _, c := range res.Status.Conditions {
			c.LastTransitionTime = metav1.Time{}
			got = append(got, c)
		}
		if diff := cmp.Diff(wantConds, got); diff != "" {
			t.Errorf("G01 conditions mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("G04", func(t *testing.T) {
		pod := &v1.Pod{Spec: spec, Status: v1.PodStatus{Phase: v1.PodRunning}}
		old := &v1.PodStatus{Phase: v1.PodPending, Reason: "Test", Message: "test"}
		res, err := GenerateStatus(StatusInput{Input: Input{Pod: pod}, Old: old, ContainerStatuses: []v1.ContainerStatus{status(t, "B", "R")}, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status.Phase != v1.PodPending || res.Status.Reason != "Test" || res.Explanation.Rule != RuleUnknownStatus {
			t.Errorf("got %s/%s (%s)", res.Status.Phase, res.Status.Reason, res.Explanation)
		}
	})
	t.Run("G05", func(t *testing.T) {
		pod := &v1.Pod{Spec: spec, Status: v1.PodStatus{Phase: v1.PodPending}}
		old := &v1.PodStatus{Phase: v1.PodPending, Reason: "Test", Message: "test"}
		res, err := GenerateStatus(StatusInput{Input: Input{Pod: pod}, Old: old, ContainerStatuses: []v1.ContainerStatus{status(t, "A", "R"), status(t, "B", "R")}, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status.Phase != v1.PodRunning || res.Status.Reason != "" || res.Status.Message != "" {
			t.Errorf("got %s/%q/%q", res.Status.Phase, res.Status.Reason, res.Status.Message)
		}
	})
	t.Run("errors", func(t *testing.T) {
		if _, err := GenerateStatus(StatusInput{}); !errors.Is(err, ErrNilPod) {
			t.Errorf("nil pod: %v", err)
		}
		pod := &v1.Pod{Spec: spec}
		_, err := GenerateStatus(StatusInput{Input: Input{Pod: pod}, ContainerStatuses: []v1.ContainerStatus{{Name: "ghost"}}})
		var unknown *UnknownContainerError
		if !errors.As(err, &unknown) {
			t.Errorf("ghost status: %v", err)
		}
	})
}

// TestTransitions traces spec sections 3.4, 5 and 6.
func TestTransitions(t *testing.T) {
	phases := []v1.PodPhase{"", v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, v1.PodUnknown, "Bogus"}
	legal := func(from, to v1.PodPhase) (bool, string) {
		switch {
		case from == to:
			return true, "no change"
		case IsTerminal(from):
			return false, "5: a terminal phase never changes"
		case to == "" || to == v1.PodUnknown || to == "Bogus":
			return false, "6: the kubelet writes only the four phases"
		}
		return true, "3.4: non-terminal phases move both ways and into terminal ones"
	}
	for _, from := range phases {
		for _, to := range phases {
			want, why := legal(from, to)
			if got := LegalTransition(from, to); got != want {
				t.Errorf("LegalTransition(%q, %q) = %v, want %v (%s)", from, to, got, want, why)
			}
			next, err := Guard(from, to)
			if want && (err != nil || next != to) {
				t.Errorf("Guard(%q, %q) = %q, %v", from, to, next, err)
			}
			if !want {
				var te *TransitionError
				if next != from || !errors.Is(err, ErrIllegalTransition) || !errors.As(err, &te) || te.From != from || te.To != to {
					t.Errorf("Guard(%q, %q) = %q, %v; want the current phase and a TransitionError", from, to, next, err)
				}
			}
		}
	}
	if got := CheckTransition(v1.PodSucceeded, v1.PodRunning).Error(); got != `podphase: illegal phase transition from "Succeeded" to "Running"` {
		t.Errorf("message = %q", got)
	}
}

// TestTerminatedPhase traces the TerminatePod row of spec section 5 and
// section 6.
func TestTerminatedPhase(t *testing.T) {
	tests := []struct {
		reason string
		phase  v1.PodPhase
		static bool
		want   v1.PodPhase
	}{
		{reason: "5: Succeeded is kept", phase: v1.PodSucceeded, want: v1.PodSucceeded},
		{reason: "5: Failed is kept", phase: v1.PodFailed, want: v1.PodFailed},
		{reason: "5: Running is forced to Failed", phase: v1.PodRunning, want: v1.PodFailed},
		{reason: "5: Pending is forced to Failed", phase: v1.PodPending, want: v1.PodFailed},
		{reason: "6: Unknown is forced to Failed", phase: v1.PodUnknown, want: v1.PodFailed},
		{reason: "5: an unrecognised value is forced to Failed", phase: "Bogus", want: v1.PodFailed},
		{reason: "5: static pods keep their phase (TODO #116484)", phase: v1.PodRunning, static: true, want: v1.PodRunning},
	}
	for _, tc := range tests {
		if got := TerminatedPhase(tc.phase, tc.static); got != tc.want {
			t.Errorf("TerminatedPhase(%q, static=%v) = %q, want %q (%s)", tc.phase, tc.static, got, tc.want, tc.reason)
		}
	}
}
