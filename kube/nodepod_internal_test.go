package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nodestate/nodestate/podlifecycle"
)

// mntPodNode is a fresh node that runs pod, counted as admitted and
// running.
func mntPodNode(t *testing.T, pod *corev1.Pod) (*Node, *nodePod) {
	t.Helper()
	n, err := NewNode(DefaultOptions("n1"), fake.NewClientset())
	if err != nil {
		t.Fatal(err)
	}
	p := &nodePod{api: pod, running: true, inRunner: true}
	n.pods[pod.UID] = p
	n.count(func(s *NodeStats) { s.Admitted++; s.Running++ })
	return n, p
}

func mntStatus(init []corev1.ContainerState, regular ...corev1.ContainerState) corev1.PodStatus {
	var st corev1.PodStatus
	for _, s := range init {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{State: s})
	}
	for _, s := range regular {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{State: s})
	}
	return st
}

var (
	mntRunning    = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	mntTerminated = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
	mntWaiting    = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
)

// TestCountStates: the running and the terminated containers of a status,
// init containers included; a waiting container is neither.
func TestCountStates(t *testing.T) {
	cases := []struct {
		name            string
		st              corev1.PodStatus
		running, exited int
	}{
		{"empty", mntStatus(nil), 0, 0},
		{"waiting only", mntStatus([]corev1.ContainerState{mntWaiting}, mntWaiting), 0, 0},
		{"init exited, app running", mntStatus([]corev1.ContainerState{mntTerminated}, mntRunning, mntWaiting), 1, 1},
		{"several of each", mntStatus([]corev1.ContainerState{mntTerminated, mntRunning}, mntRunning, mntTerminated, mntRunning), 3, 2},
	}
	for _, tc := range cases {
		if r, e := countStates(&tc.st); r != tc.running || e != tc.exited {
			t.Errorf("%s: running %d, exited %d; want %d and %d", tc.name, r, e, tc.running, tc.exited)
		}
	}
}

// TestNodeSyncedTracksPod: after each sync the node keeps whether the
// pod's sandbox is up, the containers its newest status shows running and
// exited, and the simulated containers' log lines; a sync of a pod the
// node no longer has changes nothing.
func TestNodeSyncedTracksPod(t *testing.T) {
	pod := podOf("web", corev1.PodQOSBestEffort, nil, ctr("app", "", ""))
	n, p := mntPodNode(t, pod)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	obs := []podlifecycle.Observation{{Kind: podlifecycle.SandboxReady},
		{Kind: podlifecycle.ContainerStarted, Container: "app", ContainerID: "sim://app-1"}}
	res := &podlifecycle.Result{Statuses: []corev1.PodStatus{mntStatus(nil, mntWaiting), mntStatus(nil, mntRunning)}}
	n.synced(now, pod, obs, res)
	if !p.sandboxReady || p.nRunning != 1 || p.nExited != 0 {
		t.Errorf("after start: sandbox ready %v, %d running, %d exited; want true, 1, 0", p.sandboxReady, p.nRunning, p.nExited)
	}
	if lines, ok := n.logs.get("ns", "web", "app", false); !ok || len(lines) != 1 {
		t.Errorf("log of app: %q", lines)
	}
	res = &podlifecycle.Result{Statuses: []corev1.PodStatus{mntStatus(nil, mntTerminated)}}
	n.synced(now, pod, []podlifecycle.Observation{{Kind: podlifecycle.SandboxNotReady}}, res)
	if p.sandboxReady || p.nRunning != 0 || p.nExited != 1 {
		t.Errorf("after stop: sandbox ready %v, %d running, %d exited; want false, 0, 1", p.sandboxReady, p.nRunning, p.nExited)
	}
	other := podOf("gone", corev1.PodQOSBestEffort, nil, ctr("app", "", ""))
	n.synced(now, other, []podlifecycle.Observation{{Kind: podlifecycle.ContainerStarted, Container: "app", ContainerID: "sim://x"}}, res)
	if _, ok := n.logs.get("ns", "gone", "app", false); ok || len(n.pods) != 1 {
		t.Errorf("a pod the node does not have was tracked")
	}
}

// TestNodeFinishedCountsOnce: a pod whose machine finished is counted
// finished and no longer running, once however often the hook runs; the
// hook for a pod the node does not have changes nothing; a finished pod
// the API server no longer has is dropped with its logs.
func TestNodeFinishedCountsOnce(t *testing.T) {
	pod := podOf("web", corev1.PodQOSBestEffort, nil, ctr("app", "", ""))
	n, p := mntPodNode(t, pod)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	p.sandboxReady = true
	for i := 0; i < 2; i++ {
		n.finished(now, pod)
		if s := n.Stats(); s.Finished != 1 || s.Running != 0 {
			t.Errorf("call %d: %d finished, %d running; want 1 and 0", i+1, s.Finished, s.Running)
		}
	}
	if !p.finished || p.running || p.sandboxReady || n.pods[pod.UID] != p {
		t.Errorf("pod kept as %+v", *p)
	}
	n.finished(now, podOf("other", corev1.PodQOSBestEffort, nil, ctr("app", "", "")))
	if s := n.Stats(); s.Finished != 1 || s.Running != 0 {
		t.Errorf("an unknown pod: %d finished, %d running", s.Finished, s.Running)
	}
	gone := podOf("gone", corev1.PodQOSBestEffort, nil, ctr("app", "", ""))
	n.pods[gone.UID] = &nodePod{api: gone, running: true, inRunner: true, removed: true}
	n.logs.record(gone, podlifecycle.Observation{Kind: podlifecycle.ContainerStarted, Container: "app", ContainerID: "sim://g"}, now)
	n.finished(now, gone)
	if _, ok := n.pods[gone.UID]; ok {
		t.Error("a removed pod was kept once finished")
	}
	if _, ok := n.logs.get("ns", "gone", "app", false); ok {
		t.Error("a removed pod's logs were kept")
	}
}
