package podphase

import (
	"os"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// mermaid renders LegalTransition as a Mermaid state diagram; "" is the
// initial state.
func mermaid() string {
	from := []v1.PodPhase{"", v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, v1.PodUnknown}
	to := []v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, v1.PodUnknown}
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	for _, f := range from {
		for _, t := range to {
			if f == t || !LegalTransition(f, t) {
				continue
			}
			name := string(f)
			if f == "" {
				name = "[*]"
			}
			b.WriteString("    " + name + " --> " + string(t) + "\n")
		}
	}
	return b.String()
}

// TestDiagram checks that the diagram in doc.go is the one LegalTransition
// gives.
func TestDiagram(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, line := range strings.SplitAfter(mermaid(), "\n") {
		if line != "" {
			want.WriteString("//\t" + line)
		}
	}
	if !strings.Contains(string(doc), want.String()) {
		t.Errorf("doc.go does not hold the transition diagram; it should read:\n%s", want.String())
	}
}
