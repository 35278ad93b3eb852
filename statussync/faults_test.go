package statussync_test

// The cases of the fault-injection report on statussync (issue 17 of the
// project's tracker), each written as a short scripted sequence against the
// in-memory API without a watch unless it says otherwise.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

// scripted is a node driven one pass at a time on a fake clock, with no
// watch: the engine learns the server's copies only from its own requests.
type scripted struct {
	t      *testing.T
	api    *statussynctest.API
	hist   *statussynctest.History
	clock  *clocktesting.FakeClock
	cache  *statussync.Cache
	engine *statussync.Engine
}

func newScripted(t *testing.T, noGet bool) *scripted {
	t.Helper()
	s := &scripted{t: t, api: statussynctest.NewAPI(1), hist: statussynctest.NewHistory(), clock: clocktesting.NewFakeClock(epoch)}
	s.cache = newCache(t, statussync.DefaultOptions())
	opts := statussync.DefaultEngineOptions()
	opts.Clock, opts.Planner.NoGet = s.clock, noGet
	e, err := statussync.NewEngine(opts, s.cache, s.api)
	if err != nil {
		t.Fatal(err)
	}
	s.engine = e
	s.api.OnWrite(s.hist.Write)
	return s
}

// set caches status (tagged with its version) for pod.
func (s *scripted) set(pod *v1.Pod, status v1.PodStatus) {
	s.t.Helper()
	status.Message = s.hist.Tag(pod.UID, s.cache.Version(pod.UID)+1)
	if _, changed, err := s.cache.SetPodStatus(pod, status, s.clock.Now()); err != nil {
		s.t.Fatal(err)
	} else if changed {
		s.hist.Cached(pod.UID, s.cache.Version(pod.UID), status.Message)
	}
}

// setPlain caches status as it is, untagged, so that equal statuses of
// different versions stay equal.
func (s *scripted) setPlain(pod *v1.Pod, status v1.PodStatus) {
	s.t.Helper()
	if _, _, err := s.cache.SetPodStatus(pod, status, s.clock.Now()); err != nil {
		s.t.Fatal(err)
	}
}

func (s *scripted) fast() statussync.Result { return s.engine.SyncOnce(context.Background(), false) }

// full steps the clock past every back-off and makes a full pass.
func (s *scripted) full() statussync.Result {
	s.clock.Step(2 * time.Minute)
	return s.engine.SyncOnce(context.Background(), true)
}

func (s *scripted) server(name string) *v1.Pod {
	s.t.Helper()
	p, ok := s.api.Pod("ns", name)
	if !ok {
		s.t.Fatalf("pod %s is not on the server", name)
	}
	return p
}

func scriptedPod(name string, policy v1.RestartPolicy) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Generation: 1},
		Spec: v1.PodSpec{RestartPolicy: policy, Containers: []v1.Container{{Name: "app"}}}}
}

func readyStatus(ready bool) v1.PodStatus {
	r := v1.ConditionFalse
	if ready {
		r = v1.ConditionTrue
	}
	return v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue}, {Type: v1.PodReady, Status: r}, {Type: v1.ContainersReady, Status: r}},
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", ContainerID: "c://app", Ready: ready,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(epoch)}}}}}
}

func condStatus(p *v1.Pod, t v1.PodConditionType) v1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// Issue 17, point 1: once the back-off of a pod that fast passes skip (the
// server answered 404) is over, Run must not wake up again and again until
// the next full pass. The clock is the real one inside a synctest bubble,
// where a zero-length timer fires at once, as on a real node.
func TestRunDoesNotSpinAfterBackOff(t *testing.T) {
	for _, noGet := range []bool{false, true} {
		t.Run(fmt.Sprintf("noGet=%v", noGet), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := statussynctest.NewAPI(1)
				cache := newCache(t, statussync.DefaultOptions())
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var passes atomic.Int64
				opts := statussync.DefaultEngineOptions()
				opts.Planner.NoGet = noGet
				opts.Hooks.Pass = func(bool, statussync.Result) {
					if passes.Add(1) > 1000 {
						cancel() // spinning: stop it so that time can move on
					}
				}
				engine, err := statussync.NewEngine(opts, cache, api)
				if err != nil {
					t.Fatal(err)
				}
				// Not on the server: the GET is a 404.
				if _, _, err := cache.SetPodStatus(scriptedPod("ghost", v1.RestartPolicyAlways), readyStatus(true), time.Now()); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- engine.Run(ctx) }()
				time.Sleep(5 * time.Second) // half a full period: back-off ends at 1 s
				cancel()
				<-done
				// One pass for the change; a wake-up when the back-off ends is
				// allowed, nothing more.
				if n := passes.Load(); n > 2 {
					t.Errorf("Run made %d passes in 5 s for one pod the server does not have (requests %v), want at most 2", n, api.Requests())
				}
			})
		})
	}
}

// Issue 17, point 2: NoGet without a watch deletes a finished pod that got
// its deletionTimestamp after the engine's last write, as the default mode
// does.
func TestNoGetDeletesFinishedPodWithoutWatch(t *testing.T) {
	for _, noGet := range []bool{false, true} {
		t.Run(fmt.Sprintf("noGet=%v", noGet), func(t *testing.T) {
			s := newScripted(t, noGet)
			pod, _ := s.api.Create(scriptedPod("job", v1.RestartPolicyNever))
			done := v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: []v1.ContainerStatus{{Name: "app", ContainerID: "c://app",
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}}}
			s.set(pod, done)
			s.fast()
			now := metav1.NewTime(s.clock.Now())
			if err := s.api.Update("ns", "job", func(p *v1.Pod) { p.DeletionTimestamp = &now }); err != nil {
				t.Fatal(err)
			}
			pod.DeletionTimestamp = &now
			if err := s.cache.TerminatePod(pod, s.clock.Now()); err != nil {
				t.Fatal(err)
			}
			s.fast()
			s.full()
			if _, ok := s.api.Pod("ns", "job"); ok {
				t.Errorf("the finished, terminal and deleting pod is still on the server (requests %v)", s.api.Requests())
			}
		})
	}
}

// Issue 17, point 3: NoGet without a watch repairs a write whose answer was
// lost: version 3 was stored, version 4 equals version 2, and the server
// must end up with version 4.
func TestNoGetRepairsLostAnswer(t *testing.T) {
	for _, noGet := range []bool{false, true} {
		t.Run(fmt.Sprintf("noGet=%v", noGet), func(t *testing.T) {
			s := newScripted(t, noGet)
			pod, _ := s.api.Create(scriptedPod("web", v1.RestartPolicyAlways))
			s.setPlain(pod, readyStatus(false))
			s.fast()
			s.setPlain(pod, readyStatus(true))
			s.fast()
			s.api.FailNext("patch", statussynctest.FaultLostAnswer)
			s.setPlain(pod, readyStatus(false))
			s.fast()
			if got := condStatus(s.server("web"), v1.PodReady); got != v1.ConditionFalse {
				t.Fatalf("the lost-answer write was not stored: Ready=%s", got)
			}
			s.setPlain(pod, readyStatus(true))
			s.fast()
			s.full()
			if got := condStatus(s.server("web"), v1.PodReady); got != v1.ConditionTrue {
				t.Errorf("the server keeps the write whose answer was lost: Ready=%s, cache Ready=True (requests %v)", got, s.api.Requests())
			}
			if err := s.hist.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}

// Issue 17, point 4: a terminal phase another writer set (pod garbage
// collection failing a pod) is never written back to the cache's
// non-terminal one, by a new version or by a full pass.
func TestForeignTerminalPhaseKept(t *testing.T) {
	for _, noGet := range []bool{false, true} {
		t.Run(fmt.Sprintf("noGet=%v", noGet), func(t *testing.T) {
			s := newScripted(t, noGet)
			pod, _ := s.api.Create(scriptedPod("web", v1.RestartPolicyAlways))
			s.set(pod, readyStatus(true))
			s.fast()
			if err := s.api.Update("ns", "web", func(p *v1.Pod) {
				p.Status.Phase, p.Status.Reason, p.Status.Message = v1.PodFailed, "NodeLost", "pod garbage collection"
			}); err != nil {
				t.Fatal(err)
			}
			s.set(pod, readyStatus(false))
			s.fast()
			s.full()
			if err := s.hist.Err(); err != nil {
				t.Error(err)
			}
			if p := s.server("web"); p.Status.Phase != v1.PodFailed {
				t.Errorf("the foreign Failed phase was replaced by %s", p.Status.Phase)
			}
		})
	}
}

// Issue 17, point 5: another writer flips a kubelet-owned condition between
// the engine's GET and its PATCH; the PATCH answer shows it, and the next
// full pass repairs it without a watch.
func TestDriftInPatchAnswerRepaired(t *testing.T) {
	for _, noGet := range []bool{false, true} {
		t.Run(fmt.Sprintf("noGet=%v", noGet), func(t *testing.T) {
			s := newScripted(t, noGet)
			pod, _ := s.api.Create(scriptedPod("web", v1.RestartPolicyAlways))
			s.set(pod, readyStatus(false))
			s.fast()
			s.api.BeforeNextPatch(func(p *v1.Pod) {
				for i := range p.Status.Conditions {
					if p.Status.Conditions[i].Type == v1.PodScheduled {
						p.Status.Conditions[i].Status = v1.ConditionFalse
					}
				}
			})
			s.set(pod, readyStatus(true))
			s.fast()
			s.full()
			if got := condStatus(s.server("web"), v1.PodScheduled); got != v1.ConditionTrue {
				t.Errorf("the drift seen in the PATCH answer is not repaired: PodScheduled=%s (requests %v)", got, s.api.Requests())
			}
		})
	}
}

// Issue 17, point 6: a PATCH that timed out and is stored after the engine's
// next PATCH must not overwrite the newer status: every patch carries the
// resourceVersion of the copy it was computed against, so the late one is
// refused.
func TestLateWriteDoesNotOverwriteNewer(t *testing.T) {
	for _, noGet := range []bool{false, true} {
		t.Run(fmt.Sprintf("noGet=%v", noGet), func(t *testing.T) {
			s := newScripted(t, noGet)
			pod, _ := s.api.Create(scriptedPod("web", v1.RestartPolicyAlways))
			s.set(pod, readyStatus(true))
			s.fast()
			s.api.FailNext("patch", statussynctest.FaultLate)
			s.set(pod, readyStatus(false)) // version 2: times out, stored later
			s.fast()
			s.clock.Step(2 * time.Minute)
			s.set(pod, readyStatus(true)) // version 3
			s.fast()
			if s.api.Pending() != 0 {
				t.Fatal("the late write is still pending")
			}
			if err := s.hist.Err(); err != nil {
				t.Error(err)
			}
			if got := condStatus(s.server("web"), v1.PodReady); got != v1.ConditionTrue {
				t.Errorf("the late write of version 2 overwrote version 3: Ready=%s", got)
			}
		})
	}
}

func newCache(tb interface{ Fatal(...any) }, o statussync.Options) *statussync.Cache {
	c, err := statussync.NewCache(o)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// quietPasses runs an engine with pods in back-off that only full passes
// retry (one the server does not have, a finished pod whose DELETE keeps
// failing) for wait after the first passes, and returns the fast passes it
// made while waiting.
func quietPasses(t *testing.T, wait time.Duration) (fast int64) {
	synctest.Test(t, func(t *testing.T) {
		api := statussynctest.NewAPI(1)
		cache := newCache(t, statussync.DefaultOptions())
		var passes atomic.Int64
		ctx, cancel := context.WithCancel(context.Background())
		opts := statussync.DefaultEngineOptions()
		opts.Hooks.Pass = func(full bool, _ statussync.Result) {
			if !full && passes.Add(1) > 10000 {
				cancel() // spinning: stop it so that time can move on
			}
		}
		engine, err := statussync.NewEngine(opts, cache, api)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := cache.SetPodStatus(scriptedPod("ghost", v1.RestartPolicyAlways), readyStatus(true), time.Now()); err != nil {
			t.Fatal(err)
		}
		now := metav1.NewTime(time.Now())
		job := scriptedPod("job", v1.RestartPolicyNever)
		job.DeletionTimestamp = &now
		if job, err = api.Create(job); err != nil {
			t.Fatal(err)
		}
		for range 1000 {
			api.FailNext("delete", statussynctest.FaultError)
		}
		if err := cache.TerminatePod(job, time.Now()); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- engine.Run(ctx) }()
		time.Sleep(time.Second)
		synctest.Wait()
		before := passes.Load()
		time.Sleep(wait)
		synctest.Wait()
		fast = passes.Load() - before
		cancel()
		<-done
		if req := api.Requests(); req["delete"] < int(wait/statussync.DefaultFullSyncPeriod)-1 {
			t.Errorf("the full passes retry the deletion: %v", req)
		}
	})
	return fast
}

// TestRunQuietPassesDoNotGrow: with pods in back-off that only full passes
// retry, the fast passes Run makes over a quiet period do not grow with
// the time spent waiting (issue 17, what to build, item 3).
func TestRunQuietPassesDoNotGrow(t *testing.T) {
	minute, hour := quietPasses(t, time.Minute), quietPasses(t, time.Hour)
	t.Logf("fast passes while waiting: %d in a minute, %d in an hour", minute, hour)
	if minute != hour || hour > 1 {
		t.Errorf("fast passes while waiting: %d in a minute, %d in an hour; want the same, at most 1", minute, hour)
	}
}
