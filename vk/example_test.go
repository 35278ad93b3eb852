package vk_test

import (
	"context"
	"fmt"
	"k8s.io/apimachinery/pkg/util/wait"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/vk"
)

// instant is a user's own runtime: every container starts at once, runs
// until it is killed and passes its probes.
type instant struct{ due []podlifecycle.Observation }

func (r *instant) Do(now time.Time, actions []podlifecycle.Action) error {
	for _, a := range actions {
		o := podlifecycle.Observation{At: now, Container: a.Container, ContainerID: a.ContainerID, Attempt: a.Attempt}
		switch a.Kind {
		case podlifecycle.CreateSandbox:
			o.Kind = podlifecycle.SandboxReady
		case podlifecycle.PullImage:
			o.Kind, o.Image = podlifecycle.ImagePulled, a.Image
		case podlifecycle.StartContainer:
			o.Kind, o.ContainerID = podlifecycle.ContainerCreated, fmt.Sprintf("instant://%s-%d", a.Container, a.RestartCount)
			r.due = append(r.due, o)
			o.Kind = podlifecycle.ContainerStarted
		case podlifecycle.KillContainer:
			o.Kind, o.ExitCode = podlifecycle.ContainerExited, 143
		case podlifecycle.RunProbe:
			o.Kind, o.Probe, o.Outcome = podlifecycle.ProbeResult, a.Probe, podlifecycle.ProbeSuccess
		default:
			continue
		}
		r.due = append(r.due, o)
	}
	return nil
}

func (r *instant) Due(time.Time) (o []podlifecycle.Observation) { o, r.due = r.due, nil; return o }

func (r *instant) Next() (t time.Time) {
	if len(r.due) > 0 {
		t = r.due[0].At
	}
	return t
}

// runNode makes a virtual-kubelet node of the runtime: the provider, and
// virtual-kubelet's pod and node controllers on it, until ctx ends.
func runNode(ctx context.Context, client kubernetes.Interface) error {
	opts := vk.DefaultOptions()
	opts.Name = "vk-1"
	p, err := vk.NewProvider(opts, func(*v1.Pod) (podrunner.Runtime, error) { return &instant{}, nil }, client)
	if err != nil {
		return err
	}
	pods, err := node.NewPodController(p.PodControllerConfig())
	if err != nil {
		return err
	}
	nodes, err := node.NewNodeController(p, p.Node(), client.CoreV1().Nodes(), p.NodeControllerOptions(client)...)
	if err != nil {
		return err
	}
	go func() { _ = pods.Run(ctx, 1) }()
	go func() { _ = nodes.Run(ctx) }()
	err = p.Run(ctx)
	<-pods.Done()
	<-nodes.Done()
	return err
}

// A runtime of one's own as a virtual-kubelet provider, on virtual-kubelet's
// own controllers (here against client-go's fake clientset): the pod is
// Running and Ready with an IP from the node's pod CIDR and the node's
// address as host IP, as a kubelet shows it, and the node reports the
// kubelet's Ready condition.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	client := fake.NewClientset()
	done := make(chan error, 1)
	go func() { done <- runNode(ctx, client) }()

	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec: v1.PodSpec{NodeName: "vk-1", Containers: []v1.Container{{Name: "app", Image: "nginx",
			ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 1}}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		panic(err)
	}
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, _ := client.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		cols, _ := podphase.Columns(got, time.Now())
		n, _ := client.CoreV1().Nodes().Get(ctx, "vk-1", metav1.GetOptions{})
		if cols.Ready != "1/1" || n == nil || len(n.Status.Conditions) != 4 {
			return false, nil
		}
		ready := n.Status.Conditions[3]
		fmt.Println("pod:", cols.Ready, cols.Status, cols.Restarts, got.Status.PodIP, got.Status.HostIP)
		fmt.Println("node:", ready.Type, ready.Status, ready.Reason, ready.Message)
		return true, nil
	})
	cancel()
	<-done
	// Output:
	// pod: 1/1 Running 0 10.244.0.2 127.0.0.1
	// node: Ready True KubeletReady kubelet is posting ready status
}
