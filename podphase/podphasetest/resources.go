package podphasetest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"
)

// resourceNames are the resources generated lists draw from: the two that
// can be resized, one that can be set at pod level only through its
// prefix, and two that cannot be set at pod level.
var resourceNames = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, "hugepages-2Mi", v1.ResourceEphemeralStorage, "example.com/gpu"}

// Quantity generates a quantity for resource name: milli-CPU for cpu, bytes
// (binary) for the others, zero now and then, in the forms a manifest uses.
func Quantity(name v1.ResourceName) *rapid.Generator[resource.Quantity] {
	return rapid.Custom(func(t *rapid.T) resource.Quantity {
		if name == v1.ResourceCPU {
			m := rapid.OneOf(rapid.SampledFrom([]int64{0, 1, 2, 10, 50, 100, 250, 500, 1000, 1500, 4000}), rapid.Int64Range(0, 64000)).Draw(t, "milli")
			return *resource.NewMilliQuantity(m, resource.DecimalSI)
		}
		if name == "example.com/gpu" {
			return *resource.NewQuantity(rapid.Int64Range(0, 4).Draw(t, "count"), resource.DecimalSI)
		}
		return *resource.NewQuantity(rapid.SampledFrom([]int64{0, 1 << 20, 2 << 20, 64 << 20, 100e6, 1 << 30}).Draw(t, "bytes"), resource.BinarySI)
	})
}

// ResourceList generates nil, an empty list or a list of some of cpu,
// memory, hugepages-2Mi, ephemeral-storage and an extended resource.
func ResourceList() *rapid.Generator[v1.ResourceList] {
	return rapid.Custom(func(t *rapid.T) v1.ResourceList {
		switch rapid.IntRange(0, 3).Draw(t, "shape") {
		case 0:
			return nil
		case 1:
			return v1.ResourceList{}
		}
		l := v1.ResourceList{}
		for _, name := range resourceNames {
			if rapid.Bool().Draw(t, "has-"+string(name)) {
				l[name] = Quantity(name).Draw(t, string(name))
			}
		}
		return l
	})
}

// Requirements generates requests and limits, each from [ResourceList].
func Requirements() *rapid.Generator[v1.ResourceRequirements] {
	return rapid.Custom(func(t *rapid.T) v1.ResourceRequirements {
		return v1.ResourceRequirements{Requests: ResourceList().Draw(t, "requests"), Limits: ResourceList().Draw(t, "limits")}
	})
}

// PodWithResources generates a pod for the resource aggregation: zero to
// four init containers (regular ones and sidecars, in any order), one to
// three regular containers, each with [Requirements] (a quarter of the pods
// with every container's CPU and memory limits equal to its requests, the
// Guaranteed shape); sometimes pod-level resources (spec.resources) and an
// overhead; and a phase.
func PodWithResources() *rapid.Generator[*v1.Pod] {
	return rapid.Custom(func(t *rapid.T) *v1.Pod {
		pod := &v1.Pod{}
		always := v1.ContainerRestartPolicyAlways
		for i := range rapid.IntRange(0, 4).Draw(t, "inits") {
			c := v1.Container{Name: fmt.Sprint("init", i), Resources: Requirements().Draw(t, fmt.Sprint("init", i))}
			if rapid.Bool().Draw(t, fmt.Sprint("sidecar", i)) {
				c.RestartPolicy = &always
			}
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
		}
		for i := range rapid.IntRange(1, 3).Draw(t, "containers") {
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprint("app", i), Resources: Requirements().Draw(t, fmt.Sprint("app", i))})
		}
		if rapid.IntRange(0, 3).Draw(t, "guaranteed") == 0 {
			// Every container asks for CPU and memory and is limited to
			// what it asks: the Guaranteed shape.
			for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
				for i := range list {
					r := v1.ResourceList{v1.ResourceCPU: Quantity(v1.ResourceCPU).Draw(t, "gcpu"), v1.ResourceMemory: Quantity(v1.ResourceMemory).Draw(t, "gmem")}
					list[i].Resources = v1.ResourceRequirements{Requests: r, Limits: r.DeepCopy()}
				}
			}
		}
		if rapid.Bool().Draw(t, "podLevel") {
			r := Requirements().Draw(t, "pod")
			pod.Spec.Resources = &r
		}
		if rapid.IntRange(0, 3).Draw(t, "overhead") == 0 {
			pod.Spec.Overhead = ResourceList().Draw(t, "overheadList")
		}
		pod.Status.Phase = rapid.SampledFrom([]v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, ""}).Draw(t, "phase")
		return pod
	})
}
