package nodecondition_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

// Memory pressure holds for the transition period after the last observation.
func ExampleKubelet_pressureTransition() {
	opts := nc.DefaultKubeletOptions()
	opts.Rand = rand.New(rand.NewPCG(1, 2)) // the one-time report jitter, seeded
	k, _ := nc.NewKubelet(opts)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s nc.Sample
	for _, step := range []struct {
		at    time.Duration
		avail int64
	}{{0, 50 << 20}, {10 * time.Second, 4 << 30}, {4 * time.Minute, 4 << 30}, {5 * time.Minute, 4 << 30}} {
		s.Set(nc.SignalMemoryAvailable, step.avail, 16<<30)
		p, _ := k.Observe(t0.Add(step.at), &s)
		r, _ := k.Status(t0.Add(step.at), nc.Health{})
		fmt.Println(step.at, p.Reported.Memory, r.Conditions[0].Reason, r.Reason)
	}
	// Output:
	// 0s true KubeletHasInsufficientMemory first report
	// 10s true KubeletHasInsufficientMemory not sent
	// 4m0s true KubeletHasInsufficientMemory not sent
	// 5m0s false KubeletHasSufficientMemory changed
}

// The controller marks a node Unknown once the grace period has passed
// without a heartbeat, and lists its pods to mark not ready.
func ExampleController_Monitor() {
	c, _ := nc.NewController(nc.DefaultControllerOptions())
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))},
		Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue,
			LastHeartbeatTime: metav1.NewTime(t0), LastTransitionTime: metav1.NewTime(t0)}}},
	}
	c.UpsertNode(t0, node)
	c.UpsertPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: v1.PodSpec{NodeName: "node-1"},
		Status: v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}}})
	for _, at := range []time.Duration{0, 50 * time.Second, 55 * time.Second} {
		p, _ := c.Monitor(t0.Add(at), nil)
		for _, w := range p.Writes {
			fmt.Println(at, w.Node, w.Conditions[0].Type, w.Conditions[0].Status, w.Conditions[0].Reason)
		}
		for _, pod := range p.PodsNotReady {
			fmt.Println(at, "not ready:", pod.Namespace+"/"+pod.Name)
		}
		for _, t := range p.Taints {
			fmt.Println(at, "taint", t.Taint.Key, t.Taint.Effect, t.Added)
		}
	}
	// Output:
	// 55s node-1 Ready Unknown NodeStatusUnknown
	// 55s not ready: default/web
	// 55s taint node.kubernetes.io/unreachable NoSchedule true
}

// The taint-eviction controller keeps a pending deletion when the taint is
// swapped, and cancels it when the taints go.
func ExampleEvictor() {
	e := nc.NewEvictor()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := nc.PodKey{Namespace: "default", Name: "web"}
	tols := nc.WithDefaultTolerations(nil, nc.DefaultTolerationSeconds, nc.DefaultTolerationSeconds)
	unreachable := []v1.Taint{{Key: nc.TaintUnreachable, Effect: v1.TaintEffectNoExecute}}
	notReady := []v1.Taint{{Key: nc.TaintNotReady, Effect: v1.TaintEffectNoExecute}}
	for _, step := range []struct {
		at     time.Duration
		taints []v1.Taint
	}{{0, unreachable}, {time.Minute, notReady}, {2 * time.Minute, nil}} {
		d := e.Evaluate(t0.Add(step.at), pod, tols, step.taints)
		if d.At.IsZero() {
			fmt.Println(step.at, d.Action)
			continue
		}
		fmt.Println(step.at, d.Action, "at", d.At.Sub(t0))
	}
	// Output:
	// 0s schedule at 5m0s
	// 1m0s kept at 5m0s
	// 2m0s cancel
}

// Thresholds in the kubelet's flag form.
func ExampleParseThresholds() {
	hard, _ := nc.ParseThresholdList("memory.available<100Mi,nodefs.available<10%")
	soft, _ := nc.ParseThresholdList("memory.available<2Gi")
	ts, err := nc.ParseThresholds(hard, soft, map[string]string{"memory.available": "2m"}, nil)
	fmt.Println(ts, err)
	_, err = nc.ParseThresholds(map[string]string{"memory.available": "lots"}, nil, nil, nil)
	fmt.Println(err)
	// Output:
	// [memory.available<100Mi nodefs.available<10% memory.available<2Gi (soft, grace 2m0s)] <nil>
	// nodecondition: invalid eviction threshold "memory.available<lots": unparseable quantity
}

// The lease is renewed every 10 s; failures back off from 200 ms to 7 s.
func ExampleLeaseRenewer() {
	opts := nc.DefaultKubeletOptions()
	opts.LoopJitter = 0 // renew exactly every 10 s
	r, _ := nc.NewLeaseRenewer(opts, "node-1")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spec, next, _ := r.Renewed(t0)
	fmt.Println(*spec.HolderIdentity, *spec.LeaseDurationSeconds, next.Sub(t0))
	now := next
	for range 3 {
		retry, _ := r.Failed(now)
		fmt.Println(retry.Sub(now))
		now = retry
	}
	// Output:
	// node-1 40 10s
	// 200ms
	// 400ms
	// 800ms
}
