package podrunner_test

import (
	"fmt"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A node of one crash-looping pod in virtual time: Advance syncs what is
// due and says when the next pod is. The pod's kubectl STATUS over its
// first restarts: Error from each crash until the back-off (10 s, 20 s)
// expires, CrashLoopBackOff in the sync that restarts it.
func ExampleRunner() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cache, _ := statussync.NewCache(statussync.DefaultOptions())
	opts := podrunner.DefaultOptions()
	opts.PodCIDR, opts.HostIPs = "10.244.0.0/24", []string{"192.0.2.1"}
	var now time.Time
	last := ""
	opts.Hooks.Synced = func(_ time.Time, pod *v1.Pod, _ []podlifecycle.Observation, res *podlifecycle.Result) {
		for _, st := range res.Statuses {
			p := pod.DeepCopy()
			p.Status = st
			if s := podphase.DisplayStatus(p); s != last {
				fmt.Printf("+%-4v %s, restarts %d\n", now.Sub(start), s, st.ContainerStatuses[0].RestartCount)
				last = s
			}
		}
	}
	backOffs := 0
	r, _ := podrunner.New(opts, cache, recorderFunc(func(_, reason, _ string) {
		if reason == podlifecycle.ReasonBackOff {
			backOffs++
		}
	}))

	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "worker", Namespace: "default", UID: "u1",
		Annotations: map[string]string{simruntime.AnnotationPrefix + "app": "run 3s exit 1"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "worker:1"}}}}
	rt, _ := simruntime.NewForPod(simruntime.DefaultOptions(), pod)
	_ = r.Add(pod, rt)
	for now = start; now.Before(start.Add(45 * time.Second)); {
		next := r.Advance(now)
		if next.After(now) {
			now = next
		}
	}
	st, _ := r.Status("u1")
	fmt.Println("pod IP", st.PodIP, "on host", st.HostIP, "BackOff events", backOffs)
	// Output:
	// +0s   ContainerCreating, restarts 0
	// +0s   Running, restarts 0
	// +3s   Error, restarts 0
	// +3s   Running, restarts 1
	// +6s   Error, restarts 1
	// +16s  CrashLoopBackOff, restarts 1
	// +16s  Running, restarts 2
	// +19s  Error, restarts 2
	// +39s  CrashLoopBackOff, restarts 2
	// +39s  Running, restarts 3
	// +42s  Error, restarts 3
	// pod IP 10.244.0.2 on host 192.0.2.1 BackOff events 3
}

// recorderFunc adapts a function to podrunner.Recorder.
type recorderFunc func(eventtype, reason, message string)

func (f recorderFunc) Event(_ runtime.Object, eventtype, reason, message string) {
	f(eventtype, reason, message)
}
