package cri

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake clock's start.
var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// fixture is a runtime on a fake clock whose pod source holds pods.
type fixture struct {
	t    *testing.T
	rt   *Runtime
	clk  *testingclock.FakeClock
	pods map[string]*v1.Pod // by UID
}

func newFixture(t *testing.T, mod func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, clk: testingclock.NewFakeClock(t0), pods: map[string]*v1.Pod{}}
	opts := DefaultOptions()
	opts.Clock = f.clk
	opts.Token = "tok"
	opts.Pods = PodSourceFunc(func(_ context.Context, ns, name, uid string) (*v1.Pod, error) {
		if p := f.pods[uid]; p != nil && p.Namespace == ns && p.Name == name {
			return p, nil
		}
		return nil, errors.New("no such pod")
	})
	if mod != nil {
		mod(&opts)
	}
	rt, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.rt = rt
	return f
}

// pod returns a pod with one container "app" (image busybox:1.36) and
// the given behaviour annotations ("container": "clauses").
func pod(name string, behaviours map[string]string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Annotations: map[string]string{}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox:1.36"}}},
	}
	for c, clauses := range behaviours {
		p.Annotations[simruntime.AnnotationPrefix+c] = clauses
	}
	return p
}

// sandboxConfig is the config the kubelet sends for pod.
func sandboxConfig(p *v1.Pod) *runtimeapi.PodSandboxConfig {
	mode := runtimeapi.NamespaceMode_POD
	if p.Spec.HostNetwork {
		mode = runtimeapi.NamespaceMode_NODE
	}
	return &runtimeapi.PodSandboxConfig{
		Metadata:    &runtimeapi.PodSandboxMetadata{Name: p.Name, Namespace: p.Namespace, Uid: string(p.UID)},
		Labels:      map[string]string{"io.kubernetes.pod.uid": string(p.UID), "io.kubernetes.pod.name": p.Name},
		Annotations: p.Annotations,
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: mode}}},
	}
}

// sandbox registers p with the pod source and runs a sandbox for it.
func (f *fixture) sandbox(p *v1.Pod) string {
	f.t.Helper()
	f.pods[string(p.UID)] = p
	resp, err := f.rt.RunPodSandbox(context.Background(), &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig(p)})
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.PodSandboxId
}

// pull pulls image for p and fails the test if it fails.
func (f *fixture) pull(p *v1.Pod, image string) string {
	f.t.Helper()
	resp, err := f.rt.Images().PullImage(context.Background(), &runtimeapi.PullImageRequest{
		Image: &runtimeapi.ImageSpec{Image: image}, SandboxConfig: sandboxConfig(p)})
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.ImageRef
}

// start pulls container name's image, then creates and starts it, as the
// kubelet's startContainer does.
func (f *fixture) start(p *v1.Pod, sb, name string) string {
	f.t.Helper()
	spec, _ := specOf(p, name)
	ref := f.pull(p, spec.Image)
	ctx := context.Background()
	cr, err := f.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, SandboxConfig: sandboxConfig(p),
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: name},
			Image:    &runtimeapi.ImageSpec{Image: ref, UserSpecifiedImage: spec.Image},
			Labels:   map[string]string{"io.kubernetes.container.name": name, "io.kubernetes.pod.uid": string(p.UID)},
		}})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.ContainerId}); err != nil {
		f.t.Fatal(err)
	}
	return cr.ContainerId
}

// status returns a container's status.
func (f *fixture) status(id string) *runtimeapi.ContainerStatus {
	f.t.Helper()
	resp, err := f.rt.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.Status
}

// async runs call in a goroutine and returns a channel that receives its
// error when it returns.
func async(call func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	return done
}

// waiters waits until n goroutines wait on the fake clock. It yields
// instead of sleeping: the goroutines only need to be scheduled.
func (f *fixture) waiters(n int) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f.clk.Waiters() < n {
		if time.Now().After(deadline) {
			f.t.Fatalf("%d goroutines wait on the clock, want %d", f.clk.Waiters(), n)
		}
		runtime.Gosched()
	}
}

// pending fails the test if done has a result already.
func pending(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s returned early: %v", what, err)
	default:
	}
}

// result returns what done receives, failing the test after 10 s.
func result(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}
