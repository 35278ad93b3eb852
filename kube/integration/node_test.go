package integration

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
)

// TestNodeLeastPrivilege: the agent authenticates as system:node:node-1 (in
// system:nodes) against a server with Node,RBAC authorization and the
// NodeRestriction admission plugin. It can write its Node, its Lease, events
// and the status of its own pods; a status write for a pod bound to another
// node is refused with 403, which the engine reports once and then backs
// off instead of retrying in a hot loop.
func TestNodeLeastPrivilege(t *testing.T) {
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	ctx := context.Background()
	nodeClient, _ := client(t, controlplane.NodeUser(node1))

	if _, err := nodeClient.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node1}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("a node creates its own Node: %v", err)
	}
	if _, err := nodeClient.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node2}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("another node's Node is forbidden, got %v", err)
	}
	now := metav1.NewMicroTime(time.Now())
	if _, err := nodeClient.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: node1, Namespace: corev1.NamespaceNodeLease},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node1), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("a node creates its Lease: %v", err)
	}

	own := createPod(t, admin, ns, "own", node1, corev1.RestartPolicyAlways)
	other := createPod(t, admin, ns, "other", node2, corev1.RestartPolicyAlways)
	a := newAgent(t, controlplane.NodeUser(node1), false)
	var failures int
	a.engine = newEngineWithHook(t, a, func(verb string, err error) {
		if err != nil {
			failures++
			if !apierrors.IsForbidden(err) {
				t.Errorf("%s failed with %v, want 403", verb, err)
			}
		}
	})
	ev := map[string][]containerstate.Event{"app": running("containerd://a", epoch), "log": running("containerd://l", epoch)}
	for _, p := range []*corev1.Pod{own, other} {
		if _, _, err := a.cache.SetPodStatus(p, computeStatus(t, p, nil, ev, epoch), a.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	r := a.sync(t, false)
	if r.Synced != 1 || r.Failed != 1 || failures != 1 {
		t.Fatalf("own pod synced, the other refused once: %+v, %d failures", r, failures)
	}
	// New versions of the refused pod within its back-off cause no request.
	for i := 0; i < 5; i++ {
		st, _ := a.cache.GetPodStatus(other.UID)
		st.Message = "again"
		st.Reason = string(rune('a' + i))
		if _, _, err := a.cache.SetPodStatus(other, st, a.clock.Now()); err != nil {
			t.Fatal(err)
		}
		a.sync(t, false)
	}
	if failures != 1 || a.calls.get("GET pods") != 2 {
		t.Fatalf("no hot loop: %d failures, %d GETs", failures, a.calls.get("GET pods"))
	}
	a.clock.Step(time.Second)
	a.sync(t, false)
	if failures != 2 {
		t.Fatalf("after the back-off one more try, got %d failures", failures)
	}
	a.sync(t, true)
	if failures != 2 {
		t.Fatalf("the back-off doubled: still %d failures", failures)
	}
	if _, err := a.client.CoreV1().Pods(ns).Get(ctx, "other", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading another node's pod is forbidden, got %v", err)
	}
	tr := &kube.StatusTransport{Client: a.client}
	if _, err := tr.PatchPodStatus(ctx, ns, "other", []byte(`{"metadata":{"uid":"`+string(other.UID)+`"},"status":{"message":"x"}}`)); !apierrors.IsForbidden(err) {
		t.Errorf("writing another node's pod status is forbidden, got %v", err)
	}
	if _, err := tr.PatchPodStatus(ctx, ns, "own", []byte(`{"metadata":{"uid":"`+string(own.UID)+`"},"status":{"message":"mine"}}`)); err != nil {
		t.Errorf("writing its own pod's status is allowed, got %v", err)
	}
}
