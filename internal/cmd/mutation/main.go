// Command mutation runs mutation testing of the state-machine packages with
// gremlins and writes docs/mutation.md: a table per package and every mutant
// that survived, was not covered or timed out, each with its verdict.
//
// It runs one package at a time (the machine is shared), with gremlins'
// default operators plus INVERT_LOGICAL (&& and ||), INVERT_LOOPCTRL (break
// and continue) and INVERT_ASSIGNMENTS (+= and -=), the package's own tests
// under go test -short, and the files of the package directory only (not its
// *test helper packages or other subdirectories). Mutants that do not compile
// (NOT VIABLE) are counted apart and left out of the efficacy, which is
// killed / (killed + lived). A package in a nested module (kube) is built
// and tested from its module's directory, as go requires, against its own
// tests (not kube/integration's); its results are named and kept as the
// others'.
//
// Each run's outcome is kept in docs/mutation/<package>.json with the source
// line of every mutant that was not killed, so the report can be written
// again without running gremlins (-report), and so a verdict still matches
// when the lines around it move. Verdicts live in docs/mutation-verdicts.txt,
// stanzas separated by a blank line:
//
//	mutant: podphase phase.go statusIndex.isSorted INVERT_LOOPCTRL break 1
//	line: x.sorted = false / break
//	verdict: equivalent: why no caller can tell the difference
//
// The first line names the package, the file, the enclosing function ("-"
// outside one), the operator, the token that is mutated and which
// occurrence of that token in the line (1 is the first);
// the second is the source line with its indentation trimmed (after the
// line before it and " / " when it is shorter than 16 characters). A mutant that
// is not killed and has no verdict is listed as "no test yet". Verdicts that
// match no mutant of a package that was run are reported, to be removed.
//
// Usage, from the repository root:
//
//	go run ./internal/cmd/mutation [-workers 2] [-timeout-coefficient 10] [-files regexp] [package ...]
//	go run ./internal/cmd/mutation -report
//	go run ./internal/cmd/mutation -survivors podphase
//	go run ./internal/cmd/mutation -import out.json -seconds 1200 podphase
//	go run ./internal/cmd/mutation -import out.json -seconds 1200 -files '^lane\.go$' events
//
// Without packages it runs all seven, quickest first: podphase,
// containerstate, statussync, events, nodecondition, podlifecycle and kube.
// gremlins is pinned to v0.6.0 and installed on first use into the user's
// cache directory (nodestate/gremlins-v0.6.0).
//
// gremlins lists the mutants (unleash --dry-run) and marks those its coverage
// profile does not reach as not covered; its profile leaves out the
// expressions of switch cases and constant declarations. (It runs go test
// -cover on the package and the directories below it: for a module's root
// package, as kube, that is the whole module, whose integration tests skip
// under -short; each package's profile comes from its own tests.) Every
// mutant, not covered or not, is then run here against its package's short
// tests, with vet off so that only a failing test kills it. Most go into one
// mutant schema per package (schemata.go): a test binary with every such
// mutant in it, switched on one at a time by an environment variable, so a
// mutant costs a run of the tests instead of a build. The rest (arithmetic,
// negation, constant expressions, statements in a loop header) are applied one
// at a time through go test -overlay, which leaves the tree untouched. A
// mutant that fails a test is killed (even if the run then hangs), one that
// does not build is not viable, one whose run does not end within the limit
// without a failed test is timed out, and one that passes has lived, or stays
// not covered. -survivors does the same for every mutant of the kept result
// that was not killed: after tests were added, as long as the package's code
// is unchanged, the killed mutants stay killed and only the others need to run
// again. -files mutates only the package's files whose names match it, a
// partial run that the report says is one (its result replaces the package's
// kept one); -import condenses a gremlins output made by hand, and with -files
// records that the run mutated only those files.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

const (
	gremlinsModule  = "github.com/go-gremlins/gremlins/cmd/gremlins"
	gremlinsVersion = "v0.6.0"
	resultsDir      = "docs/mutation"
	reportFile      = "docs/mutation.md"
	verdictsFile    = "docs/mutation-verdicts.txt"
)

// packages are the packages under mutation testing, in the order they run:
// the quickest first.
var packages = []string{"podphase", "containerstate", "statussync", "events", "nodecondition", "podlifecycle", "kube"}

// operators are enabled on top of gremlins' defaults.
var operators = []string{"--invert-logical", "--invert-loopctrl", "--invert-assignments"}

// Result is one package's run, as kept in docs/mutation/<package>.json.
type Result struct {
	Package  string  `json:"package"`
	Gremlins string  `json:"gremlins"`
	Settings string  `json:"settings"`
	Date     string  `json:"date"`
	Seconds  float64 `json:"seconds"`
	Counts   Counts  `json:"counts"`
	// Files, when set, restricted the run to the files matching it.
	Files string `json:"files,omitempty"`
	// Retested says when the tests last ran again against the mutants
	// that were not killed (-survivors), without a new gremlins run.
	Retested string   `json:"retested,omitempty"`
	Mutants  []Mutant `json:"mutants"` // every mutant neither killed nor unviable
}

// Counts are the mutants of a package by status.
type Counts struct {
	Total int `json:"total"`
	// RerunKilled are mutants gremlins reported as not covered that
	// failed the tests when run here; they are counted in Killed.
	RerunKilled int `json:"rerun_killed"`
	Killed      int `json:"killed"`
	Lived       int `json:"lived"`
	NotCovered  int `json:"not_covered"`
	TimedOut    int `json:"timed_out"`
	NotViable   int `json:"not_viable"`
}

// Efficacy is killed / (killed + lived) in percent; 100 without either.
func (c Counts) Efficacy() float64 {
	if c.Killed+c.Lived == 0 {
		return 100
	}
	return 100 * float64(c.Killed) / float64(c.Killed+c.Lived)
}

// Mutant is one mutant that was not killed.
type Mutant struct {
	File       string `json:"file"`
	Line       int    `json:"line"`
	Column     int    `json:"column"`
	Operator   string `json:"operator"`
	Status     string `json:"status"`
	Token      string `json:"token"`
	Occurrence int    `json:"occurrence"`
	Func       string `json:"func"` // the enclosing function ("Type.Method"), or "-"
	Source     string `json:"source"`
}

// key identifies a mutant across edits that move lines.
func (m Mutant) key(pkg string) string {
	return fmt.Sprintf("%s %s %s %s %s %d\n%s", pkg, m.File, m.Func, m.Operator, m.Token, m.Occurrence, m.Source)
}

// gremlinsOutput is the part of gremlins' --output JSON that is read.
type gremlinsOutput struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

func main() {
	reportOnly := flag.Bool("report", false, "write docs/mutation.md from the kept results without running gremlins")
	workers := flag.Int("workers", 2, "gremlins --workers")
	coefficient := flag.Int("timeout-coefficient", 10, "gremlins --timeout-coefficient: a mutant's test run may take this many times the coverage run")
	importPath := flag.String("import", "", "condense this gremlins --output file of a run made by hand (one package), instead of running gremlins")
	importSeconds := flag.Float64("seconds", 0, "with -import: the run's duration in seconds")
	files := flag.String("files", "", "mutate only the package's files whose names match this regular expression (a partial run, said so in the report)")
	survivors := flag.Bool("survivors", false, "run the tests again only against the kept result's mutants that were not killed (valid while only tests changed since the run)")
	flag.Parse()

	pkgs := flag.Args()
	if len(pkgs) == 0 {
		pkgs = packages
	}
	for _, p := range pkgs {
		if !known(p) {
			fatalf("unknown package %q (one of %s)", p, strings.Join(packages, ", "))
		}
	}
	switch {
	case *importPath != "":
		if len(pkgs) != 1 {
			fatalf("-import needs exactly one package")
		}
		r, err := condense(pkgs[0], *importPath)
		if err != nil {
			fatalf("%v", err)
		}
		if err := retest(&r, rerun, *workers, *coefficient); err != nil {
			fatalf("%v", err)
		}
		r.Seconds = *importSeconds
		r.Settings = settings(*workers, *coefficient)
		if *files != "" {
			r.Files = *files // the hand-made run mutated these files only
		}
		if err := save(r); err != nil {
			fatalf("%v", err)
		}
	case *survivors:
		for _, p := range pkgs {
			r, err := load(p)
			if err != nil {
				fatalf("%v", err)
			}
			start := time.Now()
			if err := retest(&r, func(Mutant) bool { return true }, *workers, *coefficient); err != nil {
				fatalf("%s: %v", p, err)
			}
			r.Retested = fmt.Sprintf("%s, %d mutants that were not killed, in %s",
				time.Now().UTC().Format("2006-01-02"), r.Counts.Total-r.Counts.Killed-r.Counts.NotViable,
				time.Since(start).Round(time.Second))
			if err := save(r); err != nil {
				fatalf("%v", err)
			}
		}
	case !*reportOnly:
		bin, err := installGremlins()
		if err != nil {
			fatalf("%v", err)
		}
		for _, p := range pkgs {
			r, err := run(bin, p, *files, *workers, *coefficient)
			if err != nil {
				fatalf("%s: %v", p, err)
			}
			if err := save(r); err != nil {
				fatalf("%s: %v", p, err)
			}
			fmt.Printf("== %s: %d mutants, %d killed, %d lived, %d not covered, %d timed out, efficacy %.1f%%, %s\n",
				p, r.Counts.Total, r.Counts.Killed, r.Counts.Lived, r.Counts.NotCovered, r.Counts.TimedOut,
				r.Counts.Efficacy(), time.Duration(r.Seconds*float64(time.Second)).Round(time.Second))
		}
	}
	if err := report(); err != nil {
		fatalf("%v", err)
	}
}

func known(p string) bool {
	for _, q := range packages {
		if p == q {
			return true
		}
	}
	return false
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mutation: "+format+"\n", args...)
	os.Exit(1)
}

// installGremlins installs the pinned gremlins into the cache once and
// returns the binary's path.
func installGremlins() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "nodestate", "gremlins-"+gremlinsVersion)
	bin := filepath.Join(dir, "gremlins")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	fmt.Printf("== installing gremlins %s into %s\n", gremlinsVersion, dir)
	cmd := exec.Command("go", "install", gremlinsModule+"@"+gremlinsVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("installing gremlins: %w", err)
	}
	return bin, nil
}

// run runs gremlins over one package and condenses its output.
func run(bin, pkg, files string, workers, coefficient int) (Result, error) {
	out, err := os.CreateTemp("", "mutation-"+pkg+"-*.json")
	if err != nil {
		return Result{}, err
	}
	out.Close()
	defer os.Remove(out.Name())

	args := append([]string{"unleash", "--dry-run"}, operators...)
	args = append(args,
		"--exclude-files", "/", // files in subdirectories: the *test helper packages
	)
	if files != "" {
		only, err := regexp.Compile(files)
		if err != nil {
			return Result{}, fmt.Errorf("-files: %w", err)
		}
		names, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		if err != nil {
			return Result{}, err
		}
		for _, n := range names {
			base := filepath.Base(n)
			if !strings.HasSuffix(base, "_test.go") && !only.MatchString(base) {
				args = append(args, "--exclude-files", "^"+regexp.QuoteMeta(base)+"$")
			}
		}
	}
	dir, path, err := module(pkg)
	if err != nil {
		return Result{}, err
	}
	args = append(args, "--output", out.Name(), path)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	// gremlins has no flag for test flags; go test reads them from GOFLAGS.
	// -count=1 keeps the coverage run, whose duration sets the timeout, from
	// being answered by the test cache.
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -short -count=1"))
	log, err := os.Create(filepath.Join(os.TempDir(), "mutation-"+pkg+".log"))
	if err != nil {
		return Result{}, err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	fmt.Printf("== gremlins %s (log: %s)\n", pkg, log.Name())
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("gremlins: %w (see %s)", err, log.Name())
	}
	r, err := condense(pkg, out.Name())
	if err != nil {
		return Result{}, err
	}
	if err := retest(&r, func(Mutant) bool { return true }, workers, coefficient); err != nil {
		return Result{}, err
	}
	r.Seconds = time.Since(start).Round(time.Second).Seconds()
	r.Settings = fmt.Sprintf("mutants listed by gremlins unleash --dry-run (default operators and %s); "+
		"go test -short -vet=off -failfast against each, %d at a time, in one mutant schema build "+
		"(a run stopped after %d times an unmutated run, at least %s and at most %s) or, for those it cannot hold (constant expressions, package-level initializers), "+
		"applied through -overlay (stopped after %d times an unmutated go test, compiling included, and at least %s)",
		strings.Join(operators, " "), workers, coefficient, minSchemaLimit, maxSchemaLimit, coefficient, minLimit)
	if files != "" {
		r.Files = files
	}
	return r, nil
}

// settings describes a gremlins run made by hand (-import).
func settings(workers, coefficient int) string {
	return fmt.Sprintf("go test -short; default operators and %s; --workers %d --timeout-coefficient %d",
		strings.Join(operators, " "), workers, coefficient)
}

// condense reads gremlins' JSON output and the package's sources.
func condense(pkg, path string) (Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	var g gremlinsOutput
	if err := json.Unmarshal(data, &g); err != nil {
		return Result{}, fmt.Errorf("reading gremlins output: %w", err)
	}
	r := Result{
		Package:  pkg,
		Gremlins: gremlinsVersion,
		Date:     time.Now().UTC().Format("2006-01-02"),
	}
	for _, f := range g.Files {
		toks, err := tokens(filepath.Join(pkg, f.Name))
		if err != nil {
			return Result{}, err
		}
		for _, m := range f.Mutations {
			r.Counts.Total++
			switch m.Status {
			case "KILLED":
				r.Counts.Killed++
				continue
			case "NOT VIABLE":
				r.Counts.NotViable++
				continue
			case "LIVED":
				r.Counts.Lived++
			case "NOT COVERED":
				r.Counts.NotCovered++
			case "TIMED OUT":
				r.Counts.TimedOut++
			case "RUNNABLE":
				// Listed by a dry run: counted once retest has run it.
			default:
				return Result{}, fmt.Errorf("%s:%d: unexpected status %q", f.Name, m.Line, m.Status)
			}
			t, ok := toks[pos{m.Line, m.Column}]
			if !ok {
				return Result{}, fmt.Errorf("%s:%d:%d: no token at the mutant's position", f.Name, m.Line, m.Column)
			}
			r.Mutants = append(r.Mutants, Mutant{
				File: f.Name, Line: m.Line, Column: m.Column, Operator: m.Type, Status: m.Status,
				Token: t.text, Occurrence: t.occurrence, Func: t.fn, Source: t.source,
			})
		}
	}
	sort.Slice(r.Mutants, func(i, j int) bool {
		a, b := r.Mutants[i], r.Mutants[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return a.Operator < b.Operator
	})
	return r, nil
}

type pos struct{ line, column int }

type tok struct {
	text       string
	occurrence int // 1 for the first token with this text on its line
	fn         string
	source     string
}

// tokens maps each operator token of a file to its text, its occurrence on
// its line and the trimmed line.
func tokens(path string) (map[pos]tok, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(src), "\n")
	fset := token.NewFileSet()
	syntax, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	type span struct {
		from, to int // lines
		name     string
	}
	var funcs []span
	for _, d := range syntax.Decls {
		f, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := f.Name.Name
		if f.Recv != nil && len(f.Recv.List) > 0 {
			t := f.Recv.List[0].Type
			if st, ok := t.(*ast.StarExpr); ok {
				t = st.X
			}
			if ix, ok := t.(*ast.IndexExpr); ok {
				t = ix.X
			}
			if id, ok := t.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		funcs = append(funcs, span{fset.Position(f.Pos()).Line, fset.Position(f.End()).Line, name})
	}
	enclosing := func(line int) string {
		for _, f := range funcs {
			if f.from <= line && line <= f.to {
				return f.name
			}
		}
		return "-"
	}
	file := fset.AddFile(path, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	toks := make(map[pos]tok)
	seen := make(map[pos]int) // (line, token) occurrences, keyed by line and token kind
	for {
		p, t, _ := s.Scan()
		if t == token.EOF {
			break
		}
		if !t.IsOperator() && t != token.BREAK && t != token.CONTINUE {
			continue
		}
		position := fset.Position(p)
		k := pos{position.Line, int(t)}
		seen[k]++
		toks[pos{position.Line, position.Column}] = tok{
			text:       t.String(),
			occurrence: seen[k],
			fn:         enclosing(position.Line),
			source:     sourceLine(lines, position.Line),
		}
	}
	return toks, nil
}

// sourceLine is line n (from 1) with its indentation trimmed; a line too
// short to tell apart (a bare break or continue) is given after the line
// before it, joined with " / ".
func sourceLine(lines []string, n int) string {
	line := strings.TrimSpace(lines[n-1])
	if len(line) >= 16 {
		return line
	}
	for i := n - 2; i >= 0; i-- {
		if prev := strings.TrimSpace(lines[i]); prev != "" {
			return prev + " / " + line
		}
	}
	return line
}

func save(r Result) error {
	if err := os.MkdirAll(resultsDir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(resultsDir, r.Package+".json"), append(data, '\n'), 0o644)
}

func load(pkg string) (Result, error) {
	var r Result
	data, err := os.ReadFile(filepath.Join(resultsDir, pkg+".json"))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s.json: %w", pkg, err)
	}
	return r, nil
}

// verdicts reads docs/mutation-verdicts.txt: mutant key to verdict.
func verdicts() (map[string]string, error) {
	data, err := os.ReadFile(verdictsFile)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	v := make(map[string]string)
	var mutant, line, verdict string
	n := 0
	flush := func() error {
		if mutant == "" && line == "" && verdict == "" {
			return nil
		}
		if mutant == "" || line == "" || verdict == "" {
			return fmt.Errorf("%s:%d: a stanza needs the three lines mutant, line and verdict", verdictsFile, n)
		}
		v[mutant+"\n"+line] = verdict
		mutant, line, verdict = "", "", ""
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		n++
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "#"):
		case strings.TrimSpace(text) == "":
			if err := flush(); err != nil {
				return nil, err
			}
		case strings.HasPrefix(text, "mutant: "):
			mutant = strings.Join(strings.Fields(strings.TrimPrefix(text, "mutant: ")), " ")
		case strings.HasPrefix(text, "line: "):
			line = strings.TrimSpace(strings.TrimPrefix(text, "line: "))
		case strings.HasPrefix(text, "verdict: "):
			verdict = strings.TrimSpace(strings.TrimPrefix(text, "verdict: "))
		case strings.HasPrefix(text, "  ") && verdict != "":
			verdict += " " + strings.TrimSpace(text) // a verdict continues on indented lines
		default:
			return nil, fmt.Errorf("%s:%d: unexpected line %q", verdictsFile, n, text)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return v, sc.Err()
}

// report writes docs/mutation.md from every kept result.
func report() error {
	v, err := verdicts()
	if err != nil {
		return err
	}
	var results []Result
	for _, p := range packages {
		r, err := load(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		results = append(results, r)
	}

	var b strings.Builder
	b.WriteString("# Mutation testing\n\n")
	b.WriteString("Written by `make mutation` (internal/cmd/mutation); do not edit. Each package's mutants are\n")
	fmt.Fprintf(&b, "listed by gremlins %s and tested one package at a time under `go test -short`, each switched on\n", gremlinsVersion)
	b.WriteString("in a mutant schema build of the package or applied through `go test -overlay` (its settings\n")
	b.WriteString("say which; internal/cmd/mutation/schemata.go says how); mutants that\n")
	b.WriteString("do not compile are left out. Efficacy is killed / (killed + lived). A mutant judged\n")
	b.WriteString("equivalent (no caller can observe the change) has its verdict and reason in\n")
	fmt.Fprintf(&b, "`%s`; any other mutant that lived or is not covered by a test is listed as\n", verdictsFile)
	b.WriteString("\"no test yet\" and counted in that column.\n\n")
	b.WriteString("| package | mutants | killed | lived | not covered | timed out | not viable | efficacy | no test yet | run date | run time |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	used := make(map[string]bool)
	for _, r := range results {
		open := 0
		for _, m := range r.Mutants {
			if m.Status != "TIMED OUT" && v[m.key(r.Package)] == "" {
				open++
			}
		}
		c := r.Counts
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %.1f%% | %d | %s | %s |\n",
			r.Package, c.Total, c.Killed, c.Lived, c.NotCovered, c.TimedOut, c.NotViable, c.Efficacy(), open,
			r.Date, time.Duration(r.Seconds*float64(time.Second)).Round(time.Second))
	}
	for _, r := range results {
		fmt.Fprintf(&b, "\n## %s\n\n", r.Package)
		fmt.Fprintf(&b, "Settings: %s.\n", r.Settings)
		if r.Files != "" {
			fmt.Fprintf(&b, "\nA partial run: only the files matching `%s` were mutated.\n", r.Files)
		}
		if r.Counts.RerunKilled > 0 {
			fmt.Fprintf(&b, "\ngremlins reported %d more mutants as not covered (its coverage leaves out the expressions of switch cases); run here against the tests, they failed them and are counted as killed.\n", r.Counts.RerunKilled)
		}
		if r.Retested != "" {
			fmt.Fprintf(&b, "\nThe tests ran again against the mutants that were not killed, after tests were added and without a change to the package's code: %s.\n", r.Retested)
		}
		if len(r.Mutants) == 0 {
			b.WriteString("\nEvery mutant was killed.\n")
			continue
		}
		b.WriteString("\n| where | function | operator | status | line | verdict |\n|---|---|---|---|---|---|\n")
		for _, m := range r.Mutants {
			k := m.key(r.Package)
			verdict := v[k]
			switch {
			case verdict == "" && m.Status == "TIMED OUT":
				verdict = "the tests did not end: only go test's timeout catches it"
			case verdict == "":
				verdict = "no test yet"
			default:
				used[k] = true
			}
			fmt.Fprintf(&b, "| %s:%d:%d | %s | %s `%s` | %s | `%s` | %s |\n",
				filepath.Join(r.Package, m.File), m.Line, m.Column, m.Func, m.Operator, cell(m.Token),
				strings.ToLower(m.Status), cell(m.Source), cell(verdict))
		}
	}
	if err := os.WriteFile(reportFile, []byte(b.String()), 0o644); err != nil {
		return err
	}
	ran := make(map[string]bool)
	for _, r := range results {
		ran[r.Package] = true
	}
	var stale []string
	for k := range v {
		if !used[k] && ran[strings.Fields(k)[0]] {
			stale = append(stale, strings.ReplaceAll(k, "\n", " | line: "))
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		fmt.Fprintf(os.Stderr, "mutation: no mutant of this run that was not killed matches this verdict (remove it unless the mutant is killed only in some runs, as a hang that may also end in a crash): %s\n", k)
	}
	fmt.Printf("== wrote %s\n", reportFile)
	return nil
}

// cell escapes a table cell.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// rerun picks the mutants every run applies itself: those gremlins calls not
// covered, and those that timed out, since gremlins' limit (a multiple of
// one coverage run, which compiles nothing new) is short for a mutant whose
// package and tests must compile again on a busy machine.
func rerun(m Mutant) bool { return m.Status == "NOT COVERED" || m.Status == "TIMED OUT" }

// mutated is the token each operator puts in place of each token, as
// gremlins v0.6.0 does.
var mutated = map[string]map[string]string{
	"ARITHMETIC_BASE":       {"+": "-", "*": "/", "/": "*", "%": "*", "-": "+"},
	"CONDITIONALS_BOUNDARY": {">=": ">", ">": ">=", "<=": "<", "<": "<="},
	"CONDITIONALS_NEGATION": {"==": "!=", ">=": "<", ">": "<=", "<=": ">", "<": ">=", "!=": "=="},
	"INCREMENT_DECREMENT":   {"--": "++", "++": "--"},
	"INVERT_ASSIGNMENTS":    {"+=": "-=", "*=": "/=", "/=": "*=", "-=": "+="},
	"INVERT_LOGICAL":        {"&&": "||", "||": "&&"},
	"INVERT_LOOPCTRL":       {"break": "continue", "continue": "break"},
	"INVERT_NEGATIVES":      {"-": "+"},
}

// retest runs the package's tests against each mutant of r that pick
// selects, applied through go test -overlay so the tree stays untouched, and
// moves it to its new status: a mutant that fails the tests is killed, one
// that fails to build is not viable, one that does not end in time is timed
// out, and one that passes has lived, except that one gremlins reported as
// not covered stays so.
//
// It serves two purposes. gremlins decides coverage from the coverage
// profile, whose blocks leave out the expressions of switch cases, so it
// reports a case that every test goes through as not covered: every run
// retests those. And with -survivors, after tests were added and the
// package's code was not changed, only the mutants that were not killed
// need to run again.
func retest(r *Result, pick func(Mutant) bool, workers, coefficient int) error {
	var todo []int
	for i, m := range r.Mutants {
		if pick(m) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "mutation-overlay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	overlays := make([]string, len(todo))
	for n, i := range todo {
		m := &r.Mutants[i]
		to, ok := mutated[m.Operator][m.Token]
		if !ok {
			return fmt.Errorf("%s:%d: no mutation of %q for %s", m.File, m.Line, m.Token, m.Operator)
		}
		file, err := filepath.Abs(filepath.Join(r.Package, m.File))
		if err != nil {
			return err
		}
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		off, err := offset(src, m.Line, m.Column)
		if err != nil {
			return fmt.Errorf("%s: %v", m.File, err)
		}
		lines := strings.Split(string(src), "\n")
		line := sourceLine(lines, m.Line)
		if !bytes.HasPrefix(src[off:], []byte(m.Token)) || (m.Source != line && m.Source != strings.TrimSpace(lines[m.Line-1])) {
			return fmt.Errorf("%s:%d:%d: %q is no longer there; the code changed since the run, so run gremlins again", m.File, m.Line, m.Column, m.Token)
		}
		m.Source = line
		mut := append(append(append([]byte{}, src[:off]...), to...), src[off+len(m.Token):]...)
		mutFile := filepath.Join(dir, fmt.Sprintf("%d.go", n))
		if err := os.WriteFile(mutFile, mut, 0o644); err != nil {
			return err
		}
		overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {file: mutFile}})
		overlays[n] = filepath.Join(dir, fmt.Sprintf("%d.json", n))
		if err := os.WriteFile(overlays[n], overlay, 0o644); err != nil {
			return err
		}
	}

	statuses := make([]string, len(todo))
	apart, err := schemaRun(r, todo, statuses, workers, coefficient)
	if err != nil {
		return err
	}

	// Apply the rest one at a time, workers at a time.
	extra := binaryArgs(r.Package)
	limit := minLimit
	if len(apart) > 0 {
		start := time.Now()
		if out, err := goTest(r.Package, "", extra, 30*time.Minute); err != nil {
			return fmt.Errorf("the tests fail without mutants: %v\n%s", err, out)
		}
		limit = max(time.Duration(coefficient)*time.Since(start), minLimit)
	}
	fmt.Printf("== %s: running the tests against %d mutants one at a time (limit %s each)\n", r.Package, len(apart), limit.Round(time.Second))
	runAll(r, todo, apart, statuses, workers, func(n int, m Mutant) string {
		out, err := goTest(r.Package, overlays[n], extra, limit)
		switch {
		case testFailed(out):
			return "KILLED"
		case errors.Is(err, errTimedOut):
			return "TIMED OUT"
		case err == nil && (m.Status == "TIMED OUT" || m.Status == "RUNNABLE"):
			return "LIVED" // it ends in time here, and passes
		case err == nil:
			return m.Status
		case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
			return "NOT VIABLE"
		default:
			return "KILLED"
		}
	})

	gone := make(map[int]bool)
	for n, i := range todo {
		m, status := &r.Mutants[i], statuses[n]
		if status == m.Status {
			continue
		}
		r.Counts.add(m.Status, -1)
		r.Counts.add(status, 1)
		if m.Status == "NOT COVERED" && status == "KILLED" {
			r.Counts.RerunKilled++
		}
		m.Status = status
		if status == "KILLED" || status == "NOT VIABLE" {
			gone[i] = true
		}
	}
	kept := r.Mutants[:0]
	for i, m := range r.Mutants {
		if !gone[i] {
			kept = append(kept, m)
		}
	}
	r.Mutants = kept
	return nil
}

// runAll tests the mutants r.Mutants[todo[n]] for each n of ns, workers at a
// time, writing each one's new status, as test gives it, to statuses[n].
func runAll(r *Result, todo, ns []int, statuses []string, workers int, test func(n int, m Mutant) string) {
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range next {
				m := r.Mutants[todo[n]]
				status := test(n, m)
				statuses[n] = status
				mu.Lock()
				fmt.Printf("   %s (was %s) %s at %s:%d:%d\n", status, m.Status, m.Operator, m.File, m.Line, m.Column)
				mu.Unlock()
			}
		}()
	}
	for _, n := range ns {
		next <- n
	}
	close(next)
	wg.Wait()
}

// add adds n to the count of a status.
func (c *Counts) add(status string, n int) {
	switch status {
	case "KILLED":
		c.Killed += n
	case "LIVED":
		c.Lived += n
	case "NOT COVERED":
		c.NotCovered += n
	case "TIMED OUT":
		c.TimedOut += n
	case "NOT VIABLE":
		c.NotViable += n
	}
}

var errTimedOut = errors.New("timed out")

// testFailed reports whether a run's output shows a failed test. Such a
// mutant is killed even when the run then hangs: -failfast skips the tests
// after a failure but not the examples, and a mutant that breaks a test may
// also make an example wait for ever.
func testFailed(out []byte) bool { return bytes.Contains(out, []byte("--- FAIL: ")) }

// binaryArgs are the flags to give a package's test binary on every mutant
// run (found once per package): -rapid.nofailfile when its tests use rapid, so that the properties a
// mutant breaks do not leave hundreds of failing cases in the package
// directory's testdata/rapid.
func binaryArgs(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err == nil && bytes.Contains(src, []byte(`"pgregory.net/rapid"`)) {
			return []string{"-rapid.nofailfile"}
		}
	}
	return nil
}

// minLimit is the least time a mutant's test run is given: compiling the
// package and its tests again takes 4 to 10 seconds beside another worker,
// and the slowest package's short tests 4 more.
const minLimit = time.Minute

// goTest runs the package's short tests, with an overlay if given, giving
// the test binary the flags extra.
func goTest(pkg, overlay string, extra []string, limit time.Duration) ([]byte, error) {
	dir, path, err := module(pkg)
	if err != nil {
		return nil, err
	}
	args := []string{"test", "-short", "-count=1", "-failfast", "-vet=off", "-timeout", (limit + 2*time.Second).String()}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	args = append(args, path)
	if len(extra) > 0 {
		args = append(append(args, "-args"), extra...)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		return out.Bytes(), errTimedOut
	}
}

// module returns the directory of the module that holds the package
// directory pkg, the nearest one at or above it with a go.mod (relative to
// the repository root, as pkg is), and pkg's path in the form go and gremlins
// take from there: "./events" in the root module, "." for a nested module's
// root package such as kube. Every go and gremlins command on a package runs
// in its module's directory, since the root module cannot build a package of
// a nested one.
func module(pkg string) (dir, path string, err error) {
	for dir = filepath.Clean(pkg); ; dir = filepath.Dir(dir) {
		if fi, statErr := os.Stat(filepath.Join(dir, "go.mod")); statErr == nil && !fi.IsDir() {
			break
		}
		if dir == "." || dir == filepath.Dir(dir) {
			return "", "", fmt.Errorf("no go.mod at or above %s", pkg)
		}
	}
	rel, err := filepath.Rel(dir, pkg)
	if err != nil {
		return "", "", err
	}
	if rel == "." {
		return dir, ".", nil
	}
	return dir, "./" + filepath.ToSlash(rel), nil
}

// offset is the byte offset of a 1-based line and column.
func offset(src []byte, line, column int) (int, error) {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return 0, fmt.Errorf("no line %d", line)
		}
		off += i + 1
	}
	return off + column - 1, nil
}
