package integration

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/kube/internal/explain"
)

// TestKubectlPluginPredictsNodeStop: kubectl nodestate explain node, run
// right after a kube.Node stopped, predicts what the real node-lifecycle and
// taint-eviction controllers then do: Ready Unknown, the unreachable
// NoExecute taint and the eviction of the pod tolerating it for 5 s come
// within the predicted windows ± stopTolerance (as TestNodeStops measures),
// and the pod tolerating it forever stays.
func TestKubectlPluginPredictsNodeStop(t *testing.T) {
	const gone, ok = "pstop-1", "pstop-2"
	p := fullPlane(t, gone, ok)
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespaceWithServiceAccount(t, admin)
	ctx := context.Background()
	buildPlugin(t)

	cs, err := p.Client(controlplane.NodeUser(gone))
	if err != nil {
		t.Fatal(err)
	}
	opts := kube.DefaultOptions(gone)
	opts.PodCIDR = "10.244.51.0/24"
	_, stopNode := startStoppableNode(t, cs, opts)
	runNodeOn(t, p, ok, "10.244.52.0/24")

	for name, seconds := range map[string]*int64{"five": ptr.To[int64](5), "forever": nil} {
		pod := boundPod(ns, name, gone, corev1.RestartPolicyAlways, nil)
		for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds})
		}
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "five and forever Ready on "+gone, time.Minute, func(ctx context.Context) (bool, error) {
		for _, name := range []string{"five", "forever"} {
			cur, err := admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if c := findCond(cur.Status.Conditions, corev1.PodReady); c == nil || c.Status != corev1.ConditionTrue {
				return false, nil
			}
		}
		return true, nil
	})

	// A node that never posted its status gets the startup grace period from
	// its creation instead; wait for both nodes' first status.
	waitFor(t, "both nodes Ready", time.Minute, func(ctx context.Context) (bool, error) {
		for _, name := range []string{gone, ok} {
			node, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if c := findNodeCond(node.Status.Conditions, corev1.NodeReady); c == nil || c.Status != corev1.ConditionTrue {
				return false, nil
			}
		}
		return true, nil
	})
	// Let the controller see the node's regular heartbeats for a while, as
	// for any node that has been up for more than a moment.
	waitFor(t, "two lease renewals after the nodes' first status", time.Minute, func(ctx context.Context) (bool, error) {
		node, err := admin.CoreV1().Nodes().Get(ctx, gone, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		first := findNodeCond(node.Status.Conditions, corev1.NodeReady).LastTransitionTime.Time
		lease, err := admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, gone, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return lease.Spec.RenewTime != nil && lease.Spec.RenewTime.Time.Sub(first) > 15*time.Second, nil
	})
	if err := stopNode(); !errors.Is(err, context.Canceled) {
		t.Fatalf("the node's Run ended with %v", err)
	}
	raw, err := kubectlPlugin(ctx, p, "nodestate", "explain", "node", gone, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	text, err := kubectlPlugin(ctx, p, "nodestate", "explain", "node", gone)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl nodestate explain node %s, right after it stopped:\n%s", gone, text)
	var r explain.NodeReport
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("-o json: %v\n%s", err, raw)
	}
	steps := map[string]explain.PredictionStep{}
	for _, s := range r.Prediction.Steps {
		steps[s.Event+" "+s.Subject] = s
	}
	check := func(what, key string, at time.Time) {
		t.Helper()
		s, found := steps[key]
		if !found || s.Never {
			t.Fatalf("the prediction has no %s: %+v", key, r.Prediction.Steps)
		}
		t.Logf("%s at %v after the last sign of life; predicted %s..%s", what, at.Sub(r.Prediction.From).Round(time.Millisecond), s.Earliest, s.Latest)
		if at.Before(s.At.Add(-stopTolerance)) || at.After(s.AtLatest.Add(stopTolerance)) {
			t.Errorf("%s came at %v, outside the predicted %v..%v (± %v)", what, at, s.At, s.AtLatest, stopTolerance)
		}
	}

	waitFor(t, "five evicted", 3*time.Minute, func(ctx context.Context) (bool, error) {
		cur, err := admin.CoreV1().Pods(ns).Get(ctx, "five", metav1.GetOptions{})
		return err == nil && cur.DeletionTimestamp != nil, err
	})
	node, err := admin.CoreV1().Nodes().Get(ctx, gone, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := findNodeCond(node.Status.Conditions, corev1.NodeReady)
	if ready == nil || ready.Status != corev1.ConditionUnknown {
		t.Fatalf("Ready of the stopped node: %+v", ready)
	}
	check("Ready Unknown", "condition Ready: True -> Unknown", ready.LastTransitionTime.Time)
	tainted := false
	for _, taint := range node.Spec.Taints {
		if taint.Key == corev1.TaintNodeUnreachable && taint.Effect == corev1.TaintEffectNoExecute && taint.TimeAdded != nil {
			check("the unreachable:NoExecute taint", "taint added "+corev1.TaintNodeUnreachable+":NoExecute", taint.TimeAdded.Time)
			tainted = true
		}
	}
	if !tainted {
		t.Errorf("no unreachable:NoExecute taint on %s: %+v", gone, node.Spec.Taints)
	}
	five := getPod(t, admin, ns, "five")
	evicted := five.DeletionTimestamp.Add(-time.Duration(ptr.Deref(five.DeletionGracePeriodSeconds, 0)) * time.Second)
	check("the eviction of five", "pod evicted "+ns+"/five", evicted)
	if s := steps["pod evicted "+ns+"/forever"]; !s.Never {
		t.Errorf("forever: %+v, want never evicted", s)
	}
	if f := getPod(t, admin, ns, "forever"); f.DeletionTimestamp != nil {
		t.Errorf("forever was deleted at %v", f.DeletionTimestamp)
	}
}
