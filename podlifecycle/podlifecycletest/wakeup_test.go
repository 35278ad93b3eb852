package podlifecycletest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStaleWakeupWhileTerminating is the smallest pod the model test found
// with a stale wake-up: one container with a liveness probe every second
// and a preStop hook, deleted. While its preStop hook runs the pod is
// terminating and the machine no longer probes liveness
// (spec/podlifecycle.md section 7.3, step 2); its NextSync must not stay at
// the probe's next tick, in the past, or a runner that honours it spins
// until the hook ends.
func TestStaleWakeupWhileTerminating(t *testing.T) {
	grace := int64(30)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []v1.Container{{Name: "app", Image: "app:1",
			LivenessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 1},
			Lifecycle:     &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sleep"}}}}}}}}
	bs, err := simruntime.ParseBehaviours("app: prestop 10s")
	if err != nil {
		t.Fatal(err)
	}
	opts := podlifecycletest.DefaultOptions()
	opts.Delete = &podlifecycletest.Deletion{After: 5 * time.Second}
	tr, err := podlifecycletest.Run(pod, bs, opts)
	if errors.Is(err, podlifecycletest.ErrNoProgress) {
		t.Fatalf("%v\n%s", err, tr)
	}
	if err := podlifecycletest.CheckWakeups(tr); err != nil {
		t.Fatal(err)
	}
}
