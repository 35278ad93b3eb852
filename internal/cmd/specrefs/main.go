// Command specrefs checks that every reference to the behaviour specs in the
// repository resolves in docs/spec/.
//
// It reads every tracked .go and .md file (git ls-files) and finds:
//
//   - a path, spec/<name>.md, optionally followed by sections or case IDs:
//     "spec/podphase.md section 4.1", "spec/containerstate.md sections 10, 11",
//     "spec/events.md A.5", "spec/podphase.md cases N02, N11";
//   - "<name> spec" followed by sections or case IDs ("podphase spec K02",
//     "containerstate spec section 5");
//   - in a file under a package directory that has a spec (containerstate/...
//     uses docs/spec/containerstate.md), the short forms the tests use:
//     "spec section 6", "spec 5.1", "section 13", "sections 3.4, 5 and 6",
//     "rule 10", "§4", "case 43a", and every case ID of that spec's scheme
//     ("S17", "K02", "CS04": the prefixes of the spec's case table).
//
// A section resolves to a numbered heading ("### 4.2 ...", "## A. ...") or to
// a numbered item of the list under its parent heading ("spec 5.6" is item 6
// of section 5). "step N" or "rule N" right after a section ("section 8.4 rule
// 5", "section 4.1, steps 3 to 6") is an item of that section's lists. A case ID
// resolves to the first column of a case table (a table whose first header is
// "#"); nodecondition's numeric cases are cited as "case N" with an optional
// letter for a sub-case.
//
// The specs themselves (docs/spec/) are checked for paths only: their prose
// cites sections of one another without paths. This directory's own files are
// not read: they spell out sample references, broken ones included.
//
// It prints file:line and what is missing for each reference that does not
// resolve, and exits with status 1 if there is one. With -v it first lists
// every reference it found and where it points. Run it from the repository
// root.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	verbose := len(os.Args) > 1 && os.Args[1] == "-v"
	specs, err := loadSpecs(os.DirFS("."), "docs/spec")
	if err != nil {
		fmt.Fprintln(os.Stderr, "specrefs:", err)
		os.Exit(2)
	}
	out, err := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.go", "*.md").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "specrefs: git ls-files:", err)
		os.Exit(2)
	}
	var problems []string
	for _, name := range strings.Fields(string(out)) {
		if strings.HasPrefix(name, "internal/cmd/specrefs/") {
			continue // its doc and tests spell out sample references, broken ones included
		}
		data, err := os.ReadFile(name)
		if err != nil {
			if os.IsNotExist(err) { // deleted in the work tree, not yet in the index
				continue
			}
			fmt.Fprintln(os.Stderr, "specrefs:", err)
			os.Exit(2)
		}
		if verbose {
			for _, r := range specs.refsOf(name, data) {
				fmt.Println(r)
			}
		}
		problems = append(problems, specs.checkFile(name, data)...)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "specrefs: %d references do not resolve in docs/spec/\n", len(problems))
		os.Exit(1)
	}
}

// spec is what one docs/spec file lets a reference name.
type spec struct {
	sections map[string]map[int]bool // section ID -> numbered list items directly under it
	cases    map[string]bool         // case IDs of the case tables
	prefixes map[string]bool         // the letter prefixes of the case IDs ("" for numeric IDs)
}

// specs are the docs/spec files by name without ".md".
type specs map[string]*spec

var (
	headingRE = regexp.MustCompile(`^#{1,6}\s+((?:[A-Z]|\d+)(?:\.\d+)*)\.?(?:\s|$)`)
	itemRE    = regexp.MustCompile(`^\s*(\d+)\.\s`) // indented: a list nested in a bullet counts
	// conventionsRE is a citation of docs/conventions.md, which is no spec.
	conventionsRE = regexp.MustCompile(`conventions\.md,?\s+sections?\s+(\d+)`)
	caseRowRE     = regexp.MustCompile(`^\|\s*([A-Z]{0,3})(\d+)([a-z]?)\s*\|`)
	tableHdrRE    = regexp.MustCompile(`^\|\s*([^|]*?)\s*\|`)
)

// conventionsKey holds docs/conventions.md among the specs; the space keeps
// any spec/<name>.md path from naming it.
const conventionsKey = " conventions"

// loadSpecs reads every .md file of dir in fsys, and the conventions beside it.
func loadSpecs(fsys fs.FS, dir string) (specs, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	out := specs{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(e.Name(), ".md")] = parseSpec(data)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no spec in %s", dir)
	}
	// docs/conventions.md sits beside the specs; its sections are cited too.
	if data, err := fs.ReadFile(fsys, path.Join(path.Dir(dir), "conventions.md")); err == nil {
		out[conventionsKey] = parseSpec(data)
	}
	return out, nil
}

// parseSpec finds the sections, their numbered items and the case IDs of one
// spec.
func parseSpec(data []byte) *spec {
	s := &spec{sections: map[string]map[int]bool{}, cases: map[string]bool{}, prefixes: map[string]bool{}}
	cur := ""
	inTable, caseTable := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := headingRE.FindStringSubmatch(line); m != nil {
			cur = m[1]
			s.sections[cur] = map[int]bool{}
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue // an unnumbered heading (Legend) stays in its numbered section
		}
		if m := itemRE.FindStringSubmatch(line); m != nil && cur != "" {
			n, _ := strconv.Atoi(m[1])
			s.sections[cur][n] = true
		}
		if !strings.HasPrefix(line, "|") {
			inTable, caseTable = false, false
			continue
		}
		if !inTable {
			inTable = true
			m := tableHdrRE.FindStringSubmatch(line)
			caseTable = m != nil && m[1] == "#"
			continue
		}
		if m := caseRowRE.FindStringSubmatch(line); m != nil && caseTable {
			s.cases[m[1]+m[2]+m[3]] = true
			s.prefixes[m[1]] = true
		}
	}
	return s
}

// Reference syntax. A list is IDs joined by ",", "and", "or", "to", "-".
const (
	secID  = `(?:[A-Z]|\d+)(?:\.\d+)+|\d+|[A-Z](?:\b)`
	caseID = `[A-Z]{0,3}\d+[a-z]?`
	joiner = `(?:\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+|\s+to\s+|\s*[-–]\s*)`
)

var (
	pathRE = regexp.MustCompile(`\bspec/([A-Za-z0-9_-]+)\.md\b`)
	// "containerstate spec", "podphase spec's"
	namedRE = regexp.MustCompile(`\b([a-z]+) spec(?:'s)?\b`)
	// "spec" as a word, not part of a path or an identifier.
	bareSpecRE = regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_./-])spec(?:'s)?\b(?:[^/.A-Za-z]|$)`)
	// a section clause: keyword and list.
	sectionRE = regexp.MustCompile(`(?:\b([Ss]ections?|[Rr]ules?)\s+|(§)\s*)((?:` + secID + `)(?:` + joiner + `(?:` + secID + `))*)`)
	// items of the section just cited: "rule 5", "steps 3 to 6".
	itemsRE = regexp.MustCompile(`^\s*,?\s*(?:steps?|rules?|items?)\s+(\d+(?:` + joiner + `\d+)*)`)
	// a list of IDs right after an anchor ("spec/events.md A.5", "spec 5.1, 5.2", "spec K02").
	anchorListRE = regexp.MustCompile(`^\s*(?:cases?\s+)?((?:` + secID + `|` + caseID + `)(?:` + joiner + `(?:` + secID + `|` + caseID + `))*)\b`)
	caseKWRE     = regexp.MustCompile(`\b[Cc]ases?\s+(` + caseID + `(?:` + joiner + caseID + `)*)\b`)
	listSplitRE  = regexp.MustCompile(joiner)
	caseTokenRE  = regexp.MustCompile(`\b([A-Z]{1,3})(\d+)([a-z]?)\b`)
	sectionOnly  = regexp.MustCompile(`^(?:` + secID + `)$`)
)

// ref is one resolvable name found in a line.
type ref struct {
	spec string // spec name
	what string // "section", "item" or "case"
	id   string
	sec  string // for an item, its section
}

// checkFile returns one problem per reference of the file that does not
// resolve.
func (ss specs) checkFile(name string, data []byte) []string {
	if strings.HasPrefix(name, "docs/spec/") {
		return ss.checkPathsOnly(name, data)
	}
	def := ""
	if top, _, ok := strings.Cut(name, "/"); ok && ss[top] != nil {
		def = top
	}
	var problems []string
	carry := ""
	for i, line := range strings.Split(string(data), "\n") {
		refs, missing, next := ss.lineRefs(line, def, carry, strings.HasSuffix(name, ".go"))
		carry = next
		for _, m := range missing {
			problems = append(problems, fmt.Sprintf("%s:%d: %s", name, i+1, m))
		}
		for _, r := range refs {
			if msg := ss.resolve(r); msg != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %s", name, i+1, msg))
			}
		}
	}
	return problems
}

// refsOf lists the references of a file as file:line: spec what id, for -v.
func (ss specs) refsOf(name string, data []byte) []string {
	if strings.HasPrefix(name, "docs/spec/") {
		return nil
	}
	def := ""
	if top, _, ok := strings.Cut(name, "/"); ok && ss[top] != nil {
		def = top
	}
	var out []string
	carry := ""
	for i, line := range strings.Split(string(data), "\n") {
		refs, _, next := ss.lineRefs(line, def, carry, strings.HasSuffix(name, ".go"))
		carry = next
		for _, r := range refs {
			id := r.id
			if r.what == "item" {
				id = r.sec + " item " + r.id
			}
			out = append(out, fmt.Sprintf("%s:%d: spec/%s.md %s %s", name, i+1, r.spec, r.what, id))
		}
	}
	return out
}

// checkPathsOnly checks only spec/<name>.md paths: the specs' own prose uses
// "section N" of other documents.
func (ss specs) checkPathsOnly(name string, data []byte) []string {
	var problems []string
	for i, line := range strings.Split(string(data), "\n") {
		for _, m := range pathRE.FindAllStringSubmatch(line, -1) {
			if ss[m[1]] == nil {
				problems = append(problems, fmt.Sprintf("%s:%d: spec/%s.md: no such file in docs/spec/", name, i+1, m[1]))
			}
		}
	}
	return problems
}

// anchor is a place in a line that names a spec.
type anchor struct {
	start, end int
	spec       string // "" for an unknown file, or for "spec" alone
	bare       bool   // "spec" alone: the file's spec
}

// lineRefs finds the references of one line. def is the file's spec (its
// package directory), carry a spec named at the very end of the previous line
// ("... spec/podphase.md\n// section 5)"). It returns the references, the
// problems found while reading them (an unknown file), and the spec to carry
// to the next line.
func (ss specs) lineRefs(line, def, carry string, goFile bool) (refs []ref, missing []string, next string) {
	// "conventions.md section N" cites docs/conventions.md: check it there and
	// blank it out, so that the scans below do not read it as a spec section.
	for _, m := range conventionsRE.FindAllStringSubmatchIndex(line, -1) {
		id := line[m[2]:m[3]]
		if c := ss[conventionsKey]; c != nil && !c.hasSection(id) {
			missing = append(missing, fmt.Sprintf("docs/conventions.md section %s: no such section", id))
		}
		line = line[:m[0]] + strings.Repeat(" ", m[1]-m[0]) + line[m[1]:]
	}
	var anchors []anchor
	for _, m := range pathRE.FindAllStringSubmatchIndex(line, -1) {
		name := line[m[2]:m[3]]
		if ss[name] == nil {
			missing = append(missing, fmt.Sprintf("spec/%s.md: no such file in docs/spec/", name))
			name = "" // its sections cannot be checked
		}
		anchors = append(anchors, anchor{m[0], m[1], name, false})
	}
	for _, m := range namedRE.FindAllStringSubmatchIndex(line, -1) {
		if name := line[m[2]:m[3]]; ss[name] != nil {
			anchors = append(anchors, anchor{m[0], m[1], name, false})
		}
	}
	for _, m := range bareSpecRE.FindAllStringIndex(line, -1) {
		i := strings.Index(strings.ToLower(line[m[0]:m[1]]), "spec")
		s, e := m[0]+i, m[0]+i+len("spec")
		if strings.HasPrefix(line[e:], "'s") {
			e += 2
		}
		if covered(anchors, s) {
			continue
		}
		anchors = append(anchors, anchor{s, e, "", true})
	}
	sort.Slice(anchors, func(i, j int) bool { return anchors[i].start < anchors[j].start })

	// bareName is what "spec" alone means in this file.
	bareName := def
	if bareName == "" {
		bareName = carry
	}
	// specAt is the spec a reference at position p belongs to: the last anchor
	// before it on the line, else the carried one, else the file's.
	specAt := func(p int) (string, bool) {
		name := carry
		if name == "" {
			name = def
		}
		for _, a := range anchors {
			if a.start >= p {
				break
			}
			if a.bare {
				name = bareName
			} else {
				name = a.spec
			}
		}
		return name, name != ""
	}

	// Lists right after an anchor.
	for _, a := range anchors {
		rest := line[a.end:]
		m := anchorListRE.FindStringSubmatchIndex(rest)
		if m == nil {
			continue
		}
		list := rest[m[2]:m[3]]
		name := a.spec
		if a.bare {
			name = bareName
			if name == "" {
				missing = append(missing, fmt.Sprintf("spec %s: which spec? cite it as spec/<name>.md", list))
				continue
			}
		}
		if name == "" {
			continue // an unknown file, reported above
		}
		last := ""
		for _, id := range splitList(list) {
			if sectionOnly.MatchString(id) && !ss.isCase(name, id) {
				refs = append(refs, ref{spec: name, what: "section", id: id})
				last = id
			} else {
				refs = append(refs, ref{spec: name, what: "case", id: id})
			}
		}
		refs = append(refs, itemRefs(name, last, rest[m[1]:])...)
	}

	// Section clauses anywhere.
	for _, m := range sectionRE.FindAllStringSubmatchIndex(line, -1) {
		name, ok := specAt(m[0])
		if !ok || name == "" {
			continue // a section of something else
		}
		list := line[m[6]:m[7]]
		last := ""
		for _, id := range splitList(list) {
			refs = append(refs, ref{spec: name, what: "section", id: id})
			last = id
		}
		refs = append(refs, itemRefs(name, last, line[m[1]:])...)
	}

	// "case 43a", "cases N02, N11".
	for _, m := range caseKWRE.FindAllStringSubmatchIndex(line, -1) {
		if goFile && strings.TrimSpace(line[:m[0]]) == "" {
			continue // a switch clause
		}
		name, ok := specAt(m[0])
		if !ok || name == "" {
			continue
		}
		for _, id := range splitList(line[m[2]:m[3]]) {
			refs = append(refs, ref{spec: name, what: "case", id: id})
		}
	}

	// Case IDs of the scheme of the spec in force at their place.
	for _, m := range caseTokenRE.FindAllStringSubmatchIndex(line, -1) {
		name, ok := specAt(m[0])
		if !ok || name == "" {
			continue
		}
		if ss[name].prefixes[line[m[2]:m[3]]] {
			refs = append(refs, ref{spec: name, what: "case", id: line[m[0]:m[1]]})
		}
	}

	// A path or a named spec at the end of the line carries to the next one.
	trimmed := strings.TrimRight(line, " \t(")
	for _, a := range anchors {
		if a.spec != "" && a.end >= len(trimmed) {
			next = a.spec
		}
	}
	return dedup(refs), missing, next
}

func covered(anchors []anchor, p int) bool {
	for _, a := range anchors {
		if p >= a.start && p < a.end {
			return true
		}
	}
	return false
}

// itemRefs reads "rule 5" or "steps 3 to 6" following a section.
func itemRefs(name, sec, rest string) []ref {
	if sec == "" {
		return nil
	}
	m := itemsRE.FindStringSubmatch(rest)
	if m == nil {
		return nil
	}
	var refs []ref
	for _, id := range splitList(m[1]) {
		refs = append(refs, ref{spec: name, what: "item", id: id, sec: sec})
	}
	return refs
}

func splitList(list string) []string {
	var out []string
	for _, s := range listSplitRE.Split(list, -1) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func dedup(refs []ref) []ref {
	seen := map[ref]bool{}
	var out []ref
	for _, r := range refs {
		if r.what == "section" {
			// a section given as an item of a clause ("rule 5" after a
			// section) is checked as that item only.
			skip := false
			for _, o := range refs {
				if o.what == "item" && o.id == r.id && o.spec == r.spec {
					skip = true
				}
			}
			if skip {
				continue
			}
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

func (ss specs) isCase(name, id string) bool {
	s := ss[name]
	return s != nil && s.cases[id]
}

// resolve says what is missing, or "" when r resolves.
func (ss specs) resolve(r ref) string {
	s := ss[r.spec]
	where := "spec/" + r.spec + ".md"
	switch r.what {
	case "section":
		if s.hasSection(r.id) {
			return ""
		}
		return fmt.Sprintf("%s section %s: no such section or numbered item in docs/spec/%s.md", where, r.id, r.spec)
	case "item":
		n, _ := strconv.Atoi(r.id)
		if s.sections[r.sec][n] {
			return ""
		}
		return fmt.Sprintf("%s section %s item %s: section %s has no numbered item %s", where, r.sec, r.id, r.sec, r.id)
	default:
		id := r.id
		if s.cases[id] {
			return ""
		}
		if base := strings.TrimRight(id, "abcdefghijklmnopqrstuvwxyz"); base != id && s.cases[base] {
			return "" // a sub-case ("case 43a") of a row
		}
		return fmt.Sprintf("%s case %s: no such case in the case table of docs/spec/%s.md", where, id, r.spec)
	}
}

// hasSection reports whether id is a heading, or item N of the numbered list
// of heading P for id P.N.
func (s *spec) hasSection(id string) bool {
	if _, ok := s.sections[id]; ok {
		return true
	}
	i := strings.LastIndex(id, ".")
	if i < 0 {
		return false
	}
	n, err := strconv.Atoi(id[i+1:])
	return err == nil && s.sections[id[:i]][n]
}
