package podlifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestRule5_DefaultPullPolicy: Always for latest or no tag, IfNotPresent
// for a tag or a digest (section 5).
func TestRule5_DefaultPullPolicy(t *testing.T) {
	for img, want := range map[string]v1.PullPolicy{
		"busybox": v1.PullAlways, "busybox:latest": v1.PullAlways, "busybox:1.36": v1.PullIfNotPresent,
		"registry:5000/app": v1.PullAlways, "registry:5000/app:2": v1.PullIfNotPresent,
		"app@sha256:abcd": v1.PullIfNotPresent,
	} {
		if got := defaultPullPolicy(img); got != want {
			t.Errorf("rule 5: %s: %s, want %s", img, got, want)
		}
	}
}

// TestRule5_PresentAndNever: a present image is not pulled under
// IfNotPresent and Never (Pulled "already present ... can be accessed");
// an absent one under Never fails with ErrImageNeverPull and requeues
// (section 5 steps 2-3, 4.5).
func TestRule5_PresentAndNever(t *testing.T) {
	pod := onePod("app:1")
	pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "never", Image: "gone:1", ImagePullPolicy: v1.PullNever})
	m, _ := New(DefaultOptions(), pod)
	var r Result
	m.StepTo(t0, pod, []Observation{{Kind: ImagePresent, Image: "app:1"}}, &r)
	m.StepTo(t0, pod, []Observation{{Kind: SandboxReady, IP: "10.0.0.2"}}, &r)
	if got := actionsOf(&r); !slices.Equal(got, []string{"StartContainer foo1"}) {
		t.Fatalf("actions %v", got)
	}
	var evs []string
	for _, e := range r.Events {
		evs = append(evs, e.Type+" "+e.Reason+" "+e.Message)
	}
	want := []string{
		`Normal Pulled Container image "app:1" already present on machine and can be accessed by the pod`,
		`Warning ErrImageNeverPull Container image "gone:1" is not present with pull policy of Never`,
		`Warning Failed Error: ErrImageNeverPull`,
	}
	if !slices.Equal(evs, want) {
		t.Fatalf("events %q", evs)
	}
	// The sync that made the sandbox ended with an error: the relist that
	// finds the sandbox syncs once the start it waits on is answered
	// (rule 4.5); that sync's error requeues after 10 s.
	if !r.NextSync.IsZero() {
		t.Fatalf("next sync at +%v while the start is unanswered, want none: the answer syncs", r.NextSync.Sub(t0))
	}
	m.StepTo(t0, pod, []Observation{{Kind: ContainerCreated, Container: "foo1", ContainerID: "c://1"},
		{Kind: ContainerStarted, Container: "foo1", ContainerID: "c://1"}}, &r)
	if w := waiting(m.lastStatus, "never"); !strings.HasPrefix(w, "ErrImageNeverPull") {
		t.Fatalf("the relist's sync shows %q", w)
	}
	if d := r.NextSync.Sub(t0); d != 10*time.Second {
		t.Fatalf("requeue %v", d)
	}
}

// TestRule4_2_CreateAndStartFailures: config and create errors record
// Failed "Error: <message>", show as the Waiting reason at the next sync,
// and are retried at the error requeue with no crash-loop back-off; the
// failure itself is no runtime event, so it syncs nothing at once (4.2
// steps 4-7, 4.4, 4.5, section 12 pitfall 3).
func TestRule4_2_CreateAndStartFailures(t *testing.T) {
	pod := onePod("app:1")
	m, _ := New(DefaultOptions(), pod)
	var r Result
	m.StepTo(t0, pod, []Observation{{Kind: ImagePresent, Image: "app:1"}}, &r)
	m.StepTo(t0, pod, []Observation{{Kind: SandboxReady, IP: "10.0.0.2"}}, &r)
	now := t0.Add(time.Second)
	// The sync that made the sandbox fails: the relist that finds the
	// sandbox syncs at once (rule 4.5) and retries the creation.
	if err := m.StepTo(now, pod, []Observation{{Kind: ContainerCreateFailed, Container: "foo1",
		Reason: "CreateContainerConfigError", Message: `secret "s" not found`}}, &r); err != nil {
		t.Fatal(err)
	}
	if got := actionsOf(&r); !slices.Equal(got, []string{"StartContainer foo1"}) {
		t.Fatalf("the sandbox's relist did not retry the creation: %v", got)
	}
	for i := 0; i < 3; i++ {
		now = now.Add(time.Second)
		if err := m.StepTo(now, pod, []Observation{{Kind: ContainerCreateFailed, Container: "foo1",
			Reason: "CreateContainerConfigError", Message: `secret "s" not found`}}, &r); err != nil {
			t.Fatal(err)
		}
		if !hasEvent(&r, ReasonFailed, `Error: secret "s" not found`) || len(r.Actions) != 0 {
			t.Fatalf("events %v actions %v", r.Events, actionsOf(&r))
		}
		if d := r.NextSync.Sub(now); d != 10*time.Second {
			t.Fatalf("retry after %v", d)
		}
		now = r.NextSync
		m.StepTo(now, pod, nil, &r)
		if w := waiting(m.lastStatus, "foo1"); w != `CreateContainerConfigError: secret "s" not found` {
			t.Fatalf("waiting %q", w)
		}
		if got := actionsOf(&r); !slices.Equal(got, []string{"StartContainer foo1"}) {
			t.Fatalf("retried without back-off: %v", got)
		}
	}
	m.StepTo(now, pod, []Observation{{Kind: ContainerCreated, Container: "foo1", ContainerID: "c://1"},
		{Kind: ContainerStartFailed, Container: "foo1", ContainerID: "c://1", Message: "exec format error"}}, &r)
	if !hasEvent(&r, ReasonCreated, MessageCreated) || !hasEvent(&r, ReasonFailed, "Error: exec format error") {
		t.Fatalf("events %v", r.Events)
	}
	// The created container is a runtime event: the kubelet syncs at once and
	// starts it again (3.6: created -> start), with no back-off (4.4).
	if got := actionsOf(&r); !slices.Equal(got, []string{"StartContainer foo1 restart=1"}) {
		t.Fatalf("actions %v", got)
	}
	if w := waiting(m.lastStatus, "foo1"); !strings.HasPrefix(w, "RunContainerError") {
		t.Fatalf("waiting %q", w)
	}
}
