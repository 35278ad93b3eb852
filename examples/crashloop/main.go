// Command crashloop walks one container through a crash loop with the
// containerstate package, in virtual time, and prints the status the kubelet
// would report at every step with the back-off delays.
//
//	go run ./examples/crashloop [-crashes 8] [-runtime 3s] [-exit 1]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

func main() {
	crashes := flag.Int("crashes", 8, "how many times the container crashes")
	runFor := flag.Duration("runtime", 3*time.Second, "how long each attempt runs before it crashes")
	exit := flag.Int("exit", 1, "the exit code of each crash")
	flag.Parse()
	if err := run(os.Stdout, *crashes, *runFor, int32(*exit)); err != nil {
		fmt.Fprintln(os.Stderr, "crashloop:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, crashes int, runFor time.Duration, exit int32) error {
	if crashes < 1 || runFor < 0 {
		return fmt.Errorf("need at least one crash and a non-negative runtime, got %d and %v", crashes, runFor)
	}
	pod := containerstate.Pod{
		Spec:      &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "app", Image: "registry.example/app:1"}}},
		Name:      "web-7d9f",
		Namespace: "default",
		UID:       "1b4e28ba",
	}
	m, err := containerstate.NewMachine(containerstate.DefaultOptions(), pod, "app")
	if err != nil {
		return err
	}
	cfg, err := containerstate.DefaultCrashLoopOptions().BackoffOptions()
	if err != nil {
		return err
	}
	backoff, err := containerstate.NewBackoff(cfg)
	if err != nil {
		return err
	}
	key := containerstate.CrashLoopKey(pod.Name, pod.Namespace, pod.UID, &pod.Spec.Containers[0])

	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := epoch
	step := func(ev containerstate.Event) error {
		if err := m.Step(ev); err != nil {
			return err
		}
		fmt.Fprintf(w, "%8s  %-13s %s\n", now.Sub(epoch), ev.Kind, line(m.Status()))
		return nil
	}
	fmt.Fprintf(w, "%8s  %-13s %s\n", "T", "EVENT", "STATUS")
	fmt.Fprintf(w, "%8s  %-13s %s\n", "0s", "-", line(m.Status()))
	for attempt := 1; attempt <= crashes; attempt++ {
		id := fmt.Sprintf("containerd://%04d", attempt)
		if err := step(containerstate.Event{Kind: containerstate.Created, At: now, ContainerID: id}); err != nil {
			return err
		}
		if err := step(containerstate.Event{Kind: containerstate.Started, At: now, ContainerID: id}); err != nil {
			return err
		}
		now = now.Add(runFor)
		finished := now
		if err := step(containerstate.ExitedEvent(now, id, exit)); err != nil {
			return err
		}
		if !m.ShouldBeRestarted() {
			fmt.Fprintln(w, "the restart policy allows no restart")
			return nil
		}
		if attempt == crashes {
			break
		}
		delay, until, blocked := backoff.CrashLoop(key, finished, now)
		if blocked {
			if err := step(containerstate.BackOffEvent(now, delay, "app", pod.Name, pod.Namespace, pod.UID)); err != nil {
				return err
			}
			now = until
			backoff.CrashLoop(key, finished, now)
		}
	}
	fmt.Fprintf(w, "\nrestartCount %d after %v of virtual time; next back-off %v (cap %v, reset after %v of running)\n",
		m.RestartCount(), now.Sub(epoch), backoff.Get(key), cfg.Max, cfg.ResetAfter)
	return nil
}

func line(s v1.ContainerStatus) string {
	var out string
	switch st := s.State; {
	case st.Waiting != nil:
		out = "Waiting:" + st.Waiting.Reason
		if st.Waiting.Message != "" {
			out += " (" + st.Waiting.Message + ")"
		}
	case st.Running != nil:
		out = "Running"
	case st.Terminated != nil:
		out = fmt.Sprintf("Terminated:%s exit=%d", st.Terminated.Reason, st.Terminated.ExitCode)
	}
	last := ""
	if t := s.LastTerminationState.Terminated; t != nil {
		last = fmt.Sprintf(" lastState=%s(%d)", t.Reason, t.ExitCode)
	}
	return fmt.Sprintf("restarts=%d ready=%t %s%s", s.RestartCount, s.Ready, out, last)
}
