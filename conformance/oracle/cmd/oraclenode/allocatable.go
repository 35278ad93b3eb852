package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cadvisor"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// nodeResources is what the kubelet's own container manager says of the
// node's resources, which the stub container manager does not: the
// ephemeral-storage capacity is the root filesystem's size, and node
// allocatable reserves the system- and kube-reserved resources and the hard
// eviction thresholds of memory.available and nodefs.available (the
// kubelet's node allocatable rule). With the default configuration that is
// 100Mi of memory and 10% of the root filesystem.
type nodeResources struct {
	capacity   v1.ResourceList
	reserved   v1.ResourceList
	thresholds []evictionapi.Threshold
}

func newNodeResources(m *machine, kc *kubeletconfig.KubeletConfiguration) (*nodeResources, error) {
	info, err := m.MachineInfo(klog.Background())
	if err != nil {
		return nil, err
	}
	capacity := cadvisor.CapacityFromMachineInfo(info)
	rootfs, err := m.RootFsInfo()
	if err != nil {
		return nil, err
	}
	for k, v := range cadvisor.EphemeralStorageCapacityFromFsInfo(rootfs) {
		capacity[k] = v
	}
	thresholds, err := eviction.ParseThresholdConfig(kc.EnforceNodeAllocatable, kc.EvictionHard, kc.EvictionSoft, kc.EvictionSoftGracePeriod, kc.EvictionMinimumReclaim)
	if err != nil {
		return nil, fmt.Errorf("oraclenode: eviction thresholds: %w", err)
	}
	reserved := v1.ResourceList{}
	for _, l := range []map[string]string{kc.SystemReserved, kc.KubeReserved} {
		for k, v := range l {
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return nil, fmt.Errorf("oraclenode: reserved %s: %w", k, err)
			}
			sum := reserved[v1.ResourceName(k)]
			sum.Add(q)
			reserved[v1.ResourceName(k)] = sum
		}
	}
	return &nodeResources{capacity: capacity, reserved: reserved, thresholds: thresholds}, nil
}

// ephemeralStorage is the capacity the kubelet's container manager adds to
// the machine's CPU and memory.
func (r *nodeResources) ephemeralStorage() v1.ResourceList {
	return v1.ResourceList{v1.ResourceEphemeralStorage: r.capacity[v1.ResourceEphemeralStorage]}
}

// reservation is what node allocatable subtracts from each resource of the
// capacity: the reserved amounts plus the hard eviction threshold of the
// signal that measures it (a quantity, or a percentage of the capacity).
func (r *nodeResources) reservation() v1.ResourceList {
	evict := v1.ResourceList{}
	for _, t := range r.thresholds {
		if t.Operator != evictionapi.OpLessThan {
			continue
		}
		var name v1.ResourceName
		switch t.Signal {
		case evictionapi.SignalMemoryAvailable:
			name = v1.ResourceMemory
		case evictionapi.SignalNodeFsAvailable:
			name = v1.ResourceEphemeralStorage
		default:
			continue
		}
		c := r.capacity[name]
		evict[name] = *evictionapi.GetThresholdQuantity(t.Value, &c)
	}
	out := v1.ResourceList{}
	for k := range r.capacity {
		v := resource.NewQuantity(0, resource.DecimalSI)
		if q, ok := r.reserved[k]; ok {
			v.Add(q)
		}
		if q, ok := evict[k]; ok {
			v.Add(q)
		}
		if !v.IsZero() {
			out[k] = *v
		}
	}
	return out
}
