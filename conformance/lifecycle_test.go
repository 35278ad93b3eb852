package conformance

import (
	"errors"
	"flag"
	"slices"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	proberesults "k8s.io/kubernetes/pkg/kubelet/prober/results"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/podlifecycle"
)

// The podlifecycle property against v1.37.2 in this process: the history of
// lifecycle_history_test.go with upstreamPod as the upstream side.

// inProcess is upstreamPod as the history's lifecycleRuntime.
type inProcess struct{ p *upstreamPod }

func (r inProcess) running() []string { return r.p.running() }
func (r inProcess) pod() *v1.Pod      { return r.p.pod }
func (r inProcess) close()            {}

func (r inProcess) apply(s lifecycleStep) error {
	p := r.p
	p.advance(s.Advance)
	for _, c := range sortedKeys(s.Exits) {
		p.exit(c, s.Exits[c])
	}
	for _, set := range []struct {
		results map[string]bool
		m       proberesults.Manager
	}{{s.Startup, p.startup}, {s.Liveness, p.liveness}} {
		for _, c := range sortedKeys(set.results) {
			result := proberesults.Failure
			if set.results[c] {
				result = proberesults.Success
			}
			p.setProbe(set.m, c, result)
		}
	}
	for _, e := range s.PullErrors {
		p.failPulls(errors.New(e))
	}
	for _, e := range s.HookErrors {
		p.failHooks(errors.New(e))
	}
	if s.Delete != nil {
		p.deleteAt(*s.Delete)
	}
	return nil
}

func (r inProcess) sync() (lifecycleSync, error) {
	u := r.p.sync(false)
	return lifecycleSync{Calls: u.Calls, Events: u.Events, Wall: u.Wall}, nil
}

func (r inProcess) terminate(grace *int64) (lifecycleSync, error) {
	u := r.p.terminate(grace)
	return lifecycleSync{Calls: u.Calls, Events: u.Events, Wall: u.Wall}, nil
}

// running lists the containers whose newest instance runs in the fake
// runtime, in spec order.
func (p *upstreamPod) running() []string {
	p.cri.FakeRuntimeService.Lock()
	defer p.cri.FakeRuntimeService.Unlock()
	var out []string
	for _, list := range [][]v1.Container{p.pod.Spec.InitContainers, p.pod.Spec.Containers} {
		for _, c := range list {
			if in := p.newest(c.Name); in != nil && in.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				out = append(out, c.Name)
			}
		}
	}
	return out
}

func TestLifecycleMatchesUpstream(tt *testing.T) {
	t := tt
	n := checks()
	if !checksExplicit {
		n = lifecycleChecks
		setChecks(t, n)
	}
	inputs, compared, mismatches, rawOrder, wallGrace := 0, 0, 0, 0, 0
	defer func() {
		record(lifecycleProperty, compared+mismatches, mismatches)
		record(lifecycleProperty+": raw order differed (kill goroutines, ContainersToKill map, init container name set)", rawOrder, 0)
		if wallGrace > 0 {
			record(lifecycleWallGrace, wallGrace, 0)
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		inputs++
		out, err := lifecycleHistory(t, podlifecycle.DefaultOptions(), func(pod *v1.Pod) (lifecycleRuntime, error) {
			return inProcess{newUpstreamPod(tt, pod)}, nil
		})
		if err != nil {
			mismatches++
			t.Fatal(err)
		}
		compared++
		if out.rawOrder {
			rawOrder++
		}
		if out.wallGrace {
			wallGrace++
		}
	})
	if inputs < n {
		t.Fatalf("ran %d histories, want at least %d", inputs, n)
	}
	if !checksExplicit && !t.Failed() && compared < lifecycleCompared {
		t.Fatalf("compared %d histories, want at least %d", compared, lifecycleCompared)
	}
}

// setChecks sets -rapid.checks to n for the rest of the test.
func setChecks(t *testing.T, n int) {
	old := flag.Lookup("rapid.checks").Value.String()
	if err := flag.Set("rapid.checks", strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("rapid.checks", old) })
}

// TestWallClockGrace: a StopContainer grace of the manager that is shorter
// than the machine's by no more than the whole seconds its call took on the
// wall clock counts as the machine's; any other difference stays.
func TestWallClockGrace(t *testing.T) {
	stop := func(name string, attempt uint32, timeout int64) criCall {
		return criCall{Op: "StopContainer", Name: name, Attempt: attempt, Timeout: timeout}
	}
	machine := []criCall{stop("app", 0, 30), {Op: "ExecSync", Name: "app"}, stop("side", 1, 5)}
	for _, tc := range []struct {
		name     string
		upstream []criCall
		wall     time.Duration
		want     []criCall // nil: nothing shortened
	}{
		{"a second's hook took one second off", []criCall{stop("app", 0, 29), stop("side", 1, 5)}, 1500 * time.Millisecond,
			[]criCall{stop("app", 0, 30), stop("side", 1, 5)}},
		{"under a second of wall clock explains nothing", []criCall{stop("app", 0, 29)}, 999 * time.Millisecond, nil},
		{"more seconds off than the call took", []criCall{stop("app", 0, 27)}, 2 * time.Second, nil},
		{"a longer grace is never the wall clock", []criCall{stop("app", 0, 31)}, 5 * time.Second, nil},
		{"another attempt of the container", []criCall{stop("side", 0, 4)}, 5 * time.Second, nil},
		{"down to the minimum", []criCall{stop("side", 1, 2)}, 3 * time.Second, []criCall{stop("side", 1, 5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := wallClockGrace(machine, tc.upstream, tc.wall)
			if !slices.Equal(callStrings(got), callStrings(tc.want)) || (got == nil) != (tc.want == nil) {
				t.Errorf("wallClockGrace = %v, want %v", got, tc.want)
			}
		})
	}
}
