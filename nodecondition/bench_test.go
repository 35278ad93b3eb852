package nodecondition_test

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

// BenchmarkControllerMonitorSteady is one monitor pass over 5,000 healthy
// nodes with 30 pods each when nothing changed since the last pass.
func BenchmarkControllerMonitorSteady(b *testing.B) {
	const nodes, podsPerNode = 5000, 30
	c, err := nc.NewController(nc.DefaultControllerOptions())
	if err != nil {
		b.Fatal(err)
	}
	zones := []string{"z1", "z2", "z3"}
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		n := node(name, t2012, zoneLabels("r", zones[i%len(zones)]),
			cond(v1.NodeReady, v1.ConditionTrue, t12, t12), cond(v1.NodeMemoryPressure, v1.ConditionFalse, t12, t12),
			cond(v1.NodeDiskPressure, v1.ConditionFalse, t12, t12), cond(v1.NodePIDPressure, v1.ConditionFalse, t12, t12))
		if _, err := c.UpsertNode(t12, n); err != nil {
			b.Fatal(err)
		}
		c.UpsertLease(name, t12, "1")
		for j := range podsPerNode {
			c.UpsertPod(readyPod("default", fmt.Sprintf("%s-pod-%d", name, j), name))
		}
	}
	now := t12.Add(5 * time.Second)
	for range 2 { // settle the first-sight bookkeeping
		if _, err := c.Monitor(now, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p, err := c.Monitor(now, nil)
		if err != nil || len(p.Writes)+len(p.Taints)+len(p.PodsNotReady)+len(p.Zones) != 0 {
			b.Fatalf("steady pass changed something: %v %+v", err, p)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/nodes, "ns/node")
}

// BenchmarkKubeletObserve is the kubelet-side evaluation of one signal
// sample against the default hard thresholds plus a soft one.
func BenchmarkKubeletObserve(b *testing.B) {
	cfg := nc.DefaultKubeletOptions()
	cfg.Thresholds = append(cfg.Thresholds, nc.Threshold{Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Quantity: 2 << 30}, Soft: true, GracePeriod: time.Minute})
	k, err := nc.NewKubelet(noJitter(cfg))
	if err != nil {
		b.Fatal(err)
	}
	var s nc.Sample
	s.Set(nc.SignalMemoryAvailable, 1<<30, 16<<30)
	s.Set(nc.SignalNodeFsAvailable, 50<<30, 100<<30)
	s.Set(nc.SignalNodeFsInodesFree, 5e6, 6e6)
	s.Set(nc.SignalImageFsAvailable, 50<<30, 100<<30)
	s.Set(nc.SignalImageFsInodesFree, 5e6, 6e6)
	s.Set(nc.SignalPIDAvailable, 30000, 32768)
	now := t12
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(10 * time.Second)
		if _, err := k.Observe(now, &s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKubeletStatus is one status computation with the report rule,
// unchanged since the last report.
func BenchmarkKubeletStatus(b *testing.B) {
	k, err := nc.NewKubelet(noJitter(nc.DefaultKubeletOptions()))
	if err != nil {
		b.Fatal(err)
	}
	now := t12
	if _, err := k.Status(now, nc.Health{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		if _, err := k.Status(now, nc.Health{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTolerationTime evaluates default tolerations against an unreachable taint.
func BenchmarkTolerationTime(b *testing.B) {
	tols := nc.WithDefaultTolerations(nil, 300, 300)
	taints := []v1.Taint{{Key: nc.TaintUnreachable, Effect: v1.TaintEffectNoExecute}, {Key: nc.TaintUnreachable, Effect: v1.TaintEffectNoSchedule}}
	b.ReportAllocs()
	for b.Loop() {
		if ok, d := nc.TolerationTime(tols, taints); !ok || d != 300*time.Second {
			b.Fatal(ok, d)
		}
	}
}

// TestHotPathsAllocateNothing keeps the zero-allocation claims true in
// every test run, not only in benchmarks.
func TestHotPathsAllocateNothing(t *testing.T) {
	c, _ := nc.NewController(nc.DefaultControllerOptions())
	for i := range 100 {
		name := fmt.Sprintf("node-%03d", i)
		c.UpsertNode(t12, node(name, t2012, zoneLabels("r", fmt.Sprint(i%3)), cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
		c.UpsertLease(name, t12, "1")
		for j := range 30 {
			c.UpsertPod(readyPod("default", fmt.Sprintf("%s-%d", name, j), name))
		}
	}
	now := t12.Add(5 * time.Second)
	c.Monitor(now, nil)
	c.Monitor(now, nil)
	if a := testing.AllocsPerRun(20, func() { c.Monitor(now, nil) }); a != 0 {
		t.Errorf("steady Monitor allocates %v times per pass", a)
	}
	if a := testing.AllocsPerRun(20, func() { c.Taint(now) }); a != 0 {
		t.Errorf("idle Taint allocates %v times per pass", a)
	}
	k, _ := nc.NewKubelet(noJitter(nc.DefaultKubeletOptions()))
	s := memSample(1 << 30)
	kt := t12
	k.Status(kt, nc.Health{})
	if a := testing.AllocsPerRun(20, func() { kt = kt.Add(time.Second); k.Observe(kt, s) }); a != 0 {
		t.Errorf("Observe allocates %v times", a)
	}
	if a := testing.AllocsPerRun(20, func() { kt = kt.Add(time.Second); k.Status(kt, nc.Health{}) }); a != 0 {
		t.Errorf("unchanged Status allocates %v times", a)
	}
}
