package kube

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"go.uber.org/goleak"
)

// stuckObjects answers every look-up once release is closed: a volume
// look-up that takes as long as the test wants.
type stuckObjects struct {
	fakeObjects
	entered chan struct{}
	release chan struct{}
}

func (s *stuckObjects) ConfigMap(ctx context.Context, ns, name string) error {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.release
	return s.fakeObjects.ConfigMap(ctx, ns, name)
}

// TestSlowVolumeLookupDelaysNoLease: while a pod's volume look-up hangs
// on the pods' goroutine, the node's status and Lease goroutine renews the
// Lease on its schedule (every 10 s); once the look-up returns the pod goes
// on; Run leaves no goroutine behind (docs: kube's node in parts).
func TestSlowVolumeLookupDelaysNoLease(t *testing.T) {
	defer goleak.VerifyNone(t)
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default", UID: "uid-cm"},
		Spec: corev1.PodSpec{NodeName: "n", Volumes: []corev1.Volume{cmVol("cfg", "settings", nil)},
			Containers: []corev1.Container{{Name: "app", Image: "app:1", VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}}}}}
	cs := fake.NewClientset(pod)
	opts := DefaultOptions("n")
	opts.Clock = clk
	n, err := NewNode(opts, cs)
	if err != nil {
		t.Fatal(err)
	}
	objs := &stuckObjects{fakeObjects: fakeObjects{configMaps: []string{"settings"}}, entered: make(chan struct{}, 1), release: make(chan struct{})}
	n.objects = objs
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	var once sync.Once
	release := func() { once.Do(func() { close(objs.release) }) }
	defer func() {
		release()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	}()
	select {
	case <-objs.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the volume look-up never began")
	}
	// A minute of virtual time, a second at a time: the Lease is renewed
	// about every 10 s (its interval and the renewer's jitter) throughout.
	before := n.Stats().LeaseRenewals
	for i := 0; i < 60; i++ {
		clk.Step(time.Second)
		if (i+1)%12 == 0 {
			want := before + (i+1)/12
			if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 20*time.Second, true,
				func(context.Context) (bool, error) { return n.Stats().LeaseRenewals >= want, nil }); err != nil {
				t.Fatalf("after %d s with the look-up hung: %d renewals, want %d", i+1, n.Stats().LeaseRenewals-before, want-before)
			}
		}
	}
	release()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 20*time.Second, true,
		func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods("default").Get(ctx, "cm", metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodRunning, err
		}); err != nil {
		t.Fatalf("the pod did not run once its volume was found: %v", err)
	}
}
