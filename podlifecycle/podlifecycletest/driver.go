package podlifecycletest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// StalePoll, when positive, is how far Run moves on after a stale
	// wake-up: a Step that received nothing, did nothing and still asked
	// for a sync at or before its own time. Zero keeps stepping at that
	// instant until MaxStepsPerInstant (ErrNoProgress). Either way
	// CheckWakeups reports the stale wake-up.
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

// Run drives a podlifecycle.Machine for pod and a Runtime with the
// behaviours bs: it steps the machine, carries its actions out in the
// runtime, and advances virtual time to the earliest of the machine's
// NextSync, the runtime's next report and the deletion, until the pod is
// finished, Until has passed or MaxSteps were taken.
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
	so := simruntime.DefaultOptions()
	so.IP = "10.0.0.1"
	rt, err := simruntime.New(so, pod, bs)
	if err != nil {
		return nil, err
	}
	m, err := podlifecycle.New(opts.Machine, pod)
	if err != nil {
		return nil, err
	}
	start := opts.Start
	if start.IsZero() {
		start = Epoch
	}
	tr := &Trace{Pod: pod, Options: opts, Start: start}
	var deleteAt time.Time
	if opts.Delete != nil {
		deleteAt = start.Add(opts.Delete.After)
	}
	cur, now, same := pod, start, 0
	for len(tr.Steps) < opts.MaxSteps {
		if !deleteAt.IsZero() && !now.Before(deleteAt) {
			cur = deleted(pod, deleteAt, opts.Delete.Grace)
			deleteAt = time.Time{}
		}
		obs := rt.Due(now)
		res, err := m.Step(now, cur, obs)
		tr.Steps = append(tr.Steps, Step{At: now, Pod: cur, Observations: obs, Result: res})
		if err != nil {
			return tr, &RunError{Step: len(tr.Steps) - 1, At: now.Sub(start), Err: fmt.Errorf("%w: %w", ErrStep, err)}
		}
		if res.Finished {
			break
		}
		_ = rt.Do(now, res.Actions) // a Runtime made by New never fails
		next := earliest(earliest(res.NextSync, rt.Next()), deleteAt)
		if opts.StalePoll > 0 && stale(&tr.Steps[len(tr.Steps)-1]) {
			next = earliest(earliest(now.Add(opts.StalePoll), rt.Next()), deleteAt)
		}
		if next.IsZero() || next.After(start.Add(opts.Until)) {
			break
		}
		if !next.After(now) {
			next = now
			same++
			if same >= opts.MaxStepsPerInstant {
				return tr, &RunError{Step: len(tr.Steps) - 1, At: now.Sub(start),
					Err: fmt.Errorf("%w: %d steps at one instant", ErrNoProgress, same)}
			}
		} else {
			same = 0
		}
		now = next
	}
	return tr, nil
}

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
