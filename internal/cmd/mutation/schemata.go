package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A mutant schema compiles many mutants of a package into one test binary:
// each mutated expression or statement is written out twice, the original
// and the mutant, and an environment variable picks at run time which
// mutant, if any, is on. One build then serves every mutant, and each one
// costs a run of the test binary instead of a compile and link of the
// package and its tests.
//
// A site is an expression or a statement written out once per mutant in it
// and once as it is, an environment variable choosing the form. Comparisons
// and && / || are chosen between as expressions (a && / || chain as a
// whole, since inverting one operator regroups its neighbours as parsing the
// mutated file does); break / continue, ++ / -- and the assignment
// operators as statements; arithmetic and negation, whose result type an
// expression would need to spell, by their innermost enclosing statement in
// a block that declares nothing. A mutant's form is the site's source with
// its one token replaced, so it means what the mutated file means. What has
// no such place (a constant expression, an array length, a package-level
// initializer, a labelled branch, a break outside a loop) is applied one at
// a time instead, as is each mutant that does not compile in the schema
// (the compiler names it by position).

const (
	schemaEnv  = "NODESTATE_MUTANT"
	schemaFunc = "zzMutantOn"
	schemaFile = "zz_mutant_schema.go"
)

// site is one mutant in the schema: the source range it rewrites.
type site struct {
	alts       []alt // the mutants of this node
	file       string
	start, end int // byte offsets in the file
	kind       siteKind
}

// alt is one mutant of a site.
type alt struct {
	n        int    // index into the todo list; the mutant's number is n+1
	raw      string // the site's source with this mutant's token replaced
	outStart int    // where raw landed in the schema's file
	outEnd   int
}

type siteKind int

const (
	siteBinary siteKind = iota
	siteBranch
	siteIncDec
	siteAssign
	siteLifted // arithmetic or negation, by its enclosing statement
)

// schemaSites finds, for each mutant of todo, its place in the package's
// files. Mutants it cannot place in a schema are returned apart.
func schemaSites(r *Result, todo []int) (map[string][]*site, []int, error) {
	byFile := make(map[string][]int)
	for n, i := range todo {
		byFile[r.Mutants[i].File] = append(byFile[r.Mutants[i].File], n)
	}
	sites := make(map[string][]*site)
	var apart []int
	for file, ns := range byFile {
		path := filepath.Join(r.Package, file)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		tf := fset.File(f.Pos())
		off := func(p token.Pos) int { return tf.Offset(p) }
		idx := indexNodes(f, src, off)
		for _, n := range ns {
			m := r.Mutants[todo[n]]
			o, err := offset(src, m.Line, m.Column)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %v", m.File, err)
			}
			s := idx.place(m, o, off)
			if s == nil {
				apart = append(apart, n)
				continue
			}
			s.file = file
			s.alts[0].n = n
			// Mutants of one expression (a comparison's boundary and
			// negation, the operators of a chain) or of one statement
			// share its site.
			merged := false
			for _, t := range sites[file] {
				if t.start == s.start && t.end == s.end && (t.kind == siteBinary) == (s.kind == siteBinary) {
					t.alts = append(t.alts, s.alts[0])
					merged = true
					break
				}
			}
			if !merged {
				sites[file] = append(sites[file], s)
			}
		}
	}
	return sites, apart, nil
}

// nodeIndex holds the nodes a mutant can be placed on, by the offset of
// their operator, and the ranges where no schema may go.
type nodeIndex struct {
	binary  map[int]*ast.BinaryExpr
	branch  map[int]*ast.BranchStmt
	incdec  map[int]*ast.IncDecStmt
	assign  map[int]*ast.AssignStmt
	consts  [][2]int     // constant declarations and array lengths
	headers [][2]int     // for, if and switch header statements
	labels  [][2]int     // labelled statements
	listed  [][2]int     // statements in a block that declare nothing, innermost last among equals
	inLoop  map[int]bool // branch statements with an enclosing loop
	parent  map[*ast.BinaryExpr]*ast.BinaryExpr
	src     []byte
}

func indexNodes(f *ast.File, src []byte, off func(token.Pos) int) *nodeIndex {
	x := &nodeIndex{
		binary: make(map[int]*ast.BinaryExpr), branch: make(map[int]*ast.BranchStmt),
		incdec: make(map[int]*ast.IncDecStmt), assign: make(map[int]*ast.AssignStmt),
		inLoop: make(map[int]bool), parent: make(map[*ast.BinaryExpr]*ast.BinaryExpr), src: src,
	}
	span := func(n ast.Node) [2]int { return [2]int{off(n.Pos()), off(n.End())} }
	// loops is the stack of enclosing loops, reset inside function literals.
	var walk func(n ast.Node, loops int)
	walk = func(n ast.Node, loops int) {
		ast.Inspect(n, func(c ast.Node) bool {
			if c == nil {
				return true
			}
			switch c := c.(type) {
			case *ast.FuncLit:
				walk(c.Body, 0)
				return false
			case *ast.ForStmt:
				for _, h := range []ast.Stmt{c.Init, c.Post} {
					if h != nil {
						x.headers = append(x.headers, span(h))
					}
				}
				if c.Init != nil {
					walk(c.Init, loops)
				}
				if c.Cond != nil {
					walk(c.Cond, loops)
				}
				if c.Post != nil {
					walk(c.Post, loops)
				}
				walk(c.Body, loops+1)
				return false
			case *ast.RangeStmt:
				walk(c.X, loops)
				walk(c.Body, loops+1)
				return false
			case *ast.IfStmt:
				if c.Init != nil {
					x.headers = append(x.headers, span(c.Init))
				}
			case *ast.SwitchStmt:
				if c.Init != nil {
					x.headers = append(x.headers, span(c.Init))
				}
			case *ast.TypeSwitchStmt:
				if c.Init != nil {
					x.headers = append(x.headers, span(c.Init))
				}
			case *ast.GenDecl:
				if c.Tok == token.CONST {
					x.consts = append(x.consts, span(c))
					return false
				}
			case *ast.ArrayType:
				if c.Len != nil {
					x.consts = append(x.consts, span(c.Len))
				}
			case *ast.LabeledStmt:
				x.labels = append(x.labels, span(c))
			case *ast.BlockStmt:
				x.list(c.List, span)
			case *ast.CaseClause:
				x.list(c.Body, span)
			case *ast.CommClause:
				x.list(c.Body, span)
			case *ast.BinaryExpr:
				x.binary[off(c.OpPos)] = c
				for _, e := range []ast.Expr{c.X, c.Y} {
					if b, ok := e.(*ast.BinaryExpr); ok {
						x.parent[b] = c
					}
				}
			case *ast.BranchStmt:
				x.branch[off(c.TokPos)] = c
				x.inLoop[off(c.TokPos)] = loops > 0
			case *ast.IncDecStmt:
				x.incdec[off(c.TokPos)] = c
			case *ast.AssignStmt:
				x.assign[off(c.TokPos)] = c
			}
			return true
		})
	}
	walk(f, 0)
	return x
}

// list records the statements of a block that can be written out twice in
// it: those that declare no name the rest of the block could use.
func (x *nodeIndex) list(stmts []ast.Stmt, span func(ast.Node) [2]int) {
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.DeclStmt, *ast.LabeledStmt, *ast.EmptyStmt:
			continue
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				continue
			}
		}
		x.listed = append(x.listed, span(st))
	}
}

func overlaps(rs [][2]int, start, end int) bool {
	for _, r := range rs {
		if start < r[1] && r[0] < end {
			return true
		}
	}
	return false
}

// statementAt is the innermost listed statement around offset o with no
// label in it, or false.
func (x *nodeIndex) statementAt(o int) ([2]int, bool) {
	best, found := [2]int{}, false
	for _, r := range x.listed {
		if r[0] <= o && o < r[1] && (!found || r[1]-r[0] < best[1]-best[0]) {
			best, found = r, true
		}
	}
	if !found {
		return best, false
	}
	for _, l := range x.labels {
		if best[0] <= l[0] && l[1] <= best[1] {
			return best, false
		}
	}
	return best, true
}

// place returns the site of mutant m, whose token is at offset o, or nil if
// it has no place in a schema.
func (x *nodeIndex) place(m Mutant, o int, off func(token.Pos) int) *site {
	to, ok := mutated[m.Operator][m.Token]
	if !ok {
		return nil
	}
	var s *site
	switch m.Operator {
	case "CONDITIONALS_BOUNDARY", "CONDITIONALS_NEGATION", "INVERT_LOGICAL":
		b := x.binary[o]
		if b == nil || b.Op.String() != m.Token {
			return nil
		}
		// Turning && into || (or back) regroups the operands of the
		// whole chain of && and || the operator is in, as parsing the
		// mutated source does; the site is that chain.
		if m.Operator == "INVERT_LOGICAL" {
			for p := x.parent[b]; p != nil && (p.Op == token.LAND || p.Op == token.LOR); p = x.parent[p] {
				b = p
			}
		}
		s = &site{kind: siteBinary, start: off(b.Pos()), end: off(b.End())}
	case "INVERT_LOOPCTRL":
		b := x.branch[o]
		if b == nil || b.Tok.String() != m.Token || b.Label != nil || !x.inLoop[o] {
			return nil
		}
		s = &site{kind: siteBranch, start: off(b.Pos()), end: off(b.End())}
	case "ARITHMETIC_BASE", "INVERT_NEGATIVES":
		if overlaps(x.consts, o, o+len(m.Token)) {
			return nil
		}
		r, ok := x.statementAt(o)
		if !ok {
			return nil
		}
		s = &site{kind: siteLifted, start: r[0], end: r[1]}
	case "INCREMENT_DECREMENT":
		st := x.incdec[o]
		if st == nil || st.Tok.String() != m.Token {
			return nil
		}
		s = &site{kind: siteIncDec, start: off(st.Pos()), end: off(st.End())}
	case "INVERT_ASSIGNMENTS":
		st := x.assign[o]
		if st == nil || st.Tok.String() != m.Token || len(st.Lhs) != 1 || len(st.Rhs) != 1 {
			return nil
		}
		s = &site{kind: siteAssign, start: off(st.Pos()), end: off(st.End())}
	default:
		return nil
	}
	if overlaps(x.consts, s.start, s.end) || (s.kind != siteBinary && s.kind != siteLifted && overlaps(x.headers, s.start, s.end)) {
		return nil
	}
	s.alts = []alt{{raw: string(x.src[s.start:o]) + to + string(x.src[o+len(m.Token):s.end])}}
	return s
}

// writeSchema renders a file with its sites written out once for each of
// their mutants and once as they are, and records where each mutant's form
// landed in the output. A mutant's form is the site's source with the one
// token replaced (no other mutant is on while it is), so it parses as the
// mutated file would; the original form has the sites inside it rendered in
// turn.
func writeSchema(src []byte, sites []*site) []byte {
	sort.Slice(sites, func(i, j int) bool {
		if sites[i].start != sites[j].start {
			return sites[i].start < sites[j].start
		}
		return sites[i].end > sites[j].end
	})
	on := func(a *alt) string { return fmt.Sprintf("%s(%d)", schemaFunc, a.n+1) }
	var render func(w *bytes.Buffer, lo, hi int, self *site)
	render = func(w *bytes.Buffer, lo, hi int, self *site) {
		pos := lo
		for _, s := range sites {
			if s == self || s.start < pos || s.end > hi {
				continue
			}
			w.Write(src[pos:s.start])
			// An expression becomes (on(a) && (A)) || ... || (!on(a) && ... && (O)),
			// so its operands are evaluated once, in the form that is on; a
			// statement becomes if on(a) { A } else if ... { ... } else { O }.
			open, next, last, end := "if %s { ", " } else ", "{ ", " }"
			if s.kind == siteBinary {
				open, next, end = "(%s && (", ")) || ", ")))"
				w.WriteString("(")
			}
			var none []string
			for i := range s.alts {
				a := &s.alts[i]
				fmt.Fprintf(w, open, on(a))
				a.outStart = w.Len()
				w.WriteString(a.raw)
				a.outEnd = w.Len()
				w.WriteString(next)
				none = append(none, "!"+on(a))
			}
			if s.kind == siteBinary {
				last = "(" + strings.Join(none, " && ") + " && ("
			}
			w.WriteString(last)
			render(w, s.start, s.end, s)
			w.WriteString(end)
			pos = s.end
		}
		w.Write(src[pos:hi])
	}
	var out bytes.Buffer
	render(&out, 0, len(src), nil)
	return out.Bytes()
}

// schemaRun tests the mutants todo[n] for n in ns through one schema build,
// writing each one's status into statuses[n]. It returns the ns it could
// not test that way, for retest to apply one at a time.
func schemaRun(r *Result, todo []int, statuses []string, workers, coefficient int) ([]int, error) {
	sites, apart, err := schemaSites(r, todo)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mutation-schema-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	pkgDir, err := filepath.Abs(r.Package)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "pkg.test")
	for attempt := 0; ; attempt++ {
		if len(sites) == 0 {
			return apart, nil
		}
		replace := make(map[string]string)
		outputs := make(map[string][]byte)
		pkgName := ""
		for file, ss := range sites {
			src, err := os.ReadFile(filepath.Join(pkgDir, file))
			if err != nil {
				return nil, err
			}
			if pkgName == "" {
				f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.PackageClauseOnly)
				if err != nil {
					return nil, err
				}
				pkgName = f.Name.Name
			}
			outputs[file] = writeSchema(src, ss)
			tmp := filepath.Join(dir, file)
			if err := os.WriteFile(tmp, outputs[file], 0o644); err != nil {
				return nil, err
			}
			replace[filepath.Join(pkgDir, file)] = tmp
		}
		gen := filepath.Join(dir, schemaFile)
		genSrc := fmt.Sprintf("package %s\n\nimport (\n\t\"os\"\n\t\"strconv\"\n)\n\n"+
			"var zzMutantActive, _ = strconv.Atoi(os.Getenv(%q))\n\n"+
			"func %s(id int) bool { return zzMutantActive == id }\n", pkgName, schemaEnv, schemaFunc)
		if err := os.WriteFile(gen, []byte(genSrc), 0o644); err != nil {
			return nil, err
		}
		replace[filepath.Join(pkgDir, schemaFile)] = gen
		overlay := filepath.Join(dir, "overlay.json")
		if err := writeOverlay(overlay, replace); err != nil {
			return nil, err
		}
		modDir, path, err := module(r.Package)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command("go", "test", "-c", "-vet=off", "-gcflags=-e", "-overlay", overlay, "-o", bin, path)
		cmd.Dir = modDir
		out, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		// Take the mutants the compiler names out of the schema, and build
		// again.
		inForm, bad := badSites(out, outputs, sites, pkgDir)
		if len(inForm)+len(bad) == 0 || attempt > 20 {
			return nil, fmt.Errorf("building the mutant schema: %v\n%s", err, out)
		}
		for file, ss := range sites {
			kept := ss[:0]
			for _, s := range ss {
				alts := s.alts[:0]
				for _, a := range s.alts {
					switch {
					case inForm[a.n]:
						statuses[a.n] = "NOT VIABLE"
						m := r.Mutants[todo[a.n]]
						fmt.Printf("   NOT VIABLE (was %s) %s at %s:%d:%d\n", m.Status, m.Operator, m.File, m.Line, m.Column)
					case bad[a.n]:
						apart = append(apart, a.n)
					default:
						alts = append(alts, a)
					}
				}
				s.alts = alts
				if len(alts) > 0 {
					kept = append(kept, s)
				}
			}
			sites[file] = kept
		}
	}

	var all []int
	for _, ss := range sites {
		for _, s := range ss {
			for _, a := range s.alts {
				all = append(all, a.n)
			}
		}
	}
	sort.Ints(all)

	extra := binaryArgs(pkgDir)
	start := time.Now()
	if out, err := runSchema(bin, pkgDir, extra, 0, 10*time.Minute); err != nil {
		return nil, fmt.Errorf("the tests fail in the schema without a mutant on: %v\n%s", err, out)
	}
	limit := min(max(time.Duration(coefficient)*time.Since(start), minSchemaLimit), maxSchemaLimit)
	fmt.Printf("== %s: %d mutants in one schema build (limit %s each), %d apart\n", r.Package, len(all), limit.Round(time.Second), len(apart))

	runAll(r, todo, all, statuses, workers, func(n int, m Mutant) string {
		out, err := runSchema(bin, pkgDir, extra, n+1, limit)
		switch {
		case testFailed(out):
			return "KILLED"
		case errors.Is(err, errTimedOut):
			return "TIMED OUT"
		case err != nil:
			return "KILLED"
		}
		return passStatus(m)
	})
	return apart, nil
}

// minSchemaLimit is the least time a mutant's run of the schema's test
// binary is given; it compiles nothing, but a test that bounds a hang fails
// only after its own limit (10 s in events and nodecondition) and the tests
// before it ran, with a goroutine still spinning beside them, so less than a
// minute let such a mutant time out on a busy machine where it fails on a
// calm one. maxSchemaLimit is the most: an
// unmutated run measured on a loaded machine can take ten times its usual
// few seconds, and a mutant that hangs would then hold a worker for many
// minutes.
const (
	minSchemaLimit = time.Minute
	maxSchemaLimit = 2 * time.Minute
)

// passStatus is the status of a mutant whose tests pass: it lived, or stays
// not covered.
func passStatus(m Mutant) string {
	if m.Status == "NOT COVERED" {
		return "NOT COVERED"
	}
	return "LIVED"
}

// runSchema runs the schema's test binary with mutant id on (0: none) and
// the flags extra.
func runSchema(bin, dir string, extra []string, id int, limit time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append([]string{"-test.short", "-test.count=1", "-test.failfast",
		"-test.timeout", (limit + 2*time.Second).String()}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), schemaEnv+"="+strconv.Itoa(id))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.Bytes(), errTimedOut
	}
	return out.Bytes(), err
}

var compileError = regexp.MustCompile(`(?m)^(?:\./)?([^\s:]+\.go):(\d+):(?:(\d+):)? `)

// badSites maps the compiler's errors in the schema's files to mutants. An
// error inside a mutant's form is one the mutated file has too (the form
// sits in the same scope there), so the mutant is not viable (inForm); any
// other error takes every mutant of the top-level declaration it is in out
// of the schema (bad; the schema's file has the same declarations as the
// original, in the same order).
func badSites(out []byte, outputs map[string][]byte, sites map[string][]*site, pkgDir string) (inForm, bad map[int]bool) {
	inForm, bad = make(map[int]bool), make(map[int]bool)
	decls := func(path string, src []byte) [][2]int {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return nil
		}
		var ds [][2]int
		for _, d := range f.Decls {
			ds = append(ds, [2]int{fset.Position(d.Pos()).Offset, fset.Position(d.End()).Offset})
		}
		return ds
	}
	for _, m := range compileError.FindAllSubmatch(out, -1) {
		file := filepath.Base(string(m[1]))
		src, ok := outputs[file]
		if !ok {
			continue
		}
		line, _ := strconv.Atoi(string(m[2]))
		if len(m[3]) == 0 {
			// No column: every mutant whose form is on that line goes
			// apart, to be built on its own.
			from, err := offset(src, line, 1)
			if err != nil {
				continue
			}
			to := from + bytes.IndexByte(append(src[from:], '\n'), '\n')
			for _, s := range sites[file] {
				for _, a := range s.alts {
					if a.outStart <= to && from < a.outEnd {
						bad[a.n] = true
					}
				}
			}
			continue
		}
		col, _ := strconv.Atoi(string(m[3]))
		o, err := offset(src, line, col)
		if err != nil {
			continue
		}
		named := false
		for _, s := range sites[file] {
			for _, a := range s.alts {
				if a.outStart <= o && o < a.outEnd {
					inForm[a.n], named = true, true
				}
			}
		}
		if named {
			continue
		}
		orig, err := os.ReadFile(filepath.Join(pkgDir, file))
		if err != nil {
			continue
		}
		now, was := decls(file, src), decls(file, orig)
		if len(now) != len(was) {
			continue
		}
		for i, d := range now {
			if d[0] <= o && o <= d[1] {
				for _, s := range sites[file] {
					if was[i][0] <= s.start && s.end <= was[i][1] {
						for _, a := range s.alts {
							bad[a.n] = true
						}
					}
				}
			}
		}
	}
	return inForm, bad
}

func writeOverlay(path string, replace map[string]string) error {
	var b strings.Builder
	b.WriteString(`{"Replace":{`)
	first := true
	for k, v := range replace {
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:%q", k, v)
	}
	b.WriteString("}}")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
