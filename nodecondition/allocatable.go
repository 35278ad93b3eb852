package nodecondition

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Allocatable returns a node's allocatable resources as the kubelet
// computes them from its capacity (node allocatable): each resource of
// capacity less its reserved amount (system-reserved plus kube-reserved)
// and, for memory and ephemeral-storage, the hard eviction threshold of
// memory.available and nodefs.available, never below zero. A percentage
// threshold is a share of the capacity computed as the kubelet does, with
// the percentage as a float32 (10% of 100Gi reserves 10737418400 bytes,
// not 10737418240). Soft thresholds reserve nothing. Every quantity keeps
// the format of the capacity's, so that it reads as the kubelet's does
// ("16284Mi" of "16Gi" less 100Mi). With DefaultHardThresholds and no
// reservation, a node of 16Gi of memory and 100Gi of disk has 16284Mi and
// 96636764k allocatable. A nil capacity returns an empty list.
func Allocatable(capacity, reserved v1.ResourceList, hard []Threshold) v1.ResourceList {
	evict := v1.ResourceList{}
	for _, t := range hard {
		var name v1.ResourceName
		switch {
		case t.Soft:
			continue
		case t.Signal == SignalMemoryAvailable:
			name = v1.ResourceMemory
		case t.Signal == SignalNodeFsAvailable:
			name = v1.ResourceEphemeralStorage
		default:
			continue
		}
		c := capacity[name]
		amount := t.Value.Quantity
		if t.Value.Percentage != 0 {
			amount = int64(float64(c.Value()) * float64(float32(t.Value.Percentage)))
		}
		evict[name] = *resource.NewQuantity(amount, resource.BinarySI)
	}
	out := make(v1.ResourceList, len(capacity))
	for name, c := range capacity {
		v := c.DeepCopy()
		if q, ok := reserved[name]; ok {
			v.Sub(q)
		}
		if q, ok := evict[name]; ok {
			v.Sub(q)
		}
		if v.Sign() < 0 {
			v.Set(0)
		}
		out[name] = v
	}
	return out
}

// Capacity returns a node's capacity as the kubelet writes it from its
// machine: CPU from the number of cores (cpuMillis, "4"), memory in the
// binary format ("16Gi"), ephemeral-storage as the root filesystem's size
// in bytes ("107374182400"), and maxPods. The formats matter: the API
// server keeps a quantity as written, and kubectl and clients compare the
// strings.
func Capacity(cpuMillis, memory, ephemeralStorage, pods int64) v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:              *resource.NewMilliQuantity(cpuMillis, resource.DecimalSI),
		v1.ResourceMemory:           *resource.NewQuantity(memory, resource.BinarySI),
		v1.ResourceEphemeralStorage: *resource.NewQuantity(ephemeralStorage, resource.DecimalSI),
		v1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
	}
}
