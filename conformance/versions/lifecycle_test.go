package versions

import (
	"errors"
	"flag"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/kubeversion"
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
// often it happens. A difference on a row of docs/versions.md that
// podlifecycle does not model yet (PL-V7) is reported so; one that falls
// on no row fails the test at the end.

// classPLV7 is docs/versions.md row PL-V7: before 1.37 the kuberuntime
// manager counts the pod as initialized only when a regular container is
// Created or Running in any sandbox and reads init container statuses from
// every sandbox; 1.37, which podlifecycle follows for every Version, when a
// regular container is in the current sandbox, in any state.
const classPLV7 = "PL-V7: pod judged not initialized (every regular container exited, last init container not done), or more than one sandbox"

// classUnclassified is a difference on no row of docs/versions.md: it fails
// the test.
const classUnclassified = "unclassified: on no row of docs/versions.md (fails the test)"

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

// mismatchClass names the documented difference a failed history falls on,
// or "" when it falls on none. PL-V7: the pod has init containers, the
// calls differed, and when the sync read the runtime either the pod had had
// more than one sandbox, or no regular container ran while one had exited
// (1.37 counts the pod as initialized, the older releases do not) and the
// last init container was not done by the older rule (which would have
// marked the pod initialized again).
func mismatchClass(pod *v1.Pod, out lifecycleOutcome, profile kubeversion.Version) string {
	if pod == nil || profile == kubeversion.V1_37 || len(pod.Spec.InitContainers) == 0 || out.machineCalls == nil && out.upstreamCalls == nil {
		return ""
	}
	regularRuns, regularExited := false, false
	for _, c := range pod.Spec.Containers {
		regularRuns = regularRuns || out.state.running[c.Name]
		regularExited = regularExited || out.state.exited[c.Name]
	}
	if out.state.sandboxes > 1 || !regularRuns && regularExited && !out.state.lastInitDone {
		return classPLV7
	}
	return ""
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
			inputs, compared, mismatches, unclassified, rawOrder, wallGrace := 0, 0, 0, 0, 0, 0
			defer func() {
				record(u.minor.dir, lifecycleProperty, inputs, mismatches)
				record(u.minor.dir, lifecycleProperty+": raw order differed (kill goroutines, ContainersToKill map, init container name set)", rawOrder, 0)
				if wallGrace > 0 {
					record(u.minor.dir, lifecycleWallGrace, wallGrace, 0)
				}
			}()
			rapid.Check(t, func(t *rapid.T) {
				var pod *v1.Pod
				start := startRemote(u)
				out, err := lifecycleHistory(t, opts, func(p *v1.Pod) (lifecycleRuntime, error) {
					r, err := start(p)
					if err == nil {
						pod = r.pod()
					}
					return r, err
				})
				var refused *refusal
				if errors.As(err, &refused) {
					exclude(u.minor.dir, lifecycleProperty, refused.why)
					t.Skip(refused.why)
				}
				inputs++
				if err != nil {
					mismatches++
					class := mismatchClass(pod, out, u.minor.profile)
					if class == "" {
						unclassified++
						class = classUnclassified
					}
					classify(u.minor.dir, lifecycleProperty, class, err.Error())
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
			if unclassified > 0 {
				t.Errorf("%d of %d histories differ from upstream %s outside the documented differences (profile %s); the report's class %q has the shortest",
					unclassified, inputs, u.info.Release, u.minor.profile, classUnclassified)
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
