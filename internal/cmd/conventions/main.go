// Command conventions checks the library's packages against the rules of
// docs/conventions.md that a program can check, and fails (exit 1) naming
// each place that breaks one:
//
//   - constructors: an exported func NewX whose parameters include an
//     options value (a type named Options or ending in Options) takes it
//     first: NewX(opts XOptions, deps...) (section 1);
//   - options: every exported XOptions type (and Options) has a
//     DefaultXOptions (DefaultOptions) function returning it, no exported
//     type is named *Config (section 1), and an options field named Clock
//     has the type clock.Clock (section 4);
//   - errors: every exported OptionError has the one shape, the fields
//     Field string, Value any, Reason string and Err error in that order,
//     and the methods Error and Unwrap; every exported error type
//     (a type named *Error) has an Unwrap method, so that errors.Is finds
//     its package's sentinel (section 3); nothing exported is Deprecated;
//   - size: no file of a package, tests included, over 600 lines, and no
//     function of its non-test code over 100 lines (section 9).
//
// It reads the sources (no build), one directory tree per argument, and
// skips tests, commands (package main), internal/, testdata/,
// generated code and nested modules not named as roots.
//
//	go run ./internal/cmd/conventions . ./kube ./vk
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	roots := os.Args[1:]
	if len(roots) == 0 {
		roots = []string{"."}
	}
	var problems []string
	for _, root := range roots {
		ps, err := checkTree(root)
		if err != nil {
			fmt.Fprintln(os.Stderr, "conventions:", err)
			os.Exit(2)
		}
		problems = append(problems, ps...)
	}
	sort.Strings(problems)
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "conventions: %d place(s) break docs/conventions.md\n", len(problems))
		os.Exit(1)
	}
}

// skipDir reports whether a directory holds no library package to check.
func skipDir(root, path string, d fs.DirEntry) bool {
	name := d.Name()
	if path == root {
		return false
	}
	if strings.HasPrefix(name, ".") || name == "testdata" || name == "internal" || name == "cmd" || name == "hack" {
		return true
	}
	// A nested module is checked only when named as a root of its own.
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return true
	}
	return false
}

// checkTree checks every package below root.
func checkTree(root string) ([]string, error) {
	var problems []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if skipDir(root, path, d) {
			return filepath.SkipDir
		}
		ps, err := checkDir(path)
		problems = append(problems, ps...)
		return err
	})
	return problems, err
}

// pkgInfo is what the checks read of one package.
type pkgInfo struct {
	fset  *token.FileSet
	types map[string]*ast.TypeSpec
	funcs map[string]*ast.FuncDecl // top-level functions by name
	meths map[string]map[string]bool
	decls []ast.Decl
}

func checkDir(dir string) ([]string, error) {
	fset := token.NewFileSet()
	pkgs, err := parsePackages(fset, dir)
	if err != nil {
		return nil, err
	}
	var problems []string
	for name, pkg := range pkgs {
		if name == "main" {
			continue
		}
		ps, err := checkFileSizes(dir)
		if err != nil {
			return nil, err
		}
		problems = append(problems, ps...)
		p := &pkgInfo{fset: fset, types: map[string]*ast.TypeSpec{}, funcs: map[string]*ast.FuncDecl{}, meths: map[string]map[string]bool{}}
		for _, f := range pkg.Files {
			if ast.IsGenerated(f) {
				continue
			}
			problems = append(problems, p.checkFuncSizes(f)...)
			for _, d := range f.Decls {
				p.decls = append(p.decls, d)
				switch d := d.(type) {
				case *ast.GenDecl:
					for _, s := range d.Specs {
						if ts, ok := s.(*ast.TypeSpec); ok {
							p.types[ts.Name.Name] = ts
						}
					}
				case *ast.FuncDecl:
					if d.Recv == nil {
						p.funcs[d.Name.Name] = d
						continue
					}
					recv := typeName(d.Recv.List[0].Type)
					if p.meths[recv] == nil {
						p.meths[recv] = map[string]bool{}
					}
					p.meths[recv][d.Name.Name] = true
				}
			}
		}
		problems = append(problems, p.check()...)
	}
	return problems, nil
}

// Size limits (docs/conventions.md section 6).
const (
	maxFileLines = 600
	maxFuncLines = 100
)

// checkFileSizes names every hand-written .go file of dir, tests included,
// longer than maxFileLines.
func checkFileSizes(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasPrefix(n, "zz_generated") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(token.NewFileSet(), n, b, parser.ParseComments|parser.PackageClauseOnly)
		if err == nil && ast.IsGenerated(f) {
			continue
		}
		if lines := bytes.Count(b, []byte("\n")); lines > maxFileLines {
			out = append(out, fmt.Sprintf("%s: %d lines: a file has at most %d (split it along its concerns)",
				filepath.ToSlash(filepath.Join(dir, n)), lines, maxFileLines))
		}
	}
	return out, nil
}

// checkFuncSizes names every function of f longer than maxFuncLines.
func (p *pkgInfo) checkFuncSizes(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		lines := p.fset.Position(fd.End()).Line - p.fset.Position(fd.Pos()).Line + 1
		if lines > maxFuncLines {
			out = append(out, fmt.Sprintf("%s: func %s is %d lines: a function has at most %d (docs/conventions.md section 9)", p.at(fd), fd.Name.Name, lines, maxFuncLines))
		}
	}
	return out
}

// typeName is the name of a (pointer to a, generic instance of a) named
// type expression, "" for anything else.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	case *ast.SelectorExpr:
		return typeName(e.X) + "." + e.Sel.Name
	}
	return ""
}

func isOptions(name string) bool {
	base := name
	if i := strings.LastIndex(name, "."); i >= 0 {
		base = name[i+1:]
	}
	return base == "Options" || strings.HasSuffix(base, "Options")
}

func (p *pkgInfo) at(n ast.Node) string {
	pos := p.fset.Position(n.Pos())
	return fmt.Sprintf("%s:%d", filepath.ToSlash(pos.Filename), pos.Line)
}

func (p *pkgInfo) check() []string {
	var out []string
	add := func(n ast.Node, format string, args ...any) {
		out = append(out, p.at(n)+": "+fmt.Sprintf(format, args...))
	}
	// Constructors take their options first.
	for name, f := range p.funcs {
		if !strings.HasPrefix(name, "New") || !ast.IsExported(name) {
			continue
		}
		var params []string
		for _, fld := range f.Type.Params.List {
			n := max(len(fld.Names), 1)
			for range n {
				params = append(params, typeName(fld.Type))
			}
		}
		for i, t := range params {
			if isOptions(t) && i > 0 {
				add(f, "%s takes its options (%s) as parameter %d: constructors are NewX(opts XOptions, deps...)", name, t, i+1)
			}
		}
	}
	for name, ts := range p.types {
		if !ast.IsExported(name) {
			continue
		}
		if strings.HasSuffix(name, "Config") {
			add(ts, "type %s: options are called Options, not Config", name)
		}
		if isOptions(name) && ts.Assign == 0 {
			def := "Default" + name
			if f, ok := p.funcs[def]; !ok || f.Type.Results == nil || len(f.Type.Results.List) != 1 || typeName(f.Type.Results.List[0].Type) != name {
				add(ts, "type %s has no %s() %s", name, def, name)
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, fld := range st.Fields.List {
					for _, fn := range fld.Names {
						if fn.Name == "Clock" && typeName(fld.Type) != "clock.Clock" {
							add(fld, "%s.Clock has type %s: runners take k8s.io/utils/clock.Clock", name, typeName(fld.Type))
						}
					}
				}
			}
		}
		if strings.HasSuffix(name, "Error") && ts.Assign == 0 && p.meths[name]["Error"] {
			if !p.meths[name]["Unwrap"] {
				add(ts, "error type %s has no Unwrap: every typed error unwraps to its package's sentinel", name)
			}
		}
		if name == "OptionError" {
			out = append(out, p.checkOptionError(ts)...)
		}
	}
	// A package with options for some type has its main type's Options.
	if _, ok := p.types["Options"]; !ok {
		for name, ts := range p.types {
			if ast.IsExported(name) && isOptions(name) && ts.Assign == 0 {
				add(ts, "package has %s but no Options (with DefaultOptions) for its main type", name)
				break
			}
		}
	}
	// Nothing exported is deprecated.
	for _, d := range p.decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range gd.Specs {
			var names []*ast.Ident
			var doc *ast.CommentGroup
			switch s := s.(type) {
			case *ast.ValueSpec:
				names, doc = s.Names, s.Doc
			case *ast.TypeSpec:
				names, doc = []*ast.Ident{s.Name}, s.Doc
			}
			if doc == nil {
				doc = gd.Doc
			}
			for _, n := range names {
				if ast.IsExported(n.Name) && doc != nil && strings.Contains(doc.Text(), "Deprecated:") {
					add(n, "%s is deprecated: remove it (docs/conventions.md: one way to do each thing)", n.Name)
				}
			}
		}
	}
	return out
}

// optionErrorShape is the one shape of every package's OptionError.
var optionErrorShape = []struct{ name, typ string }{{"Field", "string"}, {"Value", "any"}, {"Reason", "string"}, {"Err", "error"}}

func (p *pkgInfo) checkOptionError(ts *ast.TypeSpec) []string {
	if ts.Assign != 0 {
		return nil // an alias of the shared shape
	}
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return []string{p.at(ts) + ": OptionError is not a struct"}
	}
	var got []string
	for _, fld := range st.Fields.List {
		t := typeName(fld.Type)
		if t == "interface{}" {
			t = "any"
		}
		if _, ok := fld.Type.(*ast.InterfaceType); ok {
			t = "any"
		}
		for _, n := range fld.Names {
			got = append(got, n.Name+" "+t)
		}
	}
	var want []string
	for _, f := range optionErrorShape {
		want = append(want, f.name+" "+f.typ)
	}
	var out []string
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		out = append(out, fmt.Sprintf("%s: OptionError has the fields {%s}, want {%s}", p.at(ts), strings.Join(got, ", "), strings.Join(want, ", ")))
	}
	if !p.meths["OptionError"]["Error"] || !p.meths["OptionError"]["Unwrap"] {
		out = append(out, p.at(ts)+": OptionError lacks Error or Unwrap")
	}
	return out
}

// parsedPackage is one package's non-test files, by file name.
type parsedPackage struct{ Files map[string]*ast.File }

// parsePackages parses dir's Go files but tests and generated ones, by
// package name.
func parsePackages(fset *token.FileSet, dir string) (map[string]*parsedPackage, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	pkgs := map[string]*parsedPackage{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		p := pkgs[f.Name.Name]
		if p == nil {
			p = &parsedPackage{Files: map[string]*ast.File{}}
			pkgs[f.Name.Name] = p
		}
		p.Files[filepath.Join(dir, n)] = f
	}
	return pkgs, nil
}
