package kube_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kubeversion"
)

// fleetClientset is fake.NewClientset whose watches hand out copies. The
// fake tracker's Watch sends the objects it stores, those changed between
// the informer's List and its Watch, without copying them, and the fleet's
// informer transform, which client-go lets change the object it is given in
// place, would then write into the tracker's store while a Get copies it.
func fleetClientset(objs ...runtime.Object) *fake.Clientset {
	cs := fake.NewClientset(objs...)
	cs.PrependWatchReactor("*", func(a clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := a.(clienttesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := cs.Tracker().Watch(a.GetResource(), a.GetNamespace(), opts)
		if err != nil {
			return true, nil, err
		}
		cw := &copyingWatch{in: w, out: make(chan watch.Event), stop: make(chan struct{})}
		go cw.loop()
		return true, cw, nil
	})
	return cs
}

// copyingWatch hands out copies of the objects of the watch in. Unlike
// watch.Filter's, its goroutine ends when it is stopped with an event not
// yet taken, so a stopped informer leaves none behind.
type copyingWatch struct {
	in   watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (w *copyingWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *copyingWatch) Stop() {
	w.once.Do(func() { close(w.stop) })
	w.in.Stop()
}

func (w *copyingWatch) loop() {
	defer close(w.out)
	for e := range w.in.ResultChan() {
		if e.Object != nil {
			e.Object = e.Object.DeepCopyObject()
		}
		select {
		case w.out <- e:
		case <-w.stop:
			return
		}
	}
}

// TestNewFleetRefuses: every field of FleetOptions is checked, and a refused
// one is an *OptionError naming it.
func TestNewFleetRefuses(t *testing.T) {
	cs := fake.NewClientset()
	cases := []struct {
		field string
		edit  func(*kube.FleetOptions)
	}{
		{"Nodes", func(o *kube.FleetOptions) { o.Nodes = 0 }},
		{"First", func(o *kube.FleetOptions) { o.First = -1 }},
		{"NamePrefix", func(o *kube.FleetOptions) { o.NamePrefix = "" }},
		{"NamePrefix", func(o *kube.FleetOptions) { o.NamePrefix = "Upper-" }},
		{"Shard", func(o *kube.FleetOptions) { o.Shard = "" }},
		{"Shard", func(o *kube.FleetOptions) { o.Shard = "a/b" }},
		{"PodCIDR", func(o *kube.FleetOptions) { o.PodCIDR = "fd00::/64" }},
		{"PodCIDR", func(o *kube.FleetOptions) { o.PodCIDR = "10.0.0.0/23" }}, // 2 subnets /24 for 3 nodes
		{"PodCIDR", func(o *kube.FleetOptions) { o.First = 254 }},             // indexes 254..256 of 256
		{"NodeCIDRMaskSize", func(o *kube.FleetOptions) { o.NodeCIDRMaskSize = 8 }},
		{"NodeCIDRMaskSize", func(o *kube.FleetOptions) { o.NodeCIDRMaskSize = 31 }},
		{"Listen", func(o *kube.FleetOptions) { o.Listen = "127.0.0.1:80" }},
		{"Node.Port", func(o *kube.FleetOptions) { o.Listen, o.Node.Port = "127.0.0.1", 65534 }},
		{"Node.Name", func(o *kube.FleetOptions) { o.Node.Name = "x" }},
		{"Node.PodCIDR", func(o *kube.FleetOptions) { o.Node.PodCIDR = "10.1.0.0/24" }},
		{"Node.Listen", func(o *kube.FleetOptions) { o.Node.Listen = ":1" }},
		{"Node.Address", func(o *kube.FleetOptions) { o.Node.Address = "nowhere" }},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			opts := kube.DefaultFleetOptions("fleet-", 3)
			tc.edit(&opts)
			_, err := kube.NewFleet(opts, cs)
			var oe *kube.OptionError
			if !errors.Is(err, kube.ErrInvalidOptions) || !errors.As(err, &oe) || oe.Field != tc.field {
				t.Fatalf("NewFleet: %v, want an *OptionError for %s", err, tc.field)
			}
		})
	}
	if _, err := kube.NewFleet(kube.DefaultFleetOptions("fleet-", 3), nil); !errors.Is(err, kube.ErrInvalidOptions) {
		t.Errorf("NewFleet(nil client): %v", err)
	}
	if err := new(kube.Fleet).Run(context.Background()); !errors.Is(err, kube.ErrNotInitialized) {
		t.Errorf("Run of the zero Fleet: %v", err)
	}
}

// TestFleetNodes: names from NamePrefix+First, pod CIDRs carved from the
// fleet's range by index, the shard label next to the template's labels.
func TestFleetNodes(t *testing.T) {
	opts := kube.DefaultFleetOptions("f-", 2)
	opts.First, opts.Shard, opts.PodCIDR, opts.NodeCIDRMaskSize = 511, "b", "10.0.0.0/8", 25
	opts.Node.Labels = map[string]string{"zone": "z"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := fleetClientset()
	f, err := kube.NewFleet(opts, cs)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.Nodes()); got != 2 || f.Nodes()[0].Name() != "f-511" || f.Nodes()[1].Name() != "f-512" {
		t.Fatalf("nodes %v", f.Nodes())
	}
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	want := map[string]string{"f-511": "10.0.255.128/25", "f-512": "10.1.0.0/25"}
	poll(t, "both nodes registered", func() bool { return f.Stats().Total.NodeReports >= 2 })
	byName := map[string]*kube.Node{}
	for _, n := range f.Nodes() {
		byName[n.Name()] = n
	}
	for name, cidr := range want {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := byName[name].PodCIDR(); got != cidr || n.Spec.PodCIDR != "" || n.Labels[kube.FleetShardLabel] != "b" || n.Labels["zone"] != "z" {
			t.Errorf("node %s: pod CIDR %s (spec.podCIDR %q) labels %v, want %s and none in the spec (the IPAM controller's), shard b, zone z",
				name, got, n.Spec.PodCIDR, n.Labels, cidr)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if err := f.Run(context.Background()); err == nil {
		t.Error("a second Run succeeded")
	}
}

// blockingRuntime returns a RuntimeFactory that blocks, for the pod named
// slow, until release is closed: that node's loop is stuck in admission.
func blockingRuntime(slow string, release <-chan struct{}) kube.RuntimeFactory {
	return func(pod *corev1.Pod) (kube.Runtime, error) {
		if pod.Name == slow {
			<-release
		}
		return kube.SimulatedRuntime(pod)
	}
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 20*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// TestFleetSlowNodeBlocksNoOther: with one node stuck on a pod, the other
// nodes of the fleet run theirs; a pod bound to a node outside the fleet is
// left alone; after Run returns no goroutine is left.
func TestFleetSlowNodeBlocksNoOther(t *testing.T) {
	defer goleak.VerifyNone(t)
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	}
	cs := fleetClientset(pod("slow", "f-0"), pod("quick", "f-1"), pod("also", "f-2"), pod("other", "elsewhere"))
	release := make(chan struct{})
	opts := kube.DefaultFleetOptions("f-", 3)
	opts.Node.Runtime = blockingRuntime("slow", release)
	f, err := kube.NewFleet(opts, cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	phase := func(name string) corev1.PodPhase {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Status.Phase
	}
	poll(t, "the pods of f-1 and f-2 Running", func() bool { return phase("quick") == corev1.PodRunning && phase("also") == corev1.PodRunning })
	if got := phase("slow"); got != "" {
		t.Errorf("the stuck pod has phase %q", got)
	}
	close(release)
	poll(t, "the stuck pod Running once released", func() bool { return phase("slow") == corev1.PodRunning })
	if got := phase("other"); got != "" {
		t.Errorf("the pod of a node outside the fleet has phase %q", got)
	}
	if st := f.Stats(); st.Nodes != 3 || st.Total.Admitted != 3 {
		t.Errorf("stats %+v, want 3 nodes, 3 pods admitted", st)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
}

// TestLeaseRenewedWithOnePut: a node reads its Lease once, then renews it
// with one PUT each time, as the kubelet does; when a PUT fails (the Lease
// was deleted) it reads or creates it again.
func TestLeaseRenewedWithOnePut(t *testing.T) {
	defer goleak.VerifyNone(t)
	cs := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	n, cancel, done := runFakeNode(t, "n", cs, clk)
	ctx := context.Background()
	leaseCalls := func() map[string]int {
		m := map[string]int{}
		for _, a := range cs.Actions() {
			if a.GetResource().Resource == "leases" {
				m[a.GetVerb()]++
			}
		}
		return m
	}
	renewals := func(want int) {
		t.Helper()
		poll(t, fmt.Sprintf("%d renewals", want), func() bool {
			if n.Stats().LeaseRenewals >= want {
				return true
			}
			clk.Step(time.Second)
			return false
		})
	}
	renewals(3)
	if got := leaseCalls(); got["get"] != 1 || got["create"] != 1 || got["update"] != 2 {
		t.Errorf("lease requests for 3 renewals %v, want 1 get, 1 create, 2 updates", got)
	}
	if err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, "n", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	renewals(4)
	if got := leaseCalls(); got["get"] != 2 || got["create"] != 2 || got["update"] != 3 {
		t.Errorf("lease requests after the Lease was deleted %v, want 2 gets, 2 creates, 3 updates (one failed)", got)
	}
	if _, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "n", metav1.GetOptions{}); err != nil {
		t.Errorf("the Lease was not created again: %v", err)
	}
	cancel()
	<-done
}

// TestFleetRefusesAnotherShardsNode: a Node of one of the fleet's names that
// carries another shard's label makes Run fail at registration: two
// processes never both write one Node.
func TestFleetRefusesAnotherShardsNode(t *testing.T) {
	defer goleak.VerifyNone(t)
	cs := fleetClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "f-1", Labels: map[string]string{kube.FleetShardLabel: "other"}}})
	f, err := kube.NewFleet(kube.DefaultFleetOptions("f-", 2), cs)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `register node f-1: another shard's node: it exists with label nodestate.io/shard="other", not "0"`) {
		t.Fatalf("Run: %v, want the shard conflict of f-1", err)
	}
}

// consecutiveFreePorts returns the first of n consecutive ports on
// 127.0.0.1 that were all free a moment ago (a port the system handed out
// need not have a free neighbour).
func consecutiveFreePorts(t *testing.T, n int) int {
	t.Helper()
	for try := 0; try < 100; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := l.Addr().(*net.TCPAddr).Port
		held := []net.Listener{l}
		for k := 1; k < n; k++ {
			lk, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+k)))
			if err != nil {
				break
			}
			held = append(held, lk)
		}
		for _, h := range held {
			h.Close()
		}
		if len(held) == n {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}

// TestFleetServes: with Listen, the k-th node serves on Node.Port+k and
// reports that port as its kubelet endpoint.
func TestFleetServes(t *testing.T) {
	defer goleak.VerifyNone(t)
	// The ports were free when consecutiveFreePorts closed them, but the
	// system may hand one to an outgoing connection before Run binds it: a
	// Run that ends with "address already in use" is started again on new
	// ports, up to three times.
	var (
		f      *kube.Fleet
		cs     *fake.Clientset
		base   int
		ctx    context.Context
		cancel context.CancelFunc
		done   = make(chan error, 1)
	)
	for attempt := 1; ; attempt++ {
		base = consecutiveFreePorts(t, 2)
		cs = fleetClientset()
		opts := kube.DefaultFleetOptions("s-", 2)
		opts.Listen, opts.Node.Port = "127.0.0.1", int32(base)
		var err error
		if f, err = kube.NewFleet(opts, cs); err != nil {
			t.Fatal(err)
		}
		ctx, cancel = context.WithCancel(context.Background())
		go func() { done <- f.Run(ctx) }()
		var ended error
		poll(t, "both nodes serving, or Run ended", func() bool {
			select {
			case ended = <-done:
				return true
			default:
				return f.Nodes()[0].ServingAddress() != "" && f.Nodes()[1].ServingAddress() != ""
			}
		})
		if ended == nil {
			break
		}
		cancel()
		if !errors.Is(ended, syscall.EADDRINUSE) || attempt == 3 {
			t.Fatalf("Run on ports %d and %d (attempt %d): %v", base, base+1, attempt, ended)
		}
		t.Logf("attempt %d: a port was taken before Run bound it: %v", attempt, ended)
	}
	for k, n := range f.Nodes() {
		want := net.JoinHostPort("127.0.0.1", strconv.Itoa(base+k))
		if got := n.ServingAddress(); got != want {
			t.Errorf("node %s serves on %s, want %s", n.Name(), got, want)
		}
		node, err := cs.CoreV1().Nodes().Get(ctx, n.Name(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := node.Status.DaemonEndpoints.KubeletEndpoint.Port; int(got) != base+k {
			t.Errorf("node %s reports port %d, want %d", n.Name(), got, base+k)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
}

// TestInvalidVersionRefused: NewNode and NewFleet refuse a Version in the
// node options that is none of kubeversion's constants, whether set in
// Lifecycle or Kubelet or kept by DefaultOptionsFor, with an
// *OptionError naming the field that matches ErrInvalidOptions and
// kubeversion.ErrUnsupportedVersion, instead of running the node as 1.37.
func TestInvalidVersionRefused(t *testing.T) {
	const bad = kubeversion.Version(99)
	cs := fake.NewClientset()
	cases := []struct {
		name  string
		field string
		edit  func(*kube.Options)
	}{
		{"invalid Version refused (Lifecycle)", "Lifecycle.Version", func(o *kube.Options) { o.Lifecycle.Version = bad }},
		{"invalid Version refused (Kubelet)", "Kubelet.Version", func(o *kube.Options) { o.Kubelet.Version = bad }},
		{"invalid Version refused (DefaultOptionsFor keeps it)", "Lifecycle.Version", func(o *kube.Options) {
			*o = kube.DefaultOptionsFor(o.Name, bad)
		}},
	}
	check := func(call, name, field string, err error) {
		t.Helper()
		var oe *kube.OptionError
		var ve *kubeversion.ValueError
		if !errors.Is(err, kube.ErrInvalidOptions) || !errors.Is(err, kubeversion.ErrUnsupportedVersion) ||
			!errors.As(err, &oe) || oe.Field != field || !errors.As(err, &ve) || ve.Version != bad {
			t.Errorf("%s: %s: %v; want an *OptionError on %s matching ErrInvalidOptions and ErrUnsupportedVersion", call, name, err, field)
		}
	}
	for _, tc := range cases {
		node := kube.DefaultOptions("node-1")
		tc.edit(&node)
		n, err := kube.NewNode(node, cs)
		if n != nil {
			t.Errorf("NewNode: %s: returned a node", tc.name)
		}
		check("NewNode", tc.name, tc.field, err)

		fleet := kube.DefaultFleetOptions("fleet-", 2)
		tc.edit(&fleet.Node)
		fleet.Node.Name, fleet.Node.PodCIDR = "", ""
		_, err = kube.NewFleet(fleet, cs)
		check("NewFleet", tc.name, "Node."+tc.field, err)
	}
	node := kube.DefaultOptions("node-1")
	node.Kubelet.Version = bad
	want := `kube: invalid options: Kubelet.Version "kubeversion.Version(99)": unsupported Kubernetes version, supported are 1.33 to 1.37`
	if _, err := kube.NewNode(node, cs); err == nil || err.Error() != want {
		t.Errorf("error text %v; want %s", err, want)
	}
}
