package main

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// sample is a package with each shape the generator handles.
const sample = `package sample

import (
	"context"
	"errors"
	"testing"
)

type Options struct{ N int }

func DefaultOptions() Options { return Options{N: 1} }

type Store interface{ Get(key string) (string, bool) }

type Mem struct{ m map[string]string }

func NewMem() *Mem { return &Mem{m: map[string]string{}} }

func (m *Mem) Get(key string) (string, bool) { v, ok := m.m[key]; return v, ok }

type Engine struct {
	opts  Options
	store Store
}

func NewEngine(store Store, opts Options) (*Engine, error) {
	if store == nil {
		return nil, errors.New("nil store")
	}
	return &Engine{opts: opts, store: store}, nil
}

func (e *Engine) Run(ctx context.Context, ch <-chan int, f func()) error { return ctx.Err() }

func (o Options) Valid() bool { return o.N > 0 }

func Lookup(s Store, keys ...string) int { return len(keys) }

func Check(t testing.TB, e *Engine) {}

func Map[T any](x T) T { return x }

type unexported struct{ a int }

func Hidden(u unexported) {}
`

func sampleGen(t *testing.T) *gen {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "sample.go", sample, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.Default()}
	pkg, err := conf.Check("example.com/mod/sample", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := newGen("example.com/mod", []*types.Package{pkg})
	g.collect()
	return g
}

func TestCollect(t *testing.T) {
	g := sampleGen(t)
	calls := map[string]call{}
	for _, c := range g.calls {
		calls[c.name] = c
	}
	tests := []struct {
		name, expr, reason string
	}{
		{"sample.Lookup", "_ = sample.Lookup(nil)", "an interface argument is nil, a variadic one empty"},
		{"sample.(*Engine).Run/zero", "_ = r.Run(ctx, nil, nil)", "a context is the cancelled one; channels and funcs are nil"},
		{"sample.(*Engine).Run/NewEngine", "_ = r.Run(ctx, nil, nil)", "a receiver built by its constructor"},
		{"sample.(*Mem).Get/NewMem", "_, _ = r.Get(\"\")", "two results are discarded"},
		{"sample.Options.Valid/zero", "_ = r.Valid()", "a value method on the zero value"},
		{"sample.Options.Valid/DefaultOptions", "_ = r.Valid()", "a value built by its Default function"},
		{"sample.Check", "sample.Check(t, nil)", "a testing.TB is the subtest's t"},
	}
	for _, tt := range tests {
		c, ok := calls[tt.name]
		if !ok {
			t.Errorf("%s: no call (%s); calls: %v", tt.name, tt.reason, names(g.calls))
			continue
		}
		if c.expr != tt.expr {
			t.Errorf("%s: expr %q, want %q (%s)", tt.name, c.expr, tt.expr, tt.reason)
		}
	}
	if !calls["sample.Check"].onTest {
		t.Error("sample.Check takes a t but does not run on the test goroutine")
	}
	for _, absent := range []string{"sample.Options.Valid/nil", "sample.(*Engine).Run/nil", "sample.Store.Get/zero", "sample.Map", "sample.Hidden"} {
		if _, ok := calls[absent]; ok {
			t.Errorf("%s: called, want it left out", absent)
		}
	}
	skipped := strings.Join(g.skipped, "\n")
	for _, want := range []string{"sample.Map: generic", "sample.Hidden: no zero value"} {
		if !strings.Contains(skipped, want) {
			t.Errorf("skipped list %q lacks %q", skipped, want)
		}
	}
}

// TestConstructorArguments: NewEngine's Store comes from the type that
// implements it (NewMem) and its Options from DefaultOptions.
func TestConstructorArguments(t *testing.T) {
	g := sampleGen(t)
	src, err := g.write()
	if err != nil {
		t.Fatalf("write: %v\n%s", err, src)
	}
	out := string(src)
	for _, want := range []string{
		"return sample.NewMem(), nil",
		"return sample.DefaultOptions(), nil",
		"return sample.NewEngine(a0, a1)",
		`guardOnTest(t, "sample.Check"`,
		`guard(t, "sample.Lookup"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("generated file lacks %q", want)
		}
	}
}

func names(cs []call) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.name)
	}
	return out
}
