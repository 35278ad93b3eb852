package zerocall

import (
	"slices"
	"testing"
)

type thing struct{ p *int }

func (t thing) Value() int     { return *t.p }
func (t *thing) Pointer() bool { return t != nil }

func TestCallReportsPanics(t *testing.T) {
	if err := Call(func(p *int) int { return *p }); err == nil {
		t.Error("a nil dereference was not reported")
	}
	if err := Call(func(p *int, rest ...string) bool { return p == nil && rest == nil }); err != nil {
		t.Error(err)
	}
	if err := Call(42); err == nil {
		t.Error("a non-function was accepted")
	}
}

func TestMethods(t *testing.T) {
	called, errs := Methods((*thing)(nil))
	if !slices.Equal(called, []string{"Pointer"}) || len(errs) != 0 {
		t.Errorf("nil pointer: called %v, errors %v", called, errs)
	}
	called, errs = Methods(&thing{})
	if !slices.Equal(called, []string{"Pointer", "Value"}) || len(errs) != 1 {
		t.Errorf("zero value: called %v, errors %v; want Value to panic", called, errs)
	}
}

func TestExported(t *testing.T) {
	funcs, types, err := Exported(".")
	if err != nil || !slices.Equal(funcs, []string{"Call", "Exported", "Methods"}) || len(types) != 0 {
		t.Errorf("Exported(.) = %v, %v, %v", funcs, types, err)
	}
}
