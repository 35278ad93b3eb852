package integration

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/podphase"
)

// TestNodeAgentCommand runs kube/cmd/nodeagent briefly against the
// test server and checks what it left there: its Node and Lease, its pods
// bound to it with the statuses and events of a kubelet.
func TestNodeAgentCommand(t *testing.T) {
	p := needPlane(t)
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	kubeconfig, err := p.Kubeconfig(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	bin := buildCommand(t, "nodeagent")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "--node", "agent-node", "--namespace", ns, "--pods", "5", "--duration", "20s")
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("nodeagent: %v\n%s", err, out)
	}
	t.Logf("nodeagent printed:\n%s", out)
	if !strings.Contains(string(out), "NAME") || !strings.Contains(string(out), "Summary") {
		t.Errorf("the command prints the pod table and a summary:\n%s", out)
	}

	if n, err := admin.CoreV1().Nodes().Get(ctx, "agent-node", metav1.GetOptions{}); err != nil || len(n.Status.Conditions) == 0 {
		t.Errorf("the Node is registered with conditions: %v %+v", err, n)
	}
	if l, err := admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "agent-node", metav1.GetOptions{}); err != nil || l.Spec.RenewTime == nil {
		t.Errorf("the Lease is renewed: %v %+v", err, l)
	}
	pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 5 {
		t.Fatalf("five pods: %v %d", err, len(pods.Items))
	}
	statuses := map[string]bool{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName != "agent-node" || pod.Status.Phase == "" {
			t.Errorf("pod %s: node %q phase %q", pod.Name, pod.Spec.NodeName, pod.Status.Phase)
		}
		statuses[podphase.DisplayStatus(pod)] = true
	}
	if !statuses["Running"] {
		t.Errorf("some pod runs after 20 s, got %v", statuses)
	}
	evs, err := admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("source", "kubelet").String()})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]bool{}
	for _, ev := range evs.Items {
		reasons[ev.Reason] = true
	}
	for _, want := range []string{"Pulling", "Created", "Started"} {
		if !reasons[want] {
			t.Errorf("a %s event, got %v", want, reasons)
		}
	}
}
