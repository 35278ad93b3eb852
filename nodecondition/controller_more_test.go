package nodecondition_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

// liveLeases is a LeaseLookup answering from a map; a missing node is NotFound.
type liveLeases struct {
	rv  map[string]string
	err error
}

func (l *liveLeases) LiveLease(node string) (string, bool, error) {
	if l.err != nil {
		return "", false, l.err
	}
	rv, ok := l.rv[node]
	return rv, ok, nil
}

var _ nc.LeaseLookup = (*liveLeases)(nil)

func newHealthyPair(t *testing.T) *nc.Controller {
	t.Helper()
	c, err := nc.NewController(healthy())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"node0", "node1"} {
		if _, err := c.UpsertNode(t12, node(n, t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12))); err != nil {
			t.Fatal(err)
		}
		c.UpsertLease(n, t12, "1")
	}
	if _, err := c.Monitor(t12, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLiveLeaseCheck(t *testing.T) {
	later := t12.Add(60 * time.Second)
	tests := []struct {
		id, reason  string
		live        *liveLeases
		wantWrites  []string
		wantSkipped []string
	}{
		{"3.9 newer lease", "the live Lease has another resourceVersion: record it and skip; the record pauses every later node too",
			&liveLeases{rv: map[string]string{"node0": "2", "node1": "1"}}, nil, []string{"node0", "node1"}},
		{"3.9 same lease", "same resourceVersion as saved: mark Unknown",
			&liveLeases{rv: map[string]string{"node0": "1", "node1": "1"}}, []string{"node0", "node1"}, nil},
		{"3.9 not found", "NotFound lets the marking go ahead",
			&liveLeases{rv: map[string]string{}}, []string{"node0", "node1"}, nil},
		{"3.9 error", "any other error skips the node this pass",
			&liveLeases{err: errors.New("boom")}, nil, []string{"node0", "node1"}},
	}
	for _, tt := range tests {
		c := newHealthyPair(t)
		p, err := c.Monitor(later, tt.live)
		if err != nil {
			t.Fatal(err)
		}
		var writes []string
		for _, w := range p.Writes {
			writes = append(writes, w.Node)
		}
		if diff := cmp.Diff(tt.wantWrites, writes); diff != "" {
			t.Errorf("%s: %s: writes mismatch (-want +got):\n%s", tt.id, tt.reason, diff)
		}
		if diff := cmp.Diff(tt.wantSkipped, append([]string(nil), p.Skipped...)); diff != "" {
			t.Errorf("%s: %s: skipped mismatch (-want +got):\n%s", tt.id, tt.reason, diff)
		}
	}

	// 3.9: the pause lasts until the cached Lease shows the recorded
	// version; then the renewal gives fresh credit and nothing is marked.
	c := newHealthyPair(t)
	live := &liveLeases{rv: map[string]string{"node0": "2", "node1": "1"}}
	c.Monitor(later, live)
	p, _ := c.Monitor(later.Add(5*time.Second), live)
	if len(p.Skipped) != 2 || len(p.Writes) != 0 {
		t.Errorf("3.9: while the informer lags, every node is skipped: %+v", p)
	}
	c.UpsertLease("node0", later, "2")
	c.UpsertLease("node1", later, "3")
	p, _ = c.Monitor(later.Add(10*time.Second), live)
	if len(p.Skipped) != 0 || len(p.Writes) != 0 {
		t.Errorf("3.9: once caught up, the renewed leases keep both nodes healthy: %+v", p)
	}

	// With the gate off there is no live lookup and no skipping.
	cfg := healthy()
	cfg.LeaseCircuitBreaker = false
	off, _ := nc.NewController(cfg)
	off.UpsertNode(t12, node("node0", t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	off.Monitor(t12, nil)
	if p, _ := off.Monitor(later, live); len(p.Writes) != 1 || len(p.Skipped) != 0 {
		t.Errorf("3.9 gate off: Unknown from the cached view alone, got %+v", p)
	}
}

func TestControllerProbeQuirks(t *testing.T) {
	// 3.2: a Ready condition that disappears does not reset the probe; the
	// 60 s startup grace then counts from the old probe time.
	c, _ := nc.NewController(healthy())
	c.UpsertNode(t12, node("n", t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.Monitor(t12, nil)
	c.UpdateStatus(t12.Add(30*time.Second), "n", nil)
	if p, _ := c.Monitor(t12.Add(55*time.Second), nil); len(p.Writes) != 0 {
		t.Errorf("3.2: 55 s is past 50 s but within the 60 s startup grace: %+v", p.Writes)
	}
	if p, _ := c.Monitor(t12.Add(61*time.Second), nil); len(p.Writes) != 1 || p.Writes[0].Conditions[0].Reason != nc.ReasonNodeStatusNeverUpdated {
		t.Errorf("3.2: 61 s after the old probe, the node is marked NeverUpdated: %+v", p.Writes)
	}

	// 3.2 quirk: after a status heartbeat the saved lease is dropped, so the
	// next pass counts the unchanged lease as a renewal: one extra pass of credit.
	c, _ = nc.NewController(healthy())
	c.UpsertNode(t12, node("n", t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.UpsertLease("n", t12, "1")
	c.Monitor(t12, nil)
	hb := t12.Add(10 * time.Second)
	c.UpdateStatus(hb, "n", []v1.NodeCondition{cond(v1.NodeReady, v1.ConditionTrue, hb, t12)})
	c.Monitor(hb, nil)
	if p, _ := c.Probe("n"); !p.Equal(hb) {
		t.Errorf("3.2: probe after the status heartbeat = %v, want %v", p, hb)
	}
	c.Monitor(hb.Add(5*time.Second), nil)
	if p, _ := c.Probe("n"); !p.Equal(hb.Add(5 * time.Second)) {
		t.Errorf("3.2 quirk: the next pass counts the old lease again, probe = %v, want %v", p, hb.Add(5*time.Second))
	}
	c.Monitor(hb.Add(10*time.Second), nil)
	if p, _ := c.Probe("n"); !p.Equal(hb.Add(5 * time.Second)) {
		t.Errorf("3.2: only one extra pass: probe = %v", p)
	}
}

func TestLeavingFullDisruptionResetsProbes(t *testing.T) {
	// 3.6: leaving the all-zones-full state gives every node a fresh grace.
	c, _ := nc.NewController(healthy())
	unknown := cond(v1.NodeReady, v1.ConditionUnknown, t12, t12)
	c.UpsertNode(t12, node("n0", t2012, zoneLabels("r", "z1"), unknown))
	c.UpsertNode(t12, node("n1", t2012, zoneLabels("r", "z2"), unknown))
	p, _ := c.Monitor(t12, nil)
	if diff := cmp.Diff(map[string]nc.ZoneState{"r/z1": nc.ZoneFullDisruption, "r/z2": nc.ZoneFullDisruption}, c.ZoneStates()); diff != "" {
		t.Fatalf("mismatch (-want +got):\n%s", diff)
	}
	_ = p
	back := t12.Add(30 * time.Second)
	c.UpdateStatus(back, "n0", []v1.NodeCondition{cond(v1.NodeReady, v1.ConditionTrue, back, back)})
	if _, err := c.Monitor(back, nil); err != nil {
		t.Fatal(err)
	}
	if pr, _ := c.Probe("n1"); !pr.Equal(back) {
		t.Errorf("3.6: n1's probe = %v, want the reset time %v", pr, back)
	}
	if got := c.ZoneStates(); got["r/z1"] != nc.ZoneNormal || got["r/z2"] != nc.ZoneFullDisruption {
		t.Errorf("3.6: zone states after leaving = %v", got)
	}
}

func TestPartialDisruptionRates(t *testing.T) {
	run := func(total, unknown int) (tainted []int, rate float64) {
		c, _ := nc.NewController(nc.DefaultControllerOptions())
		for i := range total {
			st := v1.ConditionTrue
			if i < unknown {
				st = v1.ConditionUnknown
			}
			c.UpsertNode(t12, node(fmt.Sprintf("n%03d", i), t2012, zoneLabels("r", "z"), cond(v1.NodeReady, st, t12, t12)))
		}
		c.Monitor(t12, nil)
		for _, at := range []time.Duration{0, 50 * time.Second, 100 * time.Second} {
			p, _ := taintPass(t, c, t12.Add(at))
			n := 0
			for _, tc := range p.Taints {
				if tc.Added && tc.Taint.Effect == v1.TaintEffectNoExecute {
					n++
				}
			}
			tainted = append(tainted, n)
		}
		rate, _ = c.ZoneRate("r/z")
		return tainted, rate
	}
	tests := []struct {
		id            string
		total, unknwn int
		want          []int
		rate          float64
		reason        string
	}{
		{"3.6 small partial", 4, 3, []int{0, 0, 0}, 0, "PartialDisruption with at most 50 nodes stops tainting (rate 0)"},
		{"3.6 50 nodes partial", 50, 30, []int{0, 0, 0}, 0, "50 nodes is not large (strictly more than 50 is): tainting stops"},
		{"3.6 large partial", 60, 40, []int{1, 0, 1}, 0.01, "PartialDisruption with more than 50 nodes taints at 0.01/s: the swapped limiter starts with the old token"},
		{"3.6 normal", 10, 2, []int{1, 1, 0}, 0.1, "Normal taints at 0.1/s, burst 1: one now, the other once a token is back"},
	}
	for _, tt := range tests {
		got, rate := run(tt.total, tt.unknwn)
		if !cmp.Equal(got, tt.want) || rate != tt.rate {
			t.Errorf("%s: NoExecute taints per tainting pass = %v at ZoneRate %v, want %v at %v (%s)", tt.id, got, rate, tt.want, tt.rate, tt.reason)
		}
	}
	var c nc.Controller
	if _, ok := c.ZoneRate("r/z"); ok {
		t.Error("a zero Controller has no zone")
	}
}

// taintPass runs c.Taint(now) and fails the test if it does not return: a
// tainting pass takes each queued node at most once, so it always ends.
func taintPass(t *testing.T, c *nc.Controller, now time.Time) (nc.Pass, error) {
	t.Helper()
	type result struct {
		p   nc.Pass
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := c.Taint(now)
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		return r.p, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("3.5: the tainting pass at %v did not end", now)
		return nc.Pass{}, nil
	}
}

func TestTaintingRetriesMissingReady(t *testing.T) {
	// 3.5: the tainting pass retries a node whose Ready is missing after 50 ms.
	c, _ := nc.NewController(healthy())
	c.UpsertNode(t12, node("n", t12, nil, cond(v1.NodeReady, v1.ConditionFalse, t12, t12)))
	// A healthy node keeps the zone out of FullDisruption, which would stop tainting.
	c.UpsertNode(t12, node("ok", t12, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.Monitor(t12, nil)
	c.UpdateStatus(t12, "n", nil)
	if p, _ := taintPass(t, c, t12); len(p.Taints) != 0 || !c.Queued("n") {
		t.Fatalf("missing Ready: nothing tainted, node stays queued; got %+v", p.Taints)
	}
	if p, _ := taintPass(t, c, t12.Add(40*time.Millisecond)); len(p.Taints) != 0 {
		t.Errorf("retried before 50 ms")
	}
	c.UpdateStatus(t12.Add(40*time.Millisecond), "n", []v1.NodeCondition{cond(v1.NodeReady, v1.ConditionFalse, t12, t12)})
	p, _ := taintPass(t, c, t12.Add(50*time.Millisecond))
	var got []string
	for _, tc := range p.Taints {
		got = append(got, tc.Taint.Key+":"+string(tc.Taint.Effect))
	}
	if !cmp.Equal(got, []string{"node.kubernetes.io/not-ready:NoExecute"}) {
		t.Errorf("3.5: at 50 ms the retry taints not-ready:NoExecute, got %v", got)
	}
}

func TestPodWorkersMarkNewPods(t *testing.T) {
	// 3.4: a pod newly bound to a node whose last known Ready is not True is
	// marked not ready by the pod workers.
	c, _ := nc.NewController(healthy())
	c.UpsertNode(t12, node("bad", t12, nil, cond(v1.NodeReady, v1.ConditionFalse, t12, t12)))
	c.UpsertNode(t12, node("good", t12, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	notReadyPod := readyPod("ns", "c", "bad")
	notReadyPod.Status.Conditions[0].Status = v1.ConditionFalse
	for _, tc := range []struct {
		pod  *v1.Pod
		want bool
		why  string
	}{
		{readyPod("ns", "a", "bad"), true, "bound to a not-ready node"},
		{readyPod("ns", "b", "good"), false, "bound to a ready node"},
		{notReadyPod, false, "already not ready"},
		{readyPod("ns", "d", "ghost"), false, "unknown node"},
		{nil, false, "nil pod"},
		{readyPod("ns", "", "bad"), false, "an unnamed pod is refused, even on a not-ready node"},
	} {
		if got := c.UpsertPod(tc.pod); got != tc.want {
			t.Errorf("3.4 pod workers: %s: UpsertPod = %v, want %v", tc.why, got, tc.want)
		}
	}
	var zero nc.Controller
	if zero.UpsertPod(readyPod("ns", "e", "bad")) {
		t.Error("a zero Controller records no pod and gives false")
	}
}

func TestControllerPodBookkeeping(t *testing.T) {
	// 3.4: MarkPodsNotReady covers every pod bound to the node, whatever
	// order the pod informer delivered its updates in.
	withConds := func(p *v1.Pod, conds ...v1.PodCondition) *v1.Pod {
		p.Status.Conditions = conds
		return p
	}
	unscheduled := readyPod("ns", "a", "")
	tests := []struct {
		id, reason string
		pods       []*v1.Pod // upserted in order; node0 then stops posting
		want       []string  // pods marked not ready when node0 goes Unknown
	}{
		{"3.4 pod updated", "a pod updated again on the same node stays on it once: marked once",
			[]*v1.Pod{readyPod("ns", "a", "node0"), readyPod("ns", "a", "node0")}, []string{"a"}},
		{"3.4 pod bound later", "a pod seen before it was scheduled is marked once it is bound to the node",
			[]*v1.Pod{unscheduled, readyPod("ns", "a", "node0")}, []string{"a"}},
		{"3.4 pod moved", "a pod seen on node1, then (re-created under the same name) on node0, is node0's only",
			[]*v1.Pod{readyPod("ns", "a", "node1"), readyPod("ns", "a", "node0")}, []string{"a"}},
		{"3.4 pod moved away", "a pod seen on node0, then on node1, is no longer node0's",
			[]*v1.Pod{readyPod("ns", "a", "node0"), readyPod("ns", "b", "node0"), readyPod("ns", "a", "node1")}, []string{"b"}},
		{"3.4 no Ready condition", "a pod with no Ready condition is left alone, whatever its other conditions",
			[]*v1.Pod{withConds(readyPod("ns", "a", "node0"), v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})}, nil},
		{"3.4 already not ready", "a pod whose Ready is already False is left alone, whatever its other conditions",
			[]*v1.Pod{withConds(readyPod("ns", "a", "node0"), v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue},
				v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse})}, nil},
	}
	for _, tt := range tests {
		c := newHealthyPair(t) // node0 and node1, Ready at t12, lease "1"
		for _, p := range tt.pods {
			c.UpsertPod(p)
		}
		p, err := c.Monitor(t12.Add(time.Minute), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range p.PodsNotReady {
			if r.Node == "node0" {
				got = append(got, r.Name)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: %s: pods of node0 marked not ready mismatch (-want +got):\n%s", tt.id, tt.reason, diff)
		}
	}
}

func TestControllerRejectsBadInput(t *testing.T) {
	c, _ := nc.NewController(nc.DefaultControllerOptions())
	if _, err := c.UpsertNode(t12, nil); !errors.Is(err, nc.ErrInvalidInput) {
		t.Errorf("nil node: %v", err)
	}
	if _, err := c.UpdateStatus(t12, "ghost", nil); !errors.Is(err, nc.ErrInvalidInput) {
		t.Errorf("unknown node: %v", err)
	}
	c.Monitor(t12, nil)
	if _, err := c.Monitor(t12.Add(-time.Second), nil); !errors.Is(err, nc.ErrTimeWentBackwards) {
		t.Errorf("time going backwards: %v", err)
	}
	var te *nc.TimeError
	if _, err := c.Taint(t12.Add(-time.Second)); !errors.As(err, &te) || te.Op != "Taint" {
		t.Errorf("Taint backwards: %v", err)
	}
	for _, cfg := range []func(*nc.ControllerOptions){
		func(c *nc.ControllerOptions) { c.GracePeriod = 0 },
		func(c *nc.ControllerOptions) { c.EvictionRate = -1 },
		func(c *nc.ControllerOptions) { c.UnhealthyZoneThreshold = 1.5 },
		func(c *nc.ControllerOptions) { c.LargeClusterThreshold = -1 },
	} {
		x := nc.DefaultControllerOptions()
		cfg(&x)
		if _, err := nc.NewController(x); !errors.Is(err, nc.ErrInvalidOptions) {
			t.Errorf("config %+v accepted: %v", x, err)
		}
	}
}

func TestControllerDeleteNodeAndPod(t *testing.T) {
	c, _ := nc.NewController(healthy())
	c.UpsertNode(t12, node("n", t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.UpsertPod(readyPod("ns", "a", "n"))
	c.UpsertPod(readyPod("ns", "b", "n"))
	c.DeletePod("ns", "a")
	c.Monitor(t12, nil)
	p, _ := c.Monitor(t12.Add(time.Minute), nil)
	if len(p.PodsNotReady) != 1 || p.PodsNotReady[0].Name != "b" {
		t.Errorf("a deleted pod is not marked: %+v", p.PodsNotReady)
	}
	c.DeleteNode("n")
	if p, _ := c.Monitor(t12.Add(2*time.Minute), nil); len(p.Writes) != 0 || c.Conditions("n") != nil || c.Taints("n") != nil {
		t.Errorf("a deleted node is forgotten: %+v", p)
	}
	if _, ok := c.Probe("n"); ok {
		t.Errorf("no probe for a deleted node")
	}
}

func TestControllerInformerOrder(t *testing.T) {
	// The lease and the pods may arrive before their node.
	c, _ := nc.NewController(healthy())
	c.UpsertLease("n", t12, "1")
	c.UpsertPod(readyPod("ns", "early", "n"))
	c.UpsertNode(t12, node("n", t2012, nil))
	if p, _ := c.Monitor(t12, nil); len(p.Writes) != 0 {
		t.Errorf("3.2: a node that never posted status but renews its lease is healthy: %+v", p.Writes)
	}
	c.UpdateStatus(t12, "n", []v1.NodeCondition{cond(v1.NodeReady, v1.ConditionTrue, t12, t12)})
	c.Monitor(t12, nil)
	// The first later pass counts the old lease once more (3.2 quirk).
	c.Monitor(t12.Add(2*time.Minute), nil)
	p, _ := c.Monitor(t12.Add(4*time.Minute), nil)
	if len(p.PodsNotReady) != 1 || p.PodsNotReady[0].Name != "early" {
		t.Errorf("the early pod is marked with its node: %+v", p.PodsNotReady)
	}
	c.DeleteLease("n")
}

func TestUnknownMarkingOnlyWrittenWithReady(t *testing.T) {
	// 3.3: the write happens only if Ready changed; the marking of the other
	// conditions is otherwise dropped with the controller's copy.
	c, _ := nc.NewController(healthy())
	conds := []v1.NodeCondition{cond(v1.NodeReady, v1.ConditionUnknown, t12, t12), cond(v1.NodeMemoryPressure, v1.ConditionTrue, t12, t12)}
	c.UpsertNode(t12, node("n", t2012, nil, conds...))
	c.Monitor(t12, nil)
	p, _ := c.Monitor(t12.Add(time.Minute), nil)
	if len(p.Writes) != 0 {
		t.Errorf("Ready was already Unknown: no write, got %+v", p.Writes)
	}
	if diff := cmp.Diff(conds, c.Conditions("n")); diff != "" {
		t.Errorf("the view keeps what the API has (-want +got):\n%s", diff)
	}
}
