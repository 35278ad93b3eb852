package kube

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

// Runtime carries out one pod's podlifecycle actions and reports what came of
// them. A Node owns one Runtime per pod and calls it from one goroutine only.
//
// Do takes the actions of one sync, in order, at now. Due returns what
// happened up to now (sandbox ready, image pulled or failed, container
// started or exited, probe and hook results) and forgets it. Next returns
// when the runtime next has something to report, zero for nothing.
type Runtime interface {
	Do(now time.Time, actions []podlifecycle.Action)
	Due(now time.Time) []podlifecycle.Observation
	Next() time.Time
}

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
	return simRuntime{rt}, nil
}

// simRuntime is a simruntime.Runtime as a Runtime: its Do never fails.
type simRuntime struct{ *simruntime.Runtime }

func (s simRuntime) Do(now time.Time, actions []podlifecycle.Action) { _ = s.Runtime.Do(now, actions) }
