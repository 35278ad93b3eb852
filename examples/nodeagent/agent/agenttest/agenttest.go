// Package agenttest runs the simulated node agent of package agent against in-memory APIs in
// virtual time: pods on a statussynctest.API, events on an eventstest.Sink, the node and its
// lease on a Cluster kept here, all on one fake clock.
package agenttest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nodestate/nodestate/events/eventstest"
	"github.com/nodestate/nodestate/examples/nodeagent/agent"
	"github.com/nodestate/nodestate/statussync/statussynctest"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

// Epoch returns the virtual time a run starts at.
func Epoch() time.Time { return time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC) }

// Cluster is an in-memory agent.Cluster: pods go to a statussynctest.API, the node and its
// lease are kept here. Safe for concurrent use.
type Cluster struct {
	api *statussynctest.API

	mu     sync.Mutex
	node   *v1.Node
	lease  *coordinationv1.Lease
	calls  map[string]int
	leases int
}

var _ agent.Cluster = (*Cluster)(nil)

// NewCluster returns a cluster that creates pods on api.
func NewCluster(api *statussynctest.API) *Cluster {
	return &Cluster{api: api, calls: map[string]int{}}
}

// CreatePod implements agent.Cluster.
func (c *Cluster) CreatePod(_ context.Context, pod *v1.Pod) (*v1.Pod, error) {
	c.mu.Lock()
	c.calls["create pod"]++
	c.mu.Unlock()
	return c.api.Create(pod)
}

// UpdateNode implements agent.Cluster: the first call creates the node, later ones replace its
// status.
func (c *Cluster) UpdateNode(_ context.Context, node *v1.Node) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.node == nil {
		c.calls["create node"]++
		c.node = node.DeepCopy()
		c.node.ResourceVersion = "1"
		return nil
	}
	c.calls["patch node status"]++
	if node.Name != c.node.Name {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, node.Name)
	}
	c.node.Status = *node.Status.DeepCopy()
	c.node.ResourceVersion = fmt.Sprint(c.calls["patch node status"] + 1)
	return nil
}

// RenewLease implements agent.Cluster.
func (c *Cluster) RenewLease(_ context.Context, lease *coordinationv1.Lease) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lease == nil {
		c.calls["create lease"]++
	} else {
		c.calls["update lease"]++
	}
	c.lease = lease.DeepCopy()
	c.leases++
	return nil
}

// Node returns a copy of the node, or nil before it was created.
func (c *Cluster) Node() *v1.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.node.DeepCopy()
}

// Lease returns a copy of the lease, or nil before it was created.
func (c *Cluster) Lease() *coordinationv1.Lease {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lease.DeepCopy()
}

// Calls returns the number of calls by kind ("create pod", "create node", "patch node status",
// "create lease", "update lease").
func (c *Cluster) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

// Sim is an agent wired to in-memory APIs on a fake clock.
type Sim struct {
	// Clock is the virtual time the agent runs on; Agent.Run moves it.
	Clock *clocktesting.FakeClock
	// API holds the pods and serves the agent's status sync.
	API *statussynctest.API
	// Sink holds the events.
	Sink *eventstest.Sink
	// Cluster holds the node and its lease, and creates the pods on API.
	Cluster *Cluster
	// Agent is the agent under simulation.
	Agent *agent.Agent
}

// New returns an agent for cfg wired to fresh in-memory APIs, its clock at Epoch.
func New(cfg agent.Options) (*Sim, error) {
	s := &Sim{Clock: clocktesting.NewFakeClock(Epoch()), API: statussynctest.NewAPI(int64(cfg.Seed))}
	s.Sink = eventstest.NewSink(s.Clock, 0)
	s.Cluster = NewCluster(s.API)
	a, err := agent.New(cfg, s.Clock, s.API, s.Sink, s.Cluster)
	if err != nil {
		return nil, err
	}
	s.Agent = a
	return s, nil
}

// Pods returns the pods as the API holds them, in the agent's creation order.
func (s *Sim) Pods() []*v1.Pod {
	var out []*v1.Pod
	for _, st := range s.Agent.Pods() {
		if p, ok := s.API.Pod(st.Pod.Namespace, st.Pod.Name); ok {
			out = append(out, p)
		}
	}
	return out
}
