package statussynctest_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

// An API standing for an older API server validates container-state
// transitions by that minor's rule: a container with its own restartPolicy
// OnFailure in a pod with restartPolicy Never may run again after a failure
// in 1.37, while 1.34 (ContainerRestartRules off) reads the pod's policy.
func ExampleNewAPIWithOptions() {
	ctx := context.Background()
	onFailure := v1.ContainerRestartPolicyOnFailure
	for _, v := range []kubeversion.Version{kubeversion.V1_34, kubeversion.V1_37} {
		api, err := statussynctest.NewAPIWithOptions(statussynctest.DefaultOptionsFor(v))
		if err != nil {
			fmt.Println(err)
			return
		}
		_, _ = api.Create(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "app", RestartPolicy: &onFailure}}}})
		_, _ = api.PatchPodStatus(ctx, "default", "web", []byte(`{"status":{"containerStatuses":[{"name":"app","state":{"terminated":{"exitCode":1}}}]}}`))
		_, err = api.PatchPodStatus(ctx, "default", "web", []byte(`{"status":{"containerStatuses":[{"name":"app","state":{"running":{}}}]}}`))
		fmt.Printf("%v: running again refused: %v\n", v, apierrors.IsInvalid(err))
	}
	// Output:
	// 1.34: running again refused: true
	// 1.37: running again refused: false
}
