package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nodestate/nodestate/statussync"
)

// StatusTransport is a statussync.Transport over client-go: a GET of the
// pod, a strategic merge PATCH of its status subresource (the patch carries
// the UID precondition that statussync puts in it), and a DELETE with grace
// period 0 and a UID precondition. Errors are client-go's, that is
// apimachinery StatusErrors for every answer of the server. The zero value
// has no client: its methods return an error wrapping ErrNotInitialized. It
// is safe for concurrent use.
type StatusTransport struct {
	// Client is the clientset; a node's own credentials are enough.
	Client kubernetes.Interface
}

var _ statussync.Transport = (*StatusTransport)(nil)

// GetPod reads pod namespace/name.
func (t *StatusTransport) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if t.Client == nil {
		return nil, notInit("StatusTransport", "GetPod")
	}
	return t.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

// PatchPodStatus applies a strategic merge patch to the status of pod
// namespace/name.
func (t *StatusTransport) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*corev1.Pod, error) {
	if t.Client == nil {
		return nil, notInit("StatusTransport", "PatchPodStatus")
	}
	return t.Client.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
}

// DeletePod deletes pod namespace/name at once if its UID is still uid.
func (t *StatusTransport) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	if t.Client == nil {
		return notInit("StatusTransport", "DeletePod")
	}
	zero := int64(0)
	return t.Client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
}
