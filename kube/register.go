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
)

// The kubelet's registration back-off: the first retry after
// registerRetryFirst, doubling up to registerRetryMax.
const (
	registerRetryFirst = 100 * time.Millisecond
	registerRetryMax   = 7 * time.Second
)

// registerUntilDone registers the node, trying again after each failure
// until it succeeds or ctx ends.
func (n *Node) registerUntilDone(ctx context.Context) error {
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
func (n *Node) register(ctx context.Context) error {
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
	if got.Spec.PodCIDR != "" && got.Spec.PodCIDR != n.runner.PodCIDR() {
		if _, err := podCIDR(got.Spec.PodCIDR); err == nil {
			_ = n.runner.SetPodCIDR(got.Spec.PodCIDR)
		}
	}
	return nil
}

// kubeletVersion is the release the node reports: its lifecycle version's.
func (n *Node) kubeletVersion() string {
	if v := n.opts.Lifecycle.Version; v.Valid() {
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

// nodeObject is the Node the kubelet registers (its initialNode): its
// hostname, OS and architecture labels (the beta ones too) and the node's
// own; the attach/detach annotation; the registration taints; and the
// status its setters fill. Like the kubelet it leaves spec.podCIDR to the
// cluster's node IPAM controller: the node hands out pod IPs from its
// NodeOptions.PodCIDR, or from the spec.podCIDR the controller assigns.
func (n *Node) nodeObject() *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname: n.opts.Name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
		labelBetaOS: "linux", labelBetaArch: "amd64",
	}
	for k, v := range n.opts.Labels {
		labels[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.opts.Name, Labels: labels,
			Annotations: map[string]string{annotationControllerAttach: "true"}},
		Spec: corev1.NodeSpec{Taints: slices.Clone(n.opts.Taints)},
		Status: corev1.NodeStatus{
			Capacity: n.opts.Capacity.DeepCopy(), Allocatable: n.opts.Allocatable.DeepCopy(),
			Addresses:       n.addresses(),
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: n.opts.Port}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: n.opts.Name, SystemUUID: n.opts.Name, BootID: n.opts.Name,
				KernelVersion: "nodestate", OSImage: "nodestate simulated node",
				ContainerRuntimeVersion: "nodestate://" + n.kubeletVersion(),
				KubeletVersion:          n.kubeletVersion(), OperatingSystem: "linux", Architecture: "amd64",
			},
			DeclaredFeatures: declaredFeatures(n.opts.Lifecycle.Version),
		},
	}
}

// addresses are the node's addresses in the kubelet's order: the InternalIP,
// then the Hostname when there is one.
func (n *Node) addresses() []corev1.NodeAddress {
	out := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.opts.Address}}
	if n.opts.Hostname != "" {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeHostName, Address: n.opts.Hostname})
	}
	return out
}
