package kube

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
)

// Runtime carries out one pod's podlifecycle actions and reports what came of
// them: podrunner's Runtime, the one interface every nodestate node runs its
// pods on. A Node owns one Runtime per pod and calls it from one goroutine
// only.
type Runtime = podrunner.Runtime

// RuntimeFactory returns the Runtime of a pod the node admitted. An error
// fails the pod as the kubelet fails one it cannot run: phase Failed with
// reason [ReasonRuntimeRejected] and the error as message.
type RuntimeFactory func(pod *corev1.Pod) (Runtime, error)

// BehaviourAnnotationPrefix starts the annotations that tell the simulated
// runtime how a container behaves: simruntime.AnnotationPrefix,
// "sim.nodestate.io/<container name>" holding the clauses of
// simruntime.ParseBehaviour for that container, for example
//
//	sim.nodestate.io/app: "run 30s exit 1; pull fail 2; readiness fail 0s-20s"
//
// A container without one runs until it is killed, its image pulls at once
// and its probes pass; a regular init container runs a moment and exits 0.
const BehaviourAnnotationPrefix = simruntime.AnnotationPrefix

// ReasonRuntimeRejected is the pod status reason and event reason when the
// RuntimeFactory refuses a pod (for the simulated runtime: a behaviour
// annotation that does not parse).
const ReasonRuntimeRejected = "RuntimeRejected"

// SimulatedRuntime is the default RuntimeFactory: simruntime's runtime,
// which carries the actions out on the node's clock following the pod's
// behaviour annotations (see BehaviourAnnotationPrefix). It runs no process.
//
// Its container IDs ("sim://<token>-<container>-<n>") carry a random token of
// the runtime, so a node started again, whose new runtime starts counting
// anew, never reports the ID of an instance the API server already shows.
func SimulatedRuntime(pod *corev1.Pod) (Runtime, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	opts := simruntime.DefaultOptions()
	opts.Token = hex.EncodeToString(b[:])
	rt, err := simruntime.NewForPod(opts, pod)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	return rt, nil
}
