package podlifecycle

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// killedIDs lists the instances r's KillContainer actions stop, as
// "container/ID".
func killedIDs(r *Result) []string {
	var out []string
	for _, a := range r.Actions {
		if a.Kind == KillContainer {
			out = append(out, a.Container+"/"+a.ContainerID)
		}
	}
	return out
}

// TestRule7_3_KillsEveryRunningInstance: termination kills every running
// instance of a container, not only its newest: an older instance still
// running behind a newer one that is only created, or behind one whose
// kill is under way, is killed too; and a sidecar waits for every regular
// instance being killed, whichever instance of its container it is
// (sections 7.3 and 7.5).
func TestRule7_3_KillsEveryRunningInstance(t *testing.T) {
	t.Run("behind-a-created-instance", func(t *testing.T) {
		pod := withSidecar()
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
		s := newSim(t, pod, DefaultOptions())
		s.holdKill["foo1"], s.holdKill["side"] = true, true
		s.settle()
		running := s.lastID("foo1")
		s.now = s.now.Add(time.Second)
		// The runtime made another instance, not started yet, as the
		// deletion comes.
		s.emit(Observation{Kind: ContainerCreated, Container: "foo1", ContainerID: "containerd://foo1-extra"})
		s.pod = deleted(s.pod, s.now, 30)
		r := s.step()
		if got, want := killedIDs(r), []string{"foo1/" + running}; !slices.Equal(got, want) {
			t.Errorf("kills %v, want %v: the running instance now, the sidecar once it stopped", got, want)
		}
	})
	t.Run("behind-an-instance-being-killed", func(t *testing.T) {
		s := newSim(t, onePod("app:1"), DefaultOptions())
		s.holdKill["foo1"] = true
		s.settle()
		first := s.lastID("foo1")
		s.now = s.now.Add(time.Second)
		// Another instance the runtime runs beside it; then it turns
		// unknown and is killed (rule 3.6).
		s.emit(Observation{Kind: ContainerCreated, Container: "foo1", ContainerID: "containerd://foo1-extra"})
		s.emit(Observation{Kind: ContainerStarted, Container: "foo1", ContainerID: "containerd://foo1-extra"})
		s.step()
		s.now = s.now.Add(time.Second)
		s.emit(Observation{Kind: ContainerUnknown, Container: "foo1", ContainerID: "containerd://foo1-extra"})
		if got := killedIDs(s.step()); !slices.Equal(got, []string{"foo1/containerd://foo1-extra"}) {
			t.Fatalf("kills %v, want the unknown instance's", got)
		}
		s.now = s.now.Add(time.Second)
		s.pod = deleted(s.pod, s.now, 30)
		if got, want := killedIDs(s.step()), []string{"foo1/" + first}; !slices.Equal(got, want) {
			t.Errorf("kills at the deletion %v, want %v", got, want)
		}
	})
}

// TestStartsAnsweredTogether: a relist that finds two containers the sync
// started, one with its creation and one already running, takes both: the
// second's creation is implied, whatever came before it in the batch.
func TestStartsAnsweredTogether(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:2]
	s := newSim(t, pod, DefaultOptions())
	for i := 0; i < 10 && s.count(StartContainer, "foo2") == 0; i++ {
		s.step()
	}
	dropped := takeObs(s, func(o Observation) bool { return o.Kind == ContainerCreated && o.Container == "foo2" })
	if len(dropped) != 1 {
		t.Fatalf("foo2's creation not queued: %v", s.obs)
	}
	r := s.step() // fails the test on a refused batch
	created := 0
	for _, e := range r.Events {
		if e.Reason == ReasonCreated {
			created++
		}
	}
	if created != 2 {
		t.Errorf("%d Created events, want foo1's and foo2's implied one", created)
	}
}

// TestRule7_4_RepeatedPreStopResultIgnored: the preStop hook's time is
// taken off the grace once, when its result comes; a second report of the
// same hook's end changes nothing of the sidecar's wait for its turn or of
// its stop's grace (section 7.4 steps 4 to 6, 7.5).
func TestRule7_4_RepeatedPreStopResultIgnored(t *testing.T) {
	pod := withSidecar()
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
	pod.Spec.InitContainers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"drain"}}}}
	s := newSim(t, pod, DefaultOptions())
	s.holdKill["foo1"] = true
	s.settle()
	del := s.now.Add(time.Second)
	s.now = del
	s.pod = deleted(s.pod, del, 30)
	s.step() // Killing both; the sidecar's preStop runs, answered at once
	sideID := s.lastID("side")
	r := s.step()
	if len(killedIDs(r)) != 0 {
		t.Fatalf("kills %v before foo1 stopped", killedIDs(r))
	}
	s.now = del.Add(5500 * time.Millisecond)
	s.emit(Observation{Kind: HookResult, Container: "side", ContainerID: sideID, Hook: PreStop})
	s.step()
	s.now = del.Add(10400 * time.Millisecond)
	s.exit("foo1", 0)
	var grace time.Duration
	for i := 0; i < 3 && grace == 0; i++ {
		for _, a := range s.step().Actions {
			if a.Kind == KillContainer && a.Container == "side" {
				grace = a.Grace
			}
		}
	}
	// 30 s, less the 10 whole seconds waited for foo1 from the hook's end.
	if grace != 20*time.Second {
		t.Errorf("the sidecar's stop grace %v, want 20s", grace)
	}
}
