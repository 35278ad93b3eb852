package podlifecycle

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/containerstate"
)

// takeObs removes from s's queue the observations keep selects and returns
// them.
func takeObs(s *sim, keep func(Observation) bool) []Observation {
	var out []Observation
	rest := s.obs[:0]
	for _, o := range s.obs {
		if keep(o) {
			out = append(out, o)
		} else {
			rest = append(rest, o)
		}
	}
	s.obs = rest
	return out
}

func sandboxReadyObs(o Observation) bool    { return o.Kind == SandboxReady }
func sandboxNotReadyObs(o Observation) bool { return o.Kind == SandboxNotReady }

// createSandboxes lists the attempts of r's CreateSandbox actions.
func createSandboxes(all []Result) []uint32 {
	var out []uint32
	for _, r := range all {
		for _, a := range r.Actions {
			if a.Kind == CreateSandbox {
				out = append(out, a.Attempt)
			}
		}
	}
	return out
}

// TestRule2_2_SandboxReports: how the reports about the pod's sandbox
// change the machine's view of it (section 2 step 2, rule 4.5: a runtime
// change syncs at once).
func TestRule2_2_SandboxReports(t *testing.T) {
	t.Run("lost", func(t *testing.T) {
		// The ready sandbox the runtime reports not ready any more is
		// replaced by the next attempt.
		s := newSim(t, onePod("busybox:1"), DefaultOptions())
		s.settle()
		s.now = s.now.Add(time.Minute)
		s.emit(Observation{Kind: SandboxNotReady})
		s.settle()
		if got := createSandboxes(s.all); !slices.Equal(got, []uint32{0, 1}) {
			t.Fatalf("sandboxes created %v, want attempts 0 then 1", got)
		}
	})
	t.Run("ready-again", func(t *testing.T) {
		// Not ready, then ready again, in one relist: the sandbox is the
		// same attempt, ready; no new one.
		s := newSim(t, onePod("busybox:1"), DefaultOptions())
		s.settle()
		s.now = s.now.Add(time.Minute)
		s.emit(Observation{Kind: SandboxNotReady})
		s.emit(Observation{Kind: SandboxReady, IP: "10.0.0.1"})
		s.settle()
		if got := createSandboxes(s.all); !slices.Equal(got, []uint32{0}) {
			t.Fatalf("sandboxes created %v, want the first only", got)
		}
	})
	t.Run("old-attempt-stopped-late", func(t *testing.T) {
		// The report that the old sandbox stopped, after the new one is
		// ready, changes nothing of the new one.
		s := newSim(t, onePod("busybox:1"), DefaultOptions())
		s.settle()
		s.now = s.now.Add(time.Minute)
		s.emit(Observation{Kind: SandboxNotReady})
		s.step() // KillSandbox 0, CreateSandbox 1: answered NotReady 0, Ready 1
		late := takeObs(s, sandboxNotReadyObs)
		s.obs = append(s.obs, late...)
		s.settle()
		if got := createSandboxes(s.all); !slices.Equal(got, []uint32{0, 1}) {
			t.Fatalf("sandboxes created %v, want attempts 0 then 1 only", got)
		}
		if st := s.lastStatus(); st == nil || len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State.Running == nil {
			t.Fatalf("the container does not run in the new sandbox: %+v", st)
		}
	})
	t.Run("stop-of-a-lost-sandbox", func(t *testing.T) {
		// The answer to the KillSandbox of a sandbox that was not ready
		// any more is no runtime event: the sync waiting for the new
		// sandbox is not woken by it.
		s := newSim(t, onePod("busybox:1"), DefaultOptions())
		s.settle()
		s.now = s.now.Add(time.Minute)
		lost := s.now
		s.emit(Observation{Kind: SandboxNotReady})
		s.step()
		s.step() // the kill answered: KillSandbox 0, CreateSandbox 1
		ready := takeObs(s, sandboxReadyObs)
		if len(ready) != 1 || len(s.obs) != 1 {
			t.Fatalf("want the answers to KillSandbox and CreateSandbox, got %v and %v", ready, s.obs)
		}
		s.now = lost.Add(2 * time.Second)
		r := s.step()
		if want := lost.Add(DefaultSyncFrequency); !r.NextSync.Equal(want) {
			t.Fatalf("next sync +%v after the old sandbox's stop, want +%v as before it", r.NextSync.Sub(lost), want.Sub(lost))
		}
	})
	t.Run("stop-of-a-ready-sandbox", func(t *testing.T) {
		// A sandbox without an IP is ready: it is stopped for a new one,
		// and its stop is a runtime event that syncs the pod at once; that
		// sync waits for the new sandbox, whose readiness then gives the
		// status with PodReadyToStartContainers True and nothing else
		// changed (section 15 decision 6).
		s := newSim(t, onePod("busybox:1"), DefaultOptions())
		s.step()
		for i := range s.obs {
			s.obs[i].IP = "" // the first sandbox has no IP
		}
		for i := 0; i < 10 && len(createSandboxes(s.all)) < 2; i++ {
			s.step()
		}
		if got := createSandboxes(s.all); !slices.Equal(got, []uint32{0, 1}) {
			t.Fatalf("sandboxes created %v, want attempts 0 then 1", got)
		}
		ready := takeObs(s, sandboxReadyObs)
		if len(ready) != 1 || len(s.obs) != 1 {
			t.Fatalf("want the answers to KillSandbox and CreateSandbox, got %v and %v", ready, s.obs)
		}
		s.now = s.now.Add(2 * time.Second)
		r := s.step()
		if want := s.now.Add(DefaultSyncFrequency); !r.NextSync.Equal(want) {
			t.Fatalf("next sync +%v after the old sandbox's stop, want the resync of the sync it started, +%v", r.NextSync.Sub(t0), want.Sub(t0))
		}
		s.now = s.now.Add(time.Second)
		s.emit(ready[0])
		r = s.step()
		if len(r.Statuses) != 1 {
			t.Fatalf("%d statuses when the new sandbox is ready, want 1", len(r.Statuses))
		}
		st := r.Statuses[0]
		if condition(&st, v1.PodReadyToStartContainers) != v1.ConditionTrue || st.PodIP != "" {
			t.Errorf("status at the new sandbox: PodReadyToStartContainers %s, pod IP %q; want True and none yet",
				condition(&st, v1.PodReadyToStartContainers), st.PodIP)
		}
	})
}

// TestHostNetworkStatusHasNoEmptyPodIP: a host-network pod's sandbox has no
// IP of its own; its status lists no pod IP for it.
func TestHostNetworkStatusHasNoEmptyPodIP(t *testing.T) {
	pod := onePod("busybox:1")
	pod.Spec.HostNetwork = true
	s := newSim(t, pod, DefaultOptions())
	for i := 0; i < 10; i++ {
		for j := range s.obs {
			s.obs[j].IP = ""
		}
		s.step()
	}
	st := s.lastStatus()
	if st == nil || st.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("the pod does not run: %+v", st)
	}
	if st.PodIP != "" || len(st.PodIPs) != 0 {
		t.Errorf("pod IP %q, pod IPs %v; want none", st.PodIP, st.PodIPs)
	}
}

// TestRule2_2_RemovalOfPurgedInitsIgnored: a new sandbox purges the init
// containers' instances (their removals are issued with the sandbox's
// creation, and the machine forgets them at once); the runtime's later
// report that they are gone is accepted and changes nothing: every init
// container runs again in the new sandbox, as the kubelet's does.
func TestRule2_2_RemovalOfPurgedInitsIgnored(t *testing.T) {
	s := newSim(t, podPI(), DefaultOptions())
	s.stepExitingInits(10)
	s.now = s.now.Add(time.Minute)
	s.emit(Observation{Kind: SandboxNotReady})
	removed := 0
	for i := 0; i < 4; i++ {
		r := s.step()
		for _, a := range r.Actions {
			if a.Kind == RemoveContainer && a.ContainerKind == containerstate.Init {
				s.emit(Observation{Kind: ContainerRemoved, Container: a.Container, ContainerID: a.ContainerID})
				removed++
			}
			if a.Kind == StartContainer && a.ContainerKind == containerstate.Init {
				s.exit(a.Container, 0)
			}
		}
	}
	if removed == 0 {
		t.Fatal("the new sandbox removed no init container")
	}
	s.stepExitingInits(10)
	for _, name := range []string{"init1", "init2", "init3"} {
		if n := s.count(StartContainer, name); n != 2 {
			t.Fatalf("%s started %d times, want twice (once per sandbox): %v", name, n, s.events())
		}
	}
}
