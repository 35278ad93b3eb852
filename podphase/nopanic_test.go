package podphase_test

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/internal/zerocall"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podphase/podphasetest"
)

// TestNoPanicOnZero calls every exported function of podphase and
// podphasetest with zero and nil arguments, and every method of every
// exported type on zero, nil and constructed receivers: none may panic
// (docs/conventions.md section 2). The package source is read so that an
// exported function or type missing from the lists below fails the test.
func TestNoPanicOnZero(t *testing.T) {
	for _, pkg := range []struct {
		dir   string
		funcs map[string]any
		types map[string][]any // receivers per exported type; empty for a type without methods
	}{
		{
			dir: ".",
			funcs: map[string]any{
				"CheckTransition": podphase.CheckTransition, "Columns": podphase.Columns, "Conditions": podphase.Conditions,
				"DefaultOptions": podphase.DefaultOptions, "DisplayStatus": podphase.DisplayStatus, "Explain": podphase.Explain,
				"GenerateStatus": podphase.GenerateStatus, "Guard": podphase.Guard, "IsTerminal": podphase.IsTerminal,
				"LegalTransition": podphase.LegalTransition, "Phase": podphase.Phase, "Settle": podphase.Settle,
				"TerminatedPhase": podphase.TerminatedPhase,
			},
			types: map[string][]any{
				"Options":               {podphase.Options{}, podphase.DefaultOptions()},
				"Rule":                  {podphase.Rule(0), podphase.Rule(255)},
				"Sandbox":               {podphase.Sandbox(0), podphase.Sandbox(255)},
				"Explanation":           {podphase.Explanation{}},
				"TransitionError":       {(*podphase.TransitionError)(nil), &podphase.TransitionError{}},
				"UnknownContainerError": {(*podphase.UnknownContainerError)(nil), &podphase.UnknownContainerError{}},
				"DuplicateStatusError":  {(*podphase.DuplicateStatusError)(nil), &podphase.DuplicateStatusError{}},
				"ConditionsInput":       {}, "Eviction": {}, "Input": {}, "Row": {}, "Settled": {}, "StatusInput": {}, "StatusResult": {},
			},
		},
		{
			dir: "podphasetest",
			funcs: map[string]any{
				"CheckConditions": podphasetest.CheckConditions, "CheckDisplay": podphasetest.CheckDisplay,
				"CheckExplanation": podphasetest.CheckExplanation, "CheckPhase": podphasetest.CheckPhase,
				"CheckUpdate": podphasetest.CheckUpdate, "Pod": podphasetest.Pod, "PodAt": podphasetest.PodAt,
				"Spec": podphasetest.Spec,
			},
			types: map[string][]any{"Stage": {podphasetest.Stage(0), podphasetest.Stage(255)}},
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

// TestErrorsUnwrap checks that every error of the package matches a
// sentinel with errors.Is and names the package once.
func TestErrorsUnwrap(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}}}}
	unknown := pod.DeepCopy()
	unknown.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "ghost"}}
	dup := pod.DeepCopy()
	dup.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "a"}, {Name: "a"}}
	_, errUnknown := podphase.Explain(podphase.Input{Pod: unknown})
	_, errDup := podphase.Explain(podphase.Input{Pod: dup})
	_, errNil := podphase.Explain(podphase.Input{})
	_, errNilStatus := podphase.Conditions(podphase.ConditionsInput{Pod: pod})
	_, errColumns := podphase.Columns(nil, podphasetest.Epoch)
	_, errGenerate := podphase.GenerateStatus(podphase.StatusInput{})
	for _, tc := range []struct {
		err  error
		want error
	}{
		{errUnknown, podphase.ErrInvalidInput}, {errDup, podphase.ErrInvalidInput},
		{errNil, podphase.ErrNilPod}, {errNil, podphase.ErrInvalidInput},
		{errNilStatus, podphase.ErrInvalidInput}, {errColumns, podphase.ErrNilPod}, {errGenerate, podphase.ErrNilPod},
		{podphase.CheckTransition(v1.PodFailed, v1.PodRunning), podphase.ErrIllegalTransition},
		{&podphase.UnknownContainerError{}, podphase.ErrInvalidInput}, {&podphase.DuplicateStatusError{}, podphase.ErrInvalidInput},
		{&podphase.TransitionError{}, podphase.ErrIllegalTransition},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%v does not match %v", tc.err, tc.want)
		}
		if msg := tc.err.Error(); !strings.HasPrefix(msg, "podphase: ") || strings.Count(msg, "podphase:") != 1 {
			t.Errorf("message %q does not name the package exactly once at the start", msg)
		}
	}
}
