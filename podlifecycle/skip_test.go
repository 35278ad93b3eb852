package podlifecycle_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
)

// twin steps two machines of one pod with the same input: one that skips
// the generations whose inputs did not change and one that generates the
// status at every sync.
type twin struct {
	fast, slow   *podlifecycle.Machine
	rfast, rslow podlifecycle.Result
	last         *v1.PodStatus // the newest status produced, for echoes
}

func newTwin(t *rapid.T, opts podlifecycle.Options, pod *v1.Pod) *twin {
	fast, err := podlifecycle.New(opts, pod)
	if err != nil {
		t.Fatal(err)
	}
	slow, _ := podlifecycle.New(opts, pod)
	podlifecycle.RegenerateAlways(slow)
	return &twin{fast: fast, slow: slow}
}

// step hands both machines the same Step and fails when their results or
// errors differ in anything. A refused observation is dropped and the Step
// tried again with the rest, as the runner does.
func (w *twin) step(t *rapid.T, what string, now time.Time, pod *v1.Pod, obs []podlifecycle.Observation) {
	obs = append([]podlifecycle.Observation(nil), obs...)
	for {
		ef := w.fast.StepTo(now, pod, obs, &w.rfast)
		es := w.slow.StepTo(now, pod, obs, &w.rslow)
		if fmt.Sprint(ef) != fmt.Sprint(es) {
			t.Fatalf("%s at %v: errors differ: skipping %v, regenerating %v", what, now, ef, es)
		}
		if !reflect.DeepEqual(w.rfast, w.rslow) {
			t.Fatalf("%s at %v: results differ (-regenerating +skipping):\n%s", what, now, cmp.Diff(w.rslow, w.rfast))
		}
		var ie *podlifecycle.InputError
		if ef == nil || !asInputError(ef, &ie) || ie.Index < 0 || ie.Index >= len(obs) {
			break
		}
		obs = append(obs[:ie.Index], obs[ie.Index+1:]...)
	}
	if n := len(w.rfast.Statuses); n > 0 {
		w.last = w.rfast.Statuses[n-1].DeepCopy()
	}
}

func asInputError(err error, ie **podlifecycle.InputError) bool {
	e, ok := err.(*podlifecycle.InputError)
	*ie = e
	return ok
}

// TestPropertySkippedGenerationIsExact: a machine that skips the status
// generation of a sync whose inputs did not change (see generate) returns, at every Step, exactly what a machine that generates the status
// at every sync returns: actions, statuses, events, next sync and state.
// The Steps are the histories of podlifecycletest's generated runs
// (pods, behaviours and deletions, through the runner and the simulated
// runtime), replayed into both machines, with Steps of nothing observed
// and status echoes (the pod written back with the status produced, a new
// object) between them, at the same instant and later.
func TestPropertySkippedGenerationIsExact(t *testing.T) {
	var skipped, steps uint64
	// Ten rounds of rapid's checks: a thousand generated runs by default.
	for range 10 {
		checkSkippedGeneration(t, &skipped, &steps)
	}
	t.Logf("%d of %d replayed Steps' generations skipped", skipped, steps)
	if skipped == 0 {
		t.Fatal("no generation was skipped: the property compares nothing")
	}
}

func checkSkippedGeneration(t *testing.T, skipped, steps *uint64) {
	rapid.Check(t, func(t *rapid.T) {
		gen := podlifecycletest.DefaultGenOptions()
		gen.RestartAllRules = rapid.IntRange(0, 3).Draw(t, "restartAllRules") == 0
		gen.Resources = rapid.Bool().Draw(t, "resources")
		tc := podlifecycletest.Cases(gen, 4*time.Minute).Draw(t, "case")
		opts := podlifecycletest.DefaultOptions()
		opts.Delete = tc.Delete
		opts.Machine = podlifecycle.DefaultOptionsFor(rapid.SampledFrom(kubeversion.Supported()).Draw(t, "version"))
		opts.Machine.Cgroups = rapid.SampledFrom([]podlifecycle.Cgroups{podlifecycle.CgroupsV2, podlifecycle.CgroupsNone}).Draw(t, "cgroups")
		opts.Machine.RecursiveReadOnlyMounts = rapid.Bool().Draw(t, "rro")
		tr, err := podlifecycletest.Run(tc.Pod, tc.Behaviours, opts)
		if tr == nil {
			t.Fatal(err)
		}
		w := newTwin(t, opts.Machine, tr.Pod)
		for i, s := range tr.Steps {
			w.step(t, fmt.Sprintf("step %d", i), s.At, s.Pod, s.Observations)
			*steps++
			switch rapid.IntRange(0, 5).Draw(t, "between") {
			case 1: // nothing observed, at once
				w.step(t, fmt.Sprintf("idle after step %d", i), s.At, s.Pod, nil)
			case 2: // the status written back: a new pod object, the same spec
				if w.last != nil {
					echo := s.Pod.DeepCopy()
					echo.Status = *w.last.DeepCopy()
					echo.ResourceVersion += "e"
					w.step(t, fmt.Sprintf("echo after step %d", i), s.At, echo, nil)
				}
			case 3: // nothing observed, later, before the next Step
				if i+1 < len(tr.Steps) {
					if gap := tr.Steps[i+1].At.Sub(s.At); gap > 0 {
						at := s.At.Add(time.Duration(rapid.Int64Range(0, int64(gap)).Draw(t, "later")))
						w.step(t, fmt.Sprintf("later after step %d", i), at, s.Pod, nil)
					}
				}
			}
		}
		*skipped += podlifecycle.Skipped(w.fast)
		if podlifecycle.Skipped(w.slow) != 0 {
			t.Fatal("the regenerating machine skipped a generation")
		}
	})
}
