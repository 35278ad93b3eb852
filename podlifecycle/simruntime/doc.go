// Package simruntime is a simulated container runtime for one pod: it
// carries out a podlifecycle machine's actions in virtual time, following a
// declarative behaviour per container, and reports what came of them as
// podlifecycle observations at the time they happen. Nothing runs: a pull
// that takes 20 s reports at +20 s, an instance that runs 30 s reports its
// exit 30 s after it started, a probe reports the outcome its window says.
//
// It is a production package, not a test kit: a node agent that simulates
// its pods (kube.Node, a virtual-kubelet provider, a fleet of simulated
// nodes) uses it behind podrunner, and the oracle node runs the same
// behaviours on the real kubelet, so the two nodes run the same simulated
// processes.
//
// # Behaviours
//
// A [Behaviour] says how every instance of one container behaves: how long
// it runs and with which code it exits (or that it runs forever), image
// pulls that fail a number of times or always, or are slow, probe outcomes
// over windows of an instance's life, a container that ignores SIGTERM for
// a while, and postStart and preStop hooks that take time or fail. Its text
// form is one clause per behaviour:
//
//	run 30s exit 1; pull fail 2; liveness fail 60s-90s; ignore-sigterm 10s
//
// [ParseBehaviours] reads one line per container ("app: run 30s exit 1"),
// [ParseBehaviour] one container's clauses, and [PodBehaviours] the pod
// annotations "sim.nodestate.io/<container>" ([AnnotationPrefix]) that
// carry them on a real cluster:
//
//	rt, err := simruntime.NewForPod(simruntime.DefaultOptions(), pod)
//	...
//	err = rt.Do(now, res.Actions)    // what a podlifecycle Step asked for
//	obs := rt.Due(later)             // what happened up to later
//	next := rt.Next()                // when the runtime next has news
//
// # How the simulation runs
//
// Within one Do, pulls, starts and postStart hooks happen one after the
// other, as the kubelet's sync does them (serialized pulls, blocking
// hooks); kills, preStop hooks, probes and sandbox calls happen at the time
// Do is called. A failed pull skips the start after it; a regular init
// container whose start is skipped skips the starts after it. A kill with
// grace g stops an instance that honours SIGTERM at once with exit code
// 143, and one that ignores SIGTERM for d after min(g, d): with exit 143
// when d is shorter, else with SIGKILL's 137. A hook outlived by its
// container fails when the container exits, exit 137; a container that
// exits as the hook would end exits first, as the kubelet execs a hook a
// moment after the call before it, and one gone before its hook begins
// fails the hook's exec at once ([ExecExitedMessage]). A preStop hook that
// takes the whole grace of its kill (the RunHook action's Grace) or more
// ends no later than the stop that follows, as the kubelet starts its grace
// timer before the hook's exec: one still running then fails (137).
// Stopping the sandbox stops every instance in it (137) and fails every
// start still behind a slow pull or hook.
//
// Container IDs are "sim://<container>-<n>" ([Options].Token puts a token
// before the name); a ready sandbox reports [Options].IP (by default none:
// the runner's address allocator gives the pod its IP). Every created
// instance reports the ref of its image, pulled or present, as [ImageRef]
// gives it ("<repository>@sha256:<SHA-256 of the name the kubelet pulls>",
// the same in every run, as the oracle node's runtime gives it), and every
// started one the resources the kubelet reads from a runtime that applied
// the spec ([Applied]): the CPU shares, quota and memory limit it gave the
// runtime (the pod-level limits where the container has none), read back,
// and the memory request of its own record.
//
// # Differences from a CRI runtime
//
// The runtime is simpler than a CRI runtime on purpose: a sandbox is ready
// at once and is never lost; create and start are one step; hooks and
// probes are not run inside the container, their outcomes come from the
// Behaviour; every probe failure says "probe failed" and every pull
// failure is "not found".
//
// A Runtime is not safe for concurrent use; it has one owner.
package simruntime
