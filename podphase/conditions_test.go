package podphase

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/internal/podcond"
)

func ready(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
}

func notReady(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
}

// pickCondition returns the condition of type t without its time and
// generation, for comparing status, reason and message.
func pickCondition(t *testing.T, cs []v1.PodCondition, ct v1.PodConditionType) v1.PodCondition {
	t.Helper()
	c := podcond.Find(cs, ct)
	if c == nil {
		t.Fatalf("no %s condition in %v", ct, cs)
	}
	out := *c
	out.LastTransitionTime, out.ObservedGeneration = metav1.Time{}, 0
	return out
}

func want(ct v1.PodConditionType, s v1.ConditionStatus, reason, message string) v1.PodCondition {
	return v1.PodCondition{Type: ct, Status: s, Reason: reason, Message: message}
}

// TestConditions traces spec section 11.6 (N rows) and the rules of 8.4.
func TestConditions(t *testing.T) {
	regular1 := []v1.Container{sidecar("restartable-init-1")}
	tests := []struct {
		id       string
		reason   string
		spec     v1.PodSpec
		init     []v1.ContainerStatus
		regular  []v1.ContainerStatus
		apiConds []v1.PodCondition
		phase    v1.PodPhase
		sandbox  Sandbox
		want     v1.PodCondition
	}{
		{id: "N01", reason: "nil statuses", spec: v1.PodSpec{}, phase: v1.PodRunning,
			want: want(v1.ContainersReady, v1.ConditionFalse, ReasonUnknownContainerStatuses, "")},
		{id: "N02", reason: "empty statuses and an empty spec", spec: v1.PodSpec{}, regular: []v1.ContainerStatus{}, phase: v1.PodRunning,
			want: want(v1.ContainersReady, v1.ConditionTrue, "", "")},
		{id: "N04", reason: "both ready", spec: v1.PodSpec{Containers: containers("1234", "5678")}, regular: []v1.ContainerStatus{ready("1234"), ready("5678")}, phase: v1.PodRunning,
			want: want(v1.ContainersReady, v1.ConditionTrue, "", "")},
		{id: "N05", reason: "one status missing", spec: v1.PodSpec{Containers: containers("1234", "5678")}, regular: []v1.ContainerStatus{ready("1234")}, phase: v1.PodRunning,
			want: want(v1.ContainersReady, v1.ConditionFalse, ReasonContainersNotReady, "containers with unknown status: [5678]")},
		{id: "N05/both", reason: "unknown and unready are joined with a comma", spec: v1.PodSpec{Containers: containers("a", "b", "c")}, regular: []v1.ContainerStatus{notReady("a"), notReady("b")}, phase: v1.PodRunning,
			want: want(v1.ContainersReady, v1.ConditionFalse, ReasonContainersNotReady, "containers with unknown status: [c], containers with unready status: [a b]")},
		{id: "N07", reason: "a succeeded pod is not ready", spec: v1.PodSpec{Containers: containers("1234")}, regular: []v1.ContainerStatus{notReady("1234")}, phase: v1.PodSucceeded,
			want: want(v1.ContainersReady, v1.ConditionFalse, ReasonPodCompleted, "")},
		{id: "8.4/ContainersReady-failed", reason: "a failed pod is not ready, unknowns or not", spec: v1.PodSpec{Containers: containers("a", "b")}, regular: []v1.ContainerStatus{ready("a")}, phase: v1.PodFailed,
			want: want(v1.ContainersReady, v1.ConditionFalse, ReasonPodFailed, "")},
		{id: "N08", reason: "sidecars count for ContainersReady", spec: v1.PodSpec{InitContainers: regular1, Containers: containers("regular-1")}, regular: []v1.ContainerStatus{ready("regular-1")}, phase: v1.PodRunning,
			want: want(v1.ContainersReady, v1.ConditionFalse, ReasonContainersNotReady, "containers with unknown status: [restartable-init-1]")},
		{id: "N10", reason: "an unready sidecar", spec: v1.PodSpec{InitContainers: []v1.Container{sidecar("restartable-init-1"), sidecar("restartable-init-2")}, Containers: containers("regular-1")},
			init: []v1.ContainerStatus{ready("restartable-init-1"), notReady("restartable-init-2")}, regular: []v1.ContainerStatus{ready("regular-1")}, phase: v1.PodRunning,
			want: want(v1.ContainersReady, v1.ConditionFalse, ReasonContainersNotReady, "containers with unready status: [restartable-init-2]")},
		{id: "N11", reason: "a readiness gate without its condition", spec: v1.PodSpec{ReadinessGates: []v1.PodReadinessGate{{ConditionType: "gate1"}}}, regular: []v1.ContainerStatus{}, phase: v1.PodRunning,
			want: want(v1.PodReady, v1.ConditionFalse, ReasonReadinessGatesNotReady, `corresponding condition of pod readiness gate "gate1" does not exist.`)},
		{id: "N13", reason: "the gate's condition is True", spec: v1.PodSpec{ReadinessGates: []v1.PodReadinessGate{{ConditionType: "gate1"}}}, regular: []v1.ContainerStatus{}, phase: v1.PodRunning,
			apiConds: []v1.PodCondition{cond("gate1", v1.ConditionTrue, "")},
			want:     want(v1.PodReady, v1.ConditionTrue, "", "")},
		{id: "N14", reason: "the second gate is missing", spec: v1.PodSpec{ReadinessGates: []v1.PodReadinessGate{{ConditionType: "gate1"}, {ConditionType: "gate2"}}}, regular: []v1.ContainerStatus{}, phase: v1.PodRunning,
			apiConds: []v1.PodCondition{cond("gate1", v1.ConditionTrue, "")},
			want:     want(v1.PodReady, v1.ConditionFalse, ReasonReadinessGatesNotReady, `corresponding condition of pod readiness gate "gate2" does not exist.`)},
		{id: "8.4/Ready-gate-false", reason: "a gate condition that is not True", spec: v1.PodSpec{ReadinessGates: []v1.PodReadinessGate{{ConditionType: "gate1"}, {ConditionType: "gate2"}}}, regular: []v1.ContainerStatus{}, phase: v1.PodRunning,
			apiConds: []v1.PodCondition{cond("gate1", v1.ConditionFalse, ""), cond("gate2", v1.ConditionUnknown, "")},
			want:     want(v1.PodReady, v1.ConditionFalse, ReasonReadinessGatesNotReady, `the status of pod readiness gate "gate1" is not "True", but False, the status of pod readiness gate "gate2" is not "True", but Unknown`)},
		{id: "N16", reason: "Ready copies ContainersReady", spec: v1.PodSpec{}, phase: v1.PodRunning,
			want: want(v1.PodReady, v1.ConditionFalse, ReasonUnknownContainerStatuses, "")},
		{id: "8.4/Ready-copies-message", reason: "Ready copies the ContainersReady message", spec: v1.PodSpec{Containers: containers("a")}, regular: []v1.ContainerStatus{notReady("a")}, phase: v1.PodRunning,
			want: want(v1.PodReady, v1.ConditionFalse, ReasonContainersNotReady, "containers with unready status: [a]")},
		{id: "N17", reason: "init containers and nil statuses", spec: v1.PodSpec{InitContainers: containers("i1", "i2")}, phase: v1.PodRunning,
			want: want(v1.PodInitialized, v1.ConditionFalse, ReasonUnknownContainerStatuses, "")},
		{id: "N19", reason: "an init container without status", spec: v1.PodSpec{InitContainers: containers("i1"), Containers: containers("a")}, regular: []v1.ContainerStatus{}, phase: v1.PodRunning,
			want: want(v1.PodInitialized, v1.ConditionFalse, ReasonContainersNotInitialized, "containers with unknown status: [i1]")},
		{id: "8.4/Initialized-incomplete", reason: "unknown and incomplete init containers", spec: v1.PodSpec{InitContainers: containers("i1", "i2", "i3"), Containers: containers("a")},
			init: []v1.ContainerStatus{notReady("i2")}, phase: v1.PodPending,
			want: want(v1.PodInitialized, v1.ConditionFalse, ReasonContainersNotInitialized, "containers with unknown status: [i1 i3], containers with incomplete status: [i2]")},
		{id: "8.4/Initialized-rule-1-needs-init-containers", reason: "nil statuses without init containers: nothing is unknown or incomplete, so rule 6 gives True", spec: v1.PodSpec{Containers: containers("a")}, phase: v1.PodPending,
			want: want(v1.PodInitialized, v1.ConditionTrue, "", "")},
		{id: "N20", reason: "both init containers ready", spec: v1.PodSpec{InitContainers: containers("i1", "i2")}, init: []v1.ContainerStatus{ready("i1"), ready("i2")}, phase: v1.PodRunning,
			want: want(v1.PodInitialized, v1.ConditionTrue, "", "")},
		{id: "N22", reason: "a succeeded pod is initialized", spec: v1.PodSpec{InitContainers: containers("i1")}, init: []v1.ContainerStatus{ready("i1")}, phase: v1.PodSucceeded,
			want: want(v1.PodInitialized, v1.ConditionTrue, ReasonPodCompleted, "")},
		{id: "N23", reason: "a sidecar that has not started", spec: v1.PodSpec{InitContainers: []v1.Container{sidecar("s")}, Containers: containers("a")},
			init: []v1.ContainerStatus{started(notReady("s"), false)}, phase: v1.PodPending,
			want: want(v1.PodInitialized, v1.ConditionFalse, ReasonContainersNotInitialized, "containers with incomplete status: [s]")},
		{id: "N25", reason: "a regular container has already run", spec: v1.PodSpec{InitContainers: []v1.Container{sidecar("s")}, Containers: containers("a")},
			init: []v1.ContainerStatus{started(notReady("s"), false)}, regular: []v1.ContainerStatus{notReady("a")}, phase: v1.PodRunning,
			want: want(v1.PodInitialized, v1.ConditionTrue, "", "")},
		{id: "N26", reason: "no sandbox", spec: v1.PodSpec{Containers: containers("a")}, phase: v1.PodPending, sandbox: SandboxMissing,
			want: want(v1.PodReadyToStartContainers, v1.ConditionFalse, ReasonPodSandboxNotReady, "no pod sandbox exists")},
		{id: "8.4/sandbox-no-ip", reason: "a sandbox without IP", spec: v1.PodSpec{Containers: containers("a")}, phase: v1.PodPending, sandbox: SandboxNoIP,
			want: want(v1.PodReadyToStartContainers, v1.ConditionFalse, ReasonPodSandboxNotReady, "pod sandbox has no IP address")},
		{id: "8.4/sandbox-multiple-ready", reason: "more than one ready sandbox", spec: v1.PodSpec{Containers: containers("a")}, phase: v1.PodPending, sandbox: SandboxMultipleReady,
			want: want(v1.PodReadyToStartContainers, v1.ConditionFalse, ReasonPodSandboxNotReady, "multiple pod sandboxes are ready and need to be reconciled")},
		{id: "8.4/sandbox-not-ready", reason: "the newest sandbox is not ready", spec: v1.PodSpec{Containers: containers("a")}, phase: v1.PodPending, sandbox: SandboxNotReady,
			want: want(v1.PodReadyToStartContainers, v1.ConditionFalse, ReasonPodSandboxNotReady, "pod sandbox is not ready")},
		{id: "8.4/sandbox-network-changed", reason: "the network namespace mode changed", spec: v1.PodSpec{Containers: containers("a")}, phase: v1.PodPending, sandbox: SandboxNetworkChanged,
			want: want(v1.PodReadyToStartContainers, v1.ConditionFalse, ReasonPodSandboxNotReady, "network namespace mode changed and sandbox needs to be recreated")},
		{id: "8.4/sandbox-unknown-value", reason: "a Sandbox value past SandboxNoIP is not ready, with no message", spec: v1.PodSpec{Containers: containers("a")}, phase: v1.PodPending, sandbox: SandboxNoIP + 1,
			want: want(v1.PodReadyToStartContainers, v1.ConditionFalse, ReasonPodSandboxNotReady, "")},
		{id: "8.4/sandbox-ready", reason: "a ready sandbox", spec: v1.PodSpec{Containers: containers("a")}, phase: v1.PodPending,
			want: want(v1.PodReadyToStartContainers, v1.ConditionTrue, "", "")},
		{id: "8.4/PodScheduled", reason: "always True", spec: v1.PodSpec{Containers: containers("a")}, phase: v1.PodPending,
			want: want(v1.PodScheduled, v1.ConditionTrue, "", "")},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			pod := &v1.Pod{Spec: tc.spec, Status: v1.PodStatus{Conditions: tc.apiConds}}
			s := &v1.PodStatus{Phase: tc.phase, InitContainerStatuses: tc.init, ContainerStatuses: tc.regular}
			conds, err := Conditions(ConditionsInput{Pod: pod, Status: s, Sandbox: tc.sandbox, Now: t0})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, pickCondition(t, conds, tc.want.Type)); diff != "" {
				t.Errorf("%s (%s): mismatch (-want +got):\n%s", tc.id, tc.reason, diff)
			}
		})
	}
}

func restartAllSpec() v1.PodSpec {
	rc := withRule(withPolicy(ctr("rc"), v1.ContainerRestartPolicyNever), v1.ContainerRestartRuleActionRestartAllContainers, 42)
	return v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{rc}}
}

// TestAllContainersRestarting traces N28 and the table of spec section 7.
func TestAllContainersRestarting(t *testing.T) {
	exited42 := []v1.ContainerStatus{terminated("rc", 42, "Error", 0)}
	restartingOld := &v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.AllContainersRestarting, Status: v1.ConditionTrue}}}
	restartOneFirst := v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{
		withRule(withRule(withPolicy(ctr("rc"), v1.ContainerRestartPolicyNever), v1.ContainerRestartRuleActionRestart, 1), v1.ContainerRestartRuleActionRestartAllContainers, 42)}}
	tests := []struct {
		id        string
		reason    string
		phase     v1.PodPhase
		statuses  []v1.ContainerStatus
		old       *v1.PodStatus
		cleanedUp bool
		spec      *v1.PodSpec // restartAllSpec() when nil
		want      v1.PodCondition
	}{
		{id: "N28", reason: "the rule container exited 42", phase: v1.PodRunning, statuses: exited42,
			want: want(v1.AllContainersRestarting, v1.ConditionTrue, ReasonRestartAllContainersStarted, MessageRestartAllContainersStarted)},
		{id: "7/succeeded", reason: "a succeeded pod", phase: v1.PodSucceeded, statuses: exited42,
			want: want(v1.AllContainersRestarting, v1.ConditionFalse, ReasonPodCompleted, "")},
		{id: "7/failed", reason: "a failed pod", phase: v1.PodFailed, statuses: exited42,
			want: want(v1.AllContainersRestarting, v1.ConditionFalse, ReasonPodFailed, "")},
		{id: "7/not-restarting", reason: "exit 1 matches no rule", phase: v1.PodRunning, statuses: []v1.ContainerStatus{terminated("rc", 1, "Error", 0)},
			want: want(v1.AllContainersRestarting, v1.ConditionFalse, "", "")},
		{id: "7/restart-rule-first", reason: "exit 1 first matches a rule that restarts only the container: not restarting all", phase: v1.PodRunning, statuses: []v1.ContainerStatus{terminated("rc", 1, "Error", 0)},
			spec: &restartOneFirst,
			want: want(v1.AllContainersRestarting, v1.ConditionFalse, "", "")},
		{id: "7/sticky", reason: "the old condition was True: still restarting", phase: v1.PodPending, statuses: []v1.ContainerStatus{waiting("rc", ReasonRestartingAllContainers, 1)}, old: restartingOld,
			want: want(v1.AllContainersRestarting, v1.ConditionTrue, ReasonRestartAllContainersStarted, MessageRestartAllContainersStarted)},
		{id: "7/cleaned-up", reason: "no runtime status left", phase: v1.PodPending, statuses: []v1.ContainerStatus{waiting("rc", ReasonRestartingAllContainers, 1)}, old: restartingOld, cleanedUp: true,
			want: want(v1.AllContainersRestarting, v1.ConditionFalse, "", "")},
		{id: "7/old-terminated", reason: "the old status shows the triggering exit", phase: v1.PodPending, statuses: []v1.ContainerStatus{waiting("rc", ReasonRestartingAllContainers, 1)},
			old:  &v1.PodStatus{ContainerStatuses: exited42},
			want: want(v1.AllContainersRestarting, v1.ConditionTrue, ReasonRestartAllContainersStarted, MessageRestartAllContainersStarted)},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: restartAllSpec()}
			if tc.spec != nil {
				pod.Spec = *tc.spec
			}
			conds, err := Conditions(ConditionsInput{Pod: pod, Old: tc.old, Status: &v1.PodStatus{Phase: tc.phase, ContainerStatuses: tc.statuses}, RuntimeCleanedUp: tc.cleanedUp, Now: t0})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, pickCondition(t, conds, v1.AllContainersRestarting)); diff != "" {
				t.Errorf("%s (%s): mismatch (-want +got):\n%s", tc.id, tc.reason, diff)
			}
			if c := podcond.Find(conds, v1.AllContainersRestarting); c.ObservedGeneration != 0 {
				t.Errorf("AllContainersRestarting carries observedGeneration %d, want none", c.ObservedGeneration)
			}
		})
	}

	// Without a RestartAllContainers rule, or with the gate off, there is no
	// such condition.
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: containers("a")}}
	conds, _ := Conditions(ConditionsInput{Pod: pod, Status: &v1.PodStatus{Phase: v1.PodRunning}})
	if podcond.Find(conds, v1.AllContainersRestarting) != nil {
		t.Error("7: condition emitted for a pod without RestartAllContainers rules")
	}
	off := DefaultOptions()
	off.Features.RestartAllContainersOnContainerExits = false
	pod = &v1.Pod{Spec: restartAllSpec()}
	conds, _ = off.Conditions(ConditionsInput{Pod: pod, Status: &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: exited42}})
	if podcond.Find(conds, v1.AllContainersRestarting) != nil {
		t.Error("8.1: condition emitted with the gate off")
	}
}

// TestInitializedStaysTrueDuringRestartAll traces the exception of spec
// section 8.4 rule 5 and section 7.
func TestInitializedStaysTrueDuringRestartAll(t *testing.T) {
	spec := v1.PodSpec{InitContainers: containers("i"), Containers: containers("a")}
	pod := &v1.Pod{Spec: spec}
	old := &v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}}}
	s := &v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{notReady("i")}, ContainerStatuses: []v1.ContainerStatus{waiting("a", "", 0)}}
	conds, _ := Conditions(ConditionsInput{Pod: pod, Old: old, Status: s, Now: t1})
	if got := pickCondition(t, conds, v1.PodInitialized); got.Status != v1.ConditionTrue {
		t.Errorf("gate on: Initialized = %+v, want it to stay True", got)
	}
	off := DefaultOptions()
	off.Features.RestartAllContainersOnContainerExits = false
	conds, _ = off.Conditions(ConditionsInput{Pod: pod, Old: old, Status: s, Now: t1})
	if got := pickCondition(t, conds, v1.PodInitialized); got.Status != v1.ConditionFalse || got.Reason != ReasonContainersNotInitialized {
		t.Errorf("gate off: Initialized = %+v, want False/ContainersNotInitialized", got)
	}
}

// TestConditionsAssembly traces spec sections 8.1 to 8.3: ownership,
// order, DisruptionTarget and resize conditions, observedGeneration and
// lastTransitionTime.
func TestConditionsAssembly(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Generation: 7},
		Spec:       v1.PodSpec{Containers: containers("a"), ReadinessGates: []v1.PodReadinessGate{{ConditionType: "example.com/gate"}}},
		Status: v1.PodStatus{Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "SomeoneElse"},
			{Type: "example.com/gate", Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-time1h))},
			{Type: v1.DisruptionTarget, Status: v1.ConditionFalse, Reason: "FromAPI"},
		}},
	}
	old := &v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)},
		{Type: v1.ContainersReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(t0)},
		{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "TerminationByKubelet", LastTransitionTime: metav1.NewTime(t0)},
		{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: "Deferred", ObservedGeneration: 5},
		{Type: "example.com/cached", Status: v1.ConditionTrue},
	}}
	s := &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{ready("a")}}
	conds, err := Conditions(ConditionsInput{Pod: pod, Old: old, Status: s, Now: t1})
	if err != nil {
		t.Fatal(err)
	}
	var types []v1.PodConditionType
	for _, c := range conds {
		types = append(types, c.Type)
	}
	wantTypes := []v1.PodConditionType{"example.com/gate", v1.DisruptionTarget, v1.PodResizePending, v1.PodReadyToStartContainers,
		v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Errorf("8.2 order: the API's non-owned conditions, DisruptionTarget replaced in place, resize from the cache, then the kubelet's (-want +got):\n%s", diff)
	}
	dt := podcond.Find(conds, v1.DisruptionTarget)
	if dt.Reason != "TerminationByKubelet" || !dt.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("8.2 step 3: DisruptionTarget = %+v, want the cached one with its time", dt)
	}
	if r := podcond.Find(conds, v1.PodReady); r.Status != v1.ConditionTrue || !r.LastTransitionTime.Time.Equal(t0) || r.ObservedGeneration != 7 {
		t.Errorf("8.3: Ready = %+v, want True with the old time (status unchanged) and generation 7", r)
	}
	if r := podcond.Find(conds, v1.ContainersReady); !r.LastTransitionTime.Time.Equal(t1) {
		t.Errorf("8.3: ContainersReady flipped, want time now, got %v", r.LastTransitionTime)
	}
	if r := podcond.Find(conds, v1.PodScheduled); !r.LastTransitionTime.Time.Equal(t1) || r.ObservedGeneration != 7 {
		t.Errorf("8.3: PodScheduled new: %+v", r)
	}
	if g := podcond.Find(conds, "example.com/gate"); !g.LastTransitionTime.Time.Equal(t0.Add(-time1h)) {
		t.Errorf("8.1: a non-owned condition must be preserved as is, got %+v", g)
	}
	if r := podcond.Find(conds, v1.PodResizePending); r.ObservedGeneration != 5 {
		t.Errorf("8.3: resize conditions keep their own observedGeneration, got %d", r.ObservedGeneration)
	}

	// A terminal pod drops the resize conditions.
	s.Phase = v1.PodSucceeded
	conds, _ = Conditions(ConditionsInput{Pod: pod, Old: old, Status: s, Now: t1})
	if podcond.Find(conds, v1.PodResizePending) != nil {
		t.Error("8.2 step 2: resize conditions must be cleared on a terminal pod")
	}
}

func TestConditionsErrors(t *testing.T) {
	if _, err := Conditions(ConditionsInput{}); err != ErrNilPod {
		t.Errorf("nil pod: %v", err)
	}
	if _, err := Conditions(ConditionsInput{Pod: &v1.Pod{}}); err == nil {
		t.Error("nil status: no error")
	}
}

// TestReadyConditionStale: the readiness reconcile of a status-only update
// (spec/podlifecycle.md rule 4.5): a pod with readiness gates whose API
// Ready condition disagrees in status or message with what the gates and
// container statuses give is synced at once; nothing else is.
func TestReadyConditionStale(t *testing.T) {
	gated := func(readyStatus v1.ConditionStatus, msg string, gate *v1.ConditionStatus) *v1.Pod {
		p := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app"}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: "example.com/lb"}}},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{ready("app")},
				Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: readyStatus, Message: msg}}}}
		if gate != nil {
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: "example.com/lb", Status: *gate})
		}
		return p
	}
	tr, fa := v1.ConditionTrue, v1.ConditionFalse
	missing := `corresponding condition of pod readiness gate "example.com/lb" does not exist.`
	tests := []struct {
		name   string
		pod    *v1.Pod
		want   bool
		reason string
	}{
		{"gate set True, Ready still False", gated(fa, missing, &tr), true, "another controller set the gate: Ready must turn True"},
		{"gate True, Ready True", gated(tr, "", &tr), false, "the API agrees with the gates"},
		{"gate missing, Ready False with its message", gated(fa, missing, nil), false, "the API agrees with the gates"},
		{"gate missing, Ready False with another message", gated(fa, "old message", nil), true, "a message differs: reconcile"},
		{"gate False, Ready True", gated(tr, "", &fa), true, "the gate went False: Ready must follow"},
		{"no Ready condition", func() *v1.Pod { p := gated(fa, "", &tr); p.Status.Conditions = p.Status.Conditions[1:]; return p }(), false,
			"the kubelet reconciles only a Ready condition that exists"},
		{"no readiness gates", &v1.Pod{Status: v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: fa}}}}, false,
			"without gates a status-only update never syncs"},
		{"nil pod", nil, false, "documented answer"},
	}
	for _, tt := range tests {
		if got := ReadyConditionStale(tt.pod); got != tt.want {
			t.Errorf("%s: ReadyConditionStale = %v, want %v (%s)", tt.name, got, tt.want, tt.reason)
		}
	}
}
