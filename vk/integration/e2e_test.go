package integration

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podphase"
)

// The two nodes' pod CIDRs.
var cidrs = map[string]string{vkNode: "10.244.31.0/24", kubeNode: "10.244.32.0/24"}

// suffix names a workload's copy on a node: "-vk" or "-kube".
func suffix(node string) string { return "-" + strings.TrimSuffix(node, "-e2e") }

// template is a pod template pinned to node: one container with an exec
// readiness probe every second, 10 s of grace.
func template(node string, labels, annotations map[string]string, policy corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{RestartPolicy: policy, TerminationGracePeriodSeconds: ptr.To[int64](10),
			NodeSelector: map[string]string{corev1.LabelHostname: node},
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1",
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 1}}}},
	}
}

// TestWorkloadsUnderVirtualKubelet: virtual-kubelet's own pod and node
// controllers with the nodestate provider, on a node authenticated as
// system:node:vk-e2e (Node authorization, NodeRestriction), beside a
// kube.Node, both on the real controller manager and scheduler. Each
// workload runs once on each node: a Deployment with an exec readiness
// probe becomes Available, a Job Completes, a pod with an init container
// runs after it, a crash-looping container follows the kubelet's display
// (Error after each crash from the second on until its back-off expires,
// then the restart, restarts counting up), a pod with a preStop hook whose
// container ignores SIGTERM is Terminating until both are done within its
// grace and is then gone; the real kubectl's `get pods -o wide` shows the
// same STATUS, READY, RESTARTS, IP pattern and NODE for both copies, and
// the kubelet's events are the same.
func TestWorkloadsUnderVirtualKubelet(t *testing.T) {
	p := needPlane(t)
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, admin)
	ctx := context.Background()
	prov := runVKNode(t, p, vkNode, cidrs[vkNode])
	runKubeNode(t, p, kubeNode, cidrs[kubeNode])
	nodes := []string{vkNode, kubeNode}
	waitFor(t, "both nodes Ready", time.Minute, func(ctx context.Context) (bool, error) {
		for _, n := range nodes {
			node, err := admin.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			if c := nodeCondition(node, corev1.NodeReady); c == nil || c.Status != corev1.ConditionTrue {
				return false, nil
			}
		}
		return true, nil
	})
	rec := newRecorder(t, admin, ns)

	for _, n := range nodes {
		s := suffix(n)
		labels := map[string]string{"app": "web" + s}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web" + s, Namespace: ns},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: template(n, labels, nil, corev1.RestartPolicyAlways)}}
		if _, err := admin.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job" + s, Namespace: ns},
			Spec: batchv1.JobSpec{Template: template(n, nil, map[string]string{simruntime.AnnotationPrefix + "app": "run 2s exit 0"}, corev1.RestartPolicyNever)}}
		if _, err := admin.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		init := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "init" + s, Namespace: ns,
			Annotations: map[string]string{simruntime.AnnotationPrefix + "setup": "run 2s exit 0"}},
			Spec: template(n, nil, nil, corev1.RestartPolicyAlways).Spec}
		init.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "registry.example/setup:1"}}
		// The pods whose events are compared have images of their own:
		// started beside the Deployment's and the Job's, whether a pod
		// pulls the shared image or finds it present is chance (seen in CI:
		// slow-kube pulled it, slow-vk found it present).
		init.Spec.Containers[0].Image = "registry.example/init-app:1"
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, init, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		slow := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "slow" + s, Namespace: ns,
			Annotations: map[string]string{simruntime.AnnotationPrefix + "app": "prestop 2s; ignore-sigterm 3s"}},
			Spec: template(n, nil, nil, corev1.RestartPolicyAlways).Spec}
		slow.Spec.Containers[0].Image = "registry.example/slow:1"
		slow.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"drain"}}}}
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, slow, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("Deployment Available", func(t *testing.T) {
		for _, n := range nodes {
			name := "web" + suffix(n)
			waitFor(t, name+" Available with 2 ready replicas", 2*time.Minute, func(ctx context.Context) (bool, error) {
				d, err := admin.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				for _, c := range d.Status.Conditions {
					if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
						return d.Status.AvailableReplicas == 2 && d.Status.ReadyReplicas == 2, nil
					}
				}
				return false, nil
			})
		}
	})
	t.Run("Job Complete", func(t *testing.T) {
		for _, n := range nodes {
			name := "job" + suffix(n)
			waitFor(t, name+" Complete", 2*time.Minute, func(ctx context.Context) (bool, error) {
				j, err := admin.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				for _, c := range j.Status.Conditions {
					if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
						return j.Status.Succeeded == 1, nil
					}
				}
				return false, nil
			})
		}
	})
	t.Run("init container", func(t *testing.T) {
		for _, n := range nodes {
			name := "init" + suffix(n)
			waitFor(t, name+" Running after its init container completed", time.Minute, func(ctx context.Context) (bool, error) {
				pod, err := admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil || len(pod.Status.InitContainerStatuses) != 1 {
					return false, err
				}
				ic := pod.Status.InitContainerStatuses[0]
				c := findCondition(pod, corev1.PodInitialized)
				return pod.Status.Phase == corev1.PodRunning && c != nil && c.Status == corev1.ConditionTrue &&
					ic.State.Terminated != nil && ic.State.Terminated.Reason == "Completed" && ic.State.Terminated.ExitCode == 0, nil
			})
			if seen := rec.statuses(name); !slices.Contains(seen, "Init:0/1") || seen[len(seen)-1] != "Running" {
				t.Errorf("%s showed %v, want Init:0/1 before Running", name, seen)
			}
		}
		t.Logf("init-vk: %v; init-kube: %v", rec.timeline("init-vk"), rec.timeline("init-kube"))
		if a, b := rec.settled("init-vk"), rec.settled("init-kube"); !slices.Equal(a, b) {
			t.Errorf("the init pod's STATUS over time: under virtual-kubelet %v, on a kube.Node %v", a, b)
		}
	})

	// The crash-looping pods start together, so that both are in the same
	// back-off window when kubectl looks.
	for _, n := range nodes {
		crash := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "crash" + suffix(n), Namespace: ns,
			Annotations: map[string]string{simruntime.AnnotationPrefix + "app": "run 3s exit 1"}},
			Spec: template(n, nil, nil, corev1.RestartPolicyAlways).Spec}
		crash.Spec.Containers[0].ReadinessProbe = nil
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, crash, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("crash loop", func(t *testing.T) {
		// Up to the fourth crash: crashes at 3, 6, 19 to 24 and 42 to 57 s,
		// the back-offs after the second and third 10 s and 20 s, each
		// jittered by up to half.
		for _, n := range nodes {
			name := "crash" + suffix(n)
			waitFor(t, name+"'s fourth crash", 90*time.Second, func(ctx context.Context) (bool, error) {
				pod, err := admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil || len(pod.Status.ContainerStatuses) != 1 {
					return false, err
				}
				cs := pod.Status.ContainerStatuses[0]
				return cs.RestartCount >= 3 && cs.State.Terminated != nil, nil
			})
		}
		for _, n := range nodes {
			tl := rec.timeline("crash" + suffix(n))
			t.Logf("crash%s: %v", suffix(n), tl)
			checkCrashLoop(t, tl)
			// The kubelet's BackOff event of each back-off (written by the
			// broadcaster's goroutine).
			waitFor(t, "crash"+suffix(n)+"'s BackOff event", 20*time.Second, func(context.Context) (bool, error) {
				return slices.Contains(kubeletEvents(t, admin, ns, "crash"+suffix(n)), "Warning BackOff spec.containers{app}"), nil
			})
		}
	})
	t.Run("kubectl columns", func(t *testing.T) {
		// A quiet moment: the crash loops in the 40 s back-off after their
		// fourth crash.
		compareColumns(t, p, admin, ns)
	})
	t.Run("events", func(t *testing.T) {
		for _, w := range []string{"init", "slow", "crash"} {
			a, b := kubeletEvents(t, admin, ns, w+"-vk"), kubeletEvents(t, admin, ns, w+"-kube")
			if !slices.Equal(a, b) {
				t.Errorf("%s's kubelet events (type reason fieldPath):\nunder virtual-kubelet %v\non a kube.Node        %v", w, a, b)
			}
		}
	})
	t.Run("graceful delete", func(t *testing.T) {
		defer func() { t.Logf("slow-vk: %v; slow-kube: %v", rec.timeline("slow-vk"), rec.timeline("slow-kube")) }()
		var wg sync.WaitGroup
		took := map[string]time.Duration{}
		var mu sync.Mutex
		for _, n := range nodes {
			name := "slow" + suffix(n)
			start := time.Now()
			if out, err := p.Kubectl(ctx, controlplane.Admin, "delete", "pod", name, "-n", ns, "--wait=false"); err != nil {
				t.Fatalf("kubectl delete: %v\n%s", err, out)
			}
			out, err := p.Kubectl(ctx, controlplane.Admin, "get", "pod", name, "-n", ns)
			if err != nil {
				t.Fatal(err)
			}
			if header, rows := kubectlTable(t, out); rows[name] == nil || rows[name][header["STATUS"]] != "Terminating" {
				t.Errorf("kubectl shows the deleted pod %s Terminating:\n%s", name, out)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				waitFor(t, name+" gone", 30*time.Second, func(ctx context.Context) (bool, error) {
					_, err := admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
					return apierrors.IsNotFound(err), nil
				})
				mu.Lock()
				took[name] = time.Since(start)
				mu.Unlock()
			}()
		}
		wg.Wait()
		for name, d := range took {
			// 2 s of preStop hook, then 3 s of SIGTERM ignored, within 10 s.
			if d < 5*time.Second || d > 9*time.Second {
				t.Errorf("%s was gone after %v: want after its 2 s preStop hook and 3 s of ignoring SIGTERM, within its 10 s grace", name, d)
			}
		}
		for _, name := range []string{"slow-vk", "slow-kube"} {
			tl := rec.timeline(name)
			if len(tl) == 0 || tl[len(tl)-1].status != "Error" {
				t.Errorf("%s's last status before it was deleted: %v, want Error (exit 143 after SIGTERM)", name, tl)
			}
		}
		if a, b := kubeletEvents(t, admin, ns, "slow-vk"), kubeletEvents(t, admin, ns, "slow-kube"); !slices.Equal(a, b) {
			t.Errorf("the deleted pod's kubelet events:\nunder virtual-kubelet %v\non a kube.Node        %v", a, b)
		}
	})
	st := prov.Stats()
	t.Logf("provider: %d created, %d statuses notified (%d resent), %d finished pods deleted, %d node reports; runner: %d steps; events: %d submitted",
		st.Created, st.Notified, st.Resent, st.PodsDeleted, st.NodeReports, st.Runner.Steps, st.Events.Submitted)
	if st.DeleteErrors != 0 || st.RuntimePanics != 0 || st.RuntimeTimeouts != 0 || st.Runner.StatusErrors != 0 || st.Runner.StepErrors != 0 {
		t.Errorf("the provider failed somewhere: %+v", st)
	}
}

// checkCrashLoop checks a crash-looping container's STATUS over time
// against the kubelet's rule (podrunner's TestCrashLoopDisplay): the first
// crash is restarted at once; after each later crash the pod shows Error
// until the back-off (10 s, then 20 s) expires; CrashLoopBackOff only in
// the status of the sync that restarts it, which the next write replaces
// with Running; RESTARTS counts up by one at each restart.
func checkCrashLoop(t *testing.T, tl []shown) {
	t.Helper()
	var errorSince time.Time
	restarts := int32(0)
	backOff := map[int32]time.Duration{1: 10 * time.Second, 2: 20 * time.Second}
	for i, s := range tl {
		if s.restarts < restarts || s.restarts > restarts+1 {
			t.Fatalf("RESTARTS went from %d to %d: %v", restarts, s.restarts, tl)
		}
		if s.restarts == restarts+1 {
			if want, ok := backOff[restarts]; ok {
				if errorSince.IsZero() {
					t.Fatalf("restart %d without an Error shown before it: %v", s.restarts, tl)
				}
				// The crash is shown up to a relist period (1 s) after the
				// exit the back-off counts from, and the restart comes at
				// the back-off's end plus up to half of it (the pod
				// worker's jitter, as on a kubelet).
				if d := s.at.Sub(errorSince); d < want-2*time.Second || d > want*3/2+2*time.Second {
					t.Errorf("restart %d came %v after the crash was shown, want its %v back-off plus up to half of it: %v", s.restarts, d, want, tl)
				}
			}
			errorSince = time.Time{}
			restarts = s.restarts
		}
		switch s.status {
		case "Error":
			if errorSince.IsZero() {
				errorSince = s.at
			}
		case "CrashLoopBackOff":
			// Only in the restarting sync's status: the next one runs.
			if i+1 < len(tl) && tl[i+1].status != "Running" {
				t.Errorf("CrashLoopBackOff not followed by the restart: %v", tl)
			}
		case "Running", "ContainerCreating", "Pending":
		default:
			t.Errorf("unexpected STATUS %q: %v", s.status, tl)
		}
	}
	if restarts < 3 {
		t.Errorf("restarts seen up to %d, want 3: %v", restarts, tl)
	}
}

// compareColumns compares, for each workload, the rows kubectl get pods
// -o wide shows for its copy on each node: STATUS, READY, RESTARTS (the
// count) and NODE equal to podphase.Columns and to each other's, the IP in
// the node's pod CIDR.
func compareColumns(t *testing.T, p *controlplane.Plane, admin kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	out, err := p.Kubectl(ctx, controlplane.Admin, "get", "pods", "-o", "wide", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl get pods -o wide:\n%s", out)
	header, rows := kubectlTable(t, out)
	byWorkload := map[string]map[string][]string{} // workload -> node -> rows
	for name, row := range rows {
		node := row[header["NODE"]]
		s := suffix(node)
		i := strings.Index(name, s)
		if i < 0 {
			t.Errorf("pod %s is on node %s:\n%s", name, node, out)
			continue
		}
		w := name[:i]
		ip, err := netip.ParseAddr(row[header["IP"]])
		if err != nil || !netip.MustParsePrefix(cidrs[node]).Contains(ip) {
			t.Errorf("pod %s's IP %q is not in node %s's pod CIDR %s", name, row[header["IP"]], node, cidrs[node])
		}
		restarts, _, _ := strings.Cut(row[header["RESTARTS"]], " ")
		cols := row[header["READY"]] + " " + row[header["STATUS"]] + " " + restarts
		pod, err := admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if want, _ := podphase.Columns(pod, time.Now()); want.Ready+" "+want.Status+" "+strings.SplitN(want.Restarts, " ", 2)[0] != cols {
				t.Logf("%s: kubectl %q, podphase %+v (the pod changed in between?)", name, cols, want)
			}
		}
		if byWorkload[w] == nil {
			byWorkload[w] = map[string][]string{}
		}
		byWorkload[w][node] = append(byWorkload[w][node], cols)
	}
	for w, perNode := range byWorkload {
		a, b := perNode[vkNode], perNode[kubeNode]
		sort.Strings(a)
		sort.Strings(b)
		if !slices.Equal(a, b) {
			t.Errorf("%s: kubectl shows READY STATUS RESTARTS under virtual-kubelet %q, on a kube.Node %q\n%s", w, a, b, out)
		}
	}
	if len(byWorkload) != 5 {
		t.Errorf("workloads in kubectl's table: %v, want web, job, init, slow, crash\n%s", byWorkload, out)
	}
}

// kubeletEvents returns the kubelet's events of pod name (not the
// scheduler's nor virtual-kubelet's own), as "type reason fieldPath",
// sorted, each once.
func kubeletEvents(t *testing.T, admin kubernetes.Interface, ns, name string) []string {
	t.Helper()
	evs, err := admin.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Items {
		if e.InvolvedObject.Name != name || e.Source.Component != "kubelet" {
			continue
		}
		s := e.Type + " " + e.Reason + " " + e.InvolvedObject.FieldPath
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// shown is one STATUS a pod showed, from when.
type shown struct {
	at       time.Time
	status   string
	restarts int32
}

func (s shown) String() string {
	return fmt.Sprintf("%s/%d@%s", s.status, s.restarts, s.at.Format("05.0"))
}

// recorder watches a namespace's pods and keeps each pod's STATUS and
// restart count over time, one entry per change.
type recorder struct {
	mu   sync.Mutex
	seen map[string][]shown
}

func newRecorder(t *testing.T, admin kubernetes.Interface, ns string) *recorder {
	t.Helper()
	w, err := admin.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{seen: map[string][]shown{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			s := shown{at: time.Now(), status: podphase.DisplayStatus(pod)}
			for _, c := range pod.Status.ContainerStatuses {
				s.restarts += c.RestartCount
			}
			r.mu.Lock()
			l := r.seen[pod.Name]
			if len(l) == 0 || l[len(l)-1].status != s.status || l[len(l)-1].restarts != s.restarts {
				r.seen[pod.Name] = append(l, s)
			}
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return r
}

// timeline returns what pod name showed so far.
func (r *recorder) timeline(name string) []shown {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen[name])
}

// settled returns the STATUS values pod name showed for a relist period
// (1 s) or more, in order, each change once: a status the node replaced
// within the period (PodInitializing between an init container's exit and
// the start of the container after it) may or may not reach the API
// server, on a kubelet as on either node, as its status manager writes it
// or only its successor.
func (r *recorder) settled(name string) []string {
	tl := r.timeline(name)
	var out []string
	for i, s := range tl {
		if i+1 < len(tl) && tl[i+1].at.Sub(s.at) < time.Second {
			continue
		}
		if len(out) == 0 || out[len(out)-1] != s.status {
			out = append(out, s.status)
		}
	}
	return out
}

// statuses returns the STATUS values pod name showed, in order, each
// change once.
func (r *recorder) statuses(name string) []string {
	var out []string
	for _, s := range r.timeline(name) {
		if len(out) == 0 || out[len(out)-1] != s.status {
			out = append(out, s.status)
		}
	}
	return out
}

func findCondition(pod *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == typ {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func nodeCondition(node *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == typ {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}
