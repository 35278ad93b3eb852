package simruntime_test

import (
	"fmt"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod whose container exits 1 after 30 s, as its annotation says: the
// runtime carries out a sync's actions and reports what came of them at the
// time they happen.
func ExampleNewForPod() {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "worker", Namespace: "default", UID: "uid-1",
			Annotations: map[string]string{simruntime.AnnotationPrefix + "app": "run 30s exit 1; pull slow 2s"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "worker:1"}}},
	}
	rt, err := simruntime.NewForPod(simruntime.DefaultOptions(), pod)
	if err != nil {
		fmt.Println(err)
		return
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_ = rt.Do(t0, []podlifecycle.Action{
		{Kind: podlifecycle.CreateSandbox},
		{Kind: podlifecycle.PullImage, Container: "app", ContainerKind: containerstate.Regular, Image: "worker:1"},
		{Kind: podlifecycle.StartContainer, Container: "app", ContainerKind: containerstate.Regular, Image: "worker:1"},
	})
	for next := rt.Next(); !next.IsZero(); next = rt.Next() {
		for _, o := range rt.Due(next) {
			fmt.Printf("+%v %v", o.At.Sub(t0), o.Kind)
			if o.Container != "" {
				fmt.Printf(" %s", o.Container)
			}
			if o.Kind == podlifecycle.ContainerExited {
				fmt.Printf(" exit %d", o.ExitCode)
			}
			fmt.Println()
		}
	}
	// Output:
	// +0s SandboxReady
	// +2s ImagePulled app
	// +2s ContainerCreated app
	// +2s ContainerStarted app
	// +32s ContainerExited app exit 1
}
