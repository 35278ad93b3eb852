package podlifecycle

import (
	"time"

	"github.com/nodestate/nodestate/containerstate"
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

// genKeyOf returns the key of a generation now and fills m.in with the
// containers' inputs.
func (m *Machine) genKeyOf(terminal, evict bool) genKey {
	k := genKey{pod: m.pod, terminal: terminal, evict: evict, marked: m.marked,
		initialized: m.activeInitialized(), cleanedUp: true, sandbox: m.sandboxCondition(),
		sbReady: m.sb.ready, sbIP: m.sb.ip, startTime: m.startTime,
		cgroup: m.opts.Cgroups == CgroupsV2 && m.opts.Features.InPlacePodLevelResourcesVerticalScaling && m.pod.Status.Phase == v1.PodRunning}
	if cap(m.in) < len(m.ctrs) {
		m.in = make([]genInput, len(m.ctrs))
	}
	m.in = m.in[:len(m.ctrs)]
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
		m.in[i] = g
	}
	return k
}

func sameGenInputs(a, b []genInput) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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
