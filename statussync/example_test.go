package statussync_test

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

func requests(api *statussynctest.API) string {
	var out []string
	for verb, n := range api.Requests() {
		out = append(out, fmt.Sprintf("%s=%d", verb, n))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// Driving the engine one pass at a time against the in-memory API: three
// updates before a pass become one write, and another controller's condition
// survives it.
func ExampleEngine_SyncOnce() {
	api := statussynctest.NewAPI(1)
	pod, _ := api.Create(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app"}}}})
	_ = api.Update("default", "web", func(p *v1.Pod) {
		p.Status.Conditions = []v1.PodCondition{{Type: "example.com/gate", Status: v1.ConditionTrue}}
	})
	clock := clocktesting.NewFakeClock(epoch)
	cache, _ := statussync.NewCache(statussync.DefaultOptions())
	opts := statussync.DefaultEngineOptions()
	opts.Clock = clock
	engine, _ := statussync.NewEngine(opts, cache, api)

	for _, phase := range []v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodRunning} {
		_, changed, _ := cache.SetPodStatus(pod, v1.PodStatus{Phase: phase}, clock.Now())
		fmt.Printf("set %s: new version %t\n", phase, changed)
	}
	r := engine.SyncOnce(context.Background(), false)
	server, _ := api.Pod("default", "web")
	fmt.Printf("synced %d pod(s) with %s; server phase %s, conditions %d\n", r.Synced, requests(api), server.Status.Phase, len(server.Status.Conditions))
	// Output:
	// set Pending: new version true
	// set Running: new version true
	// set Running: new version false
	// synced 1 pod(s) with get=1 patch=1; server phase Running, conditions 1
}

// A pod being deleted: once the node has finished it (TerminatePod), its
// containers are reported failed, the status is written, and the pod is
// deleted with grace period 0 and its UID as precondition.
func ExampleCache_TerminatePod() {
	api := statussynctest.NewAPI(1)
	now := metav1.NewTime(epoch)
	pod, _ := api.Create(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "default", UID: "u2", DeletionTimestamp: &now},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "app"}}}})
	clock := clocktesting.NewFakeClock(epoch)
	cache, _ := statussync.NewCache(statussync.DefaultOptions())
	opts := statussync.DefaultEngineOptions()
	opts.Clock = clock
	engine, _ := statussync.NewEngine(opts, cache, api)

	running := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "app",
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}}}}
	_, _, _ = cache.SetPodStatus(pod, running, clock.Now())
	engine.SyncOnce(context.Background(), false)

	_ = cache.TerminatePod(pod, clock.Now())
	final, _ := cache.GetPodStatus(pod.UID)
	t := final.ContainerStatuses[0].State.Terminated
	fmt.Printf("phase %s; app %s (exit %d)\n", final.Phase, t.Reason, t.ExitCode)
	r := engine.SyncOnce(context.Background(), false)
	_, stillThere := api.Pod("default", "job")
	fmt.Printf("deleted %d; on the server: %t; %s\n", r.Deleted, stillThere, requests(api))
	// Output:
	// phase Failed; app ContainerStatusUnknown (exit 137)
	// deleted 1; on the server: false; delete=1 get=2 patch=2
}
