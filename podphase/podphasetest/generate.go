package podphasetest

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podphase"
)

// Epoch is the instant generated pods are created at; every time in a
// generated pod lies within a day after it.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Stage is how far a generated pod is in its life.
type Stage uint8

// The stages [PodAt] can generate.
const (
	// StageNew: the pod has a spec and no container statuses yet.
	StageNew Stage = iota
	// StageInitializing: an init container is in progress; the ones
	// before it completed (regular) or started (sidecars).
	StageInitializing
	// StageRunning: initialization is done and the regular containers are
	// running, waiting to restart or have exited.
	StageRunning
	// StageTerminal: the pod worker terminated the pod; every container has
	// exited.
	StageTerminal
)

// Pod returns a generator of pods a kubelet of Kubernetes 1.37 could report:
// a spec with a restart policy, regular init containers, sidecars, regular
// containers, container restart policies and rules (including
// RestartAllContainers) and readiness gates; container statuses consistent
// with a stage of the pod's life; and the phase, reason and conditions the
// kubelet derives from them with its default feature gates. Some pods are
// being deleted.
func Pod() *rapid.Generator[*v1.Pod] {
	return rapid.Custom(func(t *rapid.T) *v1.Pod {
		stage := rapid.SampledFrom([]Stage{StageNew, StageInitializing, StageRunning, StageTerminal}).Draw(t, "stage")
		return drawPod(t, stage)
	})
}

// PodAt is [Pod] restricted to one stage of the pod's life.
func PodAt(stage Stage) *rapid.Generator[*v1.Pod] {
	return rapid.Custom(func(t *rapid.T) *v1.Pod { return drawPod(t, stage) })
}

// Spec returns a generator of pod specs: 0 to 3 init containers (regular
// or sidecars), 1 to 4 regular containers, container restart policies and
// rules, and 0 to 2 readiness gates.
func Spec() *rapid.Generator[v1.PodSpec] {
	return rapid.Custom(drawSpec)
}

var (
	podPolicies       = []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}
	containerPolicies = []v1.ContainerRestartPolicy{v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}
	exitCodes         = []int32{0, 1, 2, 42, 127, 137, 143, -1073741510}
)

func drawSpec(t *rapid.T) v1.PodSpec {
	spec := v1.PodSpec{RestartPolicy: rapid.SampledFrom(podPolicies).Draw(t, "restartPolicy")}
	nInit := rapid.IntRange(0, 3).Draw(t, "initContainers")
	for i := 0; i < nInit; i++ {
		c := v1.Container{Name: fmt.Sprintf("init-%d", i), Image: "busybox"}
		if rapid.Bool().Draw(t, "sidecar") {
			always := v1.ContainerRestartPolicyAlways
			c.Name = fmt.Sprintf("sidecar-%d", i)
			c.RestartPolicy = &always
		} else {
			drawContainerPolicy(t, &c, []v1.ContainerRestartPolicy{v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever})
		}
		drawRules(t, &c)
		spec.InitContainers = append(spec.InitContainers, c)
	}
	nRegular := rapid.IntRange(1, 4).Draw(t, "containers")
	for i := 0; i < nRegular; i++ {
		c := v1.Container{Name: fmt.Sprintf("app-%d", i), Image: "nginx"}
		drawContainerPolicy(t, &c, containerPolicies)
		drawRules(t, &c)
		spec.Containers = append(spec.Containers, c)
	}
	nGates := rapid.IntRange(0, 2).Draw(t, "readinessGates")
	for i := 0; i < nGates; i++ {
		spec.ReadinessGates = append(spec.ReadinessGates, v1.PodReadinessGate{ConditionType: v1.PodConditionType(fmt.Sprintf("example.com/gate-%d", i))})
	}
	return spec
}

// drawContainerPolicy gives c its own restartPolicy, sometimes.
func drawContainerPolicy(t *rapid.T, c *v1.Container, from []v1.ContainerRestartPolicy) {
	if rapid.IntRange(0, 3).Draw(t, "ownPolicy") == 0 {
		p := rapid.SampledFrom(from).Draw(t, "containerPolicy")
		c.RestartPolicy = &p
	}
}

// drawRules adds restart rules to a container with its own policy, as the
// API server requires.
func drawRules(t *rapid.T, c *v1.Container) {
	if c.RestartPolicy == nil || !rapid.Bool().Draw(t, "rules") {
		return
	}
	action := rapid.SampledFrom([]v1.ContainerRestartRuleAction{
		v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers,
	}).Draw(t, "ruleAction")
	op := rapid.SampledFrom([]v1.ContainerRestartRuleOnExitCodesOperator{
		v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn,
	}).Draw(t, "ruleOperator")
	c.RestartPolicyRules = append(c.RestartPolicyRules, v1.ContainerRestartRule{
		Action:    action,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: []int32{rapid.SampledFrom(exitCodes).Draw(t, "ruleCode")}},
	})
}

func drawPod(t *rapid.T, stage Stage) *v1.Pod {
	spec := drawSpec(t)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod", Namespace: "default", UID: "uid-1",
			Generation: rapid.Int64Range(1, 5).Draw(t, "generation"), CreationTimestamp: metav1.NewTime(Epoch)},
		Spec: spec,
	}
	terminal := false
	switch stage {
	case StageInitializing:
		drawInitializing(t, pod)
	case StageRunning:
		drawRunning(t, pod)
	case StageTerminal:
		drawTerminal(t, pod)
		terminal = true
	}
	for _, g := range spec.ReadinessGates {
		if rapid.Bool().Draw(t, "gateCondition") {
			s := rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}).Draw(t, "gateStatus")
			pod.Status.Conditions = append(pod.Status.Conditions, v1.PodCondition{Type: g.ConditionType, Status: s, LastTransitionTime: metav1.NewTime(Epoch)})
		}
	}
	e, err := podphase.Explain(podphase.Input{Pod: pod, Terminal: terminal})
	if err != nil {
		panic("podphasetest: generated an inconsistent pod: " + err.Error())
	}
	pod.Status.Phase = e.Phase
	if stage != StageNew {
		sandbox := podphase.SandboxReady
		if terminal {
			sandbox = podphase.SandboxNotReady
		}
		conds, err := podphase.Conditions(podphase.ConditionsInput{Pod: pod, Status: &pod.Status, Sandbox: sandbox, Now: Epoch.Add(time.Minute)})
		if err != nil {
			panic("podphasetest: " + err.Error())
		}
		pod.Status.Conditions = conds
		pod.Status.StartTime = &metav1.Time{Time: Epoch}
	}
	if e.Phase == v1.PodFailed && rapid.IntRange(0, 3).Draw(t, "evicted") == 0 {
		pod.Status.Reason, pod.Status.Message = "Evicted", "The node was low on resource: memory."
	}
	if rapid.IntRange(0, 5).Draw(t, "deleting") == 0 {
		ts := metav1.NewTime(Epoch.Add(time.Hour))
		pod.DeletionTimestamp = &ts
		if rapid.IntRange(0, 3).Draw(t, "nodeLost") == 0 {
			pod.Status.Reason = podphase.ReasonNodeLost
		}
	}
	return pod
}

func ago(t *rapid.T) metav1.Time {
	return metav1.NewTime(Epoch.Add(time.Duration(rapid.IntRange(1, 24*3600-1).Draw(t, "finishedAt")) * time.Second))
}

func runningStatus(t *rapid.T, name string, started, ready bool) v1.ContainerStatus {
	st := v1.ContainerStatus{Name: name, Image: "image", Started: &started, Ready: ready,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(Epoch)}}}
	drawRestarts(t, &st)
	return st
}

// drawRestarts gives a container a restart count and, when it restarted, the
// last termination.
func drawRestarts(t *rapid.T, st *v1.ContainerStatus) {
	st.RestartCount = int32(rapid.IntRange(0, 5).Draw(t, "restartCount"))
	if st.RestartCount > 0 {
		code := rapid.SampledFrom(exitCodes).Draw(t, "lastExit")
		st.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: code, Reason: exitReason(code), FinishedAt: ago(t)}
	}
}

func exitReason(code int32) string {
	if code == 0 {
		return "Completed"
	}
	return "Error"
}

func terminatedStatus(t *rapid.T, name string, code int32) v1.ContainerStatus {
	st := v1.ContainerStatus{Name: name, Image: "image", Started: new(bool),
		State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, Reason: exitReason(code), FinishedAt: ago(t)}}}
	drawRestarts(t, &st)
	return st
}

func waitingStatus(name, reason string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, Image: "image", Started: new(bool), State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}}
}

// crashLooping is a container waiting to be restarted after an exit.
func crashLooping(t *rapid.T, name string) v1.ContainerStatus {
	st := waitingStatus(name, "CrashLoopBackOff")
	code := rapid.SampledFrom(exitCodes).Draw(t, "crashExit")
	st.RestartCount = int32(rapid.IntRange(1, 5).Draw(t, "restartCount"))
	st.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: code, Reason: exitReason(code), FinishedAt: ago(t)}
	return st
}

// completedInit is a finished init container: a regular one exited 0 and is
// ready; a sidecar runs and has started.
func completedInit(t *rapid.T, c *v1.Container) v1.ContainerStatus {
	if containerstate.IsSidecar(c) {
		if rapid.IntRange(0, 4).Draw(t, "sidecarCrash") == 0 {
			return crashLooping(t, c.Name)
		}
		return runningStatus(t, c.Name, true, rapid.Bool().Draw(t, "sidecarReady"))
	}
	st := terminatedStatus(t, c.Name, 0)
	st.Ready = true
	return st
}

func drawInitializing(t *rapid.T, pod *v1.Pod) {
	spec := &pod.Spec
	if len(spec.InitContainers) == 0 {
		drawRunning(t, pod)
		return
	}
	k := rapid.IntRange(0, len(spec.InitContainers)-1).Draw(t, "initInProgress")
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		var st v1.ContainerStatus
		switch {
		case i < k:
			st = completedInit(t, c)
		case i == k:
			st = inProgressInit(t, spec, c)
		default:
			st = waitingStatus(c.Name, "PodInitializing")
		}
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, st)
	}
	for i := range spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, waitingStatus(spec.Containers[i].Name, "PodInitializing"))
	}
}

// inProgressInit is the init container the kubelet is working on.
func inProgressInit(t *rapid.T, spec *v1.PodSpec, c *v1.Container) v1.ContainerStatus {
	switch rapid.IntRange(0, 3).Draw(t, "initState") {
	case 0:
		return waitingStatus(c.Name, rapid.SampledFrom([]string{"PodInitializing", "ErrImagePull", "ImagePullBackOff", "CreateContainerConfigError"}).Draw(t, "initWaiting"))
	case 1:
		return runningStatus(t, c.Name, false, false)
	case 2:
		if containerstate.IsSidecar(c) {
			return runningStatus(t, c.Name, false, false)
		}
		code := rapid.SampledFrom(exitCodes[1:]).Draw(t, "initExit")
		return terminatedStatus(t, c.Name, code)
	}
	st := crashLooping(t, c.Name)
	if st.LastTerminationState.Terminated.ExitCode == 0 && !containerstate.IsSidecar(c) {
		// A regular init container that exited 0 is not run again.
		st.LastTerminationState.Terminated.ExitCode = 1
		st.LastTerminationState.Terminated.Reason = "Error"
	}
	return st
}

func drawRunning(t *rapid.T, pod *v1.Pod) {
	spec := &pod.Spec
	for i := range spec.InitContainers {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, completedInit(t, &spec.InitContainers[i]))
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		var st v1.ContainerStatus
		switch rapid.IntRange(0, 5).Draw(t, "containerState") {
		case 0:
			st = waitingStatus(c.Name, "ContainerCreating")
		case 1:
			st = crashLooping(t, c.Name)
		case 2:
			st = terminatedStatus(t, c.Name, rapid.SampledFrom(exitCodes).Draw(t, "exit"))
		default:
			ready := rapid.Bool().Draw(t, "ready")
			st = runningStatus(t, c.Name, true, ready)
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, st)
	}
}

func drawTerminal(t *rapid.T, pod *v1.Pod) {
	spec := &pod.Spec
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		code := int32(0)
		if containerstate.IsSidecar(c) {
			code = rapid.SampledFrom([]int32{0, 137}).Draw(t, "sidecarExit")
		}
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, terminatedStatus(t, c.Name, code))
	}
	for i := range spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses,
			terminatedStatus(t, spec.Containers[i].Name, rapid.SampledFrom(exitCodes).Draw(t, "exit")))
	}
}
