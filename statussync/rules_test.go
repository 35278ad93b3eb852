package statussync

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/statussync/statussynctest"
)

// Rules of spec/statussync.md that the case tests (S1 to S52) do not pin
// down on their own, a table per rule.

// couldRun is a DeletionSafety that always says containers could run.
type couldRun struct{}

func (couldRun) PodCouldHaveRunningContainers(*v1.Pod) bool { return true }

func failedStatus() v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: []v1.ContainerStatus{named("app", termState(1))}}
}

// Section 5, canBeDeleted: a pod is deleted only when the server copy has
// a deletionTimestamp, is not a mirror pod, shows a terminal phase, and the
// cache has finished the pod; each row takes one condition away.
func TestCanBeDeletedRules(t *testing.T) {
	ts := metav1.NewTime(t0)
	tests := []struct {
		id, reason string
		deleting   bool // the server copy has a deletionTimestamp
		static     bool // a static pod, written to its mirror pod
		couldRun   bool // DeletionSafety says containers could still run
		finish     bool // TerminatePod was called
		want       map[string]int
		wantGone   bool
	}{
		{id: "5 canBeDeleted (S38)", reason: "finished, terminal and deleting: deleted with the status write",
			deleting: true, finish: true, want: map[string]int{"get": 1, "patch": 1, "delete": 1}, wantGone: true},
		{id: "5 canBeDeleted 1", reason: "a finished, Failed pod nobody asked to delete stays on the server",
			finish: true, want: map[string]int{"get": 1, "patch": 1}},
		{id: "5 canBeDeleted 2", reason: "a mirror pod is never deleted by the status manager, even finished, Failed and deleting",
			deleting: true, static: true, finish: true, want: map[string]int{"get": 1, "patch": 1}},
		{id: "5 canBeDeleted 3", reason: "the API phase decides: while containers could run the server keeps Running, so no delete",
			deleting: true, couldRun: true, finish: true, want: map[string]int{"get": 1, "patch": 1}},
		{id: "5 canBeDeleted 4 (S37)", reason: "a Failed, deleting pod the node has not finished is not deleted",
			deleting: true, want: map[string]int{"get": 1, "patch": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			opts := DefaultOptions()
			cached := testPod("u1", "p1")
			server := testPod("u1", "p1")
			if tt.static {
				opts.Mirrors = &fakeMirrors{static: "u1", mirror: "m1"}
				cached.Annotations = map[string]string{ConfigSourceAnnotation: "file"}
				server.UID = "m1"
				server.Annotations = map[string]string{ConfigSourceAnnotation: "file", ConfigMirrorAnnotation: "hash"}
			}
			if tt.deleting {
				server.DeletionTimestamp = &ts
				cached.DeletionTimestamp = &ts
			}
			server.Status = runningStatus("app")
			h := newHarness(t, opts, func(eo *EngineOptions) {
				if tt.couldRun {
					eo.Planner.DeletionSafety = couldRun{}
				}
			})
			h.create(server)
			h.set(cached, runningStatus("app")) // a later status does not finish the pod
			h.set(cached, failedStatus())
			if tt.finish {
				if err := h.cache.TerminatePod(cached, h.now()); err != nil {
					t.Fatal(err)
				}
			}
			var last map[string]int
			h.sync()
			wantRequests(t, tt.id+": "+tt.reason, h.requests(&last), tt.want)
			if _, ok := h.api.Pod("default", "p1"); ok == tt.wantGone {
				t.Errorf("%s: %s: on the server %v, want %v", tt.id, tt.reason, ok, !tt.wantGone)
			}
		})
	}
}

// Section 1.3 and 5: which pods are static and which are mirror pods, from
// their annotations.
func TestStaticAndMirrorPods(t *testing.T) {
	annotated := func(a map[string]string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: a}}
	}
	tests := []struct {
		id, reason           string
		pod                  *v1.Pod
		wantStatic, wantMirr bool
	}{
		{id: "1.3 nil", reason: "no pod is neither", pod: nil},
		{id: "1.3 api pod", reason: "a pod from the API server is neither", pod: annotated(map[string]string{ConfigSourceAnnotation: "api"})},
		{id: "1.3 plain", reason: "a pod without annotations is neither", pod: annotated(nil)},
		{id: "1.3 static", reason: "a pod from a file is static", pod: annotated(map[string]string{ConfigSourceAnnotation: "file"}), wantStatic: true},
		{id: "5 canBeDeleted 2 mirror", reason: "the config.mirror annotation makes a mirror pod, whatever its value",
			pod: annotated(map[string]string{ConfigSourceAnnotation: "file", ConfigMirrorAnnotation: ""}), wantStatic: true, wantMirr: true},
	}
	for _, tt := range tests {
		if got := IsStatic(tt.pod); got != tt.wantStatic {
			t.Errorf("%s: %s: IsStatic %v", tt.id, tt.reason, got)
		}
		if got := IsMirror(tt.pod); got != tt.wantMirr {
			t.Errorf("%s: %s: IsMirror %v", tt.id, tt.reason, got)
		}
	}
}

// Section 7, SetContainerStartup: only an equal, non-nil Started is no
// change; every other result is stored and makes a new version.
func TestSetContainerStartupRule(t *testing.T) {
	tests := []struct {
		id, reason  string
		before      *bool // Started of the cached container status
		started     bool
		wantChanged bool
	}{
		{id: "7 SetContainerStartup nil->false", reason: "a first startup result false is recorded", started: false, wantChanged: true},
		{id: "7 SetContainerStartup nil->true", reason: "a first startup result true is recorded", started: true, wantChanged: true},
		{id: "7 SetContainerStartup false->true", reason: "the startup probe succeeding is recorded", before: new(false), started: true, wantChanged: true},
		{id: "7 SetContainerStartup true->false", reason: "a restarted container's startup probe pending again is recorded", before: new(true), started: false, wantChanged: true},
		{id: "7 SetContainerStartup true->true", reason: "the same result again is no change", before: new(true), started: true},
		{id: "7 SetContainerStartup false->false", reason: "the same result again is no change", before: new(false), started: false},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		pod := testPod("u1", "p1", "app")
		s := runningStatus("app")
		s.ContainerStatuses[0].Started = tt.before
		h.set(pod, s)
		v := h.cache.Version(pod.UID)
		changed, err := h.cache.SetContainerStartup(pod.UID, "c://app", tt.started, h.now())
		if err != nil {
			t.Fatalf("%s: %v", tt.id, err)
		}
		got, _ := h.cache.GetPodStatus(pod.UID)
		st := got.ContainerStatuses[0].Started
		switch {
		case changed != tt.wantChanged:
			t.Errorf("%s: %s: changed %v, want %v", tt.id, tt.reason, changed, tt.wantChanged)
		case tt.wantChanged && h.cache.Version(pod.UID) != v+1:
			t.Errorf("%s: %s: version %d, want %d", tt.id, tt.reason, h.cache.Version(pod.UID), v+1)
		case st == nil || *st != tt.started:
			t.Errorf("%s: %s: cached Started %v, want %v", tt.id, tt.reason, st, tt.started)
		}
	}
}

// Section 7, RemoveOrphanedStatuses for one pod (Forget): the pod the API
// server no longer has is forgotten with its resize conditions, the others
// stay, and forgetting a pod the cache does not hold reports false.
func TestForgetRule(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	for _, uid := range []types.UID{"u1", "u2"} {
		h.set(testPod(uid, "p-"+string(uid)), runningStatus("app"))
		h.cache.SetResizePending(uid, ResizeReasonInfeasible, "", 1, h.now())
	}
	if !h.cache.Forget("u1") {
		t.Fatal("Forget of a cached pod reports false")
	}
	if _, ok := h.cache.GetPodStatus("u1"); ok || h.cache.IsResizeInfeasible("u1") || h.cache.Len() != 1 {
		t.Fatal("u1 or its resize condition is still cached")
	}
	if _, ok := h.cache.GetPodStatus("u2"); !ok || !h.cache.IsResizeInfeasible("u2") {
		t.Fatal("u2 was forgotten too")
	}
	if h.cache.Forget("u1") || h.cache.Forget("never") {
		t.Fatal("Forget of a pod the cache does not hold reports true")
	}
	var zero Cache
	if zero.Forget("u1") {
		t.Fatal("the zero Cache forgot something")
	}
}

// Section 7, RemoveOrphanedStatuses: every pod not kept is forgotten with
// its resize conditions, and the count says how many.
func TestRemoveOrphansRule(t *testing.T) {
	tests := []struct {
		id, reason string
		keep       map[types.UID]bool
		wantN      int
		wantLeft   []types.UID
	}{
		{id: "7 RemoveOrphanedStatuses all kept", reason: "nothing to forget", keep: map[types.UID]bool{"u1": true, "u2": true, "u3": true},
			wantLeft: []types.UID{"u1", "u2", "u3"}},
		{id: "7 RemoveOrphanedStatuses some", reason: "the pods the node no longer has are forgotten and counted",
			keep: map[types.UID]bool{"u2": true, "other": true}, wantN: 2, wantLeft: []types.UID{"u2"}},
		{id: "7 RemoveOrphanedStatuses none kept", reason: "a nil set forgets every pod", wantN: 3},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		for _, uid := range []types.UID{"u1", "u2", "u3"} {
			h.set(testPod(uid, "p-"+string(uid)), runningStatus("app"))
			h.cache.SetResizePending(uid, ResizeReasonInfeasible, "", 1, h.now())
		}
		if n := h.cache.RemoveOrphans(tt.keep); n != tt.wantN {
			t.Errorf("%s: %s: forgot %d, want %d", tt.id, tt.reason, n, tt.wantN)
		}
		if h.cache.Len() != len(tt.wantLeft) {
			t.Errorf("%s: %s: %d pods left, want %d", tt.id, tt.reason, h.cache.Len(), len(tt.wantLeft))
		}
		for _, uid := range tt.wantLeft {
			if _, ok := h.cache.GetPodStatus(uid); !ok || !h.cache.IsResizeInfeasible(uid) {
				t.Errorf("%s: %s: pod %s and its resize condition are kept", tt.id, tt.reason, uid)
			}
		}
		for _, uid := range []types.UID{"u1", "u2", "u3"} {
			if _, ok := h.cache.GetPodStatus(uid); !ok && h.cache.IsResizeInfeasible(uid) {
				t.Errorf("%s: %s: the resize condition of forgotten pod %s is forgotten too", tt.id, tt.reason, uid)
			}
		}
	}
}

// hookedAPI runs a function before it answers a GET: another goroutine of
// the node storing a status while a pass is in flight.
type hookedAPI struct {
	*statussynctest.API
	beforeGet func()
}

func (a *hookedAPI) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	if f := a.beforeGet; f != nil {
		a.beforeGet = nil
		f()
	}
	return a.API.GetPod(ctx, namespace, name)
}

// Sections 4 and 5: a pass works on the versions the cache held when it
// began. A version stored while it runs is the next pass's: the pass
// neither reports it synced (its latency is measured when it is written)
// nor forgets it with the version it drops.
func TestVersionStoredDuringPass(t *testing.T) {
	tests := []struct {
		id, reason string
		serverUID  types.UID // the UID of the pod the server has under the name
		wantSynced []uint64  // the versions Hooks.Synced reported, after two passes
		wantKept   bool      // the newer version is still cached after the first pass
	}{
		{id: "5 step 5 metric", reason: "each version written reports its own latency, the one stored during the pass included",
			serverUID: "u1", wantSynced: []uint64{1, 2}, wantKept: true},
		{id: "5 step 2 (S11)", reason: "dropping a recreated pod's entry keeps the status stored while the pass read the server",
			serverUID: "other", wantKept: true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			cache, err := NewCache(DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			clk := clocktesting.NewFakeClock(t0)
			api := &hookedAPI{API: statussynctest.NewAPI(1)}
			var synced []uint64
			eo := DefaultEngineOptions()
			eo.Clock = clk
			eo.Hooks.Synced = func(_ types.UID, v uint64, _ time.Duration) { synced = append(synced, v) }
			engine, err := NewEngine(eo, cache, api)
			if err != nil {
				t.Fatal(err)
			}
			pod := testPod("u1", "p1")
			server := testPod(tt.serverUID, "p1")
			if _, err := api.Create(server); err != nil {
				t.Fatal(err)
			}
			if _, _, err := cache.SetPodStatus(pod, runningStatus("app"), clk.Now()); err != nil {
				t.Fatal(err)
			}
			api.beforeGet = func() {
				clk.Step(time.Second)
				s := runningStatus("app")
				s.Conditions = []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue)}
				if _, _, err := cache.SetPodStatus(pod, s, clk.Now()); err != nil {
					t.Error(err)
				}
			}
			engine.SyncOnce(context.Background(), false)
			if _, ok := cache.GetPodStatus(pod.UID); ok != tt.wantKept || cache.Version(pod.UID) != 2 && tt.wantKept {
				t.Errorf("%s: %s: after the pass cached %v (version %d), want %v (version 2)", tt.id, tt.reason, ok, cache.Version(pod.UID), tt.wantKept)
			}
			clk.Step(time.Second)
			engine.SyncOnce(context.Background(), false)
			if d := cmp.Diff(tt.wantSynced, synced); d != "" {
				t.Errorf("%s: %s: versions reported synced (-want +got):\n%s", tt.id, tt.reason, d)
			}
		})
	}
}

// Engine.Observe's contract: a nil pod, or one without a UID, is ignored;
// it neither wakes the engine nor becomes the base of a patch.
func TestObserveIgnoresPodsWithoutIdentity(t *testing.T) {
	tests := []struct {
		id, reason string
		pod        *v1.Pod
		wantSignal bool
	}{
		{id: "Engine.Observe nil", reason: "a nil pod is ignored", pod: nil},
		{id: "Engine.Observe no UID", reason: "a pod without a UID names no API object: ignored", pod: testPod("", "p1")},
		{id: "Engine.Observe", reason: "a pod from the watch wakes the engine for a pass", pod: testPod("u1", "p1"), wantSignal: true},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		h.engine.Observe(tt.pod)
		select {
		case <-h.cache.Changed():
			if !tt.wantSignal {
				t.Errorf("%s: %s: the engine was woken", tt.id, tt.reason)
			}
		default:
			if tt.wantSignal {
				t.Errorf("%s: %s: the engine was not woken", tt.id, tt.reason)
			}
		}
		// Planner.Observe has the same contract.
		p, err := NewPlanner(DefaultPlannerOptions(), h.cache)
		if err != nil {
			t.Fatal(err)
		}
		p.Observe(tt.pod)
		p.Begin(h.now(), true)
		if req, ok := p.Next(); ok {
			t.Errorf("%s: %s: Planner.Observe of a pod nothing caches made the pass ask %v", tt.id, tt.reason, req)
		}
		p.End()
	}
}

// The per-pod retry back-off (nodestate's addition to spec section 10.4,
// PlannerOptions.RetryInitial and RetryMax): after each failed request the
// pod waits RetryInitial, doubled per failure in a row up to RetryMax; fast
// passes leave it alone while it waits and take it up as soon as the wait
// is over; a success starts the schedule again.
func TestRetryBackOff(t *testing.T) {
	tests := []struct {
		id, reason string
		failures   int             // GETs in a row that fail with 500
		want       []time.Duration // the wait after each failure
	}{
		{id: "back-off initial", reason: "one failure waits RetryInitial", failures: 1, want: waits(1)},
		{id: "back-off doubling", reason: "each failure in a row doubles the wait", failures: 4,
			want: waits(1, 2, 4, 8)},
		{id: "back-off cap", reason: "the wait stops growing at RetryMax", failures: 9,
			want: waits(1, 2, 4, 8, 16, 32, 60, 60, 60)},
	}
	for _, tt := range tests {
		api := statussynctest.NewAPI(1)
		cache, err := NewCache(DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlanner(DefaultPlannerOptions(), cache)
		if err != nil {
			t.Fatal(err)
		}
		pod := testPod("u1", "p1")
		if _, err := api.Create(pod); err != nil {
			t.Fatal(err)
		}
		if _, _, err := cache.SetPodStatus(pod, runningStatus("app"), t0); err != nil {
			t.Fatal(err)
		}
		for range tt.failures {
			api.FailNext("get", statussynctest.FaultError)
		}
		// pass makes a fast pass at now and returns the requests it made
		// and the last outcome.
		pass := func(now time.Time) (n int, out Outcome) {
			p.Begin(now, false)
			for {
				req, ok := p.Next()
				if !ok {
					break
				}
				n++
				if n > 10 {
					t.Fatalf("%s: a pass that does not end", tt.id)
				}
				var pod *v1.Pod
				var err error
				switch req.Verb {
				case VerbGet:
					pod, err = api.GetPod(context.Background(), req.Namespace, req.Name)
				case VerbPatch:
					pod, err = api.PatchPodStatus(context.Background(), req.Namespace, req.Name, req.Patch)
				}
				out = p.Done(now, pod, err)
			}
			p.End()
			return n, out
		}
		now := t0
		for i, wait := range tt.want {
			n, out := pass(now)
			if n != 1 || !out.Failed || !out.RetryAt.Equal(now.Add(wait)) {
				t.Fatalf("%s: %s: failure %d: %d requests, outcome %v; want one failed GET retried at +%v", tt.id, tt.reason, i+1, n, out, wait)
			}
			if next, ok := p.NextWake(now); !ok || !next.Equal(out.RetryAt) {
				t.Errorf("%s: %s: failure %d: NextWake (%v, %v), want the retry time", tt.id, tt.reason, i+1, next, ok)
			}
			if n, _ := pass(now.Add(wait - time.Millisecond)); n != 0 {
				t.Errorf("%s: %s: failure %d: a fast pass during the back-off made %d requests", tt.id, tt.reason, i+1, n)
			}
			now = now.Add(wait)
		}
		if n, out := pass(now); n != 2 || !out.Synced {
			t.Errorf("%s: %s: when the back-off ends: %d requests, outcome %v; want GET and PATCH, synced", tt.id, tt.reason, n, out)
		}
		if _, ok := p.NextWake(now); ok {
			t.Errorf("%s: %s: after the success nothing waits", tt.id, tt.reason)
		}
	}
}

func waits(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, s := range n {
		out[i] = time.Duration(s) * time.Second
	}
	return out
}

// defaultCache returns a cache with the default options.
func defaultCache(t testing.TB) *Cache {
	t.Helper()
	c, err := NewCache(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
