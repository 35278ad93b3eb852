package podlifecycle

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func dump(t *testing.T, s *sim) {
	t.Helper()
	for i, r := range s.all {
		var st []string
		for _, x := range r.Statuses {
			st = append(st, string(x.Phase))
		}
		t.Logf("step %d: actions %v statuses %v next %v state %v", i, actionsOf(&r), st, r.NextSync.Sub(t0), r.State)
		for _, e := range r.Events {
			t.Logf("    %s %s %q %s", e.Type, e.Reason, e.Message, e.FieldPath)
		}
	}
}

func TestLifecycleSmoke(t *testing.T) {
	pod := podPS()
	pod.Spec.Containers = pod.Spec.Containers[:1]
	pod.Spec.InitContainers = append([]v1.Container{{Name: "init0", Image: "bar-image:1"}}, pod.Spec.InitContainers...)
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = s.now.Add(10 * time.Second)
	s.settle()
	s.now = s.now.Add(10 * time.Second)
	s.settle()
	s.now = s.now.Add(time.Second)
	p2 := pod.DeepCopy()
	p2.DeletionTimestamp = &metav1.Time{Time: s.now}
	p2.DeletionGracePeriodSeconds = ptr(int64(30))
	s.pod = p2
	s.settle()
	dump(t, s)
	if !s.all[len(s.all)-1].Finished {
		t.Fatal("not finished")
	}
	_ = strings.Join
}
