package kube

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/go-logr/logr"
	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/podrunner"
)

// reporter is the part of a node that speaks for the node itself: its
// registration, its status (the kubelet's conditions, sent by the report
// rule) and its Lease, all on the report loop's goroutine, apart from the
// pods. What the pods' admission reads of it (the Node's taints, the eviction
// manager's pressures) and when it last went round are guarded by mu.
type reporter struct {
	client kubernetes.Interface
	opts   *Options // the node's, read only
	clock  clock.Clock
	log    logr.Logger
	// event records a node event; count counts into the node's stats;
	// podCIDR hands the pod CIDR the cluster assigned to the pods' runner.
	event   func(reason, message string)
	count   func(func(*NodeStats))
	podCIDR func(cidr string)
	// images lists the images on the node (the pods' runner's).
	images func() []podrunner.Image

	// sentImages is status.images as last written.
	sentImages []corev1.ContainerImage

	// owned by the report loop
	kubelet *nodecondition.Kubelet
	lease   *nodecondition.LeaseRenewer
	// leaseObj is the Lease as last written, renewed with one PUT.
	leaseObj            *coordinationv1.Lease
	nextNode, nextRenew time.Time

	mu sync.Mutex
	// node is the Node as last written; taints and pressures what
	// admission reads of it and of the eviction manager.
	node      *corev1.Node
	taints    []corev1.Taint
	pressures nodecondition.Pressures
	// lastReport is when the report loop last went round.
	lastReport time.Time
}

// newReporter returns the reporter of a node with opts.
func newReporter(opts *Options, client kubernetes.Interface) (*reporter, error) {
	r := &reporter{client: client, opts: opts, clock: opts.Clock, log: opts.Logger, taints: opts.Taints}
	var err error
	if r.kubelet, err = nodecondition.NewKubelet(opts.Kubelet); err != nil {
		return nil, err
	}
	if r.lease, err = nodecondition.NewLeaseRenewer(opts.Kubelet, opts.Name); err != nil {
		return nil, err
	}
	return r, nil
}

// reportLoop is the goroutine of the node's status and Lease until ctx
// ends: the kubelet's node status loop and its Lease renewals, each on its
// own schedule.
func (n *reporter) reportLoop(ctx context.Context) error {
	for {
		now := n.clock.Now()
		n.mu.Lock()
		n.lastReport = now
		n.mu.Unlock()
		if !now.Before(n.nextNode) {
			n.reportStatus(ctx, now)
		}
		if !now.Before(n.nextRenew) {
			n.renew(ctx, now)
		}
		next := n.nextNode
		if n.nextRenew.Before(next) {
			next = n.nextRenew
		}
		d := next.Sub(n.clock.Now())
		if d <= 0 {
			continue // due already (a clock that moved meanwhile)
		}
		t := n.clock.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
	}
}

// admission returns what the node's admission reads of its status: the
// Node's taints as last written (the registration's, or the options' before
// it) and the eviction manager's pressures.
func (n *reporter) admission() ([]corev1.Taint, nodecondition.Pressures) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.taints, n.pressures
}

// setNode keeps the Node as last written, and its taints for admission.
func (n *reporter) setNode(node *corev1.Node) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.node, n.taints = node, node.Spec.Taints
}

// last is when the report loop last went round (zero before it started).
func (n *reporter) last() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lastReport
}

// nodeUID is the UID of the Node as last written; empty before it is.
func (n *reporter) nodeUID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.node == nil {
		return ""
	}
	return string(n.node.UID)
}

// nodeStatusUpdateRetry is how many times in a row the kubelet tries to write
// its node status before it waits for the next tick.
const nodeStatusUpdateRetry = 5

// reportStatus runs the kubelet's status computation and writes the Node's
// conditions when the report rule says so.
func (n *reporter) reportStatus(ctx context.Context, now time.Time) {
	s := nodecondition.HealthySample()
	n.nextNode = now.Add(n.opts.Kubelet.StatusUpdateFrequency)
	if _, err := n.kubelet.Observe(now, &s); err != nil {
		n.log.Error(err, "node signals")
		return
	}
	n.mu.Lock()
	n.pressures = n.kubelet.Pressures()
	n.mu.Unlock()
	images := nodeImages(n.images())
	r, err := n.kubelet.Status(now, nodecondition.Health{OtherChanged: !slices.EqualFunc(images, n.sentImages, sameImage)})
	if err != nil {
		n.log.Error(err, "node status")
		return
	}
	for _, reason := range r.Events {
		n.event(reason, fmt.Sprintf("Node %s status is now: %s", n.opts.Name, reason))
	}
	if !r.Send {
		return
	}
	// A strategic merge patch of the conditions (merged by type), as the
	// kubelet sends: no resourceVersion, so the controllers' own writes to
	// the Node (taints, annotations) never make it conflict; and, as the
	// kubelet, up to nodeStatusUpdateRetry attempts in a row.
	status := map[string]any{"conditions": r.Conditions}
	if images != nil {
		status["images"] = images
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		n.log.Error(err, "node status patch")
		return
	}
	var cur *corev1.Node
	for range nodeStatusUpdateRetry {
		if cur, err = n.client.CoreV1().Nodes().PatchStatus(ctx, n.opts.Name, patch); err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		n.kubelet.ReportFailed()
		n.count(func(s *NodeStats) { s.NodeErrors++ })
		// ReportFailed makes the next computation send again; it comes at the
		// next status tick, as the kubelet's does, never in a hot loop.
		n.log.Error(err, "node status write")
		return
	}
	n.setNode(cur)
	n.sentImages = images
	n.count(func(s *NodeStats) { s.NodeReports++ })
}

// The kubelet's bounds on status.images: the 50 largest images
// (--node-status-max-images), 5 names each.
const (
	maxNodeImages    = 50
	maxNamesPerImage = 5
	defaultImageTag  = ":latest"
)

// nodeImages is status.images as the kubelet's Images setter writes it from
// the runtime's image list: largest first, at most maxNodeImages, each named
// by its digest reference and then its tag.
func nodeImages(list []podrunner.Image) []corev1.ContainerImage {
	if len(list) == 0 {
		return nil
	}
	list = slices.Clone(list)
	slices.SortStableFunc(list, func(a, b podrunner.Image) int {
		if c := cmp.Compare(b.Size, a.Size); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(list) > maxNodeImages {
		list = list[:maxNodeImages]
	}
	out := make([]corev1.ContainerImage, 0, len(list))
	for _, im := range list {
		var names []string
		switch {
		case im.Ref != "":
			names = append(names, im.Ref)
		case strings.Contains(im.Name, "@"):
			names = append(names, im.Name) // named by its digest
		}
		if tag := taggedName(im.Name); tag != "" {
			names = append(names, tag)
		}
		if len(names) > maxNamesPerImage {
			names = names[:maxNamesPerImage]
		}
		out = append(out, corev1.ContainerImage{Names: names, SizeBytes: im.Size})
	}
	return out
}

// taggedName is the tag a runtime lists for image: the image with its tag,
// ":latest" when it has none, and none for an image named by digest only.
func taggedName(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		return image
	}
	return image + defaultImageTag
}

func sameImage(a, b corev1.ContainerImage) bool {
	return a.SizeBytes == b.SizeBytes && slices.Equal(a.Names, b.Names)
}

// renew writes the node's Lease on the renewer's schedule.
func (n *reporter) renew(ctx context.Context, now time.Time) {
	holder := n.opts.Name
	secs := int32(n.opts.Kubelet.LeaseDuration / time.Second)
	at := metav1.NewMicroTime(now)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: n.opts.Name, Namespace: corev1.NamespaceNodeLease},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &at},
	}
	if uid := n.nodeUID(); uid != "" {
		lease.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.opts.Name, UID: types.UID(uid)}}
	}
	// As the kubelet, renew the Lease last written with one PUT; read it
	// again only when there is none or that PUT fails (someone else wrote
	// it, or it was deleted).
	var err error
	if n.leaseObj != nil {
		l := n.leaseObj.DeepCopy()
		l.Spec = lease.Spec
		if l.OwnerReferences == nil {
			l.OwnerReferences = lease.OwnerReferences
		}
		if l, err = n.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{}); err == nil {
			n.leaseObj = l
		} else {
			n.leaseObj = nil
		}
	}
	if n.leaseObj == nil {
		n.leaseObj, err = renewLease(ctx, n.client, lease)
	}
	if err != nil {
		n.count(func(s *NodeStats) { s.LeaseErrors++ })
		n.log.Error(err, "lease renewal")
		next, ferr := n.lease.Failed(now)
		if ferr != nil {
			next = now.Add(time.Second)
		}
		n.nextRenew = next
		return
	}
	_, next, err := n.lease.Renewed(now)
	if err != nil {
		next = now.Add(n.opts.Kubelet.LeaseRenewInterval())
	}
	n.nextRenew = next
	n.count(func(s *NodeStats) { s.LeaseRenewals++ })
}
