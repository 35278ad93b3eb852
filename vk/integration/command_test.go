package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

// The node the command runs as.
const cmdNode = "vk-cmd"

// TestCommand: vknode, built and run with the node's own kubeconfig,
// registers its Node Ready, runs a pod bound to it to Succeeded with an IP
// from --pod-cidr and --address as host IP, and exits cleanly on SIGINT.
func TestCommand(t *testing.T) {
	p := needPlane(t)
	admin, err := p.Client(controlplane.Admin)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "vknode")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/vknode").CombinedOutput(); err != nil {
		t.Fatalf("building vknode: %v\n%s", err, out)
	}
	kubeconfig, err := p.Kubeconfig(controlplane.NodeUser(cmdNode))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--node", cmdNode, "--pod-cidr", "10.244.33.0/24", "--address", "127.0.0.3")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	ns := namespace(t, admin)
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns,
		Annotations: map[string]string{simruntime.AnnotationPrefix + "app": "run 1s exit 0"}},
		Spec: corev1.PodSpec{NodeName: cmdNode, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pod Succeeded on the command's node", time.Minute, func(ctx context.Context) (bool, error) {
		got, err := admin.CoreV1().Pods(ns).Get(ctx, "once", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodSucceeded && got.Status.PodIP == "10.244.33.2" && got.Status.HostIP == "127.0.0.3", err
	})
	node, err := admin.CoreV1().Nodes().Get(ctx, cmdNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := nodeCondition(node, corev1.NodeReady); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "KubeletReady" {
		t.Errorf("the command's node: %+v", node.Status.Conditions)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("vknode exited with %v after SIGINT:\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		t.Fatalf("vknode did not exit within 20 s of SIGINT:\n%s", out.String())
	}
}
