package podrunner

import (
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"k8s.io/apimachinery/pkg/runtime"
)

// Runtime carries out one pod's podlifecycle actions and reports what came
// of them, the way a CRI runtime answers the kubelet. The runner owns one
// Runtime per pod and calls it from one goroutine only.
//
// simruntime.Runtime implements it; so does any runtime of a user's own
// (a cloud container service, an HPC scheduler, a remote agent).
type Runtime interface {
	// Do takes the actions of one sync, in order, issued at now (see
	// podlifecycle.Action for each kind and how it is answered). It must
	// not block for long: a runtime that waits for a backend does so on a
	// goroutine of its own, reports through Due and calls Runner.Notify.
	// The slice is the runner's and is reused after Do returns; copy what
	// must outlive the call.
	//
	// A failure of one action is an observation (ImagePullFailed,
	// ContainerCreateFailed, SandboxCreateFailed, ...), as a failed CRI
	// call is a result of the kubelet's sync, not an error of Do. Do
	// returns an error only when it took none of the actions (its backend
	// cannot be reached): the runner logs and counts it and hands the same
	// actions again later (Options.RuntimeRetry, doubling up to
	// Options.RuntimeRetryMax).
	Do(now time.Time, actions []podlifecycle.Action) error
	// Due returns, in order, what happened up to now that was not
	// reported yet (sandbox ready, image pulled or failed, container
	// created, started or exited, probe and hook results) and forgets it.
	// An observation's At is when it happened (zero: now). The runner
	// owns the slice until the next call.
	Due(now time.Time) []podlifecycle.Observation
	// Next returns when the runtime next has something to report, or the
	// zero time when it does not know: a simulated runtime knows; a real
	// one calls Runner.Notify when news arrives instead.
	Next() time.Time
}

// Recorder records the kubelet's events about a pod: the object is a
// *v1.ObjectReference to the pod with the event's field path
// (podlifecycle.Event.Reference). events.Recorder and client-go's
// record.EventRecorder implement it.
type Recorder interface {
	Event(object runtime.Object, eventtype, reason, message string)
}
