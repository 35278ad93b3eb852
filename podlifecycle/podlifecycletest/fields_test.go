package podlifecycletest_test

import (
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestRunFields: on the simulated runtime a running container's status has
// the fields the kubelet writes for it: the service-account token mount,
// the runtime's image ref, resources as applied (the spec's), the requests
// as allocatedResources, and the pod-level allocatedResources.
func TestRunFields(t *testing.T) {
	pod := onePod()
	c := &pod.Spec.Containers[0]
	c.VolumeMounts = []v1.VolumeMount{{Name: "kube-api-access-x", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
	c.Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")},
		Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi")}}
	opts := podlifecycletest.DefaultOptions()
	opts.Until = time.Minute
	tr, err := podlifecycletest.Run(pod, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	var last *v1.PodStatus
	for i := range tr.Steps {
		if n := len(tr.Steps[i].Result.Statuses); n > 0 {
			last = &tr.Steps[i].Result.Statuses[n-1]
		}
	}
	if last == nil || len(last.ContainerStatuses) != 1 || last.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("no running status: %v", last)
	}
	st := last.ContainerStatuses[0]
	if st.ImageID != simruntime.ImageRef("app:1") {
		t.Errorf("imageID %q, want %q", st.ImageID, simruntime.ImageRef("app:1"))
	}
	if len(st.VolumeMounts) != 1 || st.VolumeMounts[0].Name != "kube-api-access-x" || !st.VolumeMounts[0].ReadOnly ||
		st.VolumeMounts[0].RecursiveReadOnly == nil || *st.VolumeMounts[0].RecursiveReadOnly != v1.RecursiveReadOnlyDisabled {
		t.Errorf("volumeMounts %+v", st.VolumeMounts)
	}
	same := func(a, b v1.ResourceList) bool {
		if len(a) != len(b) {
			return false
		}
		for n, q := range a {
			if r, ok := b[n]; !ok || q.Cmp(r) != 0 {
				return false
			}
		}
		return true
	}
	if st.Resources == nil || !same(st.Resources.Requests, c.Resources.Requests) || !same(st.Resources.Limits, c.Resources.Limits) {
		t.Errorf("resources %v, want the spec's %v", st.Resources, c.Resources)
	}
	if !same(st.AllocatedResources, c.Resources.Requests) || !same(last.AllocatedResources, c.Resources.Requests) {
		t.Errorf("allocatedResources %v (pod %v), want the spec's requests", st.AllocatedResources, last.AllocatedResources)
	}
	if last.Resources == nil || !same(last.Resources.Requests, c.Resources.Requests) {
		t.Errorf("pod resources %v", last.Resources)
	}
}
