package podrunner_test

import (
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
	v1 "k8s.io/api/core/v1"
)

// steadyRunner returns a runner with one running pod, past its start, and
// the time of its next sync (the resync).
func steadyRunner(tb testing.TB) (*podrunner.Runner, time.Time) {
	tb.Helper()
	cache, _ := statussync.NewCache(statussync.DefaultOptions())
	opts := podrunner.DefaultOptions()
	opts.PodCIDR, opts.HostIPs = "10.244.1.0/24", []string{"192.0.2.10"}
	r, err := podrunner.New(opts, cache, &recorder{})
	if err != nil {
		tb.Fatal(err)
	}
	pod := testPod("web", nil, "app")
	rt, _ := simruntime.New(simruntime.DefaultOptions(), pod, nil)
	if err := r.Add(pod, rt); err != nil {
		tb.Fatal(err)
	}
	next := r.Advance(t0)
	for i := 0; i < 10 && !next.After(t0); i++ {
		next = r.Advance(t0)
	}
	return r, next
}

// steadyMachine is the same pod's machine alone, past its start, and the
// time of its next sync.
func steadyMachine(tb testing.TB) (*podlifecycle.Machine, *v1.Pod, *podlifecycle.Result, time.Time) {
	tb.Helper()
	pod := testPod("web", nil, "app")
	m, err := podlifecycle.New(podlifecycle.DefaultOptions(), pod)
	if err != nil {
		tb.Fatal(err)
	}
	so := simruntime.DefaultOptions()
	so.IP = "10.244.1.2" // what the runner gives the pod
	rt, _ := simruntime.New(so, pod, nil)
	var res podlifecycle.Result
	now := t0
	for i := 0; ; i++ {
		if i == 100 {
			tb.Fatal("the machine does not settle")
		}
		if err := m.StepTo(now, pod, rt.Due(now), &res); err != nil {
			tb.Fatal(err)
		}
		_ = rt.Do(now, res.Actions)
		if !rt.Next().IsZero() {
			now = rt.Next()
			continue
		}
		if res.NextSync.After(now) && len(res.Actions) == 0 {
			break
		}
		now = res.NextSync
	}
	if st := res.Statuses; len(st) > 0 && state(st[len(st)-1], "app") != "Running" {
		tb.Fatalf("app %s", state(st[len(st)-1], "app"))
	}
	return m, pod, &res, res.NextSync
}

// BenchmarkResyncRunner is one steady-state sync of a running pod through
// the runner (the resync: nothing changed, no status version); compare with
// BenchmarkResyncMachine, the machine's Step alone.
func BenchmarkResyncRunner(b *testing.B) {
	r, next := steadyRunner(b)
	b.ReportAllocs()
	for b.Loop() {
		next = r.Advance(next)
	}
}

// BenchmarkResyncMachine is the same sync on the machine alone.
func BenchmarkResyncMachine(b *testing.B) {
	m, pod, res, next := steadyMachine(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.StepTo(next, pod, nil, res); err != nil {
			b.Fatal(err)
		}
		next = res.NextSync
	}
}

// BenchmarkStatusEcho is the node's own status write coming back from the
// watch: an Update of the status alone and the Advance that takes it,
// which costs no sync.
func BenchmarkStatusEcho(b *testing.B) {
	r, _ := steadyRunner(b)
	pod, _ := r.Pod("uid-web")
	st, _ := r.Status("uid-web")
	echoes := [2]*v1.Pod{echo(pod, st, "2"), echo(pod, st, "3")}
	steps := r.Stats().Steps
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = r.Update(echoes[i%2])
		r.Advance(t0)
		i++
	}
	if r.Stats().Steps != steps {
		b.Fatal("a status echo stepped the machine")
	}
}

// TestResyncAllocatesNothing: a steady-state sync allocates nothing: the
// resync of a running pod with nothing changed, on the machine alone (its
// status generation is skipped when nothing it reads changed) and through
// the runner, which adds no allocation to it (issue 29).
func TestResyncAllocatesNothing(t *testing.T) {
	r, next := steadyRunner(t)
	steps := r.Stats().Steps
	runner := testing.AllocsPerRun(100, func() { next = r.Advance(next) })
	if r.Stats().Steps-steps < 100 {
		t.Fatalf("only %d steps in 101 resyncs", r.Stats().Steps-steps)
	}
	m, pod, res, mnext := steadyMachine(t)
	machine := testing.AllocsPerRun(100, func() {
		_ = m.StepTo(mnext, pod, nil, res)
		mnext = res.NextSync
	})
	if machine != 0 || runner != 0 {
		t.Fatalf("a resync allocates %.1f times on the machine alone, %.1f times through the runner; want 0", machine, runner)
	}
}
