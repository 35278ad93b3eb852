package podphase_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/podphase"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func always() *v1.ContainerRestartPolicy {
	p := v1.ContainerRestartPolicyAlways
	return &p
}

func yes() *bool { b := true; return &b }

// A Job pod with a log-shipping sidecar: while the sidecar runs the pod is
// Running; when the job's container has succeeded and the kubelet has
// stopped the sidecar (exit 137), the pod is Succeeded: a sidecar never
// fails a pod.
func ExamplePhase_sidecarJob() {
	pod := &v1.Pod{
		Spec: v1.PodSpec{
			RestartPolicy:  v1.RestartPolicyNever,
			InitContainers: []v1.Container{{Name: "log-shipper", RestartPolicy: always()}},
			Containers:     []v1.Container{{Name: "job"}},
		},
		Status: v1.PodStatus{
			InitContainerStatuses: []v1.ContainerStatus{{Name: "log-shipper", Started: yes(), Ready: true,
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}},
			ContainerStatuses: []v1.ContainerStatus{{Name: "job",
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}},
		},
	}
	fmt.Println(podphase.Phase(pod))

	pod.Status.InitContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}
	e, _ := podphase.Explain(podphase.Input{Pod: pod})
	fmt.Println(e)
	pod.Status.Phase = e.Phase
	fmt.Println(podphase.DisplayStatus(pod))
	// Output:
	// Running
	// Succeeded (Succeeded): container "job" succeeded and none will be restarted
	// Completed
}

// A Deployment's pod in a crash loop: the phase stays Running because the
// container will be restarted; kubectl shows CrashLoopBackOff with the
// restarts and the age of the last one.
func ExampleColumns_crashLoop() {
	pod := &v1.Pod{
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "app"}}},
		Status: v1.PodStatus{
			ContainerStatuses: []v1.ContainerStatus{{
				Name:         "app",
				RestartCount: 5,
				State:        v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					ExitCode: 1, Reason: "Error", FinishedAt: metav1.NewTime(now.Add(-2 * time.Minute)),
				}},
			}},
		},
	}
	e, _ := podphase.Explain(podphase.Input{Pod: pod})
	fmt.Println(e)
	pod.Status.Phase = e.Phase
	row, _ := podphase.Columns(pod, now)
	fmt.Println(row.Ready, row.Status, row.Restarts)
	// Output:
	// Running (Restarting): container "app" stopped and will be restarted
	// 0/1 CrashLoopBackOff 5 (2m ago)
}

// A pod whose containers are ready is Ready only when every readiness gate
// has a True condition, which another controller writes.
func ExampleConditions_readinessGates() {
	pod := &v1.Pod{
		Spec: v1.PodSpec{
			Containers:     []v1.Container{{Name: "web"}},
			ReadinessGates: []v1.PodReadinessGate{{ConditionType: "example.com/load-balancer"}},
		},
	}
	status := &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{
		Name: "web", Ready: true, Started: yes(), State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
	}}}
	show := func() {
		conds, _ := podphase.Conditions(podphase.ConditionsInput{Pod: pod, Status: status, Now: now})
		for _, c := range conds {
			if c.Type == v1.PodReady {
				fmt.Printf("Ready=%s %s %s\n", c.Status, c.Reason, c.Message)
			}
		}
	}
	show()
	pod.Status.Conditions = []v1.PodCondition{{Type: "example.com/load-balancer", Status: v1.ConditionTrue}}
	show()
	// Output:
	// Ready=False ReadinessGatesNotReady corresponding condition of pod readiness gate "example.com/load-balancer" does not exist.
	// Ready=True
}

// An init container that fails in a pod that never restarts fails the pod;
// kubectl shows the init container's reason.
func ExampleExplain_initFailure() {
	pod := &v1.Pod{
		Spec: v1.PodSpec{
			RestartPolicy:  v1.RestartPolicyNever,
			InitContainers: []v1.Container{{Name: "migrate"}},
			Containers:     []v1.Container{{Name: "app"}},
		},
		Status: v1.PodStatus{
			InitContainerStatuses: []v1.ContainerStatus{{Name: "migrate",
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}},
			ContainerStatuses: []v1.ContainerStatus{{Name: "app",
				State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}}},
		},
	}
	e, _ := podphase.Explain(podphase.Input{Pod: pod})
	fmt.Println(e.Phase, e.Rule, e.Containers)
	fmt.Println(e.Reason)
	pod.Status.Phase = e.Phase
	fmt.Println(podphase.DisplayStatus(pod))
	// Output:
	// Failed InitFailed [migrate]
	// init container "migrate" failed and will not be restarted
	// Init:Error
}

// After a sandbox is recreated, a pod whose sidecar has not started again
// goes back to Pending. Only the kubelet knows that the sandbox is new, so
// the fact is an input of Explain.
func ExampleExplain_sandboxRecreated() {
	pod := &v1.Pod{
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "proxy", RestartPolicy: always()}},
			Containers:     []v1.Container{{Name: "app"}},
		},
		Status: v1.PodStatus{
			InitContainerStatuses: []v1.ContainerStatus{{Name: "proxy", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}},
			ContainerStatuses:     []v1.ContainerStatus{{Name: "app", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}},
		},
	}
	fresh := false
	e, _ := podphase.Explain(podphase.Input{Pod: pod, Initialized: &fresh})
	fmt.Println(podphase.Phase(pod), "->", e)
	// Output:
	// Running -> Pending (SidecarPending): sidecar "proxy" has not started and no regular container has run in this sandbox
}

// Guard keeps a terminal phase.
func ExampleGuard() {
	phase, err := podphase.Guard(v1.PodSucceeded, v1.PodRunning)
	fmt.Println(phase, err)
	phase, err = podphase.Guard(v1.PodRunning, v1.PodPending)
	fmt.Println(phase, err)
	// Output:
	// Succeeded podphase: illegal phase transition from "Succeeded" to "Running"
	// Pending <nil>
}

// kubectl counts sidecars in READY and shows Init:N/M until each has
// started.
func ExampleDisplayStatus_sidecar() {
	pod := &v1.Pod{
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "mesh", RestartPolicy: always()}, {Name: "vault-agent", RestartPolicy: always()}},
			Containers:     []v1.Container{{Name: "app"}},
		},
		Status: v1.PodStatus{
			Phase: v1.PodPending,
			InitContainerStatuses: []v1.ContainerStatus{
				{Name: "mesh", Started: yes(), Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
				{Name: "vault-agent", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
			},
			ContainerStatuses: []v1.ContainerStatus{{Name: "app", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}}},
		},
	}
	row, _ := podphase.Columns(pod, now)
	fmt.Println(row.Ready, row.Status)
	// Output:
	// 1/3 Init:1/2
}

// The explanation of a pod the kubelet evicted names the eviction.
func ExampleExplain_evicted() {
	pod := &v1.Pod{
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app"}}},
		Status: v1.PodStatus{Phase: v1.PodFailed, Reason: podphase.ReasonEvicted, Message: "The node was low on resource: memory.",
			ContainerStatuses: []v1.ContainerStatus{{Name: "app", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}},
	}
	e, err := podphase.Explain(podphase.Input{Pod: pod})
	if err != nil {
		panic(err)
	}
	fmt.Println(e)
	// Output:
	// Failed (TerminalPhase): the kubelet evicted the pod (Evicted: The node was low on resource: memory.), so it is Failed and a terminal phase never changes (the container statuses alone give Running)
}

// The display twins on Options give kubectl's columns; kubectl reads no
// feature gate, so every Options gives the same row.
func ExampleOptions_Columns() {
	pod := &v1.Pod{
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app"}}},
		Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}},
			ContainerStatuses: []v1.ContainerStatus{{Name: "app", Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}},
	}
	row, err := podphase.Options{}.Columns(pod, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	fmt.Println(row.Ready, row.Status, row.Restarts, podphase.DefaultOptions().DisplayStatus(pod))
	// Output:
	// 1/1 Running 0 Running
}

// kubectl's STATUS for a pod whose first container completed and whose
// second failed: kubectl 1.34 shows Completed, 1.35 and later the failure.
func ExampleDefaultOptionsFor() {
	pod := &v1.Pod{
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "main"}, {Name: "check"}}},
		Status: v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: []v1.ContainerStatus{
			{Name: "main", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
			{Name: "check", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}},
		}},
	}
	for _, v := range []kubeversion.Version{kubeversion.V1_34, kubeversion.V1_37} {
		fmt.Println(v, podphase.DefaultOptionsFor(v).DisplayStatus(pod))
	}
	// Output:
	// 1.34 Completed
	// 1.37 Error
}
