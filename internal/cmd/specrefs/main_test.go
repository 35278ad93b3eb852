package main

import (
	"strings"
	"testing"
	"testing/fstest"
)

// fixture is a small spec with the shapes the real ones use: numbered and
// lettered headings, numbered items, an unnumbered heading, a legend table and
// a case table.
const fixture = `# pkg: a fixture

## 1. Vocabulary

| # | not a case table header? it is: first header "#" |
|---|---|

## 4. Rules

### 4.1 Steps

1. first
2. second
3. third

## 5. Invariants

1. one
2. two

### 5.2 Nested

- a bullet, then a list inside it:
  1. nested one

## A. Letters

### A.5 Retries

## 14. Cases

### Legend

| Code | Meaning |
|---|---|
| T0 | terminated |

| # | Situation | Expected |
|---|---|---|
| CS04 | x | y |
| K02 | x | y |
`

// numeric is a spec whose cases are plain numbers (as nodecondition's).
const numeric = `# num

## 6. Cases

| # | Source | Expected |
|---|---|---|
| 1 | a | b |
| 43 | a | b |
`

func testSpecs(t *testing.T) specs {
	t.Helper()
	ss, err := loadSpecs(fstest.MapFS{
		"docs/" + p("pkg"):    {Data: []byte(fixture)},
		"docs/" + p("num"):    {Data: []byte(numeric)},
		"docs/spec/x.txt":     {Data: []byte("not a spec")},
		"docs/conventions.md": {Data: []byte("# conventions\n\n## 1. Options\n\n## 2. Zero values\n")},
	}, "docs/spec")
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// p spells a path reference without writing one in this file, which the
// repository's own check would then read.
func p(name string) string { return "spec" + "/" + name + ".md" }

func TestCheckFile(t *testing.T) {
	ss := testSpecs(t)
	tests := []struct {
		reason string
		file   string
		text   string
		want   []string // substrings of the problems, in order; none means it resolves
	}{
		{"a path and a section that exist", "a/b.go", "// traces " + p("pkg") + " section 4.1.", nil},
		{"a path to a missing file", "a/b.go", "// see " + p("nosuch") + " section 4.", []string{"a/b.go:1: " + p("nosuch") + ": no such file"}},
		{"a missing section", "a/b.go", "// see " + p("pkg") + " section 4.7.", []string{"a/b.go:1: " + p("pkg") + " section 4.7: no such section"}},
		{"a list and a range of sections", "a/b.md", "(" + p("pkg") + " sections 4, 5 and A.5; sections 4-5)", nil},
		{"one bad section of a list", "a/b.md", p("pkg") + " sections 4, 5 and 6", []string{"section 6: no such section"}},
		{"an item of a numbered list as a subsection", "a/b.go", "// " + p("pkg") + " 5.2", nil},
		{"an item that is not there", "a/b.go", "// " + p("pkg") + " 5.3", []string{"section 5.3: no such section"}},
		{"steps of a section", "a/b.go", "// " + p("pkg") + " section 4.1, steps 1 to 3", nil},
		{"a step that is not there", "a/b.go", "// " + p("pkg") + " section 4.1 rule 4", []string{"section 4.1 item 4: section 4.1 has no numbered item 4"}},
		{"the § form", "a/b.go", "// " + p("pkg") + " §4", nil},
		{"a lettered section after the path", "a/b.go", "// (" + p("pkg") + " A.5): retried", nil},
		{"case IDs after the path", "a/b.go", "// " + p("pkg") + " cases CS04, K02", nil},
		{"a missing case ID", "a/b.go", "// " + p("pkg") + " cases CS04, K03", []string{"case K03: no such case"}},
		{"a legend code is not a case", "a/b.go", "// " + p("pkg") + " case T0", []string{"case T0: no such case"}},
		{"a named spec", "examples/x_test.go", `"pkg spec section 4 and K02"`, nil},
		{"a named spec with a bad case", "examples/x_test.go", `"pkg spec section 4 and K09"`, []string{"case K09"}},
		{"a following bare section keeps the named spec", "examples/x_test.go", `"pkg spec section 4 (section 9)"`, []string{"section 9: no such section"}},
		{"the package directory's spec for short forms", "pkg/a_test.go", "// TestX traces section 14 and rule 5; see K02.", nil},
		{"a bad short form in a package directory", "pkg/a_test.go", `t.Fatal("rule 13: wrong")`, []string{"pkg/a_test.go:1: " + p("pkg") + " section 13"}},
		{"a bad case ID in a package directory", "pkg/a_test.go", `{id: "CS99"},`, []string{"case CS99"}},
		{"spec alone in a package directory", "pkg/a.go", "// (spec 5.1, 5.2)", nil},
		{"spec alone with no spec to refer to", "other/a.go", "// (spec 5.1)", []string{"which spec?"}},
		{"sections outside a spec's context are someone else's", "other/a.go", "// see section 99 of the KEP; case 7", nil},
		{"numeric cases with a sub-case letter", "num/a_test.go", `{"case 43a", nil}, {"case 1", nil}`, nil},
		{"a numeric case that is not there", "num/a_test.go", `{"case 44", nil}`, []string{"case 44: no such case"}},
		{"a switch clause is no case", "num/a.go", "\tcase 7:", nil},
		{"a path at the end of a line carries to the next", "other/a.go", "// (TerminatePod, " + p("pkg") + "\n// section 7)", []string{"other/a.go:2: " + p("pkg") + " section 7"}},
		{"a conventions section is checked in docs/conventions.md, not the package's spec", "pkg/a.go", "// (docs/conventions.md section 2)", nil},
		{"a conventions section that is not there", "pkg/a.go", "// (docs/conventions.md section 9)", []string{"docs/conventions.md section 9: no such section"}},
		{"an item of a numbered list nested in a bullet", "pkg/a_test.go", "// " + p("pkg") + " section 5.2 rule 1", nil},
		{"the spec files check only paths", "docs/" + p("pkg"), "see section 99 and " + p("gone"), []string{p("gone") + ": no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			got := ss.checkFile(tt.file, []byte(tt.text))
			if len(got) != len(tt.want) {
				t.Fatalf("%s: got %d problems %q, want %d %q", tt.reason, len(got), got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("%s: problem %d is %q, want it to contain %q", tt.reason, i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	s := parseSpec([]byte(fixture))
	for _, id := range []string{"1", "4", "4.1", "5", "A", "A.5", "14"} {
		if _, ok := s.sections[id]; !ok {
			t.Errorf("section %s not found", id)
		}
	}
	if !s.sections["4.1"][3] || s.sections["4.1"][4] {
		t.Errorf("items of 4.1: %v, want 1 to 3", s.sections["4.1"])
	}
	if !s.cases["CS04"] || !s.cases["K02"] || s.cases["T0"] {
		t.Errorf("cases %v, want CS04 and K02 and not the legend's T0", s.cases)
	}
}

func TestLoadSpecsEmpty(t *testing.T) {
	if _, err := loadSpecs(fstest.MapFS{"docs/spec/x.txt": {Data: nil}}, "docs/spec"); err == nil {
		t.Fatal("a directory without specs loaded without error")
	}
}
