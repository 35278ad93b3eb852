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
