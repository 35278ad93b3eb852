package containerstate_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

var start = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func describe(s v1.ContainerStatus) string {
	out := ""
	switch st := s.State; {
	case st.Waiting != nil:
		out = "Waiting/" + st.Waiting.Reason
	case st.Running != nil:
		out = "Running"
	case st.Terminated != nil:
		out = fmt.Sprintf("Terminated/%s(%d)", st.Terminated.Reason, st.Terminated.ExitCode)
	}
	if t := s.LastTerminationState.Terminated; t != nil {
		out += fmt.Sprintf(" last=%s(%d)", t.Reason, t.ExitCode)
	}
	return fmt.Sprintf("%-40s restarts=%d ready=%t", out, s.RestartCount, s.Ready)
}

// A container that exits 1 a few seconds after each start: the kubelet
// restarts it at once the first time, then holds it back 10s, 20s, 40s.
func ExampleMachine_crashLoop() {
	pod := containerstate.Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "app:1"}}},
		Name: "web", Namespace: "default", UID: "7f3c"}
	m, _ := containerstate.NewMachine(containerstate.DefaultOptions(), pod, "app")
	cfg, _ := containerstate.DefaultCrashLoopOptions().BackoffOptions()
	backoff, _ := containerstate.NewBackoff(cfg)
	key := containerstate.CrashLoopKey(pod.Name, pod.Namespace, pod.UID, &pod.Spec.Containers[0])

	now := start
	for attempt := 1; attempt <= 4; attempt++ {
		id := fmt.Sprintf("containerd://%d", attempt)
		_ = m.Step(containerstate.Event{Kind: containerstate.Started, At: now, ContainerID: id})
		now = now.Add(3 * time.Second)
		finished := now
		_ = m.Step(containerstate.ExitedEvent(finished, id, 1))
		if delay, until, blocked := backoff.CrashLoop(key, finished, now); blocked {
			_ = m.Step(containerstate.BackOffEvent(now, delay, "app", pod.Name, pod.Namespace, pod.UID))
			fmt.Printf("%s  %s\n", describe(m.Status()), m.Status().State.Waiting.Message)
			now = until
			backoff.CrashLoop(key, finished, now) // the restart, once the back-off is over
		} else {
			fmt.Println(describe(m.Status()))
		}
	}
	// Output:
	// Terminated/Error(1)                      restarts=0 ready=false
	// Waiting/CrashLoopBackOff last=Error(1)   restarts=1 ready=false  back-off 10s restarting failed container=app pod=web_default(7f3c)
	// Waiting/CrashLoopBackOff last=Error(1)   restarts=2 ready=false  back-off 20s restarting failed container=app pod=web_default(7f3c)
	// Waiting/CrashLoopBackOff last=Error(1)   restarts=3 ready=false  back-off 40s restarting failed container=app pod=web_default(7f3c)
}

// An image that cannot be pulled: ErrImagePull at each try and
// ImagePullBackOff in between, the tries 10s, 20s, 40s apart.
func ExampleMachine_imagePullBackOff() {
	pod := containerstate.Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "registry.example/app:missing"}}}, UID: "7f3c"}
	m, _ := containerstate.NewMachine(containerstate.DefaultOptions(), pod, "app")
	backoff, _ := containerstate.NewBackoff(containerstate.DefaultBackoffOptions())
	key := containerstate.ImagePullKey(pod.UID, "registry.example/app:missing")
	last := ""
	for sec := 0; sec <= 70; sec += 5 {
		now := start.Add(time.Duration(sec) * time.Second)
		if backoff.ImagePull(key, now) {
			_ = m.Step(containerstate.PullBackOffEvent(now, "registry.example/app:missing", containerstate.ReasonErrImagePull, "manifest unknown"))
		} else {
			backoff.Next(key, now, now)
			_ = m.Step(containerstate.PullErrorEvent(now, "registry.example/app:missing", "manifest unknown"))
		}
		if w := m.Status().State.Waiting; w.Reason != last {
			fmt.Printf("%3ds %s: %s\n", sec, w.Reason, w.Message)
			last = w.Reason
		}
	}
	// Output:
	//   0s ErrImagePull: manifest unknown
	//   5s ImagePullBackOff: Back-off pulling image "registry.example/app:missing": ErrImagePull: manifest unknown
	//  10s ErrImagePull: manifest unknown
	//  15s ImagePullBackOff: Back-off pulling image "registry.example/app:missing": ErrImagePull: manifest unknown
	//  30s ErrImagePull: manifest unknown
	//  35s ImagePullBackOff: Back-off pulling image "registry.example/app:missing": ErrImagePull: manifest unknown
	//  70s ErrImagePull: manifest unknown
}

// A sidecar (an init container with restartPolicy Always) in a Job pod: it
// is started and ready while it runs, and it restarts even though the pod
// never restarts anything.
func ExampleMachine_sidecar() {
	always := v1.ContainerRestartPolicyAlways
	pod := containerstate.Pod{Spec: &v1.PodSpec{
		RestartPolicy:  v1.RestartPolicyNever,
		InitContainers: []v1.Container{{Name: "proxy", RestartPolicy: &always, ReadinessProbe: &v1.Probe{}}},
		Containers:     []v1.Container{{Name: "job"}},
	}}
	m, _ := containerstate.NewMachine(containerstate.DefaultOptions(), pod, "proxy")
	fmt.Println(describe(m.Status()))
	_ = m.Step(containerstate.Event{Kind: containerstate.Started, At: start, ContainerID: "c://1"})
	fmt.Println(describe(m.Status()), "started:", m.Started())
	_ = m.Step(containerstate.Event{Kind: containerstate.ReadinessProbe, At: start.Add(time.Second), Result: containerstate.ProbeSuccess})
	fmt.Println(describe(m.Status()))
	_ = m.Step(containerstate.ExitedEvent(start.Add(time.Minute), "c://1", 0))
	fmt.Println(describe(m.Status()), "restart:", containerstate.ShouldRestart(pod.Spec, &pod.Spec.InitContainers[0], 0))
	// Output:
	// Waiting/PodInitializing                  restarts=0 ready=false
	// Running                                  restarts=0 ready=false started: true
	// Running                                  restarts=0 ready=true
	// Terminated/Completed(0)                  restarts=0 ready=false restart: true
}

// Container restart rules (KEP-5307): restart only on exit code 42, under a
// pod that never restarts.
func ExampleShouldRestart_restartRule() {
	never := v1.ContainerRestartPolicyNever
	spec := &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever}
	c := &v1.Container{Name: "trainer", RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{{
		Action:    v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
	}}}
	for _, code := range []int32{0, 1, 42} {
		fmt.Printf("exit %d: restart %t\n", code, containerstate.ShouldRestart(spec, c, code))
	}
	// Output:
	// exit 0: restart false
	// exit 1: restart false
	// exit 42: restart true
}

// A snapshot from the runtime converted the way the kubelet's relist does.
func ExampleConvert() {
	pod := containerstate.Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "app:1"}}}}
	s, err := containerstate.Convert(containerstate.Input{
		Pod:      pod,
		Name:     "app",
		Newest:   &containerstate.Instance{ID: "containerd://b", State: containerstate.RuntimeRunning, StartedAt: start, CreatedAt: start, RestartCount: 1},
		Previous: &containerstate.Instance{ID: "containerd://a", State: containerstate.RuntimeExited, ExitCode: 137, Reason: containerstate.ReasonOOMKilled},
	})
	fmt.Println(describe(s), err)
	// Output:
	// Running last=OOMKilled(137)              restarts=1 ready=true <nil>
}

// A runner asks the machine when it next changes on its own and advances it
// then: the UNKNOWN grace ends with no runtime event.
func ExampleMachine_NextWake() {
	spec := &v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "app:1"}}}
	m, err := containerstate.NewMachine(containerstate.DefaultOptions(), containerstate.Pod{Spec: spec, Name: "web", Namespace: "default", UID: "uid-1"}, "app")
	if err != nil {
		panic(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_ = m.Step(containerstate.Event{Kind: containerstate.Started, At: t0, ContainerID: "containerd://a"})
	_ = m.Step(containerstate.Event{Kind: containerstate.Unknown, At: t0.Add(5 * time.Second), ContainerID: "containerd://a"})
	wake, ok := m.NextWake()
	fmt.Println(m.State(), ok, wake.Sub(t0))
	if err := m.Advance(wake); err != nil {
		panic(err)
	}
	fmt.Println(m.State(), m.Status().State.Terminated.Reason)
	_, ok = m.NextWake()
	fmt.Println(ok)
	// Output:
	// Running true 2m5s
	// Terminated ContainerStatusUnknown
	// false
}

// A Step error says which field of the event was wrong.
func ExampleStepError() {
	spec := &v1.PodSpec{Containers: []v1.Container{{Name: "app"}}}
	m, _ := containerstate.NewMachine(containerstate.DefaultOptions(), containerstate.Pod{Spec: spec}, "app")
	err := m.Step(containerstate.Event{Kind: containerstate.PullFailed, At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Reason: "Oops"})
	var se *containerstate.StepError
	fmt.Println(errors.As(err, &se), se.Field, errors.Is(err, containerstate.ErrInvalidInput))
	fmt.Println(err)
	// Output:
	// true Reason true
	// containerstate: invalid event: container "app": PullFailed at 2026-01-01T00:00:00Z: Reason: "Oops" is not a reason of PullFailed (ErrImagePull, InvalidImageName, ErrImageNeverPull, ImageInspectError, RegistryUnavailable, SignatureValidationFailed)
}
