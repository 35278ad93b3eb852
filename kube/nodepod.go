package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/podlifecycle"
)

// nodePod is what the node keeps of a pod besides its runner: its newest
// API object, for admission, the volume gate and the gauges, and what the
// metrics need. The runner's hooks and the node's loop, one goroutine,
// own it.
type nodePod struct {
	api        *corev1.Pod
	running    bool // admitted, its machine not finished
	finished   bool // terminal, rejected, or its machine finished
	inRunner   bool // the runner knows it (admitted or rejected)
	removed    bool // the API server no longer has it: dropped once finished
	terminated bool // found terminal at start and TerminatePod'ed

	firstSeen     time.Time // when the node admitted it
	startObserved bool      // its start duration is observed
	sandboxReady  bool      // its sandbox is up
	nRunning      int       // containers running in its newest status
	nExited       int       // containers terminated in its newest status
}

// synced is the runner's hook after each sync of a pod: the kubelet's
// metrics, the simulated containers' logs, the gauges' counts.
func (n *Node) synced(now time.Time, pod *corev1.Pod, obs []podlifecycle.Observation, res *podlifecycle.Result) {
	p := n.pods[pod.UID]
	if p == nil {
		return
	}
	for i := range obs {
		switch o := &obs[i]; o.Kind {
		case podlifecycle.SandboxReady:
			p.sandboxReady = true
		case podlifecycle.SandboxNotReady:
			p.sandboxReady = false
		case podlifecycle.ContainerStarted, podlifecycle.ContainerExited:
			n.logs.record(pod, *o, now)
		}
	}
	for i := range res.Statuses {
		p.nRunning, p.nExited = countStates(&res.Statuses[i])
	}
	n.metrics.observeResult(p, res, now)
}

// finished is the runner's hook once a pod's machine is finished.
func (n *Node) finished(_ time.Time, pod *corev1.Pod) {
	p := n.pods[pod.UID]
	if p == nil || p.finished {
		return
	}
	p.finished, p.running, p.sandboxReady = true, false, false
	n.count(func(s *NodeStats) { s.Finished++; s.Running-- })
	if p.removed {
		n.logs.forget(p.api)
		delete(n.pods, p.api.UID)
	}
}

// countStates counts the running and the terminated containers of a status.
func countStates(st *corev1.PodStatus) (running, exited int) {
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range list {
			switch {
			case list[i].State.Running != nil:
				running++
			case list[i].State.Terminated != nil:
				exited++
			}
		}
	}
	return running, exited
}
