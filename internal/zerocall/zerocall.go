// Package zerocall calls functions and methods with zero and nil arguments
// for the tests that prove an exported API never panics on them
// (docs/conventions.md section 2). A package's test lists its exported
// functions and a receiver or more per exported type; [Exported] reads the
// package's source so that the test fails when an exported name is missing
// from that list.
package zerocall

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// Exported returns the names of the exported top-level functions and of the
// exported types declared in the non-test Go files of dir, sorted.
func Exported(dir string) (funcs, types []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("zerocall: %w", err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, fmt.Errorf("zerocall: %w", err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					funcs = append(funcs, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.IsExported() {
						types = append(types, ts.Name.Name)
					}
				}
			}
		}
	}
	sort.Strings(funcs)
	sort.Strings(types)
	return funcs, types, nil
}

// Call calls fn, a function, with the zero value of every parameter (nil
// for pointers, slices, maps, interfaces and functions; no variadic
// arguments) and returns the panic it raised as an error, or nil.
func Call(fn any) error {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return fmt.Errorf("zerocall: %T is not a function", fn)
	}
	return call(v)
}

func call(v reflect.Value) (err error) {
	t := v.Type()
	n := t.NumIn()
	if t.IsVariadic() {
		n--
	}
	args := make([]reflect.Value, n)
	for i := range args {
		args[i] = reflect.Zero(t.In(i))
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	v.Call(args)
	return nil
}

// Methods calls every exported method of recv with zero arguments, as
// [Call] does, and returns the names of the methods called and one error
// per method that panicked. For a nil pointer it calls only the methods
// declared on the pointer type: calling a value method through a nil
// pointer panics in Go itself.
func Methods(recv any) (called []string, errs []error) {
	v := reflect.ValueOf(recv)
	t := v.Type()
	nilPtr := t.Kind() == reflect.Pointer && v.IsNil()
	for i := range t.NumMethod() {
		m := t.Method(i)
		if nilPtr {
			if _, onValue := t.Elem().MethodByName(m.Name); onValue {
				continue
			}
		}
		called = append(called, m.Name)
		if err := call(v.Method(i)); err != nil {
			errs = append(errs, fmt.Errorf("(%s).%s: %w", describe(v), m.Name, err))
		}
	}
	return called, errs
}

func describe(v reflect.Value) string {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return "(" + v.Type().String() + ")(nil)"
	}
	return v.Type().String()
}
