package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

// repErrSink is a logr sink that keeps the messages of the errors logged.
type repErrSink struct {
	mu   sync.Mutex
	msgs []string
}

func (s *repErrSink) Init(logr.RuntimeInfo)                  {}
func (s *repErrSink) Enabled(int) bool                       { return true }
func (s *repErrSink) Info(int, string, ...any)               {}
func (s *repErrSink) WithValues(...any) logr.LogSink         { return s }
func (s *repErrSink) WithName(string) logr.LogSink           { return s }
func (s *repErrSink) Error(err error, msg string, kv ...any) { s.add(msg) }

func (s *repErrSink) add(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, msg)
}

func (s *repErrSink) errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// metricValue is the value of the gauge or counter m.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if g := out.GetGauge(); g != nil {
		return g.GetValue()
	}
	return out.GetCounter().GetValue()
}

// repT0 is the fake clock's start in the pods' tests.
var repT0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// repNode is a node "n" on a fake clock whose errors are logged into the
// returned sink; edit, when not nil, changes its options first.
func repNode(t *testing.T, edit func(*Options)) (*Node, *clocktesting.FakeClock, *repErrSink) {
	t.Helper()
	return repNodeOn(t, fake.NewClientset(), edit)
}

// repNodeOn is repNode talking to the API server cs.
func repNodeOn(t *testing.T, cs *fake.Clientset, edit func(*Options)) (*Node, *clocktesting.FakeClock, *repErrSink) {
	t.Helper()
	clk := clocktesting.NewFakeClock(repT0)
	sink := &repErrSink{}
	opts := DefaultOptions("n")
	opts.Clock = clk
	opts.Logger = logr.New(sink)
	if edit != nil {
		edit(&opts)
	}
	n, err := NewNode(opts, cs)
	if err != nil {
		t.Fatal(err)
	}
	return n, clk, sink
}

// repPod is a BestEffort pod bound to node "n", created at created.
func repPod(name string, created time.Time) *corev1.Pod {
	p := podOf(name, corev1.PodQOSBestEffort, nil, ctr("app", "", ""))
	p.Spec.NodeName = "n"
	p.CreationTimestamp = metav1.NewTime(created)
	return p
}

// repDeleting is a copy of pod marked for deletion at at.
func repDeleting(pod *corev1.Pod, at time.Time) *corev1.Pod {
	d := pod.DeepCopy()
	ts := metav1.NewTime(at)
	d.DeletionTimestamp = &ts
	return d
}

// TestGauges: the running pods gauge counts the running pods whose
// sandbox is up, and the running containers gauge sums the running and the
// exited containers of the running pods only; pods no longer running count
// for nothing, whatever their last counts.
func TestGauges(t *testing.T) {
	n, _, _ := repNode(t, nil)
	for i := range 4 {
		n.pods[types.UID(fmt.Sprint("run-", i))] = &nodePod{running: true, sandboxReady: i != 3, nRunning: 2, nExited: 1}
	}
	for i := range 3 {
		n.pods[types.UID(fmt.Sprint("done-", i))] = &nodePod{finished: true, sandboxReady: true, nRunning: 5, nExited: 7}
	}
	for range 20 { // each round walks the pods in another order
		n.gauges()
		pods := metricValue(t, n.metrics.runningPods)
		running := metricValue(t, n.metrics.runningContainers.WithLabelValues("running"))
		exited := metricValue(t, n.metrics.runningContainers.WithLabelValues("exited"))
		if pods != 3 || running != 8 || exited != 4 {
			t.Fatalf("gauges: %v running pods, %v running and %v exited containers; want 3, 8 and 4", pods, running, exited)
		}
	}
}

// TestRunCtx: the context of the loop's API reads is the background
// before the pods loop runs, and the loop's own context once it does.
func TestRunCtx(t *testing.T) {
	n, _, _ := repNode(t, nil)
	if ctx := n.runCtx(); ctx == nil || ctx.Err() != nil || ctx.Done() != nil {
		t.Fatalf("before the loop: %v, want the background context", ctx)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n.ctx = ctx
	if got := n.runCtx(); got != ctx {
		t.Fatalf("during the loop: %v, want the loop's context", got)
	}
}

// TestReceiveAdmitsEveryNewPod: every new pod delivered since the last
// round is admitted in one round, handed to the runner and counted
// (admitted, running, the admissions metric), with no error logged; a pod
// bound to another node is ignored.
func TestReceiveAdmitsEveryNewPod(t *testing.T) {
	n, clk, sink := repNode(t, nil)
	names := []string{"a", "b", "c", "d"}
	for i, name := range names {
		n.deliver(repPod(name, repT0.Add(time.Duration(i)*time.Second)), false)
	}
	other := repPod("elsewhere", repT0)
	other.Spec.NodeName = "m"
	n.deliver(other, false)
	n.receive(clk.Now())
	st := n.Stats()
	if st.Admitted != len(names) || st.Running != len(names) || st.Rejected != 0 {
		t.Errorf("stats %+v: want %d admitted and running", st, len(names))
	}
	if got := metricValue(t, n.metrics.admissions.WithLabelValues("admitted", "")); got != float64(len(names)) {
		t.Errorf("admissions metric %v, want %d", got, len(names))
	}
	for _, name := range names {
		p := n.pods[types.UID("uid-"+name)]
		if p == nil || !p.running || !p.inRunner || !p.firstSeen.Equal(repT0) {
			t.Errorf("pod %s: %+v, want running in the runner since %v", name, p, repT0)
		}
		if _, ok := n.runner.Pod(types.UID("uid-" + name)); !ok {
			t.Errorf("pod %s not in the runner", name)
		}
	}
	if _, ok := n.pods["uid-elsewhere"]; ok {
		t.Error("a pod of another node was taken")
	}
	if errs := sink.errors(); len(errs) != 0 {
		t.Errorf("errors logged: %v", errs)
	}
}

// TestAdmissionOrder: the pods of one round are admitted in creation
// order, ties by UID, as the kubelet sorts them: on a node with room for one
// pod the oldest runs and the others are rejected (OutOfpods), counted,
// failed in the status cache and in the metric, with no error logged.
func TestAdmissionOrder(t *testing.T) {
	oneSlot := func(o *Options) {
		o.Allocatable = o.Allocatable.DeepCopy()
		o.Allocatable[corev1.ResourcePods] = resource.MustParse("1")
	}
	cases := []struct {
		name   string
		pods   []*corev1.Pod
		winner types.UID
	}{
		{"the oldest first, whatever its UID", []*corev1.Pod{repPod("a", repT0.Add(2*time.Second)), repPod("z", repT0), repPod("m", repT0.Add(time.Second))}, "uid-z"},
		{"created together: the smallest UID first", []*corev1.Pod{repPod("c", repT0), repPod("a", repT0), repPod("b", repT0), repPod("d", repT0)}, "uid-a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for range 5 { // each round takes the inbox in another order
				n, clk, sink := repNode(t, oneSlot)
				for _, p := range tc.pods {
					n.deliver(p, false)
				}
				n.receive(clk.Now())
				for _, p := range tc.pods {
					np := n.pods[p.UID]
					if p.UID == tc.winner {
						if np == nil || !np.running {
							t.Fatalf("%s: %+v, want it admitted", p.UID, np)
						}
						continue
					}
					if np == nil || np.running || !np.finished || !np.inRunner {
						t.Fatalf("%s: %+v, want it rejected", p.UID, np)
					}
					if st, ok := n.cache.GetPodStatus(p.UID); !ok || st.Phase != corev1.PodFailed || st.Reason != ReasonOutOfPods {
						t.Fatalf("%s: cached status %v %q, want Failed %s", p.UID, st.Phase, st.Reason, ReasonOutOfPods)
					}
				}
				rejected := len(tc.pods) - 1
				if st := n.Stats(); st.Admitted != 1 || st.Running != 1 || st.Rejected != rejected {
					t.Fatalf("stats %+v, want 1 admitted and %d rejected", st, rejected)
				}
				if got := metricValue(t, n.metrics.admissions.WithLabelValues("rejected", ReasonOutOfPods)); got != float64(rejected) {
					t.Fatalf("rejections metric %v, want %d", got, rejected)
				}
				if errs := sink.errors(); len(errs) != 0 {
					t.Fatalf("errors logged: %v", errs)
				}
			}
		})
	}
}

// TestCompareStrings: the UID tie-break is a three-way comparison.
func TestCompareStrings(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"a", "b", -1}, {"b", "a", 1}, {"a", "a", 0}, {"", "a", -1}, {"uid-10", "uid-9", -1}} {
		if got := compareStrings(c.a, c.b); got != c.want {
			t.Errorf("compareStrings(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestTerminalPodsAtStart: a pod found Succeeded or Failed never runs
// and is not handed to the runner; one of them already marked for deletion
// has its final status cached at once (terminated) so that the status
// engine can delete it, with no error logged; the others wait.
func TestTerminalPodsAtStart(t *testing.T) {
	n, clk, sink := repNode(t, nil)
	succeeded, failed, deleted := repPod("ok", repT0), repPod("bad", repT0), repDeleting(repPod("gone", repT0), repT0)
	succeeded.Status.Phase, failed.Status.Phase, deleted.Status.Phase = corev1.PodSucceeded, corev1.PodFailed, corev1.PodSucceeded
	for _, p := range []*corev1.Pod{succeeded, failed, deleted} {
		n.deliver(p, false)
	}
	n.receive(clk.Now())
	for _, p := range []*corev1.Pod{succeeded, failed, deleted} {
		np := n.pods[p.UID]
		if np == nil || !np.finished || np.running || np.inRunner {
			t.Errorf("%s: %+v, want it known as finished, outside the runner", p.Name, np)
		}
		if _, ok := n.runner.Pod(p.UID); ok {
			t.Errorf("%s: handed to the runner", p.Name)
		}
		_, cached := n.cache.GetPodStatus(p.UID)
		if want := p == deleted; cached != want || np.terminated != want {
			t.Errorf("%s: status cached %v, terminated %v; want %v", p.Name, cached, np.terminated, want)
		}
	}
	if st := n.Stats(); st.Admitted != 0 || st.Running != 0 || st.Rejected != 0 {
		t.Errorf("stats %+v, want no admission", st)
	}
	if errs := sink.errors(); len(errs) != 0 {
		t.Errorf("errors logged: %v", errs)
	}
}

// TestTerminalPodDeletedLater: a pod found terminal when the node
// started is terminated (its final status cached) once an update marks it
// for deletion, and only then; an update without deletion leaves it alone.
func TestTerminalPodDeletedLater(t *testing.T) {
	n, clk, sink := repNode(t, nil)
	pod := repPod("done", repT0)
	pod.Status.Phase = corev1.PodSucceeded
	n.deliver(pod, false)
	n.receive(clk.Now())

	relabeled := pod.DeepCopy()
	relabeled.Labels = map[string]string{"x": "y"}
	n.deliver(relabeled, false)
	n.receive(clk.Now())
	if p := n.pods[pod.UID]; p.terminated || p.api != relabeled {
		t.Fatalf("after an update without deletion: terminated %v, newest object kept %v", p.terminated, p.api == relabeled)
	}
	if _, ok := n.cache.GetPodStatus(pod.UID); ok {
		t.Fatal("a status was cached for a terminal pod not being deleted")
	}

	clk.Step(time.Second)
	n.deliver(repDeleting(relabeled, clk.Now()), false)
	n.receive(clk.Now())
	p := n.pods[pod.UID]
	st, ok := n.cache.GetPodStatus(pod.UID)
	if !p.terminated || !ok || st.Phase != corev1.PodSucceeded {
		t.Fatalf("after the deletion: terminated %v, cached %v phase %q; want the final Succeeded status", p.terminated, ok, st.Phase)
	}
	if p.inRunner || n.Stats().Admitted != 0 {
		t.Error("a terminal pod was run")
	}
	if errs := sink.errors(); len(errs) != 0 {
		t.Errorf("errors logged: %v", errs)
	}
}

// TestUpdateOfRunningPod: a newer object of a pod the node runs is
// kept and handed to the runner, with no error logged.
func TestUpdateOfRunningPod(t *testing.T) {
	n, clk, sink := repNode(t, nil)
	pod := repPod("web", repT0)
	n.deliver(pod, false)
	n.receive(clk.Now())
	newer := pod.DeepCopy()
	newer.Labels = map[string]string{"v": "2"}
	n.deliver(newer, false)
	n.receive(clk.Now())
	if got, _ := n.runner.Pod(pod.UID); got != newer {
		t.Errorf("the runner has %v, want the newer object", got)
	}
	if n.pods[pod.UID].api != newer {
		t.Error("the node did not keep the newer object")
	}
	if st := n.Stats(); st.Admitted != 1 {
		t.Errorf("admitted %d, want 1 (an update is no new admission)", st.Admitted)
	}
	if errs := sink.errors(); len(errs) != 0 {
		t.Errorf("errors logged: %v", errs)
	}
}

// TestDeletedPods: a pod the API server no longer has is told to the
// runner, even in a round with no new or updated pod: a finished one
// (here rejected) is dropped at once, a running one is kept, marked removed,
// until its machine finishes; a pod the node never saw is ignored; no error
// is logged.
func TestDeletedPods(t *testing.T) {
	n, clk, sink := repNode(t, func(o *Options) {
		o.Allocatable = o.Allocatable.DeepCopy()
		o.Allocatable[corev1.ResourcePods] = resource.MustParse("1")
	})
	run, rejected := repPod("run", repT0), repPod("rej", repT0.Add(time.Second))
	n.deliver(run, false)
	n.deliver(rejected, false)
	n.receive(clk.Now())
	n.runner.Advance(clk.Now())
	if p := n.pods[rejected.UID]; p == nil || !p.finished {
		t.Fatalf("setup: %s is %+v, want it rejected", rejected.Name, p)
	}

	n.deliver(rejected, true)
	n.deliver(run, true)
	n.deliver(repPod("stranger", repT0), true)
	n.receive(clk.Now())
	if _, ok := n.pods[rejected.UID]; ok {
		t.Error("the rejected pod was kept after its deletion")
	}
	if p := n.pods[run.UID]; p == nil || !p.removed || !p.running {
		t.Errorf("the running pod: %+v, want it kept, marked removed, until it finishes", p)
	}
	n.runner.Advance(clk.Now())
	if _, ok := n.runner.Pod(rejected.UID); ok {
		t.Error("the runner still knows the deleted rejected pod")
	}
	if errs := sink.errors(); len(errs) != 0 {
		t.Errorf("errors logged: %v", errs)
	}
}

// TestPodsLoop: the pods loop admits what the watch delivers, then
// sleeps on the node's clock until the runner's next due time (it does not
// spin), and returns the context's error once the context ends.
func TestPodsLoop(t *testing.T) {
	n, clk, _ := repNode(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- n.podsLoop(ctx) }()
	n.deliver(repPod("web", repT0), false)
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 20*time.Second, true,
		func(context.Context) (bool, error) { return n.Stats().Admitted == 1 && clk.HasWaiters(), nil }); err != nil {
		t.Fatalf("the loop did not admit the pod and wait on its clock: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("podsLoop = %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the loop did not end with its context")
	}
}
