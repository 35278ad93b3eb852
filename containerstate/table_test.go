package containerstate

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestMermaidGolden keeps testdata/transitions.mmd and the diagram in doc.go
// true to the transition table.
func TestMermaidGolden(t *testing.T) {
	got := Mermaid()
	golden := filepath.Join("testdata", "transitions.mmd")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		t.Fatalf("%s is stale (run go test -update):\n%s", golden, got)
	}

	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var indented strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimSuffix(got, "\n"), "\n") {
		indented.WriteString("//\t" + line)
	}
	const open, end = "//\t```mermaid\n", "\n//\t```\n"
	if *update {
		i := strings.Index(string(doc), open)
		j := strings.Index(string(doc), end)
		if i < 0 || j < i {
			t.Fatal("doc.go has no mermaid block to update")
		}
		doc = []byte(string(doc[:i+len(open)]) + indented.String() + string(doc[j:]))
		if err := os.WriteFile("doc.go", doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(string(doc), open+indented.String()+end) {
		t.Fatalf("the diagram in doc.go differs from Mermaid(); replace it with:\n%s", indented.String())
	}
}

func TestTransitionsTable(t *testing.T) {
	seen := map[State]bool{}
	for _, tr := range Transitions() {
		if len(tr.Events) == 0 || tr.When == "" {
			t.Errorf("row %v -> %v has no events or no explanation", tr.From, tr.To)
		}
		for _, e := range tr.Events {
			if e < PullStarted || e > Tick {
				t.Errorf("row %v -> %v lists undefined event %v", tr.From, tr.To, e)
			}
		}
		seen[tr.From] = true
	}
	for _, s := range []State{Waiting, Running, Terminated} {
		if !seen[s] {
			t.Errorf("no row leaves %v", s)
		}
	}
	if !Allowed(Terminated, Started, Running) || Allowed(Terminated, PullStarted, Running) {
		t.Error("Allowed disagrees with the table")
	}
}
