// Package podlifecycletest is a test kit for [podlifecycle]: a simulated
// container runtime that carries a machine's actions out in virtual time, a
// driver that runs a pod to its end, a text format for how containers
// behave, rapid generators of pods and behaviours, and invariant checks over
// the traces (spec/podlifecycle.md).
//
// # The runtime and the driver
//
// A [Runtime] follows declarative per-container [Behaviour]s: how long an
// instance runs and with which code it exits (or that it runs forever),
// image pulls that fail a number of times or always, or are slow, probe
// outcomes over windows of an instance's life, a container that ignores
// SIGTERM for a while, and postStart and preStop hooks that take time or
// fail. It reports each pull, create, start, exit, probe and hook result at
// the virtual time it happens, and says when it next has something to
// report ([Runtime.Next]). [Run] steps a [podlifecycle.Machine], hands its
// actions to the runtime and advances to the earliest of the machine's
// NextSync, the runtime's next report and a deletion, and returns the
// [Trace] of every Step.
//
//	bs, _ := podlifecycletest.ParseBehaviours("app: run 5s exit 1\nproxy: startup fail 0s-10s")
//	tr, err := podlifecycletest.Run(pod, bs, podlifecycletest.DefaultOptions())
//	if err == nil {
//		err = podlifecycletest.CheckAll(tr)
//	}
//
// # The behaviour text
//
// One line per container, "name: clause; clause", as [ParseBehaviours]
// documents: "app: run 30s exit 1; pull fail 2; liveness fail 60s-90s;
// ignore-sigterm 10s". [Behaviours.String] writes the same form back.
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
// The runtime is simpler than a CRI runtime on purpose: a sandbox is ready
// at once and is never lost; create and start are one step; a container
// that honours SIGTERM stops at once with exit code 143; a kill stops a
// container that ignores SIGTERM after min(grace, IgnoreSigterm); hooks and
// probes are not run inside the container, their outcomes come from the
// Behaviour. Within one Result the pulls, starts and postStart hooks run
// one after the other (the kubelet's serialized pulls and blocking hooks),
// but the driver steps the machine again whenever something is due, even
// while a slow pull of an earlier Result is still under way; the kubelet's
// pod worker would not sync again before that sync returned.
//
// Nothing here is safe for concurrent use; each value has one owner.
package podlifecycletest
