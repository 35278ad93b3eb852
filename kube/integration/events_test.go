package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
)

// TestCoreEventsWithCounts: repeated core/v1 events land as one Event with
// a count, readable the way kubectl describe reads them (a field selector on
// involvedObject.name), written with the node's own credentials.
func TestCoreEventsWithCounts(t *testing.T) {
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	pod := createPod(t, admin, ns, "web", node1, corev1.RestartPolicyAlways)
	nodeClient, calls := client(t, controlplane.NodeUser(node1))

	b, err := events.NewBroadcaster(events.DefaultBroadcasterOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.StartRecordingToSink(&kube.CoreEventSink{Client: nodeClient.CoreV1()}, events.DefaultCorrelatorOptions()); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecorder(corev1.EventSource{Component: "kubelet", Host: node1}, events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		rec.Eventf(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s", "app", "web_"+ns+"("+string(pod.UID)+")")
	}
	rec.Eventf(pod, corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine", "registry.example/app:1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := admin.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "web").String()})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int32{}
	for _, ev := range list.Items {
		counts[ev.Reason] = ev.Count
		if ev.InvolvedObject.UID != pod.UID || ev.Source.Host != node1 {
			t.Errorf("event %s: involvedObject %+v source %+v", ev.Name, ev.InvolvedObject, ev.Source)
		}
	}
	if len(list.Items) != 2 || counts["BackOff"] != 5 || counts["Pulled"] != 1 {
		t.Fatalf("want BackOff x5 and Pulled x1 as two events, got %v", counts)
	}
	if calls.get("POST events") != 2 || calls.get("PATCH events") != 4 {
		t.Errorf("two creates and four count patches, got %v", calls.counts)
	}
	// The selector kubectl describe uses (name, namespace, kind and uid) finds the same two.
	ref, err := events.Reference(nil, &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := events.FieldSelector(ref)
	if err != nil {
		t.Fatal(err)
	}
	described, err := admin.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: sel})
	if err != nil || len(described.Items) != 2 {
		t.Fatalf("events by %q: %v, %d items; want the two", sel, err, len(described.Items))
	}
}

// TestSeriesEvents: an isomorphic events.k8s.io/v1 event recorded twice is
// one Event with series count 2.
func TestSeriesEvents(t *testing.T) {
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	pod := createPod(t, admin, ns, "web", node1, corev1.RestartPolicyAlways)
	nodeClient, _ := client(t, controlplane.NodeUser(node1))
	b, err := events.NewSeriesBroadcaster(events.DefaultSeriesBroadcasterOptions(), &kube.SeriesEventSink{Client: nodeClient.EventsV1()})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecorder("kubelet", node1, events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Eventf(pod, nil, corev1.EventTypeWarning, "Unhealthy", "Probe", "Readiness probe failed: %s", "exit 1")
	rec.Eventf(pod, nil, corev1.EventTypeWarning, "Unhealthy", "Probe", "Readiness probe failed: %s", "exit 1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := admin.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Series == nil || list.Items[0].Series.Count != 2 {
		t.Fatalf("want one event with series count 2, got %+v", list.Items)
	}
	ev := list.Items[0]
	if ev.Regarding.Name != "web" || ev.ReportingController != "kubelet" || ev.Reason != "Unhealthy" || ev.Action != "Probe" {
		t.Errorf("event fields: %+v", ev)
	}
	// The core/v1 view of the same event, as kubectl describe shows it.
	core, err := admin.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "web").String()})
	if err != nil || len(core.Items) != 1 || core.Items[0].Message != "Readiness probe failed: exit 1" {
		t.Fatalf("core/v1 view: %v %+v", err, core.Items)
	}
}
