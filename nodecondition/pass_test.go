package nodecondition_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

// TestPassSurvivesNextCall: a Pass owns its slices. On the code before
// this test, the tainting pass reused the monitor pass's arrays, so a kept
// monitor Pass showed its unreachable:NoSchedule taint turned into a second
// unreachable:NoExecute, and its ConditionWrite changed with the next status.
func TestPassSurvivesNextCall(t *testing.T) {
	c, err := nc.NewController(healthy())
	if err != nil {
		t.Fatal(err)
	}
	c.UpsertNode(t12, node("n", t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.UpsertNode(t12, node("ok", t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.Monitor(t12, nil)
	later := t12.Add(time.Minute)
	c.UpsertLease("ok", later, "2")
	p, err := c.Monitor(later, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%+v", p)
	if len(p.Taints) != 1 || p.Taints[0].Taint.Effect != v1.TaintEffectNoSchedule || len(p.Writes) != 1 {
		t.Fatalf("3.3/3.5: the pass that marks n Unknown writes it and adds unreachable:NoSchedule, got %+v", p)
	}
	if q, err := c.Taint(later); err != nil || len(q.Taints) != 1 || q.Taints[0].Taint.Effect != v1.TaintEffectNoExecute {
		t.Fatalf("3.5: the tainting pass adds unreachable:NoExecute, got %+v %v", q, err)
	}
	hb := later.Add(time.Second)
	if _, err := c.UpdateStatus(hb, "n", []v1.NodeCondition{cond(v1.NodeReady, v1.ConditionFalse, hb, hb)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Monitor(hb.Add(4*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, fmt.Sprintf("%+v", p)); diff != "" {
		t.Errorf("a kept Pass changed under later calls (-then +now):\n%s", diff)
	}
}
