package kube

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// optRegNode returns a node called name with labels (nil for none) on a
// fake clientset holding existing.
func optRegNode(t *testing.T, name string, labels map[string]string, existing ...*corev1.Node) (*Node, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset()
	for _, o := range existing {
		if err := cs.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	opts := DefaultOptions(name)
	opts.Labels = labels
	n, err := NewNode(opts, cs)
	if err != nil {
		t.Fatal(err)
	}
	return n, cs
}

// optExistingNode is a Node as another process (or an earlier run) left it:
// no capacity, an old address, and the pod CIDR the cluster assigned.
func optExistingNode(name string, labels map[string]string, podCIDR string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.NodeSpec{PodCIDR: podCIDR},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.9.9.9"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 1}}}}
}

// optCountVerb counts the fake's requests of verb on nodes (subresource
// included).
func optCountVerb(cs *fake.Clientset, verb, subresource string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetResource().Resource == "nodes" && a.GetVerb() == verb && a.GetSubresource() == subresource {
			n++
		}
	}
	return n
}

// TestRegisterAdoptsExistingNode: a node whose Node already exists (a fleet
// node of the same shard, or a single node without a shard label) adopts
// it: it writes its capacity, allocatable, addresses and kubelet endpoint
// into the Node's status and takes the pod CIDR the cluster assigned it.
func TestRegisterAdoptsExistingNode(t *testing.T) {
	cases := []struct {
		name     string
		labels   map[string]string
		existing map[string]string
	}{
		{"fleet node of the same shard", map[string]string{FleetShardLabel: "a"}, map[string]string{FleetShardLabel: "a", "zone": "z"}},
		{"single node", nil, map[string]string{"zone": "z"}},
		{"single node over a fleet's Node", nil, map[string]string{FleetShardLabel: "a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, cs := optRegNode(t, "n1", tc.labels, optExistingNode("n1", tc.existing, "10.7.3.0/24"))
			if err := n.rep.register(context.Background()); err != nil {
				t.Fatalf("register: %v", err)
			}
			if got := optCountVerb(cs, "update", "status"); got != 1 {
				t.Errorf("%d status updates, want 1", got)
			}
			got, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := n.rep.nodeObject()
			cpu, wantCPU := got.Status.Capacity[corev1.ResourceCPU], want.Status.Capacity[corev1.ResourceCPU]
			if cpu.Cmp(wantCPU) != 0 || len(got.Status.Allocatable) != len(want.Status.Allocatable) {
				t.Errorf("capacity %v allocatable %v, want %v and %v", got.Status.Capacity, got.Status.Allocatable, want.Status.Capacity, want.Status.Allocatable)
			}
			if a := got.Status.Addresses; len(a) != 1 || a[0].Address != "127.0.0.1" || got.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
				t.Errorf("addresses %v port %d, want 127.0.0.1 and 10250", a, got.Status.DaemonEndpoints.KubeletEndpoint.Port)
			}
			if got.Status.NodeInfo.KubeletVersion != want.Status.NodeInfo.KubeletVersion {
				t.Errorf("kubelet version %q, want %q", got.Status.NodeInfo.KubeletVersion, want.Status.NodeInfo.KubeletVersion)
			}
			if n.PodCIDR() != "10.7.3.0/24" {
				t.Errorf("pod CIDR %s, want the cluster's 10.7.3.0/24", n.PodCIDR())
			}
			if node := n.rep.node; node == nil || node.Spec.PodCIDR != "10.7.3.0/24" {
				t.Errorf("the node keeps %v as its Node", node)
			}
		})
	}
}

// TestRegisterRefusesOtherShard: a fleet node whose Node exists with
// another shard's label (or none) does not take it over: register fails
// with errOtherShard naming both shards and writes nothing.
func TestRegisterRefusesOtherShard(t *testing.T) {
	for _, existing := range []map[string]string{{FleetShardLabel: "b"}, nil} {
		n, cs := optRegNode(t, "n1", map[string]string{FleetShardLabel: "a"}, optExistingNode("n1", existing, "10.7.3.0/24"))
		err := n.rep.register(context.Background())
		if !errors.Is(err, errOtherShard) {
			t.Fatalf("existing labels %v: register = %v, want errOtherShard", existing, err)
		}
		if want := `kube: register node n1: another shard's node: it exists with label nodestate.io/shard="` + existing[FleetShardLabel] + `", not "a"`; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
		if got := optCountVerb(cs, "update", "status"); got != 0 {
			t.Errorf("%d status updates, want none", got)
		}
		if n.PodCIDR() != "10.244.0.0/24" {
			t.Errorf("pod CIDR %s, want the node's own 10.244.0.0/24", n.PodCIDR())
		}
	}
}

// TestRegisterPodCIDR: the pod CIDR of the registered Node replaces the
// node's own only when it is a usable IPv4 range; a new Node (no
// spec.podCIDR yet) and one with an IPv6 or too small range leave the
// node's own.
func TestRegisterPodCIDR(t *testing.T) {
	cases := []struct {
		name     string
		existing *corev1.Node
		want     string
	}{
		{"new Node", nil, "10.244.0.0/24"},
		{"existing without pod CIDR", optExistingNode("n1", nil, ""), "10.244.0.0/24"},
		{"IPv6 pod CIDR", optExistingNode("n1", nil, "fd00::/64"), "10.244.0.0/24"},
		{"a /31", optExistingNode("n1", nil, "10.7.3.0/31"), "10.244.0.0/24"},
		{"a /30", optExistingNode("n1", nil, "10.7.3.4/30"), "10.7.3.4/30"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var existing []*corev1.Node
			if tc.existing != nil {
				existing = append(existing, tc.existing)
			}
			n, _ := optRegNode(t, "n1", nil, existing...)
			if err := n.rep.register(context.Background()); err != nil {
				t.Fatalf("register: %v", err)
			}
			if got := n.PodCIDR(); got != tc.want {
				t.Errorf("pod CIDR %s, want %s", got, tc.want)
			}
		})
	}
}
