package nodeconditiontest

import (
	"errors"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
	sim "github.com/nodestate/nodestate/nodecondition/simulation"
)

var (
	notReadyNE    = nc.TaintNotReady + ":" + string(v1.TaintEffectNoExecute)
	unreachableNE = nc.TaintUnreachable + ":" + string(v1.TaintEffectNoExecute)
)

func isNoExecute(subject string) bool { return subject == notReadyNE || subject == unreachableNE }

// CheckOrdered reports an entry that comes before the one preceding it.
func CheckOrdered(tl sim.Timeline) error {
	for i := 1; i < len(tl.Entries); i++ {
		if tl.Entries[i].At < tl.Entries[i-1].At {
			return fmt.Errorf("entry %d (%v) is before entry %d (%v)", i, tl.Entries[i], i-1, tl.Entries[i-1])
		}
	}
	return nil
}

// tolerationsOf returns the tolerations the simulation gives each pod, by "namespace/name".
func tolerationsOf(sc sim.Scenario) map[string][]v1.Toleration {
	out := map[string][]v1.Toleration{}
	for _, n := range sc.Nodes {
		for _, p := range n.Pods {
			tols := p.Tolerations
			if !sc.NoDefaultTolerationSeconds {
				tols = nc.WithDefaultTolerations(tols, nc.DefaultTolerationSeconds, nc.DefaultTolerationSeconds)
			}
			out["default/"+p.Name] = tols
		}
	}
	return out
}

func keyOf(subject string) string {
	for i := len(subject) - 1; i >= 0; i-- {
		if subject[i] == ':' {
			return subject[:i]
		}
	}
	return subject
}

// CheckNoEarlyEviction reports a pod deleted before its tolerations allow:
// each deletion must come no earlier than the start of the node's NoExecute
// episode plus the pod's toleration time for a taint present in it, or the
// moment a taint the pod does not tolerate was added.
func CheckNoEarlyEviction(sc sim.Scenario, tl sim.Timeline) error {
	tols := tolerationsOf(sc)
	type episode struct {
		start time.Duration
		added map[string]time.Duration // taint subject -> first added in this episode
		live  map[string]bool
	}
	eps := map[string]*episode{}
	// A swap removes one NoExecute taint and adds the other at the same
	// instant; the taint-eviction controller sees both at once, so an episode
	// ends only when no NoExecute taint is left once an instant is over.
	endInstant := func() {
		for node, ep := range eps {
			if len(ep.live) == 0 {
				delete(eps, node)
			}
		}
	}
	for i, e := range tl.Entries {
		if i > 0 && e.At != tl.Entries[i-1].At {
			endInstant()
		}
		switch {
		case (e.Kind == sim.KindTaintAdded || e.Kind == sim.KindTaintRemoved) && isNoExecute(e.Subject):
			ep := eps[e.Node]
			if ep == nil {
				if e.Kind == sim.KindTaintRemoved {
					continue
				}
				ep = &episode{start: e.At, added: map[string]time.Duration{}, live: map[string]bool{}}
				eps[e.Node] = ep
			}
			if e.Kind == sim.KindTaintAdded {
				ep.live[e.Subject] = true
				if _, ok := ep.added[e.Subject]; !ok {
					ep.added[e.Subject] = e.At
				}
			} else {
				delete(ep.live, e.Subject)
			}
		case e.Kind == sim.KindPodDeleted:
			ep := eps[e.Node]
			if ep == nil {
				return fmt.Errorf("pod %s deleted at %v on node %s, which had no NoExecute taint", e.Subject, e.At, e.Node)
			}
			earliest := time.Duration(-1)
			for subject, added := range ep.added {
				taint := []v1.Taint{{Key: keyOf(subject), Effect: v1.TaintEffectNoExecute}}
				ok, m := nc.TolerationTime(tols[e.Subject], taint)
				var t time.Duration
				switch {
				case !ok:
					t = added
				case m < 0:
					continue
				default:
					t = ep.start + m
				}
				if earliest < 0 || t < earliest {
					earliest = t
				}
			}
			if earliest < 0 {
				return fmt.Errorf("pod %s deleted at %v although it tolerates every NoExecute taint of %s forever", e.Subject, e.At, e.Node)
			}
			if e.At < earliest {
				return fmt.Errorf("pod %s deleted at %v, before its tolerations allow (%v)", e.Subject, e.At, earliest)
			}
		}
	}
	return nil
}

// MaxHeartbeatGap bounds the longest time a simulated node goes without a
// lease renewal in sc. Kubelet outages and lease outages are merged when less
// than a renew interval plus the longest retry back-off apart; the bound is
// the longest merged span plus that slack (an open outage runs to the end of
// the scenario). Status heartbeats, which can only shorten the gap, are not
// counted.
func MaxHeartbeatGap(sc sim.Scenario, n sim.Node) time.Duration {
	kc := sc.Kubelet
	if kc.LeaseDuration == 0 {
		kc = nc.DefaultKubeletOptions()
	}
	slack := kc.LeaseRenewInterval() + nc.LeaseMaxRetryDelay
	var spans []sim.Interval
	for _, iv := range append(append([]sim.Interval(nil), n.Down...), n.LeaseDown...) {
		if iv.To == 0 || iv.To > sc.Duration {
			iv.To = sc.Duration
		}
		if iv.To > iv.From {
			spans = append(spans, iv)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].From < spans[j].From })
	gap := kc.LeaseRenewInterval()
	for i := 0; i < len(spans); {
		cur := spans[i]
		j := i + 1
		for ; j < len(spans) && spans[j].From <= cur.To+slack; j++ {
			cur.To = max(cur.To, spans[j].To)
		}
		gap = max(gap, cur.To-cur.From+slack)
		i = j
	}
	return gap
}

// CheckNeverUnknown reports a node marked Unknown although its heartbeats
// never paused longer than the grace period less one monitor period and one
// pass duration (so the controller always observed a heartbeat within the
// grace period).
func CheckNeverUnknown(sc sim.Scenario, tl sim.Timeline) error {
	cc := sc.Controller
	if cc == (nc.ControllerOptions{}) {
		cc = nc.DefaultControllerOptions()
	}
	for _, n := range sc.Nodes {
		if MaxHeartbeatGap(sc, n)+cc.MonitorPeriod+sc.MonitorPassDuration > cc.GracePeriod {
			continue
		}
		for _, e := range tl.Entries {
			if e.Node == n.Name && e.Kind == sim.KindCondition && e.To == string(v1.ConditionUnknown) {
				return fmt.Errorf("node %s heartbeats at most every %v but %s went Unknown at %v", n.Name, MaxHeartbeatGap(sc, n), e.Subject, e.At)
			}
		}
	}
	return nil
}

// CheckRecovery reports a node whose Ready turned True and stayed True for a
// monitor period (plus the pass duration by which the passes drift) but still
// carried a not-ready or unreachable NoExecute taint.
func CheckRecovery(sc sim.Scenario, tl sim.Timeline) error {
	cc := sc.Controller
	if cc == (nc.ControllerOptions{}) {
		cc = nc.DefaultControllerOptions()
	}
	taints := map[string]map[string]bool{}
	deadline := map[string]time.Duration{}
	check := func(upTo time.Duration) error {
		for node, d := range deadline {
			if d < upTo {
				for s := range taints[node] {
					if isNoExecute(s) {
						return fmt.Errorf("node %s has been Ready since %v but still has %s at %v", node, d-cc.MonitorPeriod-sc.MonitorPassDuration, s, d)
					}
				}
				delete(deadline, node)
			}
		}
		return nil
	}
	for _, e := range tl.Entries {
		if err := check(e.At); err != nil {
			return err
		}
		switch e.Kind {
		case sim.KindTaintAdded:
			if taints[e.Node] == nil {
				taints[e.Node] = map[string]bool{}
			}
			taints[e.Node][e.Subject] = true
		case sim.KindTaintRemoved:
			delete(taints[e.Node], e.Subject)
		case sim.KindCondition:
			if e.Subject == string(v1.NodeReady) {
				if e.To == string(v1.ConditionTrue) {
					deadline[e.Node] = e.At + cc.MonitorPeriod + sc.MonitorPassDuration
				} else {
					delete(deadline, e.Node)
				}
			}
		}
	}
	return check(sc.Duration + 1)
}

// CheckNoEvictionInFullDisruption reports a NoExecute taint added or a pod
// deleted while every zone was FullDisruption.
func CheckNoEvictionInFullDisruption(tl sim.Timeline) error {
	zones := map[string]string{}
	allFull := func() bool {
		if len(zones) == 0 {
			return false
		}
		for _, s := range zones {
			if s != nc.ZoneFullDisruption.String() {
				return false
			}
		}
		return true
	}
	for _, e := range tl.Entries {
		if e.Kind == sim.KindZone {
			zones[e.Subject] = e.To
			continue
		}
		if !allFull() {
			continue
		}
		if (e.Kind == sim.KindTaintAdded && isNoExecute(e.Subject)) || e.Kind == sim.KindPodDeleted {
			return fmt.Errorf("every zone is FullDisruption, yet at %v: %v", e.At, e)
		}
	}
	return nil
}

// CheckExclusiveNoExecute reports a node that, once all entries of an
// instant are applied, has both the not-ready and the unreachable NoExecute taints.
func CheckExclusiveNoExecute(tl sim.Timeline) error {
	taints := map[string]map[string]bool{}
	for i, e := range tl.Entries {
		switch e.Kind {
		case sim.KindTaintAdded:
			if taints[e.Node] == nil {
				taints[e.Node] = map[string]bool{}
			}
			taints[e.Node][e.Subject] = true
		case sim.KindTaintRemoved:
			delete(taints[e.Node], e.Subject)
		}
		if i+1 < len(tl.Entries) && tl.Entries[i+1].At == e.At {
			continue
		}
		for node, ts := range taints {
			if ts[notReadyNE] && ts[unreachableNE] {
				return fmt.Errorf("node %s has both NoExecute taints at %v", node, e.At)
			}
		}
	}
	return nil
}

// CheckConditionUpdate reports a condition of next whose LastTransitionTime
// disagrees with its status compared with prev: it must stay when the status
// stays and move when the status flips. Conditions new in next are not checked.
func CheckConditionUpdate(prev, next []v1.NodeCondition) error {
	for i := range next {
		c := &next[i]
		for j := range prev {
			p := &prev[j]
			if p.Type != c.Type {
				continue
			}
			same := p.LastTransitionTime.Equal(&c.LastTransitionTime)
			if p.Status == c.Status && !same {
				return fmt.Errorf("%s stayed %s but its lastTransitionTime moved from %v to %v", c.Type, c.Status, p.LastTransitionTime, c.LastTransitionTime)
			}
			if p.Status != c.Status && same {
				return fmt.Errorf("%s flipped %s -> %s but its lastTransitionTime stayed %v", c.Type, p.Status, c.Status, c.LastTransitionTime)
			}
		}
	}
	return nil
}

// CheckTimeline runs every timeline check on a simulation result.
func CheckTimeline(sc sim.Scenario, tl sim.Timeline) error {
	return errors.Join(
		CheckOrdered(tl),
		CheckNoEarlyEviction(sc, tl),
		CheckNeverUnknown(sc, tl),
		CheckRecovery(sc, tl),
		CheckNoEvictionInFullDisruption(tl),
		CheckExclusiveNoExecute(tl),
	)
}
