package apitest

import (
	"flag"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

var runKnown = flag.Bool("apitest.known", false, "run the calls of knownPanics too, and fail on each that no longer panics")

// callTimeout bounds one call: every argument that could block is a nil
// channel, a nil func or an already cancelled context, so a call still
// running after it is stuck.
const callTimeout = 10 * time.Second

// outcome is how one call ended.
type outcome struct {
	panicked bool
	value    any
	stack    []byte
	skip     string // why the call was not made (its receiver could not be built)
}

// do runs f, recovering a panic. A runtime.Goexit (t.FailNow) ends it as a
// normal return.
func do(f func() string) (o outcome) {
	defer func() {
		if v := recover(); v != nil {
			o = outcome{panicked: true, value: v, stack: debug.Stack()}
		}
	}()
	return outcome{skip: f()}
}

// guard runs the call named name on its own goroutine and fails t if it
// panics or does not return within callTimeout.
func guard(t *testing.T, name string, f func() string) {
	t.Helper()
	skipKnown(t, name)
	done := make(chan outcome, 1)
	go func() {
		o := outcome{skip: "the call ended its goroutine (runtime.Goexit)"}
		defer func() { done <- o }()
		o = do(f)
	}()
	timer := time.NewTimer(callTimeout)
	defer timer.Stop()
	select {
	case o := <-done:
		report(t, name, o)
	case <-timer.C:
		t.Fatalf("%s did not return within %v", name, callTimeout)
	}
}

// guardOnTest runs the call named name on the test goroutine: it takes a t,
// which may only stop the goroutine running the test.
func guardOnTest(t *testing.T, name string, f func() string) {
	t.Helper()
	skipKnown(t, name)
	report(t, name, do(f))
}

func skipKnown(t *testing.T, name string) {
	t.Helper()
	if v, ok := knownPanics[name]; ok && !*runKnown {
		t.Skipf("known panic, listed in internal/cmd/apigen's knownPanics: %s", v)
	}
}

func report(t *testing.T, name string, o outcome) {
	t.Helper()
	_, known := knownPanics[name]
	switch {
	case o.panicked && known:
		t.Logf("%s still panics: %v", name, o.value)
	case o.panicked:
		t.Errorf("%s panicked: %v\n%s", name, o.value, o.stack)
	case known:
		t.Errorf("%s no longer panics: remove it from knownPanics in internal/cmd/apigen and run go generate ./internal/apitest", name)
	case o.skip != "":
		t.Skip(o.skip)
	}
}

// TestHarness checks the helpers the generated test relies on: a panic is
// caught with its value, a Goexit is no panic, a skip reason comes back, and
// both guards pass a call that returns.
func TestHarness(t *testing.T) {
	if o := do(func() string { panic("boom") }); !o.panicked || o.value != "boom" {
		t.Errorf("a panic: got %+v, want it caught with its value", o)
	}
	var nilPtr *outcome
	if o := do(func() string { return nilPtr.skip }); !o.panicked {
		t.Errorf("a runtime panic: got %+v, want it caught", o)
	}
	if o := do(func() string { return "cannot build" }); o.panicked || o.skip != "cannot build" {
		t.Errorf("a skip: got %+v", o)
	}
	done := make(chan outcome, 1)
	go func() {
		o := outcome{skip: "goexit"}
		defer func() { done <- o }()
		o = do(func() string { runtime.Goexit(); return "" })
	}()
	if o := <-done; o.panicked {
		t.Errorf("runtime.Goexit: got %+v, want no panic", o)
	}
	guard(t, "harness.returns", func() string { return "" })
	guardOnTest(t, "harness.returnsOnTest", func() string { return "" })
}
