package conformance

import (
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
	r := kubectlRow{Ready: c[1].(string), Status: c[2].(string), Restarts: c[3].(string),
		IP: c[5].(string), Node: c[6].(string), Nominated: c[7].(string), Gates: c[8].(string)}
	for _, rc := range table.Rows[0].Conditions {
		if rc.Type == metav1.RowCompleted && rc.Status == metav1.ConditionTrue {
			r.Completed, r.CompletedReason, r.CompletedMessage = true, rc.Reason, rc.Message
		}
	}
	return r
}

// TestDisplayMatchesUpstream compares podphase.DisplayStatus and
// podphase.Columns with the pod table printer of
// k8s.io/kubernetes/pkg/printers/internalversion (printPod), which is what
// `kubectl get pods` shows, on generated pods: the STATUS, READY and
// RESTARTS columns, the -o wide columns and the Completed row condition.
func TestDisplayMatchesUpstream(t *testing.T) {
	const name = "DisplayStatus, Columns vs printers/internalversion printPod"
	gen := printers.NewTableGenerator().With(internalversion.AddHandlers)
	opts := podphase.DefaultOptionsFor(profile)
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
		got := nodestateRow(t, opts, pod, before)
		if got != want {
			if late := nodestateRow(t, opts, pod, after); late == want {
				got = late
			}
		}
		status := opts.DisplayStatus(pod)
		if got != want || status != want.Status {
			mismatches++
			t.Fatalf("pod:\n%s\nnodestate: DisplayStatus %q, Columns %s\nupstream:  %s", describe(pod, anchor), status, got, want)
		}
	})
	if inputs < checks() {
		t.Fatalf("ran %d inputs, want at least %d", inputs, checks())
	}
}
