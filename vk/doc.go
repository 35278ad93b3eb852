// Package vk is a virtual-kubelet provider built from any podrunner.Runtime:
// a runtime of one's own (a cloud container service, an HPC scheduler, a
// remote agent, or nodestate's simulated runtime) becomes a node whose pods
// show in the API what a kubelet's show, with the kubelet's phases,
// conditions, container states, restart back-off, probes, graceful
// termination and events, run by virtual-kubelet v1.14.1's own pod and node
// controllers. It follows Kubernetes 1.37 (the kubelet v1.37.2), as the rest
// of nodestate does.
//
// # Use
//
// A Provider implements virtual-kubelet's node.PodLifecycleHandler,
// node.PodNotifier and node.NodeProvider. It is made from Options, a
// RuntimeFactory (one Runtime per pod) and a client-go clientset, and hands
// virtual-kubelet's controllers what they need:
//
//	opts := vk.DefaultOptions()
//	opts.Name = "vk-1" // the client authenticates as system:node:vk-1
//	p, err := vk.NewProvider(opts, newRuntime, client)
//	pods, err := node.NewPodController(p.PodControllerConfig())
//	nodes, err := node.NewNodeController(p, p.Node(), client.CoreV1().Nodes(), p.NodeControllerOptions(client)...)
//	go pods.Run(ctx, 2)
//	go nodes.Run(ctx)
//	err = p.Run(ctx) // the watches, the pod runner, the status and node loops, the events
//
// SimulatedRuntime is the factory of nodestate's simulated runtime, whose
// containers behave as their pods' annotations "sim.nodestate.io/<container>"
// say; cmd/vknode runs a node of it against any cluster. The Example shows
// a runtime of one's own.
//
// # Pods
//
// Behind the pod calls is one podrunner.Runner: a podlifecycle machine per
// pod on the pod's Runtime, with the kubelet's sync triggers (see the
// podrunner package doc), pod IPs from Options.Runner.PodCIDR and the node's
// address as host IP. CreatePod adds a pod, UpdatePod hands the runner a
// newer object (a change of spec, labels, annotations or deletion syncs it,
// a status-only change does not), DeletePod stops it, GetPod, GetPodStatus
// and GetPods answer from the runner and its status cache.
//
// Statuses go back through NotifyPods: each time a pod's version in the
// statussync.Cache goes up (Cache.Changed, Cache.Version), the provider
// hands virtual-kubelet the API server's copy of the pod with the node's
// status merged over it as the kubelet's status manager merges it
// (statussync's Merge: conditions others own kept, a terminal phase held
// back while containers could still run); virtual-kubelet writes it. Every
// Options.FullSyncPeriod (10 s) a pod whose API copy drifted from the
// node's status in what the kubelet owns is handed again.
//
// A pod ends as a kubelet's does. A deletion with grace reaches the runner
// through DeletePod: preStop hooks, SIGTERM, SIGKILL at the end of the
// grace, then TerminatePod; once the API server shows the final status
// (terminal phase) of a pod being deleted, the provider deletes the object
// with grace 0 and the pod's UID as precondition, as the kubelet's status
// manager does, without waiting for the end of the grace period. A pod the
// API server no longer has (a forced deletion) is killed with the grace of
// its last object and forgotten. A pod whose runtime the factory refuses
// is failed as the kubelet fails a pod it rejects (ReasonRuntimeRejected,
// "Pod was rejected: ..."), as is one that finds the pod CIDR full
// (ReasonPodCIDRExhausted).
//
// The kubelet's events (Scheduled aside: the scheduler's) go through an
// events.Broadcaster to the API server through kube.CoreEventSink, with
// source component "kubelet" and the node's name as host, the reasons,
// messages and field paths of podlifecycle, aggregated, deduplicated and
// spam-filtered as client-go's recorder does.
//
// # The node
//
// Node is the Node to register: the kubelet's labels, capacity and
// allocatable, the InternalIP, the kubelet endpoint, nodeInfo and
// spec.podCIDR. Every Options.Kubelet.StatusUpdateFrequency (10 s) the
// provider computes the node's conditions with nodecondition's kubelet side
// from the Node the API server has (its own watch of it) and hands the Node
// to virtual-kubelet through NotifyNodeStatus when the kubelet would write
// it: its first report, a change, or every StatusReportFrequency (5 min,
// with the kubelet's one-time jitter), with the kubelet's NodeReady-style
// events on a change. NodeControllerOptions makes virtual-kubelet's lease
// controller renew the Lease with the kubelet's 40 s duration every 10 s,
// and sets the node controller's own status interval to twice the report
// frequency so that the provider's reports decide when the status is
// written.
//
// # Bad input
//
// A call about a pod the provider does not run returns a *PodError
// wrapping ErrUnknownPod, and one with a nil pod or a pod without a UID a
// *PodError wrapping ErrInvalidInput; virtual-kubelet's errdefs classify
// both (NotFound, InvalidInput), so its pod controller takes a delete of an
// unknown pod as done. A runtime whose Do returns an error is handed the
// same actions again (podrunner's retry, counted); a runtime call that
// panics is an error too, counted in Stats.RuntimePanics; a Do that does not
// return within Options.RuntimeTimeout (2 min, the kubelet's
// --runtime-request-timeout) is a refused call, and the runtime is left
// alone until it returns (Stats.RuntimeTimeouts). Nothing is lost: a status
// cached before virtual-kubelet registered its callback is sent then, a
// node report due before it is sent once it has, and a failed deletion is
// tried again at the next full sync.
//
// # Differences from a kubelet
//
// virtual-kubelet's controllers differ from a kubelet in ways the provider
// works around:
//
//   - The pod controller hands the provider no status-only update, so a
//     readiness gate another controller sets would never make the pod
//     Ready: the provider watches the node's pods itself (the same informer
//     the pod controller is given) and hands those updates to the runner.
//   - The pod controller writes the whole status it is handed
//     (UpdateStatus), which would drop the conditions others set: the
//     provider merges its status over the API server's copy first.
//   - The pod controller deletes a pod being deleted only when its grace
//     period has passed, running or not: the provider deletes it as soon as
//     its final status is written, as the kubelet does; the controller's
//     deletion stays as a fallback.
//   - The pod controller drops a notification equal to the one before and
//     gives a status write up after 20 tries: the provider's full sync hands
//     a drifted pod again, marked so that it is not taken as equal.
//   - A provider error from CreatePod makes the pod controller write a
//     status of its own (reason ProviderFailed) and try again: the provider
//     fails a pod it cannot run as the kubelet's admission does instead.
//   - The pod controller resolves the downward API and the ConfigMap and
//     Secret references of environment variables before CreatePod, and
//     fails the sync when one is missing, where the kubelet shows
//     CreateContainerConfigError; it also wants informers of every
//     ConfigMap, Secret and Service, which a node's identity may not list.
//     PodControllerConfig skips the resolution and never starts those
//     informers.
//   - The pod controller's queues are limited to 10 items a second over all
//     pods; a kubelet is limited only by its client. PodControllerConfig
//     keeps the per-pod back-off and drops the overall limit.
//   - The pod controller finds the provider's pods by namespace and name; a
//     StatefulSet's pod made again under its name would be taken for the
//     old one. The provider compares the UID with the API server's copy.
//   - The node controller writes the node status every minute on its own
//     timer, heartbeat or not; NodeControllerOptions hands the decision to
//     the provider's report rule. The node controller does not say when a
//     write failed: the provider reads the Node back before each
//     computation, as the kubelet does, so a report that did not arrive is
//     a change to send again.
//
// and in ways it cannot:
//
//   - A pod being deleted whose regular containers the API server shows
//     waiting or terminated (ContainerCreating, an init container or a
//     sidecar still running before them, a crash-loop back-off) is deleted
//     by the pod controller at once with grace 0; the provider still stops
//     it gracefully, but the object is gone from the API server meanwhile,
//     where a kubelet shows it Terminating until its init container stops.
//   - Once the API server shows a pod in a terminal phase, the pod
//     controller writes no more of its status.
//   - The pod controller records events of its own on each pod
//     (ProviderCreateSuccess, ProviderUpdateSuccess, ProviderDeleteSuccess
//     and their failures), with source "<node>/pod-controller".
//   - The node controller keeps its three-way patch's state in the Node's
//     annotations virtual-kubelet.io/last-applied-node-status and
//     virtual-kubelet.io/last-applied-object-meta; it registers the Node's
//     spec only when it creates it (a Node that exists keeps its pod CIDR,
//     which the provider does not adopt).
//   - The lease controller renews the Lease without the kubelet's 4 %
//     jitter, waits twice the kubelet's back-off after a failed read or
//     create, and stops renewing (as the node controller stops writing the
//     status) while Ping fails; this provider's Ping fails only once its
//     context ends.
//   - After a restart the pod controller hands every pod bound to the node
//     that is not terminal to CreatePod again, and the provider starts its
//     containers anew, as after a reboot that lost the runtime's state.
//
// The provider admits every pod it is handed (the scheduler checks
// resources); a kubelet's admission also refuses a pod that does not fit.
//
// # Concurrency
//
// A Provider is safe for simultaneous use: virtual-kubelet calls it from
// its workers, informers and loops. Its pod calls queue work for the
// runner's goroutine; a pod's Runtime is called from that goroutine only
// (or from one goroutine at a time, with a RuntimeTimeout). NotifyPods
// callbacks come from one goroutine, NotifyNodeStatus callbacks from
// another. NewProvider starts nothing; Run starts every goroutine and
// returns once they have all stopped.
package vk
