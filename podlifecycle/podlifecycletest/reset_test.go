package podlifecycletest_test

import (
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestResetDuringSlowStart is the smallest pod TestModelRestartAll found
// breaking RegularAfterInit: init0 runs 10 s; then app1 starts and exits 1
// after 1 s, and its RestartAllContainers rule resets the pod (rule 3.2)
// while app0's start still waits behind a 5 s pull. The reset reruns init0,
// but app0's start lands at +15 s, during the rerun; the machine then
// counts the pod as initialized (a regular container has an active
// instance, rule 3.5) and starts app1 again before init0 completed. The
// kubelet cannot get there: its sync finishes app0's pull and start before
// any reset is decided.
func TestResetDuringSlowStart(t *testing.T) {
	never := v1.ContainerRestartPolicyNever
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "init0", Image: "init:1"}},
			Containers: []v1.Container{
				{Name: "app1", Image: "app1:1", RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{{
					Action:    v1.ContainerRestartRuleActionRestartAllContainers,
					ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}}}}},
				{Name: "app0", Image: "app0:1"},
			}}}
	bs, err := simruntime.ParseBehaviours("init0: run 10s exit 0\napp1: run 1s exit 1\napp0: pull slow 5s")
	if err != nil {
		t.Fatal(err)
	}
	opts := podlifecycletest.DefaultOptions()
	opts.Until = time.Minute
	tr, err := podlifecycletest.Run(pod, bs, opts)
	if err == nil {
		err = podlifecycletest.CheckAll(tr)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, tr)
	}
}
