package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// optT0 is the fake clocks' start.
var optT0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// TestNewNodePort: the kubelet endpoint port may be 0 (a node that reports
// no port), never negative.
func TestNewNodePort(t *testing.T) {
	opts := DefaultOptions("n1")
	opts.Port = 0
	n, err := NewNode(opts, fake.NewClientset())
	if err != nil {
		t.Fatalf("port 0: %v", err)
	}
	if got := n.rep.nodeObject().Status.DaemonEndpoints.KubeletEndpoint.Port; got != 0 {
		t.Errorf("port 0 reported as %d", got)
	}
	opts.Port = -1
	var oe *OptionError
	if _, err := NewNode(opts, fake.NewClientset()); !errors.As(err, &oe) || oe.Field != "Port" {
		t.Errorf("port -1: %v, want an *OptionError on Port", err)
	}
}

// TestNodePodCIDROption: a node's pod CIDR is an IPv4 range of at least 4
// addresses (a /30 at most); anything else is refused as PodCIDR.
func TestNodePodCIDROption(t *testing.T) {
	cases := []struct {
		cidr string
		ok   bool
	}{
		{"10.0.0.0/30", true},
		{"10.0.0.0/8", true},
		{"10.0.0.0/31", false},
		{"10.0.0.1/32", false},
		{"fd00::/16", false},
		{"fd00::/126", false},
		{"10.0.0.0", false},
		{"", false},
	}
	for _, tc := range cases {
		_, perr := podCIDR(tc.cidr)
		opts := DefaultOptions("n1")
		opts.PodCIDR = tc.cidr
		n, err := NewNode(opts, fake.NewClientset())
		var oe *OptionError
		if tc.ok {
			if perr != nil || err != nil || n.PodCIDR() != tc.cidr {
				t.Errorf("%q: podCIDR %v, NewNode %v; want accepted", tc.cidr, perr, err)
			}
			continue
		}
		if perr == nil || !errors.As(err, &oe) || oe.Field != "PodCIDR" {
			t.Errorf("%q: podCIDR %v, NewNode %v; want refused as PodCIDR", tc.cidr, perr, err)
		}
	}
}

// optRunnerPod adds a pod whose container app behaves as clauses to n's
// runner, after a first Advance at optT0 (the relists count from there).
func optRunnerPod(t *testing.T, n *Node, uid, clauses string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + uid, Namespace: "ns", UID: types.UID(uid), ResourceVersion: "1",
		Annotations: map[string]string{BehaviourAnnotationPrefix + "app": clauses}},
		Spec: corev1.PodSpec{NodeName: n.Name(), RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "app", Image: "img"}}}}
	rt, err := SimulatedRuntime(pod)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.runner.Add(pod, rt); err != nil {
		t.Fatal(err)
	}
	return pod
}

// TestNodeSeesShortRunExited: a node's runner reads the runtime on demand
// 10 ms after a sync's calls, as the kubelet's relist does, so a container
// that runs 1 ms is seen exited with its start, never running, and well
// before the next periodic relist (1 s).
func TestNodeSeesShortRunExited(t *testing.T) {
	clk := clocktesting.NewFakeClock(optT0)
	opts := DefaultOptions("n1")
	opts.Clock = clk
	n, err := NewNode(opts, fake.NewClientset())
	if err != nil {
		t.Fatal(err)
	}
	n.runner.Advance(optT0)
	clk.Step(300 * time.Millisecond)
	pod := optRunnerPod(t, n, "short", "run 1ms exit 0")
	var done time.Duration
	for now := clk.Now(); !now.IsZero() && done == 0; {
		clk.SetTime(now)
		next := n.runner.Advance(now)
		st, _ := n.runner.Status(pod.UID)
		for _, cs := range st.ContainerStatuses {
			if cs.State.Running != nil {
				t.Fatalf("at %v the container shows running: %+v", now.Sub(optT0), cs.State)
			}
		}
		if st.Phase == corev1.PodSucceeded {
			done = now.Sub(optT0)
		}
		now = next
	}
	if done == 0 || done >= time.Second {
		t.Fatalf("the pod succeeded at %v, want with its start's answers, before the relist at 1s", done)
	}
}

// TestNodeStatusRequestMetric: each status request of the node's engine is
// counted in nodestate_status_requests_total by verb and result: a PATCH
// the server takes as "success", one it refuses as "error"; the user's
// Request hook sees every one with its error.
func TestNodeStatusRequestMetric(t *testing.T) {
	for _, fail := range []bool{false, true} {
		cs := fake.NewClientset()
		if fail {
			cs.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewInternalError(errors.New("etcd is down"))
			})
		}
		clk := clocktesting.NewFakeClock(optT0)
		opts := DefaultOptions("n1")
		opts.Clock = clk
		var hooked []error
		opts.Status.Hooks.Request = func(verb string, err error) {
			if verb == "patch" {
				hooked = append(hooked, err)
			}
		}
		n, err := NewNode(opts, cs)
		if err != nil {
			t.Fatal(err)
		}
		n.runner.Advance(optT0)
		pod := optRunnerPod(t, n, "m", "run 1h exit 0")
		if err := cs.Tracker().Add(pod); err != nil {
			t.Fatal(err)
		}
		n.runner.Advance(optT0)
		n.engine.Observe(pod)
		n.engine.SyncOnce(context.Background(), false)
		success := metricValue(t, n.metrics.requests.WithLabelValues("patch", "success"))
		failed := metricValue(t, n.metrics.requests.WithLabelValues("patch", "error"))
		if want := map[bool][2]float64{false: {1, 0}, true: {0, 1}}[fail]; success != want[0] || failed != want[1] {
			t.Errorf("server failing %v: %v successful and %v failed patches counted, want %v", fail, success, failed, want)
		}
		if len(hooked) != 1 || (hooked[0] != nil) != fail {
			t.Errorf("server failing %v: the Request hook saw %v", fail, hooked)
		}
	}
}
