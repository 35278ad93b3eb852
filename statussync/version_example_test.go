package statussync_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/statussync"
)

// A 1.33 kubelet (PodObservedGenerationTracking off) writes no
// status.observedGeneration for a pod whose status has none yet; from 1.34
// it writes the pod's generation.
func ExampleDefaultOptionsFor() {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1", Generation: 3},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "nginx"}}},
	}
	for _, v := range []kubeversion.Version{kubeversion.V1_33, kubeversion.V1_34} {
		cache, _ := statussync.NewCache(statussync.DefaultOptionsFor(v))
		s, _, _ := cache.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodPending}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		fmt.Println(v, s.ObservedGeneration)
	}
	// Output:
	// 1.33 0
	// 1.34 3
}
