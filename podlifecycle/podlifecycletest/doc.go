// Package podlifecycletest is a test kit for [podlifecycle]: a driver that
// runs a pod to its end on the simulated runtime of package simruntime,
// rapid generators of pods and behaviours, and invariant checks over the
// traces (spec/podlifecycle.md).
//
// # The driver
//
// [Run] steps a [podlifecycle.Machine] for a pod whose containers follow
// simruntime behaviours (how long an instance runs and with which code it
// exits, pulls that fail or are slow, probe outcomes over windows, SIGTERM
// ignored for a while, hooks that take time or fail), hands its actions to
// the simulated runtime and advances virtual time to the earliest of the
// machine's NextSync, the runtime's next report and a deletion, and returns
// the [Trace] of every Step.
//
//	bs, _ := simruntime.ParseBehaviours("app: run 5s exit 1\nproxy: startup fail 0s-10s")
//	tr, err := podlifecycletest.Run(pod, bs, podlifecycletest.DefaultOptions())
//	if err == nil {
//		err = podlifecycletest.CheckAll(tr)
//	}
//
// # Generators
//
// [Pod] and [PodWith] generate pods with regular init containers, sidecars
// and regular containers, pod and container restart policies and rules,
// probes, hooks, grace periods and activeDeadlineSeconds; [BehavioursFor]
// generates behaviours for a pod, [Deletions] deletes at random times with
// grace periods, and [Cases] all of them together, for model tests like
// this package's own (1,000 generated pods per run):
//
//	rapid.Check(t, func(t *rapid.T) {
//		tc := podlifecycletest.Cases(podlifecycletest.DefaultGenOptions(), 4*time.Minute).Draw(t, "case")
//		opts := podlifecycletest.DefaultOptions()
//		opts.Delete = tc.Delete
//		tr, err := podlifecycletest.Run(tc.Pod, tc.Behaviours, opts)
//		if err == nil {
//			err = podlifecycletest.CheckAll(tr)
//		}
//		if err != nil {
//			t.Fatalf("%v\n%s", err, tr)
//		}
//	})
//
// # Invariants
//
// [Checks] lists the invariants, each a function of a trace returning a
// [*Violation] naming the step: init containers start one at a time in spec
// order; no regular container starts before initialization; a sidecar's
// successor waits for its startup probe; crash-loop back-off is respected;
// termination stops regular containers before sidecars and sidecars in
// reverse order, within the grace period; a terminal phase never changes;
// every event and action names a container of the pod; every status passes
// the API server's container-state transition validation; and the machine's
// next wake-up moves on. Each check was seen to fail on a deliberately
// broken machine, and on a real trace mutated to break it (check_test.go).
//
// # Differences from a kubelet node
//
// The simulated runtime is simpler than a CRI runtime (simruntime's package
// doc says how). The driver steps the machine again whenever something is
// due, even while a slow pull of an earlier Result is still under way; the
// kubelet's pod worker would not sync again before that sync returned.
//
// Nothing here is safe for concurrent use; each value has one owner.
package podlifecycletest
