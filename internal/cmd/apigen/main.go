// Command apigen writes internal/apitest/zz_generated_test.go: a test that
// calls every exported function and method of the root module's packages with
// zero values and nils and fails on any panic.
//
// It finds the packages with go list (every package of the module except
// internal/..., examples/... and commands), reads their exported API from the
// compiler's export data with go/types, and writes for each
//
//   - exported function: one call with a zero value or nil for every
//     argument;
//   - exported method of an exported type, promoted ones included: a call on
//     the zero value (var r T, so a pointer method gets &r, as from new(T);
//     never a nil *T, see docs/conventions.md section 2), and on each constructed
//     receiver: a value returned by a function of the module whose first
//     result is T or *T (NewX, DefaultXOptions; the only other result may be
//     an error), its arguments built the same way where the module has
//     a function returning their type (options from their Default function,
//     dependencies from their constructors, an interface of the module from a
//     type implementing it), zero values otherwise. A receiver whose
//     construction returns an error is skipped with that error.
//
// A context.Context argument is a context already cancelled; channels and
// funcs are nil; a variadic argument is empty. A *testing.T or testing.TB
// argument is the subtest's t, and a *rapid.T one comes from rapid.Check; those
// calls run on the test's goroutine. Every other call runs on its own
// goroutine, bounded by a timeout that fails the test naming the call.
//
// knownPanics lists the calls that panic today; the generated test skips them
// (go test -apitest.known runs them and reports the entries that no longer
// panic). Run it through go generate ./internal/apitest; make lint fails when
// the checked-in file differs from a fresh run.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// knownPanics are the calls that panic today, by the name of their subtest.
// The generated test skips them; remove an entry when its fix lands (go test
// ./internal/apitest -apitest.known lists the entries that no longer panic).
//
// Each entry is the call's subtest name, the panic value seen, and why.
// Subtest names: pkg.F for a function; pkg.T.M or pkg.(*T).M for a method
// with /zero (var r T) or /NewX (the receiver NewX builds)
// after it.
var knownPanics = map[string]string{}

// versionRE matches an import path element that is a version, imported with
// an explicit name.
var versionRE = regexp.MustCompile(`^v[0-9]+`)

func main() {
	out := flag.String("o", "zz_generated_test.go", "the file to write")
	flag.Parse()
	src, err := generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
}

// goList runs go list in the module root and returns its output.
func goList(root string, args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not in a module")
	}
	return filepath.Dir(gomod), nil
}

// load returns the module path and the type-checked packages under test, in
// import path order.
func load() (string, []*types.Package, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", nil, err
	}
	mod, err := goList(root, "-m", "-f", "{{.Path}}")
	if err != nil {
		return "", nil, err
	}
	mod = strings.TrimSpace(mod)
	list, err := goList(root, "-f", "{{.ImportPath}} {{.Name}}", "./...")
	if err != nil {
		return "", nil, err
	}
	var paths []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		path, name, _ := strings.Cut(line, " ")
		rel := strings.TrimPrefix(strings.TrimPrefix(path, mod), "/")
		if name == "main" || rel == "" && path != mod ||
			rel == "internal" || strings.HasPrefix(rel, "internal/") ||
			rel == "examples" || strings.HasPrefix(rel, "examples/") {
			continue
		}
		paths = append(paths, path)
	}
	sort.Strings(paths)
	exports, err := goList(root, append([]string{"-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, paths...)...)
	if err != nil {
		return "", nil, err
	}
	files := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(exports), "\n") {
		path, file, _ := strings.Cut(line, "\t")
		files[path] = file
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file := files[path]
		if file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	var pkgs []*types.Package
	for _, path := range paths {
		pkg, err := imp.Import(path)
		if err != nil {
			return "", nil, err
		}
		pkgs = append(pkgs, pkg)
	}
	return mod, pkgs, nil
}

func generate() ([]byte, error) {
	mod, pkgs, err := load()
	if err != nil {
		return nil, err
	}
	g := newGen(mod, pkgs)
	g.collect()
	names := map[string]bool{}
	for _, c := range g.calls {
		names[c.name] = true
	}
	var stale []string
	for k := range knownPanics {
		if !names[k] {
			stale = append(stale, k)
		}
	}
	if len(stale) > 0 {
		sort.Strings(stale)
		return nil, fmt.Errorf("knownPanics names calls that do not exist: %s", strings.Join(stale, ", "))
	}
	return g.write()
}

// gen holds what the generated file needs.
type gen struct {
	mod   string
	pkgs  []*types.Package
	ours  map[*types.Package]bool
	names map[string]string // import path -> local name
	used  map[string]bool   // local names taken

	calls   []call
	skipped []string // "what: why", for the header
	ctors   []*ctor  // constructed receivers, in order of first use
	ctorFor map[types.Type][]*ctor
	stats   struct{ funcs, methods, types int }
}

// call is one subtest.
type call struct {
	name   string // subtest name, the key of knownPanics
	setup  string // statements before the call (may set skip)
	expr   string // the call
	onTest bool   // runs on the test goroutine (it takes a t)
	rapid  bool   // runs inside rapid.Check (it takes a *rapid.T)
}

// ctor is a function that builds a value of a type of the module.
type ctor struct {
	fn     *types.Func
	result types.Type // its first result
	err    bool       // it returns an error as its last result
	helper string     // name of the generated helper building it, once used
	args   []string   // argument expressions, set when the helper is written
	setup  []string   // statements building the arguments
	state  int        // 0 new, 1 in progress, 2 done
	ok     bool       // its arguments could be built
}

func newGen(mod string, pkgs []*types.Package) *gen {
	g := &gen{mod: mod, pkgs: pkgs, ours: map[*types.Package]bool{}, names: map[string]string{}, used: map[string]bool{}, ctorFor: map[types.Type][]*ctor{}}
	for _, p := range pkgs {
		g.ours[p] = true
	}
	// The names the generated code declares or imports itself.
	for _, n := range []string{"context", "fmt", "testing", "rapid", "t", "rt", "ctx", "cancel", "r", "err", "guard", "guardOnTest", "knownPanics"} {
		g.used[n] = true
	}
	g.names["context"], g.names["fmt"], g.names["testing"] = "context", "fmt", "testing"
	return g
}

// rel is a package's path in the module, the prefix of its calls' names.
func (g *gen) rel(p *types.Package) string {
	if r := strings.TrimPrefix(p.Path(), g.mod+"/"); r != p.Path() {
		return r
	}
	return p.Path()
}

// qual names a package in the generated file, importing it.
func (g *gen) qual(p *types.Package) string {
	if n, ok := g.names[p.Path()]; ok {
		return n
	}
	n := p.Name()
	for i := 2; g.used[n]; i++ {
		n = fmt.Sprintf("%s%d", p.Name(), i)
	}
	g.used[n] = true
	g.names[p.Path()] = n
	return n
}

// spell writes t as Go source, or "" when it names an unexported type of
// another package.
func (g *gen) spell(t types.Type) string {
	ok := true
	var walk func(t types.Type, seen map[types.Type]bool)
	walk = func(t types.Type, seen map[types.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Named:
			if o := t.Obj(); o.Pkg() != nil && !o.Exported() {
				ok = false
			}
			if ta := t.TypeArgs(); ta != nil {
				for i := 0; i < ta.Len(); i++ {
					walk(ta.At(i), seen)
				}
			}
		case *types.Alias:
			walk(types.Unalias(t), seen)
		case *types.Pointer:
			walk(t.Elem(), seen)
		case *types.Slice:
			walk(t.Elem(), seen)
		case *types.Array:
			walk(t.Elem(), seen)
		case *types.Map:
			walk(t.Key(), seen)
			walk(t.Elem(), seen)
		case *types.Chan:
			walk(t.Elem(), seen)
		case *types.Signature:
			for i := 0; i < t.Params().Len(); i++ {
				walk(t.Params().At(i).Type(), seen)
			}
			for i := 0; i < t.Results().Len(); i++ {
				walk(t.Results().At(i).Type(), seen)
			}
		case *types.Struct:
			for i := 0; i < t.NumFields(); i++ {
				walk(t.Field(i).Type(), seen)
			}
		case *types.TypeParam:
			ok = false
		}
	}
	walk(t, map[types.Type]bool{})
	if !ok {
		return ""
	}
	return types.TypeString(t, g.qual)
}

func isNamed(t types.Type, pkg, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == pkg && n.Obj().Name() == name
}

func isPtrTo(t types.Type, pkg, name string) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	return ok && isNamed(p.Elem(), pkg, name)
}

// testArg is the argument for a t parameter, if t is one.
func testArg(t types.Type) (string, bool) {
	switch {
	case isPtrTo(t, "testing", "T"), isNamed(t, "testing", "TB"):
		return "t", true
	case isPtrTo(t, "pgregory.net/rapid", "T"):
		return "rt", true
	}
	return "", false
}

// zero is the zero value of t as an argument, or "" when it cannot be
// written.
func (g *gen) zero(t types.Type) string {
	if isNamed(t, "context", "Context") {
		return "ctx"
	}
	if a, ok := testArg(t); ok {
		return a
	}
	switch u := t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Interface:
		return "nil"
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return "false"
		case u.Info()&types.IsString != 0:
			return `""`
		case u.Kind() == types.UnsafePointer:
			return "nil"
		default:
			return "0"
		}
	case *types.Struct, *types.Array:
		if s := g.spell(t); s != "" {
			return s + "{}"
		}
	}
	return ""
}

// takesT reports whether a signature takes a t, so that its call runs on the
// test goroutine, and whether that t is a *rapid.T.
func takesT(sig *types.Signature) (takes, rapid bool) {
	for i := 0; i < sig.Params().Len(); i++ {
		if a, ok := testArg(sig.Params().At(i).Type()); ok {
			takes = true
			rapid = rapid || a == "rt"
		}
	}
	return takes, rapid
}

// args are the zero arguments of sig, or an error saying which cannot be
// written.
func (g *gen) args(sig *types.Signature) (string, error) {
	var out []string
	n := sig.Params().Len()
	if sig.Variadic() {
		n-- // an empty list
	}
	for i := 0; i < n; i++ {
		p := sig.Params().At(i)
		z := g.zero(p.Type())
		if z == "" {
			return "", fmt.Errorf("no zero value can be written for parameter %d (%s)", i, p.Type())
		}
		out = append(out, z)
	}
	return strings.Join(out, ", "), nil
}

// discard assigns the results of a call with sig to blank identifiers, so
// that vet accepts calls such as String whose result must be used.
func discard(sig *types.Signature, expr string) string {
	n := sig.Results().Len()
	if n == 0 {
		return expr
	}
	return strings.Repeat("_, ", n-1) + "_ = " + expr
}

func errorType(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// collect finds the calls.
func (g *gen) collect() {
	// Constructors by the type they return.
	for _, p := range g.pkgs {
		for _, name := range p.Scope().Names() {
			f, ok := p.Scope().Lookup(name).(*types.Func)
			if !ok || !f.Exported() {
				continue
			}
			sig := f.Type().(*types.Signature)
			if sig.TypeParams() != nil || sig.Results().Len() == 0 || sig.Results().Len() > 2 {
				continue
			}
			res := sig.Results()
			if res.Len() == 2 && !errorType(res.At(1).Type()) {
				continue
			}
			c := &ctor{fn: f, result: res.At(0).Type(), err: res.Len() == 2}
			key := c.result
			if ptr, ok := key.(*types.Pointer); ok {
				key = ptr.Elem()
			}
			if n, ok := key.(*types.Named); ok && g.ours[n.Obj().Pkg()] {
				g.ctorFor[n] = append(g.ctorFor[n], c)
			}
		}
	}
	for _, p := range g.pkgs {
		for _, name := range p.Scope().Names() {
			switch o := p.Scope().Lookup(name).(type) {
			case *types.Func:
				if o.Exported() {
					g.function(o)
				}
			case *types.TypeName:
				if o.Exported() {
					g.typ(o)
				}
			}
		}
	}
}

func (g *gen) function(f *types.Func) {
	name := g.rel(f.Pkg()) + "." + f.Name()
	sig := f.Type().(*types.Signature)
	if sig.TypeParams() != nil {
		g.skipped = append(g.skipped, name+": generic; no type arguments to choose")
		return
	}
	g.stats.funcs++
	args, err := g.args(sig)
	if err != nil {
		g.skipped = append(g.skipped, name+": "+err.Error())
		return
	}
	onT, rt := takesT(sig)
	g.calls = append(g.calls, call{name: name, expr: discard(sig, fmt.Sprintf("%s.%s(%s)", g.qual(f.Pkg()), f.Name(), args)), onTest: onT, rapid: rt})
}

func (g *gen) typ(tn *types.TypeName) {
	if tn.IsAlias() {
		return // its methods are those of the type it names
	}
	named, ok := tn.Type().(*types.Named)
	if !ok {
		return
	}
	prefix := g.rel(tn.Pkg()) + "."
	if types.IsInterface(named) {
		return // a method of an interface has no receiver to call it on
	}
	if named.TypeParams() != nil {
		if len(exportedMethods(types.NewPointer(named))) > 0 {
			g.skipped = append(g.skipped, prefix+tn.Name()+": generic type; no type arguments to choose")
		}
		return
	}
	ms := exportedMethods(types.NewPointer(named))
	if len(ms) == 0 {
		return
	}
	g.stats.types++
	T := g.spell(named)
	for _, sel := range ms {
		m := sel.Obj().(*types.Func)
		sig := m.Type().(*types.Signature)
		_, ptrRecv := sig.Recv().Type().(*types.Pointer)
		g.stats.methods++
		args, err := g.args(sig)
		if err != nil {
			g.skipped = append(g.skipped, prefix+tn.Name()+"."+m.Name()+": "+err.Error())
			continue
		}
		onT, rt := takesT(sig)
		mname := prefix + tn.Name() + "." + m.Name()
		if ptrRecv {
			mname = prefix + "(*" + tn.Name() + ")." + m.Name()
		}
		// A nil *T is not a zero value here (docs/conventions.md section 2):
		// a method called on a nil pointer is a programmer's error, as in
		// the standard library, and may panic.
		g.calls = append(g.calls, call{name: mname + "/zero", setup: "var r " + T, expr: discard(sig, fmt.Sprintf("r.%s(%s)", m.Name(), args)), onTest: onT, rapid: rt})
		for _, c := range g.ctorFor[named] {
			if !g.build(c) {
				continue
			}
			g.calls = append(g.calls, call{
				name:   mname + "/" + c.fn.Name(),
				setup:  fmt.Sprintf("r, err := %s(ctx)\nif err != nil {\nreturn fmt.Sprintf(\"%s: %%v\", err)\n}", c.helper, c.fn.Name()),
				expr:   discard(sig, fmt.Sprintf("r.%s(%s)", m.Name(), args)),
				onTest: onT,
				rapid:  rt,
			})
		}
	}
	if cs := g.ctorFor[named]; len(cs) > 0 {
		for _, c := range cs {
			if !c.ok {
				g.skipped = append(g.skipped, prefix+tn.Name()+" from "+c.fn.Name()+": its arguments cannot be built")
			}
		}
	}
}

// exportedMethods is the method set of t, exported methods only, by name.
func exportedMethods(t types.Type) []*types.Selection {
	ms := types.NewMethodSet(t)
	var out []*types.Selection
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Obj().Exported() {
			out = append(out, ms.At(i))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Obj().Name() < out[j].Obj().Name() })
	return out
}

// build prepares the helper that runs constructor c, and reports whether its
// arguments can be built.
func (g *gen) build(c *ctor) bool {
	switch c.state {
	case 1:
		return false // a cycle
	case 2:
		return c.ok
	}
	c.state = 1
	defer func() { c.state = 2 }()
	sig := c.fn.Type().(*types.Signature)
	if takes, _ := takesT(sig); takes {
		return false // a test helper, not a constructor
	}
	n := sig.Params().Len()
	if sig.Variadic() {
		n--
	}
	for i := 0; i < n; i++ {
		pt := sig.Params().At(i).Type()
		v := fmt.Sprintf("a%d", i)
		if p := g.provider(pt); p != nil {
			if p.err {
				c.setup = append(c.setup, fmt.Sprintf("%s, err := %s(ctx)\nif err != nil {\nreturn r, err\n}", v, p.helper))
			} else {
				c.setup = append(c.setup, fmt.Sprintf("%s, _ := %s(ctx)", v, p.helper))
			}
			c.args = append(c.args, v)
			continue
		}
		z := g.zero(pt)
		if z == "" {
			return false
		}
		c.args = append(c.args, z)
	}
	c.ok = true
	c.helper = fmt.Sprintf("build%d", len(g.ctors))
	g.ctors = append(g.ctors, c)
	return true
}

// provider is a constructor whose result can be passed as t: one returning t
// (the same package's first, Default ones before others), or for an interface
// of the module, one returning a type that implements it.
func (g *gen) provider(t types.Type) *ctor {
	var cands []*ctor
	target := t
	if p, ok := t.(*types.Pointer); ok {
		target = p.Elem()
	}
	if n, ok := target.(*types.Named); ok && g.ours[n.Obj().Pkg()] {
		if types.IsInterface(n) {
			iface := n.Underlying().(*types.Interface)
			for _, p := range g.pkgs {
				for _, name := range p.Scope().Names() {
					tn, ok := p.Scope().Lookup(name).(*types.TypeName)
					if !ok || tn.IsAlias() {
						continue
					}
					u, ok := tn.Type().(*types.Named)
					if !ok || types.IsInterface(u) || u.TypeParams() != nil {
						continue
					}
					for _, c := range g.ctorFor[u] {
						if types.AssignableTo(c.result, t) && types.Implements(c.result, iface) {
							cands = append(cands, c)
						}
					}
				}
			}
		} else {
			for _, c := range g.ctorFor[n] {
				if types.Identical(c.result, t) {
					cands = append(cands, c)
				}
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		return rank(cands[i], pkgOf(target)) < rank(cands[j], pkgOf(target))
	})
	for _, c := range cands {
		if g.build(c) {
			return c
		}
	}
	return nil
}

// pkgOf is the package declaring a named type, or nil.
func pkgOf(t types.Type) *types.Package {
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Pkg()
	}
	return nil
}

// rank orders candidate constructors: the type's own package first, then
// Default functions, then New ones, then fewer parameters, then by name.
func rank(c *ctor, home *types.Package) string {
	own := "1"
	if c.fn.Pkg() == home {
		own = "0"
	}
	def := "2"
	switch {
	case strings.HasPrefix(c.fn.Name(), "Default"):
		def = "0"
	case strings.HasPrefix(c.fn.Name(), "New"):
		def = "1"
	}
	return fmt.Sprintf("%s%s%03d%s.%s", own, def, c.fn.Type().(*types.Signature).Params().Len(), c.fn.Pkg().Path(), c.fn.Name())
}

const header = `// Code generated by internal/cmd/apigen; DO NOT EDIT.

// The no-panic test of the exported API: every exported function and method of
// the root module's packages (internal/ and examples/ excepted), called with
// zero values and nils, on zero, new, nil and constructed receivers; see
// internal/cmd/apigen for the rules and knownPanics for the calls skipped
// because they panic today.
`

func (g *gen) write() ([]byte, error) {
	var body bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&body, format, args...) }

	// Subtests, in a stable order.
	w("func TestNoPanic(t *testing.T) {\n")
	w("ctx, cancel := context.WithCancel(context.Background())\ncancel()\n")
	for _, c := range g.calls {
		w("t.Run(%q, func(t *testing.T) {\n", c.name)
		fn := "guard"
		if c.onTest {
			fn = "guardOnTest"
		}
		body := c.expr
		if c.rapid {
			body = fmt.Sprintf("rapid.Check(t, func(rt *rapid.T) {\n%s\n})", c.expr)
		}
		setup := c.setup
		if setup != "" {
			setup += "\n"
		}
		w("%s(t, %q, func() string {\n%s%s\nreturn \"\"\n})\n", fn, c.name, setup, body)
		w("})\n")
	}
	w("}\n\n")

	// Constructor helpers, all prepared by collect.
	for _, c := range g.ctors {
		T := g.spell(c.result)
		if T == "" {
			return nil, fmt.Errorf("cannot spell %s", c.result)
		}
		w("// %s builds a %s with %s.%s.\n", c.helper, T, g.rel(c.fn.Pkg()), c.fn.Name())
		w("func %s(ctx context.Context) (r %s, err error) {\n", c.helper, T)
		for _, s := range c.setup {
			w("%s\n", s)
		}
		call := fmt.Sprintf("%s.%s(%s)", g.qual(c.fn.Pkg()), c.fn.Name(), strings.Join(c.args, ", "))
		if c.err {
			w("return %s\n", call)
		} else {
			w("return %s, nil\n", call)
		}
		w("}\n\n")
	}

	// Known panics.
	w("// knownPanics are the calls that panic today (internal/cmd/apigen's list).\nvar knownPanics = map[string]string{\n")
	keys := make([]string, 0, len(knownPanics))
	for k := range knownPanics {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w("%q: %q,\n", k, knownPanics[k])
	}
	w("}\n")

	var file bytes.Buffer
	file.WriteString(header)
	fmt.Fprintf(&file, "//\n// Covered: %d functions and %d methods of %d types, in %d calls (%d skipped as\n// known panics, listed at the end); receivers built by %d constructors.\n",
		g.stats.funcs, g.stats.methods, g.stats.types, len(g.calls), len(knownPanics), len(g.ctors))
	file.WriteString("//\n// Not called, and why:\n")
	file.WriteString("//   - methods of interface types: an interface value has no receiver of its own.\n")
	file.WriteString("//   - a method on a constructed receiver when the construction returns an\n//     error (the subtest is skipped with that error).\n")
	for _, s := range g.skipped {
		fmt.Fprintf(&file, "//   - %s.\n", s)
	}
	var withT []string
	for _, c := range g.calls {
		if c.onTest {
			withT = append(withT, c.name)
		}
	}
	file.WriteString("//\n// Calls taking a *testing.T or testing.TB get the subtest's t, and a *rapid.T\n// comes from rapid.Check; they run on the test goroutine, without the timeout:")
	if len(withT) == 0 {
		file.WriteString(" none today.\n")
	} else {
		file.WriteString("\n")
		for _, n := range withT {
			fmt.Fprintf(&file, "//   - %s\n", n)
		}
	}
	file.WriteString("\npackage apitest\n\nimport (\n")
	if strings.Contains(body.String(), "rapid.") {
		g.names["pgregory.net/rapid"] = "rapid"
	}
	paths := make([]string, 0, len(g.names))
	for p := range g.names {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, std := range []bool{true, false} {
		for _, p := range paths {
			if isStd := !strings.Contains(strings.Split(p, "/")[0], "."); isStd != std {
				continue
			}
			base := p[strings.LastIndex(p, "/")+1:]
			if n := g.names[p]; n == base && !versionRE.MatchString(base) {
				fmt.Fprintf(&file, "%q\n", p)
			} else {
				fmt.Fprintf(&file, "%s %q\n", n, p)
			}
		}
		if std {
			file.WriteString("\n")
		}
	}
	file.WriteString(")\n\n")
	file.Write(body.Bytes())
	src, err := format.Source(file.Bytes())
	if err != nil {
		return file.Bytes(), fmt.Errorf("formatting the generated file: %v", err)
	}
	return src, nil
}
