package events_test

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodestate/nodestate/events"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

func asOptionError(err error, target any) bool { return errors.As(err, target) }

func k8sUID(s string) k8stypes.UID { return k8stypes.UID(s) }

type runtimeObject = runtime.Object

func cmpDiff(want, got any) string { return cmp.Diff(want, got) }

func eventsResource() schema.GroupResource {
	return schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
}

// spinLimit bounds every wait on another goroutine in these tests: a wait that does not end
// (a retry timer armed late, a lane that never wakes) fails the test instead of hanging it.
// Each wait is for a few scheduling rounds, so 10 s is ample even on a loaded machine, and
// a lane that never wakes fails its test quickly instead of stalling the whole run.
const spinLimit = 10 * time.Second

// spinUntil yields until cond holds, failing t after spinLimit of wall time.
func spinUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(spinLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after %v: %s", spinLimit, what)
		}
		goruntime.Gosched()
	}
}

// receive waits for a value from ch, or for ch to close, failing t after spinLimit of wall
// time: what says what the value means.
func receive[T any](t testing.TB, ch <-chan T, what string) {
	t.Helper()
	deadline := time.NewTimer(spinLimit)
	defer deadline.Stop()
	select {
	case <-ch:
	case <-deadline.C:
		t.Fatalf("still waiting after %v: %s", spinLimit, what)
	}
}

// waitTimers waits until the fake clock has at least n waiters.
func waitTimers(t testing.TB, fc interface{ Waiters() int }, n int) {
	t.Helper()
	spinUntil(t, fmt.Sprintf("%d timers on the fake clock", n), func() bool { return fc.Waiters() >= n })
}

// countOf is the count of the event a result writes, 0 for a skip.
func countOf(r events.Result) int32 {
	if r.Event == nil {
		return 0
	}
	return r.Event.Count
}

// shutdownWithin calls b.Shutdown(ctx) and returns its error, failing t after spinLimit of
// wall time: a retry loop or a sink goroutine that does not end fails the test instead of
// hanging it until go test's timeout.
func shutdownWithin(t testing.TB, b interface{ Shutdown(context.Context) error }, ctx context.Context) error {
	t.Helper()
	return within(t, "Shutdown", func() error { return b.Shutdown(ctx) })
}

// flushWithin calls b.Flush(ctx) and returns its error, failing t after spinLimit of wall
// time: a Flush that goes on writing after ctx has ended fails the test instead of hanging it.
func flushWithin(t testing.TB, b interface{ Flush(context.Context) error }, ctx context.Context) error {
	t.Helper()
	return within(t, "Flush", func() error { return b.Flush(ctx) })
}

// within runs call on another goroutine and returns its error, failing t when it has not
// returned after spinLimit of wall time.
func within(t testing.TB, call string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	deadline := time.NewTimer(spinLimit)
	defer deadline.Stop()
	select {
	case err := <-done:
		return err
	case <-deadline.C:
		t.Fatalf("%s still running after %v: a retry loop or a sink goroutine does not end", call, spinLimit)
		return nil
	}
}
