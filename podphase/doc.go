// Package podphase computes a Kubernetes pod's phase, its conditions and the
// columns `kubectl get pods` shows, the way Kubernetes 1.37 does, and
// explains each phase it computes.
//
// It models three pieces of upstream code nobody can import: the kubelet's
// getPhase and the post-processing of generateAPIPodStatus, the kubelet's
// pod condition generators (with the status manager's lastTransitionTime
// rule), and kubectl's printPod. The reference is Kubernetes v1.37.2 with
// its default feature gates, as written down rule by rule in
// spec/podphase.md; the tests name the rule or case of that text each row
// checks. The features followed are sidecar containers (KEP-753, GA),
// container restart rules (KEP-5307, ContainerRestartRules, beta and on),
// in-place restart of all containers (KEP-5532,
// RestartAllContainersOnContainerExits, beta and on), the
// PodReadyToStartContainers condition (KEP-3085, GA) and condition
// observedGeneration (KEP-5067, GA).
//
// # What it offers
//
//   - [Phase]: the kubelet's phase for a pod in normal sync. It returns
//     Pending, Running, Succeeded or Failed, never Unknown, keeps a
//     recorded terminal phase, and allocates nothing.
//   - [Options.Explain]: the phase given what only a kubelet knows (the pod
//     worker terminated the pod, a regular container is active in the
//     current sandbox, static pod), with the [Rule] that decided it, a
//     one-line reason and the containers that decided it.
//   - [Options.Conditions]: PodReadyToStartContainers, Initialized, Ready
//     (with readiness gates), ContainersReady, PodScheduled and
//     AllContainersRestarting, with the kubelet's reasons, messages,
//     observedGeneration and lastTransitionTime; conditions the kubelet
//     does not own are preserved.
//   - [Settle] and [Options.GenerateStatus] (or [Options.GenerateStatusTo],
//     into reused storage): the whole-status step, with
//     terminal stickiness, the reason and message kept only while the phase
//     is unchanged, pod sync handler evictions and the final guard, and the
//     pod-level resources and allocatedResources (KEP-5419,
//     InPlacePodLevelResourcesVerticalScaling, beta and on from 1.36): the
//     allocated ones, or for a running pod what its cgroup reads back
//     ([PodCgroup]).
//   - [PodRequests] and [PodLimits]: component-helpers' aggregation of a
//     pod's requests and limits (init containers, sidecars, pod-level
//     resources, overhead), as the kubelet writes them; [QOSClass], the
//     pod's QoS class; [PodCgroupOf], what the kubelet writes into the
//     pod's cgroup, and [PodCgroup.ReadBackV2], what a cgroup v2 host gives
//     back.
//   - [DisplayStatus] and [Columns]: kubectl's STATUS, READY and RESTARTS
//     columns (and the -o wide ones).
//   - [LegalTransition], [CheckTransition] and [Guard]: which phase changes
//     the kubelet can make; [TerminatedPhase]: the phase the status manager
//     forces when the pod worker has finished a pod.
//
// Package podphasetest has rapid generators of consistent pods and the
// invariant checks used by this package's properties.
//
// The fixed-signature calls ([Phase], [DisplayStatus], [Columns], [Explain],
// [Conditions], [GenerateStatus]) use the Kubernetes 1.37 defaults. Each has
// a twin, a method on [Options] ([Options.Phase], [Options.DisplayStatus],
// [Options.Columns], ...), which holds the feature switches and the
// Kubernetes minor ([DefaultOptions] gives the 1.37 defaults; the zero
// Options has every gate off and the Version-keyed rules of 1.37). kubectl
// reads no gate, so the display twins depend on the Version only.
// [Phase] and [DisplayStatus] return no error: a nil pod gives Pending and "".
// The richer calls return errors that match a sentinel with errors.Is:
// [ErrInvalidInput] for a nil pod ([ErrNilPod]) or status, an
// [*UnknownContainerError], a [*DuplicateStatusError] or an [*OptionError];
// and
// [ErrIllegalTransition] for a [*TransitionError]. No exported function or
// method panics on nil or zero arguments.
//
// # Other Kubernetes minors
//
// [DefaultOptionsFor] gives the defaults of Kubernetes 1.33 to 1.37 (a
// kubeversion.Version, whose zero value is 1.37). What changes with the
// minor (docs/versions.md, rows PP-V1 to PP-V8):
//
//   - the phase, through the gates: before 1.35 ContainerRestartRules is
//     off, so a container's own restartPolicy and rules do not make it
//     final; before 1.36 RestartAllContainersOnContainerExits is off, so no
//     RestartingAllContainers, no kept Initialized and no
//     AllContainersRestarting condition;
//   - observedGeneration: in 1.33 (PodObservedGenerationTracking alpha and
//     off) a condition carries the generation only when its old condition
//     already had one;
//   - PodReadyToStartContainers: before 1.37 a False one has no reason and
//     no message;
//   - kubectl's STATUS: before 1.35, Completed (or Running, NotReady) stays
//     when the first container completed and another failed; from 1.35 the
//     failed container's reason shows;
//   - status.resources and status.allocatedResources: written from 1.36
//     (the gate is alpha and off in 1.35, absent before; rows PP-V6 to
//     PP-V8). Turned on in 1.35 a running pod's memory request is the sum
//     even when zero and the old status's one is kept over it; before 1.37
//     a CPU request read back through a cgroup v2 weight shows as read.
//
// A Version that is none of kubeversion's constants (kubeversion.Version(99))
// is refused by the methods with an error result ([Options.Explain],
// [Options.GenerateStatus], [Options.Conditions], [Options.Columns]) with an
// [*OptionError] that matches both [ErrInvalidInput] and
// kubeversion.ErrUnsupportedVersion. The methods without one
// ([Options.Phase], [Options.DisplayStatus], [Options.KubeletOwned],
// [Options.OwnedConditionTypes]) treat it as the zero Version, 1.37, as they
// must answer something and may not panic.
//
// # Phase transitions
//
// The kubelet never leaves a terminal phase, and Pending and Running move
// both ways (kubernetes#116429). [LegalTransition] allows exactly these
// moves; a test regenerates this diagram from it:
//
//	stateDiagram-v2
//	    [*] --> Pending
//	    [*] --> Running
//	    [*] --> Succeeded
//	    [*] --> Failed
//	    Pending --> Running
//	    Pending --> Succeeded
//	    Pending --> Failed
//	    Running --> Pending
//	    Running --> Succeeded
//	    Running --> Failed
//	    Unknown --> Pending
//	    Unknown --> Running
//	    Unknown --> Succeeded
//	    Unknown --> Failed
//
// # Concurrency
//
// Everything here is a pure function of its arguments: no goroutines, no
// clock (time is an argument), no package-level mutable state. The calls
// never modify the pods and statuses they are given and are safe for
// simultaneous use by multiple goroutines.
//
// # Cost
//
// [Phase] and [DisplayStatus] on a running pod allocate nothing, and their
// cost grows linearly with the number of containers when the statuses are
// in spec order, nearly so when they are sorted by name as the kubelet
// writes them (the kubelet's own getPhase searches the status list once per
// container). [Options.Conditions] allocates its result slice and, when
// containers are not ready, a message whose text differs from the old
// condition's. [Options.GenerateStatusTo] writes a status into storage the
// caller reuses and allocates nothing once that storage has room. The
// benchmarks in bench_test.go measure them.
//
// # Usage
//
//	phase := podphase.Phase(pod)           // what the kubelet would write
//	status := podphase.DisplayStatus(pod)  // what kubectl shows
//
//	e, err := podphase.DefaultOptions().Explain(podphase.Input{Pod: pod, Terminal: true})
//	if err != nil { ... }
//	fmt.Println(e) // Failed (Terminated): the pod was terminated and container "app" failed
//
// # Where nodestate differs
//
// The defaults reproduce the kubelet and kubectl. These points differ, each
// only for input the kubelet cannot know or the API server rejects:
//
//   - [Phase] derives podHasInitialized from the statuses (a regular
//     container is Running or Terminated or has a last termination); the
//     kubelet asks its runtime whether a regular container is active in the
//     current sandbox. Pass [Input.Initialized] to use the runtime's answer.
//   - Statuses are looked up by name in the list of their kind
//     (initContainerStatuses for init containers, containerStatuses for
//     regular ones), trying the container's own index, then the entry after
//     the previous hit, then a binary search when the list is sorted by name
//     (as the kubelet writes it), which keeps the lookup linear or nearly
//     so; the kubelet scans one list of both kinds for every container
//     (quadratic). The results differ only when a name is repeated or a
//     status sits in the other list.
//   - [Options.Conditions] treats the container statuses as missing when
//     both lists are nil.
//   - The runtime facts behind PodReadyToStartContainers and the end of an
//     in-place restart are inputs ([Sandbox], [ConditionsInput].RuntimeCleanedUp);
//     a container "exited with a RestartAllContainers rule" is read from
//     the Terminated state of its new or old status.
//   - [Options.Explain] and [Options.GenerateStatus] refuse statuses naming
//     no container of the spec or repeating a name, which the API server
//     rejects; [Phase] ignores such statuses.
//   - [DisplayStatus] finds a status's sidecar spec by name, the first of a
//     repeated name; kubectl's map keeps the last.
//   - [Options.GenerateStatus] writes empty requests, limits and
//     allocatedResources lists as none, as the API server stores them; the
//     kubelet builds empty lists. The pod cgroup is an input
//     ([StatusInput].PodCgroup; [PodCgroupOf] and [PodCgroup.ReadBackV2]
//     give what a cgroup v2 host reads back); the allocated resources are
//     the pod's spec (in-place resize is not modelled). 1.35's kubelet,
//     with the alpha gate on, also writes the computed lists into its own
//     copy of the pod's spec.resources; nodestate changes no pod.
//   - [QOSClass] computes an empty qosClass with 1.37's rule in every
//     profile (the API server sets the class when it creates a pod, so the
//     kubelet reads the API's).
package podphase
