package kube_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/statussync"
)

// A statussync.Engine writes pod statuses through StatusTransport. Here the transport's three
// calls run against client-go's fake clientset; with a real clientset they are a GET of the
// pod, a strategic merge PATCH of pods/status and a DELETE with a UID precondition.
func ExampleStatusTransport() {
	ctx := context.Background()
	cs := fake.NewClientset(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "u1"},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	})
	var tr statussync.Transport = &kube.StatusTransport{Client: cs}

	pod, err := tr.GetPod(ctx, "shop", "web-0")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("read:", pod.Status.Phase)
	pod, err = tr.PatchPodStatus(ctx, "shop", "web-0", []byte(`{"status":{"phase":"Running"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("patched:", pod.Status.Phase, "on", pod.Spec.NodeName)
	if err := tr.DeletePod(ctx, "shop", "web-0", "u1"); err != nil {
		fmt.Println(err)
		return
	}
	_, err = tr.GetPod(ctx, "shop", "web-0")
	fmt.Println("after delete:", err)
	// Output:
	// read: Pending
	// patched: Running on node-1
	// after delete: pods "web-0" not found
}

// A nodestate Broadcaster writes core/v1 events through CoreEventSink; a repeat of an event
// within the correlator's window becomes a PATCH of the first one's count. EventRecorder
// hands the recorder to code that takes client-go's record.EventRecorderLogger.
func ExampleCoreEventSink() {
	cs := fake.NewClientset()
	clk := testingclock.NewFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	opts := events.DefaultBroadcasterOptions()
	opts.Clock = clk
	b, err := events.NewBroadcaster(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := b.StartRecordingToSink(&kube.CoreEventSink{Client: cs.CoreV1()}, events.DefaultCorrelatorOptions()); err != nil {
		fmt.Println(err)
		return
	}
	r, err := b.NewRecorder(corev1.EventSource{Component: "kubelet", Host: "node-1"}, events.RecorderOptions{Scheme: scheme.Scheme})
	if err != nil {
		fmt.Println(err)
		return
	}
	var rec record.EventRecorderLogger = kube.EventRecorder{Recorder: r}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "u1"}}
	rec.Eventf(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	clk.Step(10 * time.Second)
	rec.Eventf(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	if err := b.Shutdown(context.Background()); err != nil {
		fmt.Println(err)
		return
	}

	list, err := cs.CoreV1().Events("shop").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range list.Items {
		fmt.Printf("%s %s x%d: %s\n", ev.InvolvedObject.Name, ev.Reason, ev.Count, ev.Message)
	}
	st := b.Stats().Sinks[0]
	fmt.Printf("created %d, patched %d\n", st.Created, st.Patched)
	// Output:
	// web-0 BackOff x2: Back-off restarting failed container app
	// created 1, patched 1
}

// The events.k8s.io/v1 form: the SeriesBroadcaster writes through SeriesEventSink, and the
// second identical event starts a series on the first.
func ExampleSeriesEventSink() {
	cs := fake.NewClientset()
	opts := events.DefaultSeriesBroadcasterOptions()
	opts.Clock = testingclock.NewFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	b, err := events.NewSeriesBroadcaster(opts, &kube.SeriesEventSink{Client: cs.EventsV1()})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := b.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	rec, err := b.NewRecorder("kubelet", "kubelet-node-1", events.RecorderOptions{Scheme: scheme.Scheme})
	if err != nil {
		fmt.Println(err)
		return
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "u1"}}
	rec.Eventf(pod, nil, corev1.EventTypeNormal, "Pulled", "Pull", "pulled %s", "img")
	rec.Eventf(pod, nil, corev1.EventTypeNormal, "Pulled", "Pull", "pulled %s", "img")
	if err := b.Shutdown(context.Background()); err != nil {
		fmt.Println(err)
		return
	}

	list, err := cs.EventsV1().Events("shop").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range list.Items {
		fmt.Printf("%s %s, series count %d\n", ev.Regarding.Name, ev.Reason, ev.Series.Count)
	}
	// Output:
	// web-0 Pulled, series count 2
}

// LeaseLookup is the live lookup a nodecondition.Runner takes as RunnerOptions.Leases.
func ExampleLeaseLookup() {
	cs := fake.NewClientset(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: "node-1", Namespace: nodecondition.LeaseNamespace, ResourceVersion: "42"}})
	opts := nodecondition.DefaultRunnerOptions()
	opts.Leases = &kube.LeaseLookup{Client: cs.CoordinationV1()}

	for _, node := range []string{"node-1", "node-2"} {
		rv, found, err := opts.Leases.LiveLease(node)
		fmt.Printf("%s: found %v, resourceVersion %q, err %v\n", node, found, rv, err)
	}
	// Output:
	// node-1: found true, resourceVersion "42", err <nil>
	// node-2: found false, resourceVersion "", err <nil>
}

// An adapter without a client sends nothing and says so; an event sink's error is also
// marked not retryable, so a broadcaster drops the event rather than retry it.
func Example_zeroValue() {
	var tr kube.StatusTransport
	_, err := tr.GetPod(context.Background(), "shop", "web-0")
	fmt.Println(errors.Is(err, kube.ErrNotInitialized), err)

	var sink kube.CoreEventSink
	_, err = sink.Create(context.Background(), &corev1.Event{})
	fmt.Println(errors.Is(err, kube.ErrNotInitialized), events.Retryable(err))
	// Output:
	// true kube: no client: StatusTransport.GetPod of a StatusTransport without Client
	// true false
}
