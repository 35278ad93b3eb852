package errs_test

import (
	"errors"
	"testing"

	"github.com/nodestate/nodestate/internal/errs"
)

var (
	errAOptions = errors.New("a: invalid options")
	errAInput   = errors.New("a: invalid input")
	errBOptions = errors.New("b: invalid options")
)

type pkgA struct{}

func (pkgA) Name() string          { return "a" }
func (pkgA) InvalidOptions() error { return errAOptions }
func (pkgA) InvalidInput() error   { return errAInput }

type pkgB struct{}

func (pkgB) Name() string          { return "b" }
func (pkgB) InvalidOptions() error { return errBOptions }

type (
	aOption = errs.OptionError[pkgA]
	aInput  = errs.InputError[pkgA]
	bOption = errs.OptionError[pkgB]
)

// TestShape: the messages name the package once, the field, the value and
// the reason; each error unwraps to its own package's sentinel and its Err;
// errors.As tells one package's OptionError from another's.
func TestShape(t *testing.T) {
	inner := &bOption{Field: "Clock", Reason: "nil"}
	tests := []struct {
		err  error
		want string
		is   []error
	}{
		{&aOption{Field: "PodCIDR", Value: "10.0.0.0/31", Reason: "too small"}, "a: invalid options: PodCIDR 10.0.0.0/31: too small", []error{errAOptions}},
		{&aOption{Field: "Runner", Reason: "refused", Err: inner}, "a: invalid options: Runner: refused", []error{errAOptions, errBOptions}},
		{&aOption{Field: "Runner", Err: inner}, "a: invalid options: Runner: b: invalid options: Clock: nil", []error{errAOptions, errBOptions}},
		{&aInput{What: `container "app"`, Reason: "not in the spec"}, `a: invalid input: container "app": not in the spec`, []error{errAInput}},
		{&aInput{}, "a: invalid input", []error{errAInput}},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%q, want %q", got, tt.want)
		}
		for _, s := range tt.is {
			if !errors.Is(tt.err, s) {
				t.Errorf("%v does not unwrap to %v", tt.err, s)
			}
		}
	}
	var a *aOption
	var b *bOption
	if errors.As(inner, &a) || !errors.As(inner, &b) {
		t.Error("errors.As mixes the packages' OptionErrors")
	}
	var nilErr *aOption
	if nilErr.Error() != "a: invalid options" || !errors.Is(nilErr, errAOptions) {
		t.Error("a nil OptionError")
	}
}
