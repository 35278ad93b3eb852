package podrunner_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGracefulDeletion: a deletion from the API terminates the pod within
// its grace; once finished, its final status is in the cache as terminated
// (TerminatePod), its IP is free, and Remove then forgets it.
func TestGracefulDeletion(t *testing.T) {
	n := defaultNode(t)
	finished := 0
	pod := testPod("web", map[string]string{simruntime.AnnotationPrefix + "app": "ignore-sigterm 5s"}, "app")
	grace := int64(30)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	n.add(pod)
	n.run(time.Second)
	del := pod.DeepCopy()
	ts := metav1.NewTime(n.now)
	del.DeletionTimestamp, del.DeletionGracePeriodSeconds, del.ResourceVersion = &ts, &grace, "2"
	_ = n.r.Update(del)
	n.run(4 * time.Second)
	if s := n.r.Stats(); s.Finished != 0 {
		t.Fatal("finished before the container stopped")
	}
	n.run(2 * time.Second)
	st := n.status("uid-web")
	if s := n.r.Stats(); s.Finished != 1 || s.Running != 0 {
		t.Fatalf("stats %+v", s)
	}
	if cs := st.ContainerStatuses[0]; cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 143 {
		t.Fatalf("final container state %+v", cs.State)
	}
	_ = finished
	if err := n.r.Remove("uid-web", del); err != nil {
		t.Fatal(err)
	}
	n.run(time.Second)
	if _, ok := n.cache.GetPodStatus("uid-web"); ok {
		t.Fatal("the forgotten pod's status is still cached")
	}
	if _, ok := n.r.Pod("uid-web"); ok || n.r.Stats().Removed != 1 {
		t.Fatal("the pod is still known")
	}
	if err := n.r.Update(del); !errors.Is(err, podrunner.ErrUnknownPod) {
		t.Fatalf("update of a forgotten pod: %v", err)
	}
}

// TestRemoveRunningPod: a pod the API server deleted without a graceful
// deletion (forced) is killed as a deletion with grace 0 (the kubelet's
// minimum kill grace applies) and forgotten once finished.
func TestRemoveRunningPod(t *testing.T) {
	n := defaultNode(t)
	n.add(testPod("web", map[string]string{simruntime.AnnotationPrefix + "app": "ignore-sigterm 1m"}, "app"))
	n.run(time.Second)
	if err := n.r.Remove("uid-web", nil); err != nil {
		t.Fatal(err)
	}
	n.run(time.Second)
	if _, ok := n.r.Pod("uid-web"); !ok {
		t.Fatal("forgotten before its containers stopped")
	}
	n.run(2 * time.Second) // the 2 s minimum grace, then SIGKILL
	if _, ok := n.r.Pod("uid-web"); ok {
		t.Fatal("still known after its containers stopped")
	}
	if _, ok := n.cache.GetPodStatus("uid-web"); ok {
		t.Fatal("status still cached")
	}
	if s := n.r.Stats(); s.Removed != 1 || s.Finished != 1 || s.Running != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestReject: a rejected pod is failed with the kubelet's admission status
// and event, terminated in the cache, and known until Remove.
func TestReject(t *testing.T) {
	n := defaultNode(t)
	pod := testPod("big", nil, "app")
	if err := n.r.Reject(pod, n.now, "OutOfcpu", "Node didn't have enough resource: cpu, requested: 8000, used: 0, capacity: 4000"); err != nil {
		t.Fatal(err)
	}
	st := n.status("uid-big")
	if st.Phase != v1.PodFailed || st.Reason != "OutOfcpu" || !strings.HasPrefix(st.Message, "Pod was rejected: Node didn't have enough resource") || st.HostIP != "192.0.2.10" {
		t.Fatalf("status %+v", st)
	}
	if ev := n.rec.reasons(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning OutOfcpu : Node didn't") {
		t.Fatalf("events %v", ev)
	}
	if err := n.r.Reject(pod, n.now, "x", "y"); !errors.Is(err, podrunner.ErrDuplicatePod) {
		t.Fatalf("second reject: %v", err)
	}
	n.run(time.Minute)
	if s := n.r.Stats(); s.Rejected != 1 || s.Steps != 0 || s.Running != 0 {
		t.Fatalf("stats %+v", s)
	}
	_ = n.r.Remove("uid-big", pod)
	n.run(time.Second)
	if _, ok := n.r.Pod("uid-big"); ok {
		t.Fatal("still known")
	}
}

// TestRuntimeRefusal: a runtime whose Do fails (its backend unreachable)
// gets the same actions again after 1 s, then 2 s, and later actions queue
// behind them; every refusal is counted; the pod runs once the runtime
// takes them.
func TestRuntimeRefusal(t *testing.T) {
	n := defaultNode(t)
	pod := testPod("web", nil, "app")
	sim, _ := simruntime.New(simruntime.DefaultOptions(), pod, nil)
	rt := &noteRuntime{Runtime: sim, fail: 2}
	if err := n.r.Add(pod, rt); err != nil {
		t.Fatal(err)
	}
	n.run(2 * time.Second)
	if s := n.r.Stats(); s.RuntimeErrors != 2 || rt.calls != 2 {
		t.Fatalf("after 2 s: %d refusals, %d calls", s.RuntimeErrors, rt.calls)
	}
	n.run(2 * time.Second) // the retry at +3 s
	if st := n.status("uid-web"); state(st, "app") != "Running" {
		t.Fatalf("app %s", state(st, "app"))
	}
	if len(rt.batches) == 0 || rt.batches[0][0].Kind != podlifecycle.CreateSandbox {
		t.Fatalf("the first batch the runtime took: %v", rt.batches)
	}
}

// badRuntime reports an exit of a container instance that never started,
// together with a real observation.
type badRuntime struct {
	podrunner.Runtime
	sent bool
}

func (b *badRuntime) Due(now time.Time) []podlifecycle.Observation {
	obs := b.Runtime.Due(now)
	if !b.sent && len(obs) > 0 {
		b.sent = true
		obs = append([]podlifecycle.Observation{{Kind: podlifecycle.ContainerExited, Container: "app", ContainerID: "sim://ghost-9"}}, obs...)
	}
	return obs
}

// TestBadObservationDropped: an observation the machine refuses is dropped
// and counted, the rest of its batch is applied.
func TestBadObservationDropped(t *testing.T) {
	n := defaultNode(t)
	pod := testPod("web", nil, "app")
	sim, _ := simruntime.New(simruntime.DefaultOptions(), pod, nil)
	if err := n.r.Add(pod, &badRuntime{Runtime: sim}); err != nil {
		t.Fatal(err)
	}
	n.run(time.Second)
	if s := n.r.Stats(); s.DroppedObservations != 1 || s.StepErrors != 0 {
		t.Fatalf("stats %+v", s)
	}
	if st := n.status("uid-web"); state(st, "app") != "Running" {
		t.Fatalf("app %s", state(st, "app"))
	}
}

// stuckRuntime always says it has news now, and never has any.
type stuckRuntime struct{ at time.Time }

func (s *stuckRuntime) Do(time.Time, []podlifecycle.Action) error { return nil }
func (s *stuckRuntime) Due(time.Time) []podlifecycle.Observation  { return nil }
func (s *stuckRuntime) Next() time.Time                           { return s.at }

// TestStall: a runtime that keeps asking for a sync with nothing to
// report is synced at most MaxSyncsPerInstant times at one instant, then
// waited for StallDelay; Advance always returns.
func TestStall(t *testing.T) {
	n := defaultNode(t)
	rt := &stuckRuntime{at: t0}
	if err := n.r.Add(testPod("web", nil, "app"), rt); err != nil {
		t.Fatal(err)
	}
	next := n.r.Advance(t0)
	if s := n.r.Stats(); s.Stalls != 1 || !next.Equal(t0.Add(time.Second)) {
		t.Fatalf("stalls %d, next +%v", s.Stalls, next.Sub(t0))
	}
}

// TestClockStepsBack: a now earlier than an earlier Advance's is taken as
// that time and counted; the pods go on.
func TestClockStepsBack(t *testing.T) {
	n := defaultNode(t)
	n.add(testPod("web", nil, "app"))
	n.r.Advance(t0.Add(10 * time.Second))
	n.r.Advance(t0.Add(5 * time.Second))
	if s := n.r.Stats(); s.ClockSteppedBack != 1 || s.StepErrors != 0 {
		t.Fatalf("stats %+v", s)
	}
	if st := n.status("uid-web"); state(st, "app") != "Running" {
		t.Fatalf("app %s", state(st, "app"))
	}
}

// asyncRuntime knows nothing in advance: the test queues its reports and
// calls Notify.
type asyncRuntime struct {
	obs     []podlifecycle.Observation
	actions []podlifecycle.Action
}

func (a *asyncRuntime) Do(_ time.Time, actions []podlifecycle.Action) error {
	a.actions = append(a.actions, actions...)
	return nil
}
func (a *asyncRuntime) Due(time.Time) []podlifecycle.Observation {
	o := a.obs
	a.obs = nil
	return o
}
func (a *asyncRuntime) Next() time.Time { return time.Time{} }

// TestNotify: a runtime that cannot say when it has news calls Notify; the
// pod syncs at the next Advance on what it reports, stamped within the
// window the machine accepts.
func TestNotify(t *testing.T) {
	n := defaultNode(t)
	rt := &asyncRuntime{}
	if err := n.r.Add(testPod("web", nil, "app"), rt); err != nil {
		t.Fatal(err)
	}
	n.r.Advance(t0)
	if len(rt.actions) != 1 || rt.actions[0].Kind != podlifecycle.CreateSandbox {
		t.Fatalf("actions %v", rt.actions)
	}
	// Reported ahead of now by the runtime's own clock: moved to now.
	rt.obs = []podlifecycle.Observation{{Kind: podlifecycle.SandboxReady, At: t0.Add(time.Hour)}}
	if err := n.r.Notify("uid-web"); err != nil {
		t.Fatal(err)
	}
	n.r.Advance(t0.Add(time.Second))
	// The sandbox-ready version sets the condition alone (podlifecycle
	// section 15 decision 6); the IP shows once the starts are answered.
	if st := n.status("uid-web"); st.PodIP != "" || cond(st, v1.PodReadyToStartContainers).Status != v1.ConditionTrue {
		t.Fatalf("status %+v", st)
	}
	if !slices.ContainsFunc(rt.actions, func(a podlifecycle.Action) bool { return a.Kind == podlifecycle.StartContainer }) {
		t.Fatalf("no start after the sandbox: %v", rt.actions)
	}
	rt.obs = []podlifecycle.Observation{{Kind: podlifecycle.ImagePulled, Container: "app", Image: "app:1"},
		{Kind: podlifecycle.ContainerCreated, Container: "app", ContainerID: "x://1"}, {Kind: podlifecycle.ContainerStarted, Container: "app", ContainerID: "x://1"}}
	if err := n.r.Notify("uid-web"); err != nil {
		t.Fatal(err)
	}
	n.r.Advance(t0.Add(2 * time.Second))
	if st := n.status("uid-web"); st.PodIP != "10.244.1.2" || state(st, "app") != "Running" {
		t.Fatalf("status after the starts %+v", st)
	}
	if s := n.r.Stats(); s.StepErrors != 0 || s.DroppedObservations != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestImagesShared: an image one pod pulled is present for the next pod
// that uses it: IfNotPresent does not pull it again.
func TestImagesShared(t *testing.T) {
	n := defaultNode(t)
	n.add(testPod("a", nil, "app"))
	n.run(time.Second)
	n.add(testPod("b", nil, "app"))
	n.run(time.Second)
	pulls := 0
	for _, e := range n.rec.reasons() {
		if strings.Contains(e, " Pulling ") {
			pulls++
		}
	}
	if pulls != 1 || !slices.Equal(n.r.Images(), []string{"app:1"}) {
		t.Fatalf("%d pulls, images %v:\n%s", pulls, n.r.Images(), strings.Join(n.rec.reasons(), "\n"))
	}
	if !slices.Contains(n.rec.reasons(), `Normal Pulled spec.containers{app}: Container image "app:1" already present on machine and can be accessed by the pod`) {
		t.Fatalf("events %v", n.rec.reasons())
	}
	// The node's image list: the pull's size and the ref of the first
	// container created from it (simruntime's digest of the pulled name).
	want := []podrunner.Image{{Name: "app:1", Ref: simruntime.ImageRef("app:1"), Size: simruntime.DefaultOptions().ImageSize}}
	if got := n.r.NodeImages(); !slices.Equal(got, want) {
		t.Fatalf("node images %+v, want %+v", got, want)
	}
}
