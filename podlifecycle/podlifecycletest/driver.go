package podlifecycletest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Epoch is when runs start unless Options.Start says otherwise.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Options configures Run. Start from DefaultOptions; the zero value is
// refused (Until and MaxSteps must be positive).
type Options struct {
	// Machine are the options of the machine under test.
	Machine podlifecycle.Options
	// Start is the virtual time of the first Step; zero is Epoch.
	Start time.Time
	// Until is how much virtual time the run may take: it stops at the
	// first wake-up after Start + Until, or earlier when the pod is
	// finished.
	Until time.Duration
	// Delete, when set, deletes the pod during the run.
	Delete *Deletion
	// MaxSteps bounds the number of Steps; a run that reaches it stops
	// there (not an error: a crash-looping pod never finishes).
	MaxSteps int
	// MaxStepsPerInstant bounds the Steps at one virtual instant; more
	// means the machine keeps asking for a sync with nothing happening,
	// and Run returns ErrNoProgress.
	MaxStepsPerInstant int
	// StalePoll, when positive, is how far Run moves on once the machine
	// asked for more than MaxStepsPerInstant syncs at one instant with
	// nothing happening (stale wake-ups, which CheckWakeups reports). Zero
	// ends the run there with ErrNoProgress.
	StalePoll time.Duration
}

// Deletion is a graceful delete of the pod by the API: at After from the
// start of the run, the pod gets a deletionTimestamp and
// deletionGracePeriodSeconds Grace (the pod's terminationGracePeriodSeconds,
// or 0, when Grace is nil, as the API server does; spec/podlifecycle.md
// section 7.1).
type Deletion struct {
	// After is when the delete happens, from the start of the run.
	After time.Duration
	// Grace is the delete option's grace period in seconds.
	Grace *int64
}

// DefaultOptions returns the machine's defaults, ten minutes of virtual
// time, at most 5,000 steps and 200 per instant.
func DefaultOptions() Options {
	return Options{Machine: podlifecycle.DefaultOptions(), Until: 10 * time.Minute, MaxSteps: 5000, MaxStepsPerInstant: 200}
}

// Trace is everything a run did: every Step in order.
type Trace struct {
	// Pod is the pod as the run began; Options the run's options.
	Pod     *v1.Pod
	Options Options
	// Start is the time of the first Step.
	Start time.Time
	// Steps are the Steps in order.
	Steps []Step
}

// Step is one call of Machine.Step and what it returned.
type Step struct {
	// At is the Step's now.
	At time.Time
	// Pod is the pod handed to it (it changes when the pod is deleted).
	Pod *v1.Pod
	// Observations are what the runtime reported since the previous Step.
	Observations []podlifecycle.Observation
	// Result is what the machine returned; its slices are the Step's own.
	Result podlifecycle.Result
}

// Run drives a podlifecycle.Machine for pod on simruntime's runtime with
// the behaviours bs, through podrunner, the runner every nodestate node
// uses: the runner steps the machine when the kubelet would, hands its
// actions to the runtime, and Run advances virtual time to the earliest of
// the runner's next wake-up and the deletion, until the pod is finished,
// Until has passed or MaxSteps were taken (Run stops at the first wake-up
// after that many).
//
// It returns the trace; an error (with the trace so far) when the options,
// the pod or the behaviours are refused, when the machine refuses a Step
// (a *RunError wrapping ErrStep and the machine's error), or when it makes
// no progress (a *RunError wrapping ErrNoProgress).
func Run(pod *v1.Pod, bs simruntime.Behaviours, opts Options) (*Trace, error) {
	switch {
	case opts.Until <= 0:
		return nil, &OptionError{Field: "Until", Value: opts.Until, Reason: "must be positive"}
	case opts.MaxSteps <= 0:
		return nil, &OptionError{Field: "MaxSteps", Value: opts.MaxSteps, Reason: "must be positive"}
	case opts.MaxStepsPerInstant <= 0:
		return nil, &OptionError{Field: "MaxStepsPerInstant", Value: opts.MaxStepsPerInstant, Reason: "must be positive"}
	case opts.Delete != nil && opts.Delete.After < 0:
		return nil, &OptionError{Field: "Delete.After", Value: opts.Delete.After, Reason: "must not be negative"}
	}
	if pod == nil {
		return nil, &InputError{Reason: "nil pod"}
	}
	rt, err := simruntime.New(simruntime.DefaultOptions(), pod, bs)
	if err != nil {
		return nil, err
	}
	if _, err := podlifecycle.New(opts.Machine, pod); err != nil {
		return nil, err
	}
	start := opts.Start
	if start.IsZero() {
		start = Epoch
	}
	tr := &Trace{Pod: pod, Options: opts, Start: start}
	cache, err := statussync.NewCache(statussync.Options{Features: opts.Machine.Features, Version: opts.Machine.Version})
	if err != nil {
		return nil, err
	}
	refused := &refusals{}
	ro := podrunner.DefaultOptions()
	ro.Lifecycle, ro.PodCIDR, ro.MaxSyncsPerInstant = opts.Machine, "10.0.0.0/24", opts.MaxStepsPerInstant
	if opts.StalePoll > 0 {
		ro.StallDelay = opts.StalePoll
	}
	ro.Logger = logr.New(refused)
	ro.Hooks.Synced = func(now time.Time, p *v1.Pod, obs []podlifecycle.Observation, res *podlifecycle.Result) {
		tr.Steps = append(tr.Steps, Step{At: now, Pod: p, Observations: slices.Clone(obs), Result: podlifecycle.Result{
			Actions: slices.Clone(res.Actions), Statuses: slices.Clone(res.Statuses), Events: slices.Clone(res.Events),
			NextSync: res.NextSync, State: res.State, Finished: res.Finished}})
	}
	r, err := podrunner.New(ro, cache, discard{})
	if err != nil {
		return nil, err
	}
	if err := r.Add(pod, rt); err != nil {
		return nil, err
	}
	var deleteAt time.Time
	if opts.Delete != nil {
		deleteAt = start.Add(opts.Delete.After)
	}
	now := start
	for len(tr.Steps) < opts.MaxSteps {
		if !deleteAt.IsZero() && !now.Before(deleteAt) {
			_ = r.Update(deleted(pod, deleteAt, opts.Delete.Grace))
			deleteAt = time.Time{}
		}
		next := r.Advance(now)
		at := max(len(tr.Steps)-1, 0)
		if refused.err != nil {
			return tr, &RunError{Step: at, At: now.Sub(start), Err: fmt.Errorf("%w: %w", ErrStep, refused.err)}
		}
		if s := r.Stats(); s.Stalls > 0 && opts.StalePoll <= 0 {
			return tr, &RunError{Step: at, At: now.Sub(start),
				Err: fmt.Errorf("%w: %d steps at one instant", ErrNoProgress, opts.MaxStepsPerInstant)}
		}
		if n := len(tr.Steps); n > 0 && tr.Steps[n-1].Result.Finished {
			break
		}
		next = earliest(next, deleteAt)
		if next.IsZero() || next.After(start.Add(opts.Until)) {
			break
		}
		if next.After(now) {
			now = next
		}
	}
	return tr, nil
}

// refusals is a logr sink that keeps the first error the runner logs: the
// machine refusing a Step, or an observation.
type refusals struct{ err error }

func (r *refusals) Init(logr.RuntimeInfo)          {}
func (r *refusals) Enabled(int) bool               { return false }
func (r *refusals) Info(int, string, ...any)       {}
func (r *refusals) WithValues(...any) logr.LogSink { return r }
func (r *refusals) WithName(string) logr.LogSink   { return r }
func (r *refusals) Error(err error, msg string, _ ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: %w", msg, err)
	}
}

// discard records no event: a trace keeps the events of each Result.
type discard struct{}

func (discard) Event(runtime.Object, string, string, string) {}

// stale reports whether s is a stale wake-up: it received nothing, did
// nothing and asks for a sync at or before its own time.
func stale(s *Step) bool {
	r := &s.Result
	return len(s.Observations) == 0 && len(r.Actions) == 0 && len(r.Events) == 0 && len(r.Statuses) == 0 &&
		!r.NextSync.IsZero() && !r.NextSync.After(s.At)
}

// deleted returns a copy of pod deleted at at with grace (section 7.1).
func deleted(pod *v1.Pod, at time.Time, grace *int64) *v1.Pod {
	p := pod.DeepCopy()
	t := metav1.NewTime(at)
	p.DeletionTimestamp = &t
	g := int64(0)
	switch {
	case grace != nil:
		g = *grace
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		g = *pod.Spec.TerminationGracePeriodSeconds
	}
	if g < 0 {
		g = 1
	}
	p.DeletionGracePeriodSeconds = &g
	p.ResourceVersion += "d"
	return p
}

// earliest returns the earlier of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// String renders the trace one line per step that did something, with its
// observations, actions, events and the phase of each status version:
//
//	+10s  ContainerExited app exit=1 | StartContainer app restart=1 | Normal Created spec.containers{app} ... | Running
func (tr *Trace) String() string {
	if tr == nil {
		return ""
	}
	var b strings.Builder
	for i := range tr.Steps {
		s := &tr.Steps[i]
		line := s.describe()
		if line == "" {
			continue
		}
		fmt.Fprintf(&b, "%3d %6s  %s\n", i, "+"+s.At.Sub(tr.Start).String(), line)
	}
	return b.String()
}

// describe renders one step, or "" when it did nothing.
func (s *Step) describe() string {
	var parts []string
	for _, o := range s.Observations {
		parts = append(parts, DescribeObservation(o))
	}
	for _, a := range s.Result.Actions {
		parts = append(parts, a.String())
	}
	for _, e := range s.Result.Events {
		ev := e.Type + " " + e.Reason
		if e.FieldPath != "" {
			ev += " " + e.FieldPath
		}
		parts = append(parts, ev+" "+fmt.Sprintf("%q", e.Message))
	}
	for _, st := range s.Result.Statuses {
		parts = append(parts, "status "+string(st.Phase))
	}
	if s.Result.Finished {
		parts = append(parts, "finished")
	}
	return strings.Join(parts, " | ")
}

// DescribeObservation renders an observation on one line:
// "ContainerExited app exit=1", "ImagePullFailed app", "ProbeResult app
// Liveness fail".
func DescribeObservation(o podlifecycle.Observation) string {
	s := o.Kind.String()
	switch o.Kind {
	case podlifecycle.SandboxReady, podlifecycle.SandboxNotReady, podlifecycle.SandboxCreateFailed:
		s += " attempt=" + fmt.Sprint(o.Attempt)
	case podlifecycle.ImagePresent:
		s += " " + o.Image
	default:
		s += " " + o.Container
	}
	switch o.Kind {
	case podlifecycle.ContainerExited:
		s += fmt.Sprintf(" exit=%d", o.ExitCode)
	case podlifecycle.ProbeResult:
		s += " " + o.Probe.String() + " " + outcomeWord(o.Outcome)
	case podlifecycle.HookResult:
		s += " " + o.Hook.String()
		if o.Failed {
			s += " failed"
		}
	}
	return s
}

// outcomeWord is a probe outcome's word in the behaviour text.
func outcomeWord(o podlifecycle.ProbeOutcome) string {
	switch o {
	case podlifecycle.ProbeSuccess:
		return "success"
	case podlifecycle.ProbeWarning:
		return "warning"
	case podlifecycle.ProbeFailure:
		return "fail"
	case podlifecycle.ProbeError:
		return "error"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}
