package statussync

import (
	"encoding/json"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// FuzzSetPodStatus feeds the cache arbitrary statuses (decoded from JSON):
// never a panic, and a refused status leaves the cache as it was.
func FuzzSetPodStatus(f *testing.F) {
	for _, s := range []v1.PodStatus{runningStatus("app"), {Phase: v1.PodFailed, ContainerStatuses: []v1.ContainerStatus{named("app", termState(1))}}} {
		b, _ := json.Marshal(s)
		f.Add(b, b)
	}
	f.Add([]byte(`{"containerStatuses":[{"name":"ghost"}]}`), []byte(`{"phase":"Running"}`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		var a, b v1.PodStatus
		if json.Unmarshal(first, &a) != nil || json.Unmarshal(second, &b) != nil {
			return
		}
		c, _ := NewCache(DefaultOptions())
		pod := testPod("u1", "p1", "app", "side")
		pod.Spec.InitContainers = []v1.Container{{Name: "init"}}
		now := t0
		_, _, _ = c.SetPodStatus(pod, a, now)
		before, had := c.GetPodStatus(pod.UID)
		version := c.Version(pod.UID)
		_, changed, err := c.SetPodStatus(pod, b, now.Add(time.Second))
		after, _ := c.GetPodStatus(pod.UID)
		if err != nil && (c.Version(pod.UID) != version || (had && !equality.Semantic.DeepEqual(before, after))) {
			t.Fatalf("a refused status (%v) changed the cache", err)
		}
		if changed && c.Version(pod.UID) != version+1 {
			t.Fatalf("a change bumps the version by one: %d -> %d", version, c.Version(pod.UID))
		}
		_ = c.TerminatePod(pod, now.Add(2*time.Second))
	})
}

// FuzzMerge feeds the merge and the patch arbitrary statuses: never a panic,
// the inputs untouched, and a status merged with itself patches nothing.
func FuzzMerge(f *testing.F) {
	a, _ := json.Marshal(runningStatus("app"))
	f.Add(a, a, true)
	f.Add([]byte(`{"phase":"Running","conditions":[{"type":"DisruptionTarget","status":"True"}]}`), []byte(`{"phase":"Failed","conditions":[{"type":"Ready","status":"True"}]}`), false)
	f.Fuzz(func(t *testing.T, apiJSON, kubeletJSON []byte, couldRun bool) {
		var api, kubelet v1.PodStatus
		if json.Unmarshal(apiJSON, &api) != nil || json.Unmarshal(kubeletJSON, &kubelet) != nil {
			return
		}
		apiCopy, kubeletCopy := api.DeepCopy(), kubelet.DeepCopy()
		merged := DefaultOptions().Merge(&api, &kubelet, couldRun)
		if !equality.Semantic.DeepEqual(apiCopy, &api) || !equality.Semantic.DeepEqual(kubeletCopy, &kubelet) {
			t.Fatal("Merge modified its inputs")
		}
		if _, _, err := Patch("uid", "", &api, &merged); err != nil {
			t.Fatalf("Patch: %v", err)
		}
		if _, unchanged, err := Patch("uid", "7", &merged, &merged); err != nil || !unchanged {
			t.Fatalf("a status against itself: unchanged=%v err=%v", unchanged, err)
		}
	})
}
