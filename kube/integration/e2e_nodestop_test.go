package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/nodecondition/simulation"
)

// stopTolerance is what a measured time may lie outside the simulated
// window: the API's timestamps have whole seconds, and the controller sees a
// Lease renewal through its informer a moment after its renewTime.
const stopTolerance = 1500 * time.Millisecond

// TestNodeStops: one of two kube.Nodes stops. The real node-lifecycle
// controller marks it Unknown and taints it, and the taint-eviction controller
// evicts its pods (which tolerate unreachable for 5 s), at the times
// nodecondition's simulation gives for the same settings, within the window
// its monitor phase allows plus stopTolerance; the ReplicaSet controller
// recreates the evicted pods on the other node, where they run.
func TestNodeStops(t *testing.T) {
	const gone, ok = "stop-1", "stop-2"
	p := fullPlane(t, gone, ok)
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespaceWithServiceAccount(t, admin)
	ctx := context.Background()

	cs, err := p.Client(controlplane.NodeUser(gone))
	if err != nil {
		t.Fatal(err)
	}
	opts := kube.DefaultOptions(gone)
	opts.PodCIDR = "10.244.31.0/24"
	n, stopNode := startStoppableNode(t, cs, opts)

	labels := map[string]string{"app": "web"}
	tmpl := webTemplate(labels, nil, corev1.RestartPolicyAlways)
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		tmpl.Spec.Tolerations = append(tmpl.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](5)})
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	if _, err := admin.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	readyOn := func(node string) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			list, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				return false, err
			}
			ready := 0
			for _, pod := range list.Items {
				if c := findCond(pod.Status.Conditions, corev1.PodReady); pod.Spec.NodeName == node && pod.DeletionTimestamp == nil && c != nil && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
			return ready == 2, nil
		}
	}
	waitFor(t, "two web pods Ready on "+gone, 2*time.Minute, readyOn(gone))
	before, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	runNodeOn(t, p, ok, "10.244.32.0/24")

	if st := n.Stats(); st.NodeReports == 0 || st.NodeErrors != 0 {
		t.Fatalf("the node wrote its status %d times and failed %d times, want every write through", st.NodeReports, st.NodeErrors)
	}
	if err := stopNode(); !errors.Is(err, context.Canceled) {
		t.Fatalf("the node's Run ended with %v", err)
	}
	lease, err := admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, gone, metav1.GetOptions{})
	if err != nil || lease.Spec.RenewTime == nil {
		t.Fatalf("the stopped node's lease: %v", err)
	}
	t0 := lease.Spec.RenewTime.Time

	sc, err := simulation.ParseScenario(fmt.Sprintf("name node stops\nduration 2m\npass-duration 10ms\nwindow 10\nnode %s down=0s- pods=%s:5,%s:5\nnode %s\n",
		gone, before.Items[0].Name, before.Items[1].Name, ok))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := simulation.Simulate(sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("nodecondition's simulation:\n%s", tl.Table())
	check := func(what string, kind simulation.EntryKind, subject string, at time.Time) {
		t.Helper()
		e, found := tl.Find(kind, gone, subject)
		if !found {
			t.Fatalf("the simulation has no %s", what)
		}
		got := at.Sub(t0)
		t.Logf("%s: %v after the last renewal; simulated %v..%v", what, got.Round(time.Millisecond), e.Earliest, e.Latest)
		if got < e.Earliest-stopTolerance || got > e.Latest+stopTolerance {
			t.Errorf("%s came %v after the last renewal, outside the simulated %v..%v (± %v)", what, got, e.Earliest, e.Latest, stopTolerance)
		}
	}

	waitFor(t, gone+" Unknown, tainted, its pods evicted", 3*time.Minute, func(ctx context.Context) (bool, error) {
		for _, pod := range before.Items {
			cur, err := admin.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			if err == nil && cur.UID == pod.UID && cur.DeletionTimestamp == nil {
				return false, nil
			}
		}
		return true, nil
	})
	node, err := admin.CoreV1().Nodes().Get(ctx, gone, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := findNodeCond(node.Status.Conditions, corev1.NodeReady)
	if ready == nil || ready.Status != corev1.ConditionUnknown || ready.Reason != "NodeStatusUnknown" {
		t.Fatalf("Ready of the stopped node: %+v", ready)
	}
	check("Ready Unknown", simulation.KindCondition, string(corev1.NodeReady), ready.LastTransitionTime.Time)
	for _, taint := range node.Spec.Taints {
		if taint.Key == corev1.TaintNodeUnreachable && taint.Effect == corev1.TaintEffectNoExecute && taint.TimeAdded != nil {
			check("the unreachable:NoExecute taint", simulation.KindTaintAdded, corev1.TaintNodeUnreachable+":NoExecute", taint.TimeAdded.Time)
		}
	}
	for _, pod := range before.Items {
		cur, err := admin.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || cur.UID != pod.UID {
			continue // already gone: its deletion time is not on record
		}
		evicted := cur.DeletionTimestamp.Add(-time.Duration(ptr.Deref(cur.DeletionGracePeriodSeconds, 0)) * time.Second)
		check("the eviction of "+pod.Name, simulation.KindPodDeleted, "default/"+pod.Name, evicted)
		if c := findCond(cur.Status.Conditions, corev1.DisruptionTarget); c == nil || c.Reason != "DeletionByTaintManager" {
			t.Errorf("pod %s: DisruptionTarget %+v, want reason DeletionByTaintManager", pod.Name, c)
		}
	}
	waitFor(t, "the ReplicaSet's new pods Ready on "+ok, 2*time.Minute, readyOn(ok))
}
