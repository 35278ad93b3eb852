package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
)

// withVolume returns a pod bound to node whose container mounts vol.
func withVolume(ns, name, node string, vol corev1.Volume) *corev1.Pod {
	pod := boundPod(ns, name, node, corev1.RestartPolicyAlways, nil)
	pod.Spec.Volumes = []corev1.Volume{vol}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: vol.Name, MountPath: "/data"}}
	return pod
}

// kubeletEvent says whether node's kubelet recorded an event about pod with
// reason and message.
func kubeletEvent(ctx context.Context, cs kubernetes.Interface, ns, pod, node, reason, message string) bool {
	list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	for _, e := range list.Items {
		if e.Source.Component == "kubelet" && e.Source.Host == node && e.InvolvedObject.Name == pod &&
			e.Type == corev1.EventTypeWarning && e.Reason == reason && e.Message == message {
			return true
		}
	}
	return false
}

// waitingContainerCreating says whether the pod is Pending with its container
// waiting in ContainerCreating, as a kubelet shows a pod whose sandbox is not
// there yet.
func waitingContainerCreating(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodPending && len(p.Status.ContainerStatuses) == 1 &&
		p.Status.ContainerStatuses[0].State.Waiting != nil && p.Status.ContainerStatuses[0].State.Waiting.Reason == "ContainerCreating"
}

// TestNodeWaitsForVolumes: a pod the node cannot start yet stays Pending in
// ContainerCreating with the kubelet's events, never silently: a missing
// ConfigMap fails its volume's set-up (FailedMount "MountVolume.SetUp failed
// ...") until it is created, and the pod then runs; a claim that does not
// exist ends each sync's wait at once ("Unable to attach or mount volumes"
// with the populator's error), and the pod is still deleted gracefully; a
// runtime class that is gone by the time of the sandbox fails the sandbox
// creation (FailedCreatePodSandBox with the runtime class manager's error).
func TestNodeWaitsForVolumes(t *testing.T) {
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	ctx := context.Background()
	runNode(t, nodeVol, func(o *kube.Options) { o.PodCIDR = "10.244.61.0/24" })

	cfgVol := corev1.Volume{Name: "settings", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}
	claimVol := corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}
	lateVol := corev1.Volume{Name: "late", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "late"}}}}
	if _, err := admin.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-sim"}, Handler: "runc"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rcPod := withVolume(ns, "rc", nodeVol, lateVol)
	rcPod.Spec.RuntimeClassName = ptr.To(ns + "-sim")
	for _, pod := range []*corev1.Pod{withVolume(ns, "cfg", nodeVol, cfgVol), withVolume(ns, "claim", nodeVol, claimVol), rcPod} {
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	eventually(t, "cfg in ContainerCreating with FailedMount for its ConfigMap", func() bool {
		return waitingContainerCreating(getPod(t, admin, ns, "cfg")) &&
			kubeletEvent(ctx, admin, ns, "cfg", nodeVol, kube.ReasonFailedMount, `MountVolume.SetUp failed for volume "settings" : configmap "settings" not found`)
	})
	eventually(t, "claim in ContainerCreating with the populator's error", func() bool {
		return waitingContainerCreating(getPod(t, admin, ns, "claim")) &&
			kubeletEvent(ctx, admin, ns, "claim", nodeVol, kube.ReasonFailedMount,
				"Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC "+
					ns+`/data: failed to fetch PVC from API server: persistentvolumeclaims "data" not found`)
	})
	eventually(t, "rc held on its volume", func() bool {
		return waitingContainerCreating(getPod(t, admin, ns, "rc")) &&
			kubeletEvent(ctx, admin, ns, "rc", nodeVol, kube.ReasonFailedMount, `MountVolume.SetUp failed for volume "late" : configmap "late" not found`)
	})

	// The ConfigMap comes: the next set-up attempt mounts it.
	for _, name := range []string{"settings", "late"} {
		if name == "late" {
			if err := admin.NodeV1().RuntimeClasses().Delete(ctx, ns+"-sim", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "cfg Running once its ConfigMap exists", func() bool {
		p := getPod(t, admin, ns, "cfg")
		return p.Status.Phase == corev1.PodRunning && p.Status.ContainerStatuses[0].State.Running != nil
	})
	eventually(t, "rc's sandbox creation failed for its runtime class", func() bool {
		return waitingContainerCreating(getPod(t, admin, ns, "rc")) &&
			kubeletEvent(ctx, admin, ns, "rc", nodeVol, "FailedCreatePodSandBox", `Failed to create pod sandbox: runtimeclasses.node.k8s.io "`+ns+`-sim" not found`)
	})

	// A pod held on its volumes is still deleted gracefully.
	if err := admin.CoreV1().Pods(ns).Delete(ctx, "claim", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "claim gone after its deletion", func() bool {
		_, err := admin.CoreV1().Pods(ns).Get(ctx, "claim", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}
