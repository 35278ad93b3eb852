package podphase

import (
	v1 "k8s.io/api/core/v1"
)

// The kubelet's CFS defaults (cpuCFSQuota true, cpuCFSQuotaPeriod 100 ms)
// and the smallest quota it writes, in microseconds.
const (
	cfsPeriod = 100000
	minQuota  = 1000
)

// pageSize is the memory page size a cgroup rounds memory.max down to.
const pageSize = 4096

// QOSClass returns the pod's QoS class as the kubelet reads it: the API
// status's qosClass, which the API server sets when it creates the pod, or,
// when that is empty, the class the spec gives (Kubernetes 1.37's
// ComputePodQOS, with PodLevelResourcesFixKubeletQOSClass on): from the
// pod-level resources when the pod sets any of cpu, memory or hugepages at
// pod level, else from the init and regular containers: BestEffort when no
// container sets a CPU or memory request or limit, Guaranteed when every
// container's CPU and memory requests equal their non-zero limits,
// Burstable otherwise. A nil pod is BestEffort.
func QOSClass(pod *v1.Pod) v1.PodQOSClass {
	if pod == nil {
		return v1.PodQOSBestEffort
	}
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	if podLevelSet(&pod.Spec) {
		return requirementsQOS(pod.Spec.Resources)
	}
	var class v1.PodQOSClass
	for _, list := range [2][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := requirementsQOS(&list[i].Resources)
			switch {
			case c == v1.PodQOSBurstable:
				return c
			case class == "":
				class = c
			case class != c:
				return v1.PodQOSBurstable
			}
		}
	}
	if class == "" {
		return v1.PodQOSBestEffort
	}
	return class
}

// requirementsQOS is the class of one set of requirements: BestEffort when
// CPU and memory have neither a request nor a limit, Guaranteed when both
// have a request equal to a non-zero limit, Burstable otherwise (a list
// with only other resources counts as a set of requirements).
func requirementsQOS(r *v1.ResourceRequirements) v1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return v1.PodQOSBestEffort
	}
	var class v1.PodQOSClass
	for _, name := range [2]v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		c := v1.PodQOSGuaranteed
		switch {
		case !req.Equal(lim):
			return v1.PodQOSBurstable
		case req.IsZero():
			c = v1.PodQOSBestEffort
		}
		if class == "" {
			class = c
		} else if class != c {
			return v1.PodQOSBurstable
		}
	}
	return class
}

// PodCgroupOf returns what the kubelet writes into the cgroup of pod
// (spec/podphase.md section 4.5; the container manager's
// ResourceConfigForPod with the kubelet's defaults: CFS quota enforced, a
// 100 ms period, no memory QoS): CPU shares for the pod's CPU request
// (PodRequests, 1024 per CPU, at least 2), and by QoS class: a Guaranteed
// pod also gets a CFS quota for its CPU limit (PodLimits, at least 1 ms per
// period), the period and a memory limit; a Burstable one the quota and
// period only when every container (or the pod level) sets a CPU limit,
// and the memory limit only when every one sets a memory limit; a
// BestEffort one the minimum shares only. A nil pod gets the minimum
// shares.
func PodCgroupOf(pod *v1.Pod) PodCgroup {
	shares := uint64(minShares)
	if pod == nil {
		return PodCgroup{CPUShares: &shares}
	}
	var reqs, limits qlist
	reqs.podRequests(pod)
	limits.podLimits(pod)
	cpuLimits, memoryLimits := true, true
	for _, list := range [2][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			l := list[i].Resources.Limits
			if q := l[v1.ResourceCPU]; q.IsZero() {
				cpuLimits = false
			}
			if q := l[v1.ResourceMemory]; q.IsZero() {
				memoryLimits = false
			}
		}
	}
	if podLevelSet(&pod.Spec) {
		if q := pod.Spec.Resources.Limits[v1.ResourceCPU]; !q.IsZero() {
			cpuLimits = true
		}
		if q := pod.Spec.Resources.Limits[v1.ResourceMemory]; !q.IsZero() {
			memoryLimits = true
		}
	}
	cpuRequest, _ := reqs.get(v1.ResourceCPU)
	cpuLimit, _ := limits.get(v1.ResourceCPU)
	memory, _ := limits.get(v1.ResourceMemory)
	shares = milliToShares(cpuRequest.MilliValue())
	quota := int64(0)
	if m := cpuLimit.MilliValue(); m != 0 {
		quota = max(m*cfsPeriod/1000, minQuota)
	}
	period := uint64(cfsPeriod)
	mem := memory.Value()
	switch QOSClass(pod) {
	case v1.PodQOSGuaranteed:
		return PodCgroup{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &mem}
	case v1.PodQOSBurstable:
		c := PodCgroup{CPUShares: &shares}
		if cpuLimits {
			c.CPUQuota, c.CPUPeriod = &quota, &period
		}
		if memoryLimits {
			c.Memory = &mem
		}
		return c
	}
	shares = minShares
	return PodCgroup{CPUShares: &shares}
}

// ReadBackV2 returns what the kubelet reads back from a cgroup v2 host
// after writing c (spec/podphase.md section 4.5): the shares as the
// cpu.weight they become, converted back (which loses some); the quota of
// cpu.max, -1 when none was written or it is not positive ("max"), with the
// period written or the default 100 ms; and memory.max, rounded down to
// whole 4 KiB pages, -1 when none was written or it is not positive
// ("max").
func (c PodCgroup) ReadBackV2() PodCgroup {
	shares := uint64(minShares)
	if c.CPUShares != nil && *c.CPUShares > shares {
		shares = *c.CPUShares
	}
	shares = weightToShares(sharesToWeight(shares))
	quota := int64(-1)
	if c.CPUQuota != nil && *c.CPUQuota > 0 {
		quota = *c.CPUQuota
	}
	period := uint64(cfsPeriod)
	if c.CPUPeriod != nil && *c.CPUPeriod > 0 {
		period = *c.CPUPeriod
	}
	memory := int64(-1)
	if c.Memory != nil && *c.Memory > 0 {
		memory = *c.Memory / pageSize * pageSize
	}
	return PodCgroup{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &memory}
}

// sharesToWeight and weightToShares are the OCI runtimes' conversion
// between cgroup v1 CPU shares (2 to 262144) and a cgroup v2 cpu.weight (1
// to 10000).
func sharesToWeight(shares uint64) uint64 {
	if shares >= maxShares {
		return maxWeight
	}
	return 1 + (shares-minShares)*(maxWeight-1)/(maxShares-minShares)
}

func weightToShares(w uint64) uint64 {
	return (w-1)*(maxShares-minShares)/(maxWeight-1) + minShares
}
