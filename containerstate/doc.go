// Package containerstate models one Kubernetes container the way the kubelet
// of Kubernetes 1.37 reports it: the Waiting, Running and Terminated states
// of a v1.ContainerStatus with their reasons and messages, restartCount,
// lastState, started and ready; the restart decision; crash-loop and
// image-pull back-off; and the checks the kubelet and the API server make
// before a terminated container may look alive again.
//
// # The model
//
// The kubelet does not keep a state machine per container. At every sync it
// converts what the runtime lists (the newest and the previous instance of
// each container, in the CRI states created, running, exited and unknown),
// the last error of starting the container and the previous status into a
// new status. [Options.Convert] is that conversion, rule by rule
// ([Options.ConvertTo] writes it into a status the caller reuses), and
// [Machine] is built on it: each event it accepts ([Event], [Machine.Step])
// updates the runtime view, and the status is converted from it with the
// previous status as the old one. So a Machine and a snapshot conversion
// never disagree.
//
// A Machine accepts every sequence a relisting runtime can report, including
// skipped states (an instance first seen exited) and repeated observations.
// It refuses, with a [*StepError] naming the event's field at fault and
// without changing, only the impossible: an event older than one it
// accepted ([ErrTimeWentBackwards]), an event about an instance a newer one
// replaced, an exited instance reported again differently under the same ID,
// a new instance after an exit that allows no restart (restartPolicy Never,
// OnFailure after exit 0, an ephemeral container: the kubelet never starts
// one), an undefined event kind, or a failure reason that belongs to another
// kind of failure. Every refusal but the first also matches [ErrInvalidInput].
//
// A Machine changes on its own in one case: the end of the UNKNOWN grace
// below. [Machine.NextWake] says when; [Machine.Advance] (a [Tick] event)
// moves its time there with nothing observed, as the kubelet's next sync
// would.
//
// The states move as this table ([Transitions]) says; the diagram is
// generated from it and a test keeps it true:
//
//	```mermaid
//	stateDiagram-v2
//	    [*] --> Waiting: NewMachine
//	    Waiting --> Running: Started
//	    Waiting --> Terminated: Exited, Removed, PodChanged, PullStarted, PullSucceeded, LivenessProbe, Tick, PullFailed, PullBackOff, CreateFailed, StartFailed, BackOff
//	    Running --> Terminated: Exited, Unknown, Removed, PullStarted, PullSucceeded, StartupProbe, ReadinessProbe, LivenessProbe, PodChanged, Tick, PullFailed, PullBackOff, CreateFailed, StartFailed, BackOff
//	    Running --> Waiting: Created, Exited, Unknown, Removed, PodChanged, PullFailed, PullBackOff, CreateFailed, StartFailed, BackOff
//	    Terminated --> Waiting: Created, Unknown, Removed, PodChanged, PullStarted, PullSucceeded, StartupProbe, ReadinessProbe, LivenessProbe, Tick, PullFailed, PullBackOff, CreateFailed, StartFailed, BackOff
//	    Terminated --> Running: Started, PodChanged
//	```
//
// # Faithfulness
//
// The reference is the kubelet of Kubernetes v1.37.2 with its default
// feature gates ([DefaultFeatures]): container restart rules (KEP-5307) and
// RestartAllContainers (KEP-5532) on, ChangeContainerStatusOnKubeletRestart
// off, the per-node crash-loop maximum (KEP-5593) on and the reduced decay
// (KEP-4603) off. Each gate that changes a result is a field of [Features]
// or [CrashLoopOptions]; there is no global state.
//
// # Other Kubernetes minors
//
// [DefaultOptionsFor], [DefaultFeaturesFor] and [DefaultCrashLoopOptionsFor]
// give the defaults of Kubernetes 1.33 to 1.37 (a kubeversion.Version; its
// zero value is 1.37). Between those minors this package's rules change
// with the feature-gate defaults, and where no gate expresses a change,
// with [Options].Version (docs/versions.md, rows CS-V1 to CS-V9):
//
//   - before 1.35, ContainerRestartRules is off: a container's own
//     restartPolicy and restartPolicyRules decide neither restarts nor
//     whether a Terminated status may leave Terminated; the pod's policy
//     does (sidecars always restart);
//   - before 1.36, RestartAllContainersOnContainerExits is off: no
//     in-place restart, no RestartingAllContainers reason. Turned on by
//     hand in 1.35, where it is alpha, it carries restartCount over from
//     the previous status but not lastState: a new instance's lastState is
//     only what the runtime lists, not the previous status's termination
//     (1.36 carries it). [Options].Version keys this one too (row CS-V7);
//   - before 1.35, a kubelet restart resets started and ready (the
//     behaviour ChangeContainerStatusOnKubeletRestart on keeps);
//   - before 1.35, KubeletCrashLoopBackOffMax is off: a configured
//     maxContainerRestartPeriod is ignored. The default back-off, 10s
//     doubling to 300s, and the image-pull back-off are the same in every
//     supported minor;
//   - before 1.36, a regular init container the runtime no longer lists
//     stays Waiting after a regular container was created; 1.36 and later
//     infer it Completed. This one is not a gate: [Options].Version keys it;
//   - before 1.35, the memory request in a running container's resources
//     is the allocated one (the kubelet's own record) and a runtime's
//     report is taken as it is; from 1.35 a reported memory request counts
//     and the kubelet completes a report from its record, so a runtime that
//     reports nothing shows the record's four values, zero ones included
//     (rows CS-V8, CS-V9). [Options].Version keys it;
//   - the API server's status transition check
//     ([Options.ValidateStatusTransition], row CS-V5) reads the gates by
//     minor: 1.33 looks at the pod's restartPolicy only, 1.34 asks
//     ContainerShouldRestart for regular containers only and only with
//     ContainerRestartRules on, and from 1.35 also when the old spec
//     already uses a container policy or rule. [Features.ValidateStatusTransition]
//     is the 1.37 rule.
//
// A Version that is none of kubeversion's constants (kubeversion.Version(99))
// is refused by [NewMachine] and [Options.Convert] with an [*OptionError]
// that matches both ErrInvalidOptions and kubeversion.ErrUnsupportedVersion;
// the DefaultXFor functions give it 1.37's defaults (DefaultOptionsFor keeps
// the Version, so that the constructor refuses it).
//
// nodestate differs from the kubelet in one place, on purpose: when the
// runtime reports UNKNOWN for a container last seen Running, the kubelet
// reports it Terminated with reason ContainerStatusUnknown and exit code 137
// at once. [DefaultOptions] keep the Running state for [DefaultUnknownGrace]
// (two minutes, timed from the first UNKNOWN report, with ready false), so
// that a runtime that is briefly unreachable does not look like a crash.
// Options.UnknownGrace 0 is the kubelet exactly. Where a Machine sees a new
// instance while the previous one was still alive in its view (a relist lost
// the exit), it records the lost instance as exited with ContainerStatusUnknown
// and 137, the kubelet's words for a container it could not observe.
//
// Where the kubelet computes a status that moves a Terminated container
// back to Waiting or Running although its exit allows no restart (by the API
// server's rule), its own status manager or the API server refuses the
// update and the old status stays. nodestate does not produce such a
// status: it keeps the Terminated one. This happens for a start error cached
// for a container the runtime no longer lists, for UNKNOWN reports after a
// container was reported ContainerStatusUnknown, and for ephemeral
// containers, which the kubelet never restarts.
//
// Reading the termination-message file and the logs is the caller's:
// [TerminationMessage] takes their bytes and applies the kubelet's limits.
//
// # Fields from the spec and the runtime
//
// A status also carries what the kubelet writes beside the state (spec
// sections 4.1, 4.3 and 4.6): volumeMounts built from the spec for an entry
// the runtime does not have yet (kept from the old status once it does,
// with recursiveReadOnly following the pod's PodFacts.RecursiveReadOnlyMounts),
// the runtime's image ref as imageID ([Instance].ImageID), and with
// InPlacePodVerticalScaling allocatedResources (the spec's requests) and
// resources: the allocated ones for an instance that is not running, the
// runtime's actuated values ([Instance].Resources, [ActuatedResources]) for
// a running one, completed from the kubelet's record of what it applied and
// the previous status as the kubelet does. With SupplementalGroupsPolicy the
// runtime's user ([Instance].User) and with ContainerStopSignals its stop
// signal ([Instance].StopSignal). nodestate does not model in-place resize:
// the allocated resources, and the kubelet's record of the applied ones,
// are the container's spec.
//
// # Concurrency
//
// Every function is pure: time is an argument or the time of an event, and
// nothing starts a goroutine or reads a clock. A [Machine] and a [Backoff]
// are values owned by one goroutine at a time; the package functions and
// [Options], [Features] values are safe for simultaneous use.
//
// # Zero values and errors
//
// [Options] and [Features] are ready to use as zero values (every gate off,
// no UNKNOWN grace, the Version-keyed rules of 1.37). A zero or nil [Machine] answers its getters with zero
// values and refuses Step with [ErrNotInitialized]: make one with
// [NewMachine]. A zero or nil [Backoff] is inert: it records nothing and never
// blocks. No exported function or method panics on nil or zero arguments.
// Every error wraps one of the sentinels of errors.go ([ErrInvalidOptions],
// [ErrInvalidInput], [ErrTimeWentBackwards], [ErrNotInitialized],
// [ErrTransition], or a more specific one that matches ErrInvalidInput).
//
// # Usage
//
//	m, err := containerstate.NewMachine(containerstate.DefaultOptions(), containerstate.Pod{Spec: &pod.Spec, Name: pod.Name,
//		Namespace: pod.Namespace, UID: pod.UID}, "app")
//	...
//	err = m.Step(containerstate.Event{Kind: containerstate.Started, At: now, ContainerID: "containerd://abc"})
//	status := m.Status() // the v1.ContainerStatus to report
//	if wake, ok := m.NextWake(); ok {
//		// at wake, with no event: err = m.Advance(wake)
//	}
//
// Before starting a container again, ask [Backoff.CrashLoop] with
// [CrashLoopKey]; when it is blocked, step the machine with [BackOffEvent].
// The package containerstatetest has rapid generators of specs and runtime
// event sequences and an invariant checker for property tests.
package containerstate
