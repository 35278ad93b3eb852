// Package podlifecycle is one pod on one node as a pure machine: the
// kubelet's computePodActions, its pod worker (syncing, terminating,
// terminated, finished), its prober's thresholds, graceful termination with
// preStop hooks and the sidecar order, activeDeadlineSeconds, image pull
// policy and pull back-off, and the kubelet's event vocabulary, the way
// Kubernetes v1.37.2 with default feature gates does them
// (spec/podlifecycle.md).
//
// Like raft's RawNode, a [Machine] reads no clock and does no I/O. One call
// of [Machine.Step] is one kubelet sync: it takes the time, the API pod and
// what the runtime observed since the previous call ([Observation]), and
// returns plain data ([Result]): the [Action]s a runtime should carry out,
// the status versions the sync produced, the [Event]s the kubelet would
// record, when the next sync is due, and whether the pod is finished.
//
// A Machine is not safe for concurrent use: it has one owner.
package podlifecycle
