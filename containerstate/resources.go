package containerstate

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/internal/reslist"
	"github.com/nodestate/nodestate/kubeversion"
)

// The kubelet's floors below which an actuated CPU value and the allocated
// one are both taken as "at the minimum", so the status keeps the allocated
// value (pkg/kubelet/cm: MinShares compared with milli-CPU as the kubelet
// does, and the smallest CFS quota, 1 ms of a 100 ms period, in milli-CPU).
const (
	minMilliCPURequest = 2
	minMilliCPULimit   = 10
)

// DeepCopy returns a copy of a that shares no quantity with it; nil for a
// nil a.
func (a *ActuatedResources) DeepCopy() *ActuatedResources {
	if a == nil {
		return nil
	}
	c := &ActuatedResources{}
	for _, q := range [...]struct{ from, to **resource.Quantity }{
		{&a.CPURequest, &c.CPURequest}, {&a.CPULimit, &c.CPULimit},
		{&a.MemoryRequest, &c.MemoryRequest}, {&a.MemoryLimit, &c.MemoryLimit},
	} {
		if *q.from != nil {
			v := (*q.from).DeepCopy()
			*q.to = &v
		}
	}
	return c
}

// slot names one of the four values of a status's resources that the
// runtime can report.
type slot uint8

const (
	limitsCPU slot = iota
	limitsMemory
	requestsCPU
	requestsMemory
	numSlots
)

func (s slot) name() v1.ResourceName {
	if s == limitsCPU || s == requestsCPU {
		return v1.ResourceCPU
	}
	return v1.ResourceMemory
}

func (s slot) list(r *v1.ResourceRequirements) v1.ResourceList {
	if s == limitsCPU || s == limitsMemory {
		return r.Limits
	}
	return r.Requests
}

// quantityValue is a quantity that may be absent.
type quantityValue struct {
	q  resource.Quantity
	ok bool
}

// resourcesValue is a status's resources without copies: the requirements it
// is built on (shared, read only) and the values that replace theirs. Its
// maps are copied only when the status is turned into its API form, so a
// Machine's Step allocates nothing.
type resourcesValue struct {
	set  bool // the status's resources are not nil
	base v1.ResourceRequirements
	ov   [numSlots]quantityValue
}

// lookup returns the value of slot s, and false when the resources have none.
func (r *resourcesValue) lookup(s slot) (resource.Quantity, bool) {
	if r.ov[s].ok {
		return r.ov[s].q, true
	}
	if !r.set {
		return resource.Quantity{}, false
	}
	q, ok := s.list(&r.base)[s.name()]
	return q, ok
}

// writeTo returns r's API form in dst's storage (a new one when dst is
// nil), or nil when the status has no resources. The maps and claims are
// copies, never r's base.
func (r *resourcesValue) writeTo(dst *v1.ResourceRequirements) *v1.ResourceRequirements {
	if !r.set {
		return nil
	}
	if dst == nil {
		dst = new(v1.ResourceRequirements)
	}
	limits, requests, claims := dst.Limits, dst.Requests, dst.Claims
	*dst = v1.ResourceRequirements{Limits: reslist.Copy(limits, r.base.Limits), Requests: reslist.Copy(requests, r.base.Requests)}
	if r.base.Claims != nil {
		dst.Claims = append(claims[:0], r.base.Claims...)
		if dst.Claims == nil {
			dst.Claims = []v1.ResourceClaim{}
		}
	}
	for s := range numSlots {
		if !r.ov[s].ok {
			continue
		}
		list := s.list(dst)
		if list == nil {
			// The base has none: a map of dst's earlier storage, else a new one.
			if s == limitsCPU || s == limitsMemory {
				list = reslist.Empty(limits)
				dst.Limits = list
			} else {
				list = reslist.Empty(requests)
				dst.Requests = list
			}
		}
		list[s.name()] = r.ov[s].q.DeepCopy()
	}
	return dst
}

// reported are the values the kubelet reads as the runtime's for a running
// instance (kubecontainer.Status.Resources), by slot.
type reported [numSlots]quantityValue

func reportedOf(a *ActuatedResources) reported {
	var r reported
	for s, q := range [numSlots]*resource.Quantity{limitsCPU: a.CPULimit, limitsMemory: a.MemoryLimit, requestsCPU: a.CPURequest, requestsMemory: a.MemoryRequest} {
		if q != nil {
			r[s] = quantityValue{q: *q, ok: true}
		}
	}
	return r
}

// recordLimit is the limit the kubelet recorded as actuated when it created
// the container: the container's own, or, with
// InPlacePodLevelResourcesVerticalScaling, the pod-level one when the
// container sets none (a zero one counts as none).
func (o Options) recordLimit(t *target, name v1.ResourceName) (resource.Quantity, bool) {
	q, ok := t.container.Resources.Limits[name]
	if !q.IsZero() || !o.Features.InPlacePodLevelResourcesVerticalScaling || t.pod.Spec.Resources == nil || len(t.pod.Spec.Resources.Limits) == 0 {
		return q, ok
	}
	if p := t.pod.Spec.Resources.Limits[name]; !p.IsZero() {
		return p, true
	}
	return q, ok
}

// zeroOf is a quantity of zero in the format the API gives name, as a
// ResourceList's Cpu() and Memory() return for a missing entry.
func zeroOf(name v1.ResourceName) resource.Quantity {
	if name == v1.ResourceCPU {
		return resource.Quantity{Format: resource.DecimalSI}
	}
	return resource.Quantity{Format: resource.BinarySI}
}

// reportedFor is what the kubelet takes as the runtime's resources of inst
// (spec section 4.6, step 1). From 1.35 the runtime manager completes a
// report from the kubelet's record of what it applied at creation, which
// without in-place resize is the allocated resources: a runtime that reports
// nothing gets all four values from the record (zero where the record has
// none, as the record's Cpu() and Memory() give), and a report without a
// memory request gets the record's, when that is not zero. Before 1.35 the
// report is taken as it is.
func (o Options) reportedFor(t *target, inst *Instance) reported {
	var r reported
	if inst.Resources != nil {
		r = reportedOf(inst.Resources)
	}
	if !o.Version.AtLeast(kubeversion.V1_35) || r[requestsMemory].ok {
		return r
	}
	req := t.container.Resources.Requests
	if inst.Resources == nil {
		for s := range numSlots {
			q, ok := req[s.name()]
			if s == limitsCPU || s == limitsMemory {
				q, ok = o.recordLimit(t, s.name())
			}
			if !ok {
				q = zeroOf(s.name())
			}
			r[s] = quantityValue{q: q, ok: true}
		}
		return r
	}
	if mem := req[v1.ResourceMemory]; !mem.IsZero() {
		r[requestsMemory] = quantityValue{q: mem, ok: true}
	}
	return r
}

// resourcesFor converts the resources of a status built from runtime
// instance inst (spec section 4.6): the allocated resources (the container's
// spec; nodestate does not model in-place resize) for an instance that is
// not running; for a running one the allocated resources with each value
// the runtime reports put in their place, and each value it does not report
// kept from the old status when that showed the same instance running.
func (o Options) resourcesFor(t *target, old *statusValue, hasOld bool, inst *Instance, r *resourcesValue) {
	alloc := t.container.Resources
	*r = resourcesValue{set: true, base: alloc}
	if inst.State != RuntimeRunning || alloc.Limits == nil && alloc.Requests == nil {
		// Nothing running, or no list whose values the runtime's replace.
		return
	}
	rep := o.reportedFor(t, inst)
	sameRunning := hasOld && old.state.kind == Running && old.containerID == inst.ID
	keep := func(s slot) {
		if !sameRunning {
			return
		}
		if q, ok := old.resources.lookup(s); ok {
			r.ov[s] = quantityValue{q: q, ok: true}
		}
	}
	// A CPU value at or below the floor on both sides keeps the allocated
	// value, so that a runtime's rounding at the minimum does not show.
	cpu := func(s slot, floor int64) {
		if !rep[s].ok {
			keep(s)
			return
		}
		allocated := s.list(&alloc)[v1.ResourceCPU]
		if rep[s].q.MilliValue() > floor || allocated.MilliValue() > floor {
			r.ov[s] = rep[s]
		}
	}
	memory := func(s slot) {
		if rep[s].ok {
			r.ov[s] = rep[s]
		} else {
			keep(s)
		}
	}
	if alloc.Limits != nil {
		cpu(limitsCPU, minMilliCPULimit)
		memory(limitsMemory)
	}
	if alloc.Requests != nil {
		cpu(requestsCPU, minMilliCPURequest)
		// Before 1.35 the memory request comes from the kubelet's record of
		// what it applied, which is the allocated request: it stays.
		if o.Version.AtLeast(kubeversion.V1_35) {
			memory(requestsMemory)
		}
	}
}
