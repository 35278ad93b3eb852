package podlifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

// TestRule5_EventsNameTheCurrentImage: after the image of a container
// changes, its pull events quote the new image as written in the spec
// (section 5), not the one they quoted before.
func TestRule5_EventsNameTheCurrentImage(t *testing.T) {
	s := newSim(t, onePod("app:1"), DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Minute)
	pod := s.pod.DeepCopy()
	pod.Spec.Containers[0].Image = "app:2"
	s.pod = pod
	from := len(s.all)
	s.settle()
	var pulling []string
	for _, r := range s.all[from:] {
		for _, e := range r.Events {
			if e.Reason == ReasonPulling {
				pulling = append(pulling, e.Message)
			}
		}
	}
	if want := []string{PullingMessage("app:2")}; !slices.Equal(pulling, want) {
		t.Errorf("Pulling events after the image change %q, want %q", pulling, want)
	}
}

// TestRule4_1_EveryFailedSidecarStarts: a sidecar that cannot start (in
// its crash-loop back-off) does not end the starts: the sidecars after it
// start in the same sync (4.1 step 6).
func TestRule4_1_EveryFailedSidecarStarts(t *testing.T) {
	pod := withSidecar()
	pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: "side2", Image: "busybox:1",
		RestartPolicy: ptr(v1.ContainerRestartPolicyAlways)})
	s := newSim(t, pod, DefaultOptions())
	s.settle()
	s.now = s.now.Add(time.Second)
	s.exit("side", 1) // restarted at once
	s.settle()
	s.now = s.now.Add(time.Second)
	s.exit("side", 1) // backed off
	s.exit("side2", 1)
	r := s.step()
	if !hasEvent(r, ReasonBackOff, "") {
		t.Fatalf("side not backed off: %v", r.Events)
	}
	if got, want := startsOf(r), []string{"StartContainer side2 restart=1"}; !slices.Equal(got, want) {
		t.Errorf("starts %v, want %v", got, want)
	}
}

// TestRule4_1_PruneAfterTheKills: the prune decided when the sync began is
// carried out once its kills are over, and an instance the runtime removed
// meanwhile is passed over, not the ones after it (4.1 steps 2 and 3).
func TestRule4_1_PruneAfterTheKills(t *testing.T) {
	pod := podP3()
	pod.Spec.RestartPolicy = v1.RestartPolicyAlways
	pod.Spec.Containers[0].LivenessProbe = probe()
	for _, n := range []string{"side-a", "side-b"} {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: n, Image: "bar-image:1",
			RestartPolicy: ptr(v1.ContainerRestartPolicyAlways)})
	}
	s := newSnap(t, pod)
	s.m.workers = t0 // the probe workers started with the pod
	var oldest [2]string
	for i, n := range []string{"side-a", "side-b"} {
		oldest[i] = s.add(n, exited, 1).id
		s.add(n, exited, 1)
		s.add(n, running, 0)
	}
	foo1 := s.add("foo1", running, 0)
	foo1.probes[Liveness-1].result = containerstate.ProbeFailure
	foo1ID := foo1.id
	s.add("foo2", running, 0)
	s.add("foo3", running, 0)
	var r Result
	step := func(at time.Duration, obs ...Observation) {
		t.Helper()
		if err := s.m.StepTo(t0.Add(at), s.m.pod, obs, &r); err != nil {
			t.Fatal(err)
		}
	}
	step(0)
	if got := actionsOf(&r); !slices.Contains(got, "KillContainer foo1 grace=2s reason=LivenessProbe") || len(removed(&r)) != 0 {
		t.Fatalf("actions %v, want the liveness kill first and no removal yet", got)
	}
	step(time.Second, Observation{Kind: ContainerRemoved, Container: "side-a", ContainerID: oldest[0]})
	step(2*time.Second, Observation{Kind: ContainerExited, Container: "foo1", ContainerID: foo1ID, ExitCode: 137})
	if got := removed(&r); !slices.Equal(got, []string{oldest[1]}) {
		t.Errorf("removed %v once the kill is over, want side-b's oldest %v", got, oldest[1])
	}
}

// TestRule5_DefaultPullPolicyUnparsable: the API server's defaulting reads
// the tag of a reference it cannot parse as empty, not latest, and gives
// IfNotPresent: a digest marker at the front, an empty name or path
// component, upper case in the repository path, a port without digits, a
// digest of an unknown algorithm, of the wrong length or in upper case, a
// bare image ID, a tag too long or not starting with a word character, a
// name over 255 characters once normalized, a bad domain or separator
// (section 5). A valid reference keeps its tag: latest with a digest is
// still Always; a first component with upper case is a domain.
func TestRule5_DefaultPullPolicyUnparsable(t *testing.T) {
	for _, img := range []string{"@x", "registry/:1", "/app", "UPPER", "host:/app", "app:latest@sha256:abcd", "app@", "r.io:/a", "[]/a", "a-.io/b", "r.io:5x/a",
		"app@sha256:" + strings.Repeat("AB", 32), "app@md5:" + strings.Repeat("ab", 16), strings.Repeat("ab", 32),
		"app:" + strings.Repeat("t", 129), strings.Repeat("a", 250), "app:-1", "app--x_"} {
		if got := defaultPullPolicy(img); got != v1.PullIfNotPresent {
			t.Errorf("rule 5: %s: %s, want %s", img, got, v1.PullIfNotPresent)
		}
	}
	for img, want := range map[string]v1.PullPolicy{
		"app:latest@sha256:" + strings.Repeat("ab", 32): v1.PullAlways,
		"app:1@sha256:" + strings.Repeat("ab", 32):      v1.PullIfNotPresent,
		"app@sha512:" + strings.Repeat("cd", 64):        v1.PullIfNotPresent,
		"UPPER/app":                                     v1.PullAlways, "localhost/app": v1.PullAlways, "localhost:5000/a/b:latest": v1.PullAlways,
		"[::1]:5000/app:2": v1.PullIfNotPresent, "a.b-c/x__y.z-w:v1.0_rc": v1.PullIfNotPresent,
		// A digest's hex: its algorithm's length, lower case (digits too).
		"app:latest@sha256:" + strings.Repeat("0a", 32):       v1.PullAlways,
		"app:latest@sha256:" + strings.Repeat("ab", 16):       v1.PullIfNotPresent,
		"app:latest@sha256:A" + strings.Repeat("a", 63):       v1.PullIfNotPresent,
		"app:latest@sha256:" + strings.Repeat("f", 63) + "F":  v1.PullIfNotPresent,
		"app:latest@sha256:" + strings.Repeat("f", 62) + "Fa": v1.PullIfNotPresent,
		// The 255 characters of the repository path, library/ included
		// for docker.io's names of one component, the domain not.
		strings.Repeat("a", 247):                      v1.PullAlways,
		strings.Repeat("a", 248):                      v1.PullIfNotPresent,
		"a/" + strings.Repeat("b", 253):               v1.PullAlways,
		"a/" + strings.Repeat("b", 254):               v1.PullIfNotPresent,
		"r.io/" + strings.Repeat("b", 255):            v1.PullAlways,
		"r.io/" + strings.Repeat("b", 256):            v1.PullIfNotPresent,
		"docker.io/" + strings.Repeat("b", 247):       v1.PullAlways,
		"index.docker.io/" + strings.Repeat("b", 248): v1.PullIfNotPresent,
		// A first component with a dot that is no host name is the
		// path's first component.
		"ho_st.io/app": v1.PullAlways,
	} {
		if got := defaultPullPolicy(img); got != want {
			t.Errorf("rule 5: %s: %s, want %s", img, got, want)
		}
	}
}
