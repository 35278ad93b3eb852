package statussync

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/internal/apifill"
)

// TestPropertyScratchCopyIsDeepCopy: the scratch's copy of a status, made
// over the copy of another one, equals DeepCopy's field for field for
// statuses with every field of the API drawn, and shares no memory with
// the status it copies.
func TestPropertyScratchCopyIsDeepCopy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var sc scratch
		var prior, st v1.PodStatus
		apifill.Fill(t, reflect.ValueOf(&prior).Elem())
		sc.copyOf(&prior)
		apifill.Fill(t, reflect.ValueOf(&st).Elem())
		want := st.DeepCopy()
		got := sc.copyOf(&st)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the scratch's copy differs from DeepCopy (-DeepCopy +scratch):\n%s", cmp.Diff(want, got))
		}
		apifill.Scribble(reflect.ValueOf(got).Elem())
		if !reflect.DeepEqual(&st, want) {
			t.Fatalf("the scratch's copy shares memory with the status (-before +after):\n%s", cmp.Diff(want, &st))
		}
	})
}

// setPodStatusCopying is SetPodStatus as it was before the scratch: the
// status deep-copied, then stored as given.
func (c *Cache) setPodStatusCopying(pod *v1.Pod, status v1.PodStatus, now time.Time) (v1.PodStatus, bool, error) {
	if err := validPod(pod, &status); err != nil {
		return v1.PodStatus{}, false, err
	}
	s := status.DeepCopy()
	s.ObservedGeneration = c.opts.observedGeneration(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	changed, err := c.update(pod, s, pod.DeletionTimestamp != nil, false, now, nil)
	if err != nil {
		return v1.PodStatus{}, false, err
	}
	return *c.pods[pod.UID].status.DeepCopy(), changed, nil
}

// TestPropertySetPodStatusScratchIsExact: a cache that builds each status
// in its reused scratch stores, versions and returns exactly what one that
// deep-copies every status does, over sequences of drawn statuses (every
// field drawn, container names of the spec or not, repeated, with the
// API's status and the deletion changing) for two pods.
func TestPropertySetPodStatusScratchIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		scratchy, _ := NewCache(DefaultOptions())
		copying, _ := NewCache(DefaultOptions())
		names := []string{"a", "b"}
		pods := make([]*v1.Pod, 2)
		for i := range pods {
			pods[i] = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID([]string{"u1", "u2"}[i]), Generation: 2},
				Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, InitContainers: []v1.Container{{Name: "a"}}, Containers: []v1.Container{{Name: "a"}, {Name: "b"}}}}
		}
		var statuses []v1.PodStatus
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for step := range rapid.IntRange(1, 12).Draw(t, "steps") {
			i := rapid.IntRange(0, 1).Draw(t, "pod")
			var st v1.PodStatus
			if len(statuses) > 0 && rapid.Bool().Draw(t, "again") {
				st = *statuses[rapid.IntRange(0, len(statuses)-1).Draw(t, "which")].DeepCopy()
				if rapid.Bool().Draw(t, "perturb") {
					apifill.Perturb(t, reflect.ValueOf(&st).Elem())
				}
			} else {
				apifill.Fill(t, reflect.ValueOf(&st).Elem())
			}
			if rapid.IntRange(0, 3).Draw(t, "specNames") > 0 {
				for _, l := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
					for j := range l {
						l[j].Name = names[j%2]
					}
				}
				st.EphemeralContainerStatuses = nil
			}
			statuses = append(statuses, *st.DeepCopy())
			switch rapid.IntRange(0, 5).Draw(t, "pod change") {
			case 0:
				p := pods[i].DeepCopy()
				apifill.Fill(t, reflect.ValueOf(&p.Status).Elem())
				pods[i] = p
			case 1:
				p := pods[i].DeepCopy()
				p.DeletionTimestamp = &metav1.Time{Time: now}
				pods[i] = p
			}
			now = now.Add(time.Duration(rapid.IntRange(0, 3).Draw(t, "seconds")) * time.Second)
			gotS, gotC, gotE := scratchy.SetPodStatus(pods[i], st, now)
			wantS, wantC, wantE := copying.setPodStatusCopying(pods[i], st, now)
			if (gotE == nil) != (wantE == nil) || gotE != nil && gotE.Error() != wantE.Error() || gotC != wantC {
				t.Fatalf("step %d: scratch (changed %v, %v), copying (changed %v, %v)", step, gotC, gotE, wantC, wantE)
			}
			if !reflect.DeepEqual(gotS, wantS) {
				t.Fatalf("step %d: returned statuses differ (-copying +scratch):\n%s", step, cmp.Diff(wantS, gotS))
			}
			for _, p := range pods {
				a, okA := scratchy.GetPodStatus(p.UID)
				b, okB := copying.GetPodStatus(p.UID)
				if okA != okB || !reflect.DeepEqual(a, b) || scratchy.Version(p.UID) != copying.Version(p.UID) {
					t.Fatalf("step %d: cached statuses differ (-copying +scratch):\n%s", step, cmp.Diff(b, a))
				}
			}
		}
	})
}
