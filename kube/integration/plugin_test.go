package integration

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/kube/internal/explain"
)

var updatePlugin = flag.Bool("update-plugin", false, "rewrite the kubectl-nodestate golden files in testdata")

// buildPlugin builds kubectl-nodestate into a directory it puts first on the
// PATH, where the real kubectl finds it as `kubectl nodestate`.
func buildPlugin(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-nodestate"), "../cmd/kubectl-nodestate").CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

var (
	maskTime     = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	maskIP       = regexp.MustCompile(`\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`)
	maskUID      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	maskDuration = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|m|h|d)(\d+(\.\d+)?s)?\b`)
	maskCount    = regexp.MustCompile(`\(x\d+ over`)
	maskSpaces   = regexp.MustCompile(`  +`)
)

// mask replaces what changes from run to run (times, ages, durations, IPs,
// UIDs, event counts, the namespace and generated names) and collapses the
// alignment that their widths decide.
func mask(out string, names map[string]string) string {
	for from, to := range names {
		out = strings.ReplaceAll(out, from, to)
	}
	out = maskTime.ReplaceAllString(out, "<time>")
	out = maskUID.ReplaceAllString(out, "<uid>")
	out = maskIP.ReplaceAllString(out, "<ip>")
	out = maskCount.ReplaceAllString(out, "(x<n> over")
	out = maskDuration.ReplaceAllString(out, "<d>")
	// A probe that runs between a container's exit and the relist that
	// finds it reports the exited container, as the kubelet's does, or does
	// not, by the probe's phase (docs/faithfulness.md, O5): not in the
	// golden files.
	lines := slices.DeleteFunc(strings.Split(out, "\n"), func(l string) bool {
		return strings.Contains(l, "Unhealthy") && strings.Contains(l, "container is in CONTAINER_EXITED state")
	})
	events := -1
	for i, l := range lines {
		body := strings.TrimLeft(l, " ")
		lines[i] = strings.TrimRight(l[:len(l)-len(body)]+maskSpaces.ReplaceAllString(body, "  "), " ")
		if strings.HasPrefix(l, "Events") {
			events = i + 2 // after the header
		}
	}
	// Events of the same second come in an order the golden file cannot
	// hold; the tests check the order on -o json.
	end := len(lines)
	for end > 0 && lines[end-1] == "" {
		end--
	}
	if events > 0 && events < end {
		slices.Sort(lines[events:end])
	}
	return strings.Join(lines, "\n")
}

func pluginGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updatePlugin {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-plugin to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// TestKubectlPlugin runs kubectl-nodestate through the real kubectl against
// a control plane with the real controller manager and scheduler and a
// kube.Node: on a crash-looping pod (the next attempt estimated from the
// restart count and the last finish), a pod stuck in its init container, a
// finished Job pod, a missing pod (one line, exit code 1) and the node with
// pods of different tolerations (the predicted timeline).
func TestKubectlPlugin(t *testing.T) {
	const node, other = "plugin-1", "plugin-2"
	p := fullPlane(t, node, other)
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespaceWithServiceAccount(t, admin)
	runNodeOn(t, p, node, "10.244.41.0/24")
	// A second healthy node: with every node of the cluster silent the
	// controller would taint and evict nothing.
	runNodeOn(t, p, other, "10.244.42.0/24")
	buildPlugin(t)
	ctx := context.Background()
	names := map[string]string{ns: "<ns>"}
	explainPod := func(t *testing.T, name string, args ...string) string {
		t.Helper()
		out, err := kubectlPlugin(ctx, p, append([]string{"nodestate", "explain", "pod", name, "-n", ns}, args...)...)
		if err != nil {
			t.Fatalf("kubectl nodestate explain pod %s: %v\n%s", name, err, out)
		}
		return string(out)
	}

	t.Run("crash-looping pod", func(t *testing.T) {
		pod := boundPod(ns, "crash", node, corev1.RestartPolicyAlways, map[string]string{kube.BehaviourAnnotationPrefix + "app": "run 1s exit 1"})
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// With two restarts behind it the pod waits 20 s in back-off: long
		// enough to explain it in one state. It shows terminated (Error)
		// meanwhile, as the kubelet does with its default 1 min resync.
		waitFor(t, "crash in back-off after two restarts", 2*time.Minute, func(ctx context.Context) (bool, error) {
			cur, err := admin.CoreV1().Pods(ns).Get(ctx, "crash", metav1.GetOptions{})
			if err != nil || len(cur.Status.ContainerStatuses) == 0 {
				return false, err
			}
			s := cur.Status.ContainerStatuses[0]
			return s.RestartCount == 2 && s.State.Terminated != nil && s.State.Terminated.Reason == "Error", nil
		})
		text := explainPod(t, "crash")
		raw := explainPod(t, "crash", "-o", "json")
		cur := getPod(t, admin, ns, "crash")
		t.Logf("kubectl nodestate explain pod crash:\n%s", text)
		pluginGolden(t, "plugin-pod-crashloop.txt", mask(text, names))

		var r explain.PodReport
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			t.Fatalf("-o json: %v\n%s", err, raw)
		}
		for i := 1; i < len(r.Events); i++ {
			if r.Events[i].LastSeen.Truncate(time.Second).Before(r.Events[i-1].LastSeen.Truncate(time.Second)) {
				t.Errorf("events out of time order: %+v before %+v", r.Events[i-1], r.Events[i])
			}
		}
		s := cur.Status.ContainerStatuses[0]
		if s.RestartCount != 2 {
			t.Skipf("the pod restarted again while explained (%d restarts); the golden output holds", s.RestartCount)
		}
		if r.Phase != "Running" || r.Rule != "Restarting" || len(r.Waits) != 1 {
			t.Fatalf("-o json: phase %s rule %s waits %+v", r.Phase, r.Rule, r.Waits)
		}
		w, finished := r.Waits[0], s.State.Terminated.FinishedAt.Time
		if w.Kind != explain.WaitCrashLoop || !w.Estimate || w.Delay != "20s" || !w.NextAttempt.Equal(finished.Add(20*time.Second)) {
			t.Errorf("the wait: %+v, want crash-loop back-off of 20s until %v", w, finished.Add(20*time.Second))
		}
	})

	t.Run("pod stuck in init", func(t *testing.T) {
		pod := boundPod(ns, "init", node, corev1.RestartPolicyAlways, map[string]string{kube.BehaviourAnnotationPrefix + "migrate": "run 1h exit 0"})
		pod.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "registry.example/migrate:1"}}
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "init's init container running", time.Minute, func(ctx context.Context) (bool, error) {
			cur, err := admin.CoreV1().Pods(ns).Get(ctx, "init", metav1.GetOptions{})
			if err != nil || len(cur.Status.InitContainerStatuses) == 0 {
				return false, err
			}
			return cur.Status.InitContainerStatuses[0].State.Running != nil, nil
		})
		text := explainPod(t, "init")
		t.Logf("kubectl nodestate explain pod init:\n%s", text)
		pluginGolden(t, "plugin-pod-init.txt", mask(text, names))
	})

	t.Run("finished Job pod", func(t *testing.T) {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns},
			Spec: batchv1.JobSpec{Template: webTemplate(nil, map[string]string{kube.BehaviourAnnotationPrefix + "app": "run 1s exit 0"}, corev1.RestartPolicyNever)}}
		if _, err := admin.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var name string
		waitFor(t, "the Job's pod Succeeded", 2*time.Minute, func(ctx context.Context) (bool, error) {
			list, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=once"})
			if err != nil || len(list.Items) != 1 {
				return false, err
			}
			name = list.Items[0].Name
			return list.Items[0].Status.Phase == corev1.PodSucceeded, nil
		})
		names[name] = "once-<id>"
		text := explainPod(t, name)
		t.Logf("kubectl nodestate explain pod %s:\n%s", name, text)
		pluginGolden(t, "plugin-pod-job.txt", mask(text, names))
	})

	t.Run("missing pod", func(t *testing.T) {
		out, err := kubectlPlugin(ctx, p, "nodestate", "explain", "pod", "nope", "-n", ns)
		var exit *exec.ExitError
		if err == nil || !asExit(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("explain of a missing pod: %v, want exit code 1\n%s", err, out)
		}
		want := `error: pod "nope" not found in namespace "` + ns + `"`
		if msg := strings.TrimSpace(lastLine(err.Error())); msg != want {
			t.Errorf("stderr %q, want %q", msg, want)
		}
	})

	t.Run("node", func(t *testing.T) {
		for i, tol := range []*int64{ptr.To[int64](5), nil} {
			pod := boundPod(ns, []string{"five", "forever"}[i], node, corev1.RestartPolicyAlways, nil)
			for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
				pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
					Effect: corev1.TaintEffectNoExecute, TolerationSeconds: tol})
			}
			if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "five and forever Ready", time.Minute, func(ctx context.Context) (bool, error) {
			for _, n := range []string{"five", "forever"} {
				cur, err := admin.CoreV1().Pods(ns).Get(ctx, n, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				if c := findCond(cur.Status.Conditions, corev1.PodReady); c == nil || c.Status != corev1.ConditionTrue {
					return false, nil
				}
			}
			return true, nil
		})
		out, err := kubectlPlugin(ctx, p, "nodestate", "explain", "node", node)
		if err != nil {
			t.Fatalf("kubectl nodestate explain node: %v\n%s", err, out)
		}
		t.Logf("kubectl nodestate explain node %s:\n%s", node, out)
		pluginGolden(t, "plugin-node.txt", mask(string(out), names))
		raw, err := kubectlPlugin(ctx, p, "nodestate", "explain", "node", node, "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var r explain.NodeReport
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("-o json: %v\n%s", err, raw)
		}
		if r.Lease == nil || r.Lease.Holder != node {
			t.Errorf("lease %+v, want one held by %s", r.Lease, node)
		}
		steps := map[string]explain.PredictionStep{}
		for _, s := range r.Prediction.Steps {
			steps[s.Event+" "+s.Subject] = s
		}
		for key, want := range map[string][2]string{
			"condition Ready: True -> Unknown":                     {"50.1s", "54.6s"},
			"taint added node.kubernetes.io/unreachable:NoExecute": {"50.1s", "54.6s"},
			"pod evicted " + ns + "/five":                          {"55.1s", "59.6s"},
		} {
			if s, ok := steps[key]; !ok || s.Earliest != want[0] || s.Latest != want[1] {
				t.Errorf("%s: %+v, want %s..%s", key, s, want[0], want[1])
			}
		}
		if s := steps["pod evicted "+ns+"/forever"]; !s.Never {
			t.Errorf("forever: %+v, want never evicted", s)
		}
	})
}

// kubectlPlugin runs the real kubectl as the administrator with args and
// returns its standard output, and its standard error in the error. The
// kubeconfig comes from $KUBECONFIG: kubectl refuses flags before a
// plugin's name.
func kubectlPlugin(ctx context.Context, p *controlplane.Plane, args ...string) ([]byte, error) {
	kubeconfig, err := p.Kubeconfig(controlplane.Admin)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(p.BinDir, "kubectl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %v: %w\n%s", args, err, stderr.String())
	}
	return out, nil
}

func asExit(err error, target **exec.ExitError) bool {
	for e := err; e != nil; {
		if x, ok := e.(*exec.ExitError); ok {
			*target = x
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
