package conformance

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/podphase"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // registers the core types with legacyscheme
	"k8s.io/kubernetes/pkg/printers"
	"k8s.io/kubernetes/pkg/printers/internalversion"
)

// kubectlRow is what upstream's pod table printer gives for one pod: the
// cells after NAME (READY, STATUS, RESTARTS, AGE, then IP, NODE, NOMINATED
// NODE and READINESS GATES for -o wide) and the row conditions.
type kubectlRow struct {
	ready, status, restarts           string
	ip, node, nominated, gates        string
	completed                         bool
	completedReason, completedMessage string
}

// upstreamRow prints pod as `kubectl get pods` receives it from the API
// server: the server decodes the pod with the v1 defaults (which, among
// other things, keep status.podIP and status.podIPs in sync), converts it to
// the internal type and prints it with the handlers of
// pkg/printers/internalversion (server-side printing).
func upstreamRow(t *rapid.T, gen *printers.HumanReadableGenerator, pod *v1.Pod) kubectlRow {
	decoded := pod.DeepCopy()
	legacyscheme.Scheme.Default(decoded)
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(decoded, internal, nil); err != nil {
		t.Fatalf("converting the pod to the internal type: %v", err)
	}
	table, err := gen.GenerateTable(internal, printers.GenerateOptions{Wide: true})
	if err != nil {
		t.Fatalf("upstream printer: %v", err)
	}
	if len(table.Rows) != 1 || len(table.Rows[0].Cells) != 9 {
		t.Fatalf("upstream printer gave %d rows, want 1 with 9 cells: %v", len(table.Rows), table.Rows)
	}
	c := table.Rows[0].Cells
	r := kubectlRow{ready: c[1].(string), status: c[2].(string), restarts: c[3].(string),
		ip: c[5].(string), node: c[6].(string), nominated: c[7].(string), gates: c[8].(string)}
	for _, rc := range table.Rows[0].Conditions {
		if rc.Type == metav1.RowCompleted && rc.Status == metav1.ConditionTrue {
			r.completed, r.completedReason, r.completedMessage = true, rc.Reason, rc.Message
		}
	}
	return r
}

func nodestateRow(t *rapid.T, pod *v1.Pod, now time.Time) kubectlRow {
	row, err := podphase.Columns(pod, now)
	if err != nil {
		t.Fatalf("podphase.Columns: %v", err)
	}
	return kubectlRow{ready: row.Ready, status: row.Status, restarts: row.Restarts,
		ip: row.IP, node: row.Node, nominated: row.NominatedNode, gates: row.ReadinessGates,
		completed: row.Completed, completedReason: row.CompletedReason, completedMessage: row.CompletedMessage}
}

// TestDisplayMatchesUpstream compares podphase.DisplayStatus and
// podphase.Columns with the pod table printer of
// k8s.io/kubernetes/pkg/printers/internalversion (printPod), which is what
// `kubectl get pods` shows, on generated pods: the STATUS, READY and
// RESTARTS columns, the -o wide columns and the Completed row condition.
func TestDisplayMatchesUpstream(t *testing.T) {
	const name = "DisplayStatus, Columns vs printers/internalversion printPod"
	gen := printers.NewTableGenerator().With(internalversion.AddHandlers)
	anchor := time.Now().Truncate(time.Second)
	inputs, mismatches := 0, 0
	defer func() { record(name, inputs, mismatches) }()
	rapid.Check(t, func(t *rapid.T) {
		pod := podGen(anchor).Draw(t, "pod")
		inputs++
		// RESTARTS shows an age measured by upstream at the time of the
		// call; bracket that call so the age ours gives at one end must
		// match.
		before := time.Now()
		want := upstreamRow(t, gen, pod)
		after := time.Now()
		got := nodestateRow(t, pod, before)
		if got != want {
			if late := nodestateRow(t, pod, after); late == want {
				got = late
			}
		}
		status := podphase.DisplayStatus(pod)
		if got != want || status != want.status {
			mismatches++
			t.Fatalf("pod:\n%s\nnodestate: DisplayStatus %q, Columns %s\nupstream:  %s", describe(pod, anchor), status, got, want)
		}
	})
	if inputs < checks() {
		t.Fatalf("ran %d inputs, want at least %d", inputs, checks())
	}
}

func (r kubectlRow) String() string {
	s := fmt.Sprintf("READY %q STATUS %q RESTARTS %q IP %q NODE %q NOMINATED %q GATES %q", r.ready, r.status, r.restarts, r.ip, r.node, r.nominated, r.gates)
	if r.completed {
		s += fmt.Sprintf(" Completed(%q, %q)", r.completedReason, r.completedMessage)
	}
	return s
}
