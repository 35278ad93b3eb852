package simruntime

import (
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// AnnotationPrefix starts the pod annotations that say how a container
// behaves: "sim.nodestate.io/<container name>" holds that container's
// clauses (see ParseBehaviours), for example
//
//	sim.nodestate.io/app: "run 30s exit 1; pull fail 2; readiness fail 0s-20s"
//
// A container without one gets DefaultBehaviour: it runs until it is
// killed, its image pulls at once and its probes pass; a regular init
// container runs a second and exits 0.
const AnnotationPrefix = "sim.nodestate.io/"

// PodBehaviours reads a pod's behaviour annotations (AnnotationPrefix). An
// annotation for a container the pod lacks, or one whose clauses do not
// parse, returns an *InputError naming the annotation; a nil pod one too. A
// pod without such annotations has no behaviours (nil, nil).
func PodBehaviours(pod *v1.Pod) (Behaviours, error) {
	if pod == nil {
		return nil, &InputError{Reason: "nil pod"}
	}
	var keys []string
	for k := range pod.Annotations {
		if strings.HasPrefix(k, AnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	sort.Strings(keys)
	bs := Behaviours{}
	for _, k := range keys {
		name := strings.TrimPrefix(k, AnnotationPrefix)
		if !hasContainer(&pod.Spec, name) {
			return nil, &InputError{Annotation: k, Reason: "the pod has no container " + strconv.Quote(name)}
		}
		b, err := ParseBehaviour(pod.Annotations[k])
		if err != nil {
			return nil, &InputError{Annotation: k, Err: err}
		}
		bs[name] = b
	}
	return bs, nil
}

// NewForPod returns a runtime for pod whose behaviours are its annotations
// (PodBehaviours).
func NewForPod(opts Options, pod *v1.Pod) (*Runtime, error) {
	bs, err := PodBehaviours(pod)
	if err != nil {
		return nil, err
	}
	return New(opts, pod, bs)
}

func hasContainer(s *v1.PodSpec, name string) bool {
	for i := range s.InitContainers {
		if s.InitContainers[i].Name == name {
			return true
		}
	}
	for i := range s.Containers {
		if s.Containers[i].Name == name {
			return true
		}
	}
	for i := range s.EphemeralContainers {
		if s.EphemeralContainers[i].Name == name {
			return true
		}
	}
	return false
}
