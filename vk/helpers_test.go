package vk_test

import (
	"context"
	"errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/vk"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const nodeName = "vk-test"

// harness is a provider on a fake clientset whose NotifyPods callback
// records each pod handed and, with write set, writes its status to the
// fake API as virtual-kubelet's pod controller does.
type harness struct {
	t      *testing.T
	client *fake.Clientset
	p      *vk.Provider

	mu    sync.Mutex
	sent  []*v1.Pod
	write bool
	nodes []*v1.Node
}

// newHarness runs a provider with the runtimes of factory (nil: the
// simulated runtime) until the test ends; edit changes its options.
func newHarness(t *testing.T, factory vk.RuntimeFactory, edit func(*vk.Options)) *harness {
	t.Helper()
	if factory == nil {
		factory = vk.SimulatedRuntime
	}
	h := &harness{t: t, client: fake.NewClientset(), write: true}
	opts := vk.DefaultOptions()
	opts.Name = nodeName
	opts.FullSyncPeriod = 100 * time.Millisecond
	opts.Runner.RuntimeRetry, opts.Runner.RuntimeRetryMax = 10*time.Millisecond, 20*time.Millisecond
	if edit != nil {
		edit(&opts)
	}
	p, err := vk.NewProvider(opts, factory, h.client)
	if err != nil {
		t.Fatal(err)
	}
	h.p = p
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	p.NotifyPods(ctx, h.notified)
	p.NotifyNodeStatus(ctx, func(n *v1.Node) {
		h.mu.Lock()
		h.nodes = append(h.nodes, n)
		h.mu.Unlock()
	})
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	return h
}

func (h *harness) notified(pod *v1.Pod) {
	h.mu.Lock()
	h.sent = append(h.sent, pod)
	write := h.write
	h.mu.Unlock()
	if write {
		if _, err := h.client.CoreV1().Pods(pod.Namespace).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
			h.t.Logf("writing the status of %s: %v", pod.Name, err)
		}
	}
}

// create stores pod in the fake API, waits for the provider's watch to see
// it and hands it to CreatePod, as virtual-kubelet's pod controller does.
func (h *harness) create(pod *v1.Pod) {
	h.t.Helper()
	if _, err := h.client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	h.waitInformer(pod)
	if err := h.p.CreatePod(context.Background(), pod); err != nil {
		h.t.Fatal(err)
	}
}

// waitInformer waits until the provider's pod informer has pod.
func (h *harness) waitInformer(pod *v1.Pod) {
	h.t.Helper()
	lister := h.p.PodControllerConfig().PodInformer.Lister()
	eventually(h.t, "the informer has "+pod.Name, func() bool {
		got, err := lister.Pods(pod.Namespace).Get(pod.Name)
		return err == nil && got.UID == pod.UID
	})
}

// apiPod returns the pod as the fake API has it.
func (h *harness) apiPod(name string) (*v1.Pod, error) {
	return h.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
}

// waitAPI waits until the fake API's copy of pod name satisfies cond.
func (h *harness) waitAPI(what, name string, cond func(*v1.Pod) bool) *v1.Pod {
	h.t.Helper()
	var got *v1.Pod
	eventually(h.t, what, func() bool {
		p, err := h.apiPod(name)
		got = p
		return err == nil && cond(p)
	})
	return got
}

// lastSent returns the last pod notified of name.
func (h *harness) lastSent(name string) *v1.Pod {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.sent) - 1; i >= 0; i-- {
		if h.sent[i].Name == name {
			return h.sent[i]
		}
	}
	return nil
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waited 10 s for %s", what)
	}
}

// testPod is a pod bound to the test node with one container "app" and
// the simulated runtime's behaviour for it (none: runs until killed).
func testPod(name, behaviour string) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: nodeName, TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers: []v1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
	if behaviour != "" {
		pod.Annotations = map[string]string{simruntime.AnnotationPrefix + "app": behaviour}
	}
	return pod
}

func running(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
}

func condition(p *v1.Pod, typ v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// wrapped is a runtime of the simulated runtime's whose calls a test
// intercepts.
type wrapped struct {
	podrunner.Runtime
	do func(now time.Time) error // called before each Do; an error refuses it
}

func (w *wrapped) Do(now time.Time, actions []podlifecycle.Action) error {
	if err := w.do(now); err != nil {
		return err
	}
	return w.Runtime.Do(now, actions)
}
