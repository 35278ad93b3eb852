package statussync

import (
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/containerstate"
)

// Normalize puts a status in the form the API server returns it, so that a
// status read back compares equal to the one written (spec section 6,
// step 6): timestamps cut to whole seconds, each terminated message cut to
// its share of 12 KiB, regular and ephemeral container statuses sorted by
// name and init container statuses in spec order, any of a name the spec
// lacks after them, as the kubelet orders them. It changes s in place;
// a nil s is left alone, a nil spec leaves init containers in their order.
func Normalize(spec *v1.PodSpec, s *v1.PodStatus) {
	normalize(spec, s, nil)
}

// normalize is Normalize putting the start time, when set, in start's
// storage (new memory when start is nil).
func normalize(spec *v1.PodSpec, s *v1.PodStatus, start *metav1.Time) {
	if s == nil {
		return
	}
	limit := containerstate.MaxPodTerminationMessageLength
	if spec != nil {
		limit = containerstate.TerminationMessageLimit(len(spec.Containers) + len(spec.InitContainers) + len(spec.EphemeralContainers))
	}
	if s.StartTime != nil {
		s.StartTime = setTime(start, seconds(*s.StartTime))
	}
	for i := range s.Conditions {
		c := &s.Conditions[i]
		c.LastProbeTime = seconds(c.LastProbeTime)
		c.LastTransitionTime = seconds(c.LastTransitionTime)
	}
	for _, list := range [...][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			normalizeState(&list[i].State, limit)
			normalizeState(&list[i].LastTerminationState, limit)
		}
	}
	sortByName(s.ContainerStatuses)
	sortByName(s.EphemeralContainerStatuses)
	if spec != nil {
		initSpecOrder(spec.InitContainers, s.InitContainerStatuses)
	}
}

// initSpecOrder puts init container statuses in spec order as the kubelet
// does (SortInitContainerStatuses): for each init container of the spec, in
// order, the first status of its name at or after the next front slot is
// swapped into that slot. Statuses of names the spec lacks end up behind
// the others, in whatever order the swaps leave them.
func initSpecOrder(spec []v1.Container, list []v1.ContainerStatus) {
	next := 0
	for i := range spec {
		for j := next; j < len(list); j++ {
			if list[j].Name == spec[i].Name {
				list[next], list[j] = list[j], list[next]
				next++
				break
			}
		}
	}
}

func normalizeState(st *v1.ContainerState, limit int) {
	if st.Running != nil {
		st.Running.StartedAt = seconds(st.Running.StartedAt)
	}
	if t := st.Terminated; t != nil {
		t.StartedAt = seconds(t.StartedAt)
		t.FinishedAt = seconds(t.FinishedAt)
		if len(t.Message) > limit {
			t.Message = t.Message[:limit]
		}
	}
}

func seconds(t metav1.Time) metav1.Time {
	if t.IsZero() {
		return t
	}
	return metav1.NewTime(t.Time.Truncate(time.Second).UTC())
}

func sortByName(list []v1.ContainerStatus) {
	slices.SortStableFunc(list, func(a, b v1.ContainerStatus) int { return strings.Compare(a.Name, b.Name) })
}
