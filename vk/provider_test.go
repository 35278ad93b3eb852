package vk_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/vk"
)

// TestNewProviderRefuses: every option out of range, a missing factory or
// client, is an *OptionError naming the field and matching
// ErrInvalidOptions.
func TestNewProviderRefuses(t *testing.T) {
	for _, tt := range []struct {
		field string
		set   func(*vk.Options)
	}{
		{"Name", func(o *vk.Options) { o.Name = "" }},
		{"Name", func(o *vk.Options) { o.Name = "Not_A_Name" }},
		{"Address", func(o *vk.Options) { o.Address = "localhost" }},
		{"Port", func(o *vk.Options) { o.Port = -1 }},
		{"KubeletVersion", func(o *vk.Options) { o.KubeletVersion = "" }},
		{"Kubelet", func(o *vk.Options) { o.Kubelet.LeaseDuration = 0 }},
		{"Events", func(o *vk.Options) { o.Events.Queue.QueueSize = 0 }},
		{"Correlator", func(o *vk.Options) { o.Correlator = vk.Options{}.Correlator }},
		{"FullSyncPeriod", func(o *vk.Options) { o.FullSyncPeriod = 0 }},
		{"RuntimeTimeout", func(o *vk.Options) { o.RuntimeTimeout = -time.Second }},
		{"ShutdownTimeout", func(o *vk.Options) { o.ShutdownTimeout = 0 }},
		{"Runner", func(o *vk.Options) { o.Runner.PodCIDR = "10.0.0.0/31" }},
	} {
		opts := vk.DefaultOptions()
		opts.Name = nodeName
		tt.set(&opts)
		_, err := vk.NewProvider(opts, vk.SimulatedRuntime, fake.NewClientset())
		var oe *vk.OptionError
		if !errors.As(err, &oe) || oe.Field != tt.field || !errors.Is(err, vk.ErrInvalidOptions) || !strings.HasPrefix(err.Error(), "vk: invalid options: ") {
			t.Errorf("%s: %v", tt.field, err)
		}
	}
	opts := vk.DefaultOptions()
	opts.Name = nodeName
	for field, err := range map[string]error{
		"runtimes": func() error { _, err := vk.NewProvider(opts, nil, fake.NewClientset()); return err }(),
		"client":   func() error { _, err := vk.NewProvider(opts, vk.SimulatedRuntime, nil); return err }(),
	} {
		var oe *vk.OptionError
		if !errors.As(err, &oe) || oe.Field != field || !errors.Is(err, vk.ErrInvalidOptions) {
			t.Errorf("%s: %v", field, err)
		}
	}
}

// TestZeroProvider: the methods of a zero Provider return
// ErrNotInitialized or nothing, and never panic.
func TestZeroProvider(t *testing.T) {
	var p vk.Provider
	ctx := context.Background()
	pod := testPod("p", "")
	for name, err := range map[string]error{
		"CreatePod": p.CreatePod(ctx, pod),
		"UpdatePod": p.UpdatePod(ctx, pod),
		"DeletePod": p.DeletePod(ctx, pod),
		"Run":       p.Run(ctx),
		"Notify":    p.Notify("u"),
		"GetPod":    func() error { _, err := p.GetPod(ctx, "default", "p"); return err }(),
		"Status":    func() error { _, err := p.GetPodStatus(ctx, "default", "p"); return err }(),
		"GetPods":   func() error { _, err := p.GetPods(ctx); return err }(),
	} {
		if !errors.Is(err, vk.ErrNotInitialized) {
			t.Errorf("%s: %v", name, err)
		}
	}
	var noCtx context.Context // Ping takes a nil context as one that never ends
	p.NotifyPods(ctx, func(*v1.Pod) {})
	p.NotifyNodeStatus(ctx, func(*v1.Node) {})
	if p.Node() != nil || p.NodeControllerOptions(fake.NewClientset()) != nil || p.PodControllerConfig().Provider != nil ||
		p.Stats().Created != 0 || p.Stats().Events.Sinks != nil || p.Ping(noCtx) != nil {
		t.Error("a zero Provider gave something")
	}
}

// TestBadInput: calls about a pod the provider does not know, or a pod
// without a UID, get a *PodError that virtual-kubelet's errdefs classify
// (NotFound, InvalidInput), and change nothing.
func TestBadInput(t *testing.T) {
	h := newHarness(t, nil, nil)
	ctx := context.Background()
	noUID := testPod("nouid", "")
	noUID.UID = ""
	for _, tt := range []struct {
		name     string
		err      error
		notFound bool
	}{
		{"CreatePod(nil)", h.p.CreatePod(ctx, nil), false},
		{"CreatePod without a UID", h.p.CreatePod(ctx, noUID), false},
		{"UpdatePod(nil)", h.p.UpdatePod(ctx, nil), false},
		{"DeletePod(nil)", h.p.DeletePod(ctx, nil), false},
		{"UpdatePod of an unknown pod", h.p.UpdatePod(ctx, testPod("ghost", "")), true},
		{"DeletePod of an unknown pod", h.p.DeletePod(ctx, testPod("ghost", "")), true},
		{"GetPod of an unknown pod", func() error { _, err := h.p.GetPod(ctx, "default", "ghost"); return err }(), true},
		{"GetPodStatus of an unknown pod", func() error { _, err := h.p.GetPodStatus(ctx, "default", "ghost"); return err }(), true},
		{"Notify of an unknown pod", h.p.Notify("ghost"), true},
	} {
		var pe *vk.PodError
		if !errors.As(tt.err, &pe) {
			t.Errorf("%s: %v, want a *PodError", tt.name, tt.err)
			continue
		}
		if tt.notFound != errors.Is(tt.err, vk.ErrUnknownPod) || tt.notFound != errdefs.IsNotFound(tt.err) ||
			tt.notFound == errdefs.IsInvalidInput(tt.err) || tt.notFound == errors.Is(tt.err, vk.ErrInvalidInput) {
			t.Errorf("%s: %v: NotFound %v, InvalidInput %v", tt.name, tt.err, errdefs.IsNotFound(tt.err), errdefs.IsInvalidInput(tt.err))
		}
	}
	if pods, err := h.p.GetPods(ctx); err != nil || len(pods) != 0 {
		t.Errorf("GetPods after refused calls: %v %v", pods, err)
	}
	if s := h.p.Stats(); s.Created != 0 || s.Runner.Added != 0 {
		t.Errorf("refused calls counted as work: %+v", s)
	}
}

// TestCreateRunsPod: a created pod runs as on a kubelet: its status
// reaches the API server through NotifyPods (Running, Ready, an IP from the
// pod CIDR, the node's address as host IP), GetPod and GetPodStatus give
// the node's status, GetPods lists it, and creating it again is an update.
func TestCreateRunsPod(t *testing.T) {
	h := newHarness(t, nil, nil)
	ctx := context.Background()
	pod := testPod("web", "")
	h.create(pod)
	got := h.waitAPI("web Running and Ready", "web", func(p *v1.Pod) bool {
		c := condition(p, v1.PodReady)
		return running(p) && c != nil && c.Status == v1.ConditionTrue
	})
	if got.Status.PodIP != "10.244.0.2" || got.Status.HostIP != "127.0.0.1" {
		t.Errorf("pod IP %q, host IP %q: want 10.244.0.2 from the pod CIDR and the node's 127.0.0.1", got.Status.PodIP, got.Status.HostIP)
	}
	if p, err := h.p.GetPod(ctx, "default", "web"); err != nil || !running(p) || p.UID != pod.UID {
		t.Errorf("GetPod: %v %v", p, err)
	}
	if st, err := h.p.GetPodStatus(ctx, "default", "web"); err != nil || st.Phase != v1.PodRunning {
		t.Errorf("GetPodStatus: %v %v", st, err)
	}
	if pods, err := h.p.GetPods(ctx); err != nil || len(pods) != 1 || pods[0].Name != "web" {
		t.Errorf("GetPods: %v %v", pods, err)
	}
	if err := h.p.CreatePod(ctx, pod); err != nil {
		t.Errorf("CreatePod again: %v", err)
	}
	if s := h.p.Stats(); s.Created != 1 || s.Updated != 1 || s.Runner.Added != 1 {
		t.Errorf("stats: %+v", s)
	}
	// The notifier runs on a goroutine of its own.
	eventually(t, "a status notified", func() bool { return h.p.Stats().Notified > 0 })
	// The events are written by the broadcaster's goroutine.
	want := []string{podlifecycle.ReasonPulling, podlifecycle.ReasonPulled, podlifecycle.ReasonCreated, podlifecycle.ReasonStarted}
	reasons := map[string]bool{}
	eventually(t, "the kubelet's events of the container", func() bool {
		evs, _ := h.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		for _, e := range evs.Items {
			if e.Source.Component == "kubelet" && e.Source.Host == nodeName && e.InvolvedObject.FieldPath == "spec.containers{app}" {
				reasons[e.Reason] = true
			}
		}
		for _, r := range want {
			if !reasons[r] {
				return false
			}
		}
		return true
	})
}

// TestRuntimeFactoryFails: a pod whose runtime the factory refuses (or
// panics on) fails as the kubelet fails a pod it rejects; CreatePod
// returns nil, so virtual-kubelet writes nothing of its own over it.
func TestRuntimeFactoryFails(t *testing.T) {
	h := newHarness(t, func(pod *v1.Pod) (podrunner.Runtime, error) {
		if pod.Name == "panics" {
			panic("boom")
		}
		return nil, errors.New("no backend for " + pod.Name)
	}, nil)
	for _, name := range []string{"refused", "panics"} {
		h.create(testPod(name, ""))
		got := h.waitAPI(name+" rejected", name, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
		if got.Status.Reason != vk.ReasonRuntimeRejected || !strings.HasPrefix(got.Status.Message, "Pod was rejected: ") {
			t.Errorf("%s: reason %q message %q", name, got.Status.Reason, got.Status.Message)
		}
	}
	if s := h.p.Stats(); s.Rejected != 2 || s.RuntimePanics != 1 {
		t.Errorf("stats: %+v", s)
	}
	if _, err := h.p.GetPod(context.Background(), "default", "refused"); err != nil {
		t.Errorf("a rejected pod is still known: %v", err)
	}
}

// TestRuntimeRefusesThenRuns: a runtime whose Do returns an error is
// handed the same actions again (counted), and the pod runs once it takes
// them; one whose Do panics is refused the same way.
func TestRuntimeRefusesThenRuns(t *testing.T) {
	var calls atomic.Int32
	h := newHarness(t, func(pod *v1.Pod) (podrunner.Runtime, error) {
		rt, err := vk.SimulatedRuntime(pod)
		return &wrapped{Runtime: rt, do: func(time.Time) error {
			switch calls.Add(1) {
			case 1, 2:
				return errors.New("backend unreachable")
			case 3:
				panic("backend bug")
			}
			return nil
		}}, err
	}, nil)
	h.create(testPod("web", ""))
	h.waitAPI("web Running after the refusals", "web", running)
	if s := h.p.Stats(); s.Runner.RuntimeErrors != 3 || s.RuntimePanics != 1 {
		t.Errorf("stats: %+v", s)
	}
}

// TestRuntimeHangs: a Do that does not return within RuntimeTimeout is a
// refused Do; the runtime is left alone until it returns, and then the
// pod goes on, with no call lost or run twice at once.
func TestRuntimeHangs(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	var inDo atomic.Int32
	h := newHarness(t, func(pod *v1.Pod) (podrunner.Runtime, error) {
		rt, err := vk.SimulatedRuntime(pod)
		return &wrapped{Runtime: rt, do: func(time.Time) error {
			if inDo.Add(1) > 1 {
				t.Error("Do called while another Do runs")
			}
			defer inDo.Add(-1)
			once.Do(func() { <-release })
			return nil
		}}, err
	}, func(o *vk.Options) { o.RuntimeTimeout = 50 * time.Millisecond })
	h.create(testPod("web", ""))
	eventually(t, "a runtime timeout", func() bool { return h.p.Stats().RuntimeTimeouts > 0 })
	if p, _ := h.apiPod("web"); running(p) {
		t.Fatal("the pod runs while its runtime hangs")
	}
	close(release)
	h.waitAPI("web Running once the runtime answered", "web", running)
}

// TestNotifyKeepsOthersConditions: the status handed to virtual-kubelet,
// which writes it whole, is merged over the API server's copy as the
// kubelet merges: a condition another controller set there is kept even
// when the pod the provider was handed did not have it.
func TestNotifyKeepsOthersConditions(t *testing.T) {
	h := newHarness(t, nil, nil)
	pod := testPod("web", "run 1s exit 0")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	withCond := pod.DeepCopy()
	withCond.Status.Conditions = []v1.PodCondition{{Type: "example.com/Checked", Status: v1.ConditionTrue}}
	if _, err := h.client.CoreV1().Pods("default").Create(context.Background(), withCond, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitInformer(pod)
	if err := h.p.CreatePod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	got := h.waitAPI("web Succeeded", "web", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
	if c := condition(got, "example.com/Checked"); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("the other controller's condition was lost: %+v", got.Status.Conditions)
	}
	if c := condition(got, v1.PodReady); c == nil || c.Status != v1.ConditionFalse || c.Reason != "PodCompleted" {
		t.Errorf("Ready of a completed pod: %+v", c)
	}
}

// TestDeleteGracefully: a pod the API server is deleting is killed within
// its grace (its container ignores SIGTERM for 1 s), its final status is
// written, and then the provider deletes the API object with grace 0, as
// the kubelet's status manager does; virtual-kubelet's later DeletePod of
// the gone pod forgets it.
func TestDeleteGracefully(t *testing.T) {
	h := newHarness(t, nil, nil)
	ctx := context.Background()
	h.create(testPod("slow", "ignore-sigterm 1s"))
	h.waitAPI("slow Running", "slow", running)
	// The fake API deletes at once; a deleting pod is stored as the API
	// server stores it during its grace.
	cur, _ := h.apiPod("slow")
	now := metav1.Now()
	cur.DeletionTimestamp, cur.DeletionGracePeriodSeconds = &now, cur.Spec.TerminationGracePeriodSeconds
	if _, err := h.client.CoreV1().Pods("default").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitInformer(cur)
	eventually(t, "the informer has slow deleting", func() bool {
		got, err := h.p.PodControllerConfig().PodInformer.Lister().Pods("default").Get("slow")
		return err == nil && got.DeletionTimestamp != nil
	})
	start := time.Now()
	if err := h.p.DeletePod(ctx, cur); err != nil {
		t.Fatal(err)
	}
	eventually(t, "slow deleted from the API", func() bool {
		_, err := h.apiPod("slow")
		return apierrors.IsNotFound(err)
	})
	if d := time.Since(start); d < time.Second || d > 5*time.Second {
		t.Errorf("deleted after %v, want after its 1 s of ignoring SIGTERM", d)
	}
	if last := h.lastSent("slow"); last == nil || last.Status.Phase != v1.PodFailed ||
		last.Status.ContainerStatuses[0].State.Terminated == nil || last.Status.ContainerStatuses[0].State.Terminated.ExitCode != 143 {
		t.Errorf("the final status sent: %+v", last)
	}
	eventually(t, "the gone pod forgotten", func() bool {
		_, err := h.p.GetPod(ctx, "default", "slow")
		return errdefs.IsNotFound(err)
	})
	if err := h.p.DeletePod(ctx, cur); !errdefs.IsNotFound(err) {
		t.Errorf("DeletePod of the forgotten pod: %v", err)
	}
	// The deletion is counted after the API call returns, so perhaps
	// after the watch has told and the pod is forgotten.
	eventually(t, "the deletion counted", func() bool { return h.p.Stats().PodsDeleted == 1 })
	if s := h.p.Stats(); s.PodsDeleted != 1 || s.DeleteErrors != 0 {
		t.Errorf("stats: %+v", s)
	}
}

// TestDeleteGone: DeletePod of a pod the API server no longer has (a
// forced deletion) kills it at once and forgets it.
func TestDeleteGone(t *testing.T) {
	h := newHarness(t, nil, nil)
	ctx := context.Background()
	pod := testPod("web", "")
	h.create(pod)
	h.waitAPI("web Running", "web", running)
	h.mu.Lock()
	h.write = false
	h.mu.Unlock()
	if err := h.client.CoreV1().Pods("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer without web", func() bool {
		_, err := h.p.PodControllerConfig().PodInformer.Lister().Pods("default").Get("web")
		return apierrors.IsNotFound(err)
	})
	_ = h.p.DeletePod(ctx, pod) // forgotten already when the watch told first
	eventually(t, "web forgotten", func() bool {
		_, err := h.p.GetPod(ctx, "default", "web")
		return errdefs.IsNotFound(err)
	})
	if s := h.p.Stats(); s.Runner.Removed != 1 || s.Runner.Running != 0 {
		t.Errorf("stats: %+v", s)
	}
}

// TestNameReused: when the API server has a new pod under the name of one
// the provider runs (a StatefulSet's pod made again), GetPod answers not
// found so that virtual-kubelet creates the new one, and the old one is
// stopped.
func TestNameReused(t *testing.T) {
	h := newHarness(t, nil, nil)
	ctx := context.Background()
	// The old pod takes 5 s to stop, so the provider still runs it when the
	// new one comes.
	old := testPod("db-0", "ignore-sigterm 5s")
	h.create(old)
	h.waitAPI("db-0 Running", "db-0", running)
	if err := h.client.CoreV1().Pods("default").Delete(ctx, "db-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again := testPod("db-0", "")
	again.UID = "uid-db-0-again"
	if _, err := h.client.CoreV1().Pods("default").Create(ctx, again, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitInformer(again)
	if _, err := h.p.GetPod(ctx, "default", "db-0"); !errdefs.IsNotFound(err) {
		t.Fatalf("GetPod of the reused name: %v", err)
	}
	if err := h.p.CreatePod(ctx, again); err != nil {
		t.Fatal(err)
	}
	got := h.waitAPI("the new db-0 Running", "db-0", running)
	if got.UID != again.UID {
		t.Fatalf("UID %s", got.UID)
	}
	if p, err := h.p.GetPod(ctx, "default", "db-0"); err != nil || p.UID != again.UID {
		t.Errorf("GetPod: %v %v", p, err)
	}
	eventually(t, "the old db-0 forgotten", func() bool {
		pods, _ := h.p.GetPods(ctx)
		return len(pods) == 1
	})
}

// TestReadinessGate: a readiness gate another controller sets on the API
// server's copy (a status-only update, which virtual-kubelet never hands
// to UpdatePod) makes the pod Ready, as on a kubelet.
func TestReadinessGate(t *testing.T) {
	h := newHarness(t, nil, nil)
	ctx := context.Background()
	pod := testPod("gated", "")
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/LoadBalanced"}}
	h.create(pod)
	got := h.waitAPI("gated Running, not Ready", "gated", func(p *v1.Pod) bool {
		c := condition(p, v1.PodReady)
		return running(p) && c != nil && c.Status == v1.ConditionFalse && c.Reason == "ReadinessGatesNotReady"
	})
	got.Status.Conditions = append(got.Status.Conditions, v1.PodCondition{Type: "example.com/LoadBalanced", Status: v1.ConditionTrue})
	if _, err := h.client.CoreV1().Pods("default").UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitAPI("gated Ready", "gated", func(p *v1.Pod) bool {
		c := condition(p, v1.PodReady)
		return c != nil && c.Status == v1.ConditionTrue && condition(p, "example.com/LoadBalanced") != nil
	})
}

// TestDriftResent: when another writer changes what the kubelet owns on
// the API server (or a write virtual-kubelet gave up on left it stale),
// the next full sync hands the node's status again.
func TestDriftResent(t *testing.T) {
	h := newHarness(t, nil, nil)
	ctx := context.Background()
	h.create(testPod("web", ""))
	// Settled first (Ready: no status version is still to come), so that
	// only a resend can repair the drift, not the next version.
	got := h.waitAPI("web Running and Ready", "web", func(p *v1.Pod) bool {
		c := condition(p, v1.PodReady)
		return running(p) && c != nil && c.Status == v1.ConditionTrue
	})
	got.Status.Phase, got.Status.ContainerStatuses = v1.PodPending, nil
	if _, err := h.client.CoreV1().Pods("default").UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitAPI("web Running again", "web", running)
	// The provider counts a resend once the callback has returned, so
	// after the harness's write.
	eventually(t, "the resend counted", func() bool { return h.p.Stats().Resent > 0 })
}

// TestNodeStatus: the node registers with the kubelet's labels, addresses
// and capacity, and without a pod CIDR (the node IPAM controller's), and
// its first report carries nodecondition's four
// kubelet conditions, Ready with the kubelet's reason and message; the
// node controller options set the kubelet's Lease and status interval.
func TestNodeStatus(t *testing.T) {
	h := newHarness(t, nil, nil)
	n := h.p.Node()
	if n.Name != nodeName || n.Labels[v1.LabelHostname] != nodeName || n.Spec.PodCIDR != "" || n.Labels["beta.kubernetes.io/os"] != "linux" ||
		n.Status.Addresses[0].Address != "127.0.0.1" || n.Status.NodeInfo.KubeletVersion != vk.KubeletVersion || len(n.Status.Conditions) != 0 {
		t.Errorf("the node to register: %+v", n)
	}
	eventually(t, "the first node report", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.nodes) > 0
	})
	h.mu.Lock()
	conds := h.nodes[0].Status.Conditions
	h.mu.Unlock()
	if len(conds) != 4 || conds[3].Type != v1.NodeReady || conds[3].Status != v1.ConditionTrue || conds[3].Reason != "KubeletReady" ||
		conds[3].Message != "kubelet is posting ready status" {
		t.Errorf("the first report's conditions: %+v", conds)
	}
	if len(h.p.NodeControllerOptions(h.client)) != 2 || h.p.NodeControllerOptions(nil) != nil {
		t.Error("node controller options")
	}
	if err := h.p.Ping(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestPodCIDRFull: a pod that finds the node's pod CIDR full is failed as
// the kubelet fails a pod it cannot admit, with reason PodCIDRExhausted.
func TestPodCIDRFull(t *testing.T) {
	h := newHarness(t, nil, func(o *vk.Options) { o.Runner.PodCIDR = "10.244.9.0/30" }) // room for one pod
	h.create(testPod("first", ""))
	h.create(testPod("second", ""))
	h.waitAPI("first Running", "first", running)
	got := h.waitAPI("second rejected", "second", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if got.Status.Reason != vk.ReasonPodCIDRExhausted || got.Status.Message != "Pod was rejected: no free IP address in the node's pod CIDR 10.244.9.0/30" {
		t.Errorf("reason %q message %q", got.Status.Reason, got.Status.Message)
	}
}
