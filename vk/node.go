package vk

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/nodecondition"
)

// Ping reports the node healthy while ctx lasts (a nil ctx never ends):
// virtual-kubelet's node controller renews the Lease and writes the node
// status only while Ping succeeds, whereas a kubelet renews its Lease
// whatever its health.
func (p *Provider) Ping(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	return ctx.Err()
}

// NotifyNodeStatus registers virtual-kubelet's callback for the node's
// status. The provider computes the status as the kubelet does, every
// Options.Kubelet.StatusUpdateFrequency (10 s), from the Node the API
// server has, and calls cb with the whole Node (conditions from
// nodecondition's kubelet side, capacity, addresses, nodeInfo) when the
// kubelet would write it: the first report, a change, or every
// StatusReportFrequency (5 min, with the kubelet's one-time jitter). Calls
// stop when ctx ends. It does not block.
func (p *Provider) NotifyNodeStatus(ctx context.Context, cb func(*v1.Node)) {
	if !p.ready() || cb == nil {
		return
	}
	p.mu.Lock()
	p.notifyNode, p.nodeCtx = cb, ctx
	p.mu.Unlock()
	kick(p.nodeKick)
}

// Node returns the Node the provider registers as (a new copy each call):
// the Node a kubelet registers (kube.KubeletNode: the kubelet's labels and
// Options.Labels, the attach/detach annotation, the taints, capacity and
// allocatable, the InternalIP, the kubelet endpoint port, nodeInfo and the
// declared features of Options.Runner.Lifecycle.Version), with
// Options.KubeletVersion in its nodeInfo. Like a kubelet's it has no
// status.phase, no spec.podCIDR and no conditions: the first report writes
// them. Hand it to node.NewNodeController.
func (p *Provider) Node() *v1.Node {
	if !p.ready() {
		return nil
	}
	o := &p.opts
	n := kube.KubeletNode(kube.Options{Name: o.Name, Labels: o.Labels, Taints: o.Taints, Capacity: o.Capacity,
		Allocatable: o.Allocatable, Address: o.Address, Port: o.Port, Lifecycle: o.Runner.Lifecycle, RuntimeVersion: o.RuntimeVersion})
	info := &n.Status.NodeInfo
	info.OSImage = "nodestate virtual-kubelet node"
	info.KubeletVersion = o.KubeletVersion
	return n
}

// NodeControllerOptions returns the options of virtual-kubelet's node
// controller that make it keep the node as a kubelet does: the Lease in
// kube-node-lease through client, with the kubelet's duration (40 s) and
// renew interval (10 s) from Options.Kubelet, renewed by virtual-kubelet's
// lease controller; and a status interval of twice StatusReportFrequency,
// so that the provider's reports (NotifyNodeStatus) decide when the status
// is written, not the controller's own timer (1 min by default), which
// only writes when the provider has not reported for that long.
func (p *Provider) NodeControllerOptions(client kubernetes.Interface) []node.NodeControllerOpt {
	if !p.ready() || client == nil {
		return nil
	}
	k := p.opts.Kubelet
	return []node.NodeControllerOpt{
		node.WithNodeEnableLeaseV1WithRenewInterval(client.CoordinationV1().Leases(v1.NamespaceNodeLease),
			int32(k.LeaseDuration/time.Second), k.LeaseRenewInterval()),
		node.WithNodeStatusUpdateInterval(2 * k.StatusReportFrequency),
	}
}

// nodeLoop computes the node's status every StatusUpdateFrequency and hands
// it to virtual-kubelet when the report rule says so.
func (p *Provider) nodeLoop(ctx context.Context) {
	t := p.clock.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.nodeKick:
		case <-t.C():
			t.Reset(p.opts.Kubelet.StatusUpdateFrequency)
		}
		p.reportNode(ctx, p.clock.Now())
	}
}

// reportNode is one computation of the node's status.
func (p *Provider) reportNode(ctx context.Context, now time.Time) {
	s := nodecondition.HealthySample()
	if _, err := p.kubelet.Observe(now, &s); err != nil {
		p.log.Error(err, "node signals")
		return
	}
	// The kubelet reads its Node before each computation: a report that
	// did not reach the API server, or a condition the node-lifecycle
	// controller set, is then a change to write.
	if n, err := p.nodes.Get(p.opts.Name); err == nil {
		p.kubelet.APIStatus(n.Status.Conditions)
	}
	r, err := p.kubelet.Status(now, nodecondition.Health{})
	if err != nil {
		p.log.Error(err, "node status")
		return
	}
	ref := &v1.ObjectReference{Kind: "Node", Name: p.opts.Name, UID: types.UID(p.opts.Name)}
	for _, reason := range r.Events {
		p.rec.Event(ref, v1.EventTypeNormal, reason, fmt.Sprintf("Node %s status is now: %s", p.opts.Name, reason))
	}
	if !r.Send {
		return
	}
	p.mu.Lock()
	cb, cbCtx := p.notifyNode, p.nodeCtx
	p.mu.Unlock()
	if cb == nil || cbCtx.Err() != nil {
		p.kubelet.ReportFailed() // sent once virtual-kubelet listens
		p.count(func(s *Stats) { s.NodeReportsHeld++ })
		return
	}
	n := p.Node()
	n.Status.Conditions = slices.Clone(r.Conditions)
	// The node controller's callback blocks until its loop takes the node;
	// a loop that stopped meanwhile must not stop this one.
	done := make(chan struct{})
	go func() {
		defer close(done)
		cb(n)
	}()
	select {
	case <-done:
		p.count(func(s *Stats) { s.NodeReports++ })
	case <-cbCtx.Done():
		p.kubelet.ReportFailed()
	case <-ctx.Done():
	}
}
