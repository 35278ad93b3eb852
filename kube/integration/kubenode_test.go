package integration

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
)

// runNode runs a kube.Node called name as system:node:<name> until the test
// ends.
func runNode(t *testing.T, name string, edit ...func(*kube.Options)) *kube.Node {
	t.Helper()
	cs, _ := client(t, controlplane.NodeUser(name))
	opts := kube.DefaultOptions(name)
	for _, e := range edit {
		e(&opts)
	}
	return startNode(t, cs, opts)
}

// startNode runs a kube.Node with opts through cs until the test ends.
func startNode(t *testing.T, cs kubernetes.Interface, opts kube.Options) *kube.Node {
	t.Helper()
	n, stop := startStoppableNode(t, cs, opts)
	t.Cleanup(func() {
		if err := stop(); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("node %s: %v", opts.Name, err)
		}
	})
	return n
}

// startStoppableNode runs a kube.Node with opts through cs until stop is
// called or the test ends; stop ends it and returns what Run returned.
func startStoppableNode(t *testing.T, cs kubernetes.Interface, opts kube.Options) (*kube.Node, func() error) {
	t.Helper()
	n, err := kube.NewNode(opts, cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	var once sync.Once
	var result error
	stop := func() error {
		once.Do(func() { cancel(); result = <-done })
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return n, stop
}

// buildCommand builds kube/cmd/<name> into a temporary directory and
// returns the binary's path.
func buildCommand(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/"+name).CombinedOutput(); err != nil {
		t.Fatalf("building the command: %v\n%s", err, out)
	}
	return bin
}

// startCommand runs bin with args until interrupt is called, which sends it
// SIGINT and returns what it printed and how it exited; a command still
// running when the test ends is killed.
func startCommand(t *testing.T, bin string, args ...string) (interrupt func() (string, error)) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	var err error
	stop := func(sig os.Signal) func() {
		return func() {
			once.Do(func() {
				if serr := cmd.Process.Signal(sig); serr != nil {
					err = serr
					_ = cmd.Process.Kill()
				}
				if werr := <-exited; err == nil {
					err = werr
				}
			})
		}
	}
	t.Cleanup(stop(os.Kill))
	return func() (string, error) {
		stop(os.Interrupt)()
		return out.String(), err
	}
}

func boundPod(ns, name, node string, policy corev1.RestartPolicy, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: policy, TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1",
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}}}}}
}

func getPod(t *testing.T, cs kubernetes.Interface, ns, name string) *corev1.Pod {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNodeRunsBoundPods: a kube.Node, authenticated as its node identity under
// Node authorization and NodeRestriction, registers itself Ready, renews its
// Lease, and runs the pods bound to it: a long-running pod becomes Running
// and Ready with an IP from the node's pod CIDR, a pod whose container exits
// 0 under restartPolicy Never ends Succeeded, a pod that does not fit is
// rejected as the kubelet rejects it, and a deleted pod is gone once its
// containers stopped.
func TestNodeRunsBoundPods(t *testing.T) {
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	ctx := context.Background()
	n := runNode(t, node3)

	eventually(t, "node-3 registered Ready with its lease", func() bool {
		node, err := admin.CoreV1().Nodes().Get(ctx, node3, metav1.GetOptions{})
		if err != nil {
			return false
		}
		ready := findNodeCond(node.Status.Conditions, corev1.NodeReady)
		_, lerr := admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node3, metav1.GetOptions{})
		return ready != nil && ready.Status == corev1.ConditionTrue && lerr == nil &&
			node.Status.NodeInfo.KubeletVersion == kube.KubeletVersion && node.Status.DaemonEndpoints.KubeletEndpoint.Port == 10250
	})

	web, err := admin.CoreV1().Pods(ns).Create(ctx, boundPod(ns, "web", node3, corev1.RestartPolicyAlways, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job, err := admin.CoreV1().Pods(ns).Create(ctx, boundPod(ns, "job", node3, corev1.RestartPolicyNever,
		map[string]string{kube.BehaviourAnnotationPrefix + "app": "run 1s exit 0"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	big := boundPod(ns, "big", node3, corev1.RestartPolicyAlways, nil)
	big.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100")}
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cidr := netip.MustParsePrefix(kube.DefaultOptions(node3).PodCIDR)
	eventually(t, "web Running and Ready with a pod IP", func() bool {
		p := getPod(t, admin, ns, "web")
		ready := findCond(p.Status.Conditions, corev1.PodReady)
		ip, err := netip.ParseAddr(p.Status.PodIP)
		return p.Status.Phase == corev1.PodRunning && ready != nil && ready.Status == corev1.ConditionTrue &&
			err == nil && cidr.Contains(ip) && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	eventually(t, "job Succeeded", func() bool {
		p := getPod(t, admin, ns, "job")
		return p.Status.Phase == corev1.PodSucceeded && p.Status.ContainerStatuses[0].State.Terminated != nil &&
			p.Status.ContainerStatuses[0].State.Terminated.Reason == "Completed"
	})
	eventually(t, "big rejected OutOfcpu", func() bool {
		p := getPod(t, admin, ns, "big")
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == kube.ReasonOutOfCPU &&
			p.Status.Message == "Pod was rejected: Node didn't have enough resource: cpu, requested: 100000, used: 0, capacity: 4000"
	})
	eventually(t, "the kubelet's events for web and big", func() bool {
		list, err := admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		seen := map[string]bool{}
		for _, e := range list.Items {
			if e.Source.Component != "kubelet" || e.Source.Host != node3 {
				continue
			}
			switch {
			case e.InvolvedObject.Name == "web" && e.InvolvedObject.FieldPath == "spec.containers{app}":
				seen["web/"+e.Reason] = true
			case e.InvolvedObject.Name == "big" && e.Type == corev1.EventTypeWarning:
				seen["big/"+e.Reason] = true
			}
		}
		return seen["web/Pulling"] && seen["web/Pulled"] && seen["web/Created"] && seen["web/Started"] && seen["big/"+kube.ReasonOutOfCPU]
	})

	if err := admin.CoreV1().Pods(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "web gone after its graceful deletion", func() bool {
		_, err := admin.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	list, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "job").String()})
	if err != nil || len(list.Items) != 1 || list.Items[0].UID != job.UID {
		t.Fatalf("the finished job pod stays (no deletion asked): %v %v", list, err)
	}
	st := n.Stats()
	if st.Admitted != 2 || st.Rejected != 1 || st.Finished != 2 || st.Running != 0 || st.NodeReports == 0 || st.LeaseRenewals == 0 {
		t.Fatalf("stats %+v: want 2 admitted (web, job), 1 rejected (big), both finished", st)
	}
	_ = web
}

func findNodeCond(cs []corev1.NodeCondition, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// TestNodeCommand runs kube/cmd/node with node-4's own kubeconfig: the node
// registers, runs a pod bound to it, and stops cleanly on SIGINT.
func TestNodeCommand(t *testing.T) {
	p := needPlane(t)
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	kubeconfig, err := p.Kubeconfig(controlplane.NodeUser(node4))
	if err != nil {
		t.Fatal(err)
	}
	bin := buildCommand(t, "node")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	interrupt := startCommand(t, bin, "--kubeconfig", kubeconfig, "--node", node4, "--pod-cidr", "10.244.4.0/24", "--port", strconv.Itoa(port))
	ctx := context.Background()
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, boundPod(ns, "web", node4, corev1.RestartPolicyAlways, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the command's node runs web", func() bool {
		p := getPod(t, admin, ns, "web")
		return p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Status.PodIP, "10.244.4.")
	})
	if logs, err := p.Kubectl(ctx, controlplane.Admin, "logs", "web", "-n", ns); err != nil || !strings.Contains(string(logs), "container app of pod "+ns+"/web started") {
		t.Fatalf("kubectl logs of the command's pod: %v\n%s", err, logs)
	}
	out, err := interrupt()
	if err != nil {
		t.Fatalf("node command: %v\n%s", err, out)
	}
	if !strings.Contains(out, "node node-4: stopped; 1 pods admitted, 0 rejected, 0 finished, 1 running") {
		t.Fatalf("the command's summary:\n%s", out)
	}
}

// TestNodeServes: the node serves kubectl logs through the API server (the
// output of the simulated container, this instance and the one before),
// /healthz, and /metrics with the kubelet's series and nodestate's own,
// scraped and parsed as Prometheus does.
func TestNodeServes(t *testing.T) {
	p := needPlane(t)
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	n := runNode(t, node3, func(o *kube.Options) {
		o.Port = int32(port)
		o.Listen = "127.0.0.1:" + strconv.Itoa(port)
	})
	crash := boundPod(ns, "crash", node3, corev1.RestartPolicyAlways, map[string]string{kube.BehaviourAnnotationPrefix + "app": "run 1s exit 3"})
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, crash, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	big := boundPod(ns, "big", node3, corev1.RestartPolicyAlways, nil)
	big.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Ti")}
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "crash restarted once", func() bool {
		p := getPod(t, admin, ns, "crash")
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	out, err := p.Kubectl(ctx, controlplane.Admin, "logs", "crash", "-n", ns, "--previous")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "nodestate: container app of pod "+ns+"/crash started") || !strings.Contains(string(out), "exiting with code 3") {
		t.Fatalf("kubectl logs --previous shows what the first instance wrote:\n%s", out)
	}

	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 10 * time.Second}
	base := "https://" + n.ServingAddress()
	resp, err := hc.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Fatalf("/healthz: %d %q", resp.StatusCode, body)
	}

	resp, err = hc.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		f := families[name]
		if f == nil {
			return 0, false
		}
	next:
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
		return 0, false
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"kubelet_node_name", map[string]string{"node": node3}, 1},
		{"kubelet_running_pods", nil, 1},
		{"kubelet_started_pods_total", nil, 1},
		{"kubelet_started_containers_total", map[string]string{"container_type": "container"}, 2},
		{"kubelet_pod_start_duration_seconds", nil, 1},
		{"kubelet_pod_status_sync_duration_seconds", nil, 1},
		{"nodestate_status_requests_total", map[string]string{"verb": "patch", "result": "success"}, 1},
		{"nodestate_pod_admissions_total", map[string]string{"result": "rejected", "reason": kube.ReasonOutOfMemory}, 1},
		{"nodestate_events_total", map[string]string{"outcome": "created"}, 1},
	} {
		if v, ok := value(c.name, c.labels); !ok || v < c.min {
			t.Errorf("%s%v = %v (present %v), want at least %v", c.name, c.labels, v, ok, c.min)
		}
	}
	if _, ok := value("kubelet_running_containers", map[string]string{"container_state": "running"}); !ok {
		t.Errorf("kubelet_running_containers{container_state=running} missing")
	}
}

// TestNodeRestartAdoptsPods: a node process that is killed and started again
// adopts the pods bound to it from the API server, as a kubelet does after a
// reboot whose runtime lost its containers: each container is started again
// with its restart count carried on from the API (the lost instance shown as
// ContainerStatusUnknown), the pod's startTime kept, and the pod Running and
// Ready again.
func TestNodeRestartAdoptsPods(t *testing.T) {
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	ctx := context.Background()
	cs, _ := client(t, controlplane.NodeUser(node3))
	first, err := kube.NewNode(kube.DefaultOptions(node3), cs)
	if err != nil {
		t.Fatal(err)
	}
	firstCtx, kill := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.Run(firstCtx) }()
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, boundPod(ns, "web", node3, corev1.RestartPolicyAlways, nil), metav1.CreateOptions{}); err != nil {
		kill()
		<-done
		t.Fatal(err)
	}
	var before *corev1.Pod
	eventually(t, "web Running and Ready", func() bool {
		before = getPod(t, admin, ns, "web")
		ready := findCond(before.Status.Conditions, corev1.PodReady)
		return ready != nil && ready.Status == corev1.ConditionTrue
	})
	kill()
	<-done

	runNode(t, node3)
	eventually(t, "web adopted: restarted once, Running and Ready", func() bool {
		p := getPod(t, admin, ns, "web")
		ready := findCond(p.Status.Conditions, corev1.PodReady)
		if len(p.Status.ContainerStatuses) != 1 || ready == nil || ready.Status != corev1.ConditionTrue {
			return false
		}
		c := p.Status.ContainerStatuses[0]
		return p.Status.Phase == corev1.PodRunning && c.RestartCount == 1 && c.State.Running != nil &&
			c.ContainerID != before.Status.ContainerStatuses[0].ContainerID &&
			c.LastTerminationState.Terminated != nil && c.LastTerminationState.Terminated.Reason == "ContainerStatusUnknown" &&
			p.Status.StartTime.Equal(before.Status.StartTime)
	})
}
