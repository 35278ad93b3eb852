package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/kube/controlplane"
)

// oracleNode is the node the oracle runs, on a control plane of its own.
const oracleNode = "oracle-1"

// oracleBinary returns the oraclenode binary of $NODESTATE_ORACLE (the
// directory kube/hack/build-oracle.sh prints; make test sets it), skipping
// under -short and failing when it is not set.
func oracleBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no control plane, no oracle node")
	}
	dir := os.Getenv("NODESTATE_ORACLE")
	if dir == "" {
		t.Fatal(`NODESTATE_ORACLE is not set: run make test, or export NODESTATE_ORACLE="$(bash kube/hack/build-oracle.sh)"`)
	}
	bin := filepath.Join(dir, "oraclenode")
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("no executable oraclenode in %s (NODESTATE_ORACLE)", dir)
	}
	return bin
}

// startOracle starts the oracle node as a subprocess with the node's
// identity, and stops it when the test ends; a failed test shows the end
// of its log.
func startOracle(t *testing.T, bin string, plane *controlplane.Plane) {
	t.Helper()
	kubeconfig, err := plane.Kubeconfig(controlplane.NodeUser(oracleNode))
	if err != nil {
		t.Fatal(err)
	}
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := controlplane.StartProcess(oracleNode, filepath.Join(dir, "oraclenode.log"), bin,
		"--kubeconfig", kubeconfig, "--name", oracleNode, "--root-dir", filepath.Join(dir, "root"),
		"--kubelet-port", strconv.Itoa(port), "-v", "2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			b, _ := os.ReadFile(p.LogPath)
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			t.Logf("the end of the oracle node's log:\n%s", b)
		}
	})
}

// TestOracleNode: the real kubelet of v1.37.2 (conformance/oracle) as a node
// of a real control plane, on the CRI runtime that carries out simruntime's
// behaviours. Its Node registers and turns Ready; a pod with an exec
// readiness probe turns Ready with the kubelet's own events; an init
// container runs to completion before the app; a graceful delete of a
// container that ignores SIGTERM takes the grace and ends with exit 137; a
// container that exits 1 after 3 s crash-loops.
func TestOracleNode(t *testing.T) {
	bin := oracleBinary(t)
	if planeErr != nil {
		t.Fatalf("no control plane binaries: %v", planeErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, err := controlplane.StartWith(ctx, binDir, controlplane.Options{Nodes: []string{oracleNode}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	startOracle(t, bin, p)

	waitFor(t, "the oracle's Node to be Ready", 90*time.Second, func(ctx context.Context) (bool, error) {
		n, err := admin.CoreV1().Nodes().Get(ctx, oracleNode, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	n, _ := admin.CoreV1().Nodes().Get(ctx, oracleNode, metav1.GetOptions{})
	if v := n.Status.NodeInfo.KubeletVersion; v != "v1.37.2" {
		t.Errorf("kubeletVersion %q, want v1.37.2 (the build script's ldflags)", v)
	}

	ns := namespace(t, admin)
	// Every pod at once, so that their timelines overlap.
	ready := oraclePod(ns, "ready", "oracle/ready:1", nil)
	ready.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check", "ready"}}},
		PeriodSeconds: 1,
	}
	initPod := oraclePod(ns, "init", "busybox:1.36", nil)
	initPod.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox:1.36"}}
	sigterm := oraclePod(ns, "sigterm", "busybox:1.36", map[string]string{"app": "ignore-sigterm 60s"})
	sigterm.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5)
	crash := oraclePod(ns, "crash", "busybox:1.36", map[string]string{"app": "run 3s exit 1"})
	for _, pod := range []*corev1.Pod{ready, initPod, sigterm, crash} {
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("exec readiness probe", func(t *testing.T) {
		got := waitPod(t, admin, ns, "ready", "Running and Ready", time.Minute, func(p *corev1.Pod) bool {
			return p.Status.Phase == corev1.PodRunning && podCondition(p, corev1.PodReady)
		})
		if cs := got.Status.ContainerStatuses; len(cs) != 1 || !cs[0].Ready || cs[0].ImageID == "" || cs[0].ContainerID == "" {
			t.Errorf("container status %+v, want ready with an imageID and a containerID", cs)
		}
		if got.Status.PodIP == "" {
			t.Error("no pod IP")
		}
		waitEvents(t, admin, ns, "ready", []string{"Pulling", "Pulled", "Created", "Started"}, []string{"Scheduled"})
	})

	t.Run("init container before the app", func(t *testing.T) {
		got := waitPod(t, admin, ns, "init", "the app running", time.Minute, func(p *corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
		})
		ic := got.Status.InitContainerStatuses
		if len(ic) != 1 || ic[0].State.Terminated == nil || ic[0].State.Terminated.ExitCode != 0 || ic[0].State.Terminated.Reason != "Completed" {
			t.Fatalf("init container status %+v, want terminated Completed, exit 0", ic)
		}
		fin, started := ic[0].State.Terminated.FinishedAt, got.Status.ContainerStatuses[0].State.Running.StartedAt
		if started.Before(&fin) {
			t.Errorf("the app started at %v, before the init container finished at %v", started, fin)
		}
		if d := fin.Sub(ic[0].State.Terminated.StartedAt.Time); d < 0 || d > 2*time.Second {
			t.Errorf("the init container ran %v, want about 1 s (simruntime's default)", d)
		}
	})

	t.Run("graceful delete ignoring SIGTERM", func(t *testing.T) {
		waitPod(t, admin, ns, "sigterm", "Running", time.Minute, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		w, err := admin.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "sigterm").String()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		start := time.Now()
		if err := admin.CoreV1().Pods(ns).Delete(ctx, "sigterm", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		var last *corev1.ContainerStateTerminated
		var killedAfter time.Duration
		deadline := time.After(40 * time.Second)
		for deleted := false; !deleted; {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("the watch ended before the pod was deleted")
				}
				pod, _ := ev.Object.(*corev1.Pod)
				if ev.Type == apiwatch.Deleted {
					deleted = true
				} else if pod != nil && len(pod.Status.ContainerStatuses) == 1 && pod.Status.ContainerStatuses[0].State.Terminated != nil && last == nil {
					last, killedAfter = pod.Status.ContainerStatuses[0].State.Terminated, time.Since(start)
				}
			case <-deadline:
				t.Fatal("the pod was not deleted within 40 s")
			}
		}
		if last == nil || last.ExitCode != 137 {
			t.Fatalf("last state before the deletion %+v, want terminated with exit 137", last)
		}
		if killedAfter < 5*time.Second || killedAfter > 15*time.Second {
			t.Errorf("the container stopped %v after the delete, want the 5 s grace", killedAfter)
		}
		waitEvents(t, admin, ns, "sigterm", []string{"Killing"}, nil)
	})

	t.Run("crash loop", func(t *testing.T) {
		got := waitPod(t, admin, ns, "crash", "a restart after an exit 1", time.Minute, func(p *corev1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].LastTerminationState.Terminated != nil
		})
		if lt := got.Status.ContainerStatuses[0].LastTerminationState.Terminated; lt.ExitCode != 1 || lt.Reason != "Error" {
			t.Errorf("last termination %+v, want exit 1, reason Error", lt)
		}
		// The second exit: the kubelet records BackOff and holds the
		// restart. With the default syncFrequency of 1m the pod worker
		// syncs the pod again only when the back-off ends, so the status
		// shows the terminated instance until then; a sync during the
		// back-off (any update of the pod gives one) shows it waiting in
		// CrashLoopBackOff.
		waitPod(t, admin, ns, "crash", "the second exit", time.Minute, func(p *corev1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Terminated != nil && cs[0].State.Terminated.ExitCode == 1
		})
		waitEvents(t, admin, ns, "crash", []string{"BackOff"}, nil)
		patch := []byte(`{"metadata":{"annotations":{"test.nodestate.io/poke":"1"}}}`)
		if _, err := admin.CoreV1().Pods(ns).Patch(ctx, "crash", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPod(t, admin, ns, "crash", "waiting in CrashLoopBackOff", 20*time.Second, func(p *corev1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CrashLoopBackOff"
		})
		waitPod(t, admin, ns, "crash", "the second restart", time.Minute, func(p *corev1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].RestartCount >= 2
		})
	})
}

// oraclePod is a pod bound to the oracle node with one container "app" of
// image and the given behaviour annotations ("container": "clauses").
func oraclePod(ns, name, image string, behaviours map[string]string) *corev1.Pod {
	ann := map[string]string{}
	for c, clauses := range behaviours {
		ann["sim.nodestate.io/"+c] = clauses
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: ann},
		Spec: corev1.PodSpec{NodeName: oracleNode, Containers: []corev1.Container{{Name: "app", Image: image}},
			TerminationGracePeriodSeconds: ptr.To[int64](30)},
	}
}

// waitPod polls pod name until cond holds and returns it.
func waitPod(t *testing.T, c kubernetes.Interface, ns, name, what string, timeout time.Duration, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	waitFor(t, name+": "+what, timeout, func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = p
		return cond(p), nil
	})
	return got
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitEvents waits until pod name has events of every reason in want, and
// then checks it has none of the reasons in absent.
func waitEvents(t *testing.T, c kubernetes.Interface, ns, name string, want, absent []string) {
	t.Helper()
	var reasons map[string]string
	waitFor(t, fmt.Sprintf("%s: events %v", name, want), 30*time.Second, func(ctx context.Context) (bool, error) {
		evs, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String()})
		if err != nil {
			return false, err
		}
		reasons = map[string]string{}
		for _, e := range evs.Items {
			reasons[e.Reason] = e.Source.Component + ": " + e.Message
		}
		for _, r := range want {
			if _, ok := reasons[r]; !ok {
				return false, nil
			}
		}
		return true, nil
	})
	for _, r := range want {
		if src := reasons[r]; !strings.HasPrefix(src, "kubelet: ") {
			t.Errorf("event %s from %q, want the kubelet", r, src)
		}
	}
	for _, r := range absent {
		if m, ok := reasons[r]; ok {
			t.Errorf("event %s (%s), want none", r, m)
		}
	}
}
