package podlifecycle

import (
	"slices"
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

// instance is in as containerstate sees it.
func (in *inst) instance() containerstate.Instance {
	return containerstate.Instance{ID: in.id, State: in.state, CreatedAt: in.created, StartedAt: in.started,
		FinishedAt: in.finished, ExitCode: in.exitCode, Reason: in.reason, Message: in.message,
		Image: in.image, ImageID: in.imageRef, RestartCount: in.restartCount, Resources: in.resources, User: in.user}
}

// stampRuntimeFields sets what the machine, not podphase, knows of the
// pod: its start time (the first status's) and the sandbox's IPs, in b's
// storage.
func (m *Machine) stampRuntimeFields(b *statusBuf, now time.Time) {
	st := &b.st
	if m.startTime.IsZero() {
		if st.StartTime != nil {
			m.startTime = st.StartTime.Time
		} else {
			m.startTime = now
		}
	}
	b.start = metav1.NewTime(m.startTime)
	st.StartTime = &b.start
	switch {
	case m.sb.ready && m.sb.ip != "":
		st.PodIP = m.sb.ip
		b.ips = append(b.ips[:0], v1.PodIP{IP: m.sb.ip})
		st.PodIPs = b.ips
	case !m.sb.ready && m.lastStatus != nil && m.lastStatus.PodIP != "":
		// No ready sandbox reports an IP: the kubelet's PLEG keeps the IPs
		// of the previous status, and so does its terminal status (a pod
		// that stopped keeps its IP, kubernetes/kubernetes#125370).
		st.PodIP = m.lastStatus.PodIP
		st.PodIPs = nil
		if m.lastStatus.PodIPs != nil {
			// A copy: the last status's storage is not this one's.
			b.ips = append(b.ips[:0], m.lastStatus.PodIPs...)
			st.PodIPs = b.ips
			if st.PodIPs == nil {
				st.PodIPs = []v1.PodIP{}
			}
		}
	}
}

// generate builds the pod status the kubelet writes at the start of a sync
// (section 11, item 2) and appends it to res when it differs from the
// previous one. terminal is the pod worker's podIsTerminal.
//
// The status is generated into storage the machine reuses (statusBuf) and
// copied out only when it is new. When nothing it is generated from
// changed since a generation that gave the status of the moment again and
// stamped no condition with its time, it is not generated at all: that
// generation's result is the status again (see genKey).
func (m *Machine) generate(now time.Time, terminal bool, res *Result) *v1.PodStatus {
	var evict *podphase.Eviction
	if dl := m.deadlineAt(); !dl.IsZero() && !now.Before(dl) {
		m.evict = podphase.Eviction{Reason: podphase.ReasonDeadlineExceeded, Message: MessageDeadlineExceeded}
		evict = &m.evict
		res.Events = append(res.Events, normal(ReasonDeadlineExceeded, MessageDeadlineExceeded, ""))
	}
	key, inputsChanged := m.genKeyOf(terminal, evict != nil)
	if m.genValid && key == m.genKey && !inputsChanged && !m.noSkip {
		m.skipped++
		return m.lastStatus
	}
	m.generated++
	m.markReusable(key)
	m.genKey = key
	m.genValid = false
	if m.spare == nil {
		m.spare = &statusBuf{noLend: m.noSkip}
		if m.lastBuf != nil {
			m.spare.n = 1 - m.lastBuf.n
		}
	}
	b := m.spare
	inits, regs, ephs := m.convertContainers(b, now)
	in := podphase.StatusInput{
		Input: podphase.Input{Pod: m.pod, Terminal: terminal, Initialized: &m.genKey.initialized},
		Old:   m.lastStatus, InitContainerStatuses: inits, ContainerStatuses: regs,
		Evict: evict, Sandbox: key.sandbox, RuntimeCleanedUp: key.cleanedUp, Now: now,
	}
	if key.cgroup {
		in.PodCgroup = m.podCgroup()
	}
	if _, err := (podphase.Options{Features: m.opts.Features, Version: m.opts.Version}).GenerateStatusTo(in, &b.st); err != nil {
		return m.lastStatus
	}
	st := &b.st
	if m.lastStatus != nil {
		// The final guard against the status this machine wrote last: a
		// runner may not have put it into the API pod yet (section 8: a
		// Succeeded pod stays Succeeded past its deadline).
		if phase, err := podphase.Guard(m.lastStatus.Phase, st.Phase); err != nil {
			st.Phase, st.Reason, st.Message = phase, m.lastStatus.Reason, m.lastStatus.Message
		}
	}
	st.EphemeralContainerStatuses = ephs
	m.stampRuntimeFields(b, now)
	if m.lastStatus == nil || !statusEqual(m.lastStatus, st) {
		res.Statuses = append(res.Statuses, copyOut(st))
		m.spare, m.lastBuf = m.lastBuf, b
		m.lastStatus = &b.st
		return m.lastStatus
	}
	// The same status again: the next generation from the same inputs
	// gives it once more, unless a condition was stamped with this time
	// (the machine converts without an UNKNOWN grace, see genKey).
	m.genValid = !stampedAt(st, now)
	return m.lastStatus
}

// convertContainers converts every container's runtime view (m.genIn)
// into b's container statuses, as containerstate does, against the last
// status (the API's before the first), and returns the init, regular and
// ephemeral lists (an ephemeral container without an instance or a start
// error has none).
func (m *Machine) convertContainers(b *statusBuf, now time.Time) (inits, regs, ephs []v1.ContainerStatus) {
	prev := m.lastStatus
	if prev == nil {
		prev = &m.pod.Status
	}
	cpod := containerstate.Pod{Spec: m.spec, Name: m.name, Namespace: m.ns, UID: m.uid,
		PodFacts: containerstate.PodFacts{Deleting: m.pod.DeletionTimestamp != nil, RegularContainerCreated: m.genKey.regularCreated,
			RestartingAllContainers: m.marked, RecursiveReadOnlyMounts: m.opts.RecursiveReadOnlyMounts}}
	convert := func(c *ctr, gi *genInput, dst *v1.ContainerStatus) {
		in := containerstate.Input{Pod: cpod, Name: c.name, Old: oldStatus(prev, c.kind, c.name), Now: now,
			UnknownSince: gi.unknownSince, Probes: gi.probes}
		if c.kind != containerstate.Ephemeral {
			if m.reuseSettled(b, c, in.Old, dst) {
				return
			}
			m.converted++
			defer m.settle(b, c, in.Old, dst)
		}
		if gi.insts > 0 {
			in.Newest = &gi.newest
		}
		if gi.insts > 1 {
			in.Previous = &gi.prev
		}
		if gi.hasStartErr {
			in.StartError = &gi.startErr
		}
		lent := c.lend(b, dst)
		if err := m.csOpts.ConvertTo(in, dst); err != nil {
			// Only reachable through a bug: the machine builds valid inputs.
			*dst = v1.ContainerStatus{Name: c.name, Image: c.spec.Image}
		}
		c.reclaim(b, lent, dst)
	}
	gi := m.genIn
	if m.nInit > 0 {
		b.inits = grow(b.inits, m.nInit)
		for i := range m.inits() {
			convert(&m.ctrs[i], &gi[i], &b.inits[i])
		}
		inits = b.inits
	}
	b.regs = grow(b.regs, m.nRegular)
	rs := m.regulars()
	for i := range rs {
		convert(&rs[i], &gi[m.nInit+i], &b.regs[i])
	}
	es := m.ephemerals()
	n := 0
	for i := range es {
		if g := &gi[m.nInit+m.nRegular+i]; g.insts > 0 || g.hasStartErr {
			b.ephs = grow(b.ephs, n+1)
			convert(&es[i], g, &b.ephs[n])
			n++
		}
	}
	if n > 0 {
		ephs = b.ephs[:n]
	}
	return inits, b.regs, ephs
}

// stampedAt reports whether a condition of st has now as its
// lastTransitionTime: a generation at another time would give another one.
func stampedAt(st *v1.PodStatus, now time.Time) bool {
	for i := range st.Conditions {
		if st.Conditions[i].LastTransitionTime.Time.Equal(now) {
			return true
		}
	}
	return false
}

// sandboxReadyStatus records the status the kubelet writes once the sync
// has made the pod's sandbox (section 15 decision 6): its callback takes the
// status it wrote last and sets PodReadyToStartContainers True, and nothing
// else, so the pod IP and the containers' states show only in the status of
// the next sync, after the pulls and starts of this one (measured on the
// real kubelet: oracle case "image-pull-slow", whose pod has no IP while its
// pull takes 5 s). A machine that wrote no status yet generates one.
func (m *Machine) sandboxReadyStatus(now time.Time, res *Result) {
	if m.lastStatus == nil {
		m.generate(now, false, res)
		return
	}
	st := copyOut(m.lastStatus)
	i := slices.IndexFunc(st.Conditions, func(c v1.PodCondition) bool { return c.Type == v1.PodReadyToStartContainers })
	if i < 0 || st.Conditions[i].Status == v1.ConditionTrue {
		return // none to flip, or no change: the kubelet's status manager writes none
	}
	// The condition keeps its observedGeneration, which the generation that
	// wrote it took from the same pod.
	c := &st.Conditions[i]
	c.Status, c.Reason, c.Message, c.LastTransitionTime = v1.ConditionTrue, "", "", metav1.NewTime(now)
	res.Statuses = append(res.Statuses, copyOut(&st))
	m.lastStatus = &st
	m.genValid = false
}
