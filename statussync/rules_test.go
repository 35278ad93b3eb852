package statussync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/internal/podcond"
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

// Section 7 SetPodStatus and section 6 step 5: the status's
// observedGeneration is the pod's generation, and it never goes down.
func TestObservedGenerationRule(t *testing.T) {
	tests := []struct {
		id, reason  string
		generations []int64 // the pod's generation at each SetPodStatus of the same status
		want        int64
		wantVersion uint64
	}{
		{id: "7 SetPodStatus observedGeneration", reason: "the first status observes the pod's generation", generations: []int64{3}, want: 3, wantVersion: 1},
		{id: "6.1 observedGeneration compared", reason: "a new generation is a new version even with the same status", generations: []int64{1, 2}, want: 2, wantVersion: 2},
		{id: "6 step 5 monotonic", reason: "an older generation (a stale pod object) does not take it back", generations: []int64{2, 1}, want: 2, wantVersion: 1},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		for _, g := range tt.generations {
			pod := testPod("u1", "p1")
			pod.Generation = g
			h.set(pod, runningStatus("app"))
		}
		s, _ := h.cache.GetPodStatus("u1")
		if s.ObservedGeneration != tt.want || h.cache.Version("u1") != tt.wantVersion {
			t.Errorf("%s: %s: observedGeneration %d version %d, want %d version %d", tt.id, tt.reason, s.ObservedGeneration, h.cache.Version("u1"), tt.want, tt.wantVersion)
		}
	}
}

// Section 6 step 6 (normalizeStatus), through the exported Normalize:
// container and ephemeral container statuses sorted by name, init
// container statuses put in spec order, whatever order they came in.
func TestNormalizeOrderRule(t *testing.T) {
	spec := &v1.PodSpec{
		InitContainers:      []v1.Container{{Name: "i0"}, {Name: "i1"}, {Name: "i2"}},
		Containers:          []v1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}},
		EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug-x"}}, {EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug-y"}}},
	}
	// A name "a#1" is container a's status with container ID 1: two
	// statuses of one name that the test tells apart.
	names := func(list []v1.ContainerStatus) []string {
		var out []string
		for _, cs := range list {
			n := cs.Name
			if cs.ContainerID != "" {
				n += "#" + cs.ContainerID
			}
			out = append(out, n)
		}
		return out
	}
	statuses := func(n ...string) []v1.ContainerStatus {
		var out []v1.ContainerStatus
		for _, s := range n {
			name, id, _ := strings.Cut(s, "#")
			out = append(out, v1.ContainerStatus{Name: name, ContainerID: id})
		}
		return out
	}
	tests := []struct {
		id, reason                 string
		spec                       *v1.PodSpec
		init, regular, ephemeral   []string
		wantInit, wantReg, wantEph []string
		dropUnknown                bool // compare the statuses of the spec's init containers only
	}{
		{id: "6 step 6 init spec order", reason: "init container statuses out of spec order are put in spec order",
			spec: spec, init: []string{"i2", "i0", "i1"}, wantInit: []string{"i0", "i1", "i2"}},
		{id: "6 step 6 init two swapped", reason: "the second init container reported before the first is put after it",
			spec: spec, init: []string{"i1", "i0"}, wantInit: []string{"i0", "i1"}},
		{id: "6 step 6 init subset", reason: "statuses of some init containers only, in spec order, stay as they are",
			spec: spec, init: []string{"i1", "i2"}, wantInit: []string{"i1", "i2"}},
		{id: "6 step 6 init nil spec", reason: "without a spec the init container statuses keep their order",
			init: []string{"i2", "i0"}, wantInit: []string{"i2", "i0"}},
		{id: "6 step 6 sorted by name", reason: "container statuses are sorted by name",
			spec: spec, regular: []string{"c", "a", "b"}, wantReg: []string{"a", "b", "c"}},
		{id: "6 step 6 ephemeral sorted by name", reason: "ephemeral container statuses are sorted by name",
			spec: spec, ephemeral: []string{"debug-y", "debug-x"}, wantEph: []string{"debug-x", "debug-y"}},
		{id: "6 step 6 init unknown first", reason: "a status the spec has no init container for does not keep the others out of spec order",
			spec: spec, init: []string{"ghost", "i1", "i0"}, wantInit: []string{"i0", "i1"}, dropUnknown: true},
		{id: "6 step 6 init unknown behind", reason: "as the kubelet's SortInitContainerStatuses swaps them, statuses of names the spec lacks end up behind the known ones",
			spec: spec, init: []string{"ghost", "i1", "i0"}, wantInit: []string{"i0", "i1", "ghost"}},
		{id: "6 step 6 init unknown swapped", reason: "the swaps leave unknown statuses in the order they make: i0 swapped with the first of two unknown ones puts that one last",
			spec: spec, init: []string{"g1", "g2", "i0"}, wantInit: []string{"i0", "g2", "g1"}},
		{id: "6 step 6 init same name", reason: "of two init container statuses of one name, the kubelet's SortInitContainerStatuses moves only the first into its spec place; the second stays behind",
			spec: spec, init: []string{"i1", "i0#1", "i0#2"}, wantInit: []string{"i0#1", "i1", "i0#2"}},
		{id: "6 step 6 same name", reason: "container statuses of the same name keep their order, as the kubelet's sort leaves them",
			spec: spec, regular: []string{"b", "a#1", "a#2"}, wantReg: []string{"a#1", "a#2", "b"}},
	}
	for _, tt := range tests {
		s := &v1.PodStatus{InitContainerStatuses: statuses(tt.init...), ContainerStatuses: statuses(tt.regular...), EphemeralContainerStatuses: statuses(tt.ephemeral...)}
		Normalize(tt.spec, s)
		if tt.dropUnknown {
			s.InitContainerStatuses = slices.DeleteFunc(s.InitContainerStatuses, func(cs v1.ContainerStatus) bool { return !hasContainer(spec.InitContainers, cs.Name) })
		}
		for _, c := range []struct {
			what      string
			got, want []string
		}{{"init", names(s.InitContainerStatuses), tt.wantInit}, {"regular", names(s.ContainerStatuses), tt.wantReg}, {"ephemeral", names(s.EphemeralContainerStatuses), tt.wantEph}} {
			if d := cmp.Diff(c.want, c.got); d != "" {
				t.Errorf("%s: %s: %s container statuses (-want +got):\n%s", tt.id, tt.reason, c.what, d)
			}
		}
	}
}

// Section 6 step 4: startTime is copied from the old status when that one
// is set and not zero; otherwise the new status's own is kept, and a
// missing or zero one becomes now.
func TestStartTimeRule(t *testing.T) {
	earlier := metav1.NewTime(t0.Add(-time.Minute))
	own := metav1.NewTime(t0.Add(-30 * time.Second))
	zero := metav1.Time{}
	now := t0.Add(time.Hour)
	tests := []struct {
		id, reason string
		podStart   *metav1.Time // the pod's status, the old status when nothing is cached
		newStart   *metav1.Time
		want       time.Time
	}{
		{id: "6 step 4 old kept", reason: "a set old startTime wins over the new status's", podStart: &earlier, newStart: &own, want: earlier.Time},
		{id: "6 step 4 new kept", reason: "without an old startTime the new status's own is kept", newStart: &own, want: own.Time},
		{id: "6 step 4 none", reason: "no startTime anywhere: now", want: now},
		{id: "6 step 4 old zero", reason: "an old startTime that is set but zero counts as none: the new one is kept", podStart: &zero, newStart: &own, want: own.Time},
		{id: "6 step 4 old zero, new none", reason: "an old zero startTime is not copied: now", podStart: &zero, want: now},
		{id: "6 step 4 new zero", reason: "a new startTime that is set but zero becomes now", newStart: &zero, want: now},
	}
	for _, tt := range tests {
		c := defaultCache(t)
		pod := testPod("u1", "p1")
		pod.Status.StartTime = tt.podStart
		s := runningStatus("app")
		s.StartTime = tt.newStart
		got, _, err := c.SetPodStatus(pod, s, now)
		if err != nil {
			t.Fatalf("%s: %v", tt.id, err)
		}
		if got.StartTime == nil || !got.StartTime.Time.Equal(tt.want) {
			t.Errorf("%s: %s: startTime %v, want %v", tt.id, tt.reason, got.StartTime, tt.want)
		}
	}
}

// Section 6 step 4, VolumeHealth: a new status without volume health keeps
// the old status's entries (they are set on their own path); a new status
// with entries replaces them.
func TestVolumeHealthRule(t *testing.T) {
	healthy := []v1.PodVolumeHealth{{Name: "data"}}
	other := []v1.PodVolumeHealth{{Name: "logs"}}
	tests := []struct {
		id, reason    string
		first, second []v1.PodVolumeHealth
		want          []v1.PodVolumeHealth
	}{
		{id: "6 step 4 volumeHealth kept", reason: "a status without volume health keeps the cached entries", first: healthy, want: healthy},
		{id: "6 step 4 volumeHealth replaced", reason: "a status with its own volume health replaces the cached entries", first: healthy, second: other, want: other},
		{id: "6 step 4 volumeHealth first", reason: "volume health on a pod that had none is stored", second: other, want: other},
		{id: "6 step 4 volumeHealth none", reason: "no volume health on either side stays none"},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		pod := testPod("u1", "p1")
		s := runningStatus("app")
		s.VolumeHealth = tt.first
		h.set(pod, s)
		s = runningStatus("app")
		s.Message = "second"
		s.VolumeHealth = tt.second
		h.set(pod, s)
		got, _ := h.cache.GetPodStatus(pod.UID)
		if d := cmp.Diff(tt.want, got.VolumeHealth); d != "" {
			t.Errorf("%s: %s: volumeHealth (-want +got):\n%s", tt.id, tt.reason, d)
		}
	}
}

// SetPodStatus's contract: a status for a container the spec lacks is
// refused; the check covers every container kind, ephemeral containers
// included.
func TestUnknownContainerRule(t *testing.T) {
	debug := v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug"}}
	tests := []struct {
		id, reason string
		ephemeral  []v1.EphemeralContainer
		status     string // the ephemeral container status's name
		wantErr    bool
	}{
		{id: "SetPodStatus ephemeral known", reason: "a status of the spec's ephemeral container is accepted",
			ephemeral: []v1.EphemeralContainer{debug}, status: "debug"},
		{id: "SetPodStatus ephemeral second", reason: "a status of the spec's second ephemeral container is accepted",
			ephemeral: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "first"}}, debug}, status: "debug"},
		{id: "SetPodStatus ephemeral unknown", reason: "a status of an ephemeral container the spec lacks is refused",
			ephemeral: []v1.EphemeralContainer{debug}, status: "ghost", wantErr: true},
	}
	for _, tt := range tests {
		c := defaultCache(t)
		pod := testPod("u1", "p1")
		pod.Spec.EphemeralContainers = tt.ephemeral
		s := runningStatus("app")
		s.EphemeralContainerStatuses = []v1.ContainerStatus{{Name: tt.status, State: runningState()}}
		_, _, err := c.SetPodStatus(pod, s, t0)
		if gotErr := errors.Is(err, ErrUnknownContainer); gotErr != tt.wantErr {
			t.Errorf("%s: %s: error %v", tt.id, tt.reason, err)
		}
		if cached := c.Len() == 1; cached == tt.wantErr {
			t.Errorf("%s: %s: cached %v", tt.id, tt.reason, cached)
		}
	}
}

// Section 11, BackfillPodResizeConditions: every pod of the list has its
// resize conditions rebuilt; a nil entry is skipped, not the end of the
// list.
func TestBackfillResizeRule(t *testing.T) {
	pending := v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: ResizeReasonDeferred}
	inProgress := v1.PodCondition{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, ObservedGeneration: 4}
	pod := func(uid types.UID, conds ...v1.PodCondition) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: v1.PodStatus{Conditions: conds}}
	}
	tests := []struct {
		id, reason string
		pods       []*v1.Pod
		want       map[types.UID][]v1.PodCondition
	}{
		{id: "11 Backfill", reason: "both conditions come back, pending first",
			pods: []*v1.Pod{pod("u1", inProgress, cond(v1.PodReady, v1.ConditionTrue), pending)},
			want: map[types.UID][]v1.PodCondition{"u1": {pending, inProgress}}},
		{id: "11 Backfill nil", reason: "a nil pod in the list is skipped and the pods after it are backfilled",
			pods: []*v1.Pod{pod("u1", pending), nil, pod("u2", inProgress)},
			want: map[types.UID][]v1.PodCondition{"u1": {pending}, "u2": {inProgress}}},
		{id: "11 Backfill none", reason: "a pod without resize conditions gets none",
			pods: []*v1.Pod{pod("u1", cond(v1.PodReady, v1.ConditionTrue))},
			want: map[types.UID][]v1.PodCondition{"u1": nil}},
	}
	for _, tt := range tests {
		c := defaultCache(t)
		c.BackfillResizeConditions(tt.pods)
		for uid, want := range tt.want {
			if d := cmp.Diff(want, c.ResizeConditions(uid)); d != "" {
				t.Errorf("%s: %s: pod %s (-want +got):\n%s", tt.id, tt.reason, uid, d)
			}
		}
	}
}

// PlannerOptions' and EngineOptions' contract: zero periods are refused,
// not defaulted, and RetryMax must be at least RetryInitial.
func TestOptionsValidationRule(t *testing.T) {
	tests := []struct {
		id, reason string
		change     func(*EngineOptions)
		wantField  string // "" when accepted
	}{
		{id: "PlannerOptions defaults", reason: "the defaults are valid", change: func(*EngineOptions) {}},
		{id: "PlannerOptions RetryInitial zero", reason: "a zero RetryInitial is refused", change: func(o *EngineOptions) { o.Planner.RetryInitial = 0 },
			wantField: "Planner.RetryInitial"},
		{id: "PlannerOptions RetryInitial negative", reason: "a negative RetryInitial is refused", change: func(o *EngineOptions) { o.Planner.RetryInitial = -time.Second },
			wantField: "Planner.RetryInitial"},
		{id: "PlannerOptions RetryMax below", reason: "a RetryMax below RetryInitial is refused", change: func(o *EngineOptions) { o.Planner.RetryMax = o.Planner.RetryInitial - 1 },
			wantField: "Planner.RetryMax"},
		{id: "PlannerOptions RetryMax equal", reason: "a RetryMax equal to RetryInitial (no doubling) is accepted", change: func(o *EngineOptions) { o.Planner.RetryMax = o.Planner.RetryInitial }},
		{id: "EngineOptions FullSyncPeriod zero", reason: "a zero FullSyncPeriod is refused", change: func(o *EngineOptions) { o.FullSyncPeriod = 0 },
			wantField: "FullSyncPeriod"},
		{id: "EngineOptions FullSyncPeriod tiny", reason: "any positive FullSyncPeriod is accepted", change: func(o *EngineOptions) { o.FullSyncPeriod = time.Nanosecond }},
	}
	for _, tt := range tests {
		c := defaultCache(t)
		eo := DefaultEngineOptions()
		tt.change(&eo)
		_, err := NewEngine(eo, c, statussynctest.NewAPI(1))
		_, perr := NewPlanner(eo.Planner, c)
		var oe *OptionError
		switch {
		case tt.wantField == "" && (err != nil || perr != nil):
			t.Errorf("%s: %s: NewEngine: %v, NewPlanner: %v", tt.id, tt.reason, err, perr)
		case tt.wantField != "" && (!errors.As(err, &oe) || oe.Field != tt.wantField || !errors.Is(err, ErrInvalidOptions)):
			t.Errorf("%s: %s: NewEngine: %v, want an *OptionError for %s", tt.id, tt.reason, err, tt.wantField)
		case tt.wantField != "" && tt.wantField != "FullSyncPeriod" && !errors.Is(perr, ErrInvalidOptions):
			t.Errorf("%s: %s: NewPlanner: %v, want it refused", tt.id, tt.reason, perr)
		}
	}
}

// Section 6.1, isPodStatusByKubeletEqual: owned and shared conditions are
// compared by type, status, reason and message; their times and
// observedGeneration, conditions others own and the claim statuses are not.
func TestEqualByKubeletRule(t *testing.T) {
	o := DefaultOptions()
	base := func(c ...v1.PodCondition) *v1.PodStatus {
		s := runningStatus("app")
		s.Conditions = c
		return &s
	}
	ready := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]"}
	with := func(change func(*v1.PodCondition)) v1.PodCondition {
		c := ready
		change(&c)
		return c
	}
	dt := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "TerminationByKubelet"}
	tests := []struct {
		id, reason string
		old, new   *v1.PodStatus
		want       bool
	}{
		{id: "6.1 same", reason: "the same status is equal", old: base(ready), new: base(ready), want: true},
		{id: "6.1 status", reason: "an owned condition whose status changed differs", old: base(ready), new: base(with(func(c *v1.PodCondition) { c.Status = v1.ConditionTrue })), want: false},
		{id: "6.1 reason", reason: "an owned condition whose reason alone changed differs", old: base(ready), new: base(with(func(c *v1.PodCondition) { c.Reason = "PodCompleted" })), want: false},
		{id: "6.1 message", reason: "an owned condition whose message alone changed differs", old: base(ready), new: base(with(func(c *v1.PodCondition) { c.Message = "other" })), want: false},
		{id: "6.1 times", reason: "the probe and transition times are ignored",
			old: base(ready), new: base(with(func(c *v1.PodCondition) {
				c.LastProbeTime, c.LastTransitionTime = metav1.NewTime(t0), metav1.NewTime(t0)
			})), want: true},
		{id: "6.1 condition observedGeneration", reason: "a condition's observedGeneration is ignored", old: base(ready), new: base(with(func(c *v1.PodCondition) { c.ObservedGeneration = 7 })), want: true},
		{id: "6.1 shared", reason: "DisruptionTarget, shared, is compared", old: base(ready), new: base(ready, dt), want: false},
		{id: "6.1 not owned", reason: "a condition others own is ignored", old: base(ready), new: base(ready, cond("example.com/gate", v1.ConditionTrue)), want: true},
		{id: "6.1 claims", reason: "resource claim statuses are ignored", old: base(ready),
			new: func() *v1.PodStatus {
				s := base(ready)
				s.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu"}}
				return s
			}(), want: true},
		{id: "6.1 phase", reason: "every other field is compared", old: base(ready),
			new: func() *v1.PodStatus { s := base(ready); s.Phase = v1.PodSucceeded; return s }(), want: false},
		{id: "6.1 nil", reason: "a nil status is an empty one", old: nil, new: &v1.PodStatus{}, want: true},
	}
	for _, tt := range tests {
		if got := o.EqualByKubelet(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: %s: EqualByKubelet %v, want %v", tt.id, tt.reason, got, tt.want)
		}
		if got := o.EqualByKubelet(tt.new, tt.old); got != tt.want {
			t.Errorf("%s: %s: EqualByKubelet with the sides swapped %v, want %v", tt.id, tt.reason, got, tt.want)
		}
	}
}

// Section 8 step 1, the shared DisruptionTarget: the kubelet's copy is
// written only on the move into a terminal phase with nothing left
// running, and then keeps the API's lastTransitionTime when the API
// already has the same status.
func TestDisruptionTargetMergeRule(t *testing.T) {
	o := DefaultOptions()
	apiTime, kubeletTime := metav1.NewTime(t0), metav1.NewTime(t0.Add(time.Minute))
	dt := func(s v1.ConditionStatus, reason string, at metav1.Time) v1.PodCondition {
		return v1.PodCondition{Type: v1.DisruptionTarget, Status: s, Reason: reason, LastTransitionTime: at}
	}
	tests := []struct {
		id, reason string
		apiPhase   v1.PodPhase
		apiDT      []v1.PodCondition
		kubePhase  v1.PodPhase
		kubeDT     v1.PodCondition
		couldRun   bool
		want       *v1.PodCondition // nil: no DisruptionTarget
	}{
		{id: "8.1 DT not terminal", reason: "a pod that stays Running does not get the kubelet's DisruptionTarget, even with nothing running",
			apiPhase: v1.PodRunning, kubePhase: v1.PodRunning, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime)},
		{id: "8.1 DT not terminal, API's kept", reason: "the API's DisruptionTarget stays while the pod is not terminal",
			apiPhase: v1.PodRunning, apiDT: []v1.PodCondition{dt(v1.ConditionTrue, "EvictedByEvictionAPI", apiTime)},
			kubePhase: v1.PodRunning, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime),
			want: new(dt(v1.ConditionTrue, "EvictedByEvictionAPI", apiTime))},
		{id: "8.1 DT could run", reason: "a pod going Failed while containers could run does not get it yet",
			apiPhase: v1.PodRunning, kubePhase: v1.PodFailed, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime), couldRun: true},
		{id: "8.1 DT already terminal", reason: "a pod the API has terminal already is not transitioning: the kubelet's DisruptionTarget is not written",
			apiPhase: v1.PodFailed, kubePhase: v1.PodFailed, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime)},
		{id: "8.1 DT written", reason: "going Failed with nothing running writes it with the kubelet's time",
			apiPhase: v1.PodRunning, kubePhase: v1.PodFailed, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime),
			want: new(dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime))},
		{id: "8.1 DT same status", reason: "over an API DisruptionTarget of the same status, the API's lastTransitionTime is kept",
			apiPhase: v1.PodRunning, apiDT: []v1.PodCondition{dt(v1.ConditionTrue, "EvictedByEvictionAPI", apiTime)},
			kubePhase: v1.PodFailed, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime),
			want: new(dt(v1.ConditionTrue, "TerminationByKubelet", apiTime))},
		{id: "8.1 DT other status", reason: "over an API DisruptionTarget of another status, the kubelet's lastTransitionTime is written",
			apiPhase: v1.PodRunning, apiDT: []v1.PodCondition{dt(v1.ConditionFalse, "", apiTime)},
			kubePhase: v1.PodFailed, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime),
			want: new(dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime))},
	}
	for _, tt := range tests {
		api := v1.PodStatus{Phase: tt.apiPhase, Conditions: tt.apiDT}
		kube := v1.PodStatus{Phase: tt.kubePhase, Conditions: []v1.PodCondition{tt.kubeDT}}
		got := podcond.Find(o.Merge(&api, &kube, tt.couldRun).Conditions, v1.DisruptionTarget)
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: %s: DisruptionTarget (-want +got):\n%s", tt.id, tt.reason, d)
		}
	}
}

// Section 6 step 6: each terminated message is cut to 12 KiB divided by
// the number of containers of every kind in the spec (regular, init and
// ephemeral); a message of exactly that length is kept whole.
func TestNormalizeMessageLimitRule(t *testing.T) {
	containers := func(n ...string) []v1.Container {
		var out []v1.Container
		for _, s := range n {
			out = append(out, v1.Container{Name: s})
		}
		return out
	}
	debug := []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "d0"}}, {EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "d1"}}}
	tests := []struct {
		id, reason string
		spec       *v1.PodSpec
		msg        int // the message's length
		want       int
	}{
		{id: "6 step 6 every kind", reason: "two regular, two init and two ephemeral containers share 12 KiB: 2048 bytes each",
			spec: &v1.PodSpec{Containers: containers("a", "b"), InitContainers: containers("i0", "i1"), EphemeralContainers: debug}, msg: 3000, want: 2048},
		{id: "6 step 6 init counted", reason: "init containers count: two regular and four init share 12 KiB",
			spec: &v1.PodSpec{Containers: containers("a", "b"), InitContainers: containers("i0", "i1", "i2", "i3")}, msg: 3000, want: 2048},
		{id: "6 step 6 ephemeral counted", reason: "ephemeral containers count: one regular and two ephemeral share 12 KiB",
			spec: &v1.PodSpec{Containers: containers("a"), EphemeralContainers: debug}, msg: 5000, want: 4096},
		{id: "6 step 6 exact", reason: "a message of exactly its share is kept",
			spec: &v1.PodSpec{Containers: containers("a", "b", "c")}, msg: 4096, want: 4096},
		{id: "6 step 6 nil spec", reason: "without a spec the limit is the whole 12 KiB",
			msg: 13000, want: 12 * 1024},
	}
	for _, tt := range tests {
		s := &v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "a", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Message: strings.Repeat("m", tt.msg)}}}}}
		Normalize(tt.spec, s)
		if got := len(s.ContainerStatuses[0].State.Terminated.Message); got != tt.want {
			t.Errorf("%s: %s: message of %d bytes, want %d", tt.id, tt.reason, got, tt.want)
		}
	}
}

// Section 11, SetPodResizeInProgressCondition: the result says whether the
// condition changed, probe and transition times aside: its reason, its
// message, or its status (a backfilled condition that was not True).
// Empty reason and message both keep the old ones; one of them set
// replaces both.
func TestResizeInProgressRule(t *testing.T) {
	tests := []struct {
		id, reason     string
		backfill       *v1.PodCondition // the condition before, from the API
		setReason      string
		setMessage     string
		wantChanged    bool
		wantR, wantM   string
		wantStatusTrue bool
	}{
		{id: "11 InProgress same", reason: "the same reason and message again is no change",
			setReason: "r", setMessage: "m", wantR: "r", wantM: "m", wantStatusTrue: true},
		{id: "11 InProgress reason", reason: "a new reason alone is a change",
			setReason: "r2", setMessage: "m", wantChanged: true, wantR: "r2", wantM: "m", wantStatusTrue: true},
		{id: "11 InProgress message", reason: "a new message alone is a change",
			setReason: "r", setMessage: "m2", wantChanged: true, wantR: "r", wantM: "m2", wantStatusTrue: true},
		{id: "11 InProgress empty reason", reason: "an empty reason with a message is taken as it is, not the old reason",
			setMessage: "m2", wantChanged: true, wantM: "m2", wantStatusTrue: true},
		{id: "11 InProgress empty message", reason: "a reason with an empty message is taken as it is, not the old message",
			setReason: "r", wantChanged: true, wantR: "r", wantStatusTrue: true},
		{id: "11 InProgress status", reason: "a backfilled condition that was not True becomes True: a change",
			backfill:  &v1.PodCondition{Type: v1.PodResizeInProgress, Status: v1.ConditionFalse, Reason: "r", Message: "m", ObservedGeneration: 2},
			setReason: "r", setMessage: "m", wantChanged: true, wantR: "r", wantM: "m", wantStatusTrue: true},
	}
	for _, tt := range tests {
		c := defaultCache(t)
		if tt.backfill != nil {
			c.BackfillResizeConditions([]*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "u1"}, Status: v1.PodStatus{Conditions: []v1.PodCondition{*tt.backfill}}}})
		} else {
			c.SetResizeInProgress("u1", "r", "m", 2, t0)
		}
		_, changed := c.SetResizeInProgress("u1", tt.setReason, tt.setMessage, 2, t0.Add(time.Second))
		conds := c.ResizeConditions("u1")
		switch {
		case changed != tt.wantChanged:
			t.Errorf("%s: %s: changed %v, want %v", tt.id, tt.reason, changed, tt.wantChanged)
		case len(conds) != 1 || conds[0].Reason != tt.wantR || conds[0].Message != tt.wantM || (conds[0].Status == v1.ConditionTrue) != tt.wantStatusTrue:
			t.Errorf("%s: %s: conditions %+v, want reason %q message %q status True", tt.id, tt.reason, conds, tt.wantR, tt.wantM)
		}
	}
}

// Section 11, Clear*Condition on a pod that never had a resize condition:
// nothing to clear, no error.
func TestResizeClearUnknownPodRule(t *testing.T) {
	c := defaultCache(t)
	if c.ClearResizePending("never") {
		t.Error("11 ClearPodResizePendingCondition: a pod without resize conditions has no pending condition to clear")
	}
	if gen, ok := c.ClearResizeInProgress("never"); ok || gen != 0 {
		t.Errorf("11 ClearPodResizeInProgressCondition: a pod without resize conditions gives (0, false), got (%d, %v)", gen, ok)
	}
}

// Section 4 step 2, the fast path: every pod with a pending version is
// synced in the same pass; a pod the pass skips (a static pod whose mirror
// pod does not exist yet, a pod the server did not have) does not hold
// back the pods after it. Many pods, several nodes: the cache's order is a
// map's, so the skipped pod lands among the others.
func TestFastPassSkipsOnlyItsPodRule(t *testing.T) {
	const others = 30
	tests := []struct {
		id, reason string
		skipped    func(h *harness) // caches the pod the fast pass skips
	}{
		{id: "4 step 2 no mirror", reason: "a static pod without a mirror pod is skipped, the other pods are synced",
			skipped: func(h *harness) {
				static := testPod("static-uid", "kube-apiserver-node1")
				static.Annotations = map[string]string{ConfigSourceAnnotation: "file"}
				h.set(static, runningStatus("app"))
			}},
		{id: "4 step 2 not found", reason: "a pod the server did not have, whose status did not change since, is skipped, the other pods are synced",
			skipped: func(h *harness) {
				h.set(testPod("gone-uid", "gone"), runningStatus("app"))
				if r := h.engine.SyncOnce(context.Background(), false); r.Failed != 1 {
					h.t.Fatalf("the GET of a pod the server does not have fails, got %+v", r)
				}
				h.clock.Step(time.Hour) // past its back-off
			}},
	}
	for _, tt := range tests {
		for node := range 3 {
			o := DefaultOptions()
			o.Mirrors = &fakeMirrors{static: "static-uid"}
			h := newHarness(t, o)
			tt.skipped(h)
			for i := range others {
				pod := h.create(testPod(types.UID(fmt.Sprintf("u%02d", i)), fmt.Sprintf("p%02d", i)))
				h.set(pod, runningStatus("app"))
			}
			if r := h.engine.SyncOnce(context.Background(), false); r.Attempted != others || r.Synced != others {
				t.Errorf("%s: %s: node %d: one fast pass attempted %d and synced %d pods, want %d", tt.id, tt.reason, node, r.Attempted, r.Synced, others)
			}
		}
	}
}

// Planner.NextWake's contract: a pod counts while a fast pass will sync
// it when its back-off ends, also after other passes ran during the wait;
// a pod that waits for a full pass (a 404, a failed deletion) does not.
func TestNextWakeRule(t *testing.T) {
	ts := metav1.NewTime(t0)
	tests := []struct {
		id, reason string
		deleting   bool   // the server copy is deleting and the pod finished
		onServer   bool   // the server has the pod
		fail       string // the verb answered 500
		wantWake   bool
	}{
		{id: "NextWake dirty", reason: "a pod whose GET failed is synced by the fast pass after its back-off: Run wakes for it",
			onServer: true, fail: "get", wantWake: true},
		{id: "NextWake not found", reason: "a pod the server does not have waits for a change or a full pass: no wake-up",
			wantWake: false},
		{id: "NextWake deletion", reason: "a finished pod whose DELETE failed is retried by a full pass only: no wake-up",
			onServer: true, deleting: true, fail: "delete", wantWake: false},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		p := h.engine.planner
		pod := testPod("u1", "p1")
		if tt.deleting {
			pod.DeletionTimestamp = &ts
		}
		if tt.onServer {
			h.create(pod)
		}
		h.set(pod, failedStatus())
		if tt.deleting {
			if err := h.cache.TerminatePod(pod, h.now()); err != nil {
				t.Fatal(err)
			}
		}
		if tt.fail != "" {
			h.api.FailNext(tt.fail, statussynctest.FaultError)
		}
		if r := h.engine.SyncOnce(context.Background(), false); r.Failed != 1 {
			t.Fatalf("%s: the pass fails once, got %+v", tt.id, r)
		}
		// Another pod's change makes a fast pass during the back-off.
		h.clock.Step(100 * time.Millisecond)
		other := h.create(testPod("u2", "p2"))
		h.set(other, runningStatus("app"))
		h.engine.SyncOnce(context.Background(), false)
		next, ok := p.NextWake(h.now())
		if ok != tt.wantWake || ok && !next.Equal(t0.Add(time.Second)) {
			t.Errorf("%s: %s: NextWake (%v, %v), want a wake-up %v at the end of the 1s back-off", tt.id, tt.reason, next, ok, tt.wantWake)
		}
	}
}

// Engine.Observe's contract, "the newest copy": a copy older than the one
// the engine holds (a stale watch event, by resourceVersion) is ignored, so
// a full pass does not take it for drift; a newer one is used.
func TestStaleObservationIgnoredRule(t *testing.T) {
	tests := []struct {
		id, reason string
		newer      bool // observe a copy newer than the engine's, changed by another writer
		want       map[string]int
	}{
		{id: "Engine.Observe older", reason: "the pod as it was before the engine's own write is older than the write's answer: ignored",
			want: map[string]int{}},
		{id: "Engine.Observe newer (4 needsReconcile)", reason: "a newer copy showing another phase is drift: written again",
			newer: true, want: map[string]int{"get": 1, "patch": 1}},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		created := h.create(testPod("u1", "p1"))
		h.set(created, runningStatus("app"))
		h.sync()
		observed := created // the copy from before the status write
		if tt.newer {
			if err := h.api.Update("default", "p1", func(p *v1.Pod) { p.Status.Phase = v1.PodPending }); err != nil {
				t.Fatal(err)
			}
			observed, _ = h.api.Pod("default", "p1")
		}
		h.engine.Observe(observed)
		last := h.api.Requests()
		h.engine.SyncOnce(context.Background(), true)
		wantRequests(t, tt.id+": "+tt.reason, h.requests(&last), tt.want)
	}
}

// Planner.Done's contract: a Done without a request out does nothing; it
// neither moves the pass on nor counts a request twice.
func TestDoneWithoutRequestRule(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	h.create(testPod("u1", "p1"))
	h.set(testPod("u1", "p1"), runningStatus("app"))
	p := h.engine.planner
	p.Begin(h.now(), false)
	if out := p.Done(h.now(), nil, nil); out != (Outcome{}) {
		t.Errorf("Planner.Done before any Next: outcome %v, want none", out)
	}
	var verbs []Verb
	for n := 0; ; n++ {
		req, ok := p.Next()
		if !ok {
			break
		}
		if n > 5 {
			t.Fatal("a pass that does not end")
		}
		verbs = append(verbs, req.Verb)
		pod, err := h.engine.call(context.Background(), req)
		if out := p.Done(h.now(), pod, err); out.Synced {
			// The PATCH was the last request of the pass: nothing is out.
			if again := p.Done(h.now(), pod, err); again != (Outcome{}) {
				t.Errorf("Planner.Done twice for the PATCH: the second gave %v, want nothing", again)
			}
		}
	}
	if out := p.Done(h.now(), nil, nil); out != (Outcome{}) {
		t.Errorf("Planner.Done after the pass's last request: outcome %v, want none", out)
	}
	if r := p.End(); r.Attempted != 1 || r.Synced != 1 || len(verbs) != 2 {
		t.Errorf("Planner.Done without a request out: the pass is one GET and one PATCH, synced once: requests %v, result %+v", verbs, r)
	}
}

// Section 12 and section 7 SetContainerReadiness: the Ready and
// ContainersReady conditions regenerated on a readiness change observe the
// generation of the newest pod object the cache was given.
func TestReadinessObservesNewestGenerationRule(t *testing.T) {
	c := defaultCache(t)
	for _, gen := range []int64{1, 2} {
		pod := testPod("u1", "p1")
		pod.Generation = gen // a resize, say: the spec changed
		if _, _, err := c.SetPodStatus(pod, runningStatus("app"), t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SetContainerReadiness("u1", "c://app", true, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	s, _ := c.GetPodStatus("u1")
	for _, typ := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
		if got := podcond.Find(s.Conditions, typ); got == nil || got.ObservedGeneration != 2 {
			t.Errorf("12: %s after a readiness change = %+v, want observedGeneration 2, the pod's newest generation", typ, got)
		}
	}
}

// recreated's contract (section 5: what the API server answers): only a
// 422 Invalid naming metadata.uid says the pod was recreated, and the
// entry is dropped; any other failed PATCH is a failure retried after
// back-off, whatever its details say.
func TestPatchErrorRecreatedRule(t *testing.T) {
	uidCause := &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Field: "metadata.uid"}}}
	status := func(code int32, reason metav1.StatusReason, d *metav1.StatusDetails) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Details: d}}
	}
	tests := []struct {
		id, reason  string
		err         error
		wantDropped bool
	}{
		{id: "5 step 2 422 uid", reason: "422 on metadata.uid: the pod was recreated, the entry dropped",
			err: status(422, metav1.StatusReasonInvalid, uidCause), wantDropped: true},
		{id: "5 step 2 422 no details", reason: "a 422 without details names no field: a failure",
			err: status(422, metav1.StatusReasonInvalid, nil)},
		{id: "5 step 2 422 other field", reason: "a 422 on another field: a failure",
			err: status(422, metav1.StatusReasonInvalid, &metav1.StatusDetails{Causes: []metav1.StatusCause{{Field: "status.phase"}}})},
		{id: "5 step 2 500 uid", reason: "a 500 is a failure even if its causes name metadata.uid",
			err: status(500, metav1.StatusReasonInternalError, uidCause)},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		pod := h.create(testPod("u1", "p1"))
		h.set(pod, runningStatus("app"))
		p := h.engine.planner
		p.Begin(h.now(), false)
		var out Outcome
		for n := 0; ; n++ {
			req, ok := p.Next()
			if !ok {
				break
			}
			if n > 5 {
				t.Fatal("a pass that does not end")
			}
			var got *v1.Pod
			var err error
			if req.Verb == VerbPatch {
				err = tt.err
			} else {
				got, err = h.engine.call(context.Background(), req)
			}
			out = p.Done(h.now(), got, err)
		}
		p.End()
		_, cached := h.cache.GetPodStatus(pod.UID)
		if out.Dropped != tt.wantDropped || out.Failed == tt.wantDropped || cached == tt.wantDropped {
			t.Errorf("%s: %s: outcome %v, still cached %v", tt.id, tt.reason, out, cached)
		}
	}
}

// Section 4, needsReconcile: a pod forgotten (RemoveOrphanedStatuses) and
// cached again before a full pass starts its versions over, below the one
// the server was last written with; a fast pass does not write it (as in
// the kubelet, whose synced versions the full pass cleans), the next full
// pass sees the server differ and writes the new status.
func TestRecachedPodReconciledRule(t *testing.T) {
	h := newHarness(t, DefaultOptions())
	pod := h.create(testPod("u1", "p1"))
	for _, ready := range []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionFalse} {
		s := runningStatus("app")
		s.Conditions = []v1.PodCondition{cond(v1.PodReady, ready)}
		h.set(pod, s)
		h.sync()
	}
	h.cache.RemoveOrphans(nil)
	s := runningStatus("app")
	s.Message = "cached again"
	h.set(pod, s)
	h.sync()
	h.engine.SyncOnce(context.Background(), true)
	if got, _ := h.api.Pod("default", "p1"); got.Status.Message != "cached again" {
		t.Errorf("4 needsReconcile: after a full pass the server holds message %q, want the status cached again", got.Status.Message)
	}
}

// Hooks.Synced's latency (spec section 5 step 5, where nodestate differs
// from the kubelet): the time a change waited is measured from its first
// change to its write, and the clock is reset after each write, so a later
// version does not count the time since the pod's first status.
func TestSyncedLatencyResetRule(t *testing.T) {
	type synced struct {
		version uint64
		latency time.Duration
	}
	var got []synced
	h := newHarness(t, DefaultOptions(), func(eo *EngineOptions) {
		eo.Hooks.Synced = func(_ types.UID, v uint64, d time.Duration) { got = append(got, synced{v, d}) }
	})
	pod := h.create(testPod("u1", "p1"))
	h.set(pod, runningStatus("app"))
	h.clock.Step(time.Second)
	h.sync()
	h.clock.Step(10 * time.Second)
	s := runningStatus("app")
	s.Conditions = []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue)}
	h.set(pod, s)
	h.clock.Step(2 * time.Second)
	h.sync()
	want := []synced{{1, time.Second}, {2, 2 * time.Second}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(synced{})); d != "" {
		t.Errorf("5 step 5 metric: each version's latency runs from its own first change (-want +got):\n%s", d)
	}
}

// Planner.Begin's order: terminal statuses go first, and within each group
// the pods go by UID, so that the same cache gives the same requests in the
// same order, whatever the order the cache holds them in (the golden traces
// rely on it).
func TestPassOrderRule(t *testing.T) {
	uids := []types.UID{"u5", "u2", "u8", "u0", "u7", "u3", "u9", "u1", "u6", "u4"}
	terminal := map[types.UID]bool{"u8": true, "u3": true, "u6": true, "u0": true}
	want := []types.UID{"u0", "u3", "u6", "u8", "u1", "u2", "u4", "u5", "u7", "u9"}
	for node := range 3 {
		h := newHarness(t, DefaultOptions())
		for _, uid := range uids {
			pod := h.create(testPod(uid, "p-"+string(uid)))
			s := runningStatus("app")
			if terminal[uid] {
				s = failedStatus()
			}
			h.set(pod, s)
		}
		p := h.engine.planner
		p.Begin(h.now(), false)
		var got []types.UID
		for n := 0; ; n++ {
			req, ok := p.Next()
			if !ok {
				break
			}
			if n > 5*len(uids) {
				t.Fatal("a pass that does not end")
			}
			if req.Verb == VerbGet {
				got = append(got, req.Pod)
			}
			pod, err := h.engine.call(context.Background(), req)
			p.Done(h.now(), pod, err)
		}
		p.End()
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Planner.Begin: node %d: terminal statuses first, then by UID (-want +got):\n%s", node, d)
		}
	}
}

// PlannerOptions.NoGet and the engine's guarantee on finished pods: a
// finished pod is read before it is patched, since whether it may be
// deleted depends on a deletionTimestamp another writer sets, unless the
// copy the planner knows is already deleting; then it is patched and
// deleted without a read.
func TestNoGetFinishedPodReadRule(t *testing.T) {
	ts := metav1.NewTime(t0)
	tests := []struct {
		id, reason string
		deleting   bool // the pod, and so the known copy, has a deletionTimestamp
		want       map[string]int
	}{
		{id: "NoGet finished", reason: "the known copy is not deleting: read the pod, then patch",
			want: map[string]int{"get": 1, "patch": 1}},
		{id: "NoGet finished deleting", reason: "the known copy is deleting: patch and delete without a read",
			deleting: true, want: map[string]int{"patch": 1, "delete": 1}},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions(), func(eo *EngineOptions) { eo.Planner.NoGet = true })
		pod := testPod("u1", "p1")
		if tt.deleting {
			pod.DeletionTimestamp = &ts
		}
		pod = h.create(pod)
		h.set(pod, runningStatus("app"))
		h.sync()
		last := h.api.Requests()
		if err := h.cache.TerminatePod(pod, h.now()); err != nil {
			t.Fatal(err)
		}
		h.sync()
		wantRequests(t, tt.id+": "+tt.reason, h.requests(&last), tt.want)
	}
}

// PlannerOptions.RetryMax bounds the back-off however long it is: a
// RetryMax equal to RetryInitial is the wait after every failure, also for
// periods so long that doubling them would overflow a time.Duration.
func TestRetryMaxBoundRule(t *testing.T) {
	const long = time.Duration(1 << 62) // about 146 years
	h := newHarness(t, DefaultOptions(), func(eo *EngineOptions) { eo.Planner.RetryInitial, eo.Planner.RetryMax = long, long })
	pod := h.create(testPod("u1", "p1"))
	h.set(pod, runningStatus("app"))
	var outs []Outcome
	p := h.engine.planner
	for i := range 2 {
		h.api.FailNext("get", statussynctest.FaultError)
		p.Begin(h.now(), false)
		req, ok := p.Next()
		if !ok {
			t.Fatalf("failure %d: the pass has no request for the pod whose back-off ended", i+1)
		}
		got, err := h.engine.call(context.Background(), req)
		outs = append(outs, p.Done(h.now(), got, err))
		p.End()
		if out := outs[i]; !out.Failed || out.RetryAt.Sub(h.now()) != long {
			t.Errorf("back-off cap: failure %d: outcome %v, want a retry RetryMax (%v) later", i+1, out, long)
		}
		h.clock.Step(long)
	}
	// The delay doubles up to RetryMax and no further, whatever RetryMax:
	// doubling past math.MaxInt64 nanoseconds stops at RetryMax instead of
	// wrapping to a negative delay and a retry at once; a RetryMax too large
	// to double still lets small delays double; an odd RetryMax is reached
	// only when doubling would pass it.
	for _, tt := range []struct {
		initial, most time.Duration
		want          []time.Duration
	}{
		{5e18, 9e18, []time.Duration{5e18, 9e18}},
		{time.Second, 9e18, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{time.Second, 2*time.Second + 1, []time.Duration{time.Second, 2 * time.Second, 2*time.Second + 1}},
	} {
		h = newHarness(t, DefaultOptions(), func(eo *EngineOptions) { eo.Planner.RetryInitial, eo.Planner.RetryMax = tt.initial, tt.most })
		pod = h.create(testPod("u1", "p1"))
		h.set(pod, runningStatus("app"))
		p = h.engine.planner
		for i, want := range tt.want {
			h.api.FailNext("get", statussynctest.FaultError)
			p.Begin(h.now(), false)
			req, ok := p.Next()
			if !ok {
				t.Fatalf("initial %v, max %v: failure %d: the pass has no request for the pod whose back-off ended", tt.initial, tt.most, i+1)
			}
			got, err := h.engine.call(context.Background(), req)
			out := p.Done(h.now(), got, err)
			p.End()
			if !out.Failed || out.RetryAt.Sub(h.now()) != want {
				t.Errorf("back-off bound: initial %v, max %v: failure %d: outcome %v, want a retry %v later", tt.initial, tt.most, i+1, out, want)
			}
			h.clock.Step(want)
		}
	}
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
