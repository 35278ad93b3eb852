// Package podlifecycle is one pod on one node as a pure machine: the
// kubelet's computePodActions and SyncPod, its pod worker (syncing,
// terminating, terminated, finished), its prober's thresholds, graceful
// termination with preStop hooks and the sidecar order,
// activeDeadlineSeconds, image pull policy and pull back-off, and the
// kubelet's event vocabulary, the way Kubernetes v1.37.2 with default
// feature gates does them. The reference is spec/podlifecycle.md (sections
// 1 to 15, cases PL01 to PL45); the tests name the rule or case each checks.
//
// # The machine
//
// Like raft's RawNode, a [Machine] reads no clock and does no I/O. One call
// of [Machine.Step] (or [Machine.StepTo], which reuses a [Result]) is one
// kubelet sync. It takes the time, the API pod (spec, deletionTimestamp and
// deletionGracePeriodSeconds, activeDeadlineSeconds, ephemeral containers
// added) and what the runtime observed since the previous call, as
// [Observation]s: sandbox ready or gone, image present, pulled or failed,
// container created, started, exited, unknown or removed, create and start
// failures, probe results and hook results. ContainerCreated and
// ContainerStarted carry what the runtime reports about the instance: its
// image ref (the status's imageID), the resources it applied and the user
// it runs as, each optional; the machine keeps them per instance. It
// returns plain data:
//
//   - [Action]s for a runtime, in the kubelet's order: create or kill the
//     sandbox, pull an image under its pull policy, create and start a
//     container, kill one with its grace, reason and message, remove one,
//     run a preStop or postStart hook, run a probe;
//   - the status versions the sync produced (podphase's GenerateStatus on
//     containerstate's conversion of the runtime view, with volumeMounts,
//     imageID, resources and allocatedResources, and the pod-level
//     resources and allocatedResources), in order;
//   - the [Event]s the kubelet records, with type, reason, exact message
//     and field path (see the Reason constants and the message functions,
//     usable by agents that record events themselves);
//   - when the next sync is due: the earliest crash-loop expiry, pull or
//     error requeue, probe tick, deadline, end of a preStop hook or of a
//     sidecar's wait, or the resync;
//   - whether the pod is finished: every container and the sandbox stopped
//     after a deletion or a terminal phase, and the terminal status
//     produced, so the runner can call statussync's TerminatePod.
//
// The event vocabulary (the Reason constants and the message functions)
// stays in this package, although the kubelet keeps its reasons apart in
// pkg/kubelet/events: there many packages record them, here only the
// machine does, and an Event's Reason is read against these constants by
// whoever writes the events, so the values belong with the type.
//
// A runner carries the actions out and reports what happened in the next
// Step; it calls Step again when it has observations, when the pod
// changed, or at Result.NextSync. A Step with nothing due allocates
// nothing, and so does a sync with nothing changed (a resync): the machine
// generates a status into storage of its own and copies it into the
// Result only when it is new, and it does not generate it at all when
// nothing the status is generated from (the runtime view, the reason
// cache, the probe results, the API pod, the deadline) changed since a
// generation that gave the last status again. The statuses of a Result
// are the caller's: they share no memory with the machine.
//
//	m, err := podlifecycle.New(podlifecycle.DefaultOptions(), pod)
//	var res podlifecycle.Result
//	for now := start; ; {
//		if err := m.StepTo(now, pod, rt.Due(now), &res); err != nil {
//			return err // *InputError: the machine is unchanged
//		}
//		_ = rt.Do(now, res.Actions) // pulls, starts, kills, probes, hooks
//		write(res.Statuses, res.Events)
//		if res.Finished {
//			break
//		}
//		now = earliest(res.NextSync, rt.Next())
//	}
//
// (ExampleMachine_loop runs this loop on simruntime's runtime.) Package
// podrunner is this loop written once, for a node's pods: it adds the
// kubelet's sync triggers (no sync on a status-only update), pod IPs, the
// node's image inventory, the status cache and the event recorder.
//
// Actions of one Result are carried out in order. A sync that kills
// containers issues the kills first and goes on, in the Step that gets the
// last stop, with the rest of the same plan: the removal of old init
// container instances, then the starts (spec/podlifecycle.md section 4.1).
// A PullImage, the
// StartContainer of the same container after it and its postStart RunHook
// form a chain: a failed pull skips the start, a failed start skips the
// hook (the hook of a StartContainer has no ContainerID: it is the
// instance just started). When a regular init container's start fails the
// runner skips the remaining starts of the Result. KillContainer is a
// request whose grace is already final (the machine ran the preStop hook
// and the sidecar wait before it); the runner answers with ContainerExited
// when the runtime stopped the container.
//
// A Machine is not safe for concurrent use: it has one owner. Bad input
// (a nil pod, a pod without a UID, another pod's UID, duplicate or changed
// container names, an observation for a container the spec lacks, an exit
// or a start of an instance that no start of the machine's waits for (the
// answer to one may come first running or exited: its creation is then
// implied, as a relist may first see a container in any state), a time
// earlier than one already accepted) returns an [*InputError] unwrapping to [ErrInvalidInput] or
// [ErrTimeWentBackwards], and changes nothing. An observation about an
// instance the machine once knew but no longer keeps (pushed out of its
// window, removed by a reset, purged with a lost sandbox) is no bad input:
// a runtime legitimately reports late results for old instances. It is
// accepted, ignored and counted in [Machine.Stats], and the rest of its
// batch is applied; an ID the machine never saw is still refused.
//
// # Pod worker states
//
// The state never goes backwards:
//
//	stateDiagram-v2
//	    [*] --> Syncing
//	    Syncing --> Terminating: deletionTimestamp, or a terminal phase (restart policy, activeDeadlineSeconds)
//	    Terminating --> Terminated: every container and the sandbox stopped; the terminal status is produced
//	    Terminated --> Finished: the next Step
//	    Finished --> [*]
//
//	| state | what a Step does |
//	|---|---|
//	| Syncing | status, computePodActions (section 3), starts with crash-loop and pull back-off, kills, probes |
//	| Terminating | status, whole-pod kill with the effective grace (7.2-7.5), then the sandbox, then the terminal status |
//	| Terminated | reported once, with Finished true |
//	| Finished | nothing; NextSync is zero |
//
// # Decisions (spec/podlifecycle.md section 15)
//
//  1. Status lag, faithful: the status of a Step is generated before it
//     decides anything, from the runtime view with the observations applied
//     and the reason cache of the previous sync, so CrashLoopBackOff and
//     ImagePullBackOff show at the sync after the one that decided them
//     (with the requeue at the back-off expiry, at the sync that ends it).
//  2. A shorter grace during termination does not shorten kills already
//     under way, as the kubelet's detached context does not: the effective
//     grace only applies to kills that have not begun.
//  3. A lost sandbox with mixed restart policies, and in-place restarts
//     (RestartAllContainers resets) with no crash-loop back-off after them,
//     are copied from the kubelet; they are upstream behaviours at v1.37.2.
//  4. Probe ticks start at the container's start time: the first at start +
//     initialDelaySeconds, then every periodSeconds. No jitter unless
//     Options.Rand is set, which adds a random first delay of up to one
//     period.
//  5. Requeues after a failed sync (pull failures and back-off, config and
//     create errors, sandbox errors) use Options.ErrorRequeue (10 s) with no
//     jitter unless Options.Rand is set (up to 50 %). A failure observation
//     (ImagePullFailed, ContainerCreateFailed, ContainerStartFailed,
//     SandboxCreateFailed) is the end of the sync that failed, not a runtime
//     event: it records its events and schedules the requeue, and syncs
//     nothing at once; a runtime event or a pod update in the meantime syncs
//     at once, as in the kubelet. A pull that succeeded is no runtime event
//     either: the start after it decides how the sync ended.
//  8. Pod updates: a Step whose pod differs from the previous one in what
//     [Changed] compares (spec, labels, annotations, deletionTimestamp,
//     deletionGracePeriodSeconds) syncs at once; a pod whose status or
//     resourceVersion alone changed does not, unless its readiness gates
//     make its Ready condition stale (podphase.ReadyConditionStale, the
//     kubelet's readiness reconcile; rule 4.5). The machine reads
//     a pod it is handed as immutable, as informers hand them out: change a
//     copy, not the pod of an earlier Step.
//  6. PodReadyToStartContainers: the Step that asks for the sandbox outputs
//     the status with the condition False; the Step that sees the sandbox
//     ready outputs the one with it True, before any pull, and then the
//     starts the sync decided when it asked for the sandbox (rule 3.3). The
//     two versions are in order, in two Results instead of one.
//  7. Time is an argument: a time earlier than one already accepted is
//     refused with ErrTimeWentBackwards and changes nothing.
//
// # Differences from Kubernetes
//
//   - The kubelet's sync blocks on each runtime call; the machine issues the
//     calls and waits for their observations. A sync that kills (probe
//     failures, changed images, unknown states, rule 3.6; a whole-pod kill,
//     rule 3.7) is spread over Steps the way SyncPod runs it: the kills
//     first; once every killed instance stopped, the sandbox stop, the prune
//     and the starts of the plan decided when the sync began (a killed
//     container's restart backed off against the instance before it, the
//     newest exited one when the sync began); nothing else is decided
//     meanwhile, and the Steps in between generate no status. The next sync
//     is then due at once, as the kubelet's relist after a sync that acted
//     finds the stopped containers. A deletion in the meantime ends the
//     waiting sync without its starts. An action under way counts as done
//     for later decisions: a container being started is not started again.
//     A kill from an earlier sync still under way when termination begins
//     holds the sidecars' turn, as it would have been over in the kubelet.
//   - Termination never overtakes a start (spec/podlifecycle.md sections
//     7.3 and 15): the kubelet's SyncPod runs pulls, starts and postStart
//     hooks synchronously, so its SyncTerminatingPod only begins once they
//     returned. The machine does the same instead of asking the runner to
//     cancel: while a PullImage or StartContainer it issued is unanswered,
//     a terminating pod stops nothing more than what already runs, does not
//     stop the sandbox and does not finish; once the start is answered, the
//     instance it created is killed with the effective grace, then the
//     sandbox is stopped, then the pod finishes. A runner must therefore
//     answer every StartContainer it was given (or skip it as the action
//     chains above say).
//   - For the same reason a RestartAllContainers reset (section 3.2) is not
//     decided while a PullImage or StartContainer is unanswered: a pod
//     marked AllContainersRestarting syncs nothing until the start is
//     answered, and the reset then kills and removes what it started too,
//     so a late start cannot count as initialization during the rerun of
//     the init containers.
//   - A failed postStart hook: the kubelet kills the container inside the
//     SyncPod that started it, before that sync's later starts; the machine
//     issues a sync's starts together (the runner runs the hook before the
//     next start) and kills the container when the HookResult arrives, so
//     the kill comes after those starts.
//   - The Pulling event is recorded when the pull is asked for, and Pulled,
//     Failed, Created, Started, FailedPostStartHook and Unhealthy when the
//     observation arrives, so they come one Step after the kubelet's in
//     Step counts, in the same order.
//   - Image presence is what the runner reported (ImagePresent, ImagePulled);
//     an image the machine has not heard of is absent, so IfNotPresent
//     pulls it. Present images are assumed accessible with the pod's
//     credentials (KubeletEnsureSecretPulledImages). Image references are
//     not parsed beyond the default pull policy: InvalidImageName and
//     ImageInspectError are not produced.
//   - The final phase guard is also applied against the status the machine
//     produced last, not only the API pod's, so a terminal phase never
//     changes even before the runner writes it to the API.
//   - Not modelled: a network mode change of the sandbox (hostNetwork is
//     fixed for a pod), network readiness of the node (NetworkNotReady),
//     volumes (FailedMount), dynamic resources, in-place resize, kill
//     requests with a grace override and ExceededGracePeriod (evictions,
//     preemption), kubelet restarts, FailedKillPod and FailedSync. Their
//     reasons and messages are in the vocabulary for agents that produce
//     them.
//   - The pod worker's wait for a fresh cache (spec/podlifecycle.md rule
//     4.5): the kubelet starts a sync only once its relist has run since
//     the previous sync ended, so a sync a probe result or an API update
//     asks for right after another follows up to 1 s later. The machine has
//     no relist clock and runs such a sync at once (docs/faithfulness.md,
//     generated pod gen-83). One consequence is modelled: an update held
//     while a sync waited on a pull, a start or a hook is followed, when the
//     relist after it finds a container that sync started, by one more sync
//     a relist (1 s) later (generated pod gen-161).
//   - The machine keeps the three newest instances of each container; the
//     kubelet's garbage collector keeps more, which changes nothing the
//     machine decides.
//   - Ephemeral container statuses are reported once the container has an
//     instance or a start error.
//   - The machine writes no pod cgroup: a running pod's status.resources
//     read back the values the kubelet would have written, as a cgroup v2
//     host gives them (Options.Cgroups, spec/podphase.md sections 4.3 and
//     4.5); CgroupsNone is a node without pod cgroups. Whether the runtime
//     handler supports recursive read-only mounts is
//     Options.RecursiveReadOnlyMounts (off: a runtime that lists no
//     handlers).
//
// # Feature gates
//
// Options.Features carries ContainerRestartRules and
// RestartAllContainersOnContainerExits (both on),
// ChangeContainerStatusOnKubeletRestart (off); Options.CrashLoop carries
// KubeletCrashLoopBackOffMax (on) and ReduceDefaultCrashLoopBackOffDecay
// (off); Options.EnsureSecretPulledImages is KubeletEnsureSecretPulledImages
// (on). Gates that are locked on at v1.37.2 are not switches.
//
// # Other Kubernetes minors
//
// [DefaultOptionsFor] gives the defaults of Kubernetes 1.33 to 1.37 (a
// kubeversion.Version; the zero Version is 1.37): the gates above as that
// minor sets them (ContainerRestartRules, KubeletCrashLoopBackOffMax and
// KubeletEnsureSecretPulledImages on from 1.35, RestartAllContainers from
// 1.36, the started/ready reset on kubelet restart before 1.35), and
// Options.Version, which containerstate and podphase read for the rules no
// gate expresses (docs/versions.md). What differs in this package's own
// rules is covered only as far as docs/versions.md lists it: the Pulled
// message (row PL-V2) follows the gate; these follow Options.Version:
//
//   - the Created and Started messages (PL-V6);
//   - the init-container decision of computePodActions (PL-V7): 1.37 judges
//     initialization by a regular container of the current sandbox, in any
//     state, and reads the init containers' instances of the current
//     sandbox; 1.33 to 1.36 count a regular container whose newest
//     instance is created or running in any sandbox, and read each init
//     container's newest instance wherever it ran, so a container created
//     in a sandbox a node reboot lost makes them skip the init containers
//     of the new one. The status's Initialized and phase use the current
//     sandbox in every minor, as the kubelet's do;
//   - exec probes during a deletion (PL-V5): in 1.35 and 1.36 the kubelet's
//     probe workers run on the pod sync's context, which the deletion
//     cancels, so an exec probe no longer runs: each tick records Warning
//     Unhealthy "<Probe> probe errored and resulted in unknown state: rpc
//     error: code = Canceled desc = context canceled" (the gRPC status the
//     runtime client gives a cancelled call) and the result is discarded,
//     so readiness stays what it was; the machine then issues no RunProbe
//     for it. A run issued before the deletion counts when its result
//     arrives. HTTP, TCP and gRPC probes, and every probe in 1.33, 1.34
//     and 1.37, run until the container stops.
//
// The event reasons added by later minors (PL-V3) are still 1.37's for
// every Version.
//
// A Version that is none of kubeversion's constants (kubeversion.Version(99))
// is refused by [New] with an [*OptionError] that matches both
// [ErrInvalidOptions] and kubeversion.ErrUnsupportedVersion;
// [CreatedMessage] and [StartedMessage], which return no error, treat it as
// 1.37.
package podlifecycle
