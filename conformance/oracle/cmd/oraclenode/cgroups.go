package main

import (
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm"
)

// containerManager is the kubelet's stub container manager (no cgroups,
// no device, CPU or memory managers), whose pod container manager answers
// what a pod's cgroup holds as a host with cgroup v2 would (podCgroups).
type containerManager struct {
	cm.ContainerManager
	pods      podCgroups
	resources *nodeResources
}

func newContainerManager(kc *kubeletconfig.KubeletConfiguration, res *nodeResources) *containerManager {
	return &containerManager{
		ContainerManager: cm.NewStubContainerManager(),
		resources:        res,
		pods: podCgroups{
			enforceCPULimits: kc.CPUCFSQuota,
			cpuPeriod:        uint64(kc.CPUCFSQuotaPeriod.Duration / time.Microsecond),
			memoryPolicy:     kc.MemoryReservationPolicy,
			written:          &writtenCgroups{byUID: map[types.UID]cm.ResourceConfig{}},
		},
	}
}

// GetCapacity returns the ephemeral-storage capacity, as the kubelet's
// container manager does with local storage capacity isolation on (the
// default); the machine's CPU and memory come from cadvisor.
func (c *containerManager) GetCapacity(_ klog.Logger, localStorageCapacityIsolation bool) v1.ResourceList {
	if !localStorageCapacityIsolation {
		return v1.ResourceList{}
	}
	return c.resources.ephemeralStorage()
}

// GetNodeAllocatableReservation returns what node allocatable reserves.
func (c *containerManager) GetNodeAllocatableReservation() v1.ResourceList {
	return c.resources.reservation()
}

// NewPodContainerManager returns the pod container manager of podCgroups.
func (c *containerManager) NewPodContainerManager() cm.PodContainerManager {
	p := c.pods
	p.PodContainerManager = c.ContainerManager.NewPodContainerManager()
	return p
}

// podCgroups makes and changes no cgroups, but reads a pod's cgroup back
// as the kubelet would on a cgroup v2 host after writing it: the values of
// cm.ResourceConfigForPod (what the kubelet's own pod container manager
// writes), through cgroup v2's files: cpu.weight (the shares converted to
// a weight and back, which loses precision), cpu.max ("max" is no quota)
// and memory.max (whole pages; "max" is no limit). The kubelet reads them
// into the pod status's resources (InPlacePodLevelResourcesVerticalScaling),
// so a pod with requests or limits reports what it would on such a host.
type podCgroups struct {
	cm.PodContainerManager
	enforceCPULimits bool
	cpuPeriod        uint64
	memoryPolicy     kubeletconfig.MemoryReservationPolicy
	// written is what was written into each pod's cgroup: at its creation
	// (EnsureExists), then by in-place resizes (SetPodCgroupConfig).
	written *writtenCgroups
}

// writtenCgroups are the pods' cgroup configs, by pod UID.
type writtenCgroups struct {
	mu    sync.Mutex
	byUID map[types.UID]cm.ResourceConfig
}

// EnsureExists records what the kubelet's pod container manager writes
// into a new pod cgroup.
func (p podCgroups) EnsureExists(logger klog.Logger, pod *v1.Pod) error {
	p.written.mu.Lock()
	defer p.written.mu.Unlock()
	if _, ok := p.written.byUID[pod.UID]; !ok {
		p.written.byUID[pod.UID] = *cm.ResourceConfigForPod(pod, p.enforceCPULimits, p.cpuPeriod, false, p.memoryPolicy)
	}
	return p.PodContainerManager.EnsureExists(logger, pod)
}

// SetPodCgroupConfig writes the resources of rc that are set into pod's
// cgroup, as an in-place resize does.
func (p podCgroups) SetPodCgroupConfig(logger klog.Logger, pod *v1.Pod, rc *cm.ResourceConfig) error {
	p.written.mu.Lock()
	defer p.written.mu.Unlock()
	cur, ok := p.written.byUID[pod.UID]
	if !ok {
		cur = *cm.ResourceConfigForPod(pod, p.enforceCPULimits, p.cpuPeriod, false, p.memoryPolicy)
	}
	if rc.Memory != nil {
		cur.Memory = rc.Memory
	}
	if rc.CPUShares != nil {
		cur.CPUShares = rc.CPUShares
	}
	if rc.CPUQuota != nil {
		cur.CPUQuota = rc.CPUQuota
	}
	if rc.CPUPeriod != nil {
		cur.CPUPeriod = rc.CPUPeriod
	}
	p.written.byUID[pod.UID] = cur
	return nil
}

// config is what pod's cgroup holds: what was written, else what the
// kubelet writes for its spec.
func (p podCgroups) config(pod *v1.Pod) *cm.ResourceConfig {
	p.written.mu.Lock()
	defer p.written.mu.Unlock()
	if c, ok := p.written.byUID[pod.UID]; ok {
		return &c
	}
	return cm.ResourceConfigForPod(pod, p.enforceCPULimits, p.cpuPeriod, false, p.memoryPolicy)
}

// pageSize is the page size memory.max is rounded down to.
const pageSize = 4096

// GetPodCgroupConfig returns the memory or CPU config of pod's cgroup.
func (p podCgroups) GetPodCgroupConfig(pod *v1.Pod, resource v1.ResourceName) (*cm.ResourceConfig, error) {
	want := p.config(pod)
	switch resource {
	case v1.ResourceMemory:
		limit := int64(-1) // "max", which reads as the largest uint64
		if want.Memory != nil && *want.Memory > 0 {
			limit = *want.Memory / pageSize * pageSize
		}
		return &cm.ResourceConfig{Memory: &limit}, nil
	case v1.ResourceCPU:
		shares := uint64(cm.MinShares)
		if want.CPUShares != nil && *want.CPUShares > shares {
			shares = *want.CPUShares
		}
		// cgroup v2 keeps a weight from 1 to 10000 for the shares from 2
		// to 262144 (the OCI runtimes' conversion); reading it back
		// converts the other way.
		weight := 1 + (shares-2)*9999/262142
		shares = 2 + (weight-1)*262142/9999
		quota := int64(-1)
		if want.CPUQuota != nil && *want.CPUQuota > 0 {
			quota = *want.CPUQuota
		}
		period := p.cpuPeriod
		if want.CPUPeriod != nil && *want.CPUPeriod > 0 {
			period = *want.CPUPeriod
		}
		return &cm.ResourceConfig{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period}, nil
	}
	return nil, fmt.Errorf("oraclenode: no cgroup config for %s", resource)
}
