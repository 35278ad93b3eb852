package podlifecycletest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBugStaleWakeupWhileTerminating is the smallest pod TestModelWakeups
// found: one container with a liveness probe every second and a preStop
// hook, deleted. While its preStop hook runs the pod is terminating, the
// machine no longer probes liveness (spec/podlifecycle.md section 7.3, step
// 2) but its NextSync stays at the probe's next tick, in the past, so a
// runner that honours NextSync spins until the hook ends.
func TestBugStaleWakeupWhileTerminating(t *testing.T) {
	t.Skip("podlifecycle bug: while terminating, NextSync stays at the next liveness or startup probe tick of a regular container, which is no longer probed")
	grace := int64(30)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []v1.Container{{Name: "app", Image: "app:1",
			LivenessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 1},
			Lifecycle:     &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sleep"}}}}}}}}
	bs, err := podlifecycletest.ParseBehaviours("app: prestop 10s")
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
