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
//   - [Cluster]: the node and lease writers of a node agent (register the Node or write its
//     status, create or renew its Lease in kube-node-lease) and pod creation.
//
// Every adapter is a struct with one exported field, the client-go client it writes through,
// so a fake clientset (k8s.io/client-go/kubernetes/fake) serves in unit tests. The zero value
// of each has no client: its methods return an error wrapping [ErrNotInitialized] and send
// nothing. A nil object argument gets an error wrapping [ErrInvalidInput]. Errors of the
// server are client-go's (apimachinery *StatusErrors) and pass through unchanged, so
// apierrors.IsNotFound and friends work on them.
//
// # Credentials
//
// A node's own identity (user system:node:NAME in group system:nodes, under the Node
// authorizer and the NodeRestriction admission plugin) is enough for StatusTransport (for
// the pods bound to that node), both event sinks, LeaseLookup of its own Lease and the Node and
// Lease writes of Cluster. Cluster.CreatePod needs more: a node may only create mirror pods.
//
// # Concurrency
//
// The adapters hold no state besides their client; they are safe for concurrent use as
// client-go's clients are.
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
