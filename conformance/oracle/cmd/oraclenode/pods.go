package main

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// apiPods looks a sandbox's pod up on the API server, with the node's own
// identity (the Node authorizer lets a node read the pods bound to it) and
// a client of its own, so that the kubelet's rate limits are not touched.
type apiPods struct{ client kubernetes.Interface }

// Pod GETs the pod, trying again for a few seconds on errors other than
// NotFound, and checks its UID.
func (a apiPods) Pod(ctx context.Context, namespace, name, uid string) (*v1.Pod, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		pod, err := a.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil && string(pod.UID) != uid:
			return nil, fmt.Errorf("oraclenode: pod %s/%s has UID %s, not %s", namespace, name, pod.UID, uid)
		case err == nil:
			return pod, nil
		case apierrors.IsNotFound(err):
			return nil, err
		}
		lastErr = err
	}
	return nil, lastErr
}
