package simulation

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

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
	// Earliest and Latest are the earliest and latest time the entry came
	// across the monitor phases of Scenario.WindowPhases; both zero when the
	// scenario asked for no window.
	Earliest, Latest time.Duration
}

// Timeline is the result of a simulation, in time order.
type Timeline struct {
	Scenario string    // the scenario's name
	Start    time.Time // the wall time of t=0
	Entries  []Entry   // everything that happened, in time order
	// Phases is how many monitor phases the entries' windows cover (0: none).
	Phases int
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

type simPod struct {
	key     nc.PodKey
	node    string
	tols    []v1.Toleration
	noReady bool
	gone    bool
}

type simNode struct {
	spec       *Node
	kubelet    *nc.Kubelet
	thresholds []nc.Threshold
	lease      *nc.LeaseRenewer
	down       bool
	nextEv     time.Duration
	nextSt     time.Duration
	nextLe     time.Duration
	api        map[v1.NodeConditionType]v1.NodeCondition
	pods       []*simPod
	rv         int
	lastSamp   nc.Sample
}

type simulator struct {
	sc    Scenario
	phase time.Duration
	ctrl  *nc.Controller
	ev    *nc.Evictor
	nodes []*simNode
	byNm  map[string]*simNode
	pods  map[nc.PodKey]*simPod
	tl    Timeline
	now   time.Duration
}

// Simulate runs both sides of node health for a scenario in virtual time:
// each kubelet's eviction passes, status reports and lease renewals, the
// node-lifecycle controller's monitor and tainting passes and the
// taint-eviction controller, with no informer latency. The loops run
// without their small jitter; the report jitter comes from Seed. The same
// scenario always gives the same timeline. With WindowPhases set it also
// states each entry's window across the monitor loop's phase.
func Simulate(s Scenario) (Timeline, error) {
	if err := s.Validate(); err != nil {
		return Timeline{}, err
	}
	sc := s.withDefaults()
	tl, err := simulateAt(sc, sc.MonitorPhase)
	if err != nil || sc.WindowPhases == 0 {
		return tl, err
	}
	type key struct {
		node, subject, from, to string
		kind                    EntryKind
		n                       int
	}
	keyOf := func(entries []Entry) []key {
		seen := map[key]int{}
		out := make([]key, len(entries))
		for i, e := range entries {
			k := key{node: e.Node, subject: e.Subject, from: e.From, to: e.To, kind: e.Kind}
			n := seen[k]
			seen[k]++
			k.n = n
			out[i] = k
		}
		return out
	}
	base := keyOf(tl.Entries)
	index := make(map[key]int, len(base))
	for i, k := range base {
		index[k] = i
		tl.Entries[i].Earliest, tl.Entries[i].Latest = tl.Entries[i].At, tl.Entries[i].At
	}
	period := sc.Controller.MonitorPeriod
	for i := range sc.WindowPhases {
		phase := period * time.Duration(i) / time.Duration(sc.WindowPhases)
		other, err := simulateAt(sc, phase)
		if err != nil {
			return Timeline{}, err
		}
		for j, k := range keyOf(other.Entries) {
			if b, ok := index[k]; ok {
				e := &tl.Entries[b]
				e.Earliest, e.Latest = min(e.Earliest, other.Entries[j].At), max(e.Latest, other.Entries[j].At)
			}
		}
	}
	tl.Phases = sc.WindowPhases
	return tl, nil
}

// simulateAt runs a scenario, already defaulted and valid, with the first
// monitor pass at phase.
func simulateAt(sc Scenario, phase time.Duration) (Timeline, error) {
	ctrl, err := nc.NewController(sc.Controller)
	if err != nil {
		return Timeline{}, &ScenarioError{Err: err}
	}
	sim := &simulator{sc: sc, phase: phase, ctrl: ctrl, ev: nc.NewEvictor(), byNm: map[string]*simNode{}, pods: map[nc.PodKey]*simPod{},
		tl: Timeline{Scenario: sc.Name, Start: sc.Start}}
	kopts := sc.Kubelet
	kopts.Rand = rand.New(rand.NewPCG(sc.Seed, 0x6e6f6465))
	lopts := sc.Kubelet
	lopts.LoopJitter = 0 // the loops run without their jitter
	for i := range sc.Nodes {
		spec := &sc.Nodes[i]
		k, err := nc.NewKubelet(kopts)
		if err != nil {
			return Timeline{}, &ScenarioError{Node: spec.Name, Err: err}
		}
		lr, err := nc.NewLeaseRenewer(lopts, spec.Name)
		if err != nil {
			return Timeline{}, &ScenarioError{Node: spec.Name, Err: err}
		}
		n := &simNode{spec: spec, kubelet: k, thresholds: k.Thresholds(), lease: lr, api: map[v1.NodeConditionType]v1.NodeCondition{}}
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

// fail wraps an error of a machine, which a valid scenario never causes.
func fail(node string, err error) error {
	return &ScenarioError{Node: node, Reason: "simulation failed", Err: err}
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
			labels[nc.LabelExcludeDisruption] = ""
		}
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.spec.Name, Labels: labels, CreationTimestamp: metav1.NewTime(created)}}
		if _, err := s.ctrl.UpsertNode(s.at(), node); err != nil {
			return fail(n.spec.Name, err)
		}
	}
	for _, n := range s.nodes {
		if err := s.kubeletTick(n, true); err != nil {
			return err
		}
		for _, p := range n.spec.Pods {
			tols := p.Tolerations
			if !s.sc.NoDefaultTolerationSeconds {
				tols = nc.WithDefaultTolerations(tols, nc.DefaultTolerationSeconds, nc.DefaultTolerationSeconds)
			}
			sp := &simPod{key: nc.PodKey{Namespace: "default", Name: p.Name}, node: n.spec.Name, tols: tols, noReady: p.NoReadyCondition}
			s.pods[sp.key] = sp
			n.pods = append(n.pods, sp)
			s.ctrl.UpsertPod(s.podObject(sp, v1.ConditionTrue))
		}
	}
	cc := s.sc.Controller
	nextMon, nextTaint := s.phase, time.Duration(0)
	for s.now <= s.sc.Duration {
		for _, n := range s.nodes {
			if err := s.kubeletDue(n); err != nil {
				return err
			}
		}
		if s.now == nextMon {
			p, err := s.ctrl.Monitor(s.at(), nil)
			if err != nil {
				return fail("", err)
			}
			s.applyPass(p, "controller")
			// The next pass starts a period after this one ended.
			nextMon += s.sc.MonitorPassDuration + cc.MonitorPeriod
		}
		if s.now == nextTaint {
			p, err := s.ctrl.Taint(s.at())
			if err != nil {
				return fail("", err)
			}
			s.applyPass(p, "controller")
			nextTaint += cc.TaintingPeriod
			// With every queue empty, nothing can be tainted before the
			// next monitor pass queues a node.
			if _, queued := s.ctrl.NextTaint(); !queued {
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

// podObject is the pod as the pod informer shows it. A pod without a Ready
// condition keeps none.
func (s *simulator) podObject(p *simPod, ready v1.ConditionStatus) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.key.Namespace, Name: p.key.Name},
		Spec:       v1.PodSpec{NodeName: p.node, Tolerations: p.tols},
	}
	if !p.noReady {
		pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: ready}}
	}
	return pod
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
				return fail(n.spec.Name, err)
			}
			if p.Evict >= 0 {
				th := n.thresholds[p.Evict]
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
				return fail(n.spec.Name, err)
			}
			n.nextLe = next.Sub(s.sc.Start)
		case !n.down:
			if err := s.renew(n); err != nil {
				return err
			}
		default:
			n.nextLe += kc.LeaseRenewInterval()
		}
	}
	return nil
}

func (s *simulator) renew(n *simNode) error {
	_, next, err := n.lease.Renewed(s.at())
	if err != nil {
		return fail(n.spec.Name, err)
	}
	n.rv++
	s.ctrl.UpsertLease(n.spec.Name, s.at(), strconv.Itoa(n.rv))
	n.nextLe = next.Sub(s.sc.Start)
	return nil
}

func (s *simulator) sample(n *simNode) {
	var smp nc.Sample
	smp.Set(nc.SignalMemoryAvailable, 8<<30, 16<<30)
	smp.Set(nc.SignalAllocatableMemoryAvailable, 8<<30, 15<<30)
	smp.Set(nc.SignalNodeFsAvailable, 50<<30, 100<<30)
	smp.Set(nc.SignalNodeFsInodesFree, 5_000_000, 6_000_000)
	smp.Set(nc.SignalImageFsAvailable, 50<<30, 100<<30)
	smp.Set(nc.SignalImageFsInodesFree, 5_000_000, 6_000_000)
	smp.Set(nc.SignalContainerFsAvailable, 50<<30, 100<<30)
	smp.Set(nc.SignalContainerFsInodesFree, 5_000_000, 6_000_000)
	smp.Set(nc.SignalPIDAvailable, 30_000, 32_768)
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
			return fail(n.spec.Name, err)
		}
	}
	var h nc.Health
	if inAny(n.spec.RuntimeDown, s.now) {
		h.Errors = append(h.Errors, nc.MessageRuntimeDown)
	}
	if inAny(n.spec.NetworkDown, s.now) {
		h.Errors = append(h.Errors, MessageNetworkPluginNotReady)
	}
	r, err := n.kubelet.Status(s.at(), h)
	if err != nil {
		return fail(n.spec.Name, err)
	}
	if first {
		if err := s.renew(n); err != nil {
			return err
		}
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
		return fail(n.spec.Name, err)
	}
	s.applyPass(p, "kubelet")
	// The kubelet marks its pods ready again once it reports Ready True.
	if readyTrue(conds) {
		for _, sp := range n.pods {
			if !sp.gone {
				s.ctrl.UpsertPod(s.podObject(sp, v1.ConditionTrue))
			}
		}
	}
	return nil
}

func readyTrue(conds []v1.NodeCondition) bool {
	for i := range conds {
		if conds[i].Type == v1.NodeReady {
			return conds[i].Status == v1.ConditionTrue
		}
	}
	return false
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

func (s *simulator) applyPass(p nc.Pass, writer string) {
	for _, w := range p.Writes {
		n := s.byNm[w.Node]
		s.recordConditions(n, w.Conditions, writer, false)
		n.kubelet.APIStatus(w.Conditions)
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
		sp := s.pods[nc.PodKey{Namespace: pr.Namespace, Name: pr.Name}]
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
			case nc.EvictionNow:
				s.deletePod(sp.key)
			case nc.EvictionSchedule:
				s.add(Entry{Node: n.spec.Name, Kind: KindEvictionScheduled, Subject: subj, Detail: "deletion at " + FormatOffset(d.At.Sub(s.sc.Start))})
			case nc.EvictionCancel:
				s.add(Entry{Node: n.spec.Name, Kind: KindEvictionCancelled, Subject: subj})
			}
		}
	}
}

func (s *simulator) deletePod(k nc.PodKey) {
	sp := s.pods[k]
	if sp == nil || sp.gone {
		return
	}
	sp.gone = true
	s.ev.Forget(k)
	s.ctrl.DeletePod(k.Namespace, k.Name)
	s.add(Entry{Node: sp.node, Kind: KindPodDeleted, Subject: k.Namespace + "/" + k.Name, Detail: nc.ReasonDeletionByTaintManager})
}
