package nodecondition_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

// The node-lifecycle controller tests of spec section 6 use these instants:
// "now" is 2015-01-01 12:00 UTC and nodes are created in 2012.
var (
	t2012 = time.Date(2012, 1, 1, 0, 0, 0, 0, time.UTC)
	t12   = time.Date(2015, 1, 1, 12, 0, 0, 0, time.UTC)
)

func mt(t time.Time) metav1.Time { return metav1.NewTime(t) }

func cond(typ v1.NodeConditionType, st v1.ConditionStatus, hb, tr time.Time) v1.NodeCondition {
	return v1.NodeCondition{Type: typ, Status: st, LastHeartbeatTime: mt(hb), LastTransitionTime: mt(tr)}
}

func node(name string, created time.Time, labels map[string]string, conds ...v1.NodeCondition) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: mt(created), Labels: labels},
		Status:     v1.NodeStatus{Conditions: conds},
	}
}

func zoneLabels(region, zone string) map[string]string {
	return map[string]string{v1.LabelTopologyRegion: region, v1.LabelTopologyZone: zone}
}

func readyPod(ns, name, nodeName string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1.PodSpec{NodeName: nodeName},
		Status:     v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}},
	}
}

// step is one moment of a controller script: informer updates, then passes.
type step struct {
	at       time.Time
	nodes    []*v1.Node
	status   map[string][]v1.NodeCondition
	leases   map[string]time.Time
	pods     []*v1.Pod
	monitor  bool
	taint    bool
	failPods bool // the pod writes of this step fail
}

// record is what a script produced over all its steps.
type record struct {
	writes       map[string][]v1.NodeCondition // last write per node
	nWrites      int
	podsNotReady int // successful pod status updates
	taints       []nc.TaintChange
	zones        []map[string]nc.ZoneState // after each monitor pass
}

func healthy() nc.ControllerOptions {
	cfg := nc.DefaultControllerOptions()
	cfg.EvictionRate = math.Inf(1) // the spec's "healthy rate (QPS very high)"
	return cfg
}

func run(t *testing.T, cfg nc.ControllerOptions, steps []step) (*nc.Controller, record) {
	t.Helper()
	c, err := nc.NewController(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := record{writes: map[string][]v1.NodeCondition{}}
	keep := func(p nc.Pass) {
		for _, tc := range p.Taints {
			tc.Taint.TimeAdded = nil
			r.taints = append(r.taints, tc)
		}
	}
	for _, s := range steps {
		for _, n := range s.nodes {
			p, err := c.UpsertNode(s.at, n)
			if err != nil {
				t.Fatal(err)
			}
			keep(p)
		}
		for name, conds := range s.status {
			p, err := c.UpdateStatus(s.at, name, conds)
			if err != nil {
				t.Fatal(err)
			}
			keep(p)
		}
		for name, renew := range s.leases {
			c.UpsertLease(name, renew, renew.Format(time.RFC3339))
		}
		for _, p := range s.pods {
			c.UpsertPod(p)
		}
		if s.monitor {
			p, err := c.Monitor(s.at, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range p.Writes {
				r.writes[w.Node] = append([]v1.NodeCondition(nil), w.Conditions...)
				r.nWrites++
			}
			failed := map[string]bool{}
			for _, pr := range p.PodsNotReady {
				if s.failPods {
					failed[pr.Node] = true
					continue
				}
				r.podsNotReady++
				pod := readyPod(pr.Namespace, pr.Name, pr.Node)
				pod.Status.Conditions[0].Status = v1.ConditionFalse
				c.UpsertPod(pod)
			}
			for n := range failed {
				c.MarkPodsNotReadyFailed(n)
			}
			keep(p)
			r.zones = append(r.zones, c.ZoneStates())
		}
		if s.taint {
			p, err := taintPass(t, c, s.at)
			if err != nil {
				t.Fatal(err)
			}
			keep(p)
		}
	}
	return c, r
}

func unknownConds(created, now time.Time) []v1.NodeCondition {
	var out []v1.NodeCondition
	for _, typ := range []v1.NodeConditionType{v1.NodeReady, v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
		out = append(out, v1.NodeCondition{Type: typ, Status: v1.ConditionUnknown, Reason: nc.ReasonNodeStatusNeverUpdated,
			Message: nc.MessageNodeNeverUpdated, LastHeartbeatTime: mt(created), LastTransitionTime: mt(now)})
	}
	return out
}

func TestControllerHealthSpecCases(t *testing.T) {
	readyT12 := cond(v1.NodeReady, v1.ConditionTrue, t12, t12)
	diskT12 := cond(v1.NodeDiskPressure, v1.ConditionFalse, t12, t12)
	t13 := t12.Add(time.Hour)
	tests := []struct {
		id, reason   string
		steps        []step
		wantWrites   map[string][]v1.NodeCondition
		wantPodMarks int
	}{
		{
			id:     "case 1",
			reason: "3.2/3.3: a node created long ago that never posted status gets its probe time from creation and all four conditions are added as NeverUpdated at once",
			steps: []step{{at: t12, nodes: []*v1.Node{node("node0", t2012, nil)},
				pods: []*v1.Pod{readyPod("default", "pod0", "node0")}, monitor: true}},
			wantWrites: map[string][]v1.NodeCondition{"node0": unknownConds(t2012, t12)},
		},
		{
			id:         "case 2",
			reason:     "3.2: a node created now with no conditions is within the 60 s startup grace",
			steps:      []step{{at: t12, nodes: []*v1.Node{node("node0", t12, nil)}, monitor: true}},
			wantWrites: map[string][]v1.NodeCondition{},
		},
		{
			id:         "case 4",
			reason:     "3.3: Ready True with a heartbeat now is healthy",
			steps:      []step{{at: t12, nodes: []*v1.Node{node("node0", t2012, nil, readyT12)}, monitor: true}},
			wantWrites: map[string][]v1.NodeCondition{},
		},
		{
			id:         "case 5",
			reason:     "3.2: created now, no status and no lease: startup grace",
			steps:      []step{{at: t12, nodes: []*v1.Node{node("node0", t12, nil)}, monitor: true}},
			wantWrites: map[string][]v1.NodeCondition{},
		},
		{
			id:         "case 7",
			reason:     "3.3: created long ago, no status, no lease: marked NeverUpdated at once",
			steps:      []step{{at: t12, nodes: []*v1.Node{node("node0", t2012, nil)}, monitor: true}},
			wantWrites: map[string][]v1.NodeCondition{"node0": unknownConds(t2012, t12)},
		},
		{
			id:     "case 8",
			reason: "3.2: a renewing lease alone keeps a node that never posted status healthy",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("node0", t2012, nil)}, leases: map[string]time.Time{"node0": t12}, monitor: true},
				{at: t13, leases: map[string]time.Time{"node0": t13}, monitor: true},
			},
			wantWrites: map[string][]v1.NodeCondition{},
		},
		{
			id:     "case 10",
			reason: "3.2: the status heartbeat is an hour old but the lease was renewed: no change",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("node0", t2012, nil, readyT12, diskT12)}, leases: map[string]time.Time{"node0": t12}, monitor: true},
				{at: t13, leases: map[string]time.Time{"node0": t13}, monitor: true},
			},
			wantWrites: map[string][]v1.NodeCondition{},
		},
		{
			id:     "case 11",
			reason: "3.2: the lease is stuck but the status heartbeat moved: either signal is enough",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("node0", t2012, nil, readyT12, diskT12)}, leases: map[string]time.Time{"node0": t12}, monitor: true},
				{at: t13, status: map[string][]v1.NodeCondition{"node0": {cond(v1.NodeReady, v1.ConditionTrue, t13, t12), cond(v1.NodeDiskPressure, v1.ConditionFalse, t13, t12)}}, monitor: true},
			},
			wantWrites: map[string][]v1.NodeCondition{},
		},
		{
			id:     "case 13",
			reason: "3.3/3.4: 60 s without a heartbeat exceeds the 50 s grace: Unknown, and the NLC's own flip marks the pods not ready",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("node0", t2012, nil, readyT12)}, pods: []*v1.Pod{readyPod("default", "pod0", "node0")}, monitor: true},
				{at: t12.Add(time.Minute), monitor: true},
			},
			wantWrites: map[string][]v1.NodeCondition{"node0": {
				{Type: v1.NodeReady, Status: v1.ConditionUnknown, Reason: nc.ReasonNodeStatusUnknown, Message: nc.MessageNodeStatusUnknown, LastHeartbeatTime: mt(t12), LastTransitionTime: mt(t12.Add(time.Minute))},
				{Type: v1.NodeMemoryPressure, Status: v1.ConditionUnknown, Reason: nc.ReasonNodeStatusNeverUpdated, Message: nc.MessageNodeNeverUpdated, LastHeartbeatTime: mt(t2012), LastTransitionTime: mt(t12.Add(time.Minute))},
				{Type: v1.NodeDiskPressure, Status: v1.ConditionUnknown, Reason: nc.ReasonNodeStatusNeverUpdated, Message: nc.MessageNodeNeverUpdated, LastHeartbeatTime: mt(t2012), LastTransitionTime: mt(t12.Add(time.Minute))},
				{Type: v1.NodePIDPressure, Status: v1.ConditionUnknown, Reason: nc.ReasonNodeStatusNeverUpdated, Message: nc.MessageNodeNeverUpdated, LastHeartbeatTime: mt(t2012), LastTransitionTime: mt(t12.Add(time.Minute))},
			}},
			wantPodMarks: 1,
		},
		{
			id:     "case 14",
			reason: "3.4: a kubelet-posted False after the NLC's Unknown is no new transition: exactly one pod update",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("node0", t2012, nil, readyT12)}, pods: []*v1.Pod{readyPod("default", "pod0", "node0")}, monitor: true},
				{at: t12.Add(time.Minute), monitor: true},
				{at: t12.Add(2 * time.Minute), status: map[string][]v1.NodeCondition{"node0": {cond(v1.NodeReady, v1.ConditionFalse, t12.Add(2*time.Minute), t12.Add(2*time.Minute))}}, monitor: true},
			},
			wantPodMarks: 1,
		},
		{
			id:     "case 16",
			reason: "3.4: the first pod marking fails; the node is retried the next pass while Ready is not True",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("node0", t2012, nil, readyT12)}, pods: []*v1.Pod{readyPod("default", "pod0", "node0")}, monitor: true},
				{at: t12.Add(time.Minute), monitor: true, failPods: true},
				{at: t12.Add(2 * time.Minute), status: map[string][]v1.NodeCondition{"node0": {cond(v1.NodeReady, v1.ConditionFalse, t12.Add(2*time.Minute), t12.Add(2*time.Minute))}}, monitor: true},
			},
			wantPodMarks: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			_, r := run(t, healthy(), tt.steps)
			if tt.wantWrites != nil {
				if diff := cmp.Diff(tt.wantWrites, r.writes); diff != "" {
					t.Errorf("%s: writes mismatch (-want +got):\n%s", tt.reason, diff)
				}
			}
			if r.podsNotReady != tt.wantPodMarks {
				t.Errorf("%s: %d pod status updates, want %d", tt.reason, r.podsNotReady, tt.wantPodMarks)
			}
		})
	}
}

func TestControllerZoneSpecCases(t *testing.T) {
	z1 := zoneLabels("region1", "zone1")
	z2 := zoneLabels("region1", "zone2")
	z3 := zoneLabels("region2", "zone3")
	ready := cond(v1.NodeReady, v1.ConditionTrue, t12, t12)
	unknown := cond(v1.NodeReady, v1.ConditionUnknown, t12, t12)
	later := t12.Add(5 * time.Second)
	readyLater := cond(v1.NodeReady, v1.ConditionTrue, later, t12)
	unknownLater := cond(v1.NodeReady, v1.ConditionUnknown, later, later)
	excluded := map[string]string{v1.LabelTopologyRegion: "region1", v1.LabelTopologyZone: "zone1", nc.LabelExcludeDisruption: ""}
	tests := []struct {
		id, reason string
		steps      []step
		want       []map[string]nc.ZoneState
	}{
		{
			id:     "case 17",
			reason: "3.6: one healthy node without zone labels: zone \"\" stays Normal",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("n0", t2012, nil, ready)}, monitor: true},
				{at: later, status: map[string][]v1.NodeCondition{"n0": {readyLater}}, monitor: true},
			},
			want: []map[string]nc.ZoneState{{"": nc.ZoneNormal}, {"": nc.ZoneNormal}},
		},
		{
			id:     "case 19",
			reason: "3.6: four nodes never posted status: FullDisruption; then one Ready of four: 3 > 2 and 3/4 >= 0.55",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("n0", t2012, z1), node("n1", t2012, z1), node("n2", t2012, z1), node("n3", t2012, z1)}, monitor: true},
				{at: later, status: map[string][]v1.NodeCondition{"n0": {readyLater}}, monitor: true},
			},
			want: []map[string]nc.ZoneState{{"region1/zone1": nc.ZoneFullDisruption}, {"region1/zone1": nc.ZonePartialDisruption}},
		},
		{
			id:     "case 20",
			reason: "3.6: 2 of 5 not ready is Normal (not more than 2); 3 of 5 is PartialDisruption",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("n0", t2012, z1, unknown), node("n1", t2012, z1, unknown), node("n2", t2012, z1, ready), node("n3", t2012, z1, ready), node("n4", t2012, z1, ready)}, monitor: true},
				{at: later, status: map[string][]v1.NodeCondition{"n2": {unknownLater}, "n3": {readyLater}, "n4": {readyLater}}, monitor: true},
			},
			want: []map[string]nc.ZoneState{{"region1/zone1": nc.ZoneNormal}, {"region1/zone1": nc.ZonePartialDisruption}},
		},
		{
			id:     "case 22",
			reason: "3.6: zone1 all Unknown, zone2 Ready: Full and Normal",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("n0", t2012, z1, unknown), node("n1", t2012, z2, ready)}, monitor: true},
				{at: later, status: map[string][]v1.NodeCondition{"n1": {readyLater}}, monitor: true},
			},
			want: []map[string]nc.ZoneState{
				{"region1/zone1": nc.ZoneFullDisruption, "region1/zone2": nc.ZoneNormal},
				{"region1/zone1": nc.ZoneFullDisruption, "region1/zone2": nc.ZoneNormal},
			},
		},
		{
			id:     "case 23",
			reason: "3.6: every node of two regions Unknown: both FullDisruption (master disruption mode)",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("n0", t2012, z1, unknown), node("n1", t2012, z3, unknown)}, monitor: true},
			},
			want: []map[string]nc.ZoneState{{"region1/zone1": nc.ZoneFullDisruption, "region2/zone3": nc.ZoneFullDisruption}},
		},
		{
			id:     "case 25",
			reason: "3.6: the Ready node carries the exclude-disruption label and is not counted",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("n0", t2012, z1, unknown), node("n1", t2012, excluded, ready)}, monitor: true},
			},
			want: []map[string]nc.ZoneState{{"region1/zone1": nc.ZoneFullDisruption}},
		},
		{
			id:     "3.6 excluded node alone in its zone",
			reason: "3.6: an excluded node without zone labels is not counted, so zone \"\" has no state and does not make the cluster look fully disrupted; the worker zone is Normal and goes Full once its only node stops posting",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("cp", t2012, map[string]string{nc.LabelExcludeDisruption: ""}, ready), node("n1", t2012, z1, ready)}, monitor: true},
				{at: t12.Add(30 * time.Second), monitor: true},
				{at: t12.Add(60 * time.Second), monitor: true},
			},
			want: []map[string]nc.ZoneState{{"region1/zone1": nc.ZoneNormal}, {"region1/zone1": nc.ZoneNormal}, {"region1/zone1": nc.ZoneFullDisruption}},
		},
		{
			id:     "3.6 one zone changes",
			reason: "3.6: zone states are recomputed for every zone each pass: zone2 goes Full while zone1, listed before it, stays Normal and a zone with no counted node has no state",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("cp", t2012, map[string]string{nc.LabelExcludeDisruption: ""}, ready), node("n1", t2012, z1, ready), node("n2", t2012, z2, ready)}, monitor: true},
				{at: later, status: map[string][]v1.NodeCondition{"n1": {readyLater}, "n2": {cond(v1.NodeReady, v1.ConditionFalse, later, later)}}, monitor: true},
			},
			want: []map[string]nc.ZoneState{
				{"region1/zone1": nc.ZoneNormal, "region1/zone2": nc.ZoneNormal},
				{"region1/zone1": nc.ZoneNormal, "region1/zone2": nc.ZoneFullDisruption},
			},
		},
		{
			id:     "3.6 leaving all-full past an empty zone",
			reason: "3.6: both counted zones Full, then zone1's node is Ready again: leaving the all-zones-full state recomputes every zone with a state, past a zone with no counted node",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("cp", t2012, map[string]string{nc.LabelExcludeDisruption: ""}, ready), node("n1", t2012, z1, unknown), node("n2", t2012, z2, unknown)}, monitor: true},
				{at: later, status: map[string][]v1.NodeCondition{"n1": {readyLater}}, monitor: true},
			},
			want: []map[string]nc.ZoneState{
				{"region1/zone1": nc.ZoneFullDisruption, "region1/zone2": nc.ZoneFullDisruption},
				{"region1/zone1": nc.ZoneNormal, "region1/zone2": nc.ZoneFullDisruption},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			_, r := run(t, healthy(), tt.steps)
			if diff := cmp.Diff(tt.want, r.zones); diff != "" {
				t.Errorf("%s: zone states mismatch (-want +got):\n%s", tt.reason, diff)
			}
		})
	}
}

func TestComputeZoneState(t *testing.T) {
	tests := []struct {
		id              string
		notReady, total int
		want            nc.ZoneState
		reason          string
	}{
		{"case 26a", 2, 4, nc.ZoneNormal, "not more than 2 not ready"},
		{"case 26b", 3, 5, nc.ZonePartialDisruption, "3 > 2 and 0.6 >= 0.55"},
		{"case 26c", 3, 6, nc.ZoneNormal, "0.5 < 0.55"},
		{"case 26d", 0, 1, nc.ZoneNormal, "nothing not ready"},
		{"3.6 full", 1, 1, nc.ZoneFullDisruption, "no ready node and one not ready"},
		{"3.6 empty", 0, 0, nc.ZoneNormal, "an empty zone is not disrupted"},
		{"3.6 at the threshold", 11, 20, nc.ZonePartialDisruption, "11/20 is exactly 0.55: the share counts from the threshold on"},
		{"3.6 two of three", 2, 3, nc.ZoneNormal, "two not ready are never a partial disruption, whatever the share"},
	}
	for _, tt := range tests {
		if got := nc.ComputeZoneState(tt.total-tt.notReady, tt.notReady, 0.55); got != tt.want {
			t.Errorf("%s: ComputeZoneState(%d/%d) = %v, want %v (%s)", tt.id, tt.notReady, tt.total, got, tt.want, tt.reason)
		}
	}
}

func TestZoneKey(t *testing.T) {
	tests := []struct {
		id     string
		labels map[string]string
		want   string
		reason string
	}{
		{"3.6 topology", zoneLabels("r", "z"), "r/z", "the topology region and zone labels"},
		{"3.6 beta", map[string]string{v1.LabelFailureDomainBetaRegion: "r", v1.LabelFailureDomainBetaZone: "z"}, "r/z", "falling back to the beta failure-domain labels"},
		{"3.6 topology first", map[string]string{v1.LabelTopologyRegion: "r", v1.LabelTopologyZone: "z",
			v1.LabelFailureDomainBetaRegion: "old", v1.LabelFailureDomainBetaZone: "old"}, "r/z", "the topology labels win over the beta ones"},
		{"3.6 zone only", map[string]string{v1.LabelTopologyZone: "z"}, "z", "no region: the zone alone"},
		{"3.6 region only", map[string]string{v1.LabelTopologyRegion: "r"}, "r/", "a region with no zone is its own key"},
		{"3.6 no labels", nil, "", "nodes without the labels share the zone \"\""},
	}
	for _, tt := range tests {
		if got := nc.ZoneKey(tt.labels); got != tt.want {
			t.Errorf("%s: ZoneKey = %q, want %q (%s)", tt.id, got, tt.want, tt.reason)
		}
	}
}

func TestControllerTaintSpecCases(t *testing.T) {
	ready := cond(v1.NodeReady, v1.ConditionTrue, t12, t12)
	unknown := cond(v1.NodeReady, v1.ConditionUnknown, t12, t12)
	notReady := cond(v1.NodeReady, v1.ConditionFalse, t12, t12)
	later := t12.Add(5 * time.Second)
	z := zoneLabels("region1", "zone1")
	type nt struct {
		node, key string
		effect    v1.TaintEffect
	}
	tests := []struct {
		id, reason string
		steps      []step
		want       map[string][]nt // NoExecute and NoSchedule taints left on each node
	}{
		{
			id:     "case 28",
			reason: "3.5: Unknown gets unreachable:NoExecute and False gets not-ready:NoExecute after one pass and a tainting pass",
			steps:  []step{{at: t12, nodes: []*v1.Node{node("node0", t12, z, unknown), node("node1", t12, z, ready), node("node2", t12, z, notReady)}, monitor: true, taint: true}},
			want: map[string][]nt{
				"node0": {{"node0", nc.TaintUnreachable, v1.TaintEffectNoSchedule}, {"node0", nc.TaintUnreachable, v1.TaintEffectNoExecute}},
				"node1": nil,
				"node2": {{"node2", nc.TaintNotReady, v1.TaintEffectNoSchedule}, {"node2", nc.TaintNotReady, v1.TaintEffectNoExecute}},
			},
		},
		{
			id:     "case 29",
			reason: "3.5: node2 then posts Ready True: both its taints go at once",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("node0", t12, z, unknown), node("node1", t12, z, ready), node("node2", t12, z, notReady)}, monitor: true, taint: true},
				{at: later, status: map[string][]v1.NodeCondition{"node2": {cond(v1.NodeReady, v1.ConditionTrue, later, later)}}, monitor: true, taint: true},
			},
			want: map[string][]nt{
				"node0": {{"node0", nc.TaintUnreachable, v1.TaintEffectNoSchedule}, {"node0", nc.TaintUnreachable, v1.TaintEffectNoExecute}},
				"node1": nil,
				"node2": nil,
			},
		},
		{
			id:     "case 31",
			reason: "3.5: unreachable:NoExecute is swapped for not-ready:NoExecute when the kubelet posts False",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("node0", t12, z, unknown), node("node1", t12, z, ready)}, monitor: true, taint: true},
				{at: later, status: map[string][]v1.NodeCondition{"node0": {cond(v1.NodeReady, v1.ConditionFalse, later, later)}}, monitor: true},
			},
			want: map[string][]nt{
				"node0": {{"node0", nc.TaintNotReady, v1.TaintEffectNoSchedule}, {"node0", nc.TaintNotReady, v1.TaintEffectNoExecute}},
				"node1": nil,
			},
		},
		{
			id:     "5.6 every zone down",
			reason: "3.6/5.6: once every zone is FullDisruption nothing is evicted: the unreachable:NoExecute of node0 (zone2 went down first) and the not-ready:NoExecute of node2 (still posting False) are removed, node1 gets none; only the NoSchedule taints stay",
			steps: []step{
				{at: t12, nodes: []*v1.Node{node("node0", t2012, zoneLabels("region1", "zone2"), ready), node("node1", t2012, z, ready), node("node2", t2012, z, ready)}, monitor: true},
				{at: t12.Add(55 * time.Second), status: map[string][]v1.NodeCondition{
					"node1": {cond(v1.NodeReady, v1.ConditionTrue, t12.Add(55*time.Second), t12)},
					"node2": {cond(v1.NodeReady, v1.ConditionFalse, t12.Add(55*time.Second), t12.Add(55*time.Second))},
				}, monitor: true, taint: true},
				{at: t12.Add(2 * time.Minute), status: map[string][]v1.NodeCondition{
					"node2": {cond(v1.NodeReady, v1.ConditionFalse, t12.Add(2*time.Minute), t12.Add(55*time.Second))},
				}, monitor: true, taint: true},
			},
			want: map[string][]nt{
				"node0": {{"node0", nc.TaintUnreachable, v1.TaintEffectNoSchedule}},
				"node1": {{"node1", nc.TaintUnreachable, v1.TaintEffectNoSchedule}},
				"node2": {{"node2", nc.TaintNotReady, v1.TaintEffectNoSchedule}},
			},
		},
		{
			id:     "case 32a",
			reason: "3.5: NetworkUnavailable True maps to exactly one NoSchedule taint",
			steps:  []step{{at: t12, nodes: []*v1.Node{node("node0", t12, z, ready, cond(v1.NodeNetworkUnavailable, v1.ConditionTrue, t12, t12))}}},
			want:   map[string][]nt{"node0": {{"node0", nc.TaintNetworkUnavailable, v1.TaintEffectNoSchedule}}},
		},
		{
			id:     "case 32b",
			reason: "3.5: Ready False maps to not-ready:NoSchedule",
			steps:  []step{{at: t12, nodes: []*v1.Node{node("node0", t12, z, notReady)}}},
			want:   map[string][]nt{"node0": {{"node0", nc.TaintNotReady, v1.TaintEffectNoSchedule}}},
		},
		{
			id:     "case 32c",
			reason: "3.5: Ready Unknown maps to unreachable:NoSchedule",
			steps:  []step{{at: t12, nodes: []*v1.Node{node("node0", t12, z, unknown)}}},
			want:   map[string][]nt{"node0": {{"node0", nc.TaintUnreachable, v1.TaintEffectNoSchedule}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c, _ := run(t, healthy(), tt.steps)
			got := map[string][]nt{}
			for name := range tt.want {
				got[name] = nil
				for _, tn := range c.Taints(name) {
					got[name] = append(got[name], nt{name, tn.Key, tn.Effect})
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(nt{})); diff != "" {
				t.Errorf("%s: taints mismatch (-want +got):\n%s", tt.reason, diff)
			}
		})
	}
}
