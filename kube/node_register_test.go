package kube_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/kube"
)

// runFakeNode runs node name on cs and fc; cancel stops it and done gets
// Run's result.
func runFakeNode(t *testing.T, name string, cs *fake.Clientset, fc *clocktesting.FakeClock) (*kube.Node, context.CancelFunc, <-chan error) {
	t.Helper()
	opts := kube.DefaultOptions(name)
	opts.Clock = fc
	n, err := kube.NewNode(opts, cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	return n, cancel, done
}

// TestNodeRegistrationBacksOff: a Node whose registration the API server
// refuses (here a 403, as for a client that is not the node's identity)
// reports it and tries again as the kubelet does, after 100 ms, 200 ms,
// 400 ms, ... up to 7 s, never in a hot loop; once the server takes the
// Node the node runs, and Run ends with ctx, leaving no goroutine behind.
func TestNodeRegistrationBacksOff(t *testing.T) {
	defer goleak.VerifyNone(t)
	const refusals = 8
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fc := clocktesting.NewFakeClock(t0)
	cs := fake.NewClientset()
	var attempts []time.Duration
	cs.PrependReactor("create", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		attempts = append(attempts, fc.Since(t0))
		if len(attempts) <= refusals {
			return true, nil, apierrors.NewForbidden(corev1.Resource("nodes"), "n1", errors.New("not the node's identity"))
		}
		return false, nil, nil
	})
	n, cancel, done := runFakeNode(t, "n1", cs, fc)

	// Each retry waits on a timer of the node's clock: step to it.
	want := []time.Duration{0}
	step := 100 * time.Millisecond
	for i := 0; i < refusals; i++ {
		poll(t, "the retry timer", func() bool { return n.Stats().RegisterErrors == i+1 && fc.HasWaiters() })
		// A millisecond early the retry is still waiting (the fake clock
		// fires a due timer inside Step)...
		fc.Step(step - time.Millisecond)
		if !fc.HasWaiters() {
			t.Fatalf("retry %d came before %v", i+1, step)
		}
		// ...and at the back-off's end it comes.
		fc.Step(time.Millisecond)
		want = append(want, want[len(want)-1]+step)
		step = min(2*step, 7*time.Second)
	}
	poll(t, "the node registered", func() bool {
		_, err := cs.Tracker().Get(corev1.SchemeGroupVersion.WithResource("nodes"), "", "n1")
		return err == nil
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	// 0, 0.1, 0.3, 0.7, 1.5, 3.1, 6.3, 12.7 (7 s cap from here), 19.7 s.
	if len(attempts) != len(want) {
		t.Fatalf("%d registrations at %v, want %d at %v", len(attempts), attempts, len(want), want)
	}
	for i := range want {
		if attempts[i] != want[i] {
			t.Fatalf("registration %d at %v, want %v (all: %v)", i, attempts[i], want[i], attempts)
		}
	}
	if st := n.Stats(); st.RegisterErrors != refusals {
		t.Errorf("RegisterErrors = %d, want %d", st.RegisterErrors, refusals)
	}
}

// TestNodeRegistrationEndsWithContext: a node that cannot register stops
// trying when its context ends, and Run returns the context's error.
func TestNodeRegistrationEndsWithContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cs := fake.NewClientset()
	cs.PrependReactor("create", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd is down")
	})
	n, cancel, done := runFakeNode(t, "n1", cs, fc)
	poll(t, "a failed registration", func() bool { return n.Stats().RegisterErrors == 1 && fc.HasWaiters() })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
}
