package main

import (
	"strings"
	"testing"
)

// TestGoodPackagePasses: a package that follows every rule gives nothing.
func TestGoodPackagePasses(t *testing.T) {
	got, err := checkTree("testdata/good")
	if err != nil || len(got) != 0 {
		t.Fatalf("%v %v", got, err)
	}
}

// TestBadPackageFails: each broken rule is reported once, naming the place
// (the break check of make lint: a constructor's order, an error's shape).
func TestBadPackageFails(t *testing.T) {
	got, err := checkTree("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{
		"NewEngine takes its options (EngineOptions) as parameter 2",
		"type EngineOptions has no DefaultEngineOptions() EngineOptions",
		"EngineOptions.Clock has type clock.PassiveClock",
		"type RunConfig: options are called Options, not Config",
		"OptionError has the fields {Field string, Detail string}",
		"error type OptionError has no Unwrap",
		"ErrOld is deprecated",
		"package has EngineOptions but no Options",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if len(got) != 9 {
		t.Errorf("%d problems, want 9:\n%s", len(got), text)
	}
}
