package kube_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nodestate/nodestate/kube"
)

// A Node runs the pods bound to it. Here it runs against client-go's fake
// clientset; against a cluster, give it a clientset authenticated as
// system:node:<name>. The annotation makes the simulated container exit 0
// after a second, so the pod, whose restart policy is Never, succeeds.
func ExampleNode() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := fake.NewClientset(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job-1", Namespace: "default", UID: "6b3f",
			Annotations: map[string]string{kube.BehaviourAnnotationPrefix + "main": "run 1s exit 0"}},
		Spec: corev1.PodSpec{NodeName: "node-1", RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	})
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Stop()

	n, err := kube.NewNode(kube.DefaultOptions("node-1"), cs)
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()

	seen := map[corev1.PodPhase]bool{}
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type != watch.Modified || pod.Status.Phase == corev1.PodPending || seen[pod.Status.Phase] {
			continue
		}
		seen[pod.Status.Phase] = true
		fmt.Println(pod.Status.Phase, pod.Status.PodIP)
		if pod.Status.Phase == corev1.PodSucceeded {
			break
		}
	}
	cancel()
	fmt.Println(<-done)
	// Output:
	// Running 10.244.0.2
	// Succeeded 10.244.0.2
	// context canceled
}
