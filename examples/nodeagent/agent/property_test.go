package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/nodestate/nodestate/examples/nodeagent/agent"
	"github.com/nodestate/nodestate/examples/nodeagent/agent/agenttest"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/statussync"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
)

// checkRun runs an agent for cfg and d one step at a time and checks after every step what
// must hold of every pod on the API: its phase only moves as the kubelet moves phases, a
// terminal phase stays, restart counts never go down; and at the end that the API holds the
// cached statuses and that every recorded event has one outcome.
func checkRun(t interface {
	Helper()
	Fatalf(string, ...any)
}, cfg agent.Options, d time.Duration) {
	t.Helper()
	sim, err := agenttest.New(cfg)
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	ctx := context.Background()
	if err := sim.Agent.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	phases := map[string]v1.PodPhase{}
	restarts := map[string]int32{}
	end := sim.Clock.Now().Add(d)
	for {
		next, err := sim.Agent.Step(ctx)
		if err != nil {
			t.Fatalf("step at %v: %v", sim.Clock.Now(), err)
		}
		for _, p := range sim.Pods() {
			if old, ok := phases[p.Name]; ok && !podphase.LegalTransition(old, p.Status.Phase) {
				t.Fatalf("%s: phase %s -> %s at %v", p.Name, old, p.Status.Phase, sim.Clock.Now())
			}
			phases[p.Name] = p.Status.Phase
			for _, cs := range append(append([]v1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
				key := p.Name + "/" + cs.Name
				if cs.RestartCount < restarts[key] {
					t.Fatalf("%s: restartCount %d -> %d", key, restarts[key], cs.RestartCount)
				}
				restarts[key] = cs.RestartCount
			}
		}
		if next.After(end) {
			break
		}
		sim.Clock.SetTime(next)
	}
	if err := sim.Agent.Run(ctx, statussync.DefaultFullSyncPeriod); err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, st := range sim.Agent.Pods() {
		api, ok := sim.API.Pod(st.Pod.Namespace, st.Pod.Name)
		if !ok || !statussync.DefaultOptions().EqualByKubelet(&st.Cached, &api.Status) {
			t.Fatalf("%s: the API does not hold the cached status", st.Pod.Name)
		}
	}
	s := sim.Agent.Stats()
	if e := s.Events; e.Recorded != e.Created+e.Patched+e.DroppedSpam+e.DroppedFailed()+e.Pending {
		t.Fatalf("events %+v: recorded is not the sum of outcomes", e)
	}
	if s.Synced > s.Versions {
		t.Fatalf("synced %d of %d versions", s.Synced, s.Versions)
	}
}

func TestPropertyRuns(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := agent.Options{
			Pods:  rapid.IntRange(1, 9).Draw(t, "pods"),
			Seed:  rapid.Uint64().Draw(t, "seed"),
			NoGet: rapid.Bool().Draw(t, "noGet"),
		}
		d := time.Duration(rapid.IntRange(1, 150).Draw(t, "seconds")) * time.Second
		checkRun(t, cfg, d)
	})
}

func FuzzAgent(f *testing.F) {
	f.Add(uint64(1), uint8(8), uint16(600), false)
	f.Add(uint64(7), uint8(1), uint16(5), true)
	f.Add(uint64(0), uint8(17), uint16(90), false)
	f.Fuzz(func(t *testing.T, seed uint64, pods uint8, seconds uint16, noGet bool) {
		cfg := agent.Options{Seed: seed, Pods: 1 + int(pods)%24, NoGet: noGet}
		checkRun(t, cfg, time.Duration(1+int(seconds)%900)*time.Second)
	})
}
