package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/statussync"
)

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// agent is the status side of a node agent: a cache and an engine writing
// through client-go.
type agent struct {
	cache  *statussync.Cache
	engine *statussync.Engine
	clock  *clocktesting.FakeClock
	calls  *counter
	client kubernetes.Interface
}

func newAgent(t *testing.T, identity string, noGet bool) *agent {
	t.Helper()
	cs, calls := client(t, identity)
	cache, err := statussync.NewCache(statussync.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{cache: cache, clock: clocktesting.NewFakeClock(epoch), calls: calls, client: cs}
	opts := statussync.DefaultEngineOptions()
	opts.Clock, opts.Planner.NoGet = a.clock, noGet
	e, err := statussync.NewEngine(opts, a.cache, &kube.StatusTransport{Client: cs})
	if err != nil {
		t.Fatal(err)
	}
	a.engine = e
	return a
}

// newEngineWithHook replaces a's engine by one whose Request hook is hook.
func newEngineWithHook(t *testing.T, a *agent, hook func(verb string, err error)) *statussync.Engine {
	t.Helper()
	opts := statussync.DefaultEngineOptions()
	opts.Clock, opts.Hooks.Request = a.clock, hook
	e, err := statussync.NewEngine(opts, a.cache, &kube.StatusTransport{Client: a.client})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (a *agent) sync(t *testing.T, full bool) statussync.Result {
	t.Helper()
	return a.engine.SyncOnce(context.Background(), full)
}

var nsCounter int

// namespace creates a fresh namespace for a test.
func namespace(t *testing.T, admin kubernetes.Interface) string {
	t.Helper()
	nsCounter++
	name := fmt.Sprintf("t%d-%d", nsCounter, time.Now().UnixNano()%100000)
	if _, err := admin.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func createPod(t *testing.T, admin kubernetes.Interface, ns, name, node string, policy corev1.RestartPolicy) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: policy, Containers: []corev1.Container{
			{Name: "app", Image: "registry.example/app:1", ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}},
			{Name: "log", Image: "registry.example/log:1"}}}}
	p, err := admin.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The Node authorizer learns of a pod bound to a node from its own
	// informer, a moment after the pod is created; until then the node's
	// GET of it is Forbidden. A kubelet never asks that early: it learns of
	// its pods from a watch the same graph gates.
	nodeClient, _ := client(t, controlplane.NodeUser(node))
	waitFor(t, "the Node authorizer to let "+node+" read pod "+ns+"/"+name, 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := nodeClient.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsForbidden(err) {
			return false, nil
		}
		return err == nil, err
	})
	return p
}

// computeStatus runs the pod's containers through containerstate and the
// status through podphase, as a kubelet would.
func computeStatus(t *testing.T, pod *corev1.Pod, old *corev1.PodStatus, events map[string][]containerstate.Event, now time.Time) corev1.PodStatus {
	t.Helper()
	var statuses []corev1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		m, err := containerstate.NewMachine(containerstate.DefaultOptions(), containerstate.Pod{Spec: &pod.Spec, Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}, c.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events[c.Name] {
			if err := m.Step(ev); err != nil {
				t.Fatal(err)
			}
		}
		statuses = append(statuses, m.Status())
	}
	res, err := podphase.GenerateStatus(podphase.StatusInput{Input: podphase.Input{Pod: pod}, Old: old, ContainerStatuses: statuses, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

func running(id string, at time.Time) []containerstate.Event {
	return []containerstate.Event{{Kind: containerstate.Created, At: at, ContainerID: id}, {Kind: containerstate.Started, At: at, ContainerID: id}}
}

// TestStatusesLandAsComputed: statuses synced by the engine appear on the
// server exactly as podphase computed them.
func TestStatusesLandAsComputed(t *testing.T) {
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	pod := createPod(t, admin, ns, "web", node1, corev1.RestartPolicyAlways)
	a := newAgent(t, controlplane.NodeUser(node1), false)

	status := computeStatus(t, pod, nil, map[string][]containerstate.Event{
		"app": running("containerd://app1", epoch), "log": running("containerd://log1", epoch)}, epoch)
	if _, _, err := a.cache.SetPodStatus(pod, status, a.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if r := a.sync(t, false); r.Synced != 1 {
		t.Fatalf("synced %+v", r)
	}
	if a.calls.get("GET pods") != 1 || a.calls.get("PATCH pods/status") != 1 {
		t.Errorf("default mode: one GET and one PATCH, got %v", a.calls.counts)
	}
	server, err := admin.CoreV1().Pods(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cached, _ := a.cache.GetPodStatus(pod.UID)
	if !statussync.DefaultOptions().EqualByKubelet(&server.Status, &cached) {
		t.Fatalf("the server's status differs from the computed one:\nserver %+v\ncached %+v", server.Status, cached)
	}
	if server.Status.Phase != corev1.PodRunning || podphase.Phase(server) != corev1.PodRunning {
		t.Errorf("phase %s", server.Status.Phase)
	}
	ready := findCond(server.Status.Conditions, corev1.PodReady)
	if ready == nil || ready.Status != corev1.ConditionFalse || ready.Reason != podphase.ReasonContainersNotReady {
		t.Errorf("Ready as podphase computed it (app's probe has not run): %+v", ready)
	}
	if row, err := podphase.Columns(server, epoch); err != nil || row.Ready != "1/2" || row.Status != "Running" {
		t.Errorf("kubectl columns from the server copy: %+v %v", row, err)
	}
}

func findCond(cs []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// watch feeds the engine the pod's updates, as an informer would; it stops
// with the test.
func watch(t *testing.T, cs kubernetes.Interface, ns, name string, e *statussync.Engine) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				e.Observe(p)
			}
		}
	}()
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
}

// eventually waits, with a bounded number of short waits on the watch, for
// cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// TestDriftReasserted: another client changes a kubelet-owned condition;
// the engine, fed by a watch, writes the kubelet's value back on its full
// pass. A condition another client owns survives every sync.
func TestDriftReassertedAndOthersKept(t *testing.T) {
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	pod := createPod(t, admin, ns, "web", node1, corev1.RestartPolicyAlways)
	a := newAgent(t, controlplane.NodeUser(node1), false)
	watch(t, a.client, ns, "web", a.engine)
	status := computeStatus(t, pod, nil, map[string][]containerstate.Event{"app": running("containerd://a", epoch), "log": running("containerd://l", epoch)}, epoch)
	if _, _, err := a.cache.SetPodStatus(pod, status, a.clock.Now()); err != nil {
		t.Fatal(err)
	}
	a.sync(t, false)

	// Another controller adds its own condition, and clobbers Ready.
	ctx := context.Background()
	_, err := admin.CoreV1().Pods(ns).Patch(ctx, "web", types.StrategicMergePatchType,
		[]byte(`{"status":{"conditions":[{"type":"example.com/gate","status":"True"},{"type":"Ready","status":"True","reason":"Clobbered"}]}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	var latest *corev1.Pod
	eventually(t, "the watch to deliver the foreign write", func() bool {
		latest, _ = admin.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		r := a.sync(t, true)
		return r.Synced == 1
	})
	server, _ := admin.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
	if c := findCond(server.Status.Conditions, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse || c.Reason != podphase.ReasonContainersNotReady {
		t.Errorf("the kubelet's Ready is written back, got %+v (foreign write left %v)", c, latest.Status.Conditions)
	}
	if c := findCond(server.Status.Conditions, "example.com/gate"); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("the other controller's condition survives, got %+v", server.Status.Conditions)
	}
	// More versions, more syncs: the foreign condition stays.
	for i := 0; i < 3; i++ {
		a.clock.Step(time.Second)
		status.Message = fmt.Sprint("round ", i)
		if _, _, err := a.cache.SetPodStatus(pod, status, a.clock.Now()); err != nil {
			t.Fatal(err)
		}
		a.sync(t, false)
		a.sync(t, true)
	}
	server, _ = admin.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
	if c := findCond(server.Status.Conditions, "example.com/gate"); c == nil || server.Status.Message != "round 2" {
		t.Errorf("after more syncs: message %q, conditions %v", server.Status.Message, server.Status.Conditions)
	}
}

// TestRecreatedPodNeverPatchedWithOldStatus: a pod deleted and recreated
// under the same name (new UID) is never written with the old pod's status,
// in the default mode (the GET shows the new UID) and in NoGet mode (the
// server answers 422 on metadata.uid).
func TestRecreatedPodNeverPatchedWithOldStatus(t *testing.T) {
	for _, noGet := range []bool{false, true} {
		t.Run(fmt.Sprintf("noGet=%v", noGet), func(t *testing.T) {
			admin, _ := client(t, controlplane.Admin)
			ns := namespace(t, admin)
			ctx := context.Background()
			old := createPod(t, admin, ns, "web", node1, corev1.RestartPolicyAlways)
			a := newAgent(t, controlplane.NodeUser(node1), noGet)
			status := computeStatus(t, old, nil, map[string][]containerstate.Event{"app": running("containerd://a", epoch), "log": running("containerd://l", epoch)}, epoch)
			if _, _, err := a.cache.SetPodStatus(old, status, a.clock.Now()); err != nil {
				t.Fatal(err)
			}
			a.sync(t, false)

			zero := int64(0)
			if err := admin.CoreV1().Pods(ns).Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
			fresh := createPod(t, admin, ns, "web", node1, corev1.RestartPolicyAlways)
			if fresh.UID == old.UID {
				t.Fatal("the recreated pod has a new UID")
			}
			status.Message = "old pod, new version"
			a.clock.Step(time.Second)
			if _, _, err := a.cache.SetPodStatus(old, status, a.clock.Now()); err != nil {
				t.Fatal(err)
			}
			r := a.sync(t, false)
			if r.Dropped != 1 {
				t.Errorf("the old pod's entry is dropped, got %+v", r)
			}
			server, _ := admin.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
			if server.UID != fresh.UID || server.Status.Message != "" || len(server.Status.ContainerStatuses) != 0 {
				t.Errorf("the new pod was written with the old status: %+v", server.Status)
			}
			if _, ok := a.cache.GetPodStatus(old.UID); ok {
				t.Error("the old entry is gone from the cache")
			}
		})
	}
}

// TestTerminalPodDeletedOnlyWhenFinished: a pod being deleted is removed by
// the engine only after TerminatePod, with grace 0 and a UID precondition.
func TestTerminalPodDeletedOnlyWhenFinished(t *testing.T) {
	admin, _ := client(t, controlplane.Admin)
	ns := namespace(t, admin)
	ctx := context.Background()
	pod := createPod(t, admin, ns, "job", node1, corev1.RestartPolicyNever)
	a := newAgent(t, controlplane.NodeUser(node1), false)
	grace := int64(30)
	if err := admin.CoreV1().Pods(ns).Delete(ctx, "job", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	deleting, err := admin.CoreV1().Pods(ns).Get(ctx, "job", metav1.GetOptions{})
	if err != nil || deleting.DeletionTimestamp == nil {
		t.Fatalf("a pod bound to a node waits for its kubelet: %v %+v", err, deleting)
	}
	exited := func(id string, code int32) []containerstate.Event {
		return append(running(id, epoch), containerstate.ExitedEvent(epoch.Add(time.Second), id, code))
	}
	status := computeStatus(t, deleting, nil, map[string][]containerstate.Event{"app": exited("containerd://a", 1), "log": exited("containerd://l", 0)}, epoch)
	if status.Phase != corev1.PodFailed {
		t.Fatalf("podphase: %s", status.Phase)
	}
	if _, _, err := a.cache.SetPodStatus(deleting, status, a.clock.Now()); err != nil {
		t.Fatal(err)
	}
	a.sync(t, false)
	a.sync(t, true)
	if _, err := admin.CoreV1().Pods(ns).Get(ctx, "job", metav1.GetOptions{}); err != nil {
		t.Fatalf("deleted before the node finished with it: %v", err)
	}
	if a.calls.get("DELETE pods") != 0 {
		t.Fatal("no DELETE before TerminatePod")
	}
	if err := a.cache.TerminatePod(deleting, a.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if r := a.sync(t, false); r.Deleted != 1 {
		t.Fatalf("deleted once finished: %+v", r)
	}
	if _, err := admin.CoreV1().Pods(ns).Get(ctx, "job", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the pod is gone: %v", err)
	}
	_ = pod
}

// TestNoGetFewerRequests: the same sequence of versions gives the same
// server state in both modes, with about one request per version in NoGet
// mode instead of two.
func TestNoGetFewerRequests(t *testing.T) {
	admin, _ := client(t, controlplane.Admin)
	ctx := context.Background()
	const versions = 10
	states := map[bool]corev1.PodStatus{}
	perVersion := map[bool]float64{}
	for _, noGet := range []bool{false, true} {
		ns := namespace(t, admin)
		pod := createPod(t, admin, ns, "web", node1, corev1.RestartPolicyAlways)
		a := newAgent(t, controlplane.NodeUser(node1), noGet)
		status := computeStatus(t, pod, nil, map[string][]containerstate.Event{"app": running("containerd://a", epoch), "log": running("containerd://l", epoch)}, epoch)
		synced := 0
		for v := 0; v < versions; v++ {
			a.clock.Step(time.Second)
			status.Message = fmt.Sprint("v", v)
			if _, _, err := a.cache.SetPodStatus(pod, status, a.clock.Now()); err != nil {
				t.Fatal(err)
			}
			synced += a.sync(t, false).Synced
		}
		requests := a.calls.get("GET pods") + a.calls.get("PATCH pods/status")
		perVersion[noGet] = float64(requests) / float64(synced)
		server, _ := admin.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		statussync.Normalize(&server.Spec, &server.Status)
		states[noGet] = server.Status
	}
	t.Logf("API requests per synced version on kube-apiserver v1.37.2: default %.2f, NoGet %.2f", perVersion[false], perVersion[true])
	if perVersion[false] != 2 || perVersion[true] > 1.1 {
		t.Errorf("requests per version: default %.2f (want 2), NoGet %.2f (want at most 1.1)", perVersion[false], perVersion[true])
	}
	a, b := states[false], states[true]
	if !statussync.DefaultOptions().EqualByKubelet(&a, &b) || a.Message != b.Message {
		t.Errorf("both modes leave the same state:\n%+v\n%+v", a, b)
	}
}
