package containerstate_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/containerstate/containerstatetest"
	"github.com/nodestate/nodestate/internal/zerocall"
)

// TestNoPanicOnZero calls every exported function of containerstate and
// containerstatetest with zero and nil arguments, and every method of every
// exported type on zero, nil and constructed receivers: none may panic
// (docs/conventions.md section 2). The package source is read so that an
// exported function or type missing from the lists below fails the test.
func TestNoPanicOnZero(t *testing.T) {
	m, err := containerstate.NewMachine(containerstate.DefaultOptions(), containerstate.Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "app"}}}}, "app")
	if err != nil {
		t.Fatal(err)
	}
	stepped := *m
	if err := stepped.Step(containerstate.Event{Kind: containerstate.Started, At: time.Unix(1, 0), ContainerID: "c://1"}); err != nil {
		t.Fatal(err)
	}
	backoff, err := containerstate.NewBackoff(containerstate.DefaultImagePullOptions())
	if err != nil {
		t.Fatal(err)
	}
	checker := containerstatetest.NewChecker(containerstatetest.TargetContainer{}, containerstate.DefaultFeatures())

	for _, pkg := range []struct {
		dir   string
		funcs map[string]any
		// types lists receivers per exported type: a zero value, a nil and
		// a zero pointer, and constructed ones. An empty list is a type
		// without methods.
		types map[string][]any
	}{
		{
			dir: ".",
			funcs: map[string]any{
				"Allowed": containerstate.Allowed, "AnyRestartAllRule": containerstate.AnyRestartAllRule,
				"BackOffEvent": containerstate.BackOffEvent, "Convert": containerstate.Convert,
				"CrashLoopKey": containerstate.CrashLoopKey, "DefaultCrashLoopOptions": containerstate.DefaultCrashLoopOptions,
				"DefaultFeatures": containerstate.DefaultFeatures, "DefaultOptions": containerstate.DefaultOptions,
				"EventKinds": containerstate.EventKinds, "ExitedEvent": containerstate.ExitedEvent,
				"HasPodInitialized": containerstate.HasPodInitialized, "ImageInspectErrorEvent": containerstate.ImageInspectErrorEvent,
				"DefaultImagePullOptions": containerstate.DefaultImagePullOptions, "ImagePullKey": containerstate.ImagePullKey,
				"InvalidImageNameEvent": containerstate.InvalidImageNameEvent, "IsSidecar": containerstate.IsSidecar,
				"MatchingRule": containerstate.MatchingRule, "Mermaid": containerstate.Mermaid,
				"NeverPullEvent": containerstate.NeverPullEvent, "NewBackoff": containerstate.NewBackoff,
				"NewMachine": containerstate.NewMachine, "OOMKilledEvent": containerstate.OOMKilledEvent,
				"PullBackOffEvent": containerstate.PullBackOffEvent, "PullErrorEvent": containerstate.PullErrorEvent,
				"ShouldRestart": containerstate.ShouldRestart, "StartErrorEvent": containerstate.StartErrorEvent,
				"StateOf": containerstate.StateOf, "TerminatedStatus": containerstate.TerminatedStatus,
				"TerminationMessage": containerstate.TerminationMessage, "TerminationMessageLimit": containerstate.TerminationMessageLimit,
				"Transitions": containerstate.Transitions,
			},
			types: map[string][]any{
				"Machine":          {(*containerstate.Machine)(nil), &containerstate.Machine{}, m, &stepped},
				"Backoff":          {(*containerstate.Backoff)(nil), &containerstate.Backoff{}, backoff},
				"BackoffOptions":   {containerstate.BackoffOptions{}, containerstate.DefaultImagePullOptions()},
				"CrashLoopOptions": {containerstate.CrashLoopOptions{}, containerstate.DefaultCrashLoopOptions()},
				"Options":          {containerstate.Options{}, containerstate.DefaultOptions()},
				"Features":         {containerstate.Features{}, containerstate.DefaultFeatures()},
				"Event":            {containerstate.Event{}, containerstate.Event{Kind: containerstate.PodChanged}},
				"EventKind":        {containerstate.EventKind(0), containerstate.Tick, containerstate.EventKind(255)},
				"State":            {containerstate.State(0), containerstate.State(255)},
				"RuntimeState":     {containerstate.RuntimeState(0), containerstate.RuntimeState(255)},
				"ProbeResult":      {containerstate.ProbeResult(0), containerstate.ProbeResult(255)},
				"Kind":             {containerstate.Kind(0), containerstate.Kind(255)},
				"InputError":       {(*containerstate.InputError)(nil), &containerstate.InputError{}},
				"OptionError":      {(*containerstate.OptionError)(nil), &containerstate.OptionError{}},
				"StepError":        {(*containerstate.StepError)(nil), &containerstate.StepError{}},
				"TransitionError":  {(*containerstate.TransitionError)(nil), &containerstate.TransitionError{}},
				"Transition":       {}, "Instance": {}, "Pod": {}, "PodFacts": {}, "StartError": {}, "Probes": {},
				"Input": {}, "TerminationInput": {},
			},
		},
		{
			dir: "containerstatetest",
			funcs: map[string]any{
				"Events": containerstatetest.Events, "ExitCode": containerstatetest.ExitCode,
				"NewChecker": containerstatetest.NewChecker, "PodSpec": containerstatetest.PodSpec,
				"RestartRules": containerstatetest.RestartRules, "Target": containerstatetest.Target,
			},
			types: map[string][]any{
				"Checker":         {(*containerstatetest.Checker)(nil), &containerstatetest.Checker{}, checker},
				"InvariantError":  {(*containerstatetest.InvariantError)(nil), &containerstatetest.InvariantError{}},
				"TargetContainer": {},
			},
		},
	} {
		funcs, types, err := zerocall.Exported(pkg.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range funcs {
			fn, ok := pkg.funcs[name]
			if !ok {
				t.Errorf("%s: exported function %s is not in the test's list", pkg.dir, name)
				continue
			}
			if err := zerocall.Call(fn); err != nil {
				t.Errorf("%s.%s with zero arguments: %v", pkg.dir, name, err)
			}
		}
		for _, name := range types {
			recvs, ok := pkg.types[name]
			if !ok {
				t.Errorf("%s: exported type %s is not in the test's list", pkg.dir, name)
				continue
			}
			for _, r := range recvs {
				_, errs := zerocall.Methods(r)
				for _, err := range errs {
					t.Errorf("%s: %v", pkg.dir, err)
				}
			}
		}
		if len(funcs) != len(pkg.funcs) {
			t.Errorf("%s: the test lists %d functions, the package has %d: %v", pkg.dir, len(pkg.funcs), len(funcs), funcs)
		}
	}
}
