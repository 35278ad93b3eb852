package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/podphase"
)

// fullPlane starts a control plane of its own for t with the real
// kube-controller-manager and kube-scheduler and kubelet identities for
// nodes, stopped when t ends. It skips under -short and fails when the
// binaries could not be built.
func fullPlane(t *testing.T, nodes ...string) *controlplane.Plane {
	t.Helper()
	return fullPlaneWith(t, controlplane.Options{Nodes: nodes})
}

// fullPlaneWith is fullPlane with the identities of opts (its Controllers
// is set).
func fullPlaneWith(t *testing.T, opts controlplane.Options) *controlplane.Plane {
	t.Helper()
	needPlane(t)
	start := time.Now()
	opts.Controllers = true
	p, err := controlplane.StartWith(context.Background(), binDir, opts)
	if err != nil {
		t.Fatalf("starting the control plane with controllers: %v", err)
	}
	t.Logf("control plane with controller manager and scheduler ready in %v", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control plane logs:\n%s", p.Log())
		}
		if err := p.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return p
}

// registerNode registers name through client-go as the node itself
// (system:node:NAME): a Ready Node with room for 110 pods, and its Lease.
func registerNode(t *testing.T, p *controlplane.Plane, name string) {
	t.Helper()
	ctx := context.Background()
	cs, err := p.Client(controlplane.NodeUser(name))
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity, Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}}},
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("registering node %s: %v", name, err)
	}
	renew := metav1.NewMicroTime(now.Time)
	if _, err := cs.CoordinationV1().Leases(nodecondition.LeaseNamespace).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: nodecondition.LeaseNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &renew},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the Lease of node %s: %v", name, err)
	}
}

// waitFor polls cond every 200 ms until it holds, fails or timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("waiting %v for %s: %v", timeout, what, err)
	}
}

// namespaceWithServiceAccount creates a namespace and waits for the
// controller manager to create its default ServiceAccount, without which
// the ServiceAccount admission plugin refuses pods.
func namespaceWithServiceAccount(t *testing.T, admin kubernetes.Interface) string {
	t.Helper()
	ns := namespace(t, admin)
	waitFor(t, "the default ServiceAccount of "+ns, time.Minute, func(ctx context.Context) (bool, error) {
		_, err := admin.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	return ns
}

// TestSchedulerBindsDeploymentPod: on a control plane with the real
// kube-controller-manager and kube-scheduler, a Node registered through
// client-go with the node's own identity receives the pod of a one-replica
// Deployment: the Deployment controller creates a ReplicaSet, the ReplicaSet
// controller its pod, the scheduler binds that pod to the node (spec.nodeName,
// a Scheduled event), and the real kubectl's `get pods -o wide` shows it there
// with the READY, STATUS and RESTARTS that podphase.Columns computes. No
// kubelet runs the pod, so it stays Pending.
func TestSchedulerBindsDeploymentPod(t *testing.T) {
	const node = "sched-node"
	p := fullPlane(t, node)
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	registerNode(t, p, node)
	ns := namespaceWithServiceAccount(t, admin)
	ctx := context.Background()

	labels := map[string]string{"app": "web"}
	_, err = admin.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/web:1"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var pod *corev1.Pod
	waitFor(t, "the Deployment's pod bound to "+node, time.Minute, func(ctx context.Context) (bool, error) {
		list, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			if list.Items[i].Spec.NodeName != "" {
				pod = &list.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if pod.Spec.NodeName != node {
		t.Fatalf("pod %s bound to %q, want %q", pod.Name, pod.Spec.NodeName, node)
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "ReplicaSet" {
		t.Fatalf("pod %s is controlled by %+v, want a ReplicaSet", pod.Name, owner)
	}
	rs, err := admin.AppsV1().ReplicaSets(ns).Get(ctx, owner.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rsOwner := metav1.GetControllerOf(rs); rsOwner == nil || rsOwner.Kind != "Deployment" || rsOwner.Name != "web" {
		t.Fatalf("ReplicaSet %s is controlled by %+v, want Deployment web", rs.Name, rsOwner)
	}
	waitFor(t, "the scheduler's Scheduled event", 30*time.Second, func(ctx context.Context) (bool, error) {
		evs, err := admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", pod.Name).String()})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Reason == "Scheduled" && strings.Contains(ev.Message, node) {
				return true, nil
			}
		}
		return false, nil
	})

	out, err := p.Kubectl(ctx, controlplane.Admin, "get", "pods", "-o", "wide", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl get pods -o wide:\n%s", out)
	header, rows := kubectlTable(t, out)
	row, ok := rows[pod.Name]
	if !ok {
		t.Fatalf("kubectl lists no row for %s:\n%s", pod.Name, out)
	}
	cur, err := admin.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := podphase.Columns(cur, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for col, w := range map[string]string{"NODE": node, "READY": want.Ready, "STATUS": want.Status, "RESTARTS": want.Restarts} {
		if got := row[header[col]]; got != w {
			t.Errorf("kubectl's %s column for %s is %q, want %q", col, pod.Name, got, w)
		}
	}
	if row[header["STATUS"]] != "Pending" {
		t.Errorf("no kubelet runs the pod, so kubectl shows it Pending, got %q", row[header["STATUS"]])
	}
}

// kubectlTable splits kubectl's table output into the header's column
// indexes and the rows by NAME. Columns are separated by two or more spaces
// (a column such as NOMINATED NODE has one space inside it).
func kubectlTable(t *testing.T, out []byte) (map[string]int, map[string][]string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	header := map[string]int{}
	rows := map[string][]string{}
	first := true
	for sc.Scan() {
		cells := splitColumns(sc.Text())
		if first {
			for i, c := range cells {
				header[c] = i
			}
			first = false
			continue
		}
		if len(cells) > 0 {
			rows[cells[0]] = cells
		}
	}
	if _, ok := header["NAME"]; !ok {
		t.Fatalf("kubectl printed no table header:\n%s", out)
	}
	return header, rows
}

func splitColumns(line string) []string {
	var cells []string
	for _, c := range strings.Split(line, "  ") {
		if c = strings.TrimSpace(c); c != "" {
			cells = append(cells, c)
		}
	}
	return cells
}

// TestControlPlanePortTaken: a port that another process takes between its
// pick and its bind (seen in CI: the controller manager exited with status 1)
// makes StartWith start again with new ports; a port taken in every start
// fails with a message that says so.
func TestControlPlanePortTaken(t *testing.T) {
	needPlane(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	taken := held.Addr().(*net.TCPAddr).Port
	// takenAt returns a Ports that hands out the held port at index i in the
	// first `times` starts.
	takenAt := func(i, times int) func(int) ([]int, error) {
		calls := 0
		return func(n int) ([]int, error) {
			calls++
			ports, err := controlplane.FreePorts(n)
			if err == nil && calls <= times {
				ports[i] = taken
			}
			return ports, err
		}
	}

	t.Run("controller manager, once", func(t *testing.T) {
		p := fullPlaneWith(t, controlplane.Options{Ports: takenAt(3, 1)})
		if p.Attempts != 2 {
			t.Errorf("Attempts = %d, want 2", p.Attempts)
		}
	})
	t.Run("etcd, every time", func(t *testing.T) {
		p, err := controlplane.StartWith(context.Background(), binDir, controlplane.Options{Ports: takenAt(0, controlplane.StartAttempts)})
		if err == nil {
			_ = p.Stop()
			t.Fatal("started with etcd's port taken in every start")
		}
		if want := fmt.Sprintf("a port was taken in each of %d starts", controlplane.StartAttempts); !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	})
}
