package podphase_test

import (
	"flag"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/internal/rapidcheck"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podphase/podphasetest"
)

// TestMain runs every rapid property over at least 1,000 generated pods
// unless -rapid.checks or RAPID_CHECKS says otherwise.
func TestMain(m *testing.M) {
	flag.Parse()
	if err := rapidcheck.MinChecks(1000); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// The phase is one of the four the kubelet returns, Phase agrees with
// Explain, and the explanation names only containers of the pod.
func TestPropertyPhase(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podphasetest.Pod().Draw(t, "pod")
		p := podphase.Phase(pod)
		if err := podphasetest.CheckPhase(p); err != nil {
			t.Fatal(err)
		}
		e, err := podphase.Explain(podphase.Input{Pod: pod})
		if err != nil {
			t.Fatal(err)
		}
		if e.Phase != p {
			t.Fatalf("Explain phase %s != Phase %s", e.Phase, p)
		}
		if err := podphasetest.CheckExplanation(pod, e); err != nil {
			t.Fatal(err)
		}
		terminal, err := podphase.Explain(podphase.Input{Pod: pod, Terminal: true, Initialized: ptr(rapid.Bool().Draw(t, "initialized"))})
		if err != nil {
			t.Fatal(err)
		}
		if err := podphasetest.CheckExplanation(pod, terminal); err != nil {
			t.Fatal(err)
		}
	})
}

// Without sidecars, podHasInitialized cannot change the phase, so Phase's
// derivation is exact.
func TestPropertyInitializedOnlyMattersForSidecars(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podphasetest.Pod().Draw(t, "pod")
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
				t.Skip("has a sidecar")
			}
		}
		// The generated pods are valid, so Explain must not refuse them; two
		// refusals are not two equal answers.
		a, errA := podphase.Explain(podphase.Input{Pod: pod, Initialized: ptr(true)})
		if errA != nil {
			t.Fatalf("Explain(initialized): %v", errA)
		}
		b, errB := podphase.Explain(podphase.Input{Pod: pod, Initialized: ptr(false)})
		if errB != nil {
			t.Fatalf("Explain(not initialized): %v", errB)
		}
		if err := podphasetest.CheckPhase(a.Phase); err != nil {
			t.Fatal(err)
		}
		if a.Phase != b.Phase {
			t.Fatalf("phase depends on podHasInitialized without sidecars: %s vs %s", a, b)
		}
	})
}

// Ready=True implies ContainersReady=True and every readiness gate True;
// conditions are never duplicated.
func TestPropertyConditions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podphasetest.Pod().Draw(t, "pod")
		if err := podphasetest.CheckConditions(pod, &pod.Status); err != nil {
			t.Fatal(err)
		}
		// Regenerate against the generated status as the old one: nothing
		// changed, so no lastTransitionTime may move.
		conds, err := podphase.Conditions(podphase.ConditionsInput{Pod: pod, Status: &pod.Status, Now: podphasetest.Epoch.Add(time.Duration(rapid.Int64Range(0, 1e15).Draw(t, "later")))})
		if err != nil {
			t.Fatal(err)
		}
		next := pod.Status
		next.Conditions = conds
		if err := podphasetest.CheckConditions(pod, &next); err != nil {
			t.Fatal(err)
		}
		if err := podphasetest.CheckUpdate(&pod.Status, &next); err != nil {
			t.Fatal(err)
		}
	})
}

// A terminal old phase is never left: a terminal API phase is final
// (spec 4.1 step 6), and a terminal cached phase is never replaced by a
// non-terminal one (step 3), whatever the new container statuses say.
func TestPropertyTerminalIsSticky(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		old := podphasetest.PodAt(podphasetest.StageTerminal).Draw(t, "old")
		later := podphasetest.Pod().Draw(t, "later")
		in := podphase.StatusInput{Input: podphase.Input{Pod: old}, Now: podphasetest.Epoch.Add(3600e9)}
		if rapid.Bool().Draw(t, "newStatuses") {
			in.InitContainerStatuses = alignTo(old.Spec.InitContainers, later.Status.InitContainerStatuses)
			in.ContainerStatuses = alignTo(old.Spec.Containers, later.Status.ContainerStatuses)
		}
		cached := rapid.Bool().Draw(t, "cached")
		if cached {
			// The kubelet's cache holds the terminal status; the API server
			// has not seen it yet.
			in.Old = &old.Status
			in.Pod = old.DeepCopy()
			in.Pod.Status.Phase = rapid.SampledFrom([]v1.PodPhase{v1.PodPending, v1.PodRunning}).Draw(t, "apiPhase")
		}
		res, err := podphase.GenerateStatus(in)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !cached && res.Status.Phase != old.Status.Phase:
			t.Fatalf("terminal API phase %s left for %s", old.Status.Phase, res.Status.Phase)
		case cached && !podphase.IsTerminal(res.Status.Phase):
			t.Fatalf("terminal cached phase %s left for %s", old.Status.Phase, res.Status.Phase)
		}
		if !cached {
			// The container statuses are arbitrary inputs here; the phase
			// and the conditions are what this package owns.
			before := old.Status
			before.InitContainerStatuses, before.ContainerStatuses = nil, nil
			if err := podphasetest.CheckUpdate(&before, &res.Status); err != nil {
				t.Fatal(err)
			}
		}
		if err := podphasetest.CheckConditions(in.Pod, &res.Status); err != nil {
			t.Fatal(err)
		}
		if _, err := podphase.Guard(old.Status.Phase, later.Status.Phase); later.Status.Phase != old.Status.Phase && err == nil {
			t.Fatalf("Guard allowed %s -> %s", old.Status.Phase, later.Status.Phase)
		}
	})
}

// DisplayStatus is never empty for a pod with a phase, and Columns agrees
// with it.
func TestPropertyDisplay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podphasetest.Pod().Draw(t, "pod")
		if err := podphasetest.CheckDisplay(pod); err != nil {
			t.Fatal(err)
		}
		row, err := podphase.Columns(pod, podphasetest.Epoch.Add(48*3600e9))
		if err != nil {
			t.Fatal(err)
		}
		if row.Status != podphase.DisplayStatus(pod) {
			t.Fatalf("Columns STATUS %q != DisplayStatus %q", row.Status, podphase.DisplayStatus(pod))
		}
		if row.ReadyContainers > row.TotalContainers {
			t.Fatalf("READY %s: more ready than total", row.Ready)
		}
	})
}

// A pod's life as the kubelet drives it: each sync regenerates the status
// from new container statuses; the update invariants hold after every step
// and a terminal phase, once written, stays.
func TestModelPodLife(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := podphasetest.PodAt(podphasetest.StageNew).Draw(t, "pod")
		now := podphasetest.Epoch
		var prev *v1.PodStatus
		var terminal v1.PodPhase
		sync := func(t *rapid.T, stage podphasetest.Stage, podIsTerminal bool) {
			next := podphasetest.PodAt(stage).Draw(t, "next")
			now = now.Add(10e9)
			in := podphase.StatusInput{Input: podphase.Input{Pod: pod, Terminal: podIsTerminal}, Old: prev, Now: now,
				InitContainerStatuses: alignTo(pod.Spec.InitContainers, next.Status.InitContainerStatuses),
				ContainerStatuses:     alignTo(pod.Spec.Containers, next.Status.ContainerStatuses)}
			res, err := podphase.GenerateStatus(in)
			if err != nil {
				t.Fatal(err)
			}
			if prev != nil {
				if err := podphase.CheckTransition(prev.Phase, res.Status.Phase); err != nil {
					t.Fatal(err)
				}
			}
			if terminal != "" && res.Status.Phase != terminal {
				t.Fatalf("terminal %s left for %s", terminal, res.Status.Phase)
			}
			if podphase.IsTerminal(res.Status.Phase) {
				terminal = res.Status.Phase
			}
			if err := podphasetest.CheckConditions(pod, &res.Status); err != nil {
				t.Fatal(err)
			}
			s := res.Status
			prev = &s
			// The status manager writes the status back to the API.
			pod = pod.DeepCopy()
			pod.Status = *s.DeepCopy()
		}
		t.Repeat(map[string]func(*rapid.T){
			"initializing": func(t *rapid.T) { sync(t, podphasetest.StageInitializing, false) },
			"running":      func(t *rapid.T) { sync(t, podphasetest.StageRunning, false) },
			"terminated":   func(t *rapid.T) { sync(t, podphasetest.StageTerminal, rapid.Bool().Draw(t, "podIsTerminal")) },
			"": func(t *rapid.T) {
				if prev != nil {
					if err := podphasetest.CheckPhase(prev.Phase); err != nil {
						t.Fatal(err)
					}
				}
			},
		})
	})
}

// alignTo renames generated statuses after the containers of spec, so a
// status generated for another spec reads as one for this pod.
func alignTo(spec []v1.Container, statuses []v1.ContainerStatus) []v1.ContainerStatus {
	var out []v1.ContainerStatus
	for i := range spec {
		if i < len(statuses) {
			st := *statuses[i].DeepCopy()
			st.Name = spec[i].Name
			out = append(out, st)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
