package podphase

import (
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Builders for the kubectl cases; now is t0.
func running(name string, ready bool, restarts int32) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, Ready: ready, RestartCount: restarts, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
}

func lastTerminated(st v1.ContainerStatus, ago time.Duration) v1.ContainerStatus {
	st.LastTerminationState.Terminated = &v1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(-ago))}
	return st
}

func terminated(name string, exit int32, reason string, restarts int32) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, RestartCount: restarts, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: exit, Reason: reason}}}
}

func waiting(name, reason string, restarts int32) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, RestartCount: restarts, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}}
}

func started(st v1.ContainerStatus, s bool) v1.ContainerStatus {
	st.Started = &s
	return st
}

func cond(t v1.PodConditionType, s v1.ConditionStatus, reason string) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: s, Reason: reason}
}

func containers(names ...string) []v1.Container {
	var cs []v1.Container
	for _, n := range names {
		cs = append(cs, ctr(n))
	}
	return cs
}

type displayCase struct {
	id       string // spec/podphase.md section 11.7 case, or the section 9 rule
	reason   string
	pod      v1.Pod
	ready    string
	status   string
	restarts string
}

func TestColumns(t *testing.T) {
	deleting := metav1.NewTime(t0)
	tests := []displayCase{
		{id: "K01", reason: "a container with no state has no reason: the phase shows", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: "podPhase", ContainerStatuses: []v1.ContainerStatus{running("a", true, 3), {Name: "b", RestartCount: 3}}},
		}, ready: "1/2", status: "podPhase", restarts: "6"},
		{id: "K02", reason: "a waiting reason replaces the phase", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: "podPhase", ContainerStatuses: []v1.ContainerStatus{running("a", true, 3), waiting("b", "ContainerWaitingReason", 3)}},
		}, ready: "1/2", status: "ContainerWaitingReason", restarts: "6"},
		{id: "K04", reason: "ready alone, without a running state, is not counted", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: "podPhase", ContainerStatuses: []v1.ContainerStatus{running("a", true, 3), {Name: "b", Ready: true, RestartCount: 3}}},
		}, ready: "1/2", status: "podPhase", restarts: "6"},
		{id: "K05", reason: "the pod reason replaces the phase", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: "podPhase", Reason: "podReason", ContainerStatuses: []v1.ContainerStatus{running("a", true, 3), {Name: "b", Ready: true, RestartCount: 3}}},
		}, ready: "1/2", status: "podReason", restarts: "6"},
		{id: "K07", reason: "Completed with a ready running container and Ready=True shows Running", pod: v1.Pod{
			Spec: v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, "")},
				ContainerStatuses: []v1.ContainerStatus{func() v1.ContainerStatus { s := terminated("a", 0, "Completed", 3); s.Ready = true; return s }(), running("b", true, 3)}},
		}, ready: "1/2", status: "Running", restarts: "6"},
		{id: "K08", reason: "a running init container shows Init:0/1 with its restarts and age", pod: v1.Pod{
			Spec:   v1.PodSpec{InitContainers: containers("i"), Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{lastTerminated(running("i", false, 3), 10*time.Second)}, ContainerStatuses: []v1.ContainerStatus{waiting("a", "", 0)}},
		}, ready: "0/1", status: "Init:0/1", restarts: "3 (10s ago)"},
		{id: "K10", reason: "the completed init container is skipped: Init:1/2", pod: v1.Pod{
			Spec:   v1.PodSpec{InitContainers: containers("i1", "i2"), Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{terminated("i1", 0, "", 0), lastTerminated(running("i2", false, 3), 10*time.Second)}},
		}, ready: "0/1", status: "Init:1/2", restarts: "3 (10s ago)"},
		{id: "K11", reason: "init restarts add up and the latest termination gives the age", pod: v1.Pod{
			Spec: v1.PodSpec{InitContainers: containers("i1", "i2"), Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{
				lastTerminated(terminated("i1", 0, "", 2), 2*time.Minute), lastTerminated(running("i2", false, 3), 10*time.Second)}},
		}, ready: "0/1", status: "Init:1/2", restarts: "5 (10s ago)"},
		{id: "K13", reason: "ages in days", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{lastTerminated(running("a", true, 3), 5*24*time.Hour)}},
		}, ready: "1/1", status: "Running", restarts: "3 (5d ago)"},
		{id: "K14", reason: "restarts sum over containers", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("a", true, 0), lastTerminated(running("b", true, 3), 10*24*time.Hour)}},
		}, ready: "2/2", status: "Running", restarts: "3 (10d ago)"},
		{id: "K16", reason: "a PodScheduled condition with reason SchedulingGated", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{cond(v1.PodScheduled, v1.ConditionFalse, v1.PodReasonSchedulingGated)}},
		}, ready: "0/2", status: "SchedulingGated", restarts: "0"},
		{id: "9.3/scheduled", reason: "a PodScheduled condition without reason SchedulingGated changes nothing (spec section 9, step 3)", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{cond(v1.PodScheduled, v1.ConditionTrue, "")}},
		}, ready: "0/2", status: "Pending", restarts: "0"},
		{id: "9.3/other-type", reason: "reason SchedulingGated on a condition of another type changes nothing (spec section 9, step 3)", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{cond("example.com/gate", v1.ConditionFalse, v1.PodReasonSchedulingGated)}},
		}, ready: "0/2", status: "Pending", restarts: "0"},
		{id: "K17", reason: "a succeeded pod shows its container's Completed", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: []v1.ContainerStatus{terminated("a", 0, "Completed", 0)}},
		}, ready: "0/1", status: "Completed", restarts: "0"},
		{id: "K19", reason: "a deleting Succeeded pod still shows Completed", pod: v1.Pod{
			ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleting},
			Spec:       v1.PodSpec{Containers: containers("a")},
			Status:     v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: []v1.ContainerStatus{terminated("a", 0, "Completed", 0)}},
		}, ready: "0/1", status: "Completed", restarts: "0"},
		{id: "K20", reason: "a deleting Running pod shows Terminating", pod: v1.Pod{
			ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleting},
			Spec:       v1.PodSpec{Containers: containers("a")},
			Status:     v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("a", false, 0)}},
		}, ready: "0/1", status: "Terminating", restarts: "0"},
		{id: "K22", reason: "a sidecar not started stops the init loop; sidecars count in the total", pod: v1.Pod{
			Spec: v1.PodSpec{InitContainers: []v1.Container{sidecar("s1"), sidecar("s2")}, Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{cond(v1.PodInitialized, v1.ConditionFalse, "")},
				InitContainerStatuses: []v1.ContainerStatus{started(lastTerminated(running("s1", false, 3), 10*time.Second), false), started(waiting("s2", "", 0), false)},
				ContainerStatuses:     []v1.ContainerStatus{waiting("a", "", 0)}},
		}, ready: "0/3", status: "Init:0/2", restarts: "3 (10s ago)"},
		{id: "K23", reason: "a started sidecar is passed over", pod: v1.Pod{
			Spec: v1.PodSpec{InitContainers: []v1.Container{sidecar("s1"), sidecar("s2")}, Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{cond(v1.PodInitialized, v1.ConditionFalse, "")},
				InitContainerStatuses: []v1.ContainerStatus{started(lastTerminated(running("s1", false, 3), 10*time.Second), true), started(running("s2", false, 0), false)},
				ContainerStatuses:     []v1.ContainerStatus{waiting("a", "", 0)}},
		}, ready: "0/3", status: "Init:1/2", restarts: "3 (10s ago)"},
		{id: "K25", reason: "Initialized=True: only sidecar restarts seen before the break count, plus the containers'", pod: v1.Pod{
			Spec: v1.PodSpec{InitContainers: []v1.Container{sidecar("s1"), sidecar("s2")}, Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodSucceeded, Conditions: []v1.PodCondition{cond(v1.PodInitialized, v1.ConditionTrue, "")},
				InitContainerStatuses: []v1.ContainerStatus{lastTerminated(terminated("s1", 137, "Error", 3), 10*time.Second), terminated("s2", 137, "Error", 0)},
				ContainerStatuses:     []v1.ContainerStatus{lastTerminated(terminated("a", 0, "Completed", 4), 20*time.Second)}},
		}, ready: "0/3", status: "Completed", restarts: "7 (10s ago)"},
		{id: "K26", reason: "statuses of unknown containers are read by position; the denominator is the spec's", pod: v1.Pod{
			Spec: v1.PodSpec{InitContainers: []v1.Container{ctr("init1"), sidecar("sidecar1")}, Containers: containers("container1")},
			Status: v1.PodStatus{Phase: v1.PodRunning,
				InitContainerStatuses: []v1.ContainerStatus{{Name: "initinvalid"}, {Name: "init1"}, {Name: "sidecar1"}},
				ContainerStatuses:     []v1.ContainerStatus{{Name: "containerinvalid"}, {Name: "container1"}}},
		}, ready: "0/2", status: "Init:0/2", restarts: "0"},
		{id: "K26/no-init-spec", reason: "as K26, with no init container in the spec: the denominator is still the spec's, 0 (spec section 9, step 5)", pod: v1.Pod{
			Spec: v1.PodSpec{Containers: containers("container1")},
			Status: v1.PodStatus{Phase: v1.PodPending,
				InitContainerStatuses: []v1.ContainerStatus{{Name: "initinvalid"}}},
		}, ready: "0/1", status: "Init:0/0", restarts: "0"},
		{id: "9.5/by-name", reason: "init statuses out of spec order: the sidecar is found by name, so the regular init container's restarts stop counting and the started sidecar is ready (spec section 9, step 5)", pod: v1.Pod{
			Spec: v1.PodSpec{InitContainers: []v1.Container{sidecar("s"), ctr("i")}, Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodRunning,
				InitContainerStatuses: []v1.ContainerStatus{terminated("i", 0, "Completed", 2), started(running("s", true, 0), true)},
				ContainerStatuses:     []v1.ContainerStatus{running("a", true, 0)}},
		}, ready: "2/2", status: "Running", restarts: "0"},
		{id: "K28", reason: "the Failed phase shows", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: []v1.ContainerStatus{running("a", true, 3), {Name: "b", RestartCount: 3}}},
		}, ready: "1/2", status: "Failed", restarts: "6"},
		{id: "KD1", reason: "derived: a deleting pod with reason NodeLost shows Unknown", pod: v1.Pod{
			ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleting},
			Spec:       v1.PodSpec{Containers: containers("a")},
			Status:     v1.PodStatus{Phase: v1.PodRunning, Reason: ReasonNodeLost, ContainerStatuses: []v1.ContainerStatus{running("a", true, 0)}},
		}, ready: "1/1", status: "Unknown", restarts: "0"},
		{id: "KD2", reason: "derived: an init failure with no reason and no signal", pod: v1.Pod{
			Spec:   v1.PodSpec{InitContainers: containers("i"), Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{terminated("i", 1, "", 0)}},
		}, ready: "0/1", status: "Init:ExitCode:1", restarts: "0"},
		{id: "KD2/signal", reason: "9.5: an init failure with a signal and no reason", pod: v1.Pod{
			Spec: v1.PodSpec{InitContainers: containers("i"), Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{{Name: "i",
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137, Signal: 9}}}}},
		}, ready: "0/1", status: "Init:Signal:9", restarts: "0"},
		{id: "KD2/reason", reason: "9.5: an init failure with a reason", pod: v1.Pod{
			Spec:   v1.PodSpec{InitContainers: containers("i"), Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{terminated("i", 1, "Error", 0)}},
		}, ready: "0/1", status: "Init:Error", restarts: "0"},
		{id: "KD4", reason: "derived: a container terminated with no reason", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{terminated("a", 2, "", 0)}},
		}, ready: "0/1", status: "ExitCode:2", restarts: "0"},
		{id: "KD4/signal", reason: "9.6: a container killed by a signal with no reason", pod: v1.Pod{
			Spec: v1.PodSpec{Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "a",
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 143, Signal: 15}}}}},
		}, ready: "0/1", status: "Signal:15", restarts: "0"},
		{id: "KD5", reason: "derived: a crash-looping init container", pod: v1.Pod{
			Spec:   v1.PodSpec{InitContainers: containers("i"), Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{lastTerminated(waiting("i", "CrashLoopBackOff", 4), time.Minute)}},
		}, ready: "0/1", status: "Init:CrashLoopBackOff", restarts: "4 (60s ago)"},
		{id: "KD5/PodInitializing", reason: "9.5: the waiting reason PodInitializing shows Init:i/n", pod: v1.Pod{
			Spec:   v1.PodSpec{InitContainers: containers("i"), Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{waiting("i", "PodInitializing", 0)}},
		}, ready: "0/1", status: "Init:0/1", restarts: "0"},
		{id: "KD7", reason: "derived: a container reason overrides the pod reason", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted", ContainerStatuses: []v1.ContainerStatus{terminated("a", 137, "ContainerStatusUnknown", 0)}},
		}, ready: "0/1", status: "ContainerStatusUnknown", restarts: "0"},
		{id: "9.6/first-wins", reason: "the first container in list order with a reason wins", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{waiting("a", "ImagePullBackOff", 0), waiting("b", "CrashLoopBackOff", 0)}},
		}, ready: "0/2", status: "ImagePullBackOff", restarts: "0"},
		{id: "9.6/completed-error", reason: "Completed first, Error second: the remembered error shows", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{terminated("a", 0, "Completed", 0), terminated("b", 1, "Error", 0)}},
		}, ready: "0/2", status: "Error", restarts: "0"},
		{id: "9.6/running-completed-error", reason: "a ready running container without a Ready condition: the error still shows", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("r", "a", "b")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("r", true, 0), terminated("a", 0, "Completed", 0), terminated("b", 1, "Error", 0)}},
		}, ready: "1/3", status: "Error", restarts: "0"},
		{id: "9.6/completed-exitcode", reason: "the remembered error is ExitCode:n when the failed container has no reason", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{terminated("a", 0, "Completed", 0), terminated("b", 3, "", 0)}},
		}, ready: "0/2", status: "ExitCode:3", restarts: "0"},
		{id: "9.6/waiting-failed-last", reason: "a container waiting after a failure is not remembered as an error", pod: v1.Pod{
			Spec: v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{terminated("a", 0, "Completed", 0),
				func() v1.ContainerStatus {
					s := running("b", true, 1)
					s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}
					return s
				}()}},
		}, ready: "1/2", status: "NotReady", restarts: "1"},
		{id: "9.6/waiting-and-terminated", reason: "a status with a waiting reason is not remembered as an error even if it also holds a failed terminated state", pod: v1.Pod{
			Spec: v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{terminated("a", 0, "Completed", 0),
				{Name: "b", Ready: true, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "Completed"}, Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}},
		}, ready: "0/2", status: "Completed", restarts: "0"},
		{id: "9.6/not-ready", reason: "Completed with a ready running container but no Ready condition is NotReady", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{terminated("a", 0, "Completed", 0), running("b", true, 0)}},
		}, ready: "1/2", status: "NotReady", restarts: "0"},
		{id: "9.6/duplicate-ready", reason: "any Ready=True condition counts", pod: v1.Pod{
			Spec: v1.PodSpec{Containers: containers("a", "b")},
			Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionFalse, ""), cond(v1.PodReady, v1.ConditionTrue, "")},
				ContainerStatuses: []v1.ContainerStatus{terminated("a", 0, "Completed", 0), running("b", true, 0)}},
		}, ready: "1/2", status: "Running", restarts: "0"},
		{id: "9.6/duplicate-initialized", reason: "only the first Initialized condition decides", pod: v1.Pod{
			Spec: v1.PodSpec{InitContainers: containers("i"), Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodInitialized, v1.ConditionFalse, ""), cond(v1.PodInitialized, v1.ConditionTrue, "")},
				InitContainerStatuses: []v1.ContainerStatus{running("i", false, 0)}, ContainerStatuses: []v1.ContainerStatus{waiting("a", "CrashLoopBackOff", 0)}},
		}, ready: "0/1", status: "Init:0/1", restarts: "0"},
		{id: "9/sidecar-crashloop", reason: "a crash-looping sidecar after initialization shows Init:CrashLoopBackOff", pod: v1.Pod{
			Spec: v1.PodSpec{InitContainers: []v1.Container{sidecar("s")}, Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodInitialized, v1.ConditionTrue, ""), cond(v1.PodReady, v1.ConditionFalse, "")},
				InitContainerStatuses: []v1.ContainerStatus{started(lastTerminated(waiting("s", "CrashLoopBackOff", 5), 30*time.Second), false)},
				ContainerStatuses:     []v1.ContainerStatus{running("a", true, 0)}},
		}, ready: "1/2", status: "Init:CrashLoopBackOff", restarts: "5 (30s ago)"},
		{id: "9.6/init-restarts-reset", reason: "after initialization only sidecar restarts stay counted", pod: v1.Pod{
			Spec: v1.PodSpec{InitContainers: []v1.Container{ctr("i"), sidecar("s")}, Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodRunning,
				InitContainerStatuses: []v1.ContainerStatus{lastTerminated(terminated("i", 0, "Completed", 2), time.Hour), started(running("s", true, 1), true)},
				ContainerStatuses:     []v1.ContainerStatus{running("a", true, 0)}},
		}, ready: "2/2", status: "Running", restarts: "1"},
		{id: "9/succeeded-no-reason", reason: "a Succeeded pod whose statuses carry no reason shows the phase", pod: v1.Pod{
			Spec:   v1.PodSpec{Containers: containers("a")},
			Status: v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: []v1.ContainerStatus{{Name: "a"}}},
		}, ready: "0/1", status: "Succeeded", restarts: "0"},
		{id: "9/empty", reason: "no phase, no reason, no statuses: kubectl prints an empty STATUS", pod: v1.Pod{
			Spec: v1.PodSpec{Containers: containers("a")},
		}, ready: "0/1", status: "", restarts: "0"},
		{id: "9.7/failed-deleting", reason: "a deleting Failed pod keeps its status", pod: v1.Pod{
			ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleting},
			Spec:       v1.PodSpec{Containers: containers("a")},
			Status:     v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted"},
		}, ready: "0/1", status: "Evicted", restarts: "0"},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			row, err := Columns(&tc.pod, t0)
			if err != nil {
				t.Fatal(err)
			}
			if row.Ready != tc.ready || row.Status != tc.status || row.Restarts != tc.restarts {
				t.Errorf("%s (%s): got READY %q STATUS %q RESTARTS %q, want %q %q %q", tc.id, tc.reason, row.Ready, row.Status, row.Restarts, tc.ready, tc.status, tc.restarts)
			}
			wantCompleted := map[v1.PodPhase][2]string{
				v1.PodSucceeded: {"Succeeded", "The pod has completed successfully."},
				v1.PodFailed:    {"Failed", "The pod failed."},
			}[tc.pod.Status.Phase]
			if row.Completed != (wantCompleted[0] != "") || row.CompletedReason != wantCompleted[0] || row.CompletedMessage != wantCompleted[1] {
				t.Errorf("%s: 9.4 row condition = %v %q %q, want %q %q", tc.id, row.Completed, row.CompletedReason, row.CompletedMessage, wantCompleted[0], wantCompleted[1])
			}
			if got := DisplayStatus(&tc.pod); got != tc.status {
				t.Errorf("%s: DisplayStatus = %q, want %q", tc.id, got, tc.status)
			}
		})
	}
}

// TestColumnsWide traces case K29.
func TestColumnsWide(t *testing.T) {
	t.Run("K29", testK29)
}

func testK29(t *testing.T) {
	pod := &v1.Pod{
		Spec: v1.PodSpec{NodeName: "test1", Containers: containers("a", "b"),
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: "condition1"}, {ConditionType: "condition2"}, {ConditionType: "condition3"}}},
		Status: v1.PodStatus{Phase: "podPhase", PodIP: "1.1.1.1", PodIPs: []v1.PodIP{{IP: "1.1.1.1"}}, NominatedNodeName: "node1",
			Conditions:        []v1.PodCondition{cond("condition1", v1.ConditionFalse, ""), cond("condition2", v1.ConditionTrue, "")},
			ContainerStatuses: []v1.ContainerStatus{running("a", true, 3), {Name: "b", RestartCount: 3}}},
	}
	row, err := Columns(pod, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := Row{Ready: "1/2", Status: "podPhase", Restarts: "6", ReadyContainers: 1, TotalContainers: 2, RestartCount: 6,
		IP: "1.1.1.1", Node: "test1", NominatedNode: "node1", ReadinessGates: "1/3"}
	if row != want {
		t.Errorf("K29: got %+v, want %+v", row, want)
	}
	empty, _ := Columns(&v1.Pod{}, t0)
	if empty.IP != "<none>" || empty.Node != "<none>" || empty.NominatedNode != "<none>" || empty.ReadinessGates != "<none>" {
		t.Errorf("empty wide columns: %+v", empty)
	}
}

func TestDisplayNil(t *testing.T) {
	if got := DisplayStatus(nil); got != "" {
		t.Errorf("DisplayStatus(nil) = %q, want \"\"", got)
	}
	if _, err := Columns(nil, t0); err != ErrNilPod {
		t.Errorf("Columns(nil) err = %v", err)
	}
}

func BenchmarkDisplayStatus(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		pod := steadyPod(n)
		b.Run("running/containers="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if DisplayStatus(pod) != "Running" {
					b.Fatal("not Running")
				}
			}
		})
	}
	initPod := &v1.Pod{Spec: v1.PodSpec{InitContainers: containers("i1", "i2"), Containers: containers("a")},
		Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{terminated("i1", 0, "", 0), running("i2", false, 0)}}}
	b.Run("init", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			DisplayStatus(initPod)
		}
	})
}

func BenchmarkColumns(b *testing.B) {
	pod := steadyPod(10)
	pod.Status.ContainerStatuses[3] = lastTerminated(pod.Status.ContainerStatuses[3], time.Minute)
	pod.Status.ContainerStatuses[3].RestartCount = 2
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Columns(pod, t0); err != nil {
			b.Fatal(err)
		}
	}
}
