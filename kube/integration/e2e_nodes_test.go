package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/podphase"
)

// TestTwoNodes: two kube.Nodes on a control plane with the real controller
// manager and scheduler. A DaemonSet runs one Ready pod on each; a Service's
// EndpointSlices list exactly the ready pods' IPs as ready; a crash-looping
// container restarts after the kubelet's back-off (at once, then 10 s, then
// 20 s), shown terminated (Error) meanwhile, with BackOff events; the real kubectl's `get pods -o wide` rows equal
// podphase.Columns for every pod at a quiet moment; and `kubectl delete pod`
// shows the pod Terminating until its container stops, within its grace.
func TestTwoNodes(t *testing.T) {
	nodes := []string{"pair-1", "pair-2"}
	p := fullPlane(t, nodes...)
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespaceWithServiceAccount(t, admin)
	runNodeOn(t, p, nodes[0], "10.244.21.0/24")
	runNodeOn(t, p, nodes[1], "10.244.22.0/24")
	ctx := context.Background()

	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: webTemplate(labels, nil, corev1.RestartPolicyAlways)}}
	if _, err := admin.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Two API pods pinned one per node, one of which never passes its readiness probe.
	api := func(name, node string, annotations map[string]string) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "api"}},
			Spec: webTemplate(nil, annotations, corev1.RestartPolicyAlways).Spec}
		pod.Annotations = annotations
		pod.Spec.NodeSelector = map[string]string{corev1.LabelHostname: node}
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	api("api-ready", nodes[0], nil)
	api("api-unready", nodes[1], map[string]string{kube.BehaviourAnnotationPrefix + "app": "readiness fail 0s-1000h"})
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "api"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := admin.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crash := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "crash", Namespace: ns,
		Annotations: map[string]string{kube.BehaviourAnnotationPrefix + "app": "run 1s exit 1"}},
		Spec: webTemplate(nil, nil, corev1.RestartPolicyAlways).Spec}
	crash.Spec.Containers[0].ReadinessProbe = nil
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, crash, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, "the DaemonSet's pod Ready on each node", 2*time.Minute, func(ctx context.Context) (bool, error) {
		d, err := admin.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.DesiredNumberScheduled == 2 && d.Status.NumberReady == 2 && d.Status.NumberAvailable == 2, nil
	})
	pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil || len(pods.Items) != 2 || pods.Items[0].Spec.NodeName == pods.Items[1].Spec.NodeName {
		t.Fatalf("one DaemonSet pod on each node: %v %+v", err, pods)
	}

	waitFor(t, "the Service's EndpointSlice lists exactly the ready pod", 2*time.Minute, func(ctx context.Context) (bool, error) {
		ready, err := admin.CoreV1().Pods(ns).Get(ctx, "api-ready", metav1.GetOptions{})
		if err != nil || ready.Status.PodIP == "" {
			return false, err
		}
		slices, err := admin.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=api"})
		if err != nil {
			return false, err
		}
		var readyIPs, all []string
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				all = append(all, e.Addresses...)
				if ptr.Deref(e.Conditions.Ready, false) {
					readyIPs = append(readyIPs, e.Addresses...)
				}
			}
		}
		return len(all) == 2 && len(readyIPs) == 1 && readyIPs[0] == ready.Status.PodIP, nil
	})

	// The kubelet's back-off: the first restart at once, then 10 s, then 20 s after
	// the previous instance finished. With the default 1 min resync each back-off
	// shorter than a minute ends in the sync at its expiry, which restarts the
	// container, so between its crashes the container shows Terminated/Error, not
	// CrashLoopBackOff (spec/podlifecycle.md rule 4.5, what the real kubelet shows).
	errorBetween := map[int32]bool{}
	var gap time.Duration
	waitFor(t, "the crash-looping container's fourth instance", 2*time.Minute, func(ctx context.Context) (bool, error) {
		pod, err := admin.CoreV1().Pods(ns).Get(ctx, "crash", metav1.GetOptions{})
		if err != nil || len(pod.Status.ContainerStatuses) == 0 {
			return false, err
		}
		cs := pod.Status.ContainerStatuses[0]
		if term := cs.State.Terminated; term != nil && term.Reason == "Error" && term.ExitCode == 1 {
			errorBetween[cs.RestartCount] = true
		}
		if cs.RestartCount >= 3 && cs.State.Running != nil && cs.LastTerminationState.Terminated != nil {
			gap = cs.State.Running.StartedAt.Sub(cs.LastTerminationState.Terminated.FinishedAt.Time)
			return true, nil
		}
		return cs.RestartCount > 3, nil
	})
	if !errorBetween[1] || !errorBetween[2] {
		t.Errorf("Terminated/Error seen after restarts %v, want after the first and the second (their 10 s and 20 s back-offs)", errorBetween)
	}
	if gap < 19*time.Second || gap > 30*time.Second {
		t.Errorf("the fourth instance started %v after the third finished, want the 20 s back-off", gap)
	}
	evs, err := admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	backoff := false
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == "crash" && e.Reason == "BackOff" && e.Type == corev1.EventTypeWarning &&
			strings.HasPrefix(e.Message, "Back-off restarting failed container app in pod crash_"+ns) && e.InvolvedObject.FieldPath == "spec.containers{app}" {
			backoff = true
		}
	}
	if !backoff {
		t.Errorf("a BackOff event for the crash-looping container: %+v", evs.Items)
	}

	// A quiet moment: every pod as the real kubectl shows it and as podphase computes it.
	waitFor(t, "kubectl's rows equal podphase.Columns", time.Minute, func(ctx context.Context) (bool, error) {
		out, err := p.Kubectl(ctx, controlplane.Admin, "get", "pods", "-o", "wide", "-n", ns)
		if err != nil {
			return false, err
		}
		header, rows := kubectlTable(t, out)
		list, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		if len(list.Items) != len(rows) {
			return false, nil
		}
		for i := range list.Items {
			pod := &list.Items[i]
			want, err := podphase.Columns(pod, time.Now())
			if err != nil {
				return false, err
			}
			row := rows[pod.Name]
			for col, w := range map[string]string{"READY": want.Ready, "STATUS": want.Status, "RESTARTS": want.Restarts, "IP": pod.Status.PodIP, "NODE": pod.Spec.NodeName} {
				if row == nil || row[header[col]] != w && !(col == "RESTARTS" && strings.HasPrefix(row[header[col]], w)) {
					t.Logf("%s %s: kubectl %q, podphase %q", pod.Name, col, row[header[col]], w)
					return false, nil
				}
			}
		}
		return true, nil
	})

	// kubectl delete: Terminating while the container ignores SIGTERM, then gone within the grace.
	slow := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "slow", Namespace: ns,
		Annotations: map[string]string{kube.BehaviourAnnotationPrefix + "app": "ignore-sigterm 4s"}},
		Spec: webTemplate(nil, nil, corev1.RestartPolicyAlways).Spec}
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, slow, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "slow Running", time.Minute, func(ctx context.Context) (bool, error) {
		pod, err := admin.CoreV1().Pods(ns).Get(ctx, "slow", metav1.GetOptions{})
		return err == nil && pod.Status.Phase == corev1.PodRunning, err
	})
	start := time.Now()
	if out, err := p.Kubectl(ctx, controlplane.Admin, "delete", "pod", "slow", "-n", ns, "--wait=false"); err != nil {
		t.Fatalf("kubectl delete: %v\n%s", err, out)
	}
	out, err := p.Kubectl(ctx, controlplane.Admin, "get", "pod", "slow", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	if header, rows := kubectlTable(t, out); rows["slow"] == nil || rows["slow"][header["STATUS"]] != "Terminating" {
		t.Fatalf("kubectl shows the deleted pod Terminating:\n%s", out)
	}
	waitFor(t, "slow gone", time.Minute, func(ctx context.Context) (bool, error) {
		_, err := admin.CoreV1().Pods(ns).Get(ctx, "slow", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if d := time.Since(start); d > 10*time.Second || d < 4*time.Second {
		t.Errorf("slow was gone after %v: want after its 4 s of ignoring SIGTERM and within its 10 s grace", d)
	}
}
