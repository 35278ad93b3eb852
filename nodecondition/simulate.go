package nodecondition

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MessageNetworkPluginNotReady is the Ready message a simulated network outage uses.
const MessageNetworkPluginNotReady = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"

// Simulation limits, so that a scenario from outside cannot run away.
const (
	MaxSimDuration = 24 * time.Hour
	MaxSimNodes    = 1000
	MaxSimPods     = 10000
	MaxSimSteps    = 50_000_000 // loop ticks, all nodes together
)

// Interval is a span of scenario time [From, To); To == 0 means until the end.
type Interval struct {
	From, To time.Duration // scenario times; To == 0 is open
}

func (iv Interval) contains(t time.Duration) bool {
	return t >= iv.From && (iv.To == 0 || t < iv.To)
}

// SignalStep sets one signal of a node from At on.
type SignalStep struct {
	At        time.Duration // scenario time the value applies from
	Signal    Signal        // the signal set
	Available int64         // its available amount
	Capacity  int64         // its capacity
}

// SimPod is a pod bound to a simulated node, Ready at the start.
type SimPod struct {
	// Name is the pod's name; pods live in the "default" namespace.
	Name string
	// Tolerations are the pod's own tolerations.
	Tolerations []v1.Toleration
	// NoDefaultTolerations skips the DefaultTolerationSeconds admission
	// plugin, which otherwise adds the 300 s not-ready and unreachable tolerations.
	NoDefaultTolerations bool
}

// SimNode is one node of a scenario and the schedule of its kubelet.
type SimNode struct {
	// Name is the node's name, unique in the scenario.
	Name string
	// Zone is the node's topology.kubernetes.io/zone label; "" for none.
	Zone string
	// ExcludeDisruption sets the exclude-disruption label.
	ExcludeDisruption bool
	// Down are the spans in which the kubelet is stopped: no status, no lease,
	// no eviction pass. Coming back is a kubelet restart.
	Down []Interval
	// LeaseDown are the spans in which lease renewals fail (the kubelet
	// retries with its back-off); status reports still go through.
	LeaseDown []Interval
	// StatusDown are the spans in which status PATCHes fail; the lease is
	// still renewed.
	StatusDown []Interval
	// RuntimeDown are the spans in which the runtime is down (Ready False).
	RuntimeDown []Interval
	// NetworkDown are the spans in which the network plugin is not ready (Ready False).
	NetworkDown []Interval
	// Signals change the eviction signals over time; unset signals stay plentiful.
	Signals []SignalStep
	// Pods run on the node, in the "default" namespace.
	Pods []SimPod
}

// Scenario is a schedule of kubelets, their signals and pods, run by Simulate.
// At t=0 every kubelet has just posted its status and renewed its lease.
type Scenario struct {
	Name       string           // a title for the timeline
	Start      time.Time        // the wall time of t=0; zero means 2026-01-01 00:00 UTC
	Duration   time.Duration    // how much scenario time to run
	Kubelet    KubeletConfig    // zero value means DefaultKubeletConfig
	Controller ControllerConfig // zero value means DefaultControllerConfig
	Seed       uint64           // seeds the report jitter
	Nodes      []SimNode        // the nodes and their kubelets' schedules
}

// EntryKind classifies a timeline entry.
type EntryKind uint8

// The timeline entry kinds.
const (
	KindKubelet           EntryKind = iota // the kubelet stopped or restarted
	KindCondition                          // a condition's status changed in the API
	KindTaintAdded                         // a taint was added
	KindTaintRemoved                       // a taint was removed
	KindPodNotReady                        // the controller marked a pod not ready
	KindEvictionScheduled                  // the taint-eviction controller scheduled a deletion
	KindEvictionCancelled                  // a scheduled deletion was cancelled
	KindPodDeleted                         // the taint-eviction controller deleted a pod
	KindZone                               // a zone changed state
	KindKubeletEviction                    // the kubelet's eviction manager evicted a pod
)

var kindNames = [...]string{"kubelet", "condition", "taint added", "taint removed", "pod not ready",
	"eviction scheduled", "eviction cancelled", "pod deleted", "zone", "kubelet eviction"}

// String names the kind as the table shows it, for example "taint added".
func (k EntryKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "EntryKind(" + strconv.Itoa(int(k)) + ")"
}

// Entry is one thing that happened in a simulation.
type Entry struct {
	At      time.Duration // scenario time
	Node    string        // "" for zone entries
	Kind    EntryKind     // what happened
	Subject string        // condition type, taint "key:effect", "namespace/pod", zone, or "kubelet"
	From    string        // previous value, for conditions and zones
	To      string        // new value
	Detail  string        // reason and message, deletion time, ...
}

// Timeline is the result of a simulation, in time order.
type Timeline struct {
	Scenario string    // the scenario's name
	Start    time.Time // the wall time of t=0
	Entries  []Entry   // everything that happened, in time order
}

// Find returns the first entry of a kind for node and subject ("" matches any).
func (tl Timeline) Find(kind EntryKind, node, subject string) (Entry, bool) {
	for _, e := range tl.Entries {
		if e.Kind == kind && (node == "" || e.Node == node) && (subject == "" || e.Subject == subject) {
			return e, true
		}
	}
	return Entry{}, false
}

func (s *Scenario) withDefaults() Scenario {
	out := *s
	if out.Start.IsZero() {
		out.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if out.Kubelet.StatusUpdateFrequency == 0 && out.Kubelet.LeaseDuration == 0 {
		th := out.Kubelet.Thresholds
		out.Kubelet = DefaultKubeletConfig()
		if th != nil {
			out.Kubelet.Thresholds = th
		}
	}
	if out.Kubelet.Thresholds == nil {
		out.Kubelet.Thresholds = DefaultHardThresholds()
	}
	if out.Controller == (ControllerConfig{}) {
		out.Controller = DefaultControllerConfig()
	}
	return out
}

// Validate reports why a scenario cannot run, as a *ScenarioError or *ConfigError.
func (s *Scenario) Validate() error {
	sc := s.withDefaults()
	if err := CheckTiming(sc.Kubelet, sc.Controller); err != nil {
		return err
	}
	if sc.Duration <= 0 || sc.Duration > MaxSimDuration {
		return &ScenarioError{Reason: "duration " + sc.Duration.String() + " outside (0, " + MaxSimDuration.String() + "]"}
	}
	if len(sc.Nodes) == 0 || len(sc.Nodes) > MaxSimNodes {
		return &ScenarioError{Reason: "needs 1 to " + strconv.Itoa(MaxSimNodes) + " nodes, got " + strconv.Itoa(len(sc.Nodes))}
	}
	names := map[string]bool{}
	podNames := map[string]bool{} // pods share the "default" namespace
	pods := 0
	for _, n := range sc.Nodes {
		if n.Name == "" {
			return &ScenarioError{Reason: "a node has no name"}
		}
		if names[n.Name] {
			return &ScenarioError{Node: n.Name, Reason: "node given twice"}
		}
		names[n.Name] = true
		for _, ivs := range [][]Interval{n.Down, n.LeaseDown, n.StatusDown, n.RuntimeDown, n.NetworkDown} {
			for _, iv := range ivs {
				if iv.From < 0 || (iv.To != 0 && iv.To <= iv.From) {
					return &ScenarioError{Node: n.Name, Reason: "interval [" + iv.From.String() + ", " + iv.To.String() + ") is empty or negative"}
				}
			}
		}
		for _, st := range n.Signals {
			if int(st.Signal) >= NumSignals || st.At < 0 || st.Available < 0 || st.Capacity < 0 {
				return &ScenarioError{Node: n.Name, Reason: "signal step " + st.Signal.String() + " at " + st.At.String() + " is invalid"}
			}
		}
		for _, p := range n.Pods {
			if p.Name == "" || podNames[p.Name] {
				return &ScenarioError{Node: n.Name, Reason: "pod name " + strconv.Quote(p.Name) + " empty or given twice in the scenario"}
			}
			podNames[p.Name] = true
		}
		pods += len(n.Pods)
	}
	if pods > MaxSimPods {
		return &ScenarioError{Reason: "more than " + strconv.Itoa(MaxSimPods) + " pods"}
	}
	// Bound the work: every loop tick of every node over the whole run.
	kc, cc := sc.Kubelet, sc.Controller
	kubelet := min(kc.StatusUpdateFrequency, kc.EvictionMonitoringInterval, kc.LeaseRenewInterval())
	controller := min(cc.MonitorPeriod, cc.TaintingPeriod)
	steps := float64(sc.Duration)/float64(kubelet)*float64(len(sc.Nodes)) + float64(sc.Duration)/float64(controller)
	if steps > MaxSimSteps {
		return &ScenarioError{Reason: "periods too short for the duration: about " + strconv.FormatFloat(steps, 'g', 3, 64) + " loop ticks, at most " + strconv.Itoa(MaxSimSteps)}
	}
	return nil
}

type simPod struct {
	key  PodKey
	node string
	tols []v1.Toleration
	gone bool
}

type simNode struct {
	spec     *SimNode
	kubelet  *Kubelet
	lease    *LeaseRenewer
	down     bool
	nextEv   time.Duration
	nextSt   time.Duration
	nextLe   time.Duration
	api      map[v1.NodeConditionType]v1.NodeCondition
	pods     []*simPod
	rv       int
	lastSamp Sample
}

type simulator struct {
	sc    Scenario
	ctrl  *Controller
	ev    *Evictor
	nodes []*simNode
	byNm  map[string]*simNode
	pods  map[PodKey]*simPod
	tl    Timeline
	now   time.Duration
}

// Simulate runs both sides of node health for a scenario in virtual time:
// each kubelet's eviction passes, status reports and lease renewals, the
// node-lifecycle controller's monitor and tainting passes and the
// taint-eviction controller, with no informer latency. The loops run
// without their small jitter; the report jitter comes from Seed. The same
// scenario always gives the same timeline.
func Simulate(s Scenario) (Timeline, error) {
	if err := s.Validate(); err != nil {
		return Timeline{}, err
	}
	sc := s.withDefaults()
	ctrl, err := NewController(sc.Controller)
	if err != nil {
		return Timeline{}, err
	}
	sim := &simulator{sc: sc, ctrl: ctrl, ev: NewEvictor(), byNm: map[string]*simNode{}, pods: map[PodKey]*simPod{},
		tl: Timeline{Scenario: sc.Name, Start: sc.Start}}
	rnd := rand.New(rand.NewPCG(sc.Seed, 0x6e6f6465))
	for i := range sc.Nodes {
		spec := &sc.Nodes[i]
		k, err := NewKubelet(sc.Kubelet, rnd)
		if err != nil {
			return Timeline{}, err
		}
		lr, err := NewLeaseRenewer(spec.Name, sc.Kubelet, nil)
		if err != nil {
			return Timeline{}, err
		}
		n := &simNode{spec: spec, kubelet: k, lease: lr, api: map[v1.NodeConditionType]v1.NodeCondition{}}
		sim.nodes = append(sim.nodes, n)
		sim.byNm[spec.Name] = n
	}
	if err := sim.run(); err != nil {
		return Timeline{}, err
	}
	sort.SliceStable(sim.tl.Entries, func(i, j int) bool { return sim.tl.Entries[i].At < sim.tl.Entries[j].At })
	return sim.tl, nil
}

func (s *simulator) at() time.Time { return s.sc.Start.Add(s.now) }

func (s *simulator) add(e Entry) {
	e.At = s.now
	s.tl.Entries = append(s.tl.Entries, e)
}

func (s *simulator) run() error {
	// t=0: nodes registered long ago, pods running, every kubelet posts its
	// status and renews its lease, then the controller's first pass.
	created := s.sc.Start.Add(-time.Hour)
	for _, n := range s.nodes {
		labels := map[string]string{}
		if n.spec.Zone != "" {
			labels[v1.LabelTopologyZone] = n.spec.Zone
		}
		if n.spec.ExcludeDisruption {
			labels[LabelExcludeDisruption] = ""
		}
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.spec.Name, Labels: labels, CreationTimestamp: metav1.NewTime(created)}}
		if _, err := s.ctrl.UpsertNode(s.at(), node); err != nil {
			return err
		}
	}
	for _, n := range s.nodes {
		if err := s.kubeletTick(n, true); err != nil {
			return err
		}
		for _, p := range n.spec.Pods {
			tols := p.Tolerations
			if !p.NoDefaultTolerations {
				tols = WithDefaultTolerations(tols, DefaultTolerationSeconds, DefaultTolerationSeconds)
			}
			sp := &simPod{key: PodKey{Namespace: "default", Name: p.Name}, node: n.spec.Name, tols: tols}
			if _, dup := s.pods[sp.key]; dup {
				return &ScenarioError{Node: n.spec.Name, Reason: "pod " + p.Name + " is on two nodes"}
			}
			s.pods[sp.key] = sp
			n.pods = append(n.pods, sp)
			s.ctrl.UpsertPod(s.podObject(sp, v1.ConditionTrue))
		}
	}
	cc := s.sc.Controller
	nextMon, nextTaint := time.Duration(0), time.Duration(0)
	for s.now <= s.sc.Duration {
		for _, n := range s.nodes {
			if err := s.kubeletDue(n); err != nil {
				return err
			}
		}
		if s.now == nextMon {
			p, err := s.ctrl.Monitor(s.at(), nil)
			if err != nil {
				return err
			}
			s.applyPass(p, "controller")
			nextMon += cc.MonitorPeriod
		}
		if s.now == nextTaint {
			p, err := s.ctrl.Taint(s.at())
			if err != nil {
				return err
			}
			s.applyPass(p, "controller")
			nextTaint += cc.TaintingPeriod
			// With every queue empty, nothing can be tainted before the
			// next monitor pass queues a node.
			if !s.ctrl.queuedAny() {
				for nextTaint < nextMon {
					nextTaint += cc.TaintingPeriod
				}
			}
		}
		for _, k := range s.ev.Due(s.at()) {
			s.deletePod(k)
		}
		// Advance to the next moment anything is due.
		next := min(nextMon, nextTaint)
		for _, n := range s.nodes {
			next = min(next, n.nextEv, n.nextSt, n.nextLe)
			for _, iv := range n.spec.Down {
				if iv.From > s.now {
					next = min(next, iv.From)
				}
				if iv.To > s.now {
					next = min(next, iv.To)
				}
			}
		}
		if t, ok := s.ev.Next(); ok {
			next = min(next, max(t.Sub(s.sc.Start), s.now+1))
		}
		if next <= s.now {
			next = s.now + 1
		}
		s.now = next
	}
	return nil
}

func (s *simulator) podObject(p *simPod, ready v1.ConditionStatus) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.key.Namespace, Name: p.key.Name},
		Spec:       v1.PodSpec{NodeName: p.node, Tolerations: p.tols},
		Status:     v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: ready}}},
	}
}

func inAny(ivs []Interval, t time.Duration) bool {
	for _, iv := range ivs {
		if iv.contains(t) {
			return true
		}
	}
	return false
}

// kubeletDue runs whatever of a node's kubelet loops is due now.
func (s *simulator) kubeletDue(n *simNode) error {
	kc := s.sc.Kubelet
	if down := inAny(n.spec.Down, s.now); down != n.down {
		n.down = down
		if down {
			s.add(Entry{Node: n.spec.Name, Kind: KindKubelet, Subject: "kubelet", To: "stopped"})
		} else {
			// A kubelet that comes back is a restart: it observes, reports
			// and renews at once, then resumes its periods from now.
			n.kubelet.Restart()
			s.add(Entry{Node: n.spec.Name, Kind: KindKubelet, Subject: "kubelet", To: "restarted"})
			n.nextEv, n.nextSt, n.nextLe = s.now, s.now, s.now
		}
	}
	if s.now == n.nextEv {
		if !n.down {
			s.sample(n)
			p, err := n.kubelet.Observe(s.at(), &n.lastSamp)
			if err != nil {
				return err
			}
			if p.Evict >= 0 {
				th := n.kubelet.cfg.Thresholds[p.Evict]
				kind := "hard"
				if th.Soft {
					kind = "soft"
				}
				s.add(Entry{Node: n.spec.Name, Kind: KindKubeletEviction, Subject: th.Signal.String(),
					Detail: kind + " threshold " + th.Value.String() + ": one pod evicted, grace " + strconv.FormatInt(p.PodGracePeriod, 10) + "s"})
			}
		}
		n.nextEv += kc.EvictionMonitoringInterval
	}
	if s.now == n.nextSt {
		if !n.down {
			if err := s.kubeletTick(n, false); err != nil {
				return err
			}
		}
		n.nextSt += kc.StatusUpdateFrequency
	}
	if s.now == n.nextLe {
		switch {
		case !n.down && inAny(n.spec.LeaseDown, s.now):
			next, err := n.lease.Failed(s.at())
			if err != nil {
				return err
			}
			n.nextLe = next.Sub(s.sc.Start)
		case !n.down:
			_, next, err := n.lease.Renewed(s.at())
			if err != nil {
				return err
			}
			n.rv++
			s.ctrl.UpsertLease(n.spec.Name, s.at(), strconv.Itoa(n.rv))
			n.nextLe = next.Sub(s.sc.Start)
		default:
			n.nextLe += kc.LeaseRenewInterval()
		}
	}
	return nil
}

func (s *simulator) sample(n *simNode) {
	var smp Sample
	smp.Set(SignalMemoryAvailable, 8<<30, 16<<30)
	smp.Set(SignalAllocatableMemoryAvailable, 8<<30, 15<<30)
	smp.Set(SignalNodeFsAvailable, 50<<30, 100<<30)
	smp.Set(SignalNodeFsInodesFree, 5_000_000, 6_000_000)
	smp.Set(SignalImageFsAvailable, 50<<30, 100<<30)
	smp.Set(SignalImageFsInodesFree, 5_000_000, 6_000_000)
	smp.Set(SignalContainerFsAvailable, 50<<30, 100<<30)
	smp.Set(SignalContainerFsInodesFree, 5_000_000, 6_000_000)
	smp.Set(SignalPIDAvailable, 30_000, 32_768)
	for _, st := range n.spec.Signals {
		if st.At <= s.now {
			smp.Set(st.Signal, st.Available, st.Capacity)
		}
	}
	n.lastSamp = smp
}

// kubeletTick computes the node status and, when the kubelet sends it, hands
// it to the controller; the first tick at t=0 also renews the lease.
func (s *simulator) kubeletTick(n *simNode, first bool) error {
	if first {
		s.sample(n)
		if _, err := n.kubelet.Observe(s.at(), &n.lastSamp); err != nil {
			return err
		}
	}
	var h Health
	if inAny(n.spec.RuntimeDown, s.now) {
		h.Errors = append(h.Errors, MessageRuntimeDown)
	}
	if inAny(n.spec.NetworkDown, s.now) {
		h.Errors = append(h.Errors, MessageNetworkPluginNotReady)
	}
	r, err := n.kubelet.Status(s.at(), h)
	if err != nil {
		return err
	}
	if first {
		_, next, err := n.lease.Renewed(s.at())
		if err != nil {
			return err
		}
		n.rv++
		s.ctrl.UpsertLease(n.spec.Name, s.at(), strconv.Itoa(n.rv))
		n.nextLe = next.Sub(s.sc.Start)
		n.nextEv = s.sc.Kubelet.EvictionMonitoringInterval
		n.nextSt = s.sc.Kubelet.StatusUpdateFrequency
	}
	if !r.Send {
		return nil
	}
	if !first && inAny(n.spec.StatusDown, s.now) {
		n.kubelet.ReportFailed()
		return nil
	}
	conds := append([]v1.NodeCondition(nil), r.Conditions...)
	s.recordConditions(n, conds, "kubelet", first)
	p, err := s.ctrl.UpdateStatus(s.at(), n.spec.Name, conds)
	if err != nil {
		return err
	}
	s.applyPass(p, "kubelet")
	// The kubelet marks its pods ready again once it reports Ready True.
	if rd := readyOf(conds); rd != nil && rd.Status == v1.ConditionTrue {
		for _, sp := range n.pods {
			if !sp.gone {
				s.ctrl.UpsertPod(s.podObject(sp, v1.ConditionTrue))
			}
		}
	}
	return nil
}

func (s *simulator) recordConditions(n *simNode, conds []v1.NodeCondition, writer string, quiet bool) {
	for _, c := range conds {
		old, had := n.api[c.Type]
		n.api[c.Type] = c
		if quiet || (had && old.Status == c.Status) {
			continue
		}
		from := "-"
		if had {
			from = string(old.Status)
		}
		s.add(Entry{Node: n.spec.Name, Kind: KindCondition, Subject: string(c.Type), From: from, To: string(c.Status),
			Detail: c.Reason + " (" + writer + ")"})
	}
}

func (s *simulator) applyPass(p Pass, writer string) {
	for _, w := range p.Writes {
		n := s.byNm[w.Node]
		conds := append([]v1.NodeCondition(nil), w.Conditions...)
		s.recordConditions(n, conds, writer, false)
		n.kubelet.APIStatus(conds)
	}
	touched := map[string]bool{}
	for _, tc := range p.Taints {
		kind := KindTaintRemoved
		if tc.Added {
			kind = KindTaintAdded
		}
		s.add(Entry{Node: tc.Node, Kind: kind, Subject: tc.Taint.Key + ":" + string(tc.Taint.Effect)})
		if tc.Taint.Effect == v1.TaintEffectNoExecute {
			touched[tc.Node] = true
		}
	}
	for _, pr := range p.PodsNotReady {
		sp := s.pods[PodKey{pr.Namespace, pr.Name}]
		if sp == nil || sp.gone {
			continue
		}
		s.add(Entry{Node: pr.Node, Kind: KindPodNotReady, Subject: pr.Namespace + "/" + pr.Name})
		s.ctrl.UpsertPod(s.podObject(sp, v1.ConditionFalse))
	}
	for _, z := range p.Zones {
		zone := z.Zone
		if zone == "" {
			zone = `""`
		}
		s.add(Entry{Kind: KindZone, Subject: zone, From: z.From.String(), To: z.To.String()})
	}
	for _, n := range s.nodes {
		if !touched[n.spec.Name] {
			continue
		}
		taints := s.ctrl.Taints(n.spec.Name)
		for _, sp := range n.pods {
			if sp.gone {
				continue
			}
			d := s.ev.Evaluate(s.at(), sp.key, sp.tols, taints)
			subj := sp.key.Namespace + "/" + sp.key.Name
			switch d.Action {
			case EvictionNow:
				s.deletePod(sp.key)
			case EvictionSchedule:
				s.add(Entry{Node: n.spec.Name, Kind: KindEvictionScheduled, Subject: subj, Detail: "deletion at " + d.At.Sub(s.sc.Start).String()})
			case EvictionCancel:
				s.add(Entry{Node: n.spec.Name, Kind: KindEvictionCancelled, Subject: subj})
			}
		}
	}
}

func (s *simulator) deletePod(k PodKey) {
	sp := s.pods[k]
	if sp == nil || sp.gone {
		return
	}
	sp.gone = true
	s.ev.Forget(k)
	s.ctrl.DeletePod(k.Namespace, k.Name)
	s.add(Entry{Node: sp.node, Kind: KindPodDeleted, Subject: k.Namespace + "/" + k.Name, Detail: ReasonDeletionByTaintManager})
}
