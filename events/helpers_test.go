package events_test

import (
	"errors"
	goruntime "runtime"

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

func yield() { goruntime.Gosched() }

// waitTimers waits until the fake clock has at least n waiters.
func waitTimers(fc interface{ Waiters() int }, n int) {
	for fc.Waiters() < n {
		goruntime.Gosched()
	}
}

// countOf is the count of the event a result writes, 0 for a skip.
func countOf(r events.Result) int32 {
	if r.Event == nil {
		return 0
	}
	return r.Event.Count
}
