package main

import (
	"bytes"
	"context"
	"errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nodestate/nodestate/vk"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestFlags: the command refuses a missing kubeconfig and bad values
// before it talks to any cluster.
func TestFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "--kubeconfig is required"},
		{[]string{"--kubeconfig", "x", "--workers", "0"}, "--workers 0"},
		{[]string{"--kubeconfig", "/nonexistent/kubeconfig"}, "nonexistent"},
		{[]string{"--no-such-flag"}, "no-such-flag"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), tt.args, &out)
		if err == nil || !strings.Contains(err.Error()+out.String(), tt.want) {
			t.Errorf("%v: %v\n%s", tt.args, err, out.String())
		}
	}
	opts := vk.DefaultOptions()
	opts.Name = "Bad_Name"
	if err := runNode(context.Background(), opts, fake.NewClientset(), 1); !errors.Is(err, vk.ErrInvalidOptions) {
		t.Errorf("a bad node name: %v", err)
	}
}

// TestRunNode: the command's node, on virtual-kubelet's controllers
// against a fake clientset, registers its Node, runs a pod bound to it on
// the simulated runtime, and stops when its context ends.
func TestRunNode(t *testing.T) {
	client := fake.NewClientset()
	opts := vk.DefaultOptions()
	opts.Name, opts.Runner.PodCIDR, opts.Logger = "vk-cmd", "10.244.7.0/24", logr.Discard()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runNode(ctx, opts, client, 1) }()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "default", UID: "u-job",
		Annotations: map[string]string{"sim.nodestate.io/app": "run 1s exit 0"}},
		Spec: v1.PodSpec{NodeName: "vk-cmd", RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "app", Image: "busybox"}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *v1.Pod
	var node *v1.Node
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		got, _ = client.CoreV1().Pods("default").Get(ctx, "job", metav1.GetOptions{})
		node, _ = client.CoreV1().Nodes().Get(ctx, "vk-cmd", metav1.GetOptions{})
		return got != nil && got.Status.Phase == v1.PodSucceeded && got.Status.PodIP == "10.244.7.2" && node != nil && node.Spec.PodCIDR == "", nil
	}); err != nil {
		t.Fatalf("the pod did not succeed on the node: %+v %+v", got, node)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("runNode: %v", err)
	}
}
