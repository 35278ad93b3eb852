package vk

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podrunner"
)

// checkPod refuses a nil pod and one without a UID, namespace or name.
func checkPod(op string, pod *v1.Pod) error {
	if pod == nil {
		return &PodError{Op: op, Kind: ErrInvalidInput, Err: errorString("nil pod")}
	}
	if pod.UID == "" || pod.Name == "" || pod.Namespace == "" {
		return &PodError{Op: op, Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Kind: ErrInvalidInput,
			Err: errorString("a pod needs a UID, a namespace and a name")}
	}
	return nil
}

func key(pod *v1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
}

// CreatePod starts running pod: a podlifecycle machine on the runtime the
// factory makes for it, its first sync at once. A pod the provider already
// runs is an update. A pod that is already terminal is not run again. A
// pod whose runtime the factory refuses (or that finds the pod CIDR full)
// is failed as the kubelet fails a pod it rejects (reason
// ReasonRuntimeRejected or ReasonPodCIDRExhausted, a Warning event) and
// CreatePod returns nil: its final status reaches the API server through
// NotifyPods. A nil pod, one without a UID, namespace or name, or one the
// pod machine refuses returns a *PodError wrapping ErrInvalidInput.
func (p *Provider) CreatePod(_ context.Context, pod *v1.Pod) error {
	if !p.ready() {
		return ErrNotInitialized
	}
	if err := checkPod("create", pod); err != nil {
		return err
	}
	if _, known := p.runner.Pod(pod.UID); known {
		return p.update("create", pod)
	}
	if podphase.IsTerminal(pod.Status.Phase) {
		p.log.V(2).Info("terminal pod not run again", "pod", klog(pod), "phase", pod.Status.Phase)
		return nil
	}
	p.replaced(key(pod), pod.UID)
	rt, err := p.newRuntime(pod)
	if err != nil {
		p.reject(pod, ReasonRuntimeRejected, err.Error())
		return nil
	}
	if err := p.runner.Add(pod, &guarded{rt: rt, uid: pod.UID, timeout: p.opts.RuntimeTimeout, p: p}); err != nil {
		if errors.Is(err, podrunner.ErrPodCIDRExhausted) {
			p.reject(pod, ReasonPodCIDRExhausted, "no free IP address in the node's pod CIDR "+p.runner.PodCIDR())
			return nil
		}
		return &PodError{Op: "create", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Kind: ErrInvalidInput, Err: err}
	}
	p.mu.Lock()
	p.byName[key(pod)] = pod.UID
	p.mu.Unlock()
	p.count(func(s *Stats) { s.Created++ })
	return nil
}

// newRuntime calls the factory; a panic is an error.
func (p *Provider) newRuntime(pod *v1.Pod) (rt podrunner.Runtime, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.count(func(s *Stats) { s.RuntimePanics++ })
			rt, err = nil, fmt.Errorf("%w: the runtime factory panicked: %v", ErrRuntime, r)
		}
	}()
	rt, err = p.runtimes(pod)
	if err == nil && rt == nil {
		err = fmt.Errorf("%w: the runtime factory returned no runtime", ErrRuntime)
	}
	return rt, err
}

// reject fails pod as the kubelet's admission does, through the runner.
func (p *Provider) reject(pod *v1.Pod, reason, message string) {
	p.log.Info("pod rejected", "pod", klog(pod), "reason", reason, "message", message)
	if err := p.runner.Reject(pod, p.clock.Now(), reason, message); err != nil {
		p.log.Error(err, "reject", "pod", klog(pod))
		return
	}
	p.mu.Lock()
	p.byName[key(pod)] = pod.UID
	p.finished[pod.UID] = true
	p.mu.Unlock()
	p.count(func(s *Stats) { s.Rejected++ })
}

// replaced removes the pod the provider runs under k when uid is another:
// the API server replaced it (a StatefulSet's pod made again under its
// name), so the old one is gone there.
func (p *Provider) replaced(k types.NamespacedName, uid types.UID) {
	p.mu.Lock()
	old, ok := p.byName[k]
	p.mu.Unlock()
	if !ok || old == uid {
		return
	}
	last, _ := p.runner.Pod(old)
	_ = p.runner.Remove(old, last)
}

// UpdatePod hands the runner a newer object of a pod it runs: a change of
// its spec, labels, annotations or deletion syncs it (podlifecycle.Changed),
// an update of its status alone does not. A pod the provider does not run
// returns a *PodError wrapping ErrUnknownPod.
func (p *Provider) UpdatePod(_ context.Context, pod *v1.Pod) error {
	if !p.ready() {
		return ErrNotInitialized
	}
	if err := checkPod("update", pod); err != nil {
		return err
	}
	return p.update("update", pod)
}

func (p *Provider) update(op string, pod *v1.Pod) error {
	if err := p.runner.Update(pod); err != nil {
		return &PodError{Op: op, Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Kind: ErrUnknownPod, Err: err}
	}
	p.count(func(s *Stats) { s.Updated++ })
	return nil
}

// DeletePod stops pod. While the API server still has it (it is being
// deleted gracefully), the runner kills it as the kubelet does: preStop
// hooks, SIGTERM, SIGKILL at the end of its grace; once its final status
// is in the API server, the provider deletes the object (grace 0, UID
// precondition), as the kubelet's status manager does. When the API server
// no longer has it (a forced deletion, or a pod left over from an earlier
// run), the runner kills it with the grace of the last object known and
// forgets it. Calling it again is harmless. A pod the provider does not
// run returns a *PodError wrapping ErrUnknownPod, which virtual-kubelet
// takes as done.
func (p *Provider) DeletePod(_ context.Context, pod *v1.Pod) error {
	if !p.ready() {
		return ErrNotInitialized
	}
	if pod == nil {
		return &PodError{Op: "delete", Kind: ErrInvalidInput, Err: errorString("nil pod")}
	}
	uid := pod.UID
	if uid == "" {
		p.mu.Lock()
		uid = p.byName[key(pod)]
		p.mu.Unlock()
	}
	last, known := p.runner.Pod(uid)
	if !known {
		return &PodError{Op: "delete", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Kind: ErrUnknownPod}
	}
	p.count(func(s *Stats) { s.Deleted++ })
	server, err := p.pods.Pods(last.Namespace).Get(last.Name)
	if err != nil || server.UID != uid {
		return p.remove(uid, pod, last)
	}
	del := pod
	if del.UID != uid || del.DeletionTimestamp == nil {
		del = server
	}
	if del.DeletionTimestamp == nil {
		// The API server has it and is not deleting it: the provider is
		// asked to stop it anyway, as an eviction by the node, with the
		// pod's own grace.
		del = del.DeepCopy()
		now := metav1.NewTime(p.clock.Now())
		del.DeletionTimestamp = &now
		del.DeletionGracePeriodSeconds = del.Spec.TerminationGracePeriodSeconds
	}
	return p.update("delete", del)
}

// remove tells the runner that the API server no longer has pod uid.
func (p *Provider) remove(uid types.UID, pod, last *v1.Pod) error {
	if pod.UID == uid && pod.DeletionTimestamp != nil {
		last = pod
	}
	if err := p.runner.Remove(uid, last); err != nil {
		return &PodError{Op: "delete", Namespace: pod.Namespace, Name: pod.Name, UID: uid, Kind: ErrUnknownPod, Err: err}
	}
	return nil
}

// GetPod returns the newest object of pod namespace/name the provider was
// handed, with the node's status of it (a copy). A pod it does not run, or
// one whose name the API server has given to a pod of another UID (the
// old one is then stopped), returns a *PodError wrapping ErrUnknownPod.
func (p *Provider) GetPod(_ context.Context, namespace, name string) (*v1.Pod, error) {
	if !p.ready() {
		return nil, ErrNotInitialized
	}
	uid, ok := p.lookup(namespace, name)
	if !ok {
		return nil, &PodError{Op: "get", Namespace: namespace, Name: name, Kind: ErrUnknownPod}
	}
	return p.withStatus(uid), nil
}

// lookup finds the UID of the pod namespace/name the provider runs.
func (p *Provider) lookup(namespace, name string) (types.UID, bool) {
	k := types.NamespacedName{Namespace: namespace, Name: name}
	p.mu.Lock()
	uid, ok := p.byName[k]
	p.mu.Unlock()
	if !ok {
		return "", false
	}
	if _, known := p.runner.Pod(uid); !known {
		return "", false
	}
	if server, err := p.pods.Pods(namespace).Get(name); err == nil && server.UID != uid {
		p.replaced(k, server.UID)
		return "", false
	}
	return uid, true
}

// withStatus is pod uid's newest object with its cached status.
func (p *Provider) withStatus(uid types.UID) *v1.Pod {
	pod, ok := p.runner.Pod(uid)
	if !ok {
		return nil
	}
	out := pod.DeepCopy()
	if st, ok := p.cache.GetPodStatus(uid); ok {
		out.Status = st
	}
	return out
}

// GetPodStatus returns the node's status of pod namespace/name (a copy):
// the newest status the runner cached, or the API server's while the pod
// has not synced yet. A pod the provider does not run (never created, or
// deleted and forgotten) returns a *PodError wrapping ErrUnknownPod.
func (p *Provider) GetPodStatus(_ context.Context, namespace, name string) (*v1.PodStatus, error) {
	if !p.ready() {
		return nil, ErrNotInitialized
	}
	uid, ok := p.lookup(namespace, name)
	if !ok {
		return nil, &PodError{Op: "status", Namespace: namespace, Name: name, Kind: ErrUnknownPod}
	}
	pod := p.withStatus(uid)
	if pod == nil {
		return nil, &PodError{Op: "status", Namespace: namespace, Name: name, UID: uid, Kind: ErrUnknownPod}
	}
	return &pod.Status, nil
}

// GetPods returns every pod the provider runs, with its status (copies),
// in no order.
func (p *Provider) GetPods(context.Context) ([]*v1.Pod, error) {
	if !p.ready() {
		return nil, ErrNotInitialized
	}
	uids := p.runner.Pods()
	out := make([]*v1.Pod, 0, len(uids))
	for _, uid := range uids {
		if pod := p.withStatus(uid); pod != nil {
			out = append(out, pod)
		}
	}
	return out, nil
}

// apiUpdate takes a pod the watch delivered. A status-only update of a pod
// the runner runs goes to the runner (which syncs it only when a readiness
// gate makes its Ready condition stale); changes of anything else come
// through virtual-kubelet's UpdatePod and DeletePod. Either way, the pod
// may now be ready to be deleted.
func (p *Provider) apiUpdate(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	known, ok := p.runner.Pod(pod.UID)
	if !ok {
		return
	}
	if !podlifecycle.Changed(known, pod) {
		_ = p.runner.Update(pod)
	}
	p.mu.Lock()
	p.check[pod.UID] = true
	p.mu.Unlock()
	kick(p.podKick)
}

// apiDelete takes a pod the API server no longer has: the runner kills it
// if it still runs and forgets it.
func (p *Provider) apiDelete(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	if _, known := p.runner.Pod(pod.UID); known {
		_ = p.runner.Remove(pod.UID, pod)
	}
	kick(p.podKick)
}

// finishedHook is the runner's Finished hook: the pod's final status is in
// the cache.
func (p *Provider) finishedHook(_ time.Time, pod *v1.Pod) {
	p.mu.Lock()
	p.finished[pod.UID] = true
	p.check[pod.UID] = true
	p.mu.Unlock()
	kick(p.podKick)
}

// deleteFinished deletes the API object of a finished pod, as the kubelet's
// status manager does once the pod's final status is written: grace 0, the
// UID as precondition. A pod already gone or replaced counts as deleted.
func (p *Provider) deleteFinished(ctx context.Context, pod *v1.Pod) bool {
	zero := int64(0)
	uid := pod.UID
	err := p.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		p.count(func(s *Stats) { s.DeleteErrors++ })
		p.log.Error(err, "deleting a finished pod; trying again at the next full sync", "pod", klog(pod))
		return false
	}
	p.count(func(s *Stats) { s.PodsDeleted++ })
	return true
}

// klog names a pod in logs: namespace/name.
func klog(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }
