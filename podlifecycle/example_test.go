package podlifecycle_test

import (
	"fmt"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runtimeFor answers the actions of a Result at once, as a runtime whose
// containers start and stop instantly would.
func runtimeFor(actions []podlifecycle.Action, now time.Time) []podlifecycle.Observation {
	var obs []podlifecycle.Observation
	for _, a := range actions {
		switch a.Kind {
		case podlifecycle.CreateSandbox:
			obs = append(obs, podlifecycle.Observation{Kind: podlifecycle.SandboxReady, Attempt: a.Attempt, IP: "10.0.0.7"})
		case podlifecycle.KillSandbox:
			obs = append(obs, podlifecycle.Observation{Kind: podlifecycle.SandboxNotReady, Attempt: a.Attempt})
		case podlifecycle.PullImage:
			obs = append(obs, podlifecycle.Observation{Kind: podlifecycle.ImagePulled, Container: a.Container, Image: a.Image, Duration: 1500 * time.Millisecond, Size: 4096})
		case podlifecycle.StartContainer:
			id := "containerd://" + a.Container
			obs = append(obs,
				podlifecycle.Observation{Kind: podlifecycle.ContainerCreated, Container: a.Container, ContainerID: id},
				podlifecycle.Observation{Kind: podlifecycle.ContainerStarted, Container: a.Container, ContainerID: id})
		case podlifecycle.KillContainer:
			obs = append(obs, podlifecycle.Observation{Kind: podlifecycle.ContainerExited, Container: a.Container, ContainerID: a.ContainerID, ExitCode: 143})
		}
	}
	return obs
}

// A pod with one container goes from its first sync to finished after a
// deletion; each line is one Step: its actions, then its events.
func ExampleMachine() {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "1234"}}
	pod.Spec.Containers = []v1.Container{{Name: "nginx", Image: "nginx:1.27"}}
	pod.Spec.TerminationGracePeriodSeconds = new(int64)
	*pod.Spec.TerminationGracePeriodSeconds = 30

	m, err := podlifecycle.New(podlifecycle.DefaultOptions(), pod)
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var res podlifecycle.Result
	var obs []podlifecycle.Observation
	for i := 0; i < 8 && !res.Finished; i++ {
		if i == 3 { // the API server marks the pod for deletion
			pod = pod.DeepCopy()
			pod.DeletionTimestamp = &metav1.Time{Time: now}
			pod.DeletionGracePeriodSeconds = pod.Spec.TerminationGracePeriodSeconds
		}
		if err := m.StepTo(now, pod, obs, &res); err != nil {
			panic(err)
		}
		fmt.Printf("step %d %s:", i, res.State)
		for _, a := range res.Actions {
			fmt.Printf(" [%s]", a)
		}
		fmt.Println()
		for _, e := range res.Events {
			fmt.Printf("    %s %s %s %q\n", e.Type, e.Reason, e.FieldPath, e.Message)
		}
		obs = runtimeFor(res.Actions, now)
	}
	fmt.Println("phase:", res.Statuses[len(res.Statuses)-1].Phase, "finished:", res.Finished)
	// Output:
	// step 0 Syncing: [CreateSandbox attempt=0]
	// step 1 Syncing: [PullImage nginx nginx:1.27 IfNotPresent] [StartContainer nginx]
	//     Normal Pulling spec.containers{nginx} "Pulling image \"nginx:1.27\""
	// step 2 Syncing:
	//     Normal Pulled spec.containers{nginx} "Successfully pulled image \"nginx:1.27\" in 1.5s (1.5s including waiting). Image size: 4096 bytes."
	//     Normal Created spec.containers{nginx} "Container created"
	//     Normal Started spec.containers{nginx} "Container started"
	// step 3 Terminating: [KillContainer nginx grace=30s reason=Unknown]
	//     Normal Killing spec.containers{nginx} "Stopping container nginx"
	// step 4 Terminating: [KillSandbox attempt=0]
	// step 5 Terminated:
	// phase: Failed finished: true
}

// The kubelet's event vocabulary is usable on its own, for agents that
// record events themselves.
func ExampleCrashLoopBackOffMessage() {
	fmt.Println(podlifecycle.ReasonBackOff, podlifecycle.CrashLoopBackOffMessage("app", "web", "default", "1234"))
	fmt.Println(podlifecycle.ReasonKilling, podlifecycle.KillMessage(podlifecycle.KillLivenessProbe, containerstate.Regular, "app", true))
	fmt.Println(podlifecycle.ReasonBackOff, podlifecycle.PullBackOffMessage("registry.example/app:2"))
	// Output:
	// BackOff Back-off restarting failed container app in pod web_default(1234)
	// Killing Container app failed liveness probe, will be restarted
	// BackOff Back-off pulling image "registry.example/app:2"
}

// The loop of the package doc on simruntime's simulated runtime: a
// container that exits 1 after 2 s under restartPolicy OnFailure is
// restarted at once after its first exit, then after 10 s of back-off; the
// pod is deleted at +30 s, inside the 20 s back-off, and the loop ends when
// the machine is finished.
func ExampleMachine_loop() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "default", UID: "u1"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyOnFailure, Containers: []v1.Container{{Name: "app", Image: "app:1"}}}}
	bs, _ := simruntime.ParseBehaviours("app: run 2s exit 1")
	so := simruntime.DefaultOptions()
	so.IP = "10.244.0.5"
	rt, _ := simruntime.New(so, pod, bs)
	m, _ := podlifecycle.New(podlifecycle.DefaultOptions(), pod)
	var res podlifecycle.Result
	starts, deleteAt := 0, start.Add(30*time.Second)
	for now := start; ; {
		if !deleteAt.IsZero() && !now.Before(deleteAt) {
			pod = pod.DeepCopy() // a new object, as an informer hands it out
			t, grace := metav1.NewTime(now), int64(5)
			pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &t, &grace
			deleteAt = time.Time{}
		}
		if err := m.StepTo(now, pod, rt.Due(now), &res); err != nil {
			fmt.Println(err)
			return
		}
		_ = rt.Do(now, res.Actions)
		for _, a := range res.Actions {
			if a.Kind == podlifecycle.StartContainer {
				starts++
			}
		}
		if res.Finished {
			fmt.Printf("finished at +%v after %d starts, phase %s\n", now.Sub(start), starts, res.Statuses[len(res.Statuses)-1].Phase)
			break
		}
		now = earliest(earliest(res.NextSync, rt.Next()), deleteAt)
	}
	// Output:
	// finished at +30s after 3 starts, phase Failed
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
