package podphase

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOwnedConditionTypes: spec/podphase.md section 8.1, with the
// AllContainersRestarting gate on and off.
func TestOwnedConditionTypes(t *testing.T) {
	o := DefaultOptions()
	if got := o.OwnedConditionTypes(); len(got) != 8 || !o.KubeletOwned(v1.AllContainersRestarting) {
		t.Errorf("1.37 defaults: 8 owned types with AllContainersRestarting, got %v", got)
	}
	o.Features.RestartAllContainersOnContainerExits = false
	if got := o.OwnedConditionTypes(); len(got) != 7 || o.KubeletOwned(v1.AllContainersRestarting) {
		t.Errorf("gate off: AllContainersRestarting is not owned, got %v", got)
	}
	for _, ty := range []v1.PodConditionType{v1.DisruptionTarget, "example.com/gate"} {
		if o.KubeletOwned(ty) {
			t.Errorf("%s is not kubelet-owned", ty)
		}
	}
}

// TestTransitionTime: spec/podphase.md section 8.3.
func TestTransitionTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	old := []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}}
	for _, tc := range []struct {
		c      v1.PodCondition
		want   time.Time
		ok     bool
		reason string
	}{
		{v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}, t0, true, "same status keeps the old time"},
		{v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse}, t1, true, "a flip takes now"},
		{v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue}, t1, true, "a new condition takes now"},
		{v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}, t0, false, "others' conditions keep their time"},
	} {
		got, ok := TransitionTime(old, tc.c, t1)
		if !got.Time.Equal(tc.want) || ok != tc.ok {
			t.Errorf("%s: %s=%s: got %v %v, want %v %v", tc.reason, tc.c.Type, tc.c.Status, got, ok, tc.want, tc.ok)
		}
	}
}
