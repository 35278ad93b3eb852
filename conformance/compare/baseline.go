package compare

import (
	"fmt"
	"sort"
	"strings"
)

// How the baseline (the second oracle node's run, Config.Baseline)
// explains a workload whose nodestate copy differs from the kubelet's.
const (
	// ExplainedMatch: nodestate's copy ran as the second kubelet's did, so
	// the real kubelet itself ran the workload both ways.
	ExplainedMatch = "nodestate ran it as the second kubelet did"
	// ExplainedVaries: the kubelet's own two runs differ too, and every
	// way nodestate's copy differs from the first run is a way the second
	// run differs from it: the same field with the same values, the same
	// kind of status shown by one run alone, the same event counted
	// otherwise.
	ExplainedVaries = "the kubelet's own two runs differ in the same way"
)

// BaselineReport is a differing workload's comparison with the second
// oracle node's run of it.
type BaselineReport struct {
	// Kubelet compares the two oracle nodes' runs (the first node's in the
	// kubelet places, the second's in the nodestate places): the real
	// kubelet's own variation. Nodestate compares nodestate's run with the
	// second oracle node's.
	Kubelet, Nodestate []PodReport
	// Unpaired are the pods of the second run without a counterpart.
	Unpaired []string
	// Explained is ExplainedMatch, ExplainedVaries, or empty when the
	// baseline does not explain the workload's differences.
	Explained string
}

// explain compares a differing workload's pods with the second oracle
// node's copy. kubelet compares the first oracle node's copy of a pair of
// pods with the second's (no documented difference applies between two
// kubelets); nodestate compares the second oracle node's copy with
// nodestate's.
func explain(wr *WorkloadReport, k, n, b []*history, kubelet, nodestate func([2]*history) PodReport) *BaselineReport {
	br := &BaselineReport{}
	kb, bn := pairPods(k, b), pairPods(b, n)
	for _, p := range kb {
		if p[0] == nil || p[1] == nil {
			br.Unpaired = append(br.Unpaired, unpaired(p))
		}
	}
	br.Kubelet = bestPairing(kb, kubelet)
	br.Nodestate = bestPairing(bn, nodestate)
	if len(wr.Errors) > 0 || len(wr.Unpaired) > 0 || len(br.Unpaired) > 0 {
		return br
	}
	matches := true
	for _, p := range bn {
		matches = matches && p[0] != nil && p[1] != nil
	}
	for i := range br.Nodestate {
		matches = matches && br.Nodestate[i].Equal()
	}
	if matches {
		br.Explained = ExplainedMatch
		return br
	}
	varies := signatures(br.Kubelet)
	for s := range signatures(wr.Pods) {
		if !varies[s] {
			return br
		}
	}
	br.Explained = ExplainedVaries
	return br
}

// signatures names each way the pods' reports differ: a field with both
// values, a status one side alone showed with its notable fields'
// values, the times of a status, an event counted otherwise.
func signatures(ps []PodReport) map[string]bool {
	out := map[string]bool{}
	for i := range ps {
		for _, d := range ps[i].Statuses {
			if len(d.Fields) == 0 {
				out[d.Kind] = true
			}
			for _, f := range d.Fields {
				switch d.Kind {
				case "fields":
					out[d.Kind+" "+f.Path+" "+f.Kubelet+" -> "+f.Nodestate] = true
				case "only-kubelet":
					out[d.Kind+" "+f.Path+" "+f.Kubelet] = true
				case "only-nodestate":
					out[d.Kind+" "+f.Path+" "+f.Nodestate] = true
				default: // timing: the times, never the same twice
					out[d.Kind+" "+f.Path] = true
				}
			}
		}
		for _, e := range ps[i].Events {
			out["event "+e.Event] = true
		}
	}
	return out
}

// Explained reports whether the workload ran alike on both nodes but for
// documented differences, or the baseline explains its differences, or
// runs of its own did not show them again (Confirm).
func (w *WorkloadReport) Explained() bool {
	return w.Equal() || w.Baseline != nil && w.Baseline.Explained != "" || w.Rerun != nil && !w.Rerun.Reproduced
}

// String renders the baseline's verdict on a differing workload, and the
// second oracle node's differences from the first.
func (br *BaselineReport) String() string {
	var b strings.Builder
	verdict := br.Explained
	if verdict == "" {
		verdict = "not explained: nodestate differs from the kubelet where the kubelet's own two runs agree"
	}
	fmt.Fprintf(&b, "  baseline: %s\n", verdict)
	for _, u := range br.Unpaired {
		b.WriteString("    " + u + "\n")
	}
	var sigs []string
	for s := range signatures(br.Kubelet) {
		sigs = append(sigs, s)
	}
	sort.Strings(sigs)
	for _, s := range sigs {
		b.WriteString("    the second kubelet differs: " + s + "\n")
	}
	return b.String()
}
