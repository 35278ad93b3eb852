package statussync

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/podphase"
)

// TestOwnershipIsPodphases ties the two packages' rules (spec/statussync.md
// section 2, spec/podphase.md section 8.1): the conditions statussync
// merges as the kubelet's are exactly podphase's kubelet-owned ones, under
// both settings of the AllContainersRestarting gate; DisruptionTarget is
// shared; and the cache stamps lastTransitionTime as podphase.TransitionTime
// says.
func TestOwnershipIsPodphases(t *testing.T) {
	types := []v1.PodConditionType{v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
		v1.PodResizeInProgress, v1.PodResizePending, v1.PodReadyToStartContainers, v1.AllContainersRestarting,
		v1.DisruptionTarget, "example.com/gate", ""}
	for _, gate := range []bool{true, false} {
		o := DefaultOptions()
		o.Features.RestartAllContainersOnContainerExits = gate
		p := podphase.DefaultOptions()
		p.Features = o.Features
		owned := map[v1.PodConditionType]bool{}
		for _, ct := range p.OwnedConditionTypes() {
			owned[ct] = true
		}
		for _, ct := range types {
			want := NotOwned
			switch {
			case ct == v1.DisruptionTarget:
				want = Shared
			case owned[ct]:
				want = Owned
			}
			if got := o.OwnershipOf(ct); got != want || owned[ct] != p.KubeletOwned(ct) {
				t.Errorf("gate %v: %q: statussync %d, want %d (podphase owns it: %v)", gate, ct, got, want, owned[ct])
			}
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := &v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}}}
	s := &v1.PodStatus{}
	for _, ct := range types {
		s.Conditions = append(s.Conditions, v1.PodCondition{Type: ct, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(time.Hour))})
	}
	want := s.DeepCopy()
	now := t0.Add(time.Minute)
	for i := range want.Conditions {
		want.Conditions[i].LastTransitionTime, _ = podphase.TransitionTime(old.Conditions, want.Conditions[i], now)
	}
	updateTransitionTimes(old, s, now)
	for i := range s.Conditions {
		if !s.Conditions[i].LastTransitionTime.Equal(&want.Conditions[i].LastTransitionTime) {
			t.Errorf("%s: lastTransitionTime %v, podphase says %v", s.Conditions[i].Type, s.Conditions[i].LastTransitionTime, want.Conditions[i].LastTransitionTime)
		}
	}
}
