package integration

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
)

// TestFleet: a kube.Fleet of 3 nodes in one process, as a user bound to
// kube.FleetClusterRole and nothing else, on a control plane with the real
// controller manager and scheduler. The node-lifecycle controller sees every
// node Ready (it removes the not-ready taint the API server put on each new
// Node); a Deployment of 6 pods spread over the nodes becomes Available,
// each pod with an IP from its node's pod CIDR; each node renews its own
// Lease; and once Run returns no goroutine of the fleet is left.
func TestFleet(t *testing.T) {
	const user = "nodestate-fleet"
	p := fullPlaneWith(t, controlplane.Options{Users: []string{user}})
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, kube.FleetClusterRole(user), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := namespaceWithServiceAccount(t, admin)

	// The fleet's client has an HTTP client of its own, whose connections
	// are closed after Run, so that the goroutine check sees only the
	// fleet's own goroutines.
	cfg, err := p.Config(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg = rest.CopyConfig(cfg)
	reqs := &requestCounter{counts: map[string]int{}}
	cfg.Wrap(reqs.wrap)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the fleet's role bound", time.Minute, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName!=", Limit: 1})
		return err == nil, nil
	})

	opts := kube.DefaultFleetOptions("fleet-", 3)
	opts.Shard = "t"
	f, err := kube.NewFleet(opts, cs)
	if err != nil {
		t.Fatal(err)
	}
	before := goleak.IgnoreCurrent()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(runCtx) }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stop()
			<-done
		}
	})
	names := []string{"fleet-0", "fleet-1", "fleet-2"}

	cidrs := map[string]netip.Prefix{}
	waitFor(t, "every node Ready and untainted by the node-lifecycle controller", time.Minute, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			n, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			if c := findNodeCond(n.Status.Conditions, corev1.NodeReady); c == nil || c.Status != corev1.ConditionTrue {
				return false, nil
			}
			for _, taint := range n.Spec.Taints {
				if taint.Key == corev1.TaintNodeNotReady || taint.Key == corev1.TaintNodeUnreachable {
					return false, nil
				}
			}
			if n.Labels[kube.FleetShardLabel] != "t" {
				t.Fatalf("node %s: labels %v, want %s=t", name, n.Labels, kube.FleetShardLabel)
			}
			cidrs[name] = netip.MustParsePrefix(podCIDROf(f, name))
		}
		return true, nil
	})
	renewed := map[string]time.Time{}
	for _, name := range names {
		l, err := admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(l.Spec.HolderIdentity, "") != name || len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Name != name {
			t.Errorf("lease %s: holder %v, owners %v; want the node itself", name, ptr.Deref(l.Spec.HolderIdentity, ""), l.OwnerReferences)
		}
		renewed[name] = l.Spec.RenewTime.Time
	}

	labels := map[string]string{"app": "spread"}
	tmpl := webTemplate(labels, nil, corev1.RestartPolicyAlways)
	tmpl.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
		WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](6), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	if _, err := admin.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Deployment Available with 6 pods", time.Minute, func(ctx context.Context) (bool, error) {
		d, err := admin.AppsV1().Deployments(ns).Get(ctx, "spread", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				return d.Status.AvailableReplicas == 6 && d.Status.ReadyReplicas == 6, nil
			}
		}
		return false, nil
	})
	pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=spread"})
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[string]int{}
	for _, pod := range pods.Items {
		perNode[pod.Spec.NodeName]++
		ip, err := netip.ParseAddr(pod.Status.PodIP)
		if err != nil || !cidrs[pod.Spec.NodeName].Contains(ip) {
			t.Errorf("pod %s on %s: IP %q outside the node's pod CIDR %v", pod.Name, pod.Spec.NodeName, pod.Status.PodIP, cidrs[pod.Spec.NodeName])
		}
	}
	for _, name := range names {
		if perNode[name] != 2 {
			t.Errorf("pods per node %v, want 2 on each of %v", perNode, names)
			break
		}
	}

	waitFor(t, "every node's Lease renewed", time.Minute, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			l, err := admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
			if err != nil || !l.Spec.RenewTime.After(renewed[name]) {
				return false, err
			}
		}
		return true, nil
	})
	for _, n := range f.Nodes() {
		if st := n.Stats(); st.LeaseRenewals < 2 || st.LeaseErrors != 0 || st.NodeErrors != 0 || st.Admitted != 2 {
			t.Errorf("node %s: %+v, want 2 pods, 2 renewals or more and no failed write", n.Name(), st)
		}
		// Each status write of a pod comes back from the watch as an
		// update; none of them made the node sync the pod again.
		if st := n.Stats(); st.PodUpdates < 2 || st.PodUpdatesSynced != 0 {
			t.Errorf("node %s: %d pod updates, %d of them synced; want 2 or more, none synced", n.Name(), st.PodUpdates, st.PodUpdatesSynced)
		}
	}
	// The status engine patches without reading the pod first: the watch
	// delivered it, and the PATCH's resourceVersion precondition keeps the
	// write safe (no GET of a single pod at all).
	if got := reqs.get(); got["GET pod"] != 0 || got["PATCH pod status"] < 6 {
		t.Errorf("the fleet's requests %v: want no GET of a pod and a status PATCH per pod or more", got)
	}

	stop()
	stopped = true
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the fleet's Run ended with %v", err)
	}
	hc.CloseIdleConnections()
	if err := goleak.Find(before); err != nil {
		t.Errorf("goroutines left after Run returned: %v", err)
	}
}

// TestFleetCommand: cmd/node --nodes 2 runs a fleet whose two nodes each run
// the pod bound to them, and says what it did when interrupted. It runs as
// the admin on the package's shared control plane (TestFleet checks the
// fleet's own role).
func TestFleetCommand(t *testing.T) {
	p := needPlane(t)
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	kubeconfig, err := p.Kubeconfig(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	bin := buildCommand(t, "node")
	interrupt := startCommand(t, bin, "--kubeconfig", kubeconfig, "--nodes", "2", "--name-prefix", "cmdfleet-", "--first", "3",
		"--shard", "cmd", "--fleet-cidr", "10.250.0.0/16", "--port", "0")
	ctx := context.Background()
	for _, node := range []string{"cmdfleet-3", "cmdfleet-4"} {
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, boundPod(ns, "on-"+node, node, corev1.RestartPolicyAlways, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for node, prefix := range map[string]string{"cmdfleet-3": "10.250.3.", "cmdfleet-4": "10.250.4."} {
		eventually(t, "the fleet's node "+node+" runs its pod", func() bool {
			p := getPod(t, admin, ns, "on-"+node)
			return p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Status.PodIP, prefix)
		})
	}
	out, err := interrupt()
	if err != nil {
		t.Fatalf("node command: %v\n%s", err, out)
	}
	if !strings.Contains(out, "fleet cmd: stopped; 2 nodes, 2 pods admitted, 0 rejected, 0 finished, 2 running") {
		t.Fatalf("the command's summary:\n%s", out)
	}
}

// podCIDROf is the pod CIDR of the fleet's node called name.
func podCIDROf(f *kube.Fleet, name string) string {
	for _, n := range f.Nodes() {
		if n.Name() == name {
			return n.PodCIDR()
		}
	}
	return ""
}

// requestCounter counts a client's requests about single pods: "GET pod" and
// "PATCH pod status" (lists and watches are not counted).
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		// /api/v1/namespaces/NS/pods/NAME[/status]
		parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
		if len(parts) >= 6 && parts[0] == "api" && parts[2] == "namespaces" && parts[4] == "pods" {
			key := ""
			switch {
			case len(parts) == 6 && req.Method == http.MethodGet:
				key = "GET pod"
			case len(parts) == 7 && parts[6] == "status" && req.Method == http.MethodPatch:
				key = "PATCH pod status"
			}
			if key != "" {
				c.mu.Lock()
				c.counts[key]++
				c.mu.Unlock()
			}
		}
		return rt.RoundTrip(req)
	})
}

func (c *requestCounter) get() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}
