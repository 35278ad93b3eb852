package podrunner_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRelist: the kubelet learns of a change no sync of its own caused at
// its next PLEG relist, every second (spec/podlifecycle.md rule 4.5, "a
// runtime state change"): a container that exits by itself at 2.5 s shows
// Terminated in the sync of the relist at 3 s. A readiness probe that ticks
// in between runs against the exited container and errors, as the real
// kubelet's does (oracle case "crashloop-readiness": Unhealthy, "container
// is in CONTAINER_EXITED state"). An exit that answers a kill is taken at
// once, and with RelistPeriod 0 so is every change; a change held for the
// relist is taken with the answers of the calls a sync made, as the relist
// after that sync sees it, and with OnDemandRelistDelay so is one that
// comes within the delay after them.
func TestRelist(t *testing.T) {
	type seen struct {
		at    time.Duration
		state string
	}
	var onDemand time.Duration // Options.OnDemandRelistDelay of the next run
	run := func(t *testing.T, relist time.Duration, clauses string, probe bool, d time.Duration, addAt ...time.Duration) ([]seen, *node) {
		var n *node
		var out []seen
		opts := podrunner.DefaultOptions()
		opts.PodCIDR, opts.RelistPeriod, opts.OnDemandRelistDelay = "10.244.1.0/24", relist, onDemand
		opts.Hooks.Synced = func(_ time.Time, _ *v1.Pod, _ []podlifecycle.Observation, res *podlifecycle.Result) {
			for _, st := range res.Statuses {
				if s := state(st, "app"); len(out) == 0 || out[len(out)-1].state != s {
					out = append(out, seen{n.now.Sub(t0), s})
				}
			}
		}
		n = newNode(t, opts)
		n.r.Advance(n.now) // the relists count from here
		for _, a := range addAt {
			n.now = n.now.Add(a)
		}
		pod := testPod("p", map[string]string{simruntime.AnnotationPrefix + "app": clauses}, "app")
		if probe {
			pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}},
				PeriodSeconds: 1, InitialDelaySeconds: 0}
		}
		n.add(pod)
		n.run(d)
		return out, n
	}
	exitAt := func(ss []seen) time.Duration {
		for _, s := range ss {
			if s.state == "Terminated/Error" || s.state == "Terminated/Completed" {
				return s.at
			}
		}
		return -1
	}
	t.Run("an exit by itself waits for the relist", func(t *testing.T) {
		ss, _ := run(t, time.Second, "run 2.5s exit 1", false, 10*time.Second)
		if at := exitAt(ss); at != 3*time.Second {
			t.Fatalf("the exit at 2.5s showed at %v, want the relist at 3s (%v)", at, ss)
		}
	})
	t.Run("no relist period: at once", func(t *testing.T) {
		ss, _ := run(t, 0, "run 2.5s exit 1", false, 10*time.Second)
		if at := exitAt(ss); at != 2500*time.Millisecond {
			t.Fatalf("the exit showed at %v, want 2.5s (%v)", at, ss)
		}
	})
	t.Run("a probe between the exit and the relist errors", func(t *testing.T) {
		// Added at 0.8 s: the probe ticks at 1.8 s, 2.8 s, ...; the exit at
		// 2.7 s is seen at the relist at 3 s.
		_, n := run(t, time.Second, "run 1.9s exit 1", true, 2900*time.Millisecond, 800*time.Millisecond)
		var errored int
		for _, e := range n.rec.reasons() {
			if strings.Contains(e, "Unhealthy") && strings.Contains(e, "CONTAINER_EXITED") {
				errored++
			}
		}
		if errored == 0 {
			t.Fatalf("no Unhealthy event for the probe between the exit and the relist: %v", n.rec.reasons())
		}
	})
	t.Run("an exit at the start is seen with it", func(t *testing.T) {
		// The relist after the sync that started the container sees it
		// already exited: it never shows running (oracle generated pods:
		// a sidecar that exits at once keeps the regular containers
		// waiting, as it never counts as started).
		ss, _ := run(t, time.Second, "run 0s exit 0", false, 3*time.Second, 300*time.Millisecond)
		for _, s := range ss {
			if s.state == "Running" {
				t.Fatalf("the container showed running: %v", ss)
			}
		}
		if at := exitAt(ss); at < 0 || at >= time.Second {
			t.Fatalf("the exit at the start showed at %v, want with the start's answer (%v)", at, ss)
		}
	})
	t.Run("an exit within the on-demand relist's delay is seen with the start", func(t *testing.T) {
		// The kubelet relists on demand once SyncPod returned: a container
		// that ran 1 ms is exited by then (oracle generated pod gen-169: a
		// sidecar that runs 1 ms never counts as started). Without the
		// delay the answers are taken at the start's instant, running.
		for _, tc := range []struct {
			delay   time.Duration
			running bool
		}{{10 * time.Millisecond, false}, {0, true}} {
			onDemand = tc.delay
			ss, _ := run(t, time.Second, "run 1ms exit 0", false, 3*time.Second, 300*time.Millisecond)
			running := false
			for _, s := range ss {
				running = running || s.state == "Running"
			}
			if at := exitAt(ss); running != tc.running || at < 0 || !tc.running && at >= time.Second {
				t.Errorf("delay %v: running %v, want %v; the exit showed at %v (%v)", tc.delay, running, tc.running, at, ss)
			}
		}
		onDemand = 0
	})
	t.Run("answers go before the changes taken with them", func(t *testing.T) {
		// A container that exits as soon as it starts, at an instant a
		// periodic relist falls on: its exit is due at once, not held for
		// a later relist, and is taken in one batch with the answers of
		// its creation and start. The machine gets them as the runtime gave
		// them, created, started, exited (the answers had gone after the
		// exit once), and refuses nothing.
		opts := podrunner.DefaultOptions()
		opts.PodCIDR, opts.RelistPeriod, opts.OnDemandRelistDelay = "10.244.1.0/24", time.Second, 10*time.Millisecond
		var kinds []podlifecycle.ObservationKind
		opts.Hooks.Synced = func(_ time.Time, _ *v1.Pod, obs []podlifecycle.Observation, _ *podlifecycle.Result) {
			for _, o := range obs {
				if o.Container == "app" {
					kinds = append(kinds, o.Kind)
				}
			}
		}
		n := newNode(t, opts)
		pod := testPod("p", map[string]string{simruntime.AnnotationPrefix + "app": "run 0s exit 0"}, "app")
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		n.add(pod)
		for range 5 {
			n.r.Advance(n.now)
			n.now = n.now.Add(2 * time.Second)
		}
		want := []podlifecycle.ObservationKind{podlifecycle.ImagePulled, podlifecycle.ContainerCreated, podlifecycle.ContainerStarted, podlifecycle.ContainerExited}
		if !slices.Equal(kinds, want) {
			t.Fatalf("the machine got %v for the container, want %v", kinds, want)
		}
		if s := n.r.Stats(); s.DroppedObservations != 0 || s.StepErrors != 0 {
			t.Fatalf("dropped %d observations, %d step errors; want none", s.DroppedObservations, s.StepErrors)
		}
	})
	t.Run("a kill's answer at once", func(t *testing.T) {
		// ignore-sigterm 1.5s: the kill with the 30 s grace stops it at 1.5 s
		// after the delete, not at a relist.
		_, n := run(t, time.Second, "ignore-sigterm 1.5s", false, 5*time.Second)
		pod := testPod("p", map[string]string{simruntime.AnnotationPrefix + "app": "ignore-sigterm 1.5s"}, "app")
		deleted := pod.DeepCopy()
		now := n.now
		ts := metavvTime(now.Add(200 * time.Millisecond))
		deleted.DeletionTimestamp, deleted.DeletionGracePeriodSeconds = &ts, ptr30()
		deleted.ResourceVersion = "2"
		n.now = now.Add(200 * time.Millisecond)
		if err := n.r.Update(deleted); err != nil {
			t.Fatal(err)
		}
		n.run(1600 * time.Millisecond) // to 6.8 s: the exit at 6.7 s, before the relist at 7 s
		st := n.status("uid-p")
		if s := state(st, "app"); s != "Terminated/Error" {
			t.Fatalf("1.5 s after the delete the container is %s, want Terminated (the kill's answer, not held for a relist)", s)
		}
	})
}

func metavvTime(t time.Time) metav1.Time { return metav1.NewTime(t) }

func ptr30() *int64 { g := int64(30); return &g }

// TestBlockedSync: the kubelet's SyncPod waits for a postStart hook (and a
// pull) before it returns, and no sync of the pod happens meanwhile: a
// container whose postStart hook takes 3 s shows running only from then on,
// although the runtime reported it started at once (podlifecycle's
// syncBlocked; oracle case "poststart-fails").
func TestBlockedSync(t *testing.T) {
	var n *node
	var running time.Duration = -1
	opts := podrunner.DefaultOptions()
	opts.PodCIDR = "10.244.1.0/24"
	opts.Hooks.Synced = func(_ time.Time, _ *v1.Pod, _ []podlifecycle.Observation, res *podlifecycle.Result) {
		for _, st := range res.Statuses {
			if state(st, "app") == "Running" && running < 0 {
				running = n.now.Sub(t0)
			}
		}
	}
	n = newNode(t, opts)
	pod := testPod("p", map[string]string{simruntime.AnnotationPrefix + "app": "poststart 3s"}, "app")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"warm"}}}}
	n.add(pod)
	n.run(10 * time.Second)
	if running != 3*time.Second {
		t.Fatalf("the container showed running at %v, want +3s, when its postStart hook returned", running)
	}
}
