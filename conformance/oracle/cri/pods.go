package cri

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

// podFor returns the entry of the pod a sandbox config is for, making it
// on the pod's first sandbox: the pod from Options.Pods and the behaviours
// of its annotations. Annotations that do not parse return the parse
// error. r.mu must not be held.
func (r *Runtime) podFor(ctx context.Context, cfg *runtimeapi.PodSandboxConfig) (*podEntry, error) {
	meta := cfg.GetMetadata()
	r.mu.Lock()
	pe := r.pods[meta.GetUid()]
	r.mu.Unlock()
	if pe != nil {
		return pe, nil
	}
	var pod *v1.Pod
	if r.opts.Pods != nil {
		p, err := r.opts.Pods.Pod(ctx, meta.GetNamespace(), meta.GetName(), meta.GetUid())
		if err != nil {
			r.log.Info("pod not found; only its annotations count", "pod", meta.GetNamespace()+"/"+meta.GetName(), "uid", meta.GetUid(), "err", err)
		} else if p != nil && string(p.UID) == meta.GetUid() {
			pod = p
		}
	}
	var bs simruntime.Behaviours
	var err error
	if pod != nil {
		// The sandbox config carries the annotations the kubelet had; the
		// pod's own are the same, and PodBehaviours checks the names.
		bs, err = simruntime.PodBehaviours(pod)
	} else {
		bs, err = annotationBehaviours(cfg.GetAnnotations())
	}
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.pods[meta.GetUid()]; old != nil {
		return old, nil // another sandbox of the pod got there first
	}
	pe = &podEntry{uid: meta.GetUid(), pod: pod, behaviours: bs, pulls: map[string]int{}}
	r.pods[pe.uid] = pe
	return pe, nil
}

// annotationBehaviours reads the behaviour annotations alone, for a pod
// whose spec is not known.
func annotationBehaviours(ann map[string]string) (simruntime.Behaviours, error) {
	var keys []string
	for k := range ann {
		if strings.HasPrefix(k, simruntime.AnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	bs := simruntime.Behaviours{}
	for _, k := range keys {
		b, err := simruntime.ParseBehaviour(ann[k])
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %w", k, err)
		}
		bs[strings.TrimPrefix(k, simruntime.AnnotationPrefix)] = b
	}
	return bs, nil
}

// specOf returns the spec of container name of pod, nil if it has none.
func specOf(pod *v1.Pod, name string) (*v1.Container, bool) {
	if pod == nil {
		return nil, false
	}
	s := &pod.Spec
	for i := range s.InitContainers {
		if s.InitContainers[i].Name == name {
			return &s.InitContainers[i], true
		}
	}
	for i := range s.Containers {
		if s.Containers[i].Name == name {
			return &s.Containers[i], false
		}
	}
	for i := range s.EphemeralContainers {
		if s.EphemeralContainers[i].Name == name {
			return (*v1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon), false
		}
	}
	return nil, false
}

// regularInit reports whether name is a regular (not sidecar) init
// container of pod.
func regularInit(pod *v1.Pod, name string) bool {
	c, init := specOf(pod, name)
	return init && !containerstate.IsSidecar(c)
}
