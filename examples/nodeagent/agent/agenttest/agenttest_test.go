package agenttest_test

import (
	"context"
	"testing"

	"github.com/nodestate/nodestate/examples/nodeagent/agent/agenttest"
	"github.com/nodestate/nodestate/statussync/statussynctest"
	"go.uber.org/goleak"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCluster(t *testing.T) {
	ctx := context.Background()
	c := agenttest.NewCluster(statussynctest.NewAPI(1))
	if c.Node() != nil || c.Lease() != nil {
		t.Fatal("a new cluster has a node or a lease")
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	if err := c.UpdateNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
	node.Labels = map[string]string{"changed": "yes"}
	if err := c.UpdateNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	got := c.Node()
	if len(got.Status.Conditions) != 1 || got.Labels != nil {
		t.Errorf("node %+v: want the new status and the old metadata", got)
	}
	if err := c.UpdateNode(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other"}}); !apierrors.IsNotFound(err) {
		t.Errorf("status of another node: %v, want NotFound", err)
	}
	for range 2 {
		if err := c.RenewLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}); err != nil {
			t.Fatal(err)
		}
	}
	pod, err := c.CreatePod(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"}})
	if err != nil || pod.ResourceVersion == "" {
		t.Fatalf("create pod: %+v %v", pod, err)
	}
	want := map[string]int{"create node": 1, "patch node status": 2, "create lease": 1, "update lease": 1, "create pod": 1}
	calls := c.Calls()
	for k, v := range want {
		if calls[k] != v {
			t.Errorf("calls[%q] = %d, want %d (all: %v)", k, calls[k], v, calls)
		}
	}
}
