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
	var l qlist
	l.podRequests(pod)
	return l.into(v1.ResourceList{})
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
	var l qlist
	l.podLimits(pod)
	return l.into(v1.ResourceList{})
}

// qlistLen is how many resources a qlist holds before it grows onto the
// heap: cpu, memory, ephemeral-storage and one more.
const qlistLen = 4

// qentry is one resource of a qlist.
type qentry struct {
	name v1.ResourceName
	q    resource.Quantity
}

// qlist is a resource list as a short array: the sums of PodRequests and
// PodLimits without maps, so that a status generated again allocates
// nothing. Each resource is summed in the order of the containers, as with
// maps. The zero value is empty.
type qlist struct {
	n    int
	e    [qlistLen]qentry
	more []qentry // the resources beyond the array
}

func (l *qlist) len() int { return l.n + len(l.more) }

// at returns the i'th resource.
func (l *qlist) at(i int) *qentry {
	if i < l.n {
		return &l.e[i]
	}
	return &l.more[i-l.n]
}

func (l *qlist) find(name v1.ResourceName) *qentry {
	for i := range l.len() {
		if e := l.at(i); e.name == name {
			return e
		}
	}
	return nil
}

// get returns the quantity of name, and whether the list has it.
func (l *qlist) get(name v1.ResourceName) (resource.Quantity, bool) {
	if e := l.find(name); e != nil {
		return e.q, true
	}
	return resource.Quantity{}, false
}

// set puts q as the quantity of name.
func (l *qlist) set(name v1.ResourceName, q resource.Quantity) {
	if e := l.find(name); e != nil {
		e.q = q
		return
	}
	l.push(name, q)
}

func (l *qlist) push(name v1.ResourceName, q resource.Quantity) {
	if l.n < qlistLen {
		l.e[l.n] = qentry{name, q}
		l.n++
		return
	}
	l.more = append(l.more, qentry{name, q})
}

// copyOf adds a copy of every quantity of list, which l lacks.
func (l *qlist) copyOf(list v1.ResourceList) {
	for name, q := range list {
		l.push(name, q.DeepCopy())
	}
}

// add adds every quantity of add.
func (l *qlist) add(add v1.ResourceList) {
	for name, q := range add {
		l.addOne(name, q)
	}
}

func (l *qlist) addOne(name v1.ResourceName, q resource.Quantity) {
	if e := l.find(name); e != nil {
		e.q.Add(q)
		return
	}
	l.push(name, q.DeepCopy())
}

// raise raises every quantity to the one of from where that is larger,
// adding what l lacks.
func (l *qlist) raise(from *qlist) {
	for i := range from.len() {
		f := from.at(i)
		if e := l.find(f.name); e == nil || f.q.Cmp(e.q) > 0 {
			l.set(f.name, f.q.DeepCopy())
		}
	}
}

// into returns the list as dst, cleared first.
func (l *qlist) into(dst v1.ResourceList) v1.ResourceList {
	clear(dst)
	for i := range l.len() {
		e := l.at(i)
		dst[e.name] = e.q
	}
	return dst
}

// intoNonEmpty is into on dst's storage (a new map when dst is nil), or
// nil when l is empty: the API server stores an empty list as none.
func (l *qlist) intoNonEmpty(dst v1.ResourceList) v1.ResourceList {
	if l.len() == 0 {
		return nil
	}
	if dst == nil {
		dst = make(v1.ResourceList, l.len())
	}
	return l.into(dst)
}

// podRequests sums the pod's requests into l, as PodRequests returns them.
func (l *qlist) podRequests(pod *v1.Pod) {
	l.aggregate(&pod.Spec, func(c *v1.Container) v1.ResourceList { return c.Resources.Requests })
	if podLevelRequestsSet(&pod.Spec) {
		l.applyPodLevel(pod.Spec.Resources.Requests)
	}
	if pod.Spec.Overhead != nil {
		l.add(pod.Spec.Overhead)
	}
}

// podLimits sums the pod's limits into l, as PodLimits returns them.
func (l *qlist) podLimits(pod *v1.Pod) {
	l.aggregate(&pod.Spec, func(c *v1.Container) v1.ResourceList { return c.Resources.Limits })
	if podLevelSet(&pod.Spec) {
		l.applyPodLevel(pod.Spec.Resources.Limits)
	}
	for name, q := range pod.Spec.Overhead {
		if e := l.find(name); e != nil && !e.q.IsZero() {
			e.q.Add(q)
		}
	}
}

// aggregate sums list over the regular containers into l and takes the
// init containers' peak: each regular init container counts with the
// sidecars before it, each sidecar adds to the running total and to that
// peak's base (KEP-753's formula).
func (l *qlist) aggregate(spec *v1.PodSpec, list func(*v1.Container) v1.ResourceList) {
	if !anyListed(spec, list) {
		return // nothing to sum: the common pod without requests or limits
	}
	for i := range spec.Containers {
		l.add(list(&spec.Containers[i]))
	}
	var sidecars, peak qlist
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			l.add(list(c))
			sidecars.add(list(c))
			peak.raise(&sidecars)
			continue
		}
		var during qlist
		during.add(list(c))
		for j := range sidecars.len() {
			during.addOne(sidecars.at(j).name, sidecars.at(j).q)
		}
		peak.raise(&during)
	}
	l.raise(&peak)
}

// anyListed reports whether some container of spec has an entry in list.
func anyListed(spec *v1.PodSpec, list func(*v1.Container) v1.ResourceList) bool {
	for _, cs := range [2][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			if len(list(&cs[i])) > 0 {
				return true
			}
		}
	}
	return false
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

// applyPodLevel puts the pod-level values of pod in place of the
// containers' sum.
func (l *qlist) applyPodLevel(pod v1.ResourceList) {
	for name, q := range pod {
		if podLevelResource(name) {
			l.set(name, q)
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

// cpuRequest is the CPU request the pod cgroup's shares stand for, and
// false when they stand for none.
func (c *PodCgroup) cpuRequest() (resource.Quantity, bool) {
	if c == nil || c.CPUShares == nil || *c.CPUShares == 0 {
		return resource.Quantity{}, false
	}
	s := int64(*c.CPUShares)
	if s < minShares {
		return resource.Quantity{}, false
	}
	// Rounded up, so that the shares of a request give that request back.
	m := int64(math.Ceil(float64(s*1000) / sharesPerCPU))
	if m <= 0 {
		return resource.Quantity{}, false
	}
	return *resource.NewMilliQuantity(m, resource.DecimalSI), true
}

// cpuLimit is the CPU limit the pod cgroup's quota stands for, and false
// when it stands for none.
func (c *PodCgroup) cpuLimit() (resource.Quantity, bool) {
	if c == nil || c.CPUPeriod == nil || *c.CPUPeriod == 0 || c.CPUQuota == nil || *c.CPUQuota == -1 {
		return resource.Quantity{}, false
	}
	m := *c.CPUQuota * 1000 / int64(*c.CPUPeriod)
	if m <= 0 {
		return resource.Quantity{}, false
	}
	return *resource.NewMilliQuantity(m, resource.DecimalSI), true
}

// memoryLimit is the pod cgroup's memory limit, and false when it has none.
func (c *PodCgroup) memoryLimit() (resource.Quantity, bool) {
	if c == nil || c.Memory == nil || *c.Memory <= 0 {
		return resource.Quantity{}, false
	}
	return *resource.NewQuantity(*c.Memory, resource.BinarySI), true
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

// effectiveResources is the kubelet's allocated pod-level resources,
// written into dst's storage (a new one when dst is nil): the pod-level
// spec resources (their claims too) with the requests of [PodRequests]
// (reqs, summed by the caller) and the limits of [PodLimits].
func effectiveResources(dst *v1.ResourceRequirements, pod *v1.Pod, reqs *qlist) *v1.ResourceRequirements {
	r, limits, requests := resetResources(dst, pod)
	var lims qlist
	lims.podLimits(pod)
	r.Requests, r.Limits = reqs.intoNonEmpty(requests), lims.intoNonEmpty(limits)
	return r
}

// resetResources empties dst (a new one when dst is nil) but for a copy of
// the pod-level spec resources' claims, and returns the maps dst held, for
// reuse.
func resetResources(dst *v1.ResourceRequirements, pod *v1.Pod) (r *v1.ResourceRequirements, limits, requests v1.ResourceList) {
	if dst == nil {
		dst = &v1.ResourceRequirements{}
	}
	limits, requests, claims := dst.Limits, dst.Requests, dst.Claims
	*dst = v1.ResourceRequirements{}
	if src := pod.Spec.Resources; src != nil && src.Claims != nil {
		dst.Claims = append(claims[:0], src.Claims...)
		if dst.Claims == nil {
			dst.Claims = []v1.ResourceClaim{}
		}
	}
	return dst, limits, requests
}

// podResources is the kubelet's status.resources (spec/podphase.md section
// 4.3), written into dst's storage (a new one when dst is nil). pod is the
// API pod, whose status phase is the one read, and reqs its summed
// requests (qlist.podRequests); old is the old status (the kubelet's
// cached one, else the API's).
func (o Options) podResources(dst *v1.ResourceRequirements, pod *v1.Pod, reqs *qlist, old *v1.PodStatus, cg *PodCgroup) *v1.ResourceRequirements {
	if pod.Status.Phase != v1.PodRunning {
		return effectiveResources(dst, pod, reqs)
	}
	r, limits, requests := resetResources(dst, pod)
	// The requests written start from the pod-level spec; sum are the
	// summed ones, read for the memory request below.
	var own, lims qlist
	sum, reqs := reqs, &own
	if spec := pod.Spec.Resources; spec != nil {
		reqs.copyOf(spec.Requests)
		lims.copyOf(spec.Limits)
	}
	var oldReqs, oldLims v1.ResourceList
	if old.Resources != nil {
		oldReqs, oldLims = old.Resources.Requests, old.Resources.Limits
	}
	// A value the cgroup does not give is the old status's when that was
	// Running too.
	keep := func(list *qlist, oldList v1.ResourceList, name v1.ResourceName) {
		if old.Phase != v1.PodRunning {
			return
		}
		if q, ok := oldList[name]; ok {
			list.set(name, q.DeepCopy())
		}
	}
	if req, ok := cg.cpuRequest(); ok {
		allocated, _ := reqs.get(v1.ResourceCPU)
		// At or below the floor on both sides the allocated value stays; so
		// it does (1.37) when the shares read back are the allocated ones
		// after a trip through a cgroup v2 weight.
		if req.MilliValue() > minMilliCPURequest || allocated.MilliValue() > minMilliCPURequest {
			if !o.Version.AtLeast(kubeversion.V1_37) || !sameAfterWeight(milliToShares(allocated.MilliValue()), *cg.CPUShares) {
				reqs.set(v1.ResourceCPU, req.DeepCopy())
			}
		}
	} else {
		keep(reqs, oldReqs, v1.ResourceCPU)
	}
	if _, ok := reqs.get(v1.ResourceMemory); !ok {
		mem, found := sum.get(v1.ResourceMemory)
		if found || !o.Version.AtLeast(kubeversion.V1_36) {
			// 1.35 writes the sum even when no container asks for memory: 0.
			reqs.set(v1.ResourceMemory, mem)
		}
	}
	if lim, ok := cg.cpuLimit(); ok {
		allocated, _ := lims.get(v1.ResourceCPU)
		if lim.MilliValue() > minMilliCPULimit || allocated.MilliValue() > minMilliCPULimit {
			lims.set(v1.ResourceCPU, lim.DeepCopy())
		}
	} else {
		keep(&lims, oldLims, v1.ResourceCPU)
	}
	if mem, ok := cg.memoryLimit(); ok {
		lims.set(v1.ResourceMemory, mem.DeepCopy())
	} else {
		keep(&lims, oldLims, v1.ResourceMemory)
	}
	if !o.Version.AtLeast(kubeversion.V1_36) {
		// 1.35 then keeps the old status's memory request over any other.
		keep(reqs, oldReqs, v1.ResourceMemory)
	}
	r.Requests, r.Limits = reqs.intoNonEmpty(requests), lims.intoNonEmpty(limits)
	return r
}
