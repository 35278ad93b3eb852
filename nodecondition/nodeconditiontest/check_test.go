package nodeconditiontest_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	nc "github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/nodecondition/nodeconditiontest"
	sim "github.com/nodestate/nodestate/nodecondition/simulation"
)

const (
	ne = "node.kubernetes.io/unreachable:NoExecute"
	nr = "node.kubernetes.io/not-ready:NoExecute"
)

func scenario() sim.Scenario {
	// The admission plugin is off, so "bare" has no toleration at all and p
	// only its own 300 s ones.
	return sim.Scenario{Duration: 10 * time.Minute, NoDefaultTolerationSeconds: true, Nodes: []sim.Node{
		{Name: "n", Pods: []sim.Pod{{Name: "p", Tolerations: nc.WithDefaultTolerations(nil, 300, 300)}, {Name: "bare"}}},
	}}
}

func TestChecksCatchViolations(t *testing.T) {
	s := 10 * time.Second
	tests := []struct {
		id      string
		check   func(sim.Timeline) error
		entries []sim.Entry
		wantErr string // "" means the timeline is fine
	}{
		{"ordered ok", nodeconditiontest.CheckOrdered, []sim.Entry{{At: s}, {At: s}, {At: 2 * s}}, ""},
		{"ordered bad", nodeconditiontest.CheckOrdered, []sim.Entry{{At: 2 * s}, {At: s}}, "is before"},
		{"early eviction", func(tl sim.Timeline) error { return nodeconditiontest.CheckNoEarlyEviction(scenario(), tl) }, []sim.Entry{
			{At: s, Node: "n", Kind: sim.KindTaintAdded, Subject: ne},
			{At: 100 * time.Second, Node: "n", Kind: sim.KindPodDeleted, Subject: "default/p"},
		}, "before its tolerations allow"},
		{"eviction on time", func(tl sim.Timeline) error { return nodeconditiontest.CheckNoEarlyEviction(scenario(), tl) }, []sim.Entry{
			{At: s, Node: "n", Kind: sim.KindTaintAdded, Subject: ne},
			{At: s, Node: "n", Kind: sim.KindPodDeleted, Subject: "default/bare"},
			{At: 31 * s, Node: "n", Kind: sim.KindPodDeleted, Subject: "default/p"},
		}, ""},
		{"swap keeps the episode", func(tl sim.Timeline) error { return nodeconditiontest.CheckNoEarlyEviction(scenario(), tl) }, []sim.Entry{
			{At: s, Node: "n", Kind: sim.KindTaintAdded, Subject: ne},
			{At: 2 * s, Node: "n", Kind: sim.KindTaintRemoved, Subject: ne},
			{At: 2 * s, Node: "n", Kind: sim.KindTaintAdded, Subject: nr},
			{At: 31 * s, Node: "n", Kind: sim.KindPodDeleted, Subject: "default/p"},
		}, ""},
		{"deletion without taint", func(tl sim.Timeline) error { return nodeconditiontest.CheckNoEarlyEviction(scenario(), tl) }, []sim.Entry{
			{At: s, Node: "n", Kind: sim.KindPodDeleted, Subject: "default/p"},
		}, "had no NoExecute taint"},
		{"recovery bad", func(tl sim.Timeline) error { return nodeconditiontest.CheckRecovery(scenario(), tl) }, []sim.Entry{
			{At: s, Node: "n", Kind: sim.KindTaintAdded, Subject: ne},
			{At: 2 * s, Node: "n", Kind: sim.KindCondition, Subject: "Ready", From: "Unknown", To: "True"},
		}, "still has"},
		{"recovery ok", func(tl sim.Timeline) error { return nodeconditiontest.CheckRecovery(scenario(), tl) }, []sim.Entry{
			{At: s, Node: "n", Kind: sim.KindTaintAdded, Subject: ne},
			{At: 2 * s, Node: "n", Kind: sim.KindCondition, Subject: "Ready", From: "Unknown", To: "True"},
			{At: 2*s + 5*time.Second, Node: "n", Kind: sim.KindTaintRemoved, Subject: ne},
		}, ""},
		{"full disruption", nodeconditiontest.CheckNoEvictionInFullDisruption, []sim.Entry{
			{At: s, Kind: sim.KindZone, Subject: "a", From: "Normal", To: "FullDisruption"},
			{At: 2 * s, Node: "n", Kind: sim.KindTaintAdded, Subject: ne},
		}, "every zone is FullDisruption"},
		{"partial full", nodeconditiontest.CheckNoEvictionInFullDisruption, []sim.Entry{
			{At: s, Kind: sim.KindZone, Subject: "a", From: "Normal", To: "FullDisruption"},
			{At: s, Kind: sim.KindZone, Subject: "b", From: "Initial", To: "Normal"},
			{At: 2 * s, Node: "n", Kind: sim.KindTaintAdded, Subject: ne},
		}, ""},
		{"exclusive", nodeconditiontest.CheckExclusiveNoExecute, []sim.Entry{
			{At: s, Node: "n", Kind: sim.KindTaintAdded, Subject: ne},
			{At: 2 * s, Node: "n", Kind: sim.KindTaintAdded, Subject: nr},
		}, "both NoExecute taints"},
		{"unknown while heartbeating", func(tl sim.Timeline) error { return nodeconditiontest.CheckNeverUnknown(scenario(), tl) }, []sim.Entry{
			{At: 55 * time.Second, Node: "n", Kind: sim.KindCondition, Subject: "Ready", From: "True", To: "Unknown"},
		}, "went Unknown"},
	}
	for _, tt := range tests {
		err := tt.check(sim.Timeline{Entries: tt.entries})
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.id, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: err = %v, want one containing %q", tt.id, err, tt.wantErr)
		}
	}
}

func TestCheckConditionUpdate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := func(st v1.ConditionStatus, tr time.Time) []v1.NodeCondition {
		return []v1.NodeCondition{{Type: v1.NodeReady, Status: st, LastTransitionTime: metav1.NewTime(tr)}}
	}
	if err := nodeconditiontest.CheckConditionUpdate(c(v1.ConditionTrue, t0), c(v1.ConditionTrue, t0)); err != nil {
		t.Error(err)
	}
	if err := nodeconditiontest.CheckConditionUpdate(c(v1.ConditionTrue, t0), c(v1.ConditionFalse, t0.Add(time.Second))); err != nil {
		t.Error(err)
	}
	if err := nodeconditiontest.CheckConditionUpdate(c(v1.ConditionTrue, t0), c(v1.ConditionTrue, t0.Add(time.Second))); err == nil {
		t.Error("a moved transition time without a flip passed")
	}
	if err := nodeconditiontest.CheckConditionUpdate(c(v1.ConditionTrue, t0), c(v1.ConditionFalse, t0)); err == nil {
		t.Error("a flip without a new transition time passed")
	}
}

func TestGeneratorsStayInBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		horizon := 5 * time.Minute
		for _, iv := range nodeconditiontest.Outages(horizon, 3).Draw(t, "outages") {
			if iv.From < 0 || iv.From >= horizon || (iv.To != 0 && iv.To <= iv.From) {
				t.Fatalf("bad outage %+v", iv)
			}
		}
		for _, iv := range nodeconditiontest.ShortOutages(horizon, 30*time.Second, 3).Draw(t, "short") {
			if iv.To-iv.From > 30*time.Second || iv.To >= horizon {
				t.Fatalf("outage %+v longer than 30s or past the horizon", iv)
			}
		}
		sc := nodeconditiontest.Scenario().Draw(t, "scenario")
		if err := sc.Validate(); err != nil {
			t.Fatalf("generated an invalid scenario: %v", err)
		}
		s := nodeconditiontest.Sample().Draw(t, "sample")
		for _, o := range s.Signals {
			if o.Known && (o.Available < 0 || o.Available > o.Capacity) {
				t.Fatalf("bad observation %+v", o)
			}
		}
	})
}
