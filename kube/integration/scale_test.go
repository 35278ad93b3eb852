package integration

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
)

var scalePods = flag.Int("nodestate.scale", 0, "run TestNodeScale with this many pods on one node (its figures go to the test log)")

// TestNodeScale measures one kube.Node running N pods on the real API server
// (go test -run TestNodeScale -nodestate.scale=1000 ./integration/): heap per
// running pod, the node's CPU per pod-second while the pods run, and the API
// requests per pod start (created to Ready). It fails when a pod does not
// become Ready. Off unless -nodestate.scale is set.
func TestNodeScale(t *testing.T) {
	if *scalePods <= 0 {
		t.Skip("set -nodestate.scale=N to measure a node with N pods")
	}
	const name = node5
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	ctx := context.Background()
	cs, calls := client(t, controlplane.NodeUser(name))
	opts := kube.DefaultOptions(name)
	opts.PodCIDR = "10.200.0.0/16"
	opts.Allocatable[corev1.ResourcePods] = resource.MustParse(fmt.Sprint(*scalePods + 10))
	opts.Capacity[corev1.ResourcePods] = resource.MustParse(fmt.Sprint(*scalePods + 10))
	n, err := kube.NewNode(opts, cs)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	nodeCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(nodeCtx) }()
	t.Cleanup(func() { stop(); <-done })
	waitFor(t, "the node registered", time.Minute, func(ctx context.Context) (bool, error) { return n.Stats().NodeReports > 0, nil })
	base := calls.total()

	for i := range *scalePods {
		pod := boundPod(ns, fmt.Sprintf("p%04d", i), name, corev1.RestartPolicyAlways, nil)
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every pod Ready", 10*time.Minute, func(ctx context.Context) (bool, error) {
		list, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, p := range list.Items {
			if c := findCond(p.Status.Conditions, corev1.PodReady); c != nil && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
		return ready == *scalePods, nil
	})
	requests := calls.total() - base
	runtime.GC()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)

	// CPU while the pods run: a minute of probes, resyncs, leases and status reports.
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	<-time.After(time.Minute) // a measurement over wall time, not a wait for a condition
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano()+r1.Stime.Nano()-r0.Utime.Nano()-r0.Stime.Nano()) * time.Nanosecond
	t.Logf("%d pods: %.1f KiB heap per running pod; %.1f µs CPU per pod-second; %.2f API requests per pod start (create to Ready, %d in all)",
		*scalePods, float64(int64(m1.HeapInuse)-int64(m0.HeapInuse))/1024/float64(*scalePods),
		float64(cpu.Microseconds())/float64(*scalePods)/60, float64(requests)/float64(*scalePods), requests)
}
