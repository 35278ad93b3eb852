package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubetypes "k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/events/eventstest"
	"github.com/nodestate/nodestate/podlifecycle"
)

var srvT0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// srvPod is a pod of the default namespace named name.
func srvPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: kubetypes.UID("uid-" + name)}}
}

// srvEventCounts scrapes the collector c and returns nodestate_events_total
// by outcome.
func srvEventCounts(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return srvCounts(t, reg, "nodestate_events_total", "outcome")
}

// srvSinkOutcomes gives, for one sink's stats, the count of each outcome
// label the node exports.
func srvSinkOutcomes(s events.SinkStats) map[string]uint64 {
	return map[string]uint64{
		"created": s.Created, "patched": s.Patched, "aggregated": s.Aggregated, "retried": s.Retries,
		"dropped_spam": s.DroppedSpam, "dropped_rejected": s.DroppedRejected,
		"dropped_retry_limit": s.DroppedRetryLimit, "dropped_queue_full": s.DroppedQueueFull,
	}
}

// srvBusyBroadcaster returns a broadcaster on a fake clock with two sinks
// (added without goroutines), through which it has pushed events that end
// in every outcome: the first sink refuses the events of pod "rejected"
// and cannot be reached for those of pod "unreachable"; the second accepts
// everything.
func srvBusyBroadcaster(t *testing.T) *events.Broadcaster {
	t.Helper()
	clk := clocktesting.NewFakeClock(srvT0)
	bo := events.DefaultBroadcasterOptions()
	bo.Clock = clk
	bo.Queue = events.SinkQueueOptions{QueueSize: 4, MaxTries: 2, Sleep: time.Second}
	b, err := events.NewBroadcaster(bo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	faulty := eventstest.NewSink(clk, time.Hour)
	faulty.SetFault(func(_ eventstest.Op, _, name string, _ int) error {
		switch {
		case strings.HasPrefix(name, "rejected."):
			return apierrors.NewBadRequest("refused")
		case strings.HasPrefix(name, "unreachable."):
			return errors.New("connection refused")
		}
		return nil
	})
	co := events.DefaultCorrelatorOptions()
	co.Aggregation.MaxEvents = 2
	co.SpamFilter.Burst, co.SpamFilter.QPS = 2, 0.001
	for _, s := range []events.Sink{faulty, eventstest.NewSink(clk, time.Hour)} {
		if err := b.AddSink(s, co); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := b.NewRecorder(corev1.EventSource{Component: "kubelet", Host: "n"}, events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	flush := func() {
		t.Helper()
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	record := func(pod, reason, message string) {
		_ = rec.Record(srvPod(pod), nil, corev1.EventTypeNormal, reason, message)
	}
	record("app", "Started", "started") // created
	record("app", "Started", "started") // the same again: patched
	record("img", "Pulled", "a")
	record("img", "Pulled", "b") // a second message of the same reason: aggregated
	flush()
	record("noisy", "A", "1")
	record("noisy", "B", "2")
	record("noisy", "C", "3") // past the burst of 2: spam
	record("rejected", "A", "1")
	flush()
	record("unreachable", "A", "1")
	flush()
	if next, ok := b.NextRetry(); !ok {
		t.Fatal("no retry is waiting for the unreachable pod's event")
	} else {
		clk.SetTime(next)
	}
	flush() // the second and last try fails too: retry limit
	for _, p := range []string{"q1", "q2", "q3", "q4", "q5"} {
		record(p, "A", "1") // the fifth finds the queue of 4 full
	}
	flush()
	_ = rec.Record(srvPod("app"), nil, "Bogus", "A", "1") // an invalid type
	return b
}

// TestEventCollectorSumsSinks: nodestate_events_total{outcome} is, for
// each outcome, the sum over the broadcaster's sinks of that count, and
// dropped_invalid the broadcaster's own count of invalid events.
func TestEventCollectorSumsSinks(t *testing.T) {
	b := srvBusyBroadcaster(t)
	st := b.Stats()
	if len(st.Sinks) != 2 {
		t.Fatalf("%d sinks", len(st.Sinks))
	}
	faulty, good := srvSinkOutcomes(st.Sinks[0]), srvSinkOutcomes(st.Sinks[1])
	for outcome, v := range faulty {
		if v == 0 {
			t.Fatalf("the scenario left %s at 0 on the first sink: %+v", outcome, st.Sinks[0])
		}
	}
	if good["dropped_rejected"] != 0 || good["dropped_retry_limit"] != 0 || good["created"] <= faulty["created"] {
		t.Fatalf("the second sink should only differ in accepting more: %+v", st.Sinks[1])
	}
	if st.DroppedInvalid != 1 {
		t.Fatalf("dropped invalid %d, want 1", st.DroppedInvalid)
	}
	got := srvEventCounts(t, &eventCollector{n: &Node{bcast: b}})
	want := map[string]float64{"dropped_invalid": 1}
	for outcome := range faulty {
		want[outcome] = float64(faulty[outcome] + good[outcome])
	}
	if len(got) != len(want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	for outcome, v := range want {
		if got[outcome] != v {
			t.Errorf("nodestate_events_total{outcome=%q} = %v, want %v", outcome, got[outcome], v)
		}
	}
}

// TestEventCollectorWithoutSinks: before any sink is added every outcome
// is exported at 0 except dropped_invalid, which is always present.
func TestEventCollectorWithoutSinks(t *testing.T) {
	b, err := events.NewBroadcaster(events.DefaultBroadcasterOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Shutdown(context.Background()) }()
	got := srvEventCounts(t, &eventCollector{n: &Node{bcast: b}})
	if len(got) != 1 || got["dropped_invalid"] != 0 {
		t.Errorf("outcomes %v, want only dropped_invalid at 0", got)
	}
}

// srvSample is one series of a gathered metric family: its labels and
// its value (a counter's), or a histogram's sample count and sum.
type srvSample struct {
	labels      map[string]string
	value       float64
	count       uint64
	sum         float64
	isHistogram bool
}

// srvGather returns the series of the family name in reg.
func srvGather(t *testing.T, reg prometheus.Gatherer, name string) []srvSample {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []srvSample
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			s := srvSample{labels: map[string]string{}, value: m.GetCounter().GetValue()}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			if h := m.GetHistogram(); h != nil {
				s.count, s.sum, s.isHistogram = h.GetSampleCount(), h.GetSampleSum(), true
			}
			out = append(out, s)
		}
	}
	return out
}

// srvCounts returns a counter family of reg by the value of its label.
func srvCounts(t *testing.T, reg prometheus.Gatherer, name, label string) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for _, s := range srvGather(t, reg, name) {
		got[s.labels[label]] = s.value
	}
	return got
}

// srvMetrics returns the metrics of a node that is not run.
func srvMetrics() *nodeMetrics { return newNodeMetrics(&Node{opts: Options{Name: "n"}}) }

// TestObserveResultCounts: kubelet_started_pods_total counts the
// CreateSandbox actions of a sync and no other action;
// kubelet_started_containers_total counts Started events, as init_container
// for a field path in spec.initContainers and container otherwise;
// nodestate_backoff_events_total counts BackOff events, Warning ones as
// crashloop and Normal ones as imagepull; other events count nowhere.
func TestObserveResultCounts(t *testing.T) {
	m := srvMetrics()
	p := &nodePod{firstSeen: srvT0}
	res := &podlifecycle.Result{
		Actions: []podlifecycle.Action{{Kind: podlifecycle.CreateSandbox}, {Kind: podlifecycle.PullImage},
			{Kind: podlifecycle.StartContainer}},
		Events: []podlifecycle.Event{
			{Type: corev1.EventTypeNormal, Reason: podlifecycle.ReasonStarted, FieldPath: "spec.initContainers{init}"},
			{Type: corev1.EventTypeNormal, Reason: podlifecycle.ReasonStarted, FieldPath: "spec.containers{app}"},
			{Type: corev1.EventTypeNormal, Reason: podlifecycle.ReasonStarted, FieldPath: "spec.containers{side}"},
			{Type: corev1.EventTypeWarning, Reason: podlifecycle.ReasonBackOff, FieldPath: "spec.containers{app}"},
			{Type: corev1.EventTypeNormal, Reason: podlifecycle.ReasonBackOff, FieldPath: "spec.containers{app}"},
			{Type: corev1.EventTypeNormal, Reason: podlifecycle.ReasonBackOff, FieldPath: "spec.containers{side}"},
			{Type: corev1.EventTypeNormal, Reason: "Pulled", FieldPath: "spec.containers{app}"},
			{Type: corev1.EventTypeWarning, Reason: "Failed", FieldPath: "spec.containers{app}"},
		},
	}
	m.observeResult(p, res, srvT0)
	if got := srvCounts(t, m.reg, "kubelet_started_pods_total", ""); got[""] != 1 {
		t.Errorf("started pods %v, want 1", got)
	}
	if got := srvCounts(t, m.reg, "kubelet_started_containers_total", "container_type"); len(got) != 2 || got["container"] != 2 || got["init_container"] != 1 {
		t.Errorf("started containers %v, want 2 container and 1 init_container", got)
	}
	if got := srvCounts(t, m.reg, "nodestate_backoff_events_total", "backoff"); len(got) != 2 || got["crashloop"] != 1 || got["imagepull"] != 2 {
		t.Errorf("back-offs %v, want 1 crashloop and 2 imagepull", got)
	}
	// A sync with none of them counts nothing more.
	m.observeResult(p, &podlifecycle.Result{Actions: []podlifecycle.Action{{Kind: podlifecycle.KillSandbox}},
		Events: []podlifecycle.Event{{Type: corev1.EventTypeWarning, Reason: "Unhealthy"}}}, srvT0)
	if got := srvCounts(t, m.reg, "kubelet_started_pods_total", ""); got[""] != 1 {
		t.Errorf("started pods after a kill %v, want 1", got)
	}
	if got := srvCounts(t, m.reg, "nodestate_backoff_events_total", "backoff"); got["crashloop"] != 1 || got["imagepull"] != 2 {
		t.Errorf("back-offs after an Unhealthy warning %v", got)
	}
}

// TestObserveResultPodStart: kubelet_pod_start_duration_seconds observes,
// once per pod, the time from the pod's first sight to the first sync
// whose statuses include the Running phase; syncs before it observe
// nothing, and later Running syncs do not observe it again.
func TestObserveResultPodStart(t *testing.T) {
	m := srvMetrics()
	p := &nodePod{firstSeen: srvT0}
	status := func(phases ...corev1.PodPhase) *podlifecycle.Result {
		res := &podlifecycle.Result{}
		for _, ph := range phases {
			res.Statuses = append(res.Statuses, corev1.PodStatus{Phase: ph})
		}
		return res
	}
	histogram := func() srvSample {
		t.Helper()
		s := srvGather(t, m.reg, "kubelet_pod_start_duration_seconds")
		if len(s) != 1 || !s[0].isHistogram {
			t.Fatalf("pod start series %+v", s)
		}
		return s[0]
	}
	m.observeResult(p, status(corev1.PodPending, corev1.PodPending), srvT0.Add(2*time.Second))
	if h := histogram(); h.count != 0 || p.startObserved {
		t.Fatalf("a pending pod observed a start: %+v", h)
	}
	m.observeResult(p, status(corev1.PodPending, corev1.PodRunning), srvT0.Add(7*time.Second))
	if h := histogram(); h.count != 1 || h.sum != 7 || !p.startObserved {
		t.Fatalf("after the pod runs: %d samples of sum %v, want one of 7 s", h.count, h.sum)
	}
	m.observeResult(p, status(corev1.PodRunning), srvT0.Add(30*time.Second))
	m.observeResult(p, status(corev1.PodPending), srvT0.Add(40*time.Second))
	if h := histogram(); h.count != 1 || h.sum != 7 {
		t.Errorf("later syncs observed again: %d samples of sum %v", h.count, h.sum)
	}
}
