package podlifecycletest_test

import (
	"fmt"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Run drives the machine and the simulated runtime for a pod with an init
// container, a sidecar whose startup probe passes after 3 s, and an app that
// crashes 5 s after each start; the pod is deleted at +90 s. The starts
// show the init container first, the sidecar, the app once the sidecar
// reported a startup success, and the app's restarts: at once after its
// first crash, then 10 s and 20 s after the next ones (crash-loop
// back-off); the next would be 40 s after the crash at 55 s, but the pod is
// deleted first and only the sidecar is left to stop.
func ExampleRun() {
	always, grace := v1.ContainerRestartPolicyAlways, int64(30)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: &grace,
			InitContainers: []v1.Container{
				{Name: "migrate", Image: "migrate:1"},
				{Name: "proxy", Image: "proxy:1", RestartPolicy: &always, StartupProbe: &v1.Probe{
					ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"ready"}}}, PeriodSeconds: 1, FailureThreshold: 5}},
			},
			Containers: []v1.Container{{Name: "app", Image: "app:1"}},
		}}
	bs, err := simruntime.ParseBehaviours(`
migrate: run 2s exit 0
proxy: startup fail 0s-3s
app: run 5s exit 1
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := podlifecycletest.DefaultOptions()
	opts.Delete = &podlifecycletest.Deletion{After: 90 * time.Second}
	tr, err := podlifecycletest.Run(pod, bs, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range tr.Steps {
		for _, a := range s.Result.Actions {
			if a.Kind == podlifecycle.StartContainer || a.Kind == podlifecycle.KillContainer {
				fmt.Printf("%-5v %v\n", s.At.Sub(tr.Start), a)
			}
		}
		if n := len(s.Result.Statuses); s.Result.Finished && n > 0 {
			fmt.Printf("%-5v phase %s, finished\n", s.At.Sub(tr.Start), s.Result.Statuses[n-1].Phase)
		}
	}
	fmt.Println("invariants:", podlifecycletest.CheckAll(tr))
	// Output:
	// 0s    StartContainer migrate
	// 2s    StartContainer proxy
	// 5s    StartContainer app
	// 10s   StartContainer app restart=1
	// 25s   StartContainer app restart=2
	// 50s   StartContainer app restart=3
	// 1m30s KillContainer proxy grace=30s reason=Unknown
	// 1m30s phase Failed, finished
	// invariants: <nil>
}
