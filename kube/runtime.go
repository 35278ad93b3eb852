package kube

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
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
// runtime how a container behaves: the annotation
// "sim.nodestate.io/<container name>" holds the clauses of
// podlifecycletest.ParseBehaviour for that container, for example
//
//	sim.nodestate.io/app: "run 30s exit 1; pull fail 2; readiness fail 0s-20s"
//
// A container without one runs until it is killed, its image pulls at once
// and its probes pass; a regular init container runs a moment and exits 0.
const BehaviourAnnotationPrefix = "sim.nodestate.io/"

// ReasonRuntimeRejected is the pod status reason and event reason when the
// RuntimeFactory refuses a pod (for the simulated runtime: a behaviour
// annotation that does not parse).
const ReasonRuntimeRejected = "RuntimeRejected"

// SimulatedRuntime is the default RuntimeFactory: podlifecycletest's runtime,
// which carries the actions out on the node's clock following the pod's
// behaviour annotations (see BehaviourAnnotationPrefix). It runs no process.
//
// Its container IDs ("sim://<token>-<container>-<n>") carry a random token of
// the runtime, so a node started again, whose new runtime starts counting
// anew, never reports the ID of an instance the API server already shows.
func SimulatedRuntime(pod *corev1.Pod) (Runtime, error) {
	bs, err := Behaviours(pod)
	if err != nil {
		return nil, err
	}
	rt, err := podlifecycletest.NewRuntime(pod, bs)
	if err != nil {
		return nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &tokenRuntime{rt: rt, prefix: simScheme + hex.EncodeToString(b[:]) + "-"}, nil
}

const simScheme = "sim://"

// tokenRuntime puts its token into the IDs of the runtime it wraps.
type tokenRuntime struct {
	rt      *podlifecycletest.Runtime
	prefix  string
	actions []podlifecycle.Action
}

func (t *tokenRuntime) Do(now time.Time, actions []podlifecycle.Action) {
	t.actions = append(t.actions[:0], actions...)
	for i := range t.actions {
		if id := t.actions[i].ContainerID; strings.HasPrefix(id, t.prefix) {
			t.actions[i].ContainerID = simScheme + strings.TrimPrefix(id, t.prefix)
		}
	}
	t.rt.Do(now, t.actions)
}

func (t *tokenRuntime) Due(now time.Time) []podlifecycle.Observation {
	obs := t.rt.Due(now)
	for i := range obs {
		if id := obs[i].ContainerID; strings.HasPrefix(id, simScheme) {
			obs[i].ContainerID = t.prefix + strings.TrimPrefix(id, simScheme)
		}
	}
	return obs
}

func (t *tokenRuntime) Next() time.Time { return t.rt.Next() }

// Behaviours reads a pod's behaviour annotations. An annotation for a
// container the pod lacks, or one that does not parse, is an error naming
// the annotation.
func Behaviours(pod *corev1.Pod) (podlifecycletest.Behaviours, error) {
	if pod == nil {
		return nil, fmt.Errorf("%w: behaviours of a nil pod", ErrInvalidInput)
	}
	var keys []string
	for k := range pod.Annotations {
		if strings.HasPrefix(k, BehaviourAnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	sort.Strings(keys)
	names := map[string]bool{}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			names[list[i].Name] = true
		}
	}
	bs := podlifecycletest.Behaviours{}
	for _, k := range keys {
		name := strings.TrimPrefix(k, BehaviourAnnotationPrefix)
		if !names[name] {
			return nil, fmt.Errorf("%w: annotation %s: the pod has no container %q", ErrInvalidInput, k, name)
		}
		b, err := podlifecycletest.ParseBehaviour(pod.Annotations[k])
		if err != nil {
			return nil, fmt.Errorf("%w: annotation %s: %w", ErrInvalidInput, k, err)
		}
		bs[name] = b
	}
	return bs, nil
}
