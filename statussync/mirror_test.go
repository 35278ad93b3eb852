package statussync

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestMirrorPodRecreated: a static pod's status is synced to its mirror
// pod; the mirror pod is deleted and created again with a new UID (as the
// kubelet does when a mirror pod's spec no longer matches). The next full
// pass writes the new mirror pod: the kubelet keys the versions the API
// holds by mirror pod UID (spec/statussync.md section 5, step 6, and
// section 10, invariant 6), so a new mirror pod holds no version yet.
func TestMirrorPodRecreated(t *testing.T) {
	m := &fakeMirrors{static: "static-uid"}
	o := DefaultOptions()
	o.Mirrors = m
	h := newHarness(t, o)
	static := testPod("static-uid", "etcd-node1")
	static.Annotations = map[string]string{ConfigSourceAnnotation: "file"}
	h.set(static, runningStatus("app"))

	mirror := testPod("mirror-1", "etcd-node1")
	mirror.Annotations = map[string]string{ConfigMirrorAnnotation: "hash", ConfigSourceAnnotation: "file"}
	h.create(mirror)
	m.mirror = "mirror-1"
	if r := h.engine.SyncOnce(context.Background(), true); r.Synced != 1 {
		t.Fatalf("the first mirror pod is written: %+v", r)
	}

	if _, err := h.api.Recreate("default", "etcd-node1", "mirror-2"); err != nil {
		t.Fatal(err)
	}
	m.mirror = "mirror-2"
	h.clock.Step(DefaultFullSyncPeriod)
	r := h.engine.SyncOnce(context.Background(), true)
	server, _ := h.api.Pod("default", "etcd-node1")
	if server.UID != "mirror-2" || server.Status.Phase != v1.PodRunning || r.Synced != 1 {
		t.Errorf("the recreated mirror pod %s holds phase %q after a full pass (%+v), want the static pod's Running", server.UID, server.Status.Phase, r)
	}
	if _, ok := h.cache.GetPodStatus("static-uid"); !ok {
		t.Error("the static pod's status stays cached")
	}
}
