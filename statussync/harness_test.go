package statussync

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/statussync/statussynctest"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

type harness struct {
	t      *testing.T
	api    *statussynctest.API
	cache  *Cache
	engine *Engine
	clock  *clocktesting.FakeClock
}

func newHarness(t *testing.T, opts Options, mutate ...func(*EngineOptions)) *harness {
	t.Helper()
	cache, err := NewCache(opts)
	if err != nil {
		t.Fatal(err)
	}
	// The API server stands for the same minor and gates as the cache.
	api, err := statussynctest.NewAPIWithOptions(statussynctest.Options{Seed: 1, Features: opts.Features, Version: opts.Version})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, api: api, cache: cache, clock: clocktesting.NewFakeClock(t0)}
	eo := DefaultEngineOptions()
	eo.Clock = h.clock
	for _, m := range mutate {
		m(&eo)
	}
	e, err := NewEngine(eo, h.cache, h.api)
	if err != nil {
		t.Fatal(err)
	}
	h.engine = e
	return h
}

func (h *harness) now() time.Time { return h.clock.Now() }

// create stores pod on the server and returns it.
func (h *harness) create(pod *v1.Pod) *v1.Pod {
	h.t.Helper()
	p, err := h.api.Create(pod)
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) set(pod *v1.Pod, s v1.PodStatus) bool {
	h.t.Helper()
	_, changed, err := h.cache.SetPodStatus(pod, s, h.now())
	if err != nil {
		h.t.Fatalf("SetPodStatus: %v", err)
	}
	return changed
}

// passLimit bounds one SyncOnce of the harness: a pass ends when the
// planner has nothing more to ask, long before this.
const passLimit = 10 * time.Second

// pass makes one pass, and fails the test if it ran until its context
// ended instead of ending with its work (SyncOnce makes one pass).
func (h *harness) pass(full bool) Result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), passLimit)
	defer cancel()
	r := h.engine.SyncOnce(ctx, full)
	if ctx.Err() != nil {
		h.t.Fatalf("SyncOnce(full=%v) ran for %v, until its context ended: a pass ends when it has nothing more to ask", full, passLimit)
	}
	return r
}

// sync drains the dirty signal with fast passes, as the kubelet's tests do.
func (h *harness) sync() Result {
	h.t.Helper()
	var total Result
	for {
		select {
		case <-h.cache.Changed():
			r := h.pass(false)
			total.Attempted += r.Attempted
			total.Synced += r.Synced
			total.Deleted += r.Deleted
		default:
			return total
		}
	}
}

// requests returns the API requests since the last call as a string like
// "get=1 patch=1".
func (h *harness) requests(last *map[string]int) map[string]int {
	cur := h.api.Requests()
	out := map[string]int{}
	for k, v := range cur {
		if d := v - (*last)[k]; d != 0 {
			out[k] = d
		}
	}
	*last = cur
	return out
}

func testPod(uid types.UID, name string, containers ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid, Generation: 1}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: "img"})
	}
	if len(containers) == 0 {
		p.Spec.Containers = []v1.Container{{Name: "app", Image: "img"}}
	}
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	return p
}

func runningStatus(names ...string) v1.PodStatus {
	s := v1.PodStatus{Phase: v1.PodRunning}
	for _, n := range names {
		s.ContainerStatuses = append(s.ContainerStatuses, v1.ContainerStatus{Name: n, ContainerID: "c://" + n,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}})
	}
	return s
}

func cond(t v1.PodConditionType, s v1.ConditionStatus) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: s}
}
