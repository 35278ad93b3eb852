package podphase

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The spec's container status shorthand (spec/podphase.md section 11,
// legend).
func status(t testing.TB, name, code string) v1.ContainerStatus {
	t.Helper()
	st := v1.ContainerStatus{Name: name}
	yes := true
	switch code {
	case "R":
		st.State.Running = &v1.ContainerStateRunning{}
	case "S":
		st.State.Running = &v1.ContainerStateRunning{}
		st.Started = &yes
	case "T0":
		st.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}
	case "Tf":
		st.State.Terminated = &v1.ContainerStateTerminated{ExitCode: -1, Reason: "Error"}
	case "Tst":
		st.State.Terminated = &v1.ContainerStateTerminated{}
	case "T42":
		st.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 42, Reason: "Error"}
	case "W":
		st.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
	case "WL0":
		st.State.Waiting = &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
		st.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}
	case "WLf":
		st.State.Waiting = &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
		st.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: -1, Reason: "Error"}
	case "WRA":
		st.State.Waiting = &v1.ContainerStateWaiting{Reason: ReasonRestartingAllContainers}
		st.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: 137, Reason: ReasonRestartingAllContainers}
	case "none":
	default:
		t.Fatalf("unknown status code %q", code)
	}
	return st
}

// podOf builds a pod from a spec and a status list such as "X:R A:T0 B:—";
// an entry is placed in the init or regular list by its name in the spec, and
// "—" means no entry.
func podOf(t testing.TB, spec v1.PodSpec, statuses string) *v1.Pod {
	t.Helper()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: spec}
	for _, f := range strings.Fields(statuses) {
		name, code, ok := strings.Cut(f, ":")
		if !ok {
			t.Fatalf("bad status %q", f)
		}
		if code == "—" {
			continue
		}
		st := status(t, name, code)
		switch {
		case hasContainer(spec.InitContainers, name):
			pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, st)
		case hasContainer(spec.Containers, name):
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, st)
		default:
			t.Fatalf("status %q names no container", f)
		}
	}
	return pod
}

func ctr(name string) v1.Container { return v1.Container{Name: name} }

func withPolicy(c v1.Container, p v1.ContainerRestartPolicy) v1.Container {
	c.RestartPolicy = &p
	return c
}

func sidecar(name string) v1.Container { return withPolicy(ctr(name), v1.ContainerRestartPolicyAlways) }

func withRule(c v1.Container, action v1.ContainerRestartRuleAction, codes ...int32) v1.Container {
	c.RestartPolicyRules = append(c.RestartPolicyRules, v1.ContainerRestartRule{
		Action:    action,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: codes},
	})
	return c
}

func specOf(policy v1.RestartPolicy, init []v1.Container, containers ...v1.Container) v1.PodSpec {
	return v1.PodSpec{RestartPolicy: policy, InitContainers: init, Containers: containers}
}

func ptr[T any](v T) *T { return &v }

// Fixed instants, as in x/time/rate's tests.
var (
	t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
)

const time1h = time.Hour

func timeDuration(n int64) time.Duration { return time.Duration(n) }
