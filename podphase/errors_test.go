package podphase_test

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podphase/podphasetest"
)

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

// TestOptionErrorUnwrap: an *OptionError unwraps to ErrInvalidInput and, only
// when it has one, its Err; a nil *OptionError, like the package's other nil
// error pointers, still matches ErrInvalidInput instead of panicking.
func TestOptionErrorUnwrap(t *testing.T) {
	cause := errors.New("cause")
	for _, tc := range []struct {
		name   string
		err    *podphase.OptionError
		want   []error
		reason string
	}{
		{"no Err", &podphase.OptionError{Field: "Version", Value: "v", Reason: "r"}, []error{podphase.ErrInvalidOptions},
			"an OptionError without Err unwraps to ErrInvalidOptions alone (which matches ErrInvalidInput), with no nil entry"},
		{"with Err", &podphase.OptionError{Field: "Version", Err: cause}, []error{podphase.ErrInvalidOptions, cause},
			"an OptionError with Err unwraps to ErrInvalidOptions and Err"},
		{"nil", nil, []error{podphase.ErrInvalidOptions},
			"a nil *OptionError unwraps to ErrInvalidOptions (no exported method panics on nil)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.err.Unwrap()
			if len(got) != len(tc.want) {
				t.Fatalf("Unwrap() = %v; want %v (%s)", got, tc.want, tc.reason)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("Unwrap()[%d] = %v; want %v (%s)", i, got[i], tc.want[i], tc.reason)
				}
			}
			var err error = tc.err
			if !errors.Is(err, podphase.ErrInvalidInput) {
				t.Errorf("%v does not match ErrInvalidInput (%s)", err, tc.reason)
			}
		})
	}
}
