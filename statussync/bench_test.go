package statussync_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

func benchPod(i int) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("pod-", i), Namespace: "ns", UID: types.UID(fmt.Sprint("uid-", i)), Generation: 1},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "app"}, {Name: "sidecar"}}}}
}

func benchStatus(ready bool, msg string) v1.PodStatus {
	r := v1.ConditionFalse
	if ready {
		r = v1.ConditionTrue
	}
	s := v1.PodStatus{Phase: v1.PodRunning, Message: msg, Conditions: []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue}, {Type: v1.PodReady, Status: r}, {Type: v1.ContainersReady, Status: r}}}
	for _, n := range []string{"app", "sidecar"} {
		s.ContainerStatuses = append(s.ContainerStatuses, v1.ContainerStatus{Name: n, Ready: ready, ContainerID: "c://" + n,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(epoch)}}})
	}
	return s
}

type node struct {
	api    *statussynctest.API
	cache  *statussync.Cache
	engine *statussync.Engine
	clock  *clocktesting.FakeClock
	pods   []*v1.Pod
}

func newNode(tb testing.TB, n int, noGet bool) *node {
	nd := &node{api: statussynctest.NewAPI(1), cache: newCache(tb, statussync.DefaultOptions()), clock: clocktesting.NewFakeClock(epoch)}
	opts := statussync.DefaultEngineOptions()
	opts.Clock, opts.Planner.NoGet = nd.clock, noGet
	e, err := statussync.NewEngine(opts, nd.cache, nd.api)
	if err != nil {
		tb.Fatal(err)
	}
	nd.engine = e
	for i := range n {
		p, err := nd.api.Create(benchPod(i))
		if err != nil {
			tb.Fatal(err)
		}
		nd.pods = append(nd.pods, p)
	}
	return nd
}

func (nd *node) setAll(tb testing.TB, ready bool, msg string) {
	for _, p := range nd.pods {
		if _, _, err := nd.cache.SetPodStatus(p, benchStatus(ready, msg), nd.clock.Now()); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkSetPodStatus caches a new status of one pod, alternating between
// two that differ in readiness, so every call stores a new version.
func BenchmarkSetPodStatus(b *testing.B) {
	cache := newCache(b, statussync.DefaultOptions())
	pod := benchPod(0)
	statuses := [2]v1.PodStatus{benchStatus(true, ""), benchStatus(false, "")}
	now := epoch
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, changed, err := cache.SetPodStatus(pod, statuses[i%2], now); err != nil || !changed {
			b.Fatal(err, changed)
		}
	}
}

// BenchmarkFullPassNothingChanged is one full pass over 10,000 synced pods
// whose status did not change: no API request at all.
func BenchmarkFullPassNothingChanged(b *testing.B) {
	const pods = 10000
	nd := newNode(b, pods, false)
	nd.setAll(b, true, "")
	nd.engine.SyncOnce(context.Background(), true)
	before := nd.api.Requests()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := nd.engine.SyncOnce(context.Background(), true); r.Attempted != 0 {
			b.Fatalf("attempted %d", r.Attempted)
		}
	}
	b.StopTimer()
	if after := nd.api.Requests(); after["get"]+after["patch"] != before["get"]+before["patch"] {
		b.Fatalf("a pass with nothing changed made requests: %v -> %v", before, after)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/pods, "ns/pod")
}

// TestCoalescing: 100,000 updates spread over 10,000 pods (a tenth of that
// under the race detector, which is slow), then one pass, write each pod at
// most once.
func TestCoalescing(t *testing.T) {
	pods, updates := 10000, 100000
	if raceEnabled {
		pods, updates = 1000, 10000
	}
	nd := newNode(t, pods, false)
	for u := range updates {
		p := nd.pods[u%pods]
		if _, _, err := nd.cache.SetPodStatus(p, benchStatus(u%3 == 0, fmt.Sprint(u)), nd.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	r := nd.engine.SyncOnce(context.Background(), false)
	req := nd.api.Requests()
	if req["patch"] > pods || r.Synced != pods {
		t.Fatalf("%d patches for %d pods (synced %d), want at most one per pod", req["patch"], pods, r.Synced)
	}
	for _, p := range nd.pods[:10] {
		server, _ := nd.api.Pod("ns", p.Name)
		cached, _ := nd.cache.GetPodStatus(p.UID)
		if server.Status.Message != cached.Message {
			t.Fatalf("pod %s: server has %q, cache %q: the newest status is written", p.Name, server.Status.Message, cached.Message)
		}
	}
}

// requestsPerVersion sets versions statuses on each of 100 pods, syncing
// after each round, and returns the API requests per synced version.
func requestsPerVersion(tb testing.TB, noGet bool, versions int) float64 {
	const pods = 100
	nd := newNode(tb, pods, noGet)
	synced := 0
	for v := range versions {
		nd.setAll(tb, v%2 == 0, fmt.Sprint("v", v))
		synced += nd.engine.SyncOnce(context.Background(), false).Synced
	}
	req := nd.api.Requests()
	return float64(req["get"]+req["patch"]) / float64(synced)
}

// TestRequestsPerVersion compares the kubelet's GET-then-PATCH with NoGet,
// which must stay at or below 1.1 requests per synced version without
// conflicts.
func TestRequestsPerVersion(t *testing.T) {
	def, noGet := requestsPerVersion(t, false, 20), requestsPerVersion(t, true, 20)
	t.Logf("API requests per synced version: default %.2f, NoGet %.2f", def, noGet)
	if def != 2 {
		t.Errorf("the default mode makes a GET and a PATCH per version, got %.2f", def)
	}
	if noGet > 1.1 {
		t.Errorf("NoGet makes %.2f requests per version, want at most 1.1", noGet)
	}
}

func BenchmarkRequestsPerVersion(b *testing.B) {
	for _, noGet := range []bool{false, true} {
		b.Run(fmt.Sprintf("noGet=%v", noGet), func(b *testing.B) {
			var r float64
			for b.Loop() {
				r = requestsPerVersion(b, noGet, 5)
			}
			b.ReportMetric(r, "requests/version")
		})
	}
}

// BenchmarkHeapPerPod reports the heap held per cached pod.
func BenchmarkHeapPerPod(b *testing.B) {
	const pods = 10000
	var perPod float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cache := newCache(b, statussync.DefaultOptions())
		for i := range pods {
			if _, _, err := cache.SetPodStatus(benchPod(i), benchStatus(true, ""), epoch.Add(time.Duration(i))); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perPod = float64(after.HeapAlloc-before.HeapAlloc) / pods
		runtime.KeepAlive(cache)
	}
	b.ReportMetric(perPod, "heapB/pod")
}

// BenchmarkCoalesce sets 100,000 statuses spread over 10,000 pods, then makes
// one pass; it reports the API writes per pod (at most one).
func BenchmarkCoalesce(b *testing.B) {
	const pods, updates = 10000, 100000
	var writesPerPod float64
	for b.Loop() {
		b.StopTimer()
		nd := newNode(b, pods, false)
		b.StartTimer()
		for u := range updates {
			if _, _, err := nd.cache.SetPodStatus(nd.pods[u%pods], benchStatus(u%3 == 0, fmt.Sprint(u)), nd.clock.Now()); err != nil {
				b.Fatal(err)
			}
		}
		nd.engine.SyncOnce(context.Background(), false)
		writesPerPod = float64(nd.api.Requests()["patch"]) / pods
	}
	if writesPerPod > 1 {
		b.Fatalf("%.2f writes per pod", writesPerPod)
	}
	b.ReportMetric(writesPerPod, "writes/pod")
}

// TestSetPodStatusUnchangedAllocatesNothing: setting a status the cache
// already holds (the kubelet's every sync of a pod whose status did not
// change) stores nothing and allocates nothing (issue 29), for a status
// with conditions, container states, the start time, IPs and resources.
func TestSetPodStatusUnchangedAllocatesNothing(t *testing.T) {
	cache := newCache(t, statussync.DefaultOptions())
	pod := benchPod(0)
	st := benchStatus(true, "")
	start := metav1.NewTime(epoch.Add(1500 * time.Millisecond))
	st.StartTime, st.PodIP = &start, "10.0.0.1"
	st.PodIPs, st.HostIPs = []v1.PodIP{{IP: "10.0.0.1"}}, []v1.HostIP{{IP: "192.0.2.1"}}
	started := true
	st.ContainerStatuses[0].Started = &started
	st.ContainerStatuses[0].Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}
	st.ContainerStatuses[0].AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}
	st.ContainerStatuses[1].LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(epoch)}
	if _, changed, err := cache.SetPodStatus(pod, st, epoch); err != nil || !changed {
		t.Fatal(err, changed)
	}
	now := epoch
	allocs := testing.AllocsPerRun(100, func() {
		now = now.Add(time.Second)
		if _, changed, err := cache.SetPodStatus(pod, st, now); err != nil || changed {
			t.Fatal(err, changed)
		}
	})
	if allocs != 0 {
		t.Fatalf("setting an unchanged status allocates %v times, want 0", allocs)
	}
}

// BenchmarkSetPodStatusUnchanged sets the status the cache holds again.
func BenchmarkSetPodStatusUnchanged(b *testing.B) {
	cache := newCache(b, statussync.DefaultOptions())
	pod := benchPod(0)
	st := benchStatus(true, "")
	now := epoch
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, changed, err := cache.SetPodStatus(pod, st, now); err != nil || changed != (i == 0) {
			b.Fatal(err, changed)
		}
	}
}

// With Options.SharedPods the engine keeps the pod a watch delivers and
// the cache the pod a status is set for, not copies of them: observing
// allocates nothing, and a pod's first status allocates at least a copy of
// its spec and metadata less than without.
func TestSharedPodsKeepNoCopies(t *testing.T) {
	pod := benchPod(0)
	pod.Labels = map[string]string{"app": "web", "tier": "front"}
	pod.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
	st := benchStatus(true, "")
	copyAllocs := testing.AllocsPerRun(100, func() {
		_ = &v1.Pod{ObjectMeta: *pod.ObjectMeta.DeepCopy(), Spec: *pod.Spec.DeepCopy()}
	})
	measure := func(shared bool) (observe, first float64) {
		o := statussync.DefaultOptions()
		o.SharedPods = shared
		cache := newCache(t, o)
		e, err := statussync.NewEngine(statussync.DefaultEngineOptions(), cache, statussynctest.NewAPI(1))
		if err != nil {
			t.Fatal(err)
		}
		e.Observe(pod) // the map of observations exists
		observe = testing.AllocsPerRun(100, func() { e.Observe(pod) })
		first = testing.AllocsPerRun(100, func() {
			c := newCache(t, o)
			if _, changed, err := c.SetPodStatus(pod, st, epoch); err != nil || !changed {
				t.Fatal(err, changed)
			}
		})
		return observe, first
	}
	copyObserve, copyFirst := measure(false)
	sharedObserve, sharedFirst := measure(true)
	t.Logf("Observe: %v allocations copying, %v shared; first status: %v copying, %v shared; a copy of spec and metadata: %v",
		copyObserve, sharedObserve, copyFirst, sharedFirst, copyAllocs)
	if sharedObserve != 0 {
		t.Errorf("Observe with SharedPods allocates %v times, want 0", sharedObserve)
	}
	if copyObserve == 0 {
		t.Errorf("Observe without SharedPods allocates nothing: it keeps the caller's pod")
	}
	if copyFirst-sharedFirst < copyAllocs {
		t.Errorf("a first status allocates %v times copying and %v shared, want at least the copy's %v fewer", copyFirst, sharedFirst, copyAllocs)
	}
}

// BenchmarkPatch builds the patch of a running pod's status turning ready.
func BenchmarkPatch(b *testing.B) {
	api, merged := benchStatus(false, ""), benchStatus(true, "")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := statussync.Patch("uid", "7", &api, &merged); err != nil {
			b.Fatal(err)
		}
	}
}
