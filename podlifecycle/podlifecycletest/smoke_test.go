package podlifecycletest

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSmoke(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "init", Image: "busybox:1"},
				{Name: "proxy", Image: "envoy:1", RestartPolicy: &always, StartupProbe: &v1.Probe{PeriodSeconds: 5}}},
			Containers: []v1.Container{{Name: "app", Image: "app:1"}},
		}}
	bs, err := ParseBehaviours("init: run 2s exit 0\nproxy: run forever; startup fail 0s-10s\napp: run 5s exit 1; pull slow 3s")
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Until = 3 * time.Minute
	opts.Delete = &Deletion{After: 2 * time.Minute}
	tr, err := Run(pod, bs, opts)
	t.Log("\n" + tr.String())
	if err != nil {
		t.Fatal(err)
	}
}
