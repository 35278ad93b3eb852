package podrunner_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun: Run syncs on its clock: a pod added from another goroutine runs
// at once; a crash-looping container's back-off is waited for on the
// clock; Run returns ctx's error when ctx ends and leaves no goroutine
// behind; a second Run is refused.
func TestRun(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	synced := make(chan string, 100)
	opts := podrunner.DefaultOptions()
	opts.Clock, opts.PodCIDR = clk, "10.244.1.0/24" // a sandbox without an IP would be made again at every sync
	opts.Hooks.Synced = func(_ time.Time, _ *v1.Pod, _ []podlifecycle.Observation, res *podlifecycle.Result) {
		for _, st := range res.Statuses {
			synced <- state(st, "app")
		}
	}
	n := newNode(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.r.Run(ctx) }()
	n.add(testPod("crash", map[string]string{simruntime.AnnotationPrefix + "app": "run 3s exit 1"}, "app"))
	waitFor := func(want string) {
		t.Helper()
		for {
			select {
			case got := <-synced:
				if got == want {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s status within 10 s of real time", want)
			}
		}
	}
	waitFor("Running")
	// The exit at +3 s, the restart at once, the second exit at +6 s and
	// its back-off of 10 s: each wait is the runner's timer on the clock.
	for _, step := range []struct {
		d    time.Duration
		want string
	}{{3 * time.Second, "Terminated/Error"}, {3 * time.Second, "Terminated/Error"}, {10 * time.Second, "Waiting/CrashLoopBackOff"}} {
		for !clk.HasWaiters() {
			runtime.Gosched() // until Run waits on its timer
		}
		clk.Step(step.d)
		waitFor(step.want)
	}
	if err := n.r.Run(ctx); !errors.Is(err, podrunner.ErrRunning) {
		t.Fatalf("second Run: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v", err)
	}
}
