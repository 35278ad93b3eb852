package podlifecycle

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestRule4_5_UpdateHeldDuringABlockedSyncSyncsOnceMore: a sidecar behind a
// slow pull, then a regular container whose image is not there. The
// kubelet's relist finds the new sandbox while the first sync waits on the
// pull, and its pod worker holds that event; once the sync returned it
// syncs for it (the status shows the sidecar running, and the regular
// container's pull fails), and the relist that sync waited for found the
// sidecar started, an event that syncs the pod once more a relist later:
// the pull's failure shows then, not at the error requeue 10 s on
// (rule 4.5; oracle case gen-161, from the oracle node's log). A pull
// shorter than a relist holds nothing, and the failure waits for the
// requeue, unless an update of the pod came in during it.
func TestRule4_5_UpdateHeldDuringABlockedSyncSyncsOnceMore(t *testing.T) {
	for _, tt := range []struct {
		pull     time.Duration
		update   bool
		nextSync time.Duration
	}{
		{6 * time.Second, false, 7 * time.Second},
		{500 * time.Millisecond, false, 10*time.Second + 500*time.Millisecond},
		{500 * time.Millisecond, true, 1500 * time.Millisecond},
	} {
		pod := onePod("app:1")
		pod.Spec.InitContainers = []v1.Container{{Name: "sc", Image: "sc:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways)}}
		opts := DefaultOptions()
		opts.Rand = nil
		m, err := New(opts, pod)
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		step := func(at time.Duration, obs ...Observation) []string {
			t.Helper()
			if err := m.StepTo(t0.Add(at), pod, obs, &r); err != nil {
				t.Fatalf("+%v: %v", at, err)
			}
			return actionsOf(&r)
		}
		step(0)
		if got := step(0, Observation{Kind: SandboxReady, IP: "10.0.0.3"}); !slices.Contains(got, "StartContainer sc") {
			t.Fatalf("pull %v: the sidecar's start not issued: %v", tt.pull, got)
		}
		if tt.update {
			pod = pod.DeepCopy()
			pod.Labels = map[string]string{"tier": "web"}
			if got := step(tt.pull / 2); len(got) != 0 {
				t.Fatalf("an update during the pull: %v, want no sync until the pull returned", got)
			}
		}
		got := step(tt.pull, Observation{Kind: ImagePulled, Container: "sc", Duration: tt.pull},
			Observation{Kind: ContainerCreated, Container: "sc", ContainerID: "c://sc"},
			Observation{Kind: ContainerStarted, Container: "sc", ContainerID: "c://sc"})
		if !slices.Contains(got, "StartContainer foo1") {
			t.Fatalf("pull %v: the sync after it starts no regular container: %v", tt.pull, got)
		}
		step(tt.pull, Observation{Kind: ImagePullFailed, Container: "foo1", Image: "app:1", Message: "not found"})
		if want := t0.Add(tt.nextSync); !r.NextSync.Equal(want) {
			t.Errorf("pull %v, update %v: next sync +%v, want +%v", tt.pull, tt.update, r.NextSync.Sub(t0), tt.nextSync)
		}
	}
}
