package compare

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Tolerances of the comparison. Both nodes see a pod's creation within a
// few milliseconds of each other, but not its changes at the same instant:
// the kubelet finds a container's start or exit at its next relist (1 s),
// writes statuses from its status manager's goroutine and stamps times
// with a second's resolution; and both jitter the waits of the pod worker.
type Tolerances struct {
	// Time is how far apart two matching changes may appear, measured from
	// the change before them that both nodes showed (so that a jittered
	// wait early in a pod's life does not shift every later one), and how
	// far apart the times a status carries (startedAt, finishedAt,
	// lastTransitionTime, ...) may be.
	Time time.Duration
	// Transient is how long a status may be shown on one node and never on
	// the other: a status the next one replaced so soon that the other
	// node's status manager may have written both at once (the kubelet's
	// CrashLoopBackOff in the sync that restarts a container lasts until
	// the next relist, about a second).
	Transient time.Duration
	// Jitter is the fraction of a wait by which both nodes may end it late:
	// the pod worker requeues a pod after an error or a back-off at the
	// wait's end plus up to half of it (wait.Jitter with factor 0.5), and a
	// kube.Node draws its own jitter. It applies to the change that ends a
	// wait: a container restarted after a back-off, or one that leaves
	// ErrImagePull, ImagePullBackOff, CrashLoopBackOff or another waiting
	// reason of a failed sync.
	Jitter float64
	// ProbePeriod adds, for a pod with probes, the longest of its probes'
	// periods to Time: the kubelet's probe workers tick from when the
	// worker started, not from the container's start, so a change a probe
	// result makes comes up to a period earlier or later than nodestate's,
	// whose ticks are counted from the container's start (with a random
	// phase of its own).
	ProbePeriod bool
	// RepeatedEvents is how far the counts of an event both nodes recorded
	// more than once may differ: by one, or by this share of the larger
	// count. How often a node syncs a pod in back-off (each sync records
	// BackOff), or how many probe ticks fall into a failing window, depends
	// on the jittered waits and the probe workers' phase: a crash-loop
	// back-off longer than the 1 min resync holds one more sync or not by
	// the draw, and the crashloop case (five restarts) recorded 5 BackOff
	// events on one node and 7 on the other, each node either count, in
	// different runs. An event one node recorded and the other never did is
	// always a difference.
	RepeatedEvents float64
	// WriteLag is how much later than nodestate the kubelet may show a
	// status, beyond Time: its status manager writes from a goroutine of
	// its own after the relist and the sync, and when many pods change at
	// once its writes queue (measured with 100 pods: half within 0.9 s, 90%
	// within 2.2 s of the change they show). The times a status carries
	// are held to Time alone. A status the kubelet alone showed may so have
	// lasted up to Transient plus WriteLag.
	WriteLag time.Duration
}

// DefaultTolerances are the comparison's: 2 s, 2 s, half a wait, a probe
// period for pods with probes, one repeat or a third of an event's count,
// and 3 s of the kubelet's write lag.
func DefaultTolerances() Tolerances {
	return Tolerances{Time: 2 * time.Second, Transient: 2 * time.Second, Jitter: 0.5, ProbePeriod: true, RepeatedEvents: 1.0 / 3,
		WriteLag: 3 * time.Second}
}

// countsAgree reports whether two counts of one event agree within the
// tolerance (RepeatedEvents).
func (t Tolerances) countsAgree(k, n int32) bool {
	if k == n {
		return true
	}
	if k <= 1 || n <= 1 {
		return false
	}
	d := float64(max(k, n) - min(k, n))
	return d <= max(1, t.RepeatedEvents*float64(max(k, n)))
}

// forPod returns the tolerances for pod: Time plus its longest probe
// period when ProbePeriod is set and it has probes.
func (t Tolerances) forPod(pod *corev1.Pod) Tolerances {
	if !t.ProbePeriod || pod == nil {
		return t
	}
	var longest int32
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			for _, p := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
				if p != nil {
					period := p.PeriodSeconds
					if period <= 0 {
						period = 10
					}
					longest = max(longest, period)
				}
			}
		}
	}
	t.Time += time.Duration(longest) * time.Second
	return t
}

// entry is one distinct status a node showed: from At until Until (the
// next distinct status, or the end of the observation).
type entry struct {
	normalized
	At, Until time.Duration
	next      map[string]any // the status after it, nil for the last
}

func (e *entry) lasted() time.Duration { return e.Until - e.At }

// sequence turns versions (in the order the watch delivered them) into
// distinct consecutive entries; end is when observation stopped.
func sequence(vs []normalizedVersion, end time.Duration) []entry {
	var out []entry
	for _, v := range vs {
		if v.At > end {
			break
		}
		if len(out) > 0 && out[len(out)-1].Key == v.Key {
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].Until = v.At
		}
		out = append(out, entry{normalized: v.normalized, At: v.At})
	}
	if len(out) > 0 {
		out[len(out)-1].Until = end
	}
	for i := 0; i+1 < len(out); i++ {
		out[i].next = out[i+1].Obj
	}
	return out
}

type normalizedVersion struct {
	normalized
	At time.Duration
}

// SequenceDifference is one way two status sequences differ.
type SequenceDifference struct {
	// Kind is "only-kubelet", "only-nodestate", "fields" (two statuses in
	// the same place that differ in Fields) or "timing".
	Kind string
	// KubeletAt and NodestateAt are when each node showed the status
	// (relative to the pod's creation), notShown when it did not.
	KubeletAt, NodestateAt time.Duration
	// Lasted is how long the status was shown (only-* kinds).
	Lasted time.Duration
	// Fields are the differing fields (fields kind), or the status's
	// notable fields (only-* kinds), or the times that differ (timing).
	Fields []Difference
	// Kubelet and Nodestate are the normalised statuses involved (nil for
	// a node that showed none), and KubeletNext the kubelet's status after
	// its one, for the documented differences to recognise them.
	Kubelet, Nodestate, KubeletNext map[string]any
}

func (d SequenceDifference) String() string {
	var b strings.Builder
	switch d.Kind {
	case "only-kubelet":
		fmt.Fprintf(&b, "the kubelet showed a status at %s for %s that nodestate never showed", fmtDur(d.KubeletAt), fmtDur(d.Lasted))
	case "only-nodestate":
		fmt.Fprintf(&b, "nodestate showed a status at %s for %s that the kubelet never showed", fmtDur(d.NodestateAt), fmtDur(d.Lasted))
	case "fields":
		fmt.Fprintf(&b, "statuses differ (kubelet at %s, nodestate at %s)", fmtDur(d.KubeletAt), fmtDur(d.NodestateAt))
	default:
		fmt.Fprintf(&b, "timing (kubelet at %s, nodestate at %s)", fmtDur(d.KubeletAt), fmtDur(d.NodestateAt))
	}
	for _, f := range d.Fields {
		b.WriteString("\n      " + f.String())
	}
	return b.String()
}

func fmtDur(d time.Duration) string {
	if d == notShown {
		return "-"
	}
	if d < 0 {
		return "-" + (-d).Round(100*time.Millisecond).String()
	}
	return "+" + d.Round(100*time.Millisecond).String()
}

// notShown is the time of a status a node did not show.
const notShown = time.Duration(-1 << 62)

// alignment costs: a status shown long enough on one node and not on the
// other costs one; a transient one nothing.
const skipCost = 1

// compareSequences aligns a (the kubelet's) with b (nodestate's): equal
// statuses match, statuses shown for less than tol.Transient (or that began
// within tol.Transient of the end) may be skipped, and the alignment with
// the fewest long statuses skipped wins. It returns the differences: long
// statuses only one node showed (paired, where a gap between matches holds
// one on each side, as a field difference), and matches whose timing is
// beyond the tolerances.
func compareSequences(a, b []entry, end time.Duration, tol Tolerances) []SequenceDifference {
	pairs := align(a, b, end, tol)
	var out []SequenceDifference
	pi, pj := -1, -1
	prevObj := func(es []entry, i int) map[string]any {
		if i < 0 {
			return nil
		}
		return es[i].Obj
	}
	// waitFrom is the last match that was no back-off display: a wait that
	// ends in a restart is measured from there, however many times a
	// requeue showed the back-off meanwhile.
	wi, wj := -1, -1
	for _, p := range pairs {
		ga, gb := a[pi+1:p[0]], b[pj+1:p[1]]
		if _, ok := a[p[0]].Obj["deleted"]; ok && pi >= 0 {
			// A deletion cuts both sequences at one instant, as the end of
			// the observation does (see below).
			cut := cutAt(a[p[0]].At, a[pi].At-b[pj].At, tol)
			ga, gb = trimTail(ga, cut), trimTail(gb, cut)
		}
		out = append(out, gap(ga, gb, prevObj(a, pi), prevObj(b, pj), end, tol)...)
		if d, ok := timing(a, b, pi, pj, p[0], p[1], wi, wj, tol); !ok {
			out = append(out, d)
		}
		pi, pj = p[0], p[1]
		if !backOffDisplay(a[pi].Obj) {
			wi, wj = pi, pj
		}
	}
	// The end of the observation cuts both sequences at one instant, but
	// the two nodes may have drifted apart by then (each jittered wait
	// within its tolerance): a status only one node shows near the end is
	// the next one the other would have shown, had it been watched longer.
	cut := end - tol.Transient
	if pi >= 0 {
		cut = cutAt(end, a[pi].At-b[pj].At, tol)
	}
	out = append(out, gap(trimTail(a[pi+1:], cut), trimTail(b[pj+1:], cut), prevObj(a, pi), prevObj(b, pj), end, tol)...)
	return out
}

// cutAt is how far before a cut at t (the end of the observation, or the
// pod's deletion) a status one node alone shows is the next one the other
// would have shown, the two having drifted apart by drift.
func cutAt(t, drift time.Duration, tol Tolerances) time.Duration {
	return t - tol.Transient - max(drift, -drift) - tol.Time
}

// trimTail drops the entries of a trailing gap that began at or after cut.
func trimTail(es []entry, cut time.Duration) []entry {
	n := len(es)
	for n > 0 && es[n-1].At >= cut {
		n--
	}
	return es[:n]
}

func transient(e *entry, end time.Duration, tol Tolerances) bool {
	return e.lasted() < tol.Transient || end-e.At < tol.Transient
}

// kubeletTransient is transient for a status the kubelet showed: its
// successor may have been written up to WriteLag late, which makes it
// seem to last that much longer.
func kubeletTransient(e *entry, end time.Duration, tol Tolerances) bool {
	tol.Transient += tol.WriteLag
	return transient(e, end, tol)
}

// align returns the matched index pairs of the cheapest alignment.
func align(a, b []entry, end time.Duration, tol Tolerances) [][2]int {
	n, m := len(a), len(b)
	cost := make([][]int, n+1)
	for i := range cost {
		cost[i] = make([]int, m+1)
	}
	skipA := func(i int) int {
		if kubeletTransient(&a[i], end, tol) {
			return 0
		}
		return skipCost
	}
	skipB := func(j int) int {
		if transient(&b[j], end, tol) {
			return 0
		}
		return skipCost
	}
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			if i == n && j == m {
				continue
			}
			best := 1 << 30
			if i < n {
				best = min(best, skipA(i)+cost[i+1][j])
			}
			if j < m {
				best = min(best, skipB(j)+cost[i][j+1])
			}
			if i < n && j < m && a[i].Key == b[j].Key {
				best = min(best, cost[i+1][j+1])
			}
			cost[i][j] = best
		}
	}
	var pairs [][2]int
	for i, j := 0, 0; i < n || j < m; {
		switch {
		case i < n && j < m && a[i].Key == b[j].Key && cost[i][j] == cost[i+1][j+1]:
			pairs = append(pairs, [2]int{i, j})
			i, j = i+1, j+1
		case i < n && cost[i][j] == skipA(i)+cost[i+1][j]:
			i++
		default:
			j++
		}
	}
	return pairs
}

// gap reports the long statuses between two matches: as many as both
// sides have are paired by position and their fields compared, the rest
// are shown on one node only.
func gap(a, b []entry, prevA, prevB map[string]any, end time.Duration, tol Tolerances) []SequenceDifference {
	var la, lb []*entry
	for i := range a {
		if !kubeletTransient(&a[i], end, tol) && !backOffByChance(prevA, a[i].Obj) {
			la = append(la, &a[i])
		}
	}
	for j := range b {
		if !transient(&b[j], end, tol) && !backOffByChance(prevB, b[j].Obj) {
			lb = append(lb, &b[j])
		}
	}
	var out []SequenceDifference
	for k := 0; k < max(len(la), len(lb)); k++ {
		switch {
		case k < len(la) && k < len(lb):
			out = append(out, SequenceDifference{Kind: "fields", KubeletAt: la[k].At, NodestateAt: lb[k].At, Fields: diff(la[k].Obj, lb[k].Obj),
				Kubelet: la[k].Obj, Nodestate: lb[k].Obj, KubeletNext: la[k].next})
		case k < len(la):
			out = append(out, SequenceDifference{Kind: "only-kubelet", KubeletAt: la[k].At, NodestateAt: notShown, Lasted: la[k].lasted(), Fields: summary(la[k].Obj),
				Kubelet: la[k].Obj, KubeletNext: la[k].next})
		default:
			out = append(out, SequenceDifference{Kind: "only-nodestate", KubeletAt: notShown, NodestateAt: lb[k].At, Lasted: lb[k].lasted(), Fields: summary(lb[k].Obj),
				Nodestate: lb[k].Obj})
		}
	}
	return out
}

// summary lists a status's phase and its containers' states, the fields a
// reader needs to recognise it.
func summary(obj map[string]any) []Difference {
	var out []Difference
	add := func(path string, v value) {
		if v != nil {
			out = append(out, Difference{Path: path, Kubelet: render(v), Nodestate: render(v)})
		}
	}
	add("phase", obj["phase"])
	for _, list := range []string{"initContainerStatuses", "containerStatuses"} {
		l, _ := obj[list].([]any)
		for i, e := range l {
			m, _ := e.(map[string]any)
			add(list+"["+elemName(e, i)+"].state", m["state"])
		}
	}
	return out
}

// timing checks the match (i, j) against the previous one (pi, pj; -1 for
// the pod's creation): the time since it, and every time in the status that
// changed since the previous entry, may differ by tol.Time, plus the jitter
// allowance when the change ends a wait, the wait counted from the last
// match (wi, wj) that was no back-off display.
func timing(a, b []entry, pi, pj, i, j, wi, wj int, tol Tolerances) (SequenceDifference, bool) {
	baseA, baseB := time.Duration(0), time.Duration(0)
	if pi >= 0 {
		baseA, baseB = a[pi].At, b[pj].At
	}
	allow := tol.Time
	if pi >= 0 && endsWait(&a[pi], &a[i]) {
		waitA, waitB := a[i].At-baseA, b[j].At-baseB
		if wi >= 0 {
			waitA, waitB = a[i].At-a[wi].At, b[j].At-b[wj].At
		}
		allow += time.Duration(tol.Jitter * float64(max(waitA, waitB)))
	}
	d := SequenceDifference{Kind: "timing", KubeletAt: a[i].At, NodestateAt: b[j].At, Kubelet: a[i].Obj, Nodestate: b[j].Obj, KubeletNext: a[i].next}
	// A time is within the tolerance measured from the change before it
	// (a node that drifted by jittered waits is not held to the other's
	// clock) or measured from the pod's creation (a change one node wrote
	// late is not held against the next one).
	within := func(ta, tb time.Duration, lag time.Duration) bool {
		rel, abs := (ta-baseA)-(tb-baseB), ta-tb
		return (rel <= allow+lag && -rel <= allow) || (abs <= allow+lag && -abs <= allow)
	}
	if !within(a[i].At, b[j].At, tol.WriteLag) {
		d.Fields = append(d.Fields, Difference{Path: "(shown)", Kubelet: fmtDur(a[i].At), Nodestate: fmtDur(b[j].At)})
	}
	var paths []string
	for p := range a[i].Times {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		ta, tb := a[i].Times[p], b[j].Times[p]
		if _, ok := b[j].Times[p]; !ok {
			continue // a presence difference would have made the keys differ
		}
		changed := i == 0 || j == 0 || a[i-1].Times[p] != ta || b[j-1].Times[p] != tb
		if !changed {
			continue
		}
		if !within(ta, tb, 0) {
			d.Fields = append(d.Fields, Difference{Path: p, Kubelet: fmtDur(ta), Nodestate: fmtDur(tb)})
		}
	}
	return d, len(d.Fields) == 0
}

// waitReasons are the waiting reasons of a sync that failed or held a
// container back: the pod worker syncs again after its requeue.
var waitReasons = map[string]bool{
	"CrashLoopBackOff": true, "ImagePullBackOff": true, "ErrImagePull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
	"PreStartHookError": true, "PostStartHookError": true, "ContainerCreating": true,
}

// endsWait reports whether cur ends a wait that prev shows: a container of
// prev waits for one of waitReasons, or one that prev shows terminated has
// more restarts in cur.
func endsWait(prev, cur *entry) bool {
	for _, list := range []string{"initContainerStatuses", "containerStatuses"} {
		pl, _ := prev.Obj[list].([]any)
		cl, _ := cur.Obj[list].([]any)
		for i, e := range pl {
			pm, _ := e.(map[string]any)
			state, _ := pm["state"].(map[string]any)
			if w, ok := state["waiting"].(map[string]any); ok {
				if r, _ := w["reason"].(string); waitReasons[r] {
					return true
				}
			}
			if _, ok := state["terminated"]; ok && i < len(cl) {
				cm, _ := cl[i].(map[string]any)
				if restarts(cm) > restarts(pm) || waitingReason(cm) == "CrashLoopBackOff" {
					return true // restarted, or shown in back-off by the requeue
				}
			}
		}
	}
	return false
}

func restarts(m map[string]any) float64 {
	f, _ := m["restartCount"].(float64)
	return f
}

// waitingReason is a container status's waiting reason, "" when it is not
// waiting.
func waitingReason(m map[string]any) string {
	st, _ := m["state"].(map[string]any)
	w, _ := st["waiting"].(map[string]any)
	r, _ := w["reason"].(string)
	return r
}

// resyncWithinBackOff is the back-off beyond which whether a status shows
// a crashed container in CrashLoopBackOff before its restart is chance: the
// pod worker's requeue after a back-off is clamped to the resync interval
// (1 min) and jittered by up to half of it, so a back-off of 80 s or more
// may or may not see a sync before it ends, on either node.
const resyncWithinBackOff = time.Minute

// backOffByChance reports whether e is prev with a crashed container shown
// in a CrashLoopBackOff longer than the resync interval (its message says
// "back-off 1m20s ..."), which one node's requeue may have shown and the
// other's not.
func backOffByChance(prev, e map[string]any) bool {
	if prev == nil || e == nil {
		return false
	}
	found := false
	for _, list := range []string{"initContainerStatuses", "containerStatuses"} {
		pl, _ := prev[list].([]any)
		el, _ := e[list].([]any)
		for i, x := range el {
			em, _ := x.(map[string]any)
			if waitingReason(em) != "CrashLoopBackOff" || i >= len(pl) {
				continue
			}
			pm, _ := pl[i].(map[string]any)
			pst, _ := pm["state"].(map[string]any)
			if pst["terminated"] == nil || restarts(pm) != restarts(em) {
				return false
			}
			est, _ := em["state"].(map[string]any)
			w, _ := est["waiting"].(map[string]any)
			msg, _ := w["message"].(string)
			var d time.Duration
			if f := strings.Fields(msg); len(f) > 1 && f[0] == "back-off" {
				d, _ = time.ParseDuration(f[1])
			}
			if d <= resyncWithinBackOff {
				return false
			}
			found = true
		}
	}
	return found
}

// backOffDisplay reports whether a status shows some container waiting in
// CrashLoopBackOff: a requeue's display of a wait, not the end of one.
func backOffDisplay(obj map[string]any) bool {
	for _, list := range []string{"initContainerStatuses", "containerStatuses"} {
		l, _ := obj[list].([]any)
		for _, e := range l {
			m, _ := e.(map[string]any)
			if waitingReason(m) == "CrashLoopBackOff" {
				return true
			}
		}
	}
	return false
}
