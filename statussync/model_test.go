package statussync_test

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/internal/rapidcheck"
	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if err := rapidcheck.MinChecks(300); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m)
}

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// world is a node with a few pods, its cache, an engine and a faulty API.
type world struct {
	api    *statussynctest.API
	hist   *statussynctest.History
	clock  *clocktesting.FakeClock
	cache  *statussync.Cache
	engine *statussync.Engine
	pods   []*v1.Pod
	n      []int // per pod, how many statuses were set
	done   []bool
	passes chan statussync.Result
}

func newWorld(t *rapid.T, noGet bool, passes bool) *world {
	w := &world{api: statussynctest.NewAPI(rapid.Int64().Draw(t, "seed")), hist: statussynctest.NewHistory(),
		clock: clocktesting.NewFakeClock(epoch), cache: statussync.NewCache(statussync.DefaultOptions())}
	opts := statussync.DefaultEngineOptions()
	opts.Clock, opts.Planner.NoGet = w.clock, noGet
	if passes {
		w.passes = make(chan statussync.Result, 64)
		opts.Hooks.Pass = func(full bool, r statussync.Result) {
			if full {
				select {
				case w.passes <- r:
				default: // nobody reads before the final check, which drains first
				}
			}
		}
	}
	e, err := statussync.NewEngine(w.cache, w.api, opts)
	if err != nil {
		t.Fatal(err)
	}
	w.engine = e
	w.api.OnWrite(func(p *v1.Pod, by string) {
		w.hist.Write(p, by)
		e.Observe(p) // a watch
	})
	for i := range rapid.IntRange(1, 4).Draw(t, "pods") {
		policy := rapid.SampledFrom([]v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}).Draw(t, "policy")
		p, err := w.api.Create(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("pod-", i), Namespace: "ns", UID: types.UID(fmt.Sprint("uid-", i)), Generation: 1},
			Spec: v1.PodSpec{RestartPolicy: policy, Containers: []v1.Container{{Name: "app"}, {Name: "side"}}}})
		if err != nil {
			t.Fatal(err)
		}
		w.pods = append(w.pods, p)
	}
	w.n = make([]int, len(w.pods))
	w.done = make([]bool, len(w.pods))
	w.api.SetFaults(statussynctest.Faults{
		ErrorRate:    rapid.Float64Range(0.3, 0.6).Draw(t, "errorRate"),
		ConflictRate: rapid.Float64Range(0, 0.2).Draw(t, "conflictRate"),
		NotFoundRate: rapid.Float64Range(0, 0.1).Draw(t, "notFoundRate"),
	})
	return w
}

// nextStatus draws a status the kubelet could write after the cached one:
// a terminal phase is never left and a container that may not restart
// stays terminated.
func (w *world) nextStatus(t *rapid.T, i int) v1.PodStatus {
	pod := w.pods[i]
	old, _ := w.cache.GetPodStatus(pod.UID)
	phase := old.Phase
	if phase != v1.PodSucceeded && phase != v1.PodFailed {
		phase = rapid.SampledFrom([]v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodRunning, v1.PodSucceeded, v1.PodFailed}).Draw(t, "phase")
	}
	s := v1.PodStatus{Phase: phase, Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}}}
	for _, name := range []string{"app", "side"} {
		cs := v1.ContainerStatus{Name: name, ContainerID: "c://" + name}
		var prev *v1.ContainerStatus
		for j := range old.ContainerStatuses {
			if old.ContainerStatuses[j].Name == name {
				prev = &old.ContainerStatuses[j]
			}
		}
		stuck := prev != nil && prev.State.Terminated != nil &&
			(pod.Spec.RestartPolicy == v1.RestartPolicyNever || (pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure && prev.State.Terminated.ExitCode == 0))
		switch {
		case stuck:
			cs.State = prev.State
		case phase == v1.PodSucceeded:
			cs.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}
		case phase == v1.PodFailed:
			cs.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}
		case phase == v1.PodRunning && rapid.Bool().Draw(t, "running"):
			cs.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(epoch)}
			cs.Ready = rapid.Bool().Draw(t, "ready")
		default:
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		s.ContainerStatuses = append(s.ContainerStatuses, cs)
	}
	return s
}

func (w *world) actions(t *rapid.T) map[string]func(*rapid.T) {
	ctx := context.Background()
	pick := func(t *rapid.T) (int, bool) {
		i := rapid.IntRange(0, len(w.pods)-1).Draw(t, "pod")
		return i, !w.done[i]
	}
	return map[string]func(*rapid.T){
		"set": func(t *rapid.T) {
			i, ok := pick(t)
			if !ok {
				t.Skip("finished")
			}
			s := w.nextStatus(t, i)
			uid := w.pods[i].UID
			s.Message = w.hist.Tag(uid, w.cache.Version(uid)+1)
			if _, changed, err := w.cache.SetPodStatus(w.pods[i], s, w.clock.Now()); err != nil {
				t.Fatalf("SetPodStatus: %v", err)
			} else if changed {
				w.hist.Cached(uid, w.cache.Version(uid), s.Message)
			}
		},
		"foreign condition": func(t *rapid.T) {
			i, _ := pick(t)
			c := v1.PodCondition{Type: v1.PodConditionType(statussynctest.ForeignConditionPrefix + rapid.SampledFrom([]string{"a", "b"}).Draw(t, "cond")),
				Status: rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}).Draw(t, "status")}
			_ = w.api.Update("ns", w.pods[i].Name, func(p *v1.Pod) {
				for j := range p.Status.Conditions {
					if p.Status.Conditions[j].Type == c.Type {
						p.Status.Conditions[j] = c
						return
					}
				}
				p.Status.Conditions = append(p.Status.Conditions, c)
			})
		},
		"foreign drift": func(t *rapid.T) {
			i, _ := pick(t)
			_ = w.api.Update("ns", w.pods[i].Name, func(p *v1.Pod) {
				for j := range p.Status.Conditions {
					if p.Status.Conditions[j].Type == v1.PodScheduled {
						p.Status.Conditions[j].Status = v1.ConditionFalse
					}
				}
			})
		},
		"terminate": func(t *rapid.T) {
			i, ok := pick(t)
			if !ok {
				t.Skip("finished")
			}
			uid := w.pods[i].UID
			if _, cached := w.cache.GetPodStatus(uid); !cached {
				t.Skip("nothing cached")
			}
			if rapid.Bool().Draw(t, "deleting") {
				_ = w.api.Update("ns", w.pods[i].Name, func(p *v1.Pod) { now := metav1.NewTime(w.clock.Now()); p.DeletionTimestamp = &now })
				w.pods[i].DeletionTimestamp = &metav1.Time{Time: w.clock.Now()}
			}
			if err := w.cache.TerminatePod(w.pods[i], w.clock.Now()); err != nil {
				t.Fatal(err)
			}
			// TerminatePod kept the message of the last set status; record
			// its new version under it.
			s, _ := w.cache.GetPodStatus(uid)
			w.hist.Cached(uid, w.cache.Version(uid), s.Message)
			w.done[i] = true
		},
		"fast pass": func(t *rapid.T) { w.engine.SyncOnce(ctx, false) },
		"full pass": func(t *rapid.T) { w.engine.SyncOnce(ctx, true) },
		"time": func(t *rapid.T) {
			w.clock.Step(time.Duration(rapid.IntRange(0, 20).Draw(t, "seconds")) * time.Second)
		},
	}
}

// converged checks, once faults are off and passes have run, that every
// cached pod's server copy holds the newest cached status.
func (w *world) converged(t *rapid.T) {
	if err := w.hist.Err(); err != nil {
		t.Fatal(err)
	}
	for _, pod := range w.pods {
		cached, ok := w.cache.GetPodStatus(pod.UID)
		if !ok {
			continue // finished and deleted
		}
		server, ok := w.api.Pod("ns", pod.Name)
		if !ok {
			t.Fatalf("pod %s cached but gone from the server", pod.Name)
		}
		merged := statussync.DefaultOptions().Merge(&server.Status, &cached, false)
		statussync.Normalize(&pod.Spec, &server.Status)
		if !statussync.DefaultOptions().EqualByKubelet(&server.Status, &merged) {
			t.Fatalf("pod %s: the server holds %q (phase %s), the cache %q (phase %s)", pod.Name, server.Status.Message, server.Status.Phase, cached.Message, cached.Phase)
		}
	}
}

// TestEngineModelSyncOnce drives cache and engine with SyncOnce against an
// API failing 30-60% of requests.
func TestEngineModelSyncOnce(t *testing.T) {
	for _, noGet := range []bool{false, true} {
		t.Run(fmt.Sprintf("noGet=%v", noGet), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				w := newWorld(t, noGet, false)
				t.Repeat(w.actions(t))
				w.api.SetFaults(statussynctest.Faults{})
				for range 10 {
					w.clock.Step(2 * time.Minute) // past every back-off
					if r := w.engine.SyncOnce(context.Background(), true); r.Attempted == 0 {
						break
					}
				}
				w.converged(t)
			})
		})
	}
}

// TestEngineModelRun does the same with the engine running in a goroutine
// on the fake clock; goleak (TestMain) checks that Run leaves nothing
// behind.
func TestEngineModelRun(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(t, rapid.Bool().Draw(t, "noGet"), true)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.engine.Run(ctx) }()
		acts := w.actions(t)
		delete(acts, "fast pass") // Run makes the passes
		delete(acts, "full pass")
		t.Repeat(acts)
		w.api.SetFaults(statussynctest.Faults{})
		for range 20 {
			// Wait for the ticker to be armed, then fire a full pass.
			for !w.clock.HasWaiters() {
				select {
				case err := <-done:
					t.Fatalf("Run returned early: %v", err)
				default:
				}
			}
			for len(w.passes) > 0 {
				<-w.passes
			}
			w.clock.Step(2 * time.Minute)
			r := <-w.passes
			for r.At.Before(w.clock.Now()) {
				r = <-w.passes // a pass from before this step
			}
			if r.Attempted == 0 {
				break
			}
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("Run returned %v, want context.Canceled", err)
		}
		w.converged(t)
	})
}
