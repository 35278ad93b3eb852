package compare

import (
	"testing"
	"time"
)

// TestExplain: the baseline explains a differing workload when nodestate's
// copy equals the second kubelet's, or when every way it differs from the
// first kubelet's is a way the second kubelet's differs from it too; not
// when nodestate differs in a way the two kubelets agree on, nor when a
// pod is missing or the workload failed.
func TestExplain(t *testing.T) {
	field := func(path, k, n string) SequenceDifference {
		return SequenceDifference{Kind: "fields", Fields: []Difference{{Path: path, Kubelet: k, Nodestate: n}}}
	}
	only := func(kind, path, v string) SequenceDifference {
		d := SequenceDifference{Kind: kind, Fields: []Difference{{Path: path}}}
		if kind == "only-kubelet" {
			d.Fields[0].Kubelet = v
		} else {
			d.Fields[0].Nodestate = v
		}
		return d
	}
	backOff := EventDifference{Event: "Warning BackOff spec.containers{app} (kubelet): Back-off restarting failed container", Kubelet: 3, Nodestate: 4}
	reason := field("containerStatuses[app].state.waiting.reason", `"CrashLoopBackOff"`, `"ContainerCreating"`)
	for _, tc := range []struct {
		name               string
		nk, kb, bn         PodReport // nodestate against the kubelet, the kubelet against the second, the second against nodestate
		errors, noBaseline bool
		want               string
	}{
		{name: "nodestate equals the second kubelet",
			nk: PodReport{Statuses: []SequenceDifference{reason}}, kb: PodReport{Statuses: []SequenceDifference{reason}}, want: ExplainedMatch},
		{name: "the same field with the same values, and the same event",
			nk: PodReport{Statuses: []SequenceDifference{reason}, Events: []EventDifference{backOff}},
			kb: PodReport{Statuses: []SequenceDifference{reason, only("only-kubelet", "phase", `"Failed"`)}, Events: []EventDifference{{Event: backOff.Event, Kubelet: 3, Nodestate: 2}}},
			bn: PodReport{Events: []EventDifference{backOff}}, want: ExplainedVaries},
		{name: "the same field with other values",
			nk: PodReport{Statuses: []SequenceDifference{reason}},
			kb: PodReport{Statuses: []SequenceDifference{field("containerStatuses[app].state.waiting.reason", `"CrashLoopBackOff"`, `"Error"`)}},
			bn: PodReport{Statuses: []SequenceDifference{reason}}},
		{name: "a status shown by nodestate alone, the second kubelet showing another",
			nk: PodReport{Statuses: []SequenceDifference{only("only-nodestate", "phase", `"Succeeded"`)}},
			kb: PodReport{Statuses: []SequenceDifference{only("only-nodestate", "phase", `"Failed"`)}},
			bn: PodReport{Statuses: []SequenceDifference{reason}}},
		{name: "the two kubelets agree",
			nk: PodReport{Events: []EventDifference{backOff}}, bn: PodReport{Events: []EventDifference{backOff}}},
		{name: "a failed workload",
			nk: PodReport{Statuses: []SequenceDifference{reason}}, kb: PodReport{Statuses: []SequenceDifference{reason}}, errors: true},
		{name: "no pod on the second kubelet",
			nk: PodReport{Statuses: []SequenceDifference{reason}}, kb: PodReport{Statuses: []SequenceDifference{reason}}, noBaseline: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := time.Unix(0, 0)
			k, n, b := &history{Name: "k", Created: at}, &history{Name: "n", Created: at}, &history{Name: "b", Created: at}
			wr := WorkloadReport{Pods: []PodReport{tc.nk}}
			if tc.errors {
				wr.Errors = []string{"creating *v1.Pod on kubelet-1: refused"}
			}
			bs := []*history{b}
			if tc.noBaseline {
				bs = nil
			}
			pick := func(r PodReport) func([2]*history) PodReport {
				return func([2]*history) PodReport { return r }
			}
			br := explain(&wr, []*history{k}, []*history{n}, bs, pick(tc.kb), pick(tc.bn))
			if br.Explained != tc.want {
				t.Errorf("explained %q, want %q", br.Explained, tc.want)
			}
			wr.Baseline = br
			if got := wr.Explained(); got != (tc.want != "") {
				t.Errorf("Explained() %v", got)
			}
		})
	}
}
