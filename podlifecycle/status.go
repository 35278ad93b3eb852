package podlifecycle

import (
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podphase"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// active returns the active instance of c: its newest instance when that is
// in the newest sandbox and the sandbox is ready (section 1), or nil.
func (m *Machine) active(c *ctr) *inst {
	if !m.sb.ready || len(c.insts) == 0 || c.insts[0].sandbox != m.sb.attempt {
		return nil
	}
	return &c.insts[0]
}

// newest returns the newest instance of c, or nil.
func newest(c *ctr) *inst {
	if len(c.insts) == 0 {
		return nil
	}
	return &c.insts[0]
}

// regulars and inits return the containers of each list.
func (m *Machine) inits() []ctr    { return m.ctrs[:m.nInit] }
func (m *Machine) regulars() []ctr { return m.ctrs[m.nInit : m.nInit+m.nRegular] }
func (m *Machine) ephemerals() []ctr {
	return m.ctrs[m.nInit+m.nRegular:]
}

// activeInitialized is the kubelet's podHasInitialized from the runtime: a
// regular container has an active instance.
func (m *Machine) activeInitialized() bool {
	rs := m.regulars()
	for i := range rs {
		if m.active(&rs[i]) != nil {
			return true
		}
	}
	return false
}

// sandboxCondition is the sandbox state of the PodReadyToStartContainers
// condition.
func (m *Machine) sandboxCondition() podphase.Sandbox {
	switch {
	case !m.sb.exists:
		return podphase.SandboxMissing
	case !m.sb.ready:
		return podphase.SandboxNotReady
	case m.sb.ip == "" && !m.pod.Spec.HostNetwork:
		return podphase.SandboxNoIP
	}
	return podphase.SandboxReady
}

// startTimeOf is status.startTime: the first status write, or the API's.
func (m *Machine) startTimeOf() time.Time {
	if !m.startTime.IsZero() {
		return m.startTime
	}
	if st := m.pod.Status.StartTime; st != nil {
		return st.Time
	}
	return time.Time{}
}

// deadlineAt is when the active deadline passes, or zero.
func (m *Machine) deadlineAt() time.Time {
	d := m.pod.Spec.ActiveDeadlineSeconds
	st := m.startTimeOf()
	if d == nil || st.IsZero() {
		return time.Time{}
	}
	return st.Add(time.Duration(*d) * time.Second)
}

// oldStatus returns the container's status in the previous status.
func oldStatus(prev *v1.PodStatus, kind containerstate.Kind, name string) *v1.ContainerStatus {
	if prev == nil {
		return nil
	}
	list := prev.ContainerStatuses
	switch kind {
	case containerstate.Init:
		list = prev.InitContainerStatuses
	case containerstate.Ephemeral:
		list = prev.EphemeralContainerStatuses
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

func (in *inst) toInstance() *containerstate.Instance {
	if in == nil {
		return nil
	}
	return &containerstate.Instance{ID: in.id, State: in.state, CreatedAt: in.created, StartedAt: in.started,
		FinishedAt: in.finished, ExitCode: in.exitCode, Reason: in.reason, Message: in.message,
		Image: in.image, ImageID: in.imageRef, RestartCount: in.restartCount, Resources: in.resources, User: in.user}
}

// stampRuntimeFields sets what the machine, not podphase, knows of the
// pod: its start time (the first status's) and the sandbox's IPs.
func (m *Machine) stampRuntimeFields(st *v1.PodStatus, now time.Time) {
	if m.startTime.IsZero() {
		if st.StartTime != nil {
			m.startTime = st.StartTime.Time
		} else {
			m.startTime = now
		}
	}
	t := metav1.NewTime(m.startTime)
	st.StartTime = &t
	switch {
	case m.sb.ready && m.sb.ip != "":
		st.PodIP = m.sb.ip
		st.PodIPs = []v1.PodIP{{IP: m.sb.ip}}
	case !m.sb.ready && m.lastStatus != nil && m.lastStatus.PodIP != "":
		// No ready sandbox reports an IP: the kubelet's PLEG keeps the IPs
		// of the previous status, and so does its terminal status (a pod
		// that stopped keeps its IP, kubernetes/kubernetes#125370).
		st.PodIP = m.lastStatus.PodIP
		st.PodIPs = m.lastStatus.PodIPs
	}
}

// generate builds the pod status the kubelet writes at the start of a sync
// (section 11, item 2) and appends it to res when it differs from the
// previous one. terminal is the pod worker's podIsTerminal.
func (m *Machine) generate(now time.Time, terminal bool, res *Result) *v1.PodStatus {
	prev := m.lastStatus
	if prev == nil {
		prev = &m.pod.Status
	}
	regularCreated, cleanedUp := false, true
	rs := m.regulars()
	for i := range rs {
		regularCreated = regularCreated || len(rs[i].insts) > 0
	}
	for i := 0; i < m.nInit+m.nRegular; i++ {
		cleanedUp = cleanedUp && len(m.ctrs[i].insts) == 0
	}
	cpod := containerstate.Pod{Spec: m.spec, Name: m.name, Namespace: m.ns, UID: m.uid,
		PodFacts: containerstate.PodFacts{Deleting: m.pod.DeletionTimestamp != nil, RegularContainerCreated: regularCreated,
			RestartingAllContainers: m.marked, RecursiveReadOnlyMounts: m.opts.RecursiveReadOnlyMounts}}
	convert := func(c *ctr) v1.ContainerStatus {
		in := containerstate.Input{Pod: cpod, Name: c.name, Old: oldStatus(prev, c.kind, c.name), Now: now}
		if len(c.insts) > 0 {
			in.Newest = c.insts[0].toInstance()
			in.UnknownSince = c.insts[0].unknownSince
			in.Probes.Startup = c.insts[0].probes[Startup-1].result
			in.Probes.Readiness = c.insts[0].probes[Readiness-1].result
			if c.spec.StartupProbe == nil && c.insts[0].state == containerstate.RuntimeRunning {
				in.Probes.Startup = containerstate.ProbeSuccess
			}
		}
		if len(c.insts) > 1 {
			in.Previous = c.insts[1].toInstance()
		}
		if c.hasStartErr {
			se := c.startErr
			in.StartError = &se
		}
		st, err := m.csOpts.Convert(in)
		if err != nil {
			// Only reachable through a bug: the machine builds valid inputs.
			st = v1.ContainerStatus{Name: c.name, Image: c.spec.Image}
		}
		return st
	}
	var inits, regs, ephs []v1.ContainerStatus
	if m.nInit > 0 {
		inits = make([]v1.ContainerStatus, 0, m.nInit)
		for i := range m.inits() {
			inits = append(inits, convert(&m.ctrs[i]))
		}
	}
	regs = make([]v1.ContainerStatus, 0, m.nRegular)
	for i := range rs {
		regs = append(regs, convert(&rs[i]))
	}
	es := m.ephemerals()
	for i := range es {
		if len(es[i].insts) > 0 || es[i].hasStartErr {
			ephs = append(ephs, convert(&es[i]))
		}
	}
	var evict *podphase.Eviction
	if dl := m.deadlineAt(); !dl.IsZero() && !now.Before(dl) {
		evict = &podphase.Eviction{Reason: podphase.ReasonDeadlineExceeded, Message: MessageDeadlineExceeded}
		res.Events = append(res.Events, normal(ReasonDeadlineExceeded, MessageDeadlineExceeded, ""))
	}
	initialized := m.activeInitialized()
	in := podphase.StatusInput{
		Input: podphase.Input{Pod: m.pod, Terminal: terminal, Initialized: &initialized},
		Old:   m.lastStatus, InitContainerStatuses: inits, ContainerStatuses: regs,
		Evict: evict, Sandbox: m.sandboxCondition(), RuntimeCleanedUp: cleanedUp, Now: now,
	}
	if m.opts.Cgroups == CgroupsV2 && m.opts.Features.InPlacePodLevelResourcesVerticalScaling && m.pod.Status.Phase == v1.PodRunning {
		cg := podphase.PodCgroupOf(m.pod).ReadBackV2()
		in.PodCgroup = &cg
	}
	out, err := podphase.Options{Features: m.opts.Features, Version: m.opts.Version}.GenerateStatus(in)
	if err != nil {
		return m.lastStatus
	}
	st := out.Status
	if m.lastStatus != nil {
		// The final guard against the status this machine wrote last: a
		// runner may not have put it into the API pod yet (section 8: a
		// Succeeded pod stays Succeeded past its deadline).
		if phase, err := podphase.Guard(m.lastStatus.Phase, st.Phase); err != nil {
			st.Phase, st.Reason, st.Message = phase, m.lastStatus.Reason, m.lastStatus.Message
		}
	}
	st.EphemeralContainerStatuses = ephs
	m.stampRuntimeFields(&st, now)
	if m.lastStatus == nil || !statusEqual(m.lastStatus, &st) {
		res.Statuses = append(res.Statuses, st)
		m.lastStatus = &res.Statuses[len(res.Statuses)-1]
		cp := st.DeepCopy()
		m.lastStatus = cp
	}
	return m.lastStatus
}
