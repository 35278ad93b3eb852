package kube

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcoordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/nodestate/nodestate/nodecondition"
)

// DefaultLeaseLookupTimeout bounds one LiveLease request when LeaseLookup.Timeout is zero.
const DefaultLeaseLookupTimeout = 10 * time.Second

var _ nodecondition.LeaseLookup = (*LeaseLookup)(nil)

// LeaseLookup is the live Lease lookup of the node-lifecycle controller's lease circuit
// breaker (nodecondition.LeaseLookup) over client-go: a GET of the node's Lease in
// kube-node-lease, bypassing any informer cache. The zero value has no client: LiveLease
// returns an error wrapping ErrNotInitialized. It is safe for concurrent use.
type LeaseLookup struct {
	// Client is typically clientset.CoordinationV1().
	Client typedcoordinationv1.LeasesGetter
	// Timeout bounds each request, since nodecondition's Runner calls LiveLease with its
	// lock held and without a context; zero is DefaultLeaseLookupTimeout.
	Timeout time.Duration
}

// LiveLease returns the resourceVersion of node's Lease and true, or "" and false when the
// server has no such Lease (404). Any other failure is returned as client-go's error: the
// controller then skips the node for the pass.
func (l *LeaseLookup) LiveLease(node string) (resourceVersion string, found bool, err error) {
	if l.Client == nil {
		return "", false, notInit("LeaseLookup", "LiveLease")
	}
	if node == "" {
		return "", false, invalid("LeaseLookup", "LiveLease", "empty node name")
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = DefaultLeaseLookupTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	lease, err := l.Client.Leases(nodecondition.LeaseNamespace).Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return lease.ResourceVersion, true, nil
}

// renewLease writes lease's spec to the Lease of its namespace and name, creating the Lease
// when missing, and returns what the server stored. The update carries the resourceVersion
// just read, so a concurrent writer makes it fail with 409 Conflict rather than be
// overwritten unseen.
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
