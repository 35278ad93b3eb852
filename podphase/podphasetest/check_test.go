package podphasetest

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/podphase"
)

// TestChecksCatch shows that each check rejects what it exists to reject.
func TestChecksCatch(t *testing.T) {
	gated := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}}, ReadinessGates: []v1.PodReadinessGate{{ConditionType: "g"}}}}
	t0 := metav1.NewTime(Epoch)
	t1 := metav1.NewTime(Epoch.Add(1e9))
	tests := []struct {
		name   string
		reason string
		err    error
		want   string // substring of the error; "" means no error
	}{
		{name: "phase ok", reason: "Running is a kubelet phase", err: CheckPhase(v1.PodRunning)},
		{name: "phase unknown", reason: "the kubelet never writes Unknown", err: CheckPhase(v1.PodUnknown), want: `phase "Unknown"`},
		{name: "ready without containers ready", reason: "Ready implies ContainersReady",
			err:  CheckConditions(gated, &v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}, {Type: "g", Status: v1.ConditionTrue}}}),
			want: "ContainersReady"},
		{name: "ready without gate", reason: "Ready implies every gate True",
			err:  CheckConditions(gated, &v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}, {Type: v1.ContainersReady, Status: v1.ConditionTrue}}}),
			want: "readiness gate g"},
		{name: "ready and gated", reason: "all gates True",
			err: CheckConditions(gated, &v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}, {Type: v1.ContainersReady, Status: v1.ConditionTrue}, {Type: "g", Status: v1.ConditionTrue}}})},
		{name: "duplicate", reason: "a type appears once",
			err: CheckConditions(gated, &v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodScheduled}, {Type: v1.PodScheduled}}}), want: "twice"},
		{name: "terminal ready", reason: "a terminal pod is not ready",
			err: CheckConditions(&v1.Pod{}, &v1.PodStatus{Phase: v1.PodSucceeded, Conditions: []v1.PodCondition{{Type: v1.ContainersReady, Status: v1.ConditionTrue}}}), want: "terminal"},
		{name: "terminal left", reason: "a terminal phase never changes",
			err: CheckUpdate(&v1.PodStatus{Phase: v1.PodFailed}, &v1.PodStatus{Phase: v1.PodRunning}), want: "illegal phase transition"},
		{name: "restarts down", reason: "restartCount never decreases",
			err:  CheckUpdate(&v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "a", RestartCount: 2}}}, &v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "a", RestartCount: 1}}}),
			want: "went down"},
		{name: "time moved", reason: "an unchanged condition keeps its time",
			err: CheckUpdate(&v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: t0}}},
				&v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: t1}}}),
			want: "lastTransitionTime"},
		{name: "flip stamps", reason: "a flipped condition may take a new time",
			err: CheckUpdate(&v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: t0}}},
				&v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: t1}}})},
		{name: "ghost container", reason: "an explanation names only the pod's containers",
			err: CheckExplanation(gated, podphase.Explanation{Phase: v1.PodPending, Reason: "r", Containers: []string{"ghost"}}), want: `"ghost"`},
		{name: "no reason", reason: "an explanation has a reason",
			err: CheckExplanation(gated, podphase.Explanation{Phase: v1.PodPending, Containers: []string{"a"}}), want: "no reason"},
		{name: "display", reason: "a pod with a phase shows a STATUS",
			err: CheckDisplay(&v1.Pod{Status: v1.PodStatus{Phase: v1.PodRunning}})},
		{name: "nil", reason: "nil statuses are refused", err: CheckUpdate(nil, nil), want: "nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.want == "" && tc.err != nil:
				t.Errorf("%s: unexpected error %v", tc.reason, tc.err)
			case tc.want != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.want)):
				t.Errorf("%s: error %v, want one containing %q", tc.reason, tc.err, tc.want)
			}
		})
	}
}

// TestGeneratorsAreConsistent checks what the generators promise: the
// statuses match the spec and the recorded phase is the kubelet's.
func TestGeneratorsAreConsistent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		stage := rapid.SampledFrom([]Stage{StageNew, StageInitializing, StageRunning, StageTerminal}).Draw(t, "stage")
		pod := PodAt(stage).Draw(t, "pod")
		// Explain keeps a recorded terminal phase; recompute without it.
		fresh := pod.DeepCopy()
		fresh.Status.Phase = ""
		e, err := podphase.Explain(podphase.Input{Pod: fresh, Terminal: stage == StageTerminal})
		if err != nil {
			t.Fatal(err)
		}
		if e.Phase != pod.Status.Phase {
			t.Fatalf("recorded phase %s, computed %s", pod.Status.Phase, e.Phase)
		}
		if stage == StageTerminal && !podphase.IsTerminal(pod.Status.Phase) {
			t.Fatalf("terminal stage in phase %s", pod.Status.Phase)
		}
		if stage == StageNew && (pod.Status.ContainerStatuses != nil || pod.Status.Phase != v1.PodPending) {
			t.Fatalf("a new pod has statuses or is %s", pod.Status.Phase)
		}
		if len(Spec().Draw(t, "spec").Containers) == 0 {
			t.Fatal("a spec without containers")
		}
	})
}
