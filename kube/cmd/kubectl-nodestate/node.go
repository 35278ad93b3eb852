package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/nodestate/nodestate/kube/internal/explain"
	nc "github.com/nodestate/nodestate/nodecondition"
)

// nodeFlags are the kube-controller-manager settings the prediction uses,
// under the controller manager's own flag names.
type nodeFlags struct {
	grace, period             time.Duration
	rate, secondary, unhealth float64
	large                     int
}

func (f *nodeFlags) add(fs *pflag.FlagSet) {
	d := nc.DefaultControllerOptions()
	fs.DurationVar(&f.grace, "node-monitor-grace-period", d.GracePeriod, "explain node: the controller manager's --node-monitor-grace-period")
	fs.DurationVar(&f.period, "node-monitor-period", d.MonitorPeriod, "explain node: the controller manager's --node-monitor-period")
	fs.Float64Var(&f.rate, "node-eviction-rate", d.EvictionRate, "explain node: the controller manager's --node-eviction-rate (nodes per second)")
	fs.Float64Var(&f.secondary, "secondary-node-eviction-rate", d.SecondaryEvictionRate, "explain node: the controller manager's --secondary-node-eviction-rate")
	fs.Float64Var(&f.unhealth, "unhealthy-zone-threshold", d.UnhealthyZoneThreshold, "explain node: the controller manager's --unhealthy-zone-threshold")
	fs.IntVar(&f.large, "large-cluster-size-threshold", d.LargeClusterThreshold, "explain node: the controller manager's --large-cluster-size-threshold")
}

func (f *nodeFlags) options() (nc.ControllerOptions, error) {
	o := nc.DefaultControllerOptions()
	o.GracePeriod, o.MonitorPeriod, o.EvictionRate, o.SecondaryEvictionRate = f.grace, f.period, f.rate, f.secondary
	o.UnhealthyZoneThreshold, o.LargeClusterThreshold = f.unhealth, f.large
	if err := o.Validate(); err != nil {
		return o, err
	}
	return o, nil
}

func (c *command) explainNode(ctx context.Context, name string, out io.Writer) error {
	if err := c.checkOutput(); err != nil {
		return err
	}
	opts, err := c.node.options()
	if err != nil {
		return err
	}
	cs, _, err := c.client()
	if err != nil {
		return err
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return describe(err, "node", name, "")
	}
	in := explain.NodeInput{Node: node, Controller: opts}
	lease, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return describe(err, "lease", name, corev1.NamespaceNodeLease)
	default:
		in.Lease = lease
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String()})
	if err != nil {
		return describe(err, "pods of node", name, "")
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			in.Pods = append(in.Pods, p)
		}
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return describe(err, "nodes", "", "")
	}
	in.Others = nodes.Items
	in.Now = c.now()
	r, err := explain.Node(in)
	if err != nil {
		return fmt.Errorf("predicting node %q: %v", name, err)
	}
	return c.print(out, r)
}
