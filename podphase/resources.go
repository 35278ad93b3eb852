package podphase

import (
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/kubeversion"
)

// PodRequests returns the pod's effective resource requests, as the kubelet
// computes its status.allocatedResources and as the scheduler admits the pod
// (component-helpers' PodRequests with pod-level resources on and the
// overhead included; spec/podphase.md section 4.4):
//
//   - the regular containers' requests, summed;
//   - init containers run one at a time, each beside the sidecars declared
//     before it: the pod needs, per resource, at least the largest of
//     "that init container plus the earlier sidecars", and every sidecar
//     runs beside the regular containers, so the sidecars add to the sum;
//   - pod-level requests (spec.resources) of cpu, memory and hugepages-*
//     replace the containers' sum for those resources;
//   - spec.overhead is added.
//
// A nil pod has none (nil). The result is a new list; the pod is not
// changed.
func PodRequests(pod *v1.Pod) v1.ResourceList {
	if pod == nil {
		return nil
	}
	reqs := aggregate(&pod.Spec, func(c *v1.Container) v1.ResourceList { return c.Resources.Requests })
	if podLevelRequestsSet(&pod.Spec) {
		applyPodLevel(reqs, pod.Spec.Resources.Requests)
	}
	if pod.Spec.Overhead != nil {
		addList(reqs, pod.Spec.Overhead)
	}
	return reqs
}

// PodLimits returns the pod's effective resource limits, as the kubelet
// computes its allocated limits (component-helpers' PodLimits with pod-level
// resources on; spec/podphase.md section 4.4): the containers' limits
// aggregated as [PodRequests] aggregates requests (a resource counts for the
// containers that set it), pod-level limits of cpu, memory and hugepages-*
// in place of the containers' when the pod sets pod-level resources, and
// spec.overhead added to each limit that is set and not zero. A nil pod has
// none (nil).
func PodLimits(pod *v1.Pod) v1.ResourceList {
	if pod == nil {
		return nil
	}
	limits := aggregate(&pod.Spec, func(c *v1.Container) v1.ResourceList { return c.Resources.Limits })
	if podLevelSet(&pod.Spec) {
		applyPodLevel(limits, pod.Spec.Resources.Limits)
	}
	for name, q := range pod.Spec.Overhead {
		if v, ok := limits[name]; ok && !v.IsZero() {
			v.Add(q)
			limits[name] = v
		}
	}
	return limits
}

// aggregate sums list over the regular containers and takes the init
// containers' peak: each regular init container counts with the sidecars
// before it, each sidecar adds to the running total and to that peak's base
// (KEP-753's formula).
func aggregate(spec *v1.PodSpec, list func(*v1.Container) v1.ResourceList) v1.ResourceList {
	sum := v1.ResourceList{}
	for i := range spec.Containers {
		addList(sum, list(&spec.Containers[i]))
	}
	sidecars := v1.ResourceList{}
	peak := v1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			addList(sum, list(c))
			addList(sidecars, list(c))
			maxList(peak, sidecars)
			continue
		}
		during := v1.ResourceList{}
		addList(during, list(c))
		addList(during, sidecars)
		maxList(peak, during)
	}
	maxList(sum, peak)
	return sum
}

// addList adds every quantity of add to sum.
func addList(sum, add v1.ResourceList) {
	for name, q := range add {
		if v, ok := sum[name]; ok {
			v.Add(q)
			sum[name] = v
		} else {
			sum[name] = q.DeepCopy()
		}
	}
}

// maxList raises every quantity of into to the one of from where that is
// larger, adding what into lacks.
func maxList(into, from v1.ResourceList) {
	for name, q := range from {
		if v, ok := into[name]; !ok || q.Cmp(v) > 0 {
			into[name] = q.DeepCopy()
		}
	}
}

// podLevelResource reports whether name can be set at pod level: cpu, memory
// and hugepages of any size.
func podLevelResource(name v1.ResourceName) bool {
	return name == v1.ResourceCPU || name == v1.ResourceMemory || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

func anyPodLevel(list v1.ResourceList) bool {
	for name := range list {
		if podLevelResource(name) {
			return true
		}
	}
	return false
}

// podLevelSet reports whether the pod sets pod-level requests or limits of a
// resource that can be set at pod level.
func podLevelSet(spec *v1.PodSpec) bool {
	return spec.Resources != nil && (anyPodLevel(spec.Resources.Requests) || anyPodLevel(spec.Resources.Limits))
}

// podLevelRequestsSet is podLevelSet for requests alone.
func podLevelRequestsSet(spec *v1.PodSpec) bool {
	return spec.Resources != nil && anyPodLevel(spec.Resources.Requests)
}

// applyPodLevel puts the pod-level values of pod in list in place of the
// containers' sum.
func applyPodLevel(list, pod v1.ResourceList) {
	for name, q := range pod {
		if podLevelResource(name) {
			list[name] = q
		}
	}
}

// PodCgroup is what the kubelet reads back from a running pod's cgroup, in
// cgroup units (the kubelet's ResourceConfig): CPU shares (cgroup v1
// cpu.shares, or cpu.weight converted back to shares on v2), the CFS quota
// and period in microseconds (a quota of -1 is no limit), and the memory
// limit in bytes. A nil field is a value the kubelet could not read; a nil
// *PodCgroup is none at all, as with a container manager that manages no
// pod cgroups.
type PodCgroup struct {
	CPUShares *uint64
	CPUQuota  *int64
	CPUPeriod *uint64
	Memory    *int64
}

// The kubelet's cgroup arithmetic (pkg/kubelet/cm): shares per CPU, the
// shares range of the kernel, and the cgroup v2 weight range.
const (
	sharesPerCPU = 1024
	minShares    = 2
	maxShares    = 262144
	maxWeight    = 10000
)

// The floors below which the kubelet keeps the allocated CPU value when the
// cgroup's is at or below them too: MinShares compared with milli-CPU, as
// the kubelet does, and the smallest quota (1 ms of 100 ms) in milli-CPU.
const (
	minMilliCPURequest = minShares
	minMilliCPULimit   = 10
)

// cpuRequest is the CPU request the pod cgroup's shares stand for, or nil.
func (c *PodCgroup) cpuRequest() *resource.Quantity {
	if c == nil || c.CPUShares == nil || *c.CPUShares == 0 {
		return nil
	}
	s := int64(*c.CPUShares)
	if s < minShares {
		return nil
	}
	// Rounded up, so that the shares of a request give that request back.
	m := int64(math.Ceil(float64(s*1000) / sharesPerCPU))
	if m <= 0 {
		return nil
	}
	return resource.NewMilliQuantity(m, resource.DecimalSI)
}

// cpuLimit is the CPU limit the pod cgroup's quota stands for, or nil.
func (c *PodCgroup) cpuLimit() *resource.Quantity {
	if c == nil || c.CPUPeriod == nil || *c.CPUPeriod == 0 || c.CPUQuota == nil || *c.CPUQuota == -1 {
		return nil
	}
	m := *c.CPUQuota * 1000 / int64(*c.CPUPeriod)
	if m <= 0 {
		return nil
	}
	return resource.NewMilliQuantity(m, resource.DecimalSI)
}

// memoryLimit is the pod cgroup's memory limit, or nil.
func (c *PodCgroup) memoryLimit() *resource.Quantity {
	if c == nil || c.Memory == nil || *c.Memory <= 0 {
		return nil
	}
	return resource.NewQuantity(*c.Memory, resource.BinarySI)
}

// milliToShares is the kubelet's CPU shares for a milli-CPU request.
func milliToShares(m int64) uint64 {
	if m == 0 {
		return minShares
	}
	s := m * sharesPerCPU / 1000
	return uint64(min(max(s, minShares), maxShares))
}

// sameAfterWeight reports whether shares written to a cgroup v2 (as a
// cpu.weight) read back as readback: the weight's coarse steps lose some
// shares, and the kubelet takes such a readback as the value it wrote.
func sameAfterWeight(shares, readback uint64) bool {
	return weightToShares(sharesToWeight(shares)) == readback
}

// effectiveResources is the kubelet's allocated pod-level resources: the
// pod-level spec resources (their claims too) with the requests of
// [PodRequests] and the limits of [PodLimits].
func effectiveResources(pod *v1.Pod) *v1.ResourceRequirements {
	r := &v1.ResourceRequirements{}
	if pod.Spec.Resources != nil {
		r = pod.Spec.Resources.DeepCopy()
	}
	r.Requests = nonEmpty(PodRequests(pod))
	r.Limits = nonEmpty(PodLimits(pod))
	return r
}

// nonEmpty is list, or nil when it is empty: the API server stores an empty
// list as none.
func nonEmpty(list v1.ResourceList) v1.ResourceList {
	if len(list) == 0 {
		return nil
	}
	return list
}

// podResources is the kubelet's status.resources (spec/podphase.md section
// 4.3). pod is the API pod, whose status phase is the one read; old is the
// old status (the kubelet's cached one, else the API's).
func (o Options) podResources(pod *v1.Pod, old *v1.PodStatus, cg *PodCgroup) *v1.ResourceRequirements {
	if pod.Status.Phase != v1.PodRunning {
		return effectiveResources(pod)
	}
	r := &v1.ResourceRequirements{}
	if pod.Spec.Resources != nil {
		r = pod.Spec.Resources.DeepCopy()
	}
	if r.Requests == nil {
		r.Requests = v1.ResourceList{}
	}
	if r.Limits == nil {
		r.Limits = v1.ResourceList{}
	}
	var oldReqs, oldLims v1.ResourceList
	if old.Resources != nil {
		oldReqs, oldLims = old.Resources.Requests, old.Resources.Limits
	}
	// A value the cgroup does not give is the old status's when that was
	// Running too.
	keep := func(list, oldList v1.ResourceList, name v1.ResourceName) {
		if old.Phase != v1.PodRunning {
			return
		}
		if q, ok := oldList[name]; ok {
			list[name] = q.DeepCopy()
		}
	}
	if req := cg.cpuRequest(); req != nil {
		allocated := r.Requests[v1.ResourceCPU]
		// At or below the floor on both sides the allocated value stays; so
		// it does (1.37) when the shares read back are the allocated ones
		// after a trip through a cgroup v2 weight.
		if req.MilliValue() > minMilliCPURequest || allocated.MilliValue() > minMilliCPURequest {
			if !o.Version.AtLeast(kubeversion.V1_37) || !sameAfterWeight(milliToShares(allocated.MilliValue()), *cg.CPUShares) {
				r.Requests[v1.ResourceCPU] = req.DeepCopy()
			}
		}
	} else {
		keep(r.Requests, oldReqs, v1.ResourceCPU)
	}
	if _, ok := r.Requests[v1.ResourceMemory]; !ok {
		mem, found := PodRequests(pod)[v1.ResourceMemory]
		if found || !o.Version.AtLeast(kubeversion.V1_36) {
			// 1.35 writes the sum even when no container asks for memory: 0.
			r.Requests[v1.ResourceMemory] = mem
		}
	}
	if lim := cg.cpuLimit(); lim != nil {
		allocated := r.Limits[v1.ResourceCPU]
		if lim.MilliValue() > minMilliCPULimit || allocated.MilliValue() > minMilliCPULimit {
			r.Limits[v1.ResourceCPU] = lim.DeepCopy()
		}
	} else {
		keep(r.Limits, oldLims, v1.ResourceCPU)
	}
	if mem := cg.memoryLimit(); mem != nil {
		r.Limits[v1.ResourceMemory] = mem.DeepCopy()
	} else {
		keep(r.Limits, oldLims, v1.ResourceMemory)
	}
	if !o.Version.AtLeast(kubeversion.V1_36) {
		// 1.35 then keeps the old status's memory request over any other.
		keep(r.Requests, oldReqs, v1.ResourceMemory)
	}
	r.Requests, r.Limits = nonEmpty(r.Requests), nonEmpty(r.Limits)
	return r
}
