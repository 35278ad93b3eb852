package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/events/eventstest"
	"github.com/nodestate/nodestate/examples/nodeagent/agent"
	"github.com/nodestate/nodestate/examples/nodeagent/agent/agenttest"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestEventsAreCountedAndFiltered(t *testing.T) {
	sim := run(t, agent.Options{Seed: 1}, 10*time.Minute)
	s := sim.Agent.Stats().Events
	if s.Recorded != s.Created+s.Patched+s.DroppedSpam+s.DroppedFailed()+s.Pending {
		t.Errorf("events %+v: recorded is not the sum of outcomes", s)
	}
	if s.DroppedSpam == 0 {
		t.Errorf("events %+v: the image-pull loop must exhaust the spam filter's burst of 25", s)
	}
	if got := sim.Sink.Calls(eventstest.OpCreate) + sim.Sink.Calls(eventstest.OpPatch); got != s.Created+s.Patched {
		t.Errorf("sink saw %d writes, agent counted %d", got, s.Created+s.Patched)
	}
}

// TestEventWriteFailures follows client-go's rules for failed event writes
// (spec/events.md A.5): a server answer is final, anything else is tried again after a random
// part of 10 s and then every 10 s, up to 12 tries, while later events wait behind it.
func TestEventWriteFailures(t *testing.T) {
	connReset := errors.New("connection reset by peer")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "x", errors.New("no"))
	for _, tc := range []struct {
		name   string
		fault  eventstest.FaultFunc
		check  func(s agent.EventStats) bool
		want   string
		reason string
	}{
		{
			name: "transient", want: "retries, nothing lost",
			fault: func(_ eventstest.Op, _, _ string, n int) error {
				if n%3 == 0 {
					return connReset
				}
				return nil
			},
			check: func(s agent.EventStats) bool {
				return s.Retries > 0 && s.DroppedFailed() == 0 && s.Created+s.Patched > 0
			},
			reason: "A.5: a transport error is retried, and the next attempt succeeds",
		},
		{
			name: "refused", want: "drops, no retries",
			fault: func(_ eventstest.Op, _, _ string, n int) error {
				if n%2 == 0 {
					return forbidden
				}
				return nil
			},
			check:  func(s agent.EventStats) bool { return s.Retries == 0 && s.DroppedRejected > 0 },
			reason: "A.5: a StatusError is the server's answer and is never retried",
		},
		{
			name: "down", want: "12 tries per event, then a drop",
			fault: func(eventstest.Op, string, string, int) error { return connReset },
			check: func(s agent.EventStats) bool {
				return s.DroppedRetryLimit > 0 && s.Created+s.Patched == 0 && s.Pending > 0 &&
					s.Retries >= 11*s.DroppedRetryLimit && s.Retries <= 11*s.DroppedRetryLimit+11
			},
			reason: "A.5: once tries reach 12 the event is dropped; the events behind it wait",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, err := agenttest.New(agent.Options{Seed: 1, Pods: 3})
			if err != nil {
				t.Fatal(err)
			}
			sim.Sink.SetFault(tc.fault)
			if err := sim.Agent.Run(context.Background(), 5*time.Minute); err != nil {
				t.Fatal(err)
			}
			s := sim.Agent.Stats().Events
			if !tc.check(s) {
				t.Errorf("events %+v, want %s (%s)", s, tc.want, tc.reason)
			}
			if s.Recorded != s.Created+s.Patched+s.DroppedSpam+s.DroppedFailed()+s.Pending {
				t.Errorf("events %+v: recorded is not the sum of outcomes", s)
			}
		})
	}
}

// TestEventRetryTiming checks the waits between the attempts at one event: a random part of
// 10 s before the second, 10 s before each later one (spec/events.md A.5).
func TestEventRetryTiming(t *testing.T) {
	sim, err := agenttest.New(agent.Options{Seed: 1, Pods: 1})
	if err != nil {
		t.Fatal(err)
	}
	var attempts []time.Time
	sim.Sink.SetFault(func(_ eventstest.Op, _, _ string, n int) error {
		attempts = append(attempts, sim.Clock.Now())
		if len(attempts) <= 3 {
			return errors.New("connection refused")
		}
		return nil
	})
	if err := sim.Agent.Run(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if len(attempts) < 5 {
		t.Fatalf("%d attempts", len(attempts))
	}
	if d := attempts[1].Sub(attempts[0]); d < 0 || d >= 10*time.Second {
		t.Errorf("first retry after %v, want within [0, 10s)", d)
	}
	for i := 2; i <= 3; i++ {
		if d := attempts[i].Sub(attempts[i-1]); d != 10*time.Second {
			t.Errorf("retry %d after %v, want 10s", i, d)
		}
	}
	s := sim.Agent.Stats().Events
	if s.Retries != 3 || s.DroppedFailed() != 0 {
		t.Errorf("events %+v, want 3 retries and nothing lost", s)
	}
}

func TestStatusSyncSurvivesFaults(t *testing.T) {
	sim, err := agenttest.New(agent.Options{Seed: 1, Pods: 3})
	if err != nil {
		t.Fatal(err)
	}
	sim.API.SetFaults(statussynctest.Faults{ErrorRate: 0.3})
	if err := sim.Agent.Run(context.Background(), 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	// Faults stop; a full pass brings every pod on the API to the cached status.
	sim.API.SetFaults(statussynctest.Faults{})
	sim.Clock.Step(2 * time.Minute)
	if err := sim.Agent.Run(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, st := range sim.Agent.Pods() {
		api, _ := sim.API.Pod(st.Pod.Namespace, st.Pod.Name)
		if !statussync.DefaultOptions().EqualByKubelet(&st.Cached, &api.Status) {
			t.Errorf("%s: API status differs from the cache after faults stopped", api.Name)
		}
	}
}

// flakyCluster fails node and lease writes while down is true.
type flakyCluster struct {
	*agenttest.Cluster
	down      bool
	leaseAt   []time.Time
	clockNow  func() time.Time
	nodeFails int
}

func (c *flakyCluster) UpdateNode(ctx context.Context, n *v1.Node) error {
	if c.down {
		c.nodeFails++
		return apierrors.NewServiceUnavailable("etcd leader changed")
	}
	return c.Cluster.UpdateNode(ctx, n)
}

func (c *flakyCluster) RenewLease(ctx context.Context, l *coordinationv1.Lease) error {
	c.leaseAt = append(c.leaseAt, c.clockNow())
	if c.down {
		return apierrors.NewServiceUnavailable("etcd leader changed")
	}
	return c.Cluster.RenewLease(ctx, l)
}

// TestClusterOutage checks the kubelet's reaction to failing node and lease writes
// (spec/nodecondition.md section 1, lease renew interval row): a failed renewal is retried after 200 ms,
// doubling to at most 7 s; a failed status report is sent again at the next status update.
func TestClusterOutage(t *testing.T) {
	clk := clocktesting.NewFakeClock(agenttest.Epoch())
	api := statussynctest.NewAPI(1)
	fc := &flakyCluster{Cluster: agenttest.NewCluster(api), clockNow: clk.Now}
	a, err := agent.New(agent.Options{Seed: 1, Pods: 1}, clk, api, eventstest.NewSink(clk, 0), fc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.Run(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	fc.down = true
	from := len(fc.leaseAt)
	if err := a.Run(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	waits := []time.Duration{}
	for i := from + 1; i < len(fc.leaseAt); i++ {
		waits = append(waits, fc.leaseAt[i].Sub(fc.leaseAt[i-1]))
	}
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond, 7 * time.Second}
	if len(waits) < len(want) || !cmp.Equal(waits[:len(want)], want) {
		t.Errorf("waits between failed renewals %v, want them to start %v", waits, want)
	}
	fc.down = false
	if err := a.Run(ctx, 5*time.Minute+time.Minute); err != nil {
		t.Fatal(err)
	}
	s := a.Stats()
	if s.ClusterErrors == 0 || s.ClusterErrors != len(fc.leaseAt)-s.LeaseRenewals+fc.nodeFails {
		t.Errorf("cluster errors %d, lease attempts %d, renewals %d, node failures %d", s.ClusterErrors, len(fc.leaseAt), s.LeaseRenewals, fc.nodeFails)
	}
	if n := fc.Node(); n == nil || len(n.Status.Conditions) != 4 {
		t.Errorf("node %+v after the outage", n)
	}
	if l := fc.Lease(); l == nil || !l.Spec.RenewTime.After(agenttest.Epoch().Add(time.Minute)) {
		t.Errorf("lease %+v not renewed after the outage", l)
	}
}

// TestEventsFollowTheMachine checks the events the agent recorded from its machines: every
// container event carries the field path of a container of its pod, in the list the container
// is in (spec/podlifecycle.md section 10), and the db pod's containers were started in spec
// order, init containers first (section 4.1), as its Started events say.
func TestEventsFollowTheMachine(t *testing.T) {
	sim := run(t, agent.Options{Seed: 5}, 3*time.Minute)
	paths := map[string]bool{}
	for _, st := range sim.Agent.Pods() {
		for _, c := range st.Pod.Spec.InitContainers {
			paths[string(st.Pod.UID)+" spec.initContainers{"+c.Name+"}"] = true
		}
		for _, c := range st.Pod.Spec.Containers {
			paths[string(st.Pod.UID)+" spec.containers{"+c.Name+"}"] = true
		}
	}
	for _, e := range sim.Sink.Events() {
		if e.InvolvedObject.Kind != "Pod" || e.InvolvedObject.FieldPath == "" {
			continue
		}
		if !paths[string(e.InvolvedObject.UID)+" "+e.InvolvedObject.FieldPath] {
			t.Errorf("event %s %q names %s, not a container of pod %s", e.Reason, e.Message, e.InvolvedObject.FieldPath, e.InvolvedObject.Name)
		}
	}
	db := podNamed(t, sim, "db-0")
	var order []string
	var last time.Time
	for _, e := range eventsOf(sim, db, podlifecycle.ReasonStarted) {
		order = append(order, e.InvolvedObject.FieldPath)
		if e.FirstTimestamp.Time.Before(last) {
			t.Errorf("%s started at %v, before the container before it (%v)", e.InvolvedObject.FieldPath, e.FirstTimestamp.Time, last)
		}
		last = e.FirstTimestamp.Time
	}
	want := []string{"spec.initContainers{init-permissions}", "spec.initContainers{wait-for-config}", "spec.containers{postgres}"}
	if !cmp.Equal(order, want) {
		t.Errorf("db-0 Started events for %q, want %q", order, want)
	}
}
