package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nc "github.com/nodestate/nodestate/nodecondition"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func event(name, typ, reason, fieldPath, msg string, count int32, first, last time.Duration) corev1.Event {
	return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: typ, Reason: reason, Message: msg, Count: count,
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", FieldPath: fieldPath}, FirstTimestamp: at(first), LastTimestamp: at(last)}
}

func basePod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", CreationTimestamp: at(-10 * time.Minute)},
		Spec: corev1.PodSpec{NodeName: "node-1", RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.1.7", Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at(-10 * time.Minute)},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at(-10 * time.Minute)},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]", LastTransitionTime: at(-9 * time.Minute)},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]", LastTransitionTime: at(-9 * time.Minute)},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(-10 * time.Minute)},
		}},
	}
}

func podCases() map[string]struct {
	pod    *corev1.Pod
	events []corev1.Event
} {
	crash := basePod("crash")
	crash.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: 3,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: "back-off 40s restarting failed container=app pod=crash_shop(uid)"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
			StartedAt: at(-16 * time.Second), FinishedAt: at(-15 * time.Second)}}}}
	app := "spec.containers{app}"
	crashEvents := []corev1.Event{
		event("e3", "Warning", "BackOff", app, "Back-off restarting failed container app in pod crash_shop(uid)", 5, -8*time.Minute, -14*time.Second),
		event("e1", "Normal", "Scheduled", "", "Successfully assigned shop/crash to node-1", 1, -10*time.Minute, -10*time.Minute),
		event("e2", "Normal", "Pulled", app, `Container image "registry.example/app:1" already present on machine`, 4, -10*time.Minute, -16*time.Second),
	}

	// The same pod between its crash and the end of its back-off, as the
	// kubelet shows it with the default 1 min resync: terminated, Error.
	crashErr := basePod("crash")
	crashErr.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: 3,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
			StartedAt: at(-16 * time.Second), FinishedAt: at(-15 * time.Second)}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
			StartedAt: at(-37 * time.Second), FinishedAt: at(-36 * time.Second)}}}}

	init := basePod("init")
	init.Status.Phase = corev1.PodPending
	init.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "registry.example/migrate:1"}}
	init.Status.Conditions[1] = corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionFalse, Reason: "ContainersNotInitialized",
		Message: "containers with incomplete status: [migrate]", LastTransitionTime: at(-10 * time.Minute)}
	init.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "migrate", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(-9 * time.Minute)}}}}
	init.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}

	sidecar := basePod("sidecar")
	sidecar.Status.Phase = corev1.PodPending
	sidecar.Spec.InitContainers = []corev1.Container{{Name: "proxy", Image: "registry.example/proxy:1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}}}
	sidecar.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", Started: ptr.To(false), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(-30 * time.Second)}}}}
	sidecar.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}

	pull := basePod("pull")
	pull.Status.Phase = corev1.PodPending
	pull.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
		Message: `Back-off pulling image "registry.example/app:1"`}}}}
	pullEvents := []corev1.Event{
		event("p1", "Normal", "Pulling", app, `Pulling image "registry.example/app:1"`, 3, -2*time.Minute, -50*time.Second),
		event("p2", "Warning", "Failed", app, `Failed to pull image "registry.example/app:1": not found`, 3, -2*time.Minute, -49*time.Second),
		event("p3", "Normal", "BackOff", app, `Back-off pulling image "registry.example/app:1"`, 6, -2*time.Minute, -5*time.Second),
	}

	job := basePod("job-abcde")
	job.Spec.RestartPolicy = corev1.RestartPolicyNever
	job.Status.Phase = corev1.PodSucceeded
	job.Status.PodIP = ""
	job.Status.Conditions[2] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: at(-5 * time.Minute)}
	job.Status.Conditions[3] = corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: at(-5 * time.Minute)}
	job.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0,
		Reason: "Completed", StartedAt: at(-6 * time.Minute), FinishedAt: at(-5 * time.Minute)}}}}

	unscheduled := basePod("unscheduled")
	unscheduled.Spec.NodeName = ""
	unscheduled.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu.", LastTransitionTime: at(-time.Minute)}}}

	return map[string]struct {
		pod    *corev1.Pod
		events []corev1.Event
	}{
		"crashloop": {crash, crashEvents}, "crashloop-error": {crashErr, crashEvents}, "init": {init, nil}, "sidecar": {sidecar, nil},
		"imagepull": {pull, pullEvents}, "job": {job, nil}, "unscheduled": {unscheduled, nil},
	}
}

// TestPodGolden renders each constructed pod as text and JSON and compares
// with testdata/pod-NAME.txt and .json.
func TestPodGolden(t *testing.T) {
	for name, c := range podCases() {
		t.Run(name, func(t *testing.T) {
			r, err := Pod(c.pod, c.events, t0)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := r.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			golden(t, "pod-"+name+".txt", buf.Bytes())
			b, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "pod-"+name+".json", append(b, '\n'))
		})
	}
}

// TestCrashLoopDelay: the kubelet's crash-loop back-off (10 s doubling to
// 300 s, the first restart at once) counted from the last finish.
func TestCrashLoopDelay(t *testing.T) {
	for _, c := range []struct {
		restarts int32
		ran      time.Duration
		want     time.Duration
		reason   string
	}{
		{0, time.Second, 0, "the first restart comes at once"},
		{1, time.Second, 10 * time.Second, "the second waits the initial 10 s"},
		{2, time.Second, 20 * time.Second, "doubling"},
		{3, time.Second, 40 * time.Second, "doubling"},
		{5, time.Second, 160 * time.Second, "doubling"},
		{6, time.Second, 300 * time.Second, "capped at 300 s"},
		{1000, time.Second, 300 * time.Second, "capped, however many restarts"},
		{6, 11 * time.Minute, 0, "an instance that ran longer than the reset period starts over"},
	} {
		if got := crashLoopDelay(c.restarts, t0, t0.Add(c.ran)); got != c.want {
			t.Errorf("%d restarts, ran %v: delay %v, want %v (%s)", c.restarts, c.ran, got, c.want, c.reason)
		}
	}
}

func TestNilInput(t *testing.T) {
	if _, err := Pod(nil, nil, t0); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Pod(nil): %v, want ErrInvalidInput", err)
	}
	if _, err := Node(NodeInput{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Node without a node: %v, want ErrInvalidInput", err)
	}
}

func tolerate(seconds *int64) []corev1.Toleration {
	var ts []corev1.Toleration
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		ts = append(ts, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds})
	}
	return ts
}

func nodeInput() NodeInput {
	readyCond := func(name string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: "zone-a"}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: at(-8 * time.Second), LastTransitionTime: at(-time.Hour)}}}}
	}
	node := readyCond("node-1")
	node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "shop", Effect: corev1.TaintEffectNoSchedule}}
	pod := func(ns, name string, tol []corev1.Toleration) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: "node-1", Tolerations: tol},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	}
	return NodeInput{
		Node: &node,
		Lease: &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40),
			RenewTime: ptr.To(metav1.NewMicroTime(t0.Add(-3 * time.Second)))}},
		Pods: []corev1.Pod{
			pod("shop", "web-1", tolerate(ptr.To[int64](300))),
			pod("shop", "fast-1", tolerate(ptr.To[int64](5))),
			pod("kube-system", "agent-1", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}),
			pod("shop", "forever-1", tolerate(nil)),
		},
		Others: []corev1.Node{node, readyCond("node-2"), readyCond("node-3")},
		Now:    t0,
	}
}

// TestNodeGolden: a node with pods of four tolerations, in a zone with two
// healthy nodes: it turns Unknown at the simulated 50.1..54.6 s after its
// last renewal (spec/nodecondition.md section 4.1, timeline of a kubelet
// that stops), is tainted, and its pods are evicted after their toleration.
func TestNodeGolden(t *testing.T) {
	r, err := Node(nodeInput())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "node.txt", buf.Bytes())
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "node.json", append(b, '\n'))
}

// TestNodeControllerFlags: a longer --node-monitor-grace-period moves the
// Unknown transition and every eviction by the difference.
func TestNodeControllerFlags(t *testing.T) {
	in := nodeInput()
	def, err := Node(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Controller = nc.DefaultControllerOptions()
	in.Controller.GracePeriod = 2 * time.Minute
	long, err := Node(in)
	if err != nil {
		t.Fatal(err)
	}
	find := func(r NodeReport, event, subject string) PredictionStep {
		for _, s := range r.Prediction.Steps {
			if s.Event == event && s.Subject == subject {
				return s
			}
		}
		t.Fatalf("no %s %s in %+v", event, subject, r.Prediction.Steps)
		return PredictionStep{}
	}
	for _, c := range []struct{ event, subject string }{{"condition", "Ready: True -> Unknown"}, {"pod evicted", "shop/fast-1"}} {
		a, b := find(def, c.event, c.subject), find(long, c.event, c.subject)
		// The monitor passes drift by their duration, so the move is 70 s
		// give or take a few passes' worth.
		if got := b.At.Sub(a.At); got < 70*time.Second || got > 71*time.Second {
			t.Errorf("%s %s: a grace period 70 s longer moved it by %v (%v -> %v)", c.event, c.subject, got, a.At, b.At)
		}
	}
}
