// Package kube connects nodestate to a real API server through k8s.io/client-go v0.37.2. It is
// the supported home of the client-go adapters a node-agent author needs: the root module
// stays free of client-go, and this module (github.com/nodestate/nodestate/kube) brings it in.
//
// # What it offers
//
//   - [StatusTransport]: a statussync.Transport (GET of a pod, strategic merge PATCH of its
//     status subresource, DELETE with grace period 0 and a UID precondition).
//   - [CoreEventSink] and [SeriesEventSink]: the events.Sink for core/v1 Events and the
//     events.SeriesSink for events.k8s.io/v1 Events, writing as client-go's own sinks do.
//   - [EventRecorder]: an events.Recorder as client-go's record.EventRecorderLogger, for code
//     that takes client-go's recorder interface.
//   - [LeaseLookup]: the live Lease lookup (nodecondition.LeaseLookup) of the node-lifecycle
//     controller's lease circuit breaker.
//   - [Node]: a node that runs the pods bound to it, built from all of the above and the root
//     module's machines (see below); cmd/node runs one from the command line.
//   - [Fleet]: many nodes in one process on one client and one pod informer, each with its
//     own Lease, conditions, pods and pod CIDR; several processes run one large fleet as
//     shards (see below); cmd/node --nodes N runs one.
//
// # A node
//
// [NewNode] and [Node.Run] make a node that real controllers can use: it registers its Node
// (capacity, allocatable, its InternalIP, daemon endpoint, nodeInfo, pod CIDR), renews its
// Lease, reports its conditions from nodecondition's kubelet side, and watches the pods whose
// spec.nodeName is its name. Each new pod goes through the kubelet's admission in its order
// (the eviction manager's pressure rule, then pod count, CPU, memory, ephemeral storage and
// extended resources, then NoExecute taints), failing a refused one with the kubelet's reason
// ("OutOfcpu", ...) and "Pod was rejected: " message and event. An admitted pod runs on the
// node's podrunner.Runner: a podlifecycle machine on its [Runtime], synced when the kubelet
// would sync it (a status write of the node's own coming back from the watch costs no sync);
// its statuses go through a statussync cache and engine fed by the watch, its events through
// an events broadcaster with this module's sink; it gets an IP from the node's pod CIDR and
// the node's address as hostIP; and when it is deleted it is killed within its grace,
// TerminatePod'ed and deleted with grace 0 and its UID as precondition. A node started
// again adopts the pods bound to it: their containers start again with the restart counts
// the API server shows, as after a reboot that lost the runtime's state.
//
// The default runtime, [SimulatedRuntime], runs no process: per container, the annotation
// "sim.nodestate.io/<container>" holds how it behaves (simruntime's clauses: "run 30s
// exit 1; pull fail 2; readiness fail 0s-20s; ignore-sigterm 10s"); without one a container
// runs until it is killed and its probes pass. With [Options].Listen the node serves over
// HTTPS what the API server and a scraper ask of a kubelet: kubectl logs of the simulated
// containers, /healthz, and a Prometheus /metrics with the kubelet's series
// (kubelet_running_pods, kubelet_running_containers, kubelet_started_pods_total,
// kubelet_started_containers_total, kubelet_pod_start_duration_seconds,
// kubelet_pod_status_sync_duration_seconds, kubelet_node_name) and nodestate's own
// (nodestate_status_requests_total, nodestate_events_total, nodestate_backoff_events_total,
// nodestate_pod_admissions_total).
//
// A pod whose volumes are not ready waits for them as on a kubelet, before its sandbox is
// created: Pending, its containers waiting in ContainerCreating, with the kubelet's FailedMount
// events. Only the volumes a container mounts are waited for. A ConfigMap or Secret volume
// whose object is missing (and not optional) fails its set-up ("MountVolume.SetUp failed for
// volume ...: configmap \"x\" not found"), tried again after 500 ms doubling up to 2m2s, and
// each sync's wait ends after 2m3s with "Unable to attach or mount volumes: ..."; a claim
// (persistentVolumeClaim or ephemeral) that is missing, unbound or being deleted ends the wait
// at once with the kubelet's "error processing PVC" message, every 10 s. Every other volume
// source (emptyDir, hostPath, projected, downwardAPI, CSI, ...) is taken as set up: a simulated
// node has nothing to attach. A pod whose RuntimeClass is gone by the time of its sandbox
// (the API server's RuntimeClass admission refuses a pod naming one that does not exist) gets
// FailedCreatePodSandBox with the kubelet's "runtimeclasses.node.k8s.io ... not found" and stays
// Pending; any handler of an existing RuntimeClass is accepted. A pod being deleted is not
// waited for.
//
// Not modelled: projected volume sources are not looked up (the kubelet also waits for the
// ConfigMaps and Secrets they name), the volume attach limit, host ports and node affinity at
// admission (the scheduler checks them), in-place resize, and static pods.
//
// Every adapter is a struct with one exported field, the client-go client it writes through,
// so a fake clientset (k8s.io/client-go/kubernetes/fake) serves in unit tests. The zero value
// of each has no client: its methods return an error wrapping [ErrNotInitialized] and send
// nothing. A nil object argument gets an error wrapping [ErrInvalidInput]. Errors of the
// server are client-go's (apimachinery *StatusErrors) and pass through unchanged, so
// apierrors.IsNotFound and friends work on them.
//
// # A fleet
//
// [NewFleet] and [Fleet.Run] run the nodes NamePrefix+First to NamePrefix+(First+Nodes-1) in one
// process. They share the client (its connections and rate limiter) and one pod informer, a
// single watch of the pods whose spec.nodeName is set, each pod handed to the node it is bound
// to. Each node keeps everything else for itself, as a single [Node] does (a Node runs as a
// fleet of one that watches only its own pods): its Node object, Lease, conditions, its pod
// CIDR (the i-th subnet of FleetOptions.PodCIDR for node index i), admission, machines, status
// engine and event writer, on goroutines of its own, so one node's slow pod never delays
// another node.
//
// Sharding: every node carries the label [FleetShardLabel] with FleetOptions.Shard, and a
// fleet does not adopt a Node of its names labelled with another shard. Several processes with
// disjoint index ranges (First, Nodes) and their own shards run one fleet against one cluster,
// with no coordination but the API server's: each keeps its own nodes' Leases alive, and the
// node-lifecycle controller treats a stopped process's nodes as it treats stopped kubelets.
// docs/fleet.md says how to run 10,000 nodes across machines.
//
// # Credentials
//
// A node's own identity (user system:node:NAME in group system:nodes, under the Node
// authorizer and the NodeRestriction admission plugin) is enough for StatusTransport (for
// the pods bound to that node), both event sinks, LeaseLookup of its own Lease, and a Node's
// registration, status and Lease writes.
// A [Fleet] needs more, since a node's identity sees only its own Node, Lease and pods:
// its client must be bound to the ClusterRole [FleetClusterRole] returns (nodes get and
// create, nodes/status update and patch, pods get, list, watch and delete, pods/status patch,
// leases get, create and update, events create and patch); cmd/node --print-rbac prints it.
//
// # Concurrency
//
// The adapters hold no state besides their client; they are safe for concurrent use as
// client-go's clients are.
//
// A Node is made of parts, each on the goroutine it needs: the reporter (its registration, its
// status and its Lease) on the report loop; admission, the pods' runner (their machines, IPs
// and runtimes, with the volume gate and the log store wrapped around the runtime) on the
// pods loop; the status engine's writes and the event broadcaster's on goroutines of their own. A slow volume
// look-up or API write of a pod never delays a Lease renewal. Its methods are safe for
// concurrent use.
//
// # Tests against a real control plane
//
// The integration tests (package integration) start etcd, kube-apiserver v1.37.2 and, where a
// test needs them, kube-controller-manager and kube-scheduler on 127.0.0.1, and run the real
// kubectl. hack/build-control-plane.sh builds these binaries from Go modules into a cache
// outside the clone, keyed by version, and prints the directory; set NODESTATE_CONTROL_PLANE
// to it. The tests fail when a binary cannot be built, and skip under -short.
//
// The package's unit tests also hold a differential test and side-by-side benchmarks of
// nodestate's event correlator against client-go's EventCorrelator (events-benchmarks.md).
package kube
