package vk

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
)

// RuntimeFactory returns the Runtime of a pod the provider was asked to
// create. An error fails the pod as the kubelet fails one it cannot run:
// phase Failed, reason ReasonRuntimeRejected, message "Pod was rejected:
// <error>", with a Warning event of that reason.
//
// A runtime that learns of news on its own (a remote backend) calls
// Provider.Notify with the pod's UID; one that knows when its next report
// is due says so in Next.
type RuntimeFactory func(pod *v1.Pod) (podrunner.Runtime, error)

// ReasonRuntimeRejected is the pod status reason and event reason of a pod
// whose RuntimeFactory refused it.
const ReasonRuntimeRejected = "RuntimeRejected"

// ReasonPodCIDRExhausted is the reason of a pod that got no IP because the
// pod CIDR is full.
const ReasonPodCIDRExhausted = "PodCIDRExhausted"

// SimulatedRuntime is a RuntimeFactory of simruntime's runtime, which runs
// no process: each container behaves as its pod's annotation
// "sim.nodestate.io/<container>" says (simruntime.AnnotationPrefix; for
// example "run 3s exit 1", "ignore-sigterm 10s", "readiness fail 0s-20s"),
// on the provider's clock. Its container IDs carry a random token, so a
// provider started again never reports the ID of an instance the API
// server already shows. An annotation that does not parse is an error.
func SimulatedRuntime(pod *v1.Pod) (podrunner.Runtime, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	opts := simruntime.DefaultOptions()
	opts.Token = hex.EncodeToString(b[:])
	return simruntime.NewForPod(opts, pod)
}

// guarded is a pod's Runtime as the runner sees it: a panic of the
// runtime is an error of Do (or nothing from Due and Next), logged and
// counted, and a Do that does not return within timeout is a refused Do;
// until it returns, the runtime is left alone (Do refuses at once, Due and
// Next report nothing), and once it returns the runner is notified so
// that it reads what the runtime has.
type guarded struct {
	rt      podrunner.Runtime
	uid     types.UID
	timeout time.Duration
	p       *Provider

	mu       sync.Mutex
	inFlight bool
}

var _ podrunner.Runtime = (*guarded)(nil)

func (g *guarded) busy() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight
}

// Do hands actions to the runtime, within the timeout.
func (g *guarded) Do(now time.Time, actions []podlifecycle.Action) error {
	if g.busy() {
		return fmt.Errorf("%w: a call that timed out is still running", ErrRuntime)
	}
	if g.timeout == 0 {
		return g.do(now, actions)
	}
	// The runner reuses the slice once Do returns, which a call that times
	// out outlives.
	own := append([]podlifecycle.Action(nil), actions...)
	done := make(chan error, 1)
	g.mu.Lock()
	g.inFlight = true
	g.mu.Unlock()
	go func() {
		err := g.do(now, own)
		g.mu.Lock()
		g.inFlight = false
		g.mu.Unlock()
		done <- err
	}()
	t := g.p.clock.NewTimer(g.timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C():
		g.p.count(func(s *Stats) { s.RuntimeTimeouts++ })
		g.p.log.Error(ErrRuntime, "runtime did not answer; its actions will be handed again", "pod", g.uid, "timeout", g.timeout)
		go func() {
			// Once the late call returns, the runner reads what came of it.
			<-done
			_ = g.p.runner.Notify(g.uid)
		}()
		return fmt.Errorf("%w: Do did not return within %v", ErrRuntime, g.timeout)
	}
}

func (g *guarded) do(now time.Time, actions []podlifecycle.Action) (err error) {
	defer g.recover("Do", &err)
	return g.rt.Do(now, actions)
}

// Due returns what the runtime observed; nothing while a call is in flight.
func (g *guarded) Due(now time.Time) (obs []podlifecycle.Observation) {
	if g.busy() {
		return nil
	}
	defer g.recover("Due", nil)
	return g.rt.Due(now)
}

// Next returns when the runtime next has news; zero while a call is in
// flight (the runner is notified when it ends).
func (g *guarded) Next() (t time.Time) {
	if g.busy() {
		return time.Time{}
	}
	defer g.recover("Next", nil)
	return g.rt.Next()
}

func (g *guarded) recover(call string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	g.p.count(func(s *Stats) { s.RuntimePanics++ })
	e := fmt.Errorf("%w: %s panicked: %v", ErrRuntime, call, r)
	g.p.log.Error(e, "runtime panicked", "pod", g.uid)
	if err != nil {
		*err = e
	}
}
