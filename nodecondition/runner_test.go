package nodecondition_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	nc "github.com/nodestate/nodestate/nodecondition"
)

// apiRecorder is the runner's three interfaces, recording each call as a
// line "OFFSET what" (offset from t12).
type apiRecorder struct {
	clk      *clocktesting.FakeClock
	mu       sync.Mutex
	lines    []string
	failPods int // how many MarkPodNotReady calls fail next
	// onNotReady, when set, runs inside each MarkPodNotReady call.
	onNotReady func(nc.PodRef)
}

var (
	_ nc.NodeWriter      = (*apiRecorder)(nil)
	_ nc.PodStatusWriter = (*apiRecorder)(nil)
	_ nc.PodDeleter      = (*apiRecorder)(nil)
)

func (a *apiRecorder) log(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lines = append(a.lines, a.clk.Now().Sub(t12).String()+" "+s)
}

func (a *apiRecorder) WriteConditions(_ context.Context, node string, conds []v1.NodeCondition) error {
	for _, c := range conds {
		if c.Type == v1.NodeReady {
			a.log(node + " Ready " + string(c.Status) + " " + c.Reason)
		}
	}
	return nil
}

func (a *apiRecorder) WriteTaints(_ context.Context, node string, changes []nc.TaintChange) error {
	for _, c := range changes {
		op := "-"
		if c.Added {
			op = "+"
		}
		a.log(node + " taint " + op + c.Taint.Key + ":" + string(c.Taint.Effect))
	}
	return nil
}

func (a *apiRecorder) MarkPodNotReady(_ context.Context, pod nc.PodRef) error {
	a.mu.Lock()
	fail := a.failPods > 0
	if fail {
		a.failPods--
	}
	a.mu.Unlock()
	if fail {
		a.log("not ready failed " + pod.Namespace + "/" + pod.Name)
		return errors.New("injected failure")
	}
	a.log("not ready " + pod.Namespace + "/" + pod.Name)
	if a.onNotReady != nil {
		a.onNotReady(pod)
	}
	return nil
}

func (a *apiRecorder) DeletePod(_ context.Context, pod nc.PodKey) error {
	a.log("delete " + pod.Namespace + "/" + pod.Name)
	return nil
}

func (a *apiRecorder) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.lines
	a.lines = nil
	return out
}

// idle waits until the runner waits on the fake clock again. A step that
// fires the runner's timer removes its waiter; the runner adds a new one once
// it has done its work, so nothing is in flight when idle returns.
func idle(fc *clocktesting.FakeClock) {
	for !fc.HasWaiters() {
		runtime.Gosched()
	}
}

// newRunner returns a runner on a fake clock at t12 with a controller of the options given
// and api (which the runner also uses as its PodDeleter when evict is set) as its writer.
func newRunner(t *testing.T, co nc.ControllerOptions, evict bool) (*clocktesting.FakeClock, *apiRecorder, *nc.Runner) {
	t.Helper()
	fc := clocktesting.NewFakeClock(t12)
	api := &apiRecorder{clk: fc}
	c, err := nc.NewController(co)
	if err != nil {
		t.Fatal(err)
	}
	var deleter nc.PodDeleter
	if evict {
		deleter = api
	}
	r, err := nc.NewRunner(nc.RunnerOptions{Clock: fc}, c, api, api, deleter)
	if err != nil {
		t.Fatal(err)
	}
	return fc, api, r
}

func TestRunnerKubeletStops(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := clocktesting.NewFakeClock(t12)
	api := &apiRecorder{clk: fc, failPods: 1}
	c, err := nc.NewController(nc.DefaultControllerOptions())
	if err != nil {
		t.Fatal(err)
	}
	opts := nc.DefaultRunnerOptions()
	opts.Clock = fc
	r, err := nc.NewRunner(opts, c, api, api, api)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	for _, n := range []string{"n", "ok"} {
		if err := r.UpsertNode(ctx, node(n, t2012, zoneLabels("r", "z"), cond(v1.NodeReady, v1.ConditionTrue, t12, t12))); err != nil {
			t.Fatal(err)
		}
		r.UpsertLease(n, t12, "1")
	}
	plain := readyPod("default", "plain", "n")
	plain.Spec.Tolerations = nc.WithDefaultTolerations(nil, nc.DefaultTolerationSeconds, nc.DefaultTolerationSeconds)
	for _, p := range []*v1.Pod{plain, readyPod("default", "bare", "n")} {
		if err := r.UpsertPod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	idle(fc)
	if err := r.Run(ctx); err == nil {
		t.Error("a second Run while the first runs must fail")
	}
	// "ok" renews its lease every 10 s; "n" stays silent after t=0.
	for step := 1; fc.Now().Before(t12.Add(6 * time.Minute)); step++ {
		fc.Step(100 * time.Millisecond)
		idle(fc)
		if step%100 == 0 {
			r.UpsertLease("ok", fc.Now(), fc.Now().String())
		}
	}
	got := api.take()
	want := []string{
		// spec/nodecondition.md section 4.1 with passes exactly 5 s apart: the
		// first pass strictly after 50 s; section 3.4: the pods in the same pass.
		"55s n Ready Unknown NodeStatusUnknown",
		"55s n taint +node.kubernetes.io/unreachable:NoSchedule",
		"55s not ready failed default/plain",
		"55s not ready default/bare",
		// section 3.5: the tainting pass in the same instant.
		"55s n taint +node.kubernetes.io/unreachable:NoExecute",
		// section 3.7: no toleration: deleted at once.
		"55s delete default/bare",
		// section 3.4: a failed pod write is retried by the next pass.
		"1m0s not ready default/plain",
		// section 3.7: the 300 s toleration.
		"5m55s delete default/plain",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("API calls mismatch (-want +got):\n%s", diff)
	}
	st := r.Stats()
	if st.Failed != 1 || st.PodsDeleted != 2 || st.PodsMarkedNotReady != 2 || st.ConditionWrites != 1 || st.MonitorPasses < 72 {
		t.Errorf("stats %+v", st)
	}
	if rate, ok := c.ZoneRate("r/z"); !ok || rate != 0.1 {
		t.Errorf("3.6: zone r/z with one of two nodes down is Normal at 0.1 nodes/s, ZoneRate = %v %v", rate, ok)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v after its context ended", err)
	}
}

func TestRunnerRejects(t *testing.T) {
	defer goleak.VerifyNone(t)
	c, _ := nc.NewController(nc.DefaultControllerOptions())
	api := &apiRecorder{clk: clocktesting.NewFakeClock(t12)}
	for _, tc := range []struct {
		id         string
		c          *nc.Controller
		nodes      nc.NodeWriter
		pods       nc.PodStatusWriter
		wantTarget error
	}{
		{"zero controller", &nc.Controller{}, api, api, nc.ErrInvalidInput},
		{"nil controller", nil, api, api, nc.ErrInvalidInput},
		{"no node writer", c, nil, api, nc.ErrInvalidInput},
		{"no pod writer", c, api, nil, nc.ErrInvalidInput},
	} {
		if _, err := nc.NewRunner(nc.DefaultRunnerOptions(), tc.c, tc.nodes, tc.pods, nil); !errors.Is(err, tc.wantTarget) {
			t.Errorf("%s: err = %v", tc.id, err)
		}
	}
	var zero nc.Runner
	if err := zero.Run(context.Background()); !errors.Is(err, nc.ErrNotInitialized) {
		t.Errorf("zero Runner: Run = %v", err)
	}
}

func TestRunnerInformers(t *testing.T) {
	// Without Run: the informer side writes what the node-update handler and
	// the taint-eviction controller decide at once (spec/nodecondition.md
	// sections 3.5 and 3.7).
	_, api, r := newRunner(t, nc.DefaultControllerOptions(), true)
	ctx := context.Background()
	ready := node("n", t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12))
	ready.Spec.Taints = []v1.Taint{{Key: nc.TaintNotReady, Effect: v1.TaintEffectNoExecute}}
	if err := r.UpsertNode(ctx, ready); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateStatus(ctx, "n", []v1.NodeCondition{cond(v1.NodeReady, v1.ConditionFalse, t12, t12)}); err != nil {
		t.Fatal(err)
	}
	bare, tolerating := readyPod("default", "bare", "n"), readyPod("default", "tolerating", "n")
	tolerating.Spec.Tolerations = nc.WithDefaultTolerations(nil, 300, 300)
	for _, p := range []*v1.Pod{bare, tolerating, nil} {
		if err := r.UpsertPod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	r.DeletePod("default", "tolerating")
	r.UpsertLease("n", t12, "1")
	r.DeleteLease("n")
	r.DeleteNode("n")
	want := []string{
		"0s n taint +node.kubernetes.io/not-ready:NoSchedule",
		"0s not ready default/bare", // 3.4: the pod workers, the node's Ready is False
		"0s delete default/bare",    // 3.7: not-ready:NoExecute untolerated
		"0s not ready default/tolerating",
	}
	if diff := cmp.Diff(want, api.take()); diff != "" {
		t.Errorf("API calls mismatch (-want +got):\n%s", diff)
	}
	if err := r.UpdateStatus(ctx, "n", nil); !errors.Is(err, nc.ErrInvalidInput) {
		t.Errorf("UpdateStatus of a deleted node: %v", err)
	}
	var zero nc.Runner
	if err := zero.UpsertPod(ctx, bare); !errors.Is(err, nc.ErrNotInitialized) || zero.Stats() != (nc.RunnerStats{}) {
		t.Errorf("zero Runner: UpsertPod = %v", err)
	}
}

func TestRunnerPodGoneWhileMarked(t *testing.T) {
	// 3.4: a pod deleted while the controller sets it not ready (the write
	// finds it gone, which counts as done) is forgotten, and the runner goes
	// on with the pods that are still there.
	_, api, r := newRunner(t, nc.DefaultControllerOptions(), false)
	ctx := context.Background()
	if err := r.UpsertNode(ctx, node("n", t2012, nil, cond(v1.NodeReady, v1.ConditionFalse, t12, t12))); err != nil {
		t.Fatal(err)
	}
	api.onNotReady = func(p nc.PodRef) {
		if p.Name == "gone" {
			r.DeletePod(p.Namespace, p.Name)
		}
	}
	for _, name := range []string{"gone", "kept"} {
		if err := r.UpsertPod(ctx, readyPod("default", name, "n")); err != nil {
			t.Fatal(err)
		}
	}
	api.onNotReady = nil
	want := []string{
		"0s n taint +node.kubernetes.io/not-ready:NoSchedule",
		"0s not ready default/gone",
		"0s not ready default/kept",
	}
	if diff := cmp.Diff(want, api.take()); diff != "" {
		t.Errorf("API calls mismatch (-want +got):\n%s", diff)
	}
	if s := r.Stats(); s.PodsMarkedNotReady != 2 || s.Failed != 0 {
		t.Errorf("stats %+v: both writes count as done", s)
	}
}

func TestRunnerNoExecuteChangesOfSeveralNodes(t *testing.T) {
	// 3.5 and 3.7 through the runner: node a had not-ready:NoExecute and goes
	// Unknown, so the monitor pass swaps its taints at once (four changes of
	// one node, written in one call) and a pod tolerating only not-ready is
	// deleted; b and c go Unknown in the same pass and are tainted together
	// by the tainting pass right after (healthy rate), each with a pod that
	// tolerates nothing, deleted at once. Three healthy nodes keep the zone
	// Normal (3 of 6 not ready).
	defer goleak.VerifyNone(t)
	fc, api, r := newRunner(t, healthy(), true)
	ctx, cancel := context.WithCancel(context.Background())
	z := zoneLabels("r", "z")
	a := node("a", t2012, z, cond(v1.NodeReady, v1.ConditionFalse, t12, t12))
	a.Spec.Taints = []v1.Taint{{Key: nc.TaintNotReady, Effect: v1.TaintEffectNoSchedule}, {Key: nc.TaintNotReady, Effect: v1.TaintEffectNoExecute}}
	nodes := []*v1.Node{a, node("b", t2012, z, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)), node("c", t2012, z, cond(v1.NodeReady, v1.ConditionTrue, t12, t12))}
	healthyNodes := []string{"ok1", "ok2", "ok3"}
	for _, n := range healthyNodes {
		nodes = append(nodes, node(n, t2012, z, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	}
	for _, n := range nodes {
		if err := r.UpsertNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	pa := readyPod("default", "pa", "a")
	pa.Spec.Tolerations = []v1.Toleration{tol(nc.TaintNotReady, nil)}
	for _, p := range []*v1.Pod{pa, readyPod("default", "pb", "b"), readyPod("default", "pc", "c")} {
		if err := r.UpsertPod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	renew := func() {
		for _, n := range healthyNodes {
			r.UpsertLease(n, fc.Now(), fc.Now().String())
		}
	}
	renew()
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	idle(fc)
	fc.Step(50 * time.Second)
	idle(fc)
	renew()
	api.take()
	fc.Step(5 * time.Second)
	idle(fc)
	want := []string{
		// The monitor pass: a, b and c marked Unknown (3.3), a's taints
		// swapped at once (3.5), the pods of b and c set not ready (3.4),
		// then a's pod deleted: it does not tolerate unreachable (3.7).
		"55s a Ready Unknown NodeStatusUnknown",
		"55s b Ready Unknown NodeStatusUnknown",
		"55s c Ready Unknown NodeStatusUnknown",
		"55s a taint -node.kubernetes.io/not-ready:NoSchedule",
		"55s a taint +node.kubernetes.io/unreachable:NoSchedule",
		"55s a taint -node.kubernetes.io/not-ready:NoExecute",
		"55s a taint +node.kubernetes.io/unreachable:NoExecute",
		"55s b taint +node.kubernetes.io/unreachable:NoSchedule",
		"55s c taint +node.kubernetes.io/unreachable:NoSchedule",
		"55s not ready default/pb",
		"55s not ready default/pc",
		"55s delete default/pa",
		// The tainting pass: b and c together, their pods deleted.
		"55s b taint +node.kubernetes.io/unreachable:NoExecute",
		"55s c taint +node.kubernetes.io/unreachable:NoExecute",
		"55s delete default/pb",
		"55s delete default/pc",
	}
	if diff := cmp.Diff(want, api.take()); diff != "" {
		t.Errorf("API calls mismatch (-want +got):\n%s", diff)
	}
	st := r.Stats()
	if st.TaintWrites != 5 || st.PodsDeleted != 3 || st.TaintPasses < 1 || st.Failed != 0 {
		t.Errorf("stats %+v: want one taint write per node and pass (a, b, c in the monitor pass, b and c in the tainting pass), 3 deletions, the tainting passes counted", st)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v after its context ended", err)
	}
}

func TestRunnerWithoutTaintEviction(t *testing.T) {
	// 3.9: with the taint-eviction controller disabled (no PodDeleter) a pod
	// on a node with a NoExecute taint it does not tolerate is not deleted;
	// the pod workers still set it not ready.
	_, api, r := newRunner(t, nc.DefaultControllerOptions(), false)
	ctx := context.Background()
	n := node("n", t2012, nil, cond(v1.NodeReady, v1.ConditionFalse, t12, t12))
	n.Spec.Taints = []v1.Taint{{Key: nc.TaintNotReady, Effect: v1.TaintEffectNoSchedule}, {Key: nc.TaintNotReady, Effect: v1.TaintEffectNoExecute}}
	if err := r.UpsertNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := r.UpsertPod(ctx, readyPod("default", "bare", "n")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"0s not ready default/bare"}, api.take()); diff != "" {
		t.Errorf("API calls mismatch (-want +got):\n%s", diff)
	}
	if s := r.Stats(); s.PodsDeleted != 0 {
		t.Errorf("stats %+v: nothing deleted without a PodDeleter", s)
	}
}
