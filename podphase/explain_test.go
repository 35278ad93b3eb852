package podphase

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func TestExplain(t *testing.T) {
	tests := []struct {
		name     string
		reason   string
		spec     v1.PodSpec
		statuses string
		in       Input
		want     Explanation
	}{
		{
			name: "init failure", reason: "step 1 names the failed init container",
			spec: specOf(never, x(), ab...), statuses: "X:Tf",
			want: Explanation{Phase: v1.PodFailed, Rule: RuleInitFailed, Reason: `init container "X" failed and will not be restarted`, Containers: []string{"X"}},
		},
		{
			name: "waiting", reason: "step 3 names the waiting container and its reason",
			spec: specOf(always, nil, ab...), statuses: "A:R B:W",
			want: Explanation{Phase: v1.PodPending, Rule: RuleWaiting, Reason: `container "B" is waiting (ContainerCreating)`, Containers: []string{"B"}},
		},
		{
			name: "running, init done", reason: "step 4 names the running containers, not the init container that completed",
			spec: specOf(always, x(), ab...), statuses: "X:T0 A:R B:R",
			want: Explanation{Phase: v1.PodRunning, Rule: RuleRunning, Reason: `containers "A" and "B" are running and every container has a status`, Containers: []string{"A", "B"}},
		},
		{
			name: "running four", reason: "past two names, the rest are counted",
			spec: specOf(always, nil, ctr("A"), ctr("B"), ctr("C"), ctr("D")), statuses: "A:R B:R C:R D:R",
			want: Explanation{Phase: v1.PodRunning, Rule: RuleRunning, Reason: `containers "A", "B" and 2 more are running and every container has a status`, Containers: []string{"A", "B", "C", "D"}},
		},
		{
			name: "sidecar pending after an init container", reason: "step 2 names the sidecar declared after a completed regular init container (S17)",
			spec: specOf(always, []v1.Container{ctr("X"), sidecar("Y")}, ctr("A")), statuses: "X:T0 Y:R A:W", in: Input{Initialized: ptr(false)},
			want: Explanation{Phase: v1.PodPending, Rule: RuleSidecarPending, Reason: `sidecar "Y" has not started and no regular container has run in this sandbox`, Containers: []string{"Y"}},
		},
		{
			name: "waiting, own reason", reason: "step 3 shows the waiting reason of the named container, not of a crash-looping sidecar listed before it",
			spec: specOf(always, xsc(), ctr("A")), statuses: "X:WLf A:W",
			want: Explanation{Phase: v1.PodPending, Rule: RuleWaiting, Reason: `container "A" is waiting (ContainerCreating)`, Containers: []string{"A"}},
		},
		{
			name: "terminated, succeeded", reason: "step 5.1: a terminated pod whose containers all exited 0 succeeded, whatever the restart policy",
			spec: specOf(always, nil, ab...), statuses: "A:T0 B:T0", in: Input{Terminal: true},
			want: Explanation{Phase: v1.PodSucceeded, Rule: RuleTerminated, Reason: `the pod was terminated and containers "A" and "B" succeeded`, Containers: []string{"A", "B"}},
		},
		{
			name: "terminated, failed", reason: "step 5.1: a terminated pod with a failed container failed; that container is named",
			spec: specOf(always, nil, ab...), statuses: "A:T0 B:Tf", in: Input{Terminal: true},
			want: Explanation{Phase: v1.PodFailed, Rule: RuleTerminated, Reason: `the pod was terminated and container "B" failed`, Containers: []string{"B"}},
		},
		{
			name: "sidecar pending", reason: "step 2 names the sidecar that has not started",
			spec: specOf(always, xsc(), ab...), statuses: "X:R A:R B:R", in: Input{Initialized: ptr(false)},
			want: Explanation{Phase: v1.PodPending, Rule: RuleSidecarPending, Reason: `sidecar "X" has not started and no regular container has run in this sandbox`, Containers: []string{"X"}},
		},
		{
			name: "restarting", reason: "steps 5.2: only the container that will restart is named",
			spec: specOf(onFailure, nil, ab...), statuses: "A:T0 B:Tf",
			want: Explanation{Phase: v1.PodRunning, Rule: RuleRestarting, Reason: `container "B" stopped and will be restarted`, Containers: []string{"B"}},
		},
		{
			name: "failed", reason: "the failed container decides, not the succeeded one",
			spec: specOf(never, nil, ab...), statuses: "A:T0 B:Tf",
			want: Explanation{Phase: v1.PodFailed, Rule: RuleFailed, Reason: `container "B" failed and will not be restarted`, Containers: []string{"B"}},
		},
		{
			name: "succeeded", reason: "all stopped containers are named",
			spec: specOf(never, xsc(), ab...), statuses: "X:WLf A:T0 B:T0",
			want: Explanation{Phase: v1.PodSucceeded, Rule: RuleSucceeded, Reason: `containers "A" and "B" succeeded and none will be restarted`, Containers: []string{"A", "B"}},
		},
		{
			name: "running many", reason: "long lists are cut after two names",
			spec: specOf(always, xsc(), ab...), statuses: "X:S A:R B:R",
			want: Explanation{Phase: v1.PodRunning, Rule: RuleRunning, Reason: `containers "X", "A" and 1 more are running and every container has a status`, Containers: []string{"X", "A", "B"}},
		},
		{
			name: "unknown", reason: "step 6 names the containers without status",
			spec: specOf(always, nil, ab...), statuses: "",
			want: Explanation{Phase: v1.PodPending, Rule: RuleUnknownStatus, Reason: `containers "A" and "B" have no status yet`, Containers: []string{"A", "B"}},
		},
		{
			name: "no containers", reason: "step 6 with nothing to name",
			spec: specOf(always, nil), statuses: "",
			want: Explanation{Phase: v1.PodPending, Rule: RuleNotStarted, Reason: "no container is running or has stopped"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Pod = podOf(t, tc.spec, tc.statuses)
			got, err := Explain(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: mismatch (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestExplainGateOff traces spec section 3.3 step 5.3 (ContainerRestartRules
// off): under Always every stopped container will restart; under OnFailure
// only the failed ones, and those are the ones named.
func TestExplainGateOff(t *testing.T) {
	off := DefaultOptions()
	off.Features.ContainerRestartRules = false
	tests := []struct {
		id     string
		policy v1.RestartPolicy
		want   Explanation
	}{
		{id: "3.3/5.3-always", policy: always,
			want: Explanation{Phase: v1.PodRunning, Rule: RuleRestarting, Reason: `containers "A" and "B" stopped and will be restarted`, Containers: []string{"A", "B"}}},
		{id: "3.3/5.3-on-failure", policy: onFailure,
			want: Explanation{Phase: v1.PodRunning, Rule: RuleRestarting, Reason: `container "B" stopped and will be restarted`, Containers: []string{"B"}}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			got, err := off.Explain(Input{Pod: podOf(t, specOf(tc.policy, nil, ab...), "A:T0 B:Tf")})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: mismatch (-want +got):\n%s", tc.id, diff)
			}
		})
	}
}

// TestExplainDerivedInitialized traces spec section 3.1: without the
// runtime's podHasInitialized, the pod has initialized when some regular
// container status is Running or Terminated or has lastState.terminated, and
// a sidecar that has not started then no longer keeps it Pending (step 2).
func TestExplainDerivedInitialized(t *testing.T) {
	lastTerminated := v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}
	tests := []struct {
		id     string
		reason string
		last   *v1.ContainerStateTerminated // A's lastState.terminated; A has no current state
		want   Explanation
	}{
		{id: "3.1/last-state", reason: "a regular container with no state but a last termination has run: the pod has initialized, and A without a state is unknown (step 6)",
			last: &lastTerminated,
			want: Explanation{Phase: v1.PodPending, Rule: RuleUnknownStatus, Reason: `container "A" has no status yet`, Containers: []string{"A"}}},
		{id: "3.1/no-state", reason: "a regular container with neither state nor last termination has not run: the sidecar that has not started keeps the pod Pending (step 2)",
			want: Explanation{Phase: v1.PodPending, Rule: RuleSidecarPending, Reason: `sidecar "X" has not started and no regular container has run in this sandbox`, Containers: []string{"X"}}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			pod := podOf(t, specOf(always, xsc(), ctr("A")), "X:R A:none")
			pod.Status.ContainerStatuses[0].LastTerminationState.Terminated = tc.last
			got, err := Explain(Input{Pod: pod})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (%s): mismatch (-want +got):\n%s", tc.id, tc.reason, diff)
			}
		})
	}
}

// TestTerminalPhaseKept traces spec section 4.1 steps 3 and 6 and section
// 5: a terminal status.phase is what the kubelet writes again.
func TestTerminalPhaseKept(t *testing.T) {
	tests := []struct {
		id       string
		reason   string
		apiPhase v1.PodPhase
		statuses string
		want     Explanation
	}{
		{id: "4.1/6-running-again", reason: "containers running again under a Succeeded pod: still Succeeded", apiPhase: v1.PodSucceeded, statuses: "A:R B:R",
			want: Explanation{Phase: v1.PodSucceeded, Rule: RuleTerminalPhase, Reason: "the pod is already Succeeded and a terminal phase never changes (the container statuses alone give Running)"}},
		{id: "4.1/3-statuses-lost", reason: "statuses gone from a Failed pod: still Failed", apiPhase: v1.PodFailed, statuses: "",
			want: Explanation{Phase: v1.PodFailed, Rule: RuleTerminalPhase, Reason: "the pod is already Failed and a terminal phase never changes (the container statuses alone give Pending)"}},
		{id: "4.1/6-agrees", reason: "statuses agree with the recorded phase", apiPhase: v1.PodFailed, statuses: "A:Tf B:T0",
			want: Explanation{Phase: v1.PodFailed, Rule: RuleTerminalPhase, Reason: "the pod is already Failed and a terminal phase never changes"}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			pod := podOf(t, specOf(never, nil, ab...), tc.statuses)
			pod.Status.Phase = tc.apiPhase
			got, err := Explain(Input{Pod: pod})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (%s): mismatch (-want +got):\n%s", tc.id, tc.reason, diff)
			}
			if p := Phase(pod); p != tc.apiPhase {
				t.Errorf("%s: Phase = %s, want %s", tc.id, p, tc.apiPhase)
			}
		})
	}
	// A non-terminal recorded phase is recomputed.
	pod := podOf(t, specOf(never, nil, ab...), "A:R B:R")
	pod.Status.Phase = v1.PodPending
	if p := Phase(pod); p != v1.PodRunning {
		t.Errorf("Pending recorded, containers running: Phase = %s, want Running", p)
	}
}

// TestExplainEvicted is issue 11's case: the explanation of a pod the
// kubelet evicted says so, with the eviction message, instead of only that
// a terminal phase never changes (spec section 4.1, step 6: the sync
// handler's reason and message are written with Failed).
func TestExplainEvicted(t *testing.T) {
	tests := []struct {
		reason         string
		podReason, msg string
		statuses       string
		want           string
	}{
		{reason: "evicted for memory while its containers were running", podReason: ReasonEvicted, msg: "The node was low on resource: memory.", statuses: "A:R B:R",
			want: "the kubelet evicted the pod (Evicted: The node was low on resource: memory.), so it is Failed and a terminal phase never changes (the container statuses alone give Running)"},
		{reason: "evicted, containers already stopped, no message", podReason: ReasonEvicted, statuses: "A:Tf B:T0",
			want: "the kubelet evicted the pod (Evicted), so it is Failed and a terminal phase never changes"},
		{reason: "the active deadline handler failed the pod", podReason: ReasonDeadlineExceeded, msg: "Pod was active on the node longer than the specified deadline", statuses: "A:R B:R",
			want: "the pod ran past its activeDeadlineSeconds (DeadlineExceeded: Pod was active on the node longer than the specified deadline), so it is Failed and a terminal phase never changes (the container statuses alone give Running)"},
		{reason: "another reason is quoted", podReason: "UnexpectedAdmissionError", msg: "Allocate failed", statuses: "A:Tf B:T0",
			want: "the pod is already Failed (UnexpectedAdmissionError: Allocate failed) and a terminal phase never changes"},
	}
	for _, tc := range tests {
		pod := podOf(t, specOf(never, nil, ab...), tc.statuses)
		pod.Status.Phase, pod.Status.Reason, pod.Status.Message = v1.PodFailed, tc.podReason, tc.msg
		got, err := Explain(Input{Pod: pod})
		if err != nil {
			t.Fatal(err)
		}
		if got.Phase != v1.PodFailed || got.Rule != RuleTerminalPhase || got.Reason != tc.want {
			t.Errorf("%s:\ngot  %v\nwant Failed (TerminalPhase): %s", tc.reason, got, tc.want)
		}
	}
}

func TestExplainErrors(t *testing.T) {
	if _, err := Explain(Input{}); !errors.Is(err, ErrNilPod) {
		t.Errorf("nil pod: err = %v, want ErrNilPod", err)
	}
	pod := podOf(t, specOf(always, nil, ab...), "A:R B:R")
	pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, v1.ContainerStatus{Name: "ghost"})
	_, err := Explain(Input{Pod: pod})
	var unknown *UnknownContainerError
	if !errors.As(err, &unknown) || unknown.Name != "ghost" || unknown.Field != "containerStatuses" {
		t.Errorf("unknown container: err = %v", err)
	}
	if !errors.Is(err, ErrInvalidInput) || err.Error() != `podphase: status.containerStatuses has an entry for container "ghost" that the spec does not have` {
		t.Errorf("message = %q", err.Error())
	}
	pod = podOf(t, specOf(always, x(), ab...), "X:R X:T0")
	_, err = Explain(Input{Pod: pod})
	var dup *DuplicateStatusError
	if !errors.As(err, &dup) || dup.Name != "X" || dup.Field != "initContainerStatuses" {
		t.Errorf("duplicate: err = %v", err)
	}
	if err.Error() != `podphase: status.initContainerStatuses has two entries for container "X"` {
		t.Errorf("duplicate: message = %q", err.Error())
	}
}

func TestRuleString(t *testing.T) {
	if got := RuleSidecarPending.String(); got != "SidecarPending" {
		t.Errorf("String = %q", got)
	}
	if got := Rule(200).String(); got != "Rule(200)" {
		t.Errorf("String = %q", got)
	}
	if next := RuleTerminalPhase + 1; next.String() != fmt.Sprintf("Rule(%d)", uint8(next)) {
		t.Errorf("the value after the last rule: String = %q", next.String())
	}
	e := Explanation{Phase: v1.PodRunning, Rule: RuleRunning, Reason: "r"}
	if got := e.String(); got != "Running (Running): r" {
		t.Errorf("String = %q", got)
	}
}

// TestExplainErrorsLarge checks the set-based path of the status check.
func TestExplainErrorsLarge(t *testing.T) {
	pod := steadyPod(40)
	if _, err := Explain(Input{Pod: pod}); err != nil {
		t.Fatalf("valid pod: %v", err)
	}
	pod.Status.ContainerStatuses[30].Name = "app-3"
	var dup *DuplicateStatusError
	if _, err := Explain(Input{Pod: pod}); !errors.As(err, &dup) || dup.Name != "app-3" {
		t.Errorf("duplicate: %v", err)
	}
	pod.Status.ContainerStatuses[30].Name = "ghost"
	var unknown *UnknownContainerError
	if _, err := Explain(Input{Pod: pod}); !errors.As(err, &unknown) || unknown.Name != "ghost" {
		t.Errorf("unknown: %v", err)
	}
}
