package nodecondition_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

// taintsAt runs a tainting pass at now and returns its changes as
// node:key:effect.
func taintsAt(t *testing.T, c *nc.Controller, now time.Time) []string {
	t.Helper()
	p, err := taintPass(t, c, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tc := range p.Taints {
		got = append(got, tc.Node+":"+tc.Taint.Key+":"+string(tc.Taint.Effect))
	}
	return got
}

// notReadyZone returns a controller of opts with the not-ready nodes queued
// for their NoExecute taint after one monitor pass, and three Ready nodes
// that keep the zone Normal.
func notReadyZone(t *testing.T, opts nc.ControllerOptions, labels map[string]string, notReady ...string) *nc.Controller {
	t.Helper()
	c, err := nc.NewController(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notReady {
		c.UpsertNode(t12, node(n, t12, labels, cond(v1.NodeReady, v1.ConditionFalse, t12, t12)))
	}
	for _, n := range []string{"ok0", "ok1", "ok2"} {
		c.UpsertNode(t12, node(n, t12, labels, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	}
	if _, err := c.Monitor(t12, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range notReady {
		if !c.Queued(n) {
			t.Fatalf("3.5: not-ready node %s is queued for its NoExecute taint after the monitor pass", n)
		}
	}
	return c
}

// TestTaintQueueDeletedNodeUsesToken: 3.5, every attempt of the tainting
// queue uses a token, a dropped one included. A node deleted while queued is
// dropped in its turn, as the node-lifecycle controller drops a node it can
// no longer read, and the node behind it waits for the next token: 10 s at
// 0.1 nodes/s.
func TestTaintQueueDeletedNodeUsesToken(t *testing.T) {
	c := notReadyZone(t, nc.DefaultControllerOptions(), nil, "a", "b")
	c.DeleteNode("a")
	if got := taintsAt(t, c, t12); len(got) != 0 {
		t.Errorf("3.5: the deleted node's turn uses the zone's token, so nothing is tainted at once; got %v", got)
	}
	if got := taintsAt(t, c, t12.Add(9*time.Second)); len(got) != 0 {
		t.Errorf("3.5: no token before 10 s at 0.1 nodes/s; got %v", got)
	}
	if diff := cmp.Diff([]string{"b:" + nc.TaintNotReady + ":NoExecute"}, taintsAt(t, c, t12.Add(10*time.Second))); diff != "" {
		t.Errorf("3.5: the next token taints the node behind the deleted one (-want +got):\n%s", diff)
	}
}

// TestTaintQueueZoneChangeKeepsOldQueue: 3.5 and 3.6, the tainting queues
// are per zone, and a node queued in one zone whose zone labels change (an
// informer update) is still taken by that zone's tainting pass, as in the
// node-lifecycle controller, which does not move queued nodes between
// zones. An update that keeps the zone keeps the node queued as well.
func TestTaintQueueZoneChangeKeepsOldQueue(t *testing.T) {
	z1, z2 := zoneLabels("r", "z1"), zoneLabels("r", "z2")
	notReady := cond(v1.NodeReady, v1.ConditionFalse, t12, t12)
	c := notReadyZone(t, nc.DefaultControllerOptions(), z1, "m", "n")
	c.UpsertNode(t12, node("n", t12, z1, notReady))
	if !c.Queued("n") {
		t.Errorf("3.5: an informer update that keeps the zone leaves the node queued")
	}
	c.UpsertNode(t12, node("m", t12, z2, notReady))
	if diff := cmp.Diff([]string{"m:" + nc.TaintNotReady + ":NoExecute"}, taintsAt(t, c, t12)); diff != "" {
		t.Errorf("3.5: z1's tainting pass takes m, which moved to z2, in its turn (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"n:" + nc.TaintNotReady + ":NoExecute"}, taintsAt(t, c, t12.Add(10*time.Second))); diff != "" {
		t.Errorf("3.5: the next token of z1 taints n (-want +got):\n%s", diff)
	}
}

// TestControllerDeleteNodeKeepsTheOthers: 3.1, the monitor pass walks every
// known node: after one of three is deleted, the other two are still
// monitored and marked Unknown when they fall silent, and the deleted one
// is not.
func TestControllerDeleteNodeKeepsTheOthers(t *testing.T) {
	c, err := nc.NewController(healthy())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} {
		c.UpsertNode(t12, node(n, t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	}
	c.Monitor(t12, nil)
	c.DeleteNode("b")
	p, err := c.Monitor(t12.Add(time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range p.Writes {
		got = append(got, w.Node)
	}
	if diff := cmp.Diff([]string{"a", "c"}, got); diff != "" {
		t.Errorf("3.1/3.3: the nodes left are marked Unknown, the deleted one is not (-want +got):\n%s", diff)
	}
}

// TestEarlyPodsInNameOrder: the pods the informer delivered before their
// node (3.4's bookkeeping, informers deliver in any order) are marked not
// ready in namespace/name order, so the same calls give the same Pass
// whatever order the controller's maps happen to hold them in.
func TestEarlyPodsInNameOrder(t *testing.T) {
	var want []nc.PodRef
	for _, ns := range []string{"a", "b"} {
		for _, name := range []string{"p0", "p1", "p2", "p3", "p4", "p5"} {
			want = append(want, nc.PodRef{Namespace: ns, Name: name, Node: "n"})
		}
	}
	for run := 0; run < 5; run++ {
		c, err := nc.NewController(healthy())
		if err != nil {
			t.Fatal(err)
		}
		for i := len(want) - 1; i >= 0; i-- {
			c.UpsertPod(readyPod(want[i].Namespace, want[i].Name, "n"))
		}
		c.UpsertNode(t12, node("n", t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
		c.Monitor(t12, nil)
		p, err := c.Monitor(t12.Add(time.Minute), nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, p.PodsNotReady); diff != "" {
			t.Fatalf("run %d: 3.4: the early pods are marked in namespace/name order (-want +got):\n%s", run, diff)
		}
	}
}

// TestNodeWithoutReadyDoesNotStopThePass: 3.1 and 3.5, the monitor pass
// takes the taint decision for every node: a node without a Ready condition
// (it has none to decide on) does not keep the not-ready node after it from
// being queued for its NoExecute taint in the same pass.
func TestNodeWithoutReadyDoesNotStopThePass(t *testing.T) {
	c, err := nc.NewController(healthy())
	if err != nil {
		t.Fatal(err)
	}
	c.UpsertNode(t12, node("a", t12, nil))
	c.UpsertNode(t12, node("b", t12, nil, cond(v1.NodeReady, v1.ConditionFalse, t12, t12)))
	for _, n := range []string{"ok0", "ok1", "ok2"} {
		c.UpsertNode(t12, node(n, t12, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	}
	if _, err := c.Monitor(t12, nil); err != nil {
		t.Fatal(err)
	}
	if c.Queued("a") || !c.Queued("b") {
		t.Errorf("3.5: b (Ready False) is queued, a (no Ready) is not: queued a %v, b %v", c.Queued("a"), c.Queued("b"))
	}
}

// TestReadyWrittenWhenOnlyStatusChanges: 3.3, an UpdateStatus is issued
// when Ready changed, in any field. A Ready True whose reason, message and
// transition time already are those of the marking (a kubelet whose clock
// runs a minute ahead of the controller's posted the transition at the
// controller's marking time) changes only in Status, and is still written.
func TestReadyWrittenWhenOnlyStatusChanges(t *testing.T) {
	c, err := nc.NewController(healthy())
	if err != nil {
		t.Fatal(err)
	}
	mark := t12.Add(time.Minute)
	ready := cond(v1.NodeReady, v1.ConditionTrue, t12, mark)
	ready.Reason, ready.Message = nc.ReasonNodeStatusUnknown, nc.MessageNodeStatusUnknown
	c.UpsertNode(t12, node("n", t2012, nil, ready))
	c.Monitor(t12, nil)
	p, err := c.Monitor(mark, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ready
	want.Status = v1.ConditionUnknown
	if len(p.Writes) != 1 || len(p.Writes[0].Conditions) == 0 || !cmp.Equal(p.Writes[0].Conditions[0], want) {
		t.Errorf("3.3: Ready marked Unknown is written even when Status is all that changed; writes %+v", p.Writes)
	}
}

// TestTaintQueueOrder: 3.5, each zone's queue hands out nodes by the time
// they were queued, and a node that is Ready again leaves it. A node queued
// by a later monitor pass but due before the 50 ms retry of a node without
// Ready is taken first; a node leaving the queue takes no other with it.
func TestTaintQueueOrder(t *testing.T) {
	c, err := nc.NewController(healthy())
	if err != nil {
		t.Fatal(err)
	}
	notReady := cond(v1.NodeReady, v1.ConditionFalse, t12, t12)
	c.UpsertNode(t12, node("a", t12, nil, notReady))
	for _, n := range []string{"ok0", "ok1", "ok2", "ok3"} {
		c.UpsertNode(t12, node(n, t12, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	}
	c.Monitor(t12, nil)
	c.UpdateStatus(t12, "a", nil)
	if got := taintsAt(t, c, t12); len(got) != 0 {
		t.Fatalf("a without Ready is retried after 50 ms, not tainted: %v", got)
	}
	// b and c fall Ready False; the pass at 10 ms queues them ahead of a's
	// retry at 50 ms. ok0 is queued too and then Ready again.
	at := t12.Add(10 * time.Millisecond)
	for _, n := range []string{"b", "c"} {
		c.UpsertNode(at, node(n, t12, nil, notReady))
	}
	c.UpdateStatus(at, "ok0", []v1.NodeCondition{notReady})
	c.Monitor(at, nil)
	c.UpdateStatus(at, "ok0", []v1.NodeCondition{cond(v1.NodeReady, v1.ConditionTrue, t12, t12)})
	c.Monitor(at, nil)
	// a's Ready comes back after the passes, so its retry stays at 50 ms.
	c.UpdateStatus(at, "a", []v1.NodeCondition{notReady})
	if c.Queued("ok0") || !c.Queued("a") || !c.Queued("b") || !c.Queued("c") {
		t.Fatalf("3.5: ok0, Ready again, left the queue and a, b, c stay: queued ok0 %v a %v b %v c %v", c.Queued("ok0"), c.Queued("a"), c.Queued("b"), c.Queued("c"))
	}
	nr := ":" + nc.TaintNotReady + ":NoExecute"
	if diff := cmp.Diff([]string{"b" + nr, "c" + nr}, taintsAt(t, c, at)); diff != "" {
		t.Errorf("3.5: at 10 ms b and c, due before a's retry (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a" + nr}, taintsAt(t, c, t12.Add(50*time.Millisecond))); diff != "" {
		t.Errorf("3.5: at 50 ms a's retry (-want +got):\n%s", diff)
	}
}

// TestTaintPassGoesOnPastDeletedNode: 3.5, the tainting pass drops a node
// that is gone and goes on with the queue: with tokens to spare the node
// behind it is tainted in the same pass.
func TestTaintPassGoesOnPastDeletedNode(t *testing.T) {
	c := notReadyZone(t, healthy(), nil, "a", "b")
	c.DeleteNode("a")
	if diff := cmp.Diff([]string{"b:" + nc.TaintNotReady + ":NoExecute"}, taintsAt(t, c, t12)); diff != "" {
		t.Errorf("3.5: b is tainted in the pass that drops a (-want +got):\n%s", diff)
	}
}

// TestNextTaintNothingQueued: 3.5, a Normal zone with an empty queue has
// no tainting pass to come.
func TestNextTaintNothingQueued(t *testing.T) {
	c, err := nc.NewController(nc.DefaultControllerOptions())
	if err != nil {
		t.Fatal(err)
	}
	c.UpsertNode(t12, node("up", t12, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.Monitor(t12, nil)
	if got := c.ZoneStates()[""]; got != nc.ZoneNormal {
		t.Fatalf("one Ready node: zone state %v, want Normal", got)
	}
	if at, ok := c.NextTaint(); ok {
		t.Errorf("3.5: nothing queued, so no tainting pass to come; NextTaint = %v", at)
	}
}

// TestNextTaintStoppedZone: 3.6, a zone of at most 50 nodes in
// PartialDisruption stops tainting (rate 0), so NextTaint reports no pass
// to come although its queue holds nodes.
func TestNextTaintStoppedZone(t *testing.T) {
	c, err := nc.NewController(nc.DefaultControllerOptions())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		c.UpsertNode(t12, node(fmt.Sprintf("down%d", i), t12, nil, cond(v1.NodeReady, v1.ConditionFalse, t12, t12)))
	}
	c.UpsertNode(t12, node("up", t12, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.Monitor(t12, nil)
	if got := c.ZoneStates()[""]; got != nc.ZonePartialDisruption {
		t.Fatalf("4 of 5 nodes not ready: zone state %v, want PartialDisruption", got)
	}
	if !c.Queued("down0") {
		t.Fatalf("3.5: the not-ready nodes are queued")
	}
	if at, ok := c.NextTaint(); ok {
		t.Errorf("3.6: a stopped zone has no tainting pass to come; NextTaint = %v", at)
	}
}

// TestZoneBackToNormalStartsDrained: 3.6, a limiter swapped while the old
// one had no token starts drained. A zone stopped in PartialDisruption (4 of
// 5 nodes not ready, rate 0) that goes back to Normal at 0.1 nodes/s taints
// its first queued node only when the new bucket has filled, 10 s later.
func TestZoneBackToNormalStartsDrained(t *testing.T) {
	c, err := nc.NewController(nc.DefaultControllerOptions())
	if err != nil {
		t.Fatal(err)
	}
	notReady := cond(v1.NodeReady, v1.ConditionFalse, t12, t12)
	for i := 0; i < 4; i++ {
		c.UpsertNode(t12, node(fmt.Sprintf("down%d", i), t12, nil, notReady))
	}
	c.UpsertNode(t12, node("up", t12, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.Monitor(t12, nil)
	if got := taintsAt(t, c, t12); len(got) != 0 {
		t.Fatalf("3.6: PartialDisruption in a zone of 5 stops tainting; got %v", got)
	}
	back := t12.Add(time.Second)
	for _, n := range []string{"down2", "down3"} {
		c.UpdateStatus(back, n, []v1.NodeCondition{cond(v1.NodeReady, v1.ConditionTrue, back, back)})
	}
	c.Monitor(back, nil)
	if got := c.ZoneStates()[""]; got != nc.ZoneNormal {
		t.Fatalf("2 of 5 nodes not ready: zone state %v, want Normal", got)
	}
	if got := taintsAt(t, c, back); len(got) != 0 {
		t.Errorf("3.6: the new limiter starts drained; got %v at once", got)
	}
	if diff := cmp.Diff([]string{"down0:" + nc.TaintNotReady + ":NoExecute"}, taintsAt(t, c, back.Add(10*time.Second))); diff != "" {
		t.Errorf("3.6: the first token comes 10 s after the swap (-want +got):\n%s", diff)
	}
}
