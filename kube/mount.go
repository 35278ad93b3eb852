package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/nodestate/nodestate/podlifecycle"
)

// ReasonFailedMount is the reason of the kubelet's events about a pod whose
// volumes cannot be set up.
const ReasonFailedMount = "FailedMount"

// The kubelet's volume manager timing: a sync waits up to mountTimeout for the
// pod's volumes (WaitForAttachAndMount); a volume whose set-up failed is
// tried again after mountRetryFirst, doubling up to mountRetryMax; a sync
// that failed is tried again after syncRetry.
const (
	mountTimeout    = 2*time.Minute + 3*time.Second
	mountRetryFirst = 500 * time.Millisecond
	mountRetryMax   = 2*time.Minute + 2*time.Second
	syncRetry       = 10 * time.Second
)

// lookupTimeout bounds one API read of the mount check, which runs on the
// node's loop.
const lookupTimeout = 5 * time.Second

// mountObjects reads the API objects a pod's volumes and runtime class name.
// Each method returns the error the kubelet would report for a missing
// object; nil when it exists.
type mountObjects interface {
	ConfigMap(ctx context.Context, namespace, name string) error
	Secret(ctx context.Context, namespace, name string) error
	PVC(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error)
	RuntimeClass(ctx context.Context, name string) error
}

// apiObjects reads them from the API server with the node's client. A
// missing ConfigMap or Secret is reported as the kubelet's watch-based
// manager reports it ("configmap \"x\" not found"); a missing claim or
// runtime class with the API server's own error, as the kubelet's live reads
// do.
type apiObjects struct {
	client kubernetes.Interface
	clock  clock.Clock
}

func (a apiObjects) ConfigMap(ctx context.Context, namespace, name string) error {
	err := untilVisible(ctx, a.clock, func() error {
		_, err := a.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(corev1.Resource("configmap"), name)
	}
	return err
}

func (a apiObjects) Secret(ctx context.Context, namespace, name string) error {
	err := untilVisible(ctx, a.clock, func() error {
		_, err := a.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(corev1.Resource("secret"), name)
	}
	return err
}

// visibleWithin is how long a lookup of a pod's ConfigMap or Secret waits
// for the Node authorizer to let the node read it.
const visibleWithin = time.Second

// untilVisible calls get until it is not Forbidden, for up to
// visibleWithin. The Node authorizer lets a node read a ConfigMap or
// Secret once its graph has the pod bound to the node that names it, which
// follows the binding by a moment: the kubelet's watch-based manager waits
// up to a second for its cache of the object to sync, retrying a refused
// list, so the FailedMount it records names the object's real state (not
// found), not the authorizer's lag (oracle case "configmap-late").
func untilVisible(ctx context.Context, clk clock.Clock, get func() error) error {
	deadline := clk.Now().Add(visibleWithin)
	for {
		err := get()
		if !apierrors.IsForbidden(err) || !clk.Now().Before(deadline) {
			return err
		}
		t := clk.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C():
		}
	}
}

func (a apiObjects) PVC(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	return a.client.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (a apiObjects) RuntimeClass(ctx context.Context, name string) error {
	_, err := a.client.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	return err
}

// volumeCheck is what one look at a pod's volumes found: the volumes whose
// set-up failed, with the events' messages, and the volumes that could not
// be processed (their claims), with the errors that end the sync at once.
type volumeCheck struct {
	setupFailed    []string // volume names, sorted
	setupMessages  []string // one "MountVolume.SetUp failed ..." per failed volume
	processFailed  []string // volume names, sorted
	processErrors  []string // the populator's errors, in volume order
	unmountedNames []string // every volume not mounted, sorted
}

func (c *volumeCheck) ok() bool { return len(c.unmountedNames) == 0 }

// checkVolumes looks at the volumes the pod's containers mount, as the
// kubelet's volume manager does (a volume no container mounts is not waited
// for): a ConfigMap or Secret volume is set up when its object exists or it
// is optional; a claim (persistentVolumeClaim, or the one of an ephemeral
// volume) when it is bound and not being deleted without protection. Every
// other source (emptyDir, hostPath, projected, downwardAPI, CSI, ...) is set
// up at once: a simulated node has nothing to attach.
func checkVolumes(ctx context.Context, pod *corev1.Pod, objs mountObjects) volumeCheck {
	used := map[string]bool{}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			for _, m := range list[i].VolumeMounts {
				used[m.Name] = true
			}
			for _, d := range list[i].VolumeDevices {
				used[d.Name] = true
			}
		}
	}
	var c volumeCheck
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !used[v.Name] {
			continue
		}
		var setup error
		claim := ""
		switch {
		case v.ConfigMap != nil:
			if err := objs.ConfigMap(ctx, pod.Namespace, v.ConfigMap.Name); err != nil && !(apierrors.IsNotFound(err) && v.ConfigMap.Optional != nil && *v.ConfigMap.Optional) {
				setup = err
			}
		case v.Secret != nil:
			if err := objs.Secret(ctx, pod.Namespace, v.Secret.SecretName); err != nil && !(apierrors.IsNotFound(err) && v.Secret.Optional != nil && *v.Secret.Optional) {
				setup = err
			}
		case v.PersistentVolumeClaim != nil:
			claim = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			claim = pod.Name + "-" + v.Name
		}
		if setup != nil {
			c.setupFailed = append(c.setupFailed, v.Name)
			c.setupMessages = append(c.setupMessages, fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", v.Name, setup))
			continue
		}
		if claim == "" {
			continue
		}
		if err := claimUsable(ctx, objs, pod.Namespace, claim); err != nil {
			c.processFailed = append(c.processFailed, v.Name)
			c.processErrors = append(c.processErrors, fmt.Sprintf("error processing PVC %s/%s: %v", pod.Namespace, claim, err))
		}
	}
	c.unmountedNames = append(append([]string(nil), c.setupFailed...), c.processFailed...)
	slices.Sort(c.setupFailed)
	slices.Sort(c.processFailed)
	slices.Sort(c.unmountedNames)
	return c
}

// claimUsable is the kubelet's check of a pod's claim before it mounts it.
func claimUsable(ctx context.Context, objs mountObjects, namespace, name string) error {
	pvc, err := objs.PVC(ctx, namespace, name)
	if err != nil || pvc == nil {
		return fmt.Errorf("failed to fetch PVC from API server: %v", err)
	}
	if pvc.DeletionTimestamp != nil && !slices.Contains(pvc.Finalizers, "kubernetes.io/pvc-protection") {
		return errors.New("PVC is being deleted")
	}
	if pvc.Status.Phase != corev1.ClaimBound {
		return errors.New("PVC is not bound")
	}
	if pvc.Spec.VolumeName == "" {
		return errors.New("PVC has empty pvc.Spec.VolumeName")
	}
	return nil
}

// waitMessage is the message of the kubelet's "Unable to attach or mount
// volumes" event for a wait that ended with cause.
func (c *volumeCheck) waitMessage(cause string) string {
	return fmt.Sprintf("Unable to attach or mount volumes: unmounted volumes=[%s], unattached volumes=[], failed to process volumes=[%s]: %s",
		strings.Join(c.unmountedNames, " "), strings.Join(c.processFailed, " "), cause)
}

// mountGate is the state of a pod's wait for its volumes (gatedRuntime).
type mountGate struct {
	mounted bool                  // the volumes were set up once: they stay
	held    []podlifecycle.Action // the CreateSandbox and what followed it
	next    time.Time             // when to look at the volumes again
	waitEnd time.Time             // the end of the current sync's wait; zero between syncs
	syncAt  time.Time             // between syncs: when the next one begins to wait
	setupAt time.Time             // the next set-up attempt of the volumes that failed
	delay   time.Duration         // the set-up back-off
	answer  []podlifecycle.Observation
}

// failed takes a look at the volumes at now that found c not all set up,
// sets the next look and returns the messages of the FailedMount events to
// record. The kubelet runs two clocks here, and so does the gate: each
// volume's set-up is tried again after a back-off (mountRetryFirst doubling
// up to mountRetryMax), an event per failure; and each sync waits for the
// volumes up to mountTimeout, ending with "Unable to attach or mount
// volumes" (at once when a claim cannot be processed), after which the next
// sync begins syncRetry later.
func (g *mountGate) failed(c *volumeCheck, now time.Time) []string {
	var msgs []string
	if !now.Before(g.setupAt) && len(c.setupMessages) > 0 {
		msgs = append(msgs, c.setupMessages...)
		g.setupAt = now.Add(g.delay)
		g.delay = min(2*g.delay, mountRetryMax)
	}
	waiting := !g.waitEnd.IsZero()
	switch {
	case !waiting && now.Before(g.syncAt):
	case len(c.processErrors) > 0:
		msgs = append(msgs, c.waitMessage(strings.Join(c.processErrors, "; ")))
		g.waitEnd, g.syncAt = time.Time{}, now.Add(syncRetry)
	case !waiting:
		g.waitEnd = now.Add(mountTimeout)
	case !now.Before(g.waitEnd):
		msgs = append(msgs, c.waitMessage(context.DeadlineExceeded.Error()))
		g.waitEnd, g.syncAt = time.Time{}, now.Add(syncRetry)
	}
	g.next = g.syncAt
	if !g.waitEnd.IsZero() {
		g.next = g.waitEnd
	}
	if len(c.setupMessages) > 0 && g.setupAt.Before(g.next) {
		g.next = g.setupAt
	}
	return msgs
}

// wake is when the gate has something to do; zero for nothing.
func (g *mountGate) wake() time.Time {
	if len(g.answer) > 0 {
		return time.Unix(0, 0)
	}
	if g.held == nil {
		return time.Time{}
	}
	return g.next
}

// needsGate reports whether a pod has something to wait for before its
// sandbox: a ConfigMap, Secret, claim or ephemeral volume a container
// mounts, or a RuntimeClass to look up.
func needsGate(pod *corev1.Pod) bool {
	if pod.Spec.RuntimeClassName != nil {
		return true
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.ConfigMap != nil || v.Secret != nil || v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	return false
}

// gatedRuntime is a pod's Runtime behind the kubelet's volume manager: it
// holds the pod's sandbox creation until its volumes are set up, as the
// kubelet's sync waits for them before it asks the runtime for a sandbox,
// recording the kubelet's FailedMount events meanwhile; and it answers a
// sandbox creation for a RuntimeClass the API server does not have with
// SandboxCreateFailed, as the kubelet's runtime manager does. It runs on
// the node's loop, as the runner calls it.
type gatedRuntime struct {
	Runtime
	n    *Node
	pod  *corev1.Pod // as admitted; the node's newest object is n.pods[uid].api
	gate mountGate
}

func (g *gatedRuntime) api() *corev1.Pod {
	if p := g.n.pods[g.pod.UID]; p != nil {
		return p.api
	}
	return g.pod
}

// Do carries out a sync's actions on the runtime, holding the sandbox
// creation and what follows it while the volumes are not set up.
func (g *gatedRuntime) Do(now time.Time, actions []podlifecycle.Action) error {
	i := slices.IndexFunc(actions, func(a podlifecycle.Action) bool { return a.Kind == podlifecycle.CreateSandbox })
	if i < 0 || (g.gate.mounted && g.api().Spec.RuntimeClassName == nil) {
		return g.Runtime.Do(now, actions)
	}
	if i > 0 {
		if err := g.Runtime.Do(now, actions[:i]); err != nil {
			return err
		}
	}
	gt := &g.gate
	gt.held = append(gt.held[:0], actions[i:]...)
	gt.next, gt.waitEnd, gt.syncAt, gt.setupAt, gt.delay = now, time.Time{}, now, now, mountRetryFirst
	g.tryMount(now)
	return nil
}

// Due looks at the volumes when that is due, then reports the gate's
// answers and what the runtime observed.
func (g *gatedRuntime) Due(now time.Time) []podlifecycle.Observation {
	g.tryMount(now)
	obs := g.Runtime.Due(now)
	if len(g.gate.answer) > 0 {
		obs = append(g.gate.answer, obs...)
		g.gate.answer = nil
	}
	return obs
}

// Next is the earlier of the runtime's next report and the gate's next look.
func (g *gatedRuntime) Next() time.Time {
	w, r := g.gate.wake(), g.Runtime.Next()
	if w.IsZero() || (!r.IsZero() && r.Before(w)) {
		return r
	}
	return w
}

// tryMount looks at a held pod's volumes when it is due: it releases the
// held actions once they are set up (or the pod is being deleted, when the
// kubelet no longer waits for them), and otherwise records the kubelet's
// FailedMount events and sets the next look.
func (g *gatedRuntime) tryMount(now time.Time) {
	gt := &g.gate
	if gt.held == nil {
		return
	}
	pod, n := g.api(), g.n
	if pod.DeletionTimestamp != nil {
		// The kubelet skips the volume wait for a pod being deleted; its
		// sandbox is never created: the creation ends without an event.
		gt.answer = append(gt.answer, podlifecycle.Observation{Kind: podlifecycle.SandboxCreateFailed, Attempt: gt.held[0].Attempt, Message: "pod is being deleted"})
		gt.held = nil
		return
	}
	if now.Before(gt.next) {
		return
	}
	if !gt.mounted {
		lctx, cancel := context.WithTimeout(n.runCtx(), lookupTimeout)
		c := checkVolumes(lctx, pod, n.objects)
		cancel()
		if !c.ok() {
			for _, m := range gt.failed(&c, now) {
				n.event(podlifecycle.Event{}.Reference(pod), corev1.EventTypeWarning, ReasonFailedMount, m)
			}
			n.count(func(s *NodeStats) { s.MountFailures++ })
			return
		}
		gt.mounted = true
	}
	held := gt.held
	gt.held = nil
	if name := pod.Spec.RuntimeClassName; name != nil && *name != "" {
		lctx, cancel := context.WithTimeout(n.runCtx(), lookupTimeout)
		err := n.objects.RuntimeClass(lctx, *name)
		cancel()
		if err != nil {
			// The runtime manager cannot find the handler: the sandbox
			// creation fails and the machine records FailedCreatePodSandBox
			// and syncs again later.
			gt.answer = append(gt.answer, podlifecycle.Observation{Kind: podlifecycle.SandboxCreateFailed, Attempt: held[0].Attempt, Message: err.Error()})
			return
		}
	}
	if err := g.Runtime.Do(now, held); err != nil {
		// Held again, and looked at once more after a second.
		gt.held, gt.next = held, now.Add(time.Second)
		n.log.Error(err, "runtime refused the sandbox creation; trying again", "pod", pod.Namespace+"/"+pod.Name)
	}
}
