package compare

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// PodReport is the comparison of one pod of a workload, one copy on each
// node.
type PodReport struct {
	// Kubelet and Nodestate name the two copies ("" when a node has no
	// counterpart).
	Kubelet, Nodestate string
	// KubeletStatuses and NodestateStatuses count the distinct statuses
	// each node showed.
	KubeletStatuses, NodestateStatuses int
	// Statuses are the differences between the status sequences, Events
	// those between the event sets, both without the documented ones.
	Statuses []SequenceDifference
	Events   []EventDifference
	// Documented are the differences a documented difference explains, by
	// its ID.
	Documented map[string]int
	// Kubelet's and nodestate's sequences, a line per distinct status
	// (when it was shown, the phase, each container's state).
	KubeletSequence, NodestateSequence []string
	// Dump is every distinct status of both, normalised, when asked for.
	Dump string
}

// Equal reports whether no undocumented difference was found.
func (p *PodReport) Equal() bool { return len(p.Statuses) == 0 && len(p.Events) == 0 }

// side is one node's copy of a pod: its history and its events.
type side struct {
	h      *history
	events []corev1.Event
	node   string
	end    time.Time
}

// entries normalises the copy's versions into its distinct statuses, the
// deletion from the API server being the last ("deleted": true).
func (s *side) entries(hostIPs []string) []entry {
	subj := subject{Namespace: s.h.Namespace, Name: s.h.Name, UID: s.h.UID, Node: s.node}
	n := newNormalizer(subj, s.h.Created, hostIPs)
	var vs []normalizedVersion
	for _, v := range s.h.Versions {
		at := v.At.Sub(s.h.Created)
		if v.Deleted {
			vs = append(vs, normalizedVersion{normalized: deletedEntry(), At: at})
			continue
		}
		nv, err := n.status(&v.Pod.Status)
		if err != nil {
			continue
		}
		vs = append(vs, normalizedVersion{normalized: nv, At: at})
	}
	return sequence(vs, s.end.Sub(s.h.Created))
}

func deletedEntry() normalized {
	return normalized{Key: `{"deleted":true}`, Obj: map[string]any{"deleted": true}, Times: map[string]time.Duration{}}
}

// eventKey is what identifies an event in the comparison.
type eventKey struct {
	Type, Reason, FieldPath, Message, Source string
}

func (k eventKey) String() string {
	fp := ""
	if k.FieldPath != "" {
		fp = " " + k.FieldPath
	}
	return fmt.Sprintf("%s %s%s (%s): %s", k.Type, k.Reason, fp, k.Source, k.Message)
}

// EventDifference is an event the two nodes recorded a different number of
// times (0 when one never recorded it).
type EventDifference struct {
	Event              string
	Kubelet, Nodestate int32
}

func (d EventDifference) String() string {
	return fmt.Sprintf("event %s: kubelet %d, nodestate %d", d.Event, d.Kubelet, d.Nodestate)
}

// eventCounts sums the counts of the copy's events by key.
func (s *side) eventCounts(hostIPs []string) map[eventKey]int32 {
	subj := subject{Namespace: s.h.Namespace, Name: s.h.Name, UID: s.h.UID, Node: s.node}
	n := newNormalizer(subj, s.h.Created, hostIPs)
	out := map[eventKey]int32{}
	for _, e := range s.events {
		if e.InvolvedObject.UID != s.h.UID {
			continue
		}
		k := eventKey{Type: e.Type, Reason: e.Reason, FieldPath: e.InvolvedObject.FieldPath, Message: n.text(e.Message), Source: e.Source.Component}
		c := e.Count
		if c == 0 {
			c = 1
		}
		out[k] += c
	}
	return out
}

// comparePod compares one pod's two copies.
func comparePod(k, n *side, hostIPs []string, tol Tolerances, known []Known, workload string) PodReport {
	r := PodReport{Kubelet: k.h.Name, Nodestate: n.h.Name, Documented: map[string]int{}}
	tol = tol.forPod(k.h.Versions[0].Pod)
	a, b := k.entries(hostIPs), n.entries(hostIPs)
	r.KubeletStatuses, r.NodestateStatuses = len(a), len(b)
	r.KubeletSequence, r.NodestateSequence = describeSequence(a), describeSequence(b)
	end := min(k.end.Sub(k.h.Created), n.end.Sub(n.h.Created))
	for _, d := range compareSequences(a, b, end, tol) {
		if d, ok := filterSequence(d, known, workload, r.Documented); ok {
			r.Statuses = append(r.Statuses, d)
		}
	}
	ka, kb := k.eventCounts(hostIPs), n.eventCounts(hostIPs)
	keys := map[eventKey]bool{}
	for x := range ka {
		keys[x] = true
	}
	for x := range kb {
		keys[x] = true
	}
	for x := range keys {
		if tol.countsAgree(ka[x], kb[x]) {
			continue
		}
		d := EventDifference{Event: x.String(), Kubelet: ka[x], Nodestate: kb[x]}
		if id := matchEvent(known, workload, x, d); id != "" {
			r.Documented[id]++
			continue
		}
		r.Events = append(r.Events, d)
	}
	sort.Slice(r.Events, func(i, j int) bool { return r.Events[i].Event < r.Events[j].Event })
	return r
}

// pairPods pairs a workload's pods on the two nodes: by creation order
// (a bare pod is alone; a controller's pods come in the order it made
// them).
func pairPods(k, n []*history) [][2]*history {
	sort.Slice(k, func(i, j int) bool { return k[i].Created.Before(k[j].Created) })
	sort.Slice(n, func(i, j int) bool { return n[i].Created.Before(n[j].Created) })
	var out [][2]*history
	for i := 0; i < max(len(k), len(n)); i++ {
		var p [2]*history
		if i < len(k) {
			p[0] = k[i]
		}
		if i < len(n) {
			p[1] = n[i]
		}
		out = append(out, p)
	}
	return out
}

// byWorkload groups histories by their pods' "workload" label.
func byWorkload(hs []*history) map[string][]*history {
	out := map[string][]*history{}
	for _, h := range hs {
		if len(h.Versions) == 0 {
			continue
		}
		w := h.Versions[0].Pod.Labels["workload"]
		out[w] = append(out[w], h)
	}
	return out
}

// String renders the pod's report: "equal", or each difference.
func (p *PodReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  pod %s / %s: %d / %d distinct statuses", orNone(p.Kubelet), orNone(p.Nodestate), p.KubeletStatuses, p.NodestateStatuses)
	if p.Equal() {
		b.WriteString(": equal")
	}
	if len(p.Documented) > 0 {
		var ids []string
		for id, n := range p.Documented {
			ids = append(ids, fmt.Sprintf("%s x%d", id, n))
		}
		sort.Strings(ids)
		b.WriteString(" (documented: " + strings.Join(ids, ", ") + ")")
	}
	b.WriteString("\n")
	for _, d := range p.Statuses {
		b.WriteString("    " + d.String() + "\n")
	}
	for _, d := range p.Events {
		b.WriteString("    " + d.String() + "\n")
	}
	if p.Dump != "" {
		b.WriteString(p.Dump)
	}
	if !p.Equal() {
		b.WriteString("    the kubelet's statuses:\n")
		for _, l := range p.KubeletSequence {
			b.WriteString("      " + l + "\n")
		}
		b.WriteString("    nodestate's statuses:\n")
		for _, l := range p.NodestateSequence {
			b.WriteString("      " + l + "\n")
		}
	}
	return b.String()
}

// describeSequence renders each entry in a line: when it was shown, the
// phase, the Ready condition, and each container's state.
func describeSequence(es []entry) []string {
	var out []string
	for i := range es {
		e := &es[i]
		parts := []string{fmtDur(e.At)}
		if _, ok := e.Obj["deleted"]; ok {
			out = append(out, parts[0]+" deleted")
			continue
		}
		phase, _ := e.Obj["phase"].(string)
		parts = append(parts, orNone(phase))
		if cs, ok := e.Obj["conditions"].([]any); ok {
			for _, c := range cs {
				m, _ := c.(map[string]any)
				if m["type"] == "Ready" {
					parts = append(parts, "Ready="+fmt.Sprint(m["status"]))
				}
			}
		}
		for _, list := range []string{"initContainerStatuses", "containerStatuses"} {
			l, _ := e.Obj[list].([]any)
			for j, c := range l {
				m, _ := c.(map[string]any)
				parts = append(parts, elemName(c, j)+":"+stateWord(m))
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

// stateWord is a container's state in a word or two: "running",
// "running+ready", "waiting:CrashLoopBackOff", "terminated:Error(1)", with
// its restart count when it has restarted ("/r2").
func stateWord(m map[string]any) string {
	st, _ := m["state"].(map[string]any)
	var s string
	switch {
	case st["running"] != nil:
		s = "running"
		if m["ready"] == true {
			s += "+ready"
		}
	case st["waiting"] != nil:
		w, _ := st["waiting"].(map[string]any)
		s = "waiting:" + fmt.Sprint(w["reason"])
	case st["terminated"] != nil:
		t, _ := st["terminated"].(map[string]any)
		s = fmt.Sprintf("terminated:%v(%v)", t["reason"], t["exitCode"])
	default:
		s = "none"
	}
	if r := restarts(m); r > 0 {
		s += fmt.Sprintf("/r%v", r)
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// dumpPair renders both copies' distinct statuses in full.
func dumpPair(k, n *side, hostIPs []string) string {
	var b strings.Builder
	for _, s := range []struct {
		name string
		side *side
	}{{"kubelet", k}, {"nodestate", n}} {
		b.WriteString("    " + s.name + ":\n")
		for _, e := range s.side.entries(hostIPs) {
			var times []string
			for p, t := range e.Times {
				times = append(times, p+"="+fmtDur(t))
			}
			sort.Strings(times)
			fmt.Fprintf(&b, "      %s %s\n        times: %s\n", fmtDur(e.At), e.Key, strings.Join(times, " "))
		}
	}
	return b.String()
}
