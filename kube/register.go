package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/kubeversion"
)

// The kubelet's registration back-off: the first retry after
// registerRetryFirst, doubling up to registerRetryMax.
const (
	registerRetryFirst = 100 * time.Millisecond
	registerRetryMax   = 7 * time.Second
)

// registerUntilDone registers the node, trying again after each failure
// until it succeeds or ctx ends.
func (n *reporter) registerUntilDone(ctx context.Context) error {
	delay := registerRetryFirst
	for {
		err := n.register(ctx)
		if err == nil || errors.Is(err, errOtherShard) {
			return err // another shard's Node is a configuration error, not a passing one
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n.count(func(s *NodeStats) { s.RegisterErrors++ })
		n.log.Error(err, "node registration failed; trying again", "after", delay)
		t := n.clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
		delay = min(2*delay, registerRetryMax)
	}
}

// errOtherShard is the registration error of a fleet node whose Node
// carries another shard's label.
var errOtherShard = errors.New("another shard's node")

// register creates the Node, or adopts it when it exists, and takes the pod
// CIDR the cluster assigned it.
func (n *reporter) register(ctx context.Context) error {
	want := n.nodeObject()
	nodes := n.client.CoreV1().Nodes()
	got, err := nodes.Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		got, err = nodes.Get(ctx, n.opts.Name, metav1.GetOptions{})
		if shard, ok := n.opts.Labels[FleetShardLabel]; err == nil && ok && got.Labels[FleetShardLabel] != shard {
			// Another shard's node: taking it over would make two processes
			// write one Node and one Lease.
			return fmt.Errorf("kube: register node %s: %w: it exists with label %s=%q, not %q", n.opts.Name, errOtherShard, FleetShardLabel, got.Labels[FleetShardLabel], shard)
		}
		if err == nil {
			got.Status.Capacity, got.Status.Allocatable = want.Status.Capacity, want.Status.Allocatable
			got.Status.Addresses, got.Status.DaemonEndpoints, got.Status.NodeInfo = want.Status.Addresses, want.Status.DaemonEndpoints, want.Status.NodeInfo
			got, err = nodes.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("kube: register node %s: %w", n.opts.Name, err)
	}
	n.setNode(got)
	if got.Spec.PodCIDR != "" {
		if _, err := podCIDR(got.Spec.PodCIDR); err == nil {
			n.podCIDR(got.Spec.PodCIDR)
		}
	}
	return nil
}

// kubeletVersionOf is the release a node of lifecycle version v reports.
func kubeletVersionOf(v kubeversion.Version) string {
	if v.Valid() {
		return v.Release()
	}
	return KubeletVersion
}

// The kubelet's deprecated beta labels of the node's OS and architecture,
// which it still sets at registration, and its annotation that the
// attach/detach controller manages the node's volumes.
const (
	labelBetaOS                = "beta.kubernetes.io/os"
	labelBetaArch              = "beta.kubernetes.io/arch"
	annotationControllerAttach = "volumes.kubernetes.io/controller-managed-attach-detach"
)

// nodeObject is the Node the node registers: KubeletNode of its options.
func (n *reporter) nodeObject() *corev1.Node { return KubeletNode(*n.opts) }

// KubeletNode returns the Node a kubelet with these options registers (the
// kubelet's initialNode and status setters): its hostname, OS and
// architecture labels (the beta ones too) and opts.Labels; the
// controller-managed attach/detach annotation; opts.Taints; capacity and
// allocatable; the InternalIP, and the Hostname address when opts.Hostname
// is set; the kubelet endpoint port; nodeInfo with the kubelet version of
// opts.Lifecycle.Version; and the declared features of that minor (what
// component-helpers' node declared features framework discovers from its
// default gates, none before 1.36). Like the kubelet it sets no status.phase
// and leaves spec.podCIDR to the cluster's node IPAM controller. A node
// agent of its own (the vk module's provider) registers the same Node; it
// carries no conditions, which the first status report writes.
func KubeletNode(opts Options) *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname: opts.Name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
		labelBetaOS: "linux", labelBetaArch: "amd64",
	}
	for k, v := range opts.Labels {
		labels[k] = v
	}
	version := kubeletVersionOf(opts.Lifecycle.Version)
	notInUserNamespace := false
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Labels: labels,
			Annotations: map[string]string{annotationControllerAttach: "true"}},
		Spec: corev1.NodeSpec{Taints: slices.Clone(opts.Taints)},
		Status: corev1.NodeStatus{
			Capacity: opts.Capacity.DeepCopy(), Allocatable: opts.Allocatable.DeepCopy(),
			Addresses:       addresses(opts),
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: opts.Port}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: opts.Name, SystemUUID: opts.Name, BootID: opts.Name,
				KernelVersion: "nodestate", OSImage: "nodestate simulated node",
				ContainerRuntimeVersion: opts.RuntimeVersion,
				KubeletVersion:          version, OperatingSystem: "linux", Architecture: "amd64",
				RunningInUserNamespace: &notInUserNamespace,
			},
			DeclaredFeatures: declaredFeatures(opts.Lifecycle.Version),
		},
	}
}

// addresses are the node's addresses in the kubelet's order: the InternalIP,
// then the Hostname when there is one.
func addresses(opts Options) []corev1.NodeAddress {
	out := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: opts.Address}}
	if opts.Hostname != "" {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeHostName, Address: opts.Hostname})
	}
	return out
}
