package versions

import (
	"errors"
	"flag"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/podlifecycle"
)

// The podlifecycle property of conformance/lifecycle_test.go against each
// older release's command: the same histories (lifecycle_history_test.go,
// copied), the machine with the release's profile
// (podlifecycle.DefaultOptionsFor), and the release's kuberuntime manager
// driven by the command's lifecycle requests (conformance/cmd/upstream,
// lifecycle.go).
//
// Unlike the other properties, a difference does not stop the run: it is
// counted as a mismatch in its class, the shortest example of each class is
// kept for the report, and the property goes on, since a mismatch rapid
// stops at (and its shrinking, which counts its own) tells nothing of how
// often it happens. Any difference fails the test at the end.

// classDiffers is a history on which podlifecycle with the release's
// profile and the release's manager differ: it fails the test. Every
// difference docs/versions.md lists for the lifecycle is modelled (PL-V5,
// PL-V6, PL-V7 and those of containerstate and podphase), so none is
// excused.
const classDiffers = "differs from the release (fails the test)"

// remote is a release's command as the history's lifecycleRuntime. A step's
// changes go with its sync, in one request.
type remote struct {
	u       *upstream
	session int
	held    *v1.Pod
	run     []string
	step    lifecycleStep
}

func startRemote(u *upstream) func(*v1.Pod) (lifecycleRuntime, error) {
	return func(pod *v1.Pod) (lifecycleRuntime, error) {
		resp, err := u.ask(&request{Op: "lifecycle-new", Pod: pod})
		if err != nil {
			return nil, err
		}
		if resp.Refused != "" {
			return nil, &refusal{resp.Refused}
		}
		return &remote{u: u, session: resp.Session, held: resp.Pod, run: resp.Running}, nil
	}
}

// refusal is a drawn pod the release's API server refuses: there is
// nothing to compare.
type refusal struct{ why string }

func (r *refusal) Error() string { return r.why }

func (r *remote) running() []string { return r.run }
func (r *remote) pod() *v1.Pod      { return r.held }

func (r *remote) apply(s lifecycleStep) error {
	r.step = s
	return nil
}

func (r *remote) sync() (lifecycleSync, error) { return r.ask(false, nil) }

func (r *remote) terminate(grace *int64) (lifecycleSync, error) { return r.ask(true, grace) }

func (r *remote) ask(terminate bool, grace *int64) (lifecycleSync, error) {
	step := r.step
	r.step = lifecycleStep{}
	resp, err := r.u.ask(&request{Op: "lifecycle-step", Session: r.session, Step: &step, Terminate: terminate, Grace: grace})
	if err != nil {
		return lifecycleSync{}, err
	}
	r.held, r.run = resp.Pod, resp.Running
	return lifecycleSync{Calls: resp.Calls, Events: resp.Events, Wall: resp.Wall}, nil
}

func (r *remote) close() {
	_, _ = r.u.ask(&request{Op: "lifecycle-end", Session: r.session})
}

func TestLifecycleMatchesUpstream(t *testing.T) {
	for _, u := range upstreams {
		t.Run(u.minor.dir, func(t *testing.T) {
			n := checks()
			if !checksExplicit {
				n = lifecycleChecks
				setChecks(t, n)
			}
			opts := podlifecycle.DefaultOptionsFor(u.minor.profile)
			inputs, compared, mismatches, rawOrder, wallGrace := 0, 0, 0, 0, 0
			defer func() {
				record(u.minor.dir, lifecycleProperty, inputs, mismatches)
				record(u.minor.dir, lifecycleProperty+": raw order differed (kill goroutines, ContainersToKill map, init container name set)", rawOrder, 0)
				if wallGrace > 0 {
					record(u.minor.dir, lifecycleWallGrace, wallGrace, 0)
				}
			}()
			rapid.Check(t, func(t *rapid.T) {
				out, err := lifecycleHistory(t, opts, startRemote(u))
				var refused *refusal
				if errors.As(err, &refused) {
					exclude(u.minor.dir, lifecycleProperty, refused.why)
					t.Skip(refused.why)
				}
				inputs++
				if err != nil {
					mismatches++
					classify(u.minor.dir, lifecycleProperty, classDiffers, err.Error())
					return
				}
				compared++
				if out.rawOrder {
					rawOrder++
				}
				if out.wallGrace {
					wallGrace++
				}
			})
			if mismatches > 0 {
				t.Errorf("%d of %d histories differ from upstream %s (profile %s); the report's class %q has the shortest",
					mismatches, inputs, u.info.Release, u.minor.profile, classDiffers)
			}
			if inputs < n {
				t.Fatalf("ran %d histories, want at least %d", inputs, n)
			}
			if !checksExplicit && !t.Failed() && compared+mismatches < lifecycleCompared {
				t.Fatalf("compared %d histories, want at least %d", compared+mismatches, lifecycleCompared)
			}
		})
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
