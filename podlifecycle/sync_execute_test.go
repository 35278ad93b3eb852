package podlifecycle

import (
	"slices"
	"testing"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

// restartAllPod is P3 whose foo1 (restartPolicy Never) restarts all
// containers when it exits with 42.
func restartAllPod() *v1.Pod {
	p := podP3()
	p.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
	p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	return p
}

// TestRule4_1_ResetInOrder: the reset list is carried out one entry after
// the other: a running instance's kill is waited for before the next
// entry, and an entry whose removal is under way is passed over, not the
// ones after it (rule 3.2, 4.1 step 2). The runtime here never answers a
// removal.
func TestRule4_1_ResetInOrder(t *testing.T) {
	s := newSim(t, restartAllPod(), DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Minute)
	s.exit("foo1", 42)
	var steps [][]string
	for i := 0; i < 8; i++ {
		r := s.step()
		var acts []string
		for _, a := range r.Actions {
			if a.Kind == KillContainer || a.Kind == RemoveContainer {
				acts = append(acts, a.Kind.String()+" "+a.Container)
			}
		}
		if len(acts) > 0 {
			steps = append(steps, acts)
		}
	}
	want := [][]string{{"KillContainer foo2"}, {"RemoveContainer foo2", "KillContainer foo3"}, {"RemoveContainer foo3", "RemoveContainer foo1"}}
	if len(steps) != len(want) {
		t.Fatalf("kills and removals by sync %v, want %v", steps, want)
	}
	for i := range want {
		if !slices.Equal(steps[i], want[i]) {
			t.Errorf("sync %d: %v, want %v", i, steps[i], want[i])
		}
	}
}

// TestRule3_6_KillsPastOneUnderWay: a sync whose kills include an instance
// whose kill is already under way (a container killed for its failed
// postStart hook that then turned unknown) still kills the others it
// decided (rule 3.6, 4.1 step 2).
func TestRule3_6_KillsPastOneUnderWay(t *testing.T) {
	pod := podP3()
	pod.Spec.RestartPolicy = v1.RestartPolicyAlways
	pod.Spec.Containers[1].LivenessProbe = probe()
	s := newSnap(t, pod)
	s.m.workers = t0
	foo1 := s.add("foo1", unknown, 0)
	foo1.kill = killState{active: true, reason: KillFailedPostStartHook, message: MessageKillFailedPostStartHook, begin: t0, stopped: true}
	s.add("foo2", running, 0).probes[Liveness-1].result = containerstate.ProbeFailure
	s.add("foo3", running, 0)
	var r Result
	if err := s.m.StepTo(t0, s.m.pod, nil, &r); err != nil {
		t.Fatal(err)
	}
	if got := killedIDs(&r); !slices.Equal(got, []string{"foo2/" + s.m.find("foo2").insts[0].id}) {
		t.Errorf("kills %v, want foo2's liveness kill", got)
	}
}
