package podphase

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestDuplicatedOldConditions traces the kubelet's reading of every old
// condition of a type (GeneratePodInitializedCondition and
// ShouldAllContainersRestart): a True anywhere counts, not only the first.
// The conformance suite found podphase reading only the first.
func TestDuplicatedOldConditions(t *testing.T) {
	never := v1.ContainerRestartPolicyNever
	initSpec := v1.PodSpec{InitContainers: []v1.Container{{Name: "init-0"}}, Containers: containers("app")}
	waitingInit := []v1.ContainerStatus{{Name: "init-0", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
	waitingApp := []v1.ContainerStatus{{Name: "app", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
	initialized := func(t *testing.T, old []v1.PodCondition) v1.PodCondition {
		pod := &v1.Pod{Spec: initSpec, Status: v1.PodStatus{Conditions: old}}
		conds, err := Conditions(ConditionsInput{Pod: pod, Status: &v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: waitingInit, ContainerStatuses: waitingApp}})
		if err != nil {
			t.Fatal(err)
		}
		return pickCondition(t, conds, v1.PodInitialized)
	}
	got := initialized(t, []v1.PodCondition{{Type: v1.PodInitialized, Status: v1.ConditionFalse}, {Type: v1.PodInitialized, Status: v1.ConditionTrue}})
	if got.Status != v1.ConditionTrue {
		t.Errorf("8 Initialized: a later True among duplicated old conditions keeps it True, got %+v", got)
	}
	if got := initialized(t, []v1.PodCondition{{Type: v1.PodInitialized, Status: v1.ConditionFalse}}); got.Status != v1.ConditionFalse {
		t.Errorf("8 Initialized: no True, not initialized, got %+v", got)
	}

	restartAll := v1.PodSpec{Containers: []v1.Container{{Name: "app", RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{{
		Action: v1.ContainerRestartRuleActionRestartAllContainers, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{0}}}}}}}
	pod := &v1.Pod{Spec: restartAll, Status: v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.AllContainersRestarting, Status: v1.ConditionFalse}, {Type: v1.AllContainersRestarting, Status: v1.ConditionTrue}}}}
	conds, err := Conditions(ConditionsInput{Pod: pod, Status: &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{notReady("app")}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := pickCondition(t, conds, v1.AllContainersRestarting); c.Status != v1.ConditionTrue || c.Reason != ReasonRestartAllContainersStarted {
		t.Errorf("7 AllContainersRestarting: a later True among duplicated old conditions keeps the restart going, got %+v", c)
	}
}

// TestIPColumnPrefersPodIP traces the API server's v1 defaults that kubectl
// prints: status.podIP wins when it disagrees with status.podIPs[0].
func TestIPColumnPrefersPodIP(t *testing.T) {
	for _, tt := range []struct {
		reason string
		status v1.PodStatus
		want   string
	}{
		{"podIP and podIPs disagree: podIP", v1.PodStatus{PodIP: "10.0.0.8", PodIPs: []v1.PodIP{{IP: "10.0.0.9"}}}, "10.0.0.8"},
		{"only podIPs", v1.PodStatus{PodIPs: []v1.PodIP{{IP: "10.0.0.9"}, {IP: "fd00::9"}}}, "10.0.0.9"},
		{"only podIP", v1.PodStatus{PodIP: "10.0.0.8"}, "10.0.0.8"},
		{"neither", v1.PodStatus{}, "<none>"},
	} {
		row, err := Columns(&v1.Pod{Status: tt.status}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if row.IP != tt.want {
			t.Errorf("K wide IP: %s: got %q, want %q", tt.reason, row.IP, tt.want)
		}
	}
}
