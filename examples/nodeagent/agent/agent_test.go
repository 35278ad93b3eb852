package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/events/eventstest"
	"github.com/nodestate/nodestate/examples/nodeagent/agent"
	"github.com/nodestate/nodestate/examples/nodeagent/agent/agenttest"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// run runs a default agent with seed for d and returns it.
func run(t *testing.T, cfg agent.Options, d time.Duration) *agenttest.Sim {
	t.Helper()
	sim, err := agenttest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Agent.Run(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return sim
}

// stepwise runs the agent for d one due instant at a time and calls observe after each step.
func stepwise(t *testing.T, cfg agent.Options, d time.Duration, observe func(now time.Time, sim *agenttest.Sim)) *agenttest.Sim {
	t.Helper()
	sim, err := agenttest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := sim.Agent.Start(ctx); err != nil {
		t.Fatal(err)
	}
	end := sim.Clock.Now().Add(d)
	for {
		next, err := sim.Agent.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		observe(sim.Clock.Now(), sim)
		if next.After(end) {
			return sim
		}
		sim.Clock.SetTime(next)
	}
}

// podNamed returns the API's copy of the agent's pod whose name starts with prefix.
func podNamed(t *testing.T, sim *agenttest.Sim, prefix string) *v1.Pod {
	t.Helper()
	for _, p := range sim.Pods() {
		if strings.HasPrefix(p.Name, prefix) {
			return p
		}
	}
	t.Fatalf("no pod named %s*", prefix)
	return nil
}

func eventsOf(sim *agenttest.Sim, pod *v1.Pod, reason string) []v1.Event {
	var out []v1.Event
	for _, e := range agent.EventsFor(sim.Sink.Events(), pod.UID) {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// crashDelay is the kubelet's crash-loop back-off before restart n (n >= 1): none before the
// first restart, then 10 s doubling to 300 s (spec/containerstate.md section 10).
func crashDelay(n int32) time.Duration {
	if n <= 1 {
		return 0
	}
	d := containerstate.CrashLoopInitial << (n - 2)
	return min(d, containerstate.CrashLoopMax)
}

func TestCrashLoopRestartsWithBackOff(t *testing.T) {
	type start struct{ started, prevFinished time.Time }
	starts := map[int32]start{}
	sawBackOff := false
	sim := stepwise(t, agent.Options{Seed: 1}, 15*time.Minute, func(now time.Time, sim *agenttest.Sim) {
		p := podNamed(t, sim, "worker-")
		if len(p.Status.ContainerStatuses) != 1 {
			return
		}
		cs := p.Status.ContainerStatuses[0]
		if w := cs.State.Waiting; w != nil && w.Reason == containerstate.ReasonCrashLoopBackOff {
			sawBackOff = true
			if !strings.HasPrefix(w.Message, "back-off ") || !strings.Contains(w.Message, "restarting failed container=worker pod="+p.Name+"_default(") {
				t.Errorf("CrashLoopBackOff message %q", w.Message)
			}
		}
		if r := cs.State.Running; r != nil {
			if _, ok := starts[cs.RestartCount]; !ok {
				s := start{started: r.StartedAt.Time}
				if lt := cs.LastTerminationState.Terminated; lt != nil {
					s.prevFinished = lt.FinishedAt.Time
				}
				starts[cs.RestartCount] = s
			}
		}
	})
	p := podNamed(t, sim, "worker-")
	cs := p.Status.ContainerStatuses[0]
	if !sawBackOff {
		t.Error("the worker was never reported Waiting/CrashLoopBackOff")
	}
	// 15 minutes of 2-6 s runs with back-offs 0, 10, 20, 40, 80, 160, 300, 300 s give 8 or 9
	// starts.
	if cs.RestartCount < 7 || cs.RestartCount > 9 {
		t.Errorf("restartCount %d after 15m, want 7 to 9", cs.RestartCount)
	}
	for n := int32(1); n <= cs.RestartCount; n++ {
		s, ok := starts[n]
		if !ok {
			// An instance that started and exited between two observations is fine only if
			// the API never saw it running; the agent syncs at every step, so it must have.
			t.Errorf("restart %d was never seen running", n)
			continue
		}
		gap := s.started.Sub(s.prevFinished)
		want := crashDelay(n)
		// The pod worker requeues a pod in back-off at the back-off's expiry, clamped to the
		// 1 min resync, plus up to 50 % jitter (spec/podlifecycle.md section 4.5), and the API
		// keeps whole seconds: the restart comes at the end of the back-off or at most half of
		// min(back-off, 1 min) after it.
		late := min(want, podlifecycle.DefaultSyncFrequency) / 2
		if gap < want-time.Second || gap > want+late+time.Second {
			t.Errorf("restart %d came %v after the exit, want the back-off %v (+ at most %v)", n, gap, want, late+time.Second)
		}
	}
	created := eventsOf(sim, p, podlifecycle.ReasonCreated)
	if len(created) != 1 || created[0].Count != cs.RestartCount+1 {
		t.Errorf("Created events %+v, want one with count restartCount+1 = %d", created, cs.RestartCount+1)
	}
	if backoffs := eventsOf(sim, p, podlifecycle.ReasonBackOff); len(backoffs) != 1 || backoffs[0].Type != v1.EventTypeWarning ||
		backoffs[0].Message != "Back-off restarting failed container worker in pod "+p.Name+"_default("+string(p.UID)+")" {
		t.Errorf("BackOff events %+v", backoffs)
	}
	if got := podphase.DisplayStatus(p); got != containerstate.ReasonCrashLoopBackOff && got != containerstate.ReasonError && got != "Running" {
		t.Errorf("STATUS %q, want CrashLoopBackOff, Error or Running", got)
	}
}

func TestJobWithSidecarSucceeds(t *testing.T) {
	sim := run(t, agent.Options{Seed: 3}, 5*time.Minute)
	p := podNamed(t, sim, "report-")
	if p.Status.Phase != v1.PodSucceeded {
		t.Fatalf("phase %s, want Succeeded", p.Status.Phase)
	}
	if got := podphase.DisplayStatus(p); got != "Completed" {
		t.Errorf("STATUS %q, want Completed", got)
	}
	if len(p.Status.ContainerStatuses) != 1 || len(p.Status.InitContainerStatuses) != 1 {
		t.Fatalf("statuses %+v", p.Status)
	}
	main, sidecar := p.Status.ContainerStatuses[0], p.Status.InitContainerStatuses[0]
	if term := main.State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != containerstate.ReasonCompleted {
		t.Errorf("report container %+v, want Terminated/Completed 0", main.State)
	}
	if term := sidecar.State.Terminated; term == nil || term.FinishedAt.Before(&main.State.Terminated.FinishedAt) {
		t.Errorf("sidecar %+v, want Terminated no earlier than the report", sidecar.State)
	}
	kill := eventsOf(sim, p, podlifecycle.ReasonKilling)
	if len(kill) != 1 || kill[0].Message != "Stopping container log-shipper" || kill[0].InvolvedObject.FieldPath != "spec.initContainers{log-shipper}" {
		t.Errorf("Killing events %+v", kill)
	}
	for _, c := range p.Status.Conditions {
		if (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && (c.Status != v1.ConditionFalse || c.Reason != podphase.ReasonPodCompleted) {
			t.Errorf("condition %s=%s %s, want False/PodCompleted", c.Type, c.Status, c.Reason)
		}
	}
	// The sidecar started before the report: a sidecar must be started for the next
	// container to start.
	if sidecar.State.Terminated.StartedAt.After(main.State.Terminated.StartedAt.Time) {
		t.Errorf("sidecar started at %v, after the report at %v", sidecar.State.Terminated.StartedAt, main.State.Terminated.StartedAt)
	}
}

func TestImagePullFailureBacksOff(t *testing.T) {
	reasons := map[string]string{}
	sim := stepwise(t, agent.Options{Seed: 1}, 5*time.Minute, func(_ time.Time, sim *agenttest.Sim) {
		p := podNamed(t, sim, "cache-")
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				reasons[w.Reason] = w.Message
			}
		}
	})
	p := podNamed(t, sim, "cache-")
	const img = "registry.example.com/shop/cache:v2-missing"
	if msg, ok := reasons[containerstate.ReasonErrImagePull]; !ok || !strings.Contains(msg, "not found") {
		t.Errorf("ErrImagePull seen %v with message %q, want the CRI error", ok, msg)
	}
	want := `Back-off pulling image "` + img + `": ErrImagePull: rpc error: code = NotFound`
	if msg, ok := reasons[containerstate.ReasonImagePullBackOff]; !ok || !strings.HasPrefix(msg, want) {
		t.Errorf("ImagePullBackOff seen %v with message %q, want prefix %q", ok, msg, want)
	}
	if p.Status.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	if got := podphase.DisplayStatus(p); got != containerstate.ReasonImagePullBackOff && got != containerstate.ReasonErrImagePull {
		t.Errorf("STATUS %q", got)
	}
	var failed []string
	for _, e := range eventsOf(sim, p, podlifecycle.ReasonFailed) {
		failed = append(failed, e.Message)
	}
	for _, w := range []string{`Failed to pull image "` + img + `": rpc error`, "Error: ErrImagePull", "Error: ImagePullBackOff"} {
		found := false
		for _, m := range failed {
			found = found || strings.HasPrefix(m, w)
		}
		if !found {
			t.Errorf("no Failed event %q in %q", w, failed)
		}
	}
	// Pulls are retried 10 s, 20 s, 40 s, 80 s after each failure (plus the pod worker's
	// requeue): five minutes hold at least 4 and at most 6 pulls.
	pulls := eventsOf(sim, p, podlifecycle.ReasonPulling)
	if len(pulls) != 1 || pulls[0].Count < 4 || pulls[0].Count > 6 {
		t.Errorf("Pulling events %+v, want one with count 4 to 6", pulls)
	}
}

func TestInitContainersRunInOrder(t *testing.T) {
	sim := run(t, agent.Options{Seed: 5}, 3*time.Minute)
	for _, prefix := range []string{"db-0", "api-"} {
		p := podNamed(t, sim, prefix)
		prev := p.CreationTimestamp.Time
		for _, cs := range append(append([]v1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			var started, finished time.Time
			switch {
			case cs.State.Terminated != nil:
				started, finished = cs.State.Terminated.StartedAt.Time, cs.State.Terminated.FinishedAt.Time
			case cs.State.Running != nil:
				started = cs.State.Running.StartedAt.Time
			default:
				t.Fatalf("%s: container %s not started: %+v", p.Name, cs.Name, cs.State)
			}
			if started.Before(prev) {
				t.Errorf("%s: %s started at %v, before the previous init container finished at %v", p.Name, cs.Name, started, prev)
			}
			if !finished.IsZero() {
				prev = finished
			}
		}
		if got := podphase.DisplayStatus(p); got != "Running" {
			t.Errorf("%s: STATUS %q, want Running", p.Name, got)
		}
		for _, c := range p.Status.Conditions {
			if c.Status != v1.ConditionTrue {
				t.Errorf("%s: condition %s=%s, want every condition True", p.Name, c.Type, c.Status)
			}
		}
	}
}

func TestReadinessProbes(t *testing.T) {
	var notReadyWhileRunning bool
	sim := stepwise(t, agent.Options{Seed: 1}, 2*time.Minute, func(_ time.Time, sim *agenttest.Sim) {
		p := podNamed(t, sim, "api-")
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running != nil && !cs.Ready {
				notReadyWhileRunning = true
			}
		}
	})
	p := podNamed(t, sim, "api-")
	if !notReadyWhileRunning {
		t.Error("api was never Running and not ready, though its first probes fail")
	}
	un := eventsOf(sim, p, podlifecycle.ReasonUnhealthy)
	if len(un) != 1 || un[0].Count < 2 || un[0].Message != "Readiness probe failed: HTTP probe failed with statuscode: 503" {
		t.Errorf("Unhealthy events %+v, want one counted at least twice", un)
	}
	if row, err := podphase.Columns(p, sim.Clock.Now()); err != nil || row.Ready != "1/1" {
		t.Errorf("READY %q (%v), want 1/1", row.Ready, err)
	}
}

// TestAPIHoldsWhatPodphaseComputed checks the end-to-end contract: every pod on the API server
// holds the status the cache holds (by the kubelet's equality), whose phase and conditions are
// podphase's for that very status.
func TestAPIHoldsWhatPodphaseComputed(t *testing.T) {
	for _, noGet := range []bool{false, true} {
		sim := run(t, agent.Options{Seed: 7, Pods: 12, NoGet: noGet}, 6*time.Minute)
		now := sim.Clock.Now()
		opts := statussync.DefaultOptions()
		for _, st := range sim.Agent.Pods() {
			api, ok := sim.API.Pod(st.Pod.Namespace, st.Pod.Name)
			if !ok {
				t.Fatalf("pod %s not on the API", st.Pod.Name)
			}
			if !opts.EqualByKubelet(&st.Cached, &api.Status) {
				t.Errorf("noGet %t: %s: API status differs from the cache: %s", noGet, api.Name, cmp.Diff(st.Cached, api.Status))
			}
			if api.Status.Phase != st.Computed.Phase {
				t.Errorf("noGet %t: %s: API phase %s, podphase computed %s", noGet, api.Name, api.Status.Phase, st.Computed.Phase)
			}
			if want := podphase.Phase(api); want != api.Status.Phase {
				t.Errorf("noGet %t: %s: API phase %s, podphase.Phase of the API's pod %s", noGet, api.Name, api.Status.Phase, want)
			}
			if podphase.IsTerminal(api.Status.Phase) {
				continue // conditions of a terminal pod are the merged ones (PodCompleted)
			}
			conds, err := podphase.Conditions(podphase.ConditionsInput{Pod: api, Status: &api.Status, Old: &api.Status, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(conds, api.Status.Conditions); diff != "" {
				t.Errorf("noGet %t: %s: conditions mismatch (-podphase +API):\n%s", noGet, api.Name, diff)
			}
		}
		s := sim.Agent.Stats()
		if s.Synced == 0 || s.Synced > s.Versions {
			t.Errorf("noGet %t: synced %d of %d versions", noGet, s.Synced, s.Versions)
		}
		if got := sim.API.Requests(); !cmp.Equal(got, s.Requests) {
			t.Errorf("noGet %t: API counted %v, agent %v", noGet, got, s.Requests)
		}
	}
}

func TestNoGetSavesRequests(t *testing.T) {
	def := run(t, agent.Options{Seed: 2}, 5*time.Minute)
	noGet := run(t, agent.Options{Seed: 2, NoGet: true}, 5*time.Minute)
	for i, p := range def.Pods() {
		q := noGet.Pods()[i]
		if !statussync.DefaultOptions().EqualByKubelet(&p.Status, &q.Status) {
			t.Errorf("%s: the modes left different statuses:\n%s", p.Name, cmp.Diff(p.Status, q.Status))
		}
	}
	total := func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	}
	d, n := def.Agent.Stats(), noGet.Agent.Stats()
	if total(n.Requests) >= total(d.Requests) {
		t.Errorf("no-GET made %v requests, the default %v", n.Requests, d.Requests)
	}
	if d.Requests["get"] != d.Requests["patch"] {
		t.Errorf("default mode %v: want one GET per PATCH, as the kubelet", d.Requests)
	}
}

func TestNodeStaysHealthy(t *testing.T) {
	sim := run(t, agent.Options{Seed: 1, NodeName: "edge-7"}, 10*time.Minute)
	node := sim.Cluster.Node()
	if node == nil || node.Name != "edge-7" {
		t.Fatalf("node %+v", node)
	}
	want := map[v1.NodeConditionType]v1.ConditionStatus{
		v1.NodeMemoryPressure: v1.ConditionFalse, v1.NodeDiskPressure: v1.ConditionFalse,
		v1.NodePIDPressure: v1.ConditionFalse, v1.NodeReady: v1.ConditionTrue,
	}
	for _, c := range node.Status.Conditions {
		if want[c.Type] != c.Status {
			t.Errorf("node condition %s=%s, want %s", c.Type, c.Status, want[c.Type])
		}
		delete(want, c.Type)
	}
	if len(want) != 0 {
		t.Errorf("conditions missing: %v", want)
	}
	s := sim.Agent.Stats()
	// Renewals every 10 s (jittered up to 4 %) over 10 minutes, the first at the start.
	if s.LeaseRenewals < 58 || s.LeaseRenewals > 61 {
		t.Errorf("%d lease renewals in 10m, want about 60", s.LeaseRenewals)
	}
	// The status goes out at registration and then every 5 minutes plus the one-time jitter.
	if s.NodeReports < 2 || s.NodeReports > 3 {
		t.Errorf("%d node status reports in 10m, want 2 or 3", s.NodeReports)
	}
	lease := sim.Cluster.Lease()
	if lease == nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "edge-7" ||
		lease.Spec.LeaseDurationSeconds == nil || *lease.Spec.LeaseDurationSeconds != 40 {
		t.Errorf("lease %+v", lease)
	}
	calls := sim.Cluster.Calls()
	if calls["create node"] != 1 || calls["create pod"] != agent.DefaultPods || calls["create lease"] != 1 {
		t.Errorf("cluster calls %v", calls)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	api := statussynctest.NewAPI(1)
	clk := clocktesting.NewFakeClock(agenttest.Epoch())
	sink := eventstest.NewSink(clk, 0)
	cluster := agenttest.NewCluster(api)
	for _, tc := range []struct {
		name   string
		cfg    agent.Options
		nilDep bool
	}{
		{name: "negative pods", cfg: agent.Options{Pods: -1}},
		{name: "too many pods", cfg: agent.Options{Pods: agent.MaxPods + 1}},
		{name: "no transport", nilDep: true},
	} {
		var err error
		if tc.nilDep {
			_, err = agent.New(tc.cfg, clk, nil, sink, cluster)
		} else {
			_, err = agent.New(tc.cfg, clk, api, sink, cluster)
		}
		if !errors.Is(err, agent.ErrInvalidOptions) {
			t.Errorf("%s: err %v, want ErrInvalidOptions", tc.name, err)
		}
	}
}

func TestSameSeedSameRun(t *testing.T) {
	a := run(t, agent.Options{Seed: 11, Pods: 10}, 4*time.Minute)
	b := run(t, agent.Options{Seed: 11, Pods: 10}, 4*time.Minute)
	if diff := cmp.Diff(a.Pods(), b.Pods()); diff != "" {
		t.Errorf("two runs with one seed differ (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(a.Sink.Events(), b.Sink.Events()); diff != "" {
		t.Errorf("events differ (-first +second):\n%s", diff)
	}
	c := run(t, agent.Options{Seed: 12, Pods: 10}, 4*time.Minute)
	if cmp.Equal(a.Pods()[0].Name, c.Pods()[0].Name) {
		t.Error("seeds 11 and 12 named the first pod alike")
	}
}

func BenchmarkRun(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sim, err := agenttest.New(agent.Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := sim.Agent.Run(context.Background(), 10*time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDefaultOptionsAreTheZeroDefaults: DefaultOptions spells out what the zero Options
// means, so the two run alike.
func TestDefaultOptionsAreTheZeroDefaults(t *testing.T) {
	def := agent.DefaultOptions()
	def.Seed = 11
	a := run(t, def, 2*time.Minute)
	b := run(t, agent.Options{Seed: 11}, 2*time.Minute)
	if diff := cmp.Diff(a.Pods(), b.Pods()); diff != "" {
		t.Errorf("DefaultOptions and the zero Options differ (-default +zero):\n%s", diff)
	}
	if len(a.Pods()) != agent.DefaultPods {
		t.Errorf("DefaultOptions ran %d pods, want %d", len(a.Pods()), agent.DefaultPods)
	}
}
