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
//     pkg/api/v1/pod.ContainerShouldRestart, with the same gate on and off;
//   - podphase.PodRequests and PodLimits against component-helpers'
//     PodRequests and PodLimits with the options the kubelet passes for
//     status.allocatedResources and status.resources, and
//     podphase.PodCgroupOf and QOSClass against pkg/kubelet/cm's
//     ResourceConfigForPod (the kubelet's defaults) and GetPodQOS, on pods
//     from podphasetest.PodWithResources (init containers and sidecars in
//     any order, pod-level resources, overheads, the Guaranteed shape).
//
// Container statuses themselves are compared nowhere: the kubelet's
// convertToAPIContainerStatuses is a method of the Kubelet, which cannot be
// built outside a node (see the podlifecycle comparison below); its
// volumeMounts, imageID, resources and allocatedResources rules are
// covered by containerstate's cases from upstream's tests
// (spec/containerstate.md section 14).
//
// Pods come from podphasetest.Pod (what a kubelet reports) and from a wild
// generator: statuses missing, stateless, waiting with or without a reason,
// terminated with empty reasons, signals and any exit code, out of spec
// order or for a container the spec lacks; any phase, pod reasons such as
// Evicted and NodeLost, duplicated conditions, deletion timestamps, pod IPs
// and node names.
//
// For podlifecycle the reference is the kubelet's runtime manager itself
// (pkg/kubelet/kuberuntime), built with its exported constructor
// NewKubeGenericRuntimeManager over the fake CRI services of
// k8s.io/cri-api/pkg/apis/testing, wrapped to record each call with its
// arguments and to stamp what they create with a virtual clock, which also
// drives the crash-loop and image pull back-offs. A history is one pod and
// a list of steps (advance the clock; containers exit with a code or turn
// unknown; the sandbox is lost; pulls or exec hooks fail; probe results are
// stored in the liveness, readiness and startup result managers; the pod
// is deleted). Each step is one sync: the pod status read with GetPods and
// GetPodStatus as the PLEG reads it, then SyncPod with the crash-loop
// back-off, as Kubelet.SyncPod calls it; termination is KillPod with the
// pod worker's grace as override. After each, the comparison holds the
// machine's actions against the CRI calls in order (RunPodSandbox,
// StopPodSandbox, PullImage, CreateContainer, StartContainer and
// StopContainer with its timeout, RemoveContainer, ExecSync for exec
// hooks), the Killing messages (the only visible trace of the kill
// reason, whose other effect is the timeout) and the events with their
// field paths, and the failed start results (the next status's Waiting
// reasons). Three orders depend on the Go runtime, not on a rule: the
// kills of a whole-pod kill run in one goroutine per container
// (killContainersWithSyncResult; only terminationOrdering's sidecar order
// is fixed, and it is checked on the raw calls), SyncPod kills the
// containers it does not keep in the iteration order of the
// ContainersToKill map, and pruneInitContainersBeforeStart and
// purgeInitContainers walk the init containers' names from a set (each
// name's instances go newest first). The comparison puts them in one
// canonical order (regular containers by name, then sidecars from last to
// first, each container's preStop hook before its stop; removals by name)
// and counts the histories where only the raw order differed in a row of
// their own; they are compared, in that order, like every other history.
// Without it 18 of 20 runs of the termination history differ. Not driven,
// so covered by named cases from upstream's tests: the pod worker and
// Kubelet.SyncPod around the manager (status generation, effective grace,
// requeue times, the active deadline; constructing a Kubelet needs the
// whole node), the prober workers (their tickers run on the wall clock;
// results are set directly), and the seconds
// terminationOrdering.waitForTurn and executePreStopHook measure on
// the wall clock (the fake runtime stops at once, so PL33 and PL34's
// deductions are 0 here), like sleep hooks, which sleep on it (histories
// use exec hooks; HTTP hooks are answered 200). A stopped container
// reports exit code 143, as a process that ends on SIGTERM; the fake's own
// 0 would read as a success. The Pulled event's pull durations, also wall
// clock, are masked.
//
// TestLifecycleMatchesUpstream runs that comparison on generated pods
// (podlifecycletest.PodWith) and histories of up to ten steps. The machine
// gets each step as a pod update (a new resourceVersion), so it syncs as
// the pod worker does on one. A sync that kills is one sync over several
// of the machine's Steps: SyncPod and KillPod block on each preStop hook
// and stop, the machine issues them and goes on with the rest of that
// sync (the prune and the starts, or the sandbox stop) in the Step that
// gets the last stop; the next Step is the next sync. A sync that creates
// a sandbox starts what it decided in the Step that gets the sandbox ready
// (spec/podlifecycle.md section 15, decision 6). A step whose status
// is terminal runs KillPod, with no override, instead of SyncPod, as the
// pod worker does once Kubelet.SyncPod finds the phase terminal; the
// history stops there. The machine's KillSandbox, which stops every
// sandbox of the pod, stands for the manager's StopPodSandbox of each,
// newest first. Probe results are drawn as the prober workers store them
// after thresholds (threshold 1 on the machine's side): startup Success or
// Failure until the instance has started, then liveness Failures, no more
// results for an instance once one failed; readiness changes no runtime
// call and is not drawn. activeDeadlineSeconds is not drawn: Kubelet.SyncPod
// and the pod worker enforce it, not the manager. Nor are postStart hooks:
// the manager kills a container whose hook failed inside the SyncPod that
// started it, before the next start, while the machine issues the sync's
// starts together and learns of the failure at the next Step (a
// difference in podlifecycle's package doc).
//
// Not compared: the lastTransitionTime the status manager stamps (no
// upstream function that computes it is exported). Inputs on a documented
// difference are skipped and counted apart in the report; see the README's
// "Faithfulness" section.
//
// # Older minors
//
// nodestate has a profile per minor (kubeversion.Version, and each
// package's DefaultOptionsFor); docs/versions.md lists what differs and the
// reference release of each: v1.33.13, v1.34.4, v1.35.4, v1.36.3. The
// printer, conditions and ShouldRestart properties run against those
// releases too, with the matching profile, from the driver module
// conformance/versions.
//
// A release's upstream code cannot be built into one binary with nodestate:
// nodestate needs k8s.io/api v0.37.2 (container restartPolicyRules appear in
// v0.34, the RestartAllContainers action and the AllContainersRestarting
// condition in v0.35), while k8s.io/kubernetes v1.33.13 needs its own API
// packages, several of which v0.37.2 no longer has (autoscaling/v2beta1 and
// v2beta2, scheduling/v1alpha1, imported by the printer's install
// packages; kubelet's dra/v1alpha4), and mixing staging modules of different
// releases would compare nodestate with neither release. So each release's
// code runs in a process of its own, built by its own module with every
// staging module at that release: cmd/upstream, a command that reads one JSON
// request a line and answers with the release's printPod row, its condition
// generators assembled as generateAPIPodStatus does, its
// ContainerShouldRestart, or its kuberuntime manager's runtime calls over a
// history (cmd/upstream/lifecycle.go: the harness of
// upstream_harness_test.go behind three requests, lifecycle-new,
// lifecycle-step with the step's changes and a sync or the termination, and
// lifecycle-end). The request carries the drawn objects; the answer
// echoes them as the release's types decoded them, and nodestate gets the
// echo: both sides read the same pod, and a field the release does not know
// is gone, as the release's API server drops it. (The echo also turns an
// empty non-nil list into nil, so the documented difference about empty
// containerStatuses never arises there.) The inputs are the same
// generators: gen_test.go, cases_test.go and lifecycle_history_test.go (the
// podlifecycle history and its machine side, run here over the in-process
// harness, there over the command) have no dependency on k8s.io/kubernetes
// and are copied into the driver.
//
// The modules conformance/versions/v1.33 to v1.36 are generated by
// `go run ./internal/cmd/genversions` from the repository root: main.go,
// lifecycle.go and kubeletfakes.go are cmd/upstream's, version.go is the
// release's hand-written shim cmd/upstream/testdata/<minor>/version.go
// (cmd/upstream/version.go is v1.37.2's), and go.mod requires
// k8s.io/kubernetes at the release with its staging modules replaced by their
// published versions (go.sum by go mod tidy). The modules outside Kubernetes
// that the commands share with this suite (grpc, protobuf, OpenTelemetry,
// Prometheus, golang.org/x, ...; genversions' aligned list) are required at
// this suite's versions, so that a cold build compiles their packages once
// for the five releases; none of them decides a pod's state. `make lint`
// runs genversions -check, which compares the copies and the go.mod lines
// without running the go command. The shims cover what
// differs between the releases for these properties: the release string,
// the RestartAllContainersOnContainerExits gate (absent in 1.33 and 1.34,
// which behave as with it off, so it is not set there; alpha and off in
// 1.35, where turning it on also turns on its prerequisite
// NodeDeclaredFeatures; beta and on in 1.36 and 1.37), the condition
// observedGeneration helper (GetPodObservedGenerationIfEnabledOnCondition in
// 1.33, CalculatePodConditionObservedGeneration after),
// GenerateAllContainersRestartingCondition (from 1.35), and the kuberuntime
// manager: NewKubeGenericRuntimeManager's parameters differ in every release
// (1.34 adds ctx and maxPods, 1.35 drops the allocation manager, 1.36 takes
// an EventRecorderLogger and adds memoryReservationPolicy and an init
// container time recorder, 1.37 adds defaultPodSysctls and makes
// memoryThrottlingFactor a pointer; the fake container manager takes a
// logger in 1.37, cadvisor's MachineInfo moved to lib/model), SyncPod takes
// restartAllContainers from 1.35, GetPodStatus the running pod from 1.36, and
// the kubelet calls InitializeActuatedPod before SyncPod in 1.37 only.
// Each property runs with the gate at the release's default first, then
// flipped where the release has the gate (the podlifecycle property runs
// with the default only, as in this module). Every other gate keeps the release's default, as
// the profile does.
//
// The podlifecycle property of the driver gives the machine the pod the
// release's API server stores (defaulted, and without the fields of the
// gates that are off: pkg/api/pod.DropDisabledPodFields, which in 1.34 drops
// container restartPolicy and restartPolicyRules); a pod that release's
// validation refuses (in 1.33, restartPolicy on a regular container, or
// other than Always on an init container) is not compared and is counted
// apart. The property does not stop at a difference: it counts each,
// keeps the shortest example for the report, and goes on, as a failure
// rapid shrinks tells nothing of how often it happens; any difference fails
// the test at the end. podlifecycle models every lifecycle difference
// docs/versions.md lists (PL-V7, the init-container decision before 1.37,
// among them), so none is excused.
//
// The kuberuntime manager reads the wall clock in one place that matters
// here: it takes the whole seconds a preStop hook and a container's wait for
// its turn to stop took off that container's StopContainer grace. A grace
// the manager shortened by no more than the whole seconds its call took is
// counted as the machine's, and the histories where that happened have a
// row of their own in the report (they appear on a loaded machine only).
//
// Not run against the older releases:
//
//   - ShouldRestart against v1.33.13: pkg/api/v1/pod.ContainerShouldRestart
//     does not exist there (it came with ContainerRestartRules in 1.34); the
//     kubelet's ShouldContainerBeRestarted of 1.33 decides from the runtime's
//     status and the pod policy alone, and is not the function
//     containerstate.ShouldRestart models.
//
// The driver builds each release's command once (cold, on two shared
// cores: v1.33 19 min on a loaded machine, v1.34 7.5 min, v1.35 and v1.36 4
// min before the podlifecycle property; the kuberuntime manager and its
// dependencies, about 660 more packages, added 7 to 14 min each on a machine
// at load 10 to 15; once built, 15 to 20 s, mostly the link; the report
// gives the time) and runs the properties
// against every release; `go test . -versions v1.33,v1.35` selects some.
// -versions v1.37 runs the driver against cmd/upstream built in this
// module, which checks the command path against the in-process comparison.
// `make conformance` prints a section per release.
//
// Run it with `make conformance`, or `go test -v .` here; -rapid.checks
// raises the number of inputs and -rapid.seed or -rapid.failfile replays a
// failure.
package conformance
