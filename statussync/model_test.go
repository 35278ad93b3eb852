package statussync_test

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/internal/rapidcheck"
	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if err := rapidcheck.MinChecks(300); err != nil {
		panic(err)
	}
	if testing.Short() {
		// A pass, a retry loop or Run that does not end fails the run here,
		// with every goroutine's stack, instead of waiting for go test's
		// timeout. The short suite takes seconds.
		limit := shortLimit
		if raceEnabled {
			limit *= 5 // the race detector slows the suite down about that much
		}
		time.AfterFunc(limit, func() {
			panic(fmt.Sprintf("statussync: the short tests still run after %v: a loop does not end", limit))
		})
	}
	goleak.VerifyTestMain(m)
}

// shortLimit bounds the wall time of the whole short suite.
const shortLimit = 3 * time.Minute

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
	// deleting is set for pods terminated with a deletionTimestamp: they
	// must be gone once the engine converged.
	deleting []bool
	passes   chan statussync.Result
	// now and advance are the world's time: the fake clock, or the real
	// clock of a synctest bubble.
	now     func() time.Time
	advance func(time.Duration)
}

func newWorld(t *rapid.T, noGet bool, passes bool) *world {
	w := &world{clock: clocktesting.NewFakeClock(epoch)}
	w.now, w.advance = w.clock.Now, w.clock.Step
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
	w.setup(t, opts, true)
	w.api.SetFaults(statussynctest.Faults{
		ErrorRate:    rapid.Float64Range(0.3, 0.6).Draw(t, "errorRate"),
		ConflictRate: rapid.Float64Range(0, 0.2).Draw(t, "conflictRate"),
		NotFoundRate: rapid.Float64Range(0, 0.1).Draw(t, "notFoundRate"),
	})
	return w
}

// setup makes the API, the cache, the engine with opts and the pods; with
// observe, every write the API stores reaches Observe (a watch).
func (w *world) setup(t *rapid.T, opts statussync.EngineOptions, observe bool) {
	w.api, w.hist = statussynctest.NewAPI(rapid.Int64().Draw(t, "seed")), statussynctest.NewHistory()
	co := statussync.DefaultOptions()
	co.SharedPods = rapid.Bool().Draw(t, "sharedPods") // the world changes no pod it handed over
	w.cache = newCache(t, co)
	e, err := statussync.NewEngine(opts, w.cache, w.api)
	if err != nil {
		t.Fatal(err)
	}
	w.engine = e
	w.api.OnWrite(func(p *v1.Pod, by string) {
		w.hist.Write(p, by)
		if observe {
			e.Observe(p)
		}
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
	w.deleting = make([]bool, len(w.pods))
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
			if _, changed, err := w.cache.SetPodStatus(w.pods[i], s, w.now()); err != nil {
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
				now := metav1.NewTime(w.now())
				_ = w.api.Update("ns", w.pods[i].Name, func(p *v1.Pod) { p.DeletionTimestamp = &now })
				deleting := w.pods[i].DeepCopy() // a new object, as a watch hands out
				deleting.DeletionTimestamp = &now
				w.pods[i] = deleting
				w.deleting[i] = true
			}
			if err := w.cache.TerminatePod(w.pods[i], w.now()); err != nil {
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
		"foreign terminal": func(t *rapid.T) {
			// Pod garbage collection or the eviction API ends the pod.
			i, _ := pick(t)
			_ = w.api.Update("ns", w.pods[i].Name, func(p *v1.Pod) {
				p.Status.Phase, p.Status.Reason, p.Status.Message = v1.PodFailed, "Evicted", "foreign"
			})
		},
		"time": func(t *rapid.T) {
			w.advance(time.Duration(rapid.IntRange(0, 20).Draw(t, "seconds")) * time.Second)
		},
	}
}

// converged checks, once faults are off and passes have run, that every
// cached pod's server copy holds the newest cached status.
func (w *world) converged(t *rapid.T) {
	if err := w.hist.Err(); err != nil {
		t.Fatal(err)
	}
	for i, pod := range w.pods {
		cached, ok := w.cache.GetPodStatus(pod.UID)
		server, onServer := w.api.Pod("ns", pod.Name)
		if w.deleting[i] && (ok || onServer) {
			t.Fatalf("pod %s is finished and deleting but not deleted (cached %t, on the server %t)", pod.Name, ok, onServer)
		}
		if !ok {
			continue // finished and deleted
		}
		if !onServer {
			t.Fatalf("pod %s cached but gone from the server", pod.Name)
		}
		merged := statussync.DefaultOptions().Merge(&server.Status, &cached, false)
		statussync.Normalize(&pod.Spec, &server.Status)
		if !statussync.DefaultOptions().EqualByKubelet(&server.Status, &merged) {
			t.Fatalf("pod %s: the server holds %q (phase %s), the cache %q (phase %s):\n%s", pod.Name, server.Status.Message, server.Status.Phase, cached.Message, cached.Phase, cmp.Diff(merged, server.Status))
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

// runStats is what a running engine did, from its hooks.
type runStats struct {
	mu       sync.Mutex
	passes   []passRecord
	requests int // requests since the last pass ended
	err      error
	stop     func() // ends Run: a spinning Run never lets the bubble's time move
	same     int    // passes at the instant of the last one
}

type passRecord struct {
	at   time.Time
	full bool
	res  statussync.Result
}

func (r *runStats) hooks() statussync.Hooks {
	return statussync.Hooks{
		Request: func(string, error) {
			r.mu.Lock()
			r.requests++
			r.mu.Unlock()
		},
		Pass: func(full bool, res statussync.Result) {
			r.mu.Lock()
			defer r.mu.Unlock()
			// Bounded requests: a pod costs at most a GET, a PATCH, a GET
			// and a PATCH after a conflict, and a DELETE.
			if r.requests > 5*res.Attempted && r.err == nil {
				r.err = fmt.Errorf("a pass at %s made %d requests for %d pods", res.At.Format(time.TimeOnly), r.requests, res.Attempted)
			}
			r.requests = 0
			if n := len(r.passes); n > 0 && r.passes[n-1].at.Equal(res.At) {
				r.same++
			} else {
				r.same = 1
			}
			if r.same > 100 {
				if r.err == nil {
					r.err = fmt.Errorf("Run spins: %d passes at %s", r.same, res.At.Format(time.TimeOnly))
				}
				r.stop()
				return
			}
			r.passes = append(r.passes, passRecord{at: res.At, full: full, res: res})
		},
	}
}

// since returns the passes recorded from index i on.
func (r *runStats) since(i int) []passRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]passRecord(nil), r.passes[i:]...)
}

func (r *runStats) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.passes)
}

// checkWakeUps checks the passes Run made while the world only waited: at
// most one pass per wake-up that has work. A fast pass without work is the
// echo of the writes of a pass before it (their Observe signal) or of the
// change that started the wait, so there are at most as many of them as
// passes with work plus one; and no instant sees more than four passes (a
// full pass, a back-off's fast pass, and an echo of each).
func checkWakeUps(passes []passRecord) error {
	idle, busy, at, n := 0, 0, time.Time{}, 0
	for _, p := range passes {
		if p.at.Equal(at) {
			n++
		} else {
			at, n = p.at, 1
		}
		if n > 4 {
			return fmt.Errorf("%d passes at %s", n, at.Format(time.TimeOnly))
		}
		switch {
		case p.res.Attempted > 0:
			busy++
		case !p.full:
			idle++
		}
	}
	if idle > busy+1 {
		return fmt.Errorf("%d fast passes without work and %d with work while waiting", idle, busy)
	}
	return nil
}

// TestEngineModelRun drives cache and engine with Run on the real clock of
// a synctest bubble, where zero-length timers fire at once as on a real
// node, in every mode (GET or NoGet, with or without a watch feeding
// Observe), against an API failing up to 60% of requests with lost
// answers, late-stored writes, conflicts, 404s and writes between GET and
// PATCH, while other writers add conditions, flip kubelet-owned ones and
// end pods. It checks after every step the History's rules (no older
// version after a newer one, no terminal phase reverted, no condition of
// another writer lost) and bounded requests per pass; after every wait at
// most one pass per wake-up that has work; and, once faults stop, that
// every pod converges and every finished deleting pod is deleted. goleak
// (TestMain) checks that Run leaves nothing behind.
func TestEngineModelRun(t *testing.T) {
	for _, mode := range []struct{ noGet, observe bool }{{false, true}, {true, true}, {false, false}, {true, false}} {
		t.Run(fmt.Sprintf("noGet=%v/observe=%v", mode.noGet, mode.observe), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// rapid asks a *testing.T for its deadline, which a bubble
				// forbids; behind the TB interface it does not.
				rapid.Check(bubbleTB{t}, func(t *rapid.T) { runModel(t, mode.noGet, mode.observe) })
			})
		})
	}
}

type bubbleTB struct{ testing.TB }

func runModel(t *rapid.T, noGet, observe bool) {
	w := &world{now: time.Now}
	ctx, cancel := context.WithCancel(context.Background())
	stats := &runStats{stop: cancel}
	opts := statussync.DefaultEngineOptions()
	opts.Planner.NoGet, opts.Hooks = noGet, stats.hooks()
	w.setup(t, opts, observe)
	faults := statussynctest.Faults{
		ErrorRate:      rapid.Float64Range(0, 0.6).Draw(t, "errorRate"),
		ConflictRate:   rapid.Float64Range(0, 0.2).Draw(t, "conflictRate"),
		NotFoundRate:   rapid.Float64Range(0, 0.1).Draw(t, "notFoundRate"),
		LostAnswerRate: rapid.Float64Range(0, 0.3).Draw(t, "lostAnswerRate"),
		LateRate:       rapid.Float64Range(0, 0.2).Draw(t, "lateRate"),
		InterleaveRate: rapid.Float64Range(0, 0.2).Draw(t, "interleaveRate"),
	}
	w.api.SetFaults(faults)
	w.advance = func(d time.Duration) {
		from := stats.count()
		time.Sleep(d)
		synctest.Wait()
		stats.mu.Lock()
		err := stats.err
		stats.mu.Unlock()
		if err == nil {
			err = checkWakeUps(stats.since(from))
		}
		if err != nil {
			t.Fatalf("waiting %s: %v", d, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- w.engine.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != context.Canceled && err != nil {
			t.Fatalf("Run returned %v, want context.Canceled", err)
		}
	}()

	acts := w.actions(t)
	delete(acts, "fast pass") // Run makes the passes
	delete(acts, "full pass")
	for name, act := range acts {
		acts[name] = func(t *rapid.T) {
			act(t)
			synctest.Wait() // Run has made the passes this step called for
			if err := w.hist.Err(); err != nil {
				t.Fatal(err)
			}
			stats.mu.Lock()
			err := stats.err
			stats.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	acts[""] = func(t *rapid.T) {}
	t.Repeat(acts)

	w.api.SetFaults(statussynctest.Faults{})
	w.advance(3 * time.Minute) // past every back-off, with full passes
	if observe {
		w.converged(t) // a watch shows every drift
	}
	// Without a watch, drift of the kubelet's fields is invisible until the
	// kubelet has something new to say: say it for every pod.
	for i, pod := range w.pods {
		if _, cached := w.cache.GetPodStatus(pod.UID); !cached {
			continue
		}
		if w.done[i] {
			if err := w.cache.TerminatePod(pod, w.now()); err != nil {
				t.Fatal(err)
			}
			continue
		}
		s := w.nextStatus(t, i)
		s.Message = w.hist.Tag(pod.UID, w.cache.Version(pod.UID)+1)
		if _, changed, err := w.cache.SetPodStatus(pod, s, w.now()); err != nil {
			t.Fatal(err)
		} else if changed {
			w.hist.Cached(pod.UID, w.cache.Version(pod.UID), s.Message)
		}
	}
	w.advance(statussync.DefaultFullSyncPeriod)
	w.converged(t)
}
