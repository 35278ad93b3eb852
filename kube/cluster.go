package kube

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nodestate/nodestate/examples/nodeagent/agent"
)

// Cluster is the simulated node agent's agent.Cluster over client-go: it
// creates the agent's pods, registers its Node and writes the Node's status,
// and renews its Lease in kube-node-lease.
type Cluster struct {
	// Client is the clientset. Creating pods needs more than a node's
	// credentials (a kubelet only creates mirror pods).
	Client kubernetes.Interface
}

var _ agent.Cluster = (*Cluster)(nil)

// CreatePod creates pod in its namespace.
func (c *Cluster) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

// UpdateNode creates node, or writes its status when it exists.
func (c *Cluster) UpdateNode(ctx context.Context, node *corev1.Node) error {
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

// RenewLease writes lease, creating it when missing.
func (c *Cluster) RenewLease(ctx context.Context, lease *coordinationv1.Lease) error {
	leases := c.Client.CoordinationV1().Leases(lease.Namespace)
	cur, err := leases.Get(ctx, lease.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	cur.Spec = lease.Spec
	_, err = leases.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}
