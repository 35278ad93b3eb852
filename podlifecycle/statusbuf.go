package podlifecycle

import (
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/internal/statuscopy"
	"github.com/nodestate/nodestate/internal/statuseq"
	"github.com/nodestate/nodestate/podphase"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusBuf is the storage of one pod status the machine generates: the
// status and what its lists and pointers of the machine's own point to.
// The machine keeps two, the last status it produced and the one it
// generates into next, and swaps them when a status is new; what a status
// shares with the API pod (hostIPs, the API's podIPs, claims) is never
// written into.
type statusBuf struct {
	st                v1.PodStatus
	inits, regs, ephs []v1.ContainerStatus
	ips               []v1.PodIP
	start             metav1.Time
	n                 int  // 0 or 1: which of the machine's two it is (ctr.content)
	noLend            bool // tests: no state memory lent (Machine.noSkip)
}

// slot returns the status of init or regular container c in b.
func (b *statusBuf) slot(m *Machine, c *ctr) *v1.ContainerStatus {
	if c.kind == containerstate.Init {
		return &b.inits[c.index]
	}
	return &b.regs[c.index]
}

// A container whose last conversion gave its old status again (settled),
// identical in every field, gives it again from the same inputs: its
// genInput, the pod and the facts containerstate reads of it, and an old
// status that is that one. markReusable marks, before a generation, the
// init and regular containers whose conversion is therefore known; the
// generation copies their old status instead of converting it, or leaves
// the storage alone when it already holds that status (ctr.content names
// what each buffer holds: statuses of one number are identical).
func (m *Machine) markReusable(key genKey) {
	last := m.genKey
	pod := !m.noSkip && m.lastStatus != nil && m.lastBuf != nil && &m.lastBuf.st == m.lastStatus &&
		key.pod == last.pod && key.regularCreated == last.regularCreated && key.marked == last.marked
	for i := range m.nInit + m.nRegular {
		c := &m.ctrs[i]
		c.reusable = pod && c.settled && !c.inputChanged
	}
}

// reuseSettled writes into dst, the status of container c in b, its old
// status when markReusable marked it, and reports whether it did.
func (m *Machine) reuseSettled(b *statusBuf, c *ctr, old, dst *v1.ContainerStatus) bool {
	if !c.reusable || old != m.lastBuf.slot(m, c) {
		return false
	}
	if id := c.content[m.lastBuf.n]; c.content[b.n] != id {
		lent := c.lend(b, dst)
		statuscopy.ContainerStatus(dst, old)
		c.reclaim(b, lent, dst)
		c.content[b.n] = id
		m.copied++
	}
	return true
}

// A status written into a buffer reuses what its states pointed to there
// only for the kind it has again; the other kinds' memory is kept aside
// (ctr.spare, per buffer) and lent back, so that a container going from
// waiting to running to terminated allocates no state once each kind was
// seen. lend puts the spare memory into dst's empty state members before
// a conversion or copy into dst, which keeps one member of each state;
// reclaim takes back what it left.
func (c *ctr) lend(b *statusBuf, dst *v1.ContainerStatus) [2]v1.ContainerState {
	if b.noLend {
		return [2]v1.ContainerState{}
	}
	sp := &c.spare[b.n]
	return [2]v1.ContainerState{lendState(&dst.State, &sp[0]), lendState(&dst.LastTerminationState, &sp[1])}
}

func (c *ctr) reclaim(b *statusBuf, lent [2]v1.ContainerState, dst *v1.ContainerStatus) {
	sp := &c.spare[b.n]
	reclaimState(&dst.State, &lent[0], &sp[0])
	reclaimState(&dst.LastTerminationState, &lent[1], &sp[1])
}

func lendState(st, spare *v1.ContainerState) v1.ContainerState {
	if st.Waiting == nil {
		st.Waiting, spare.Waiting = spare.Waiting, nil
	}
	if st.Running == nil {
		st.Running, spare.Running = spare.Running, nil
	}
	if st.Terminated == nil {
		st.Terminated, spare.Terminated = spare.Terminated, nil
	}
	return *st
}

func reclaimState(st, lent, spare *v1.ContainerState) {
	if lent.Waiting != nil && st.Waiting != lent.Waiting {
		spare.Waiting = lent.Waiting
	}
	if lent.Running != nil && st.Running != lent.Running {
		spare.Running = lent.Running
	}
	if lent.Terminated != nil && st.Terminated != lent.Terminated {
		spare.Terminated = lent.Terminated
	}
}

// settle records after c's conversion into dst, its status in b, whether
// it gave its old status again, and numbers dst's content.
func (m *Machine) settle(b *statusBuf, c *ctr, old, dst *v1.ContainerStatus) {
	c.settled = old != nil && statuseq.Identical(dst, old)
	if c.settled && m.lastBuf != nil && old == m.lastBuf.slot(m, c) && c.content[m.lastBuf.n] != 0 {
		c.content[b.n] = c.content[m.lastBuf.n]
		return
	}
	m.contentSeq++
	c.content[b.n] = m.contentSeq
}

// grow returns s with length n, keeping the storage of its elements (the
// container states, resources and mounts ConvertTo reuses).
func grow(s []v1.ContainerStatus, n int) []v1.ContainerStatus {
	if cap(s) < n {
		g := make([]v1.ContainerStatus, n, n+1)
		copy(g, s[:cap(s)])
		return g
	}
	return s[:n]
}

// genInput is what generate reads of one container: the runtime's two
// newest instances as containerstate takes them, when the newest turned
// UNKNOWN, the probe results the status reads and the reason cache entry.
// It is comparable: equal inputs convert to equal statuses.
type genInput struct {
	newest, prev containerstate.Instance
	insts        int // how many of newest and prev are set
	unknownSince time.Time
	probes       containerstate.Probes
	startErr     containerstate.StartError
	hasStartErr  bool
}

// genKey is what generate reads besides the containers' genInputs, the
// last status (unchanged while genValid holds) and the machine's options
// (fixed). The API pod is compared by pointer: the machine reads a pod it
// is handed as immutable. Time enters a status in three places only: the
// active deadline (evict), the UNKNOWN grace (none: the machine converts
// without one, UnknownGrace is zero) and the lastTransitionTime of a
// condition whose status flips, which a generation that gives the last
// status again does not do (stampedAt).
type genKey struct {
	pod                     *v1.Pod
	terminal, evict, marked bool
	initialized, cleanedUp  bool
	regularCreated, cgroup  bool
	sandbox                 podphase.Sandbox
	sbReady                 bool
	sbIP                    string
	startTime               time.Time
}

// genKeyOf returns the key of a generation now and brings m.genIn up to
// date with the containers' inputs, setting ctr.inputChanged where they
// differ from those of the last generation, and inputsChanged when one
// does (or a container was added).
func (m *Machine) genKeyOf(terminal, evict bool) (k genKey, inputsChanged bool) {
	k = genKey{pod: m.pod, terminal: terminal, evict: evict, marked: m.marked,
		initialized: m.activeInitialized(), cleanedUp: true, sandbox: m.sandboxCondition(),
		sbReady: m.sb.ready, sbIP: m.sb.ip, startTime: m.startTime,
		cgroup: m.opts.Cgroups == CgroupsV2 && m.opts.Features.InPlacePodLevelResourcesVerticalScaling && m.pod.Status.Phase == v1.PodRunning}
	if len(m.genIn) != len(m.ctrs) {
		grown := make([]genInput, len(m.ctrs))
		copy(grown, m.genIn)
		m.genIn, inputsChanged = grown, true
	}
	for i := range m.ctrs {
		c := &m.ctrs[i]
		if i < m.nInit+m.nRegular {
			k.cleanedUp = k.cleanedUp && len(c.insts) == 0
		}
		if c.kind == containerstate.Regular {
			k.regularCreated = k.regularCreated || len(c.insts) > 0
		}
		g := genInput{startErr: c.startErr, hasStartErr: c.hasStartErr, insts: min(len(c.insts), 2)}
		if len(c.insts) > 0 {
			n := &c.insts[0]
			g.newest, g.unknownSince = n.instance(), n.unknownSince
			g.probes.Startup = n.probes[Startup-1].result
			g.probes.Readiness = n.probes[Readiness-1].result
			if c.spec.StartupProbe == nil && n.state == containerstate.RuntimeRunning {
				g.probes.Startup = containerstate.ProbeSuccess
			}
		}
		if len(c.insts) > 1 {
			g.prev = c.insts[1].instance()
		}
		c.inputChanged = g != m.genIn[i]
		if c.inputChanged || m.noSkip {
			// A machine that regenerates every time takes its inputs
			// afresh, whatever the comparison says.
			m.genIn[i] = g
			inputsChanged = inputsChanged || c.inputChanged
		}
	}
	return k, inputsChanged
}

// podCgroup is what the kubelet reads back from the pod's cgroup, which
// the machine does not write: the values it would have written, as a
// cgroup v2 host gives them (spec/podphase.md section 4.5). They depend on
// the spec alone, so they are computed once per pod.
func (m *Machine) podCgroup() *podphase.PodCgroup {
	if m.cgPod != m.pod {
		m.cg, m.cgPod = podphase.PodCgroupOf(m.pod).ReadBackV2(), m.pod
	}
	return &m.cg
}

// copyOut returns a copy of st that shares no memory with it, equal to
// st.DeepCopy() field for field, in few allocations: one for the
// conditions, one for the container statuses of the three lists, one for
// what those point to (but terminations) with the start time, the pod IPs
// and the pod-level resources, and one for the terminations. Resource
// lists and the rarer fields are copied as DeepCopy copies them.
func copyOut(st *v1.PodStatus) v1.PodStatus {
	// Every pointer, list and map of a PodStatus is copied below;
	// TestPropertyCopyOutIsDeepCopy fails for one an API version adds.
	out := *st
	out.Conditions, out.PodIPs, out.StartTime, out.Resources = nil, nil, nil, nil
	out.InitContainerStatuses, out.ContainerStatuses, out.EphemeralContainerStatuses = nil, nil, nil
	if st.HostIPs != nil {
		out.HostIPs = make([]v1.HostIP, len(st.HostIPs))
		copy(out.HostIPs, st.HostIPs)
	}
	out.AllocatedResources = st.AllocatedResources.DeepCopy()
	out.ExtendedResourceClaimStatus = st.ExtendedResourceClaimStatus.DeepCopy()
	out.ResourceClaimStatuses = copyEach(st.ResourceClaimStatuses, (*v1.PodResourceClaimStatus).DeepCopyInto)
	out.NodeAllocatableResourceClaimStatuses = copyEach(st.NodeAllocatableResourceClaimStatuses, (*v1.NodeAllocatableResourceClaimStatus).DeepCopyInto)
	out.VolumeHealth = copyEach(st.VolumeHealth, (*v1.PodVolumeHealth).DeepCopyInto)
	if st.Conditions != nil {
		// A condition holds values only: copying it copies it deeply.
		out.Conditions = make([]v1.PodCondition, len(st.Conditions))
		copy(out.Conditions, st.Conditions)
	}
	lists := [3][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses}
	n, mounts, terminations := 0, 0, 0
	for _, l := range lists {
		n += len(l)
		for i := range l {
			mounts += len(l[i].VolumeMounts)
			if l[i].State.Terminated != nil {
				terminations++
			}
			if l[i].LastTerminationState.Terminated != nil {
				terminations++
			}
		}
	}
	// One element more than there are containers holds the pod's part.
	extra := make([]ctrExtra, n+1)
	pod := &extra[n]
	if st.PodIPs != nil {
		out.PodIPs = pod.ips[:0:len(pod.ips)]
		if len(st.PodIPs) > len(pod.ips) {
			out.PodIPs = make([]v1.PodIP, 0, len(st.PodIPs))
		}
		out.PodIPs = append(out.PodIPs, st.PodIPs...)
	}
	if st.StartTime != nil {
		pod.running.StartedAt = *st.StartTime
		out.StartTime = &pod.running.StartedAt
	}
	if st.Resources != nil {
		st.Resources.DeepCopyInto(&pod.resources)
		out.Resources = &pod.resources
	}
	all := make([]v1.ContainerStatus, n)
	x := copyMemory{terms: make([]v1.ContainerStateTerminated, 0, terminations)}
	if mounts > 0 {
		x.ms, x.modes = make([]v1.VolumeMountStatus, 0, mounts), make([]v1.RecursiveReadOnlyMode, 0, mounts)
	}
	j := 0
	for k, l := range lists {
		if l == nil {
			continue
		}
		start := j
		for i := range l {
			copyContainerStatus(&all[j], &l[i], &extra[j], &x)
			j++
		}
		part := all[start:j:j]
		switch k {
		case 0:
			out.InitContainerStatuses = part
		case 1:
			out.ContainerStatuses = part
		default:
			out.EphemeralContainerStatuses = part
		}
	}
	return out
}

// copyEach returns a deep copy of l (nil for nil), each element copied by
// copyInto.
func copyEach[T any](l []T, copyInto func(*T, *T)) []T {
	if l == nil {
		return nil
	}
	out := make([]T, len(l))
	for i := range l {
		copyInto(&l[i], &out[i])
	}
	return out
}

// ctrExtra holds what a copied container status's pointers point to, but
// terminations: a waiting or running state, started, the stop signal and
// the resources. The element after the containers' holds the pod's start
// time (in running), IPs and resources.
type ctrExtra struct {
	waiting   v1.ContainerStateWaiting
	running   v1.ContainerStateRunning
	started   bool
	signal    v1.Signal
	resources v1.ResourceRequirements
	ips       [2]v1.PodIP
}

// copyMemory is the memory copies of a status's terminations and volume
// mounts are carved from, sized beforehand so that it never grows.
type copyMemory struct {
	terms []v1.ContainerStateTerminated
	ms    []v1.VolumeMountStatus
	modes []v1.RecursiveReadOnlyMode
}

func (x *copyMemory) terminated(t *v1.ContainerStateTerminated) *v1.ContainerStateTerminated {
	x.terms = append(x.terms, *t)
	return &x.terms[len(x.terms)-1]
}

// copyContainerStatus copies src into dst with what it points to in e and
// x. Every pointer, list and map of a ContainerStatus is copied below;
// TestPropertyCopyOutIsDeepCopy fails for one an API version adds.
func copyContainerStatus(dst, src *v1.ContainerStatus, e *ctrExtra, x *copyMemory) {
	*dst = *src
	dst.State = v1.ContainerState{}
	if src.State.Waiting != nil {
		e.waiting = *src.State.Waiting
		dst.State.Waiting = &e.waiting
	}
	if src.State.Running != nil {
		e.running = *src.State.Running
		dst.State.Running = &e.running
	}
	if src.State.Terminated != nil {
		dst.State.Terminated = x.terminated(src.State.Terminated)
	}
	last := &dst.LastTerminationState
	*last = v1.ContainerState{}
	if src.LastTerminationState.Terminated != nil {
		last.Terminated = x.terminated(src.LastTerminationState.Terminated)
	}
	last.Waiting = src.LastTerminationState.Waiting.DeepCopy()
	last.Running = src.LastTerminationState.Running.DeepCopy()
	if src.Started != nil {
		e.started = *src.Started
		dst.Started = &e.started
	}
	if src.StopSignal != nil {
		e.signal = *src.StopSignal
		dst.StopSignal = &e.signal
	}
	if src.Resources != nil {
		src.Resources.DeepCopyInto(&e.resources)
		dst.Resources = &e.resources
	}
	dst.AllocatedResources = src.AllocatedResources.DeepCopy()
	dst.User = src.User.DeepCopy()
	if src.AllocatedResourcesStatus != nil {
		dst.AllocatedResourcesStatus = make([]v1.ResourceStatus, len(src.AllocatedResourcesStatus))
		for i := range src.AllocatedResourcesStatus {
			src.AllocatedResourcesStatus[i].DeepCopyInto(&dst.AllocatedResourcesStatus[i])
		}
	}
	if src.VolumeMounts != nil {
		start := len(x.ms)
		for i := range src.VolumeMounts {
			m := src.VolumeMounts[i]
			rro := m.RecursiveReadOnly
			m.RecursiveReadOnly = nil
			var c v1.VolumeMountStatus
			m.DeepCopyInto(&c) // the volume status, as DeepCopy copies it
			if rro != nil {
				x.modes = append(x.modes, *rro)
				c.RecursiveReadOnly = &x.modes[len(x.modes)-1]
			}
			x.ms = append(x.ms, c)
		}
		dst.VolumeMounts = x.ms[start:len(x.ms):len(x.ms)]
		if dst.VolumeMounts == nil {
			dst.VolumeMounts = []v1.VolumeMountStatus{}
		}
	}
}
