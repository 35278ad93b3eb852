package kube

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Cluster writes a node agent's objects through client-go: it registers the Node or writes
// its status, creates or renews the node's Lease, and creates pods. It has the method set of
// the agent.Cluster interface of examples/nodeagent/agent. The zero value has no client: its
// methods return an error wrapping ErrNotInitialized. It is safe for concurrent use, but two
// writers of the same Node or Lease race as any two API clients do (the loser of an update
// gets 409 Conflict).
type Cluster struct {
	// Client is the clientset. The node's own credentials suffice for the Node and its
	// Lease; creating pods needs more (a node may only create mirror pods).
	Client kubernetes.Interface
}

// CreatePod creates pod in its namespace and returns what the server stored.
func (c *Cluster) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	if c.Client == nil {
		return nil, notInit("Cluster", "CreatePod")
	}
	if pod == nil {
		return nil, invalid("Cluster", "CreatePod", "nil pod")
	}
	return c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

// UpdateNode registers node when the server has no Node of its name (a create with node's
// spec, labels and status, as a kubelet registers), or else replaces the status conditions of
// the existing Node with node's (an UpdateStatus; the rest of the server's copy is kept).
func (c *Cluster) UpdateNode(ctx context.Context, node *corev1.Node) error {
	if c.Client == nil {
		return notInit("Cluster", "UpdateNode")
	}
	if node == nil || node.Name == "" {
		return invalid("Cluster", "UpdateNode", "nil node or empty name")
	}
	nodes := c.Client.CoreV1().Nodes()
	cur, err := nodes.Get(ctx, node.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = nodes.Create(ctx, node, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	cur.Status.Conditions = node.Status.Conditions
	_, err = nodes.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	return err
}

// RenewLease writes lease's spec to the Lease of its namespace and name, creating the Lease
// when missing. The update carries the resourceVersion just read, so a concurrent writer
// makes it fail with 409 Conflict rather than be overwritten unseen.
func (c *Cluster) RenewLease(ctx context.Context, lease *coordinationv1.Lease) error {
	if c.Client == nil {
		return notInit("Cluster", "RenewLease")
	}
	if lease == nil || lease.Name == "" {
		return invalid("Cluster", "RenewLease", "nil lease or empty name")
	}
	_, err := renewLease(ctx, c.Client, lease)
	return err
}

// renewLease is RenewLease returning what the server stored.
func renewLease(ctx context.Context, client kubernetes.Interface, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	leases := client.CoordinationV1().Leases(lease.Namespace)
	cur, err := leases.Get(ctx, lease.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return leases.Create(ctx, lease, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, err
	}
	cur.Spec = lease.Spec
	return leases.Update(ctx, cur, metav1.UpdateOptions{})
}
