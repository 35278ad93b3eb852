package kube

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// optNewFleet returns NewFleet's fleet for opts on a fake clientset, or
// fails the test.
func optNewFleet(t *testing.T, opts FleetOptions) *Fleet {
	t.Helper()
	f, err := NewFleet(opts, fake.NewClientset())
	if err != nil {
		t.Fatalf("NewFleet: %v", err)
	}
	return f
}

// optFleetRefusal returns the *OptionError NewFleet gives for opts, or
// fails the test.
func optFleetRefusal(t *testing.T, opts FleetOptions) *OptionError {
	t.Helper()
	_, err := NewFleet(opts, fake.NewClientset())
	var oe *OptionError
	if !errors.As(err, &oe) {
		t.Fatalf("NewFleet: %v, want an *OptionError", err)
	}
	return oe
}

// TestNewFleetBounds: the limits of FleetOptions are inclusive: a fleet of
// one node; node names of exactly 253 characters, the first and the last
// index both checked; a NodeCIDRMaskSize equal to PodCIDR's prefix length
// (one node with the whole range) or 30 (4 addresses a node); a Listen host
// that is a name or an IPv6 address; the last node on port 65535.
func TestNewFleetBounds(t *testing.T) {
	one := DefaultFleetOptions("f-", 1)
	one.PodCIDR = "10.1.2.0/24"
	if f := optNewFleet(t, one); len(f.Nodes()) != 1 || f.Nodes()[0].PodCIDR() != "10.1.2.0/24" {
		t.Errorf("a fleet of one with the whole range: nodes %v", f.Nodes())
	}

	long := DefaultFleetOptions(strings.Repeat("a", 252), 5)
	long.First = 5 // indexes 5 to 9: names of 253 characters
	if f := optNewFleet(t, long); len(f.Nodes()) != 5 || len(f.Nodes()[4].Name()) != 253 {
		t.Errorf("names of 253 characters: nodes %v", f.Nodes())
	}
	long.Nodes = 6 // index 10: a name of 254 characters
	if oe := optFleetRefusal(t, long); oe.Field != "NamePrefix" || !strings.Contains(oe.Reason, "10: ") {
		t.Errorf("a last name of 254 characters: %v, want NamePrefix refused for index 10", oe)
	}

	small := DefaultFleetOptions("f-", 4)
	small.PodCIDR, small.NodeCIDRMaskSize = "10.1.2.0/28", 30
	f := optNewFleet(t, small)
	for k, want := range []string{"10.1.2.0/30", "10.1.2.4/30", "10.1.2.8/30", "10.1.2.12/30"} {
		if got := f.Nodes()[k].PodCIDR(); got != want {
			t.Errorf("node %d of /30s: pod CIDR %s, want %s", k, got, want)
		}
	}

	for _, host := range []string{"localhost", "::1", "127.0.0.1"} {
		opts := DefaultFleetOptions("f-", 3)
		opts.Listen, opts.Node.Port = host, 65533
		f := optNewFleet(t, opts)
		for k, n := range f.Nodes() {
			want := net.JoinHostPort(host, strconv.Itoa(65533+k))
			if n.opts.Listen != want || n.rep.nodeObject().Status.DaemonEndpoints.KubeletEndpoint.Port != int32(65533+k) {
				t.Errorf("Listen %s: node %d listens on %s reporting port %d, want %s", host, k, n.opts.Listen,
					n.rep.nodeObject().Status.DaemonEndpoints.KubeletEndpoint.Port, want)
			}
		}
	}
}

// TestNewFleetRefusalReasons: a serving fleet needs a port from 1 up
// (port 0 is refused as Node.Port), and a PodCIDR with too few subnets is
// refused with the number of subnets and the last node index it needed.
func TestNewFleetRefusalReasons(t *testing.T) {
	opts := DefaultFleetOptions("f-", 2)
	opts.Listen, opts.Node.Port = "127.0.0.1", 0
	if oe := optFleetRefusal(t, opts); oe.Field != "Node.Port" {
		t.Errorf("port 0: %v, want Node.Port refused", oe)
	}

	opts = DefaultFleetOptions("f-", 2)
	opts.First, opts.PodCIDR = 1, "10.0.0.0/23"
	oe := optFleetRefusal(t, opts)
	if want := "has 2 subnets /24, node indexes go to 2"; oe.Field != "PodCIDR" || oe.Reason != want {
		t.Errorf("indexes 1 and 2 in 2 subnets: %s %q, want PodCIDR %q", oe.Field, oe.Reason, want)
	}
}

// optDriveRunner makes n's runner do some work at optT0: sync pods of
// its own and take updates of them, one of them changing a label (a
// sync) and one changing the status alone (none).
func optDriveRunner(t *testing.T, n *Node, pods int) {
	t.Helper()
	n.runner.Advance(optT0)
	for i := range pods {
		pod := optRunnerPod(t, n, n.Name()+"-"+strconv.Itoa(i), "run 1h exit 0")
		n.runner.Advance(optT0)
		relabelled := pod.DeepCopy()
		relabelled.ResourceVersion, relabelled.Labels = "2", map[string]string{"a": "b"}
		statusOnly := relabelled.DeepCopy()
		statusOnly.ResourceVersion, statusOnly.Status.Message = "3", "seen"
		for _, p := range []*corev1.Pod{relabelled, statusOnly} {
			if err := n.runner.Update(p); err != nil {
				t.Fatal(err)
			}
			n.runner.Advance(optT0)
		}
	}
}

// TestFleetStatsSums: a fleet's Stats counts its nodes and its Total is,
// field by field, the sum of its nodes' NodeStats: the node's own counts
// and those of its pod runner (syncs, pod updates).
func TestFleetStatsSums(t *testing.T) {
	opts := DefaultFleetOptions("f-", 2)
	opts.Node.Clock = clocktesting.NewFakeClock(optT0)
	f := optNewFleet(t, opts)
	for k, n := range f.Nodes() {
		optDriveRunner(t, n, k+1)
		n.count(func(s *NodeStats) {
			v := reflect.ValueOf(s).Elem()
			for i := range v.NumField() {
				v.Field(i).SetInt(int64(10*(k+1) + i))
			}
		})
	}
	st := f.Stats()
	if st.Nodes != 2 {
		t.Errorf("Nodes %d, want 2", st.Nodes)
	}
	want := reflect.New(reflect.TypeOf(NodeStats{})).Elem()
	for _, n := range f.Nodes() {
		s := reflect.ValueOf(n.Stats())
		for i := range s.NumField() {
			want.Field(i).SetInt(want.Field(i).Int() + s.Field(i).Int())
		}
	}
	got := reflect.ValueOf(st.Total)
	for i := range got.NumField() {
		name := got.Type().Field(i).Name
		if want.Field(i).Int() == 0 {
			t.Errorf("%s: the nodes counted nothing", name)
		}
		if got.Field(i).Int() != want.Field(i).Int() {
			t.Errorf("Total.%s = %d, want the nodes' sum %d", name, got.Field(i).Int(), want.Field(i).Int())
		}
	}
	if got := new(Fleet).Stats(); got != (FleetStats{}) {
		t.Errorf("the zero Fleet's Stats %+v, want none", got)
	}
}

// optPoll waits, up to 20 s, for cond.
func optPoll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 2*time.Millisecond, 20*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// TestNodeServesUntilStopped: a node with Listen serves once registered
// and runs on until its context ends (ServingAddress is the bound
// address); a node that cannot listen makes Run return the listen error.
func TestNodeServesUntilStopped(t *testing.T) {
	defer goleak.VerifyNone(t)
	opts := DefaultOptions("n1")
	opts.Clock = clocktesting.NewFakeClock(optT0)
	opts.Listen = "127.0.0.1:0"
	n, err := NewNode(opts, fake.NewClientset())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	var ended error
	var stopped bool
	optPoll(t, "the node serving, or Run ended", func() bool {
		select {
		case ended = <-done:
			stopped = true
			return true
		default:
			return n.ServingAddress() != ""
		}
	})
	if stopped {
		t.Fatalf("Run ended before its context: %v", ended)
	}
	if host, _, err := net.SplitHostPort(n.ServingAddress()); err != nil || host != "127.0.0.1" {
		t.Errorf("serving on %q, want 127.0.0.1:<port>", n.ServingAddress())
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}

	opts.Name, opts.Listen = "n2", "127.0.0.1:no-port"
	if n, err = NewNode(opts, fake.NewClientset()); err != nil {
		t.Fatal(err)
	}
	if err := n.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "listen on 127.0.0.1:no-port") {
		t.Errorf("Run of a node that cannot listen: %v", err)
	}
}

// optCtxClient is a fake clientset whose event writes fail, as a real
// client's do, when their context has ended; the first event write waits
// for gate.release (outside the fake's lock, which a reactor would hold).
type optCtxClient struct {
	*fake.Clientset
	gate *optGate
}

// optGate holds the first event write until release is closed.
type optGate struct {
	once             sync.Once
	entered, release chan struct{}
}

func (c optCtxClient) CoreV1() typedcorev1.CoreV1Interface {
	return optCtxCore{c.Clientset.CoreV1(), c.gate}
}

type optCtxCore struct {
	typedcorev1.CoreV1Interface
	gate *optGate
}

func (c optCtxCore) Events(ns string) typedcorev1.EventInterface {
	return optCtxEvents{c.CoreV1Interface.Events(ns), c.gate}
}

type optCtxEvents struct {
	typedcorev1.EventInterface
	gate *optGate
}

func (e optCtxEvents) CreateWithEventNamespaceWithContext(ctx context.Context, ev *corev1.Event) (*corev1.Event, error) {
	e.gate.once.Do(func() {
		close(e.gate.entered)
		<-e.gate.release
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.EventInterface.CreateWithEventNamespaceWithContext(ctx, ev)
}

func (e optCtxEvents) PatchWithEventNamespaceWithContext(ctx context.Context, ev *corev1.Event, data []byte) (*corev1.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.EventInterface.PatchWithEventNamespaceWithContext(ctx, ev, data)
}

// TestRunFlushesEventsOnStop: when its context ends, Run stops taking
// events and writes those its broadcaster still holds before it returns
// (within a bound of seconds), here behind a slow write: none is dropped.
func TestRunFlushesEventsOnStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	cs := fake.NewClientset()
	gate := &optGate{entered: make(chan struct{}), release: make(chan struct{})}
	var releaseOnce sync.Once
	opts := DefaultOptions("n1")
	opts.Clock = clocktesting.NewFakeClock(optT0)
	n, err := NewNode(opts, optCtxClient{cs, gate})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() { releaseOnce.Do(func() { close(gate.release) }) }()
	select {
	case <-gate.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("no event was written")
	}
	held := []string{"OptHeldA", "OptHeldB", "OptHeldC"}
	for _, reason := range held {
		if err := n.rec.Record(n.nodeRef(), nil, corev1.EventTypeNormal, reason, "held behind a slow write"); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	// Once the broadcaster refuses events, Run is shutting it down.
	optPoll(t, "the broadcaster shutting down", func() bool {
		_ = n.rec.Record(n.nodeRef(), nil, corev1.EventTypeNormal, "OptLate", "after the stop")
		return n.bcast.Stats().DroppedAfterShutdown > 0
	})
	releaseOnce.Do(func() { close(gate.release) })
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if st := n.bcast.Stats().Sinks[0]; st.DroppedShutdown != 0 || st.Queued != 0 {
		t.Errorf("sink stats %+v, want nothing dropped or left at shutdown", st)
	}
	list, err := cs.CoreV1().Events(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, ev := range list.Items {
		written[ev.Reason] = true
	}
	for _, reason := range held {
		if !written[reason] {
			t.Errorf("event %s not written (written: %v)", reason, written)
		}
	}
}
