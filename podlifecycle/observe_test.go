package podlifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pulling returns a machine after its pod's first sync, which asked for
// the sandbox.
func pulling(t *testing.T) (*Machine, *Result) {
	t.Helper()
	pod := onePod("app:latest")
	m, err := New(DefaultOptions(), pod)
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := m.StepTo(t0, pod, nil, &r); err != nil {
		t.Fatal(err)
	}
	return m, &r
}

// TestPL44_NoSecretEventWithoutMissingSecrets: a failed pull with every
// pull secret found records Failed twice and no
// FailedToRetrieveImagePullSecret; a pull back-off with missing secrets
// neither (section 5, 10).
func TestPL44_NoSecretEventWithoutMissingSecrets(t *testing.T) {
	m, r := pulling(t)
	pod := m.pod
	if err := m.StepTo(t0, pod, []Observation{{Kind: SandboxReady, IP: "10.0.0.1"}}, r); err != nil {
		t.Fatal(err)
	}
	if err := m.StepTo(t0.Add(time.Second), pod, []Observation{{Kind: ImagePullFailed, Container: "foo1", Image: "app:latest", Message: "404"}}, r); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, e := range r.Events {
		if e.Reason == ReasonFailedToRetrieveImagePullSecret {
			t.Fatalf("events %v, want no FailedToRetrieveImagePullSecret", r.Events)
		}
		if e.Reason == ReasonFailed {
			failed++
		}
	}
	if failed < 2 {
		t.Fatalf("events %v, want the pull's two Failed", r.Events)
	}
}

// TestPulledEventNamesTheSpecImage: a pull answered without the image's
// name is about the container's image, the one its Pulled event names.
func TestPulledEventNamesTheSpecImage(t *testing.T) {
	m, r := pulling(t)
	pod := m.pod
	if err := m.StepTo(t0, pod, []Observation{{Kind: SandboxReady, IP: "10.0.0.1"}}, r); err != nil {
		t.Fatal(err)
	}
	if err := m.StepTo(t0.Add(time.Second), pod, []Observation{{Kind: ImagePulled, Container: "foo1", Duration: time.Second, Size: 10}}, r); err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != 1 || r.Events[0].Reason != ReasonPulled || !strings.Contains(r.Events[0].Message, `"app:latest"`) {
		t.Fatalf("events %v, want Pulled naming app:latest", r.Events)
	}
}

// TestFailedCreatePodSandBox: a sandbox that cannot be created records
// FailedCreatePodSandBox and requeues (4.5), except for a pod being
// deleted, whose sync does not report it.
func TestFailedCreatePodSandBox(t *testing.T) {
	for _, deleting := range []bool{false, true} {
		m, r := pulling(t)
		if got := actionsOf(r); !slices.Contains(got, "CreateSandbox attempt=0") {
			t.Fatalf("deleting %v: actions %v", deleting, got)
		}
		pod := m.pod
		if deleting {
			pod = pod.DeepCopy()
			pod.DeletionTimestamp = &metav1.Time{Time: t0}
			pod.DeletionGracePeriodSeconds = ptr(int64(30))
		}
		if err := m.StepTo(t0.Add(time.Second), pod, []Observation{{Kind: SandboxCreateFailed, Message: "no network"}}, r); err != nil {
			t.Fatal(err)
		}
		got := hasEvent(r, ReasonFailedCreatePodSandBox, "Failed to create pod sandbox: no network")
		if got == deleting {
			t.Errorf("deleting %v: FailedCreatePodSandBox recorded %v; events %v", deleting, got, r.Events)
		}
	}
}

// TestInstancesTheMachineDidNotStart: an instance the runtime reports
// without the machine having started it (found by a relist, as after a
// kubelet restart) counts one restart more than the instance before it;
// an exited instance reported unknown afterwards stays exited (section 3,
// a relist that loses an exited container's state does not undo its exit).
func TestInstancesTheMachineDidNotStart(t *testing.T) {
	s := newSim(t, onePod("busybox:1"), DefaultOptions())
	s.settle()
	first := s.lastID("foo1")
	s.now = s.now.Add(time.Second)
	s.exit("foo1", 3)
	s.emit(Observation{Kind: ContainerUnknown, Container: "foo1", ContainerID: first})
	s.emit(Observation{Kind: ContainerCreated, Container: "foo1", ContainerID: "containerd://foo1-found"})
	s.emit(Observation{Kind: ContainerStarted, Container: "foo1", ContainerID: "containerd://foo1-found"})
	s.seen["containerd://foo1-found"] = "foo1"
	s.settle()
	st := s.lastStatus().ContainerStatuses[0]
	if st.ContainerID != "containerd://foo1-found" || st.State.Running == nil || st.RestartCount != 1 {
		t.Fatalf("status %+v, want the found instance running with 1 restart", st)
	}
	if l := st.LastTerminationState.Terminated; l == nil || l.ExitCode != 3 || l.Reason != "Error" || l.ContainerID != first {
		t.Fatalf("last termination %+v, want the first instance's exit 3", st.LastTerminationState)
	}
}

// TestRule3_1_NewSandbox: a ready sandbox without an IP (not host network)
// is replaced by the next attempt; in the new sandbox of a pod under
// OnFailure, a container that exited 0 is not started again while one
// that runs is (section 2 step 2, 3.1, 3.4).
func TestRule3_1_NewSandbox(t *testing.T) {
	t.Run("no IP", func(t *testing.T) {
		m, r := pulling(t)
		pod := m.pod
		if err := m.StepTo(t0, pod, []Observation{{Kind: SandboxReady}}, r); err != nil {
			t.Fatal(err)
		}
		// The sync that made it goes on in it; the next one finds it
		// without an IP.
		if got := actionsOf(r); !slices.Equal(got, []string{"PullImage foo1 app:latest Always", "StartContainer foo1"}) {
			t.Fatalf("actions %v", got)
		}
		obs := []Observation{{Kind: ImagePulled, Container: "foo1"}, {Kind: ContainerCreated, Container: "foo1", ContainerID: "c://1"},
			{Kind: ContainerStarted, Container: "foo1", ContainerID: "c://1"}}
		if err := m.StepTo(t0.Add(time.Second), pod, obs, r); err != nil {
			t.Fatal(err)
		}
		if got := actionsOf(r); !slices.Equal(got, []string{"KillContainer foo1 grace=2s reason=Unknown"}) {
			t.Fatalf("actions %v, want the pod killed for a new sandbox", got)
		}
		if err := m.StepTo(t0.Add(2*time.Second), pod, []Observation{{Kind: ContainerExited, Container: "foo1", ContainerID: "c://1", ExitCode: 137}}, r); err != nil {
			t.Fatal(err)
		}
		if got := actionsOf(r); !slices.Contains(got, "KillSandbox attempt=0") || !slices.Contains(got, "CreateSandbox attempt=1") {
			t.Fatalf("actions %v, want the sandbox stopped and the next attempt", got)
		}
	})
	t.Run("OnFailure", func(t *testing.T) {
		pod := podP3()
		pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
		s := newSim(t, pod, DefaultOptions())
		s.settle()
		s.now = s.now.Add(time.Second)
		s.exit("foo1", 0)
		s.settle()
		s.now = s.now.Add(time.Minute)
		s.emit(Observation{Kind: SandboxNotReady})
		from := len(s.all)
		s.settle()
		var starts []string
		for _, r := range s.all[from:] {
			starts = append(starts, startsOf(&r)...)
		}
		if !slices.Equal(starts, []string{"StartContainer foo2 restart=1", "StartContainer foo3 restart=1"}) {
			t.Fatalf("starts in the new sandbox %v, want foo2 and foo3 only", starts)
		}
	})
}

// TestSandboxWithoutIP: a host-network pod's sandbox has no IP of its own
// and is ready all the same, as another pod's is with its IP:
// PodReadyToStartContainers is True and no new sandbox is made (section 2
// step 2, spec/podphase.md section 4).
func TestSandboxWithoutIP(t *testing.T) {
	for _, hostNetwork := range []bool{true, false} {
		pod := onePod("busybox:1")
		pod.Spec.HostNetwork = hostNetwork
		ip := "10.0.0.1"
		if hostNetwork {
			ip = ""
		}
		m, err := New(DefaultOptions(), pod)
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		steps := [][]Observation{nil, {{Kind: SandboxReady, IP: ip}},
			{{Kind: ImagePulled, Container: "foo1"}, {Kind: ContainerCreated, Container: "foo1", ContainerID: "c://1"}, {Kind: ContainerStarted, Container: "foo1", ContainerID: "c://1"}},
			nil}
		var last []string
		for i, obs := range steps {
			if err := m.StepTo(t0.Add(time.Duration(i)*time.Second), pod, obs, &r); err != nil {
				t.Fatal(err)
			}
			if got := actionsOf(&r); slices.Contains(got, "CreateSandbox attempt=1") || slices.ContainsFunc(got, func(a string) bool { return strings.HasPrefix(a, "Kill") }) {
				t.Fatalf("hostNetwork %v, step %d: actions %v", hostNetwork, i, got)
			}
			for _, st := range r.Statuses {
				last = last[:0]
				for _, c := range st.Conditions {
					last = append(last, string(c.Type)+"="+string(c.Status))
				}
			}
		}
		if !slices.Contains(last, "PodReadyToStartContainers=True") || !slices.Contains(last, "Ready=True") {
			t.Fatalf("hostNetwork %v: conditions %v", hostNetwork, last)
		}
	}
}
