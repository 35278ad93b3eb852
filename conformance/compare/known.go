package compare

import (
	"strings"
	"time"
)

// Known is a documented difference: where nodestate differs from the
// kubelet on purpose, each listed with its reason in docs/faithfulness.md
// under its ID. A difference one of them matches is counted in the report
// and fails nothing; any other fails the comparison.
type Known struct {
	// ID is its heading in docs/faithfulness.md ("O1").
	ID string
	// Title says it in a line.
	Title string
	// Field matches one differing field of two statuses shown in the same
	// place of the sequences (or of their times); d is the difference it
	// belongs to.
	Field func(workload string, d *SequenceDifference, f Difference) bool
	// Sequence matches a status one node showed and the other did not.
	Sequence func(workload string, d SequenceDifference) bool
	// Event matches an event recorded a different number of times.
	Event func(workload string, k eventKey, d EventDifference) bool
	// Node matches one differing field of the two Node objects.
	Node func(d Difference) bool
}

// filterSequence removes from d what known explains, counting it in
// documented by ID; ok is false when nothing is left.
func filterSequence(d SequenceDifference, known []Known, workload string, documented map[string]int) (SequenceDifference, bool) {
	switch d.Kind {
	case "only-kubelet", "only-nodestate":
		for _, k := range known {
			if k.Sequence != nil && k.Sequence(workload, d) {
				documented[k.ID]++
				return d, false
			}
		}
		return d, true
	}
	var left []Difference
	for _, f := range d.Fields {
		if id := matchField(known, workload, &d, f); id != "" {
			documented[id]++
			continue
		}
		left = append(left, f)
	}
	d.Fields = left
	return d, len(left) > 0
}

func matchField(known []Known, workload string, d *SequenceDifference, f Difference) string {
	for _, k := range known {
		if k.Field != nil && k.Field(workload, d, f) {
			return k.ID
		}
	}
	return ""
}

func matchEvent(known []Known, workload string, key eventKey, d EventDifference) string {
	for _, k := range known {
		if k.Event != nil && k.Event(workload, key, d) {
			return k.ID
		}
	}
	return ""
}

func matchNode(known []Known, d Difference) string {
	for _, k := range known {
		if k.Node != nil && k.Node(d) {
			return k.ID
		}
	}
	return ""
}

// Documented are the documented differences (docs/faithfulness.md).
func Documented() []Known {
	return []Known{
		{ID: "O1", Title: "a kube.Node reports no Hostname address unless Options.Hostname is set",
			Node: func(d Difference) bool { return d.Path == "status.addresses[Hostname]" && d.Nodestate == "" }},
		{ID: "O3", Title: "the kubelet writes a terminal phase once its pod worker has terminated the pod, 1 to 6 s after the containers stopped, and the stopped sandbox after that",
			Sequence: func(_ string, d SequenceDifference) bool {
				return d.Kind == "only-kubelet" && d.Lasted <= terminalHold && heldTerminal(d.Kubelet, d.KubeletNext)
			},
			Field: func(_ string, d *SequenceDifference, f Difference) bool {
				return d.Kind == "timing" && terminal(d.Kubelet) && d.KubeletAt > d.NodestateAt && d.KubeletAt-d.NodestateAt <= terminalHold+2*time.Second
			}},
		{ID: "O4", Title: "in-place resize is not modelled: the spec's resources are allocated at once",
			Field: func(w string, _ *SequenceDifference, f Difference) bool {
				return strings.HasPrefix(w, "resize") && resizeField(f.Path)
			},
			Event: func(w string, k eventKey, _ EventDifference) bool {
				return strings.HasPrefix(w, "resize") && strings.HasPrefix(k.Reason, "Resize")
			}},
		{ID: "O5", Title: "how many probes run against a container between its exit and the relist that finds it",
			Event: func(_ string, k eventKey, d EventDifference) bool {
				return k.Reason == "Unhealthy" && strings.Contains(k.Message, "container is in CONTAINER_EXITED state")
			}},
	}
}

// terminalHold is how long the kubelet was seen to hold a terminal phase
// back (O3).
const terminalHold = 8 * time.Second

// terminal reports whether a normalised status has a terminal phase.
func terminal(obj map[string]any) bool {
	p, _ := obj["phase"].(string)
	return p == "Succeeded" || p == "Failed"
}

// heldTerminal reports whether obj is one of the statuses the kubelet
// writes while its pod worker terminates a pod whose containers have all
// stopped, before the status next, which has a terminal phase: the old phase
// with no container running (mergePodStatus keeps the old phase while the
// pod could have running containers), or the terminal phase with the
// sandbox not yet stopped (the status generated before the pod worker's
// kill, which the stopped sandbox's status follows).
func heldTerminal(obj, next map[string]any) bool {
	if obj == nil || next == nil || !terminal(next) {
		return false
	}
	for _, list := range []string{"initContainerStatuses", "containerStatuses"} {
		l, _ := obj[list].([]any)
		for _, e := range l {
			m, _ := e.(map[string]any)
			st, _ := m["state"].(map[string]any)
			if st["running"] != nil {
				return false
			}
		}
	}
	return true
}

// resizeField reports whether path is a field an in-place resize changes:
// the allocated and actual resources of the pod and its containers, and
// the resize conditions.
func resizeField(path string) bool {
	for _, p := range []string{"allocatedResources", "resources", "conditions[PodResizePending]", "conditions[PodResizeInProgress]"} {
		if strings.HasPrefix(path, p) || strings.Contains(path, "]."+p) {
			return true
		}
	}
	return false
}
