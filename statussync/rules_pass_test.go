package statussync

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/internal/podcond"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

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

// A watch may deliver a pod before its first status is set, and a pass may
// run in between: the observation waits for the pod's first status, whose
// patch then needs no GET (NoGet). A pod that never gets a status is
// forgotten by the second full pass that still finds it uncached.
func TestNoGetObservedBeforeFirstStatusRule(t *testing.T) {
	tests := []struct {
		id, reason string
		fullPasses int // full passes between the observation and the status
		want       map[string]int
	}{
		{id: "NoGet early", reason: "a fast pass in between keeps the observation: patch without a read",
			want: map[string]int{"patch": 1}},
		{id: "NoGet early full", reason: "one full pass in between keeps it too",
			fullPasses: 1, want: map[string]int{"patch": 1}},
		{id: "NoGet early forgotten", reason: "the second full pass drops it: read, then patch",
			fullPasses: 2, want: map[string]int{"get": 1, "patch": 1}},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions(), func(eo *EngineOptions) { eo.Planner.NoGet = true })
		pod := h.create(testPod("u1", "p1"))
		h.engine.Observe(pod)
		h.pass(false)
		for range tt.fullPasses {
			h.pass(true)
		}
		last := h.api.Requests()
		h.set(pod, runningStatus("app"))
		h.sync()
		wantRequests(t, tt.id+": "+tt.reason, h.requests(&last), tt.want)
	}
}

// TestNoGetEarlyObservationsDroppedOneByOne: the full pass that drops an
// observation kept twice drops that one only; the observations of pods
// first seen since are kept, and their first patches need no read. Map
// order varies, so the scenario runs several times.
func TestNoGetEarlyObservationsDroppedOneByOne(t *testing.T) {
	for round := range 10 {
		h := newHarness(t, DefaultOptions(), func(eo *EngineOptions) { eo.Planner.NoGet = true })
		old := h.create(testPod("u-old", "old"))
		h.engine.Observe(old)
		h.pass(true) // kept once
		var pods []*v1.Pod
		for i := range 8 {
			p := h.create(testPod(types.UID(fmt.Sprint("u", i)), fmt.Sprint("p", i)))
			h.engine.Observe(p)
			pods = append(pods, p)
		}
		h.pass(true) // old's second full pass: dropped; the others kept
		last := h.api.Requests()
		for _, p := range pods {
			h.set(p, runningStatus("app"))
		}
		h.sync()
		wantRequests(t, fmt.Sprintf("round %d: the newer pods' first patches", round), h.requests(&last), map[string]int{"patch": len(pods)})
	}
}
