// Package conformance compares nodestate with the upstream Kubernetes code it
// reimplements, on generated inputs. It has no API: its tests are the
// product.
//
// The reference is k8s.io/kubernetes v1.37.2 (its staging modules at
// v0.37.2), imported, never copied. Each property draws at least 5,000
// inputs per run with pgregory.net/rapid, hands the same input to nodestate
// and to the upstream function, and fails with a shrunk input, printed in a
// few readable lines, on the first difference:
//
//   - podphase.DisplayStatus and podphase.Columns (STATUS, READY, RESTARTS,
//     the -o wide columns and the Completed row condition) against the pod
//     table printer of pkg/printers/internalversion, run through
//     pkg/printers' table generator on the pod the API server would print:
//     decoded with the v1 defaults and converted to the internal type with
//     pkg/api/legacyscheme;
//   - podphase's conditions (PodReadyToStartContainers, Initialized, Ready,
//     ContainersReady, PodScheduled, AllContainersRestarting, the preserved
//     conditions of other writers and DisruptionTarget, in order) against
//     the generators of pkg/kubelet/status, assembled in
//     generateAPIPodStatus's order, with RestartAllContainersOnContainerExits
//     on (the 1.37 default) and off; the runtime's sandboxes are drawn for
//     each podphase.Sandbox state and its containers are derived from the
//     new status, as podphase reads them;
//   - containerstate.ShouldRestart against
//     pkg/api/v1/pod.ContainerShouldRestart, with the same gate on and off.
//
// Pods come from podphasetest.Pod (what a kubelet reports) and from a wild
// generator: statuses missing, stateless, waiting with or without a reason,
// terminated with empty reasons, signals and any exit code, out of spec
// order or for a container the spec lacks; any phase, pod reasons such as
// Evicted and NodeLost, duplicated conditions, deletion timestamps, pod IPs
// and node names.
//
// Not compared: the lastTransitionTime the status manager stamps (no
// upstream function that computes it is exported). Inputs on a documented
// difference are skipped and counted apart in the report; see the README's
// "Faithfulness" section.
//
// Run it with `make conformance`, or `go test -v .` here; -rapid.checks
// raises the number of inputs and -rapid.seed or -rapid.failfile replays a
// failure.
package conformance
