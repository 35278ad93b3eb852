package statussync_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

var update = flag.Bool("update", false, "rewrite the golden request traces in testdata")

// tracer drives a Planner by hand against the in-memory API and writes down
// every request, its answer and what it meant, as the golden traces read.
type tracer struct {
	t       *testing.T
	b       strings.Builder
	api     *statussynctest.API
	cache   *statussync.Cache
	planner *statussync.Planner
	now     time.Time
}

func newTracer(t *testing.T, o statussync.Options, noGet bool) *tracer {
	api, err := statussynctest.NewAPIWithOptions(statussynctest.Options{Seed: 1, Features: o.Features, Version: o.Version})
	if err != nil {
		t.Fatal(err)
	}
	tr := &tracer{t: t, api: api, cache: newCache(t, o), now: epoch}
	po := statussync.DefaultPlannerOptions()
	po.NoGet = noGet
	p, err := statussync.NewPlanner(po, tr.cache)
	if err != nil {
		t.Fatal(err)
	}
	tr.planner = p
	return tr
}

func (tr *tracer) logf(format string, args ...any) { fmt.Fprintf(&tr.b, format+"\n", args...) }

func (tr *tracer) create(pod *v1.Pod) *v1.Pod {
	tr.t.Helper()
	p, err := tr.api.Create(pod)
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.logf("server: create %s/%s uid=%s rv=%s", p.Namespace, p.Name, p.UID, p.ResourceVersion)
	return p
}

func (tr *tracer) set(pod *v1.Pod, s v1.PodStatus, what string) {
	tr.t.Helper()
	_, changed, err := tr.cache.SetPodStatus(pod, s, tr.now)
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.logf("cache: %s %s: version %d (new %t)", pod.Name, what, tr.cache.Version(pod.UID), changed)
}

func (tr *tracer) foreign(name, what string, change func(*v1.Pod)) {
	tr.t.Helper()
	if err := tr.api.Update("ns", name, change); err != nil {
		tr.t.Fatal(err)
	}
	p, _ := tr.api.Pod("ns", name)
	tr.logf("server: another writer: %s (rv=%s)", what, p.ResourceVersion)
}

func (tr *tracer) step(d time.Duration) {
	tr.now = tr.now.Add(d)
	tr.logf("time: +%s", d)
}

// pass makes one pass of the planner with the API in between.
func (tr *tracer) pass(full bool) {
	kind := "fast"
	if full {
		kind = "full"
	}
	tr.logf("pass %s at %s", kind, tr.now.Format(time.TimeOnly))
	ctx := context.Background()
	tr.planner.Begin(tr.now, full)
	for {
		req, ok := tr.planner.Next()
		if !ok {
			break
		}
		var pod *v1.Pod
		var err error
		switch req.Verb {
		case statussync.VerbGet:
			pod, err = tr.api.GetPod(ctx, req.Namespace, req.Name)
		case statussync.VerbPatch:
			pod, err = tr.api.PatchPodStatus(ctx, req.Namespace, req.Name, req.Patch)
		case statussync.VerbDelete:
			err = tr.api.DeletePod(ctx, req.Namespace, req.Name, req.UID)
		}
		out := tr.planner.Done(tr.now, pod, err)
		tr.logf("  %s (v%d)\n    -> %s: %s", req, req.Version, answer(pod, err), out)
	}
	r := tr.planner.End()
	tr.logf("  = attempted %d, synced %d, deleted %d, failed %d, dropped %d", r.Attempted, r.Synced, r.Deleted, r.Failed, r.Dropped)
	if next, ok := tr.planner.NextWake(tr.now); ok {
		tr.logf("  next wake-up at %s", next.Format(time.TimeOnly))
	}
}

func answer(pod *v1.Pod, err error) string {
	if err != nil {
		var se apierrors.APIStatus
		if errors.As(err, &se) {
			return fmt.Sprintf("%d %s", se.Status().Code, se.Status().Reason)
		}
		return err.Error()
	}
	if pod == nil {
		return "200"
	}
	return fmt.Sprintf("200 rv=%s phase=%s", pod.ResourceVersion, pod.Status.Phase)
}

func (tr *tracer) golden(name string) {
	tr.t.Helper()
	path := filepath.Join("testdata", name+".txt")
	got := tr.b.String()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tr.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tr.t.Fatalf("%v (run with -update to write it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		tr.t.Errorf("%s mismatch (-want +got), run with -update if the change is meant:\n%s", path, d)
	}
}

func tracePod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Generation: 1},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "app"}}}}
}

func traceStatus(phase v1.PodPhase, ready bool) v1.PodStatus {
	s := readyStatus(ready)
	s.Phase = phase
	if phase == v1.PodSucceeded || phase == v1.PodFailed {
		code := int32(0)
		if phase == v1.PodFailed {
			code = 1
		}
		s.ContainerStatuses[0].Ready = false
		s.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code,
			StartedAt: metav1.NewTime(epoch), FinishedAt: metav1.NewTime(epoch.Add(time.Minute))}}
	}
	return s
}

// TestGoldenTraces writes down the requests of the planner in the scenarios
// of spec/statussync.md sections 4 and 5 and of nodestate's additions.
func TestGoldenTraces(t *testing.T) {
	t.Run("normal-sync", func(t *testing.T) {
		tr := newTracer(t, statussync.DefaultOptions(), false)
		tr.logf("# The kubelet's round trip: a GET and a PATCH per version; an unchanged status is not sent.")
		pod := tr.create(tracePod("web"))
		tr.set(pod, traceStatus(v1.PodRunning, false), "Running, not ready")
		tr.pass(false)
		tr.step(time.Second)
		tr.set(pod, traceStatus(v1.PodRunning, true), "ready")
		tr.pass(false)
		tr.pass(false)
		tr.step(10 * time.Second)
		tr.pass(true)
		tr.golden("normal-sync")
	})
	t.Run("recreated", func(t *testing.T) {
		tr := newTracer(t, statussync.DefaultOptions(), false)
		tr.logf("# The server has another pod under the name: the GET shows its UID, the entry is dropped.")
		pod := tr.create(tracePod("web"))
		tr.set(pod, traceStatus(v1.PodRunning, true), "Running")
		tr.pass(false)
		if _, err := tr.api.Recreate("ns", "web", "uid-web-2"); err != nil {
			t.Fatal(err)
		}
		tr.logf("server: web deleted and created again with uid uid-web-2")
		tr.set(pod, traceStatus(v1.PodRunning, false), "not ready")
		tr.pass(false)
		tr.logf("cache: holds web: %t", tr.cache.Len() == 1)
		tr.golden("recreated")
	})
	t.Run("not-found", func(t *testing.T) {
		tr := newTracer(t, statussync.DefaultOptions(), false)
		tr.logf("# A 404: the pod backs off; fast passes leave it, a full pass after the back-off asks again.")
		pod := tracePod("ghost")
		tr.set(pod, traceStatus(v1.PodRunning, true), "Running")
		tr.pass(false)
		tr.step(2 * time.Second)
		tr.pass(false)
		tr.pass(true)
		tr.create(pod)
		tr.step(10 * time.Second)
		tr.pass(true)
		tr.golden("not-found")
	})
	t.Run("terminal-first", func(t *testing.T) {
		tr := newTracer(t, statussync.DefaultOptions(), false)
		tr.logf("# Terminal statuses go first, whatever the order of the UIDs.")
		a, b, c := tr.create(tracePod("a")), tr.create(tracePod("b")), tr.create(tracePod("c"))
		tr.set(a, traceStatus(v1.PodRunning, true), "Running")
		tr.set(b, traceStatus(v1.PodRunning, true), "Running")
		tr.set(c, traceStatus(v1.PodSucceeded, false), "Succeeded")
		tr.pass(false)
		tr.golden("terminal-first")
	})
	t.Run("noget-422", func(t *testing.T) {
		tr := newTracer(t, statussync.DefaultOptions(), true)
		tr.logf("# NoGet: one PATCH per version against the last answer; a 409 reads again; a 422 on")
		tr.logf("# metadata.uid (the pod was recreated) drops the entry.")
		pod := tr.create(tracePod("web"))
		tr.set(pod, traceStatus(v1.PodRunning, false), "Running, not ready")
		tr.pass(false)
		tr.set(pod, traceStatus(v1.PodRunning, true), "ready")
		tr.pass(false)
		tr.foreign("web", "example.com/gate=True", func(p *v1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue})
		})
		tr.set(pod, traceStatus(v1.PodRunning, false), "not ready")
		tr.pass(false)
		if _, err := tr.api.Recreate("ns", "web", "uid-web-2"); err != nil {
			t.Fatal(err)
		}
		tr.logf("server: web deleted and created again with uid uid-web-2")
		tr.set(pod, traceStatus(v1.PodRunning, true), "ready")
		tr.pass(false)
		tr.logf("cache: holds web: %t", tr.cache.Len() == 1)
		tr.golden("noget-422")
	})
	t.Run("deletion", func(t *testing.T) {
		tr := newTracer(t, statussync.DefaultOptions(), false)
		tr.logf("# A finished pod: the final status, then a DELETE with grace 0 and the UID precondition;")
		tr.logf("# a failed DELETE is retried by the full pass, and costs no fast-pass wake-up.")
		pod := tr.create(tracePod("job"))
		tr.set(pod, traceStatus(v1.PodRunning, true), "Running")
		tr.pass(false)
		now := metav1.NewTime(tr.now)
		tr.foreign("job", "deletionTimestamp set", func(p *v1.Pod) { p.DeletionTimestamp = &now })
		pod.DeletionTimestamp = &now
		if err := tr.cache.TerminatePod(pod, tr.now); err != nil {
			t.Fatal(err)
		}
		tr.logf("cache: job terminated: version %d", tr.cache.Version(pod.UID))
		tr.api.FailNext("delete", statussynctest.FaultError)
		tr.pass(false)
		tr.step(10 * time.Second)
		tr.pass(true)
		tr.golden("deletion")
	})
}
