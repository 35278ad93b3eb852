package conformance

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/containerstate/containerstatetest"
	"github.com/nodestate/nodestate/podphase"
)

// This file holds the inputs of the printer, conditions and ShouldRestart
// properties and their printing, with no dependency on k8s.io/kubernetes:
// internal/cmd/genversions copies it into the driver module
// conformance/versions, which runs the same properties against the older
// releases (doc.go, "Older minors").

// runtimeContainer is one container as the runtime lists it, the part of
// the kubelet's kubecontainer.Status the condition generators read.
type runtimeContainer struct {
	Name     string `json:"name"`
	State    string `json:"state"` // runtimeCreated, runtimeRunning or runtimeExited
	ExitCode int    `json:"exitCode,omitempty"`
}

// The runtime states, as kubecontainer.State spells them.
const (
	runtimeCreated = "created"
	runtimeRunning = "running"
	runtimeExited  = "exited"
)

// kubectlRow is what upstream's pod table printer gives for one pod: the
// cells after NAME (READY, STATUS, RESTARTS, AGE, then IP, NODE, NOMINATED
// NODE and READINESS GATES for -o wide) and the row conditions.
type kubectlRow struct {
	Ready, Status, Restarts           string
	IP, Node, Nominated, Gates        string
	Completed                         bool
	CompletedReason, CompletedMessage string
}

// nodestateRow is podphase's row for pod under opts, with the ages in
// RESTARTS measured at now.
func nodestateRow(t *rapid.T, opts podphase.Options, pod *v1.Pod, now time.Time) kubectlRow {
	row, err := opts.Columns(pod, now)
	if err != nil {
		t.Fatalf("podphase.Columns: %v", err)
	}
	return kubectlRow{Ready: row.Ready, Status: row.Status, Restarts: row.Restarts,
		IP: row.IP, Node: row.Node, Nominated: row.NominatedNode, Gates: row.ReadinessGates,
		Completed: row.Completed, CompletedReason: row.CompletedReason, CompletedMessage: row.CompletedMessage}
}

func (r kubectlRow) String() string {
	s := fmt.Sprintf("READY %q STATUS %q RESTARTS %q IP %q NODE %q NOMINATED %q GATES %q", r.Ready, r.Status, r.Restarts, r.IP, r.Node, r.Nominated, r.Gates)
	if r.Completed {
		s += fmt.Sprintf(" Completed(%q, %q)", r.CompletedReason, r.CompletedMessage)
	}
	return s
}

// describeTarget prints the container a restart decision is about and the
// pod policy it falls back to.
func describeTarget(target containerstatetest.TargetContainer) string {
	return fmt.Sprintf("pod restartPolicy=%s\n%s %s%s", target.Pod.Spec.RestartPolicy, target.Kind, target.Name, containerSpec(target.Container))
}

// conditionsCase is one input of the conditions property: the pod as the
// API server has it, the kubelet's new status and its cached old one, and
// the runtime's sandboxes.
type conditionsCase struct {
	pod       *v1.Pod
	status    *v1.PodStatus
	old       *v1.PodStatus // nil: the pod's status
	sandbox   podphase.Sandbox
	sandboxes []*runtimeapi.PodSandboxStatus
	// runtime is the runtime's view of the containers, derived from status;
	// cleanedUp says it holds no container of the spec.
	runtime   []runtimeContainer
	cleanedUp bool
}

var sandboxNames = map[podphase.Sandbox]string{podphase.SandboxReady: "Ready", podphase.SandboxMissing: "Missing",
	podphase.SandboxMultipleReady: "MultipleReady", podphase.SandboxNotReady: "NotReady",
	podphase.SandboxNetworkChanged: "NetworkChanged", podphase.SandboxNoIP: "NoIP"}

var kubeletPhases = []v1.PodPhase{v1.PodRunning, v1.PodPending, v1.PodSucceeded, v1.PodFailed}

func conditionsGen(anchor time.Time) *rapid.Generator[conditionsCase] {
	return rapid.Custom(func(t *rapid.T) conditionsCase {
		pod := podGen(anchor).Draw(t, "pod")
		pod.Spec.HostNetwork = rapid.IntRange(0, 3).Draw(t, "hostNetwork") == 3
		// The kubelet's new status: the container statuses as they are, and
		// the phase getPhase gives, which is one of four.
		s := pod.Status.DeepCopy()
		s.Conditions = nil
		if !isKubeletPhase(s.Phase) || rapid.IntRange(0, 3).Draw(t, "newPhase") == 3 {
			s.Phase = rapid.SampledFrom(kubeletPhases).Draw(t, "phase")
		}
		c := conditionsCase{pod: pod, status: s}
		if rapid.Bool().Draw(t, "cached") {
			c.old = &v1.PodStatus{Phase: rapid.SampledFrom(kubeletPhases).Draw(t, "oldPhase")}
			n := rapid.IntRange(0, 3).Draw(t, "oldConditions")
			for i := 0; i < n; i++ {
				c.old.Conditions = append(c.old.Conditions, v1.PodCondition{
					Type:               rapid.SampledFrom([]v1.PodConditionType{v1.PodInitialized, v1.DisruptionTarget, v1.PodReady, v1.AllContainersRestarting}).Draw(t, "oldType"),
					Status:             rapid.SampledFrom(conditionStatuses).Draw(t, "oldStatus"),
					Reason:             rapid.SampledFrom(conditionReasons).Draw(t, "oldReason"),
					ObservedGeneration: rapid.Int64Range(0, 2).Draw(t, "oldGeneration"),
					LastTransitionTime: metav1.NewTime(anchor.Add(-time.Hour)),
				})
			}
		}
		c.sandbox = rapid.SampledFrom([]podphase.Sandbox{podphase.SandboxReady, podphase.SandboxMissing, podphase.SandboxMultipleReady,
			podphase.SandboxNotReady, podphase.SandboxNetworkChanged, podphase.SandboxNoIP}).Draw(t, "sandbox")
		if c.sandbox == podphase.SandboxNoIP {
			pod.Spec.HostNetwork = false
		}
		c.sandboxes = sandboxesFor(t, c.sandbox, pod.Spec.HostNetwork)
		c.runtime, c.cleanedUp = runtimeFor(t, pod, s)
		return c
	})
}

func isKubeletPhase(p v1.PodPhase) bool {
	for _, k := range kubeletPhases {
		if p == k {
			return true
		}
	}
	return false
}

// sandboxesFor draws a runtime's sandbox list, newest first, that is in
// the state s describes, for a pod with or without host network. It is the
// reading of podphase.Sandbox's documentation in the runtime's terms.
func sandboxesFor(t *rapid.T, s podphase.Sandbox, hostNetwork bool) []*runtimeapi.PodSandboxStatus {
	podMode := runtimeapi.NamespaceMode_POD
	if hostNetwork {
		podMode = runtimeapi.NamespaceMode_NODE
	}
	box := func(ready bool, mode runtimeapi.NamespaceMode, network *runtimeapi.PodSandboxNetworkStatus) *runtimeapi.PodSandboxStatus {
		st := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		if ready {
			st = runtimeapi.PodSandboxState_SANDBOX_READY
		}
		b := &runtimeapi.PodSandboxStatus{Id: "sandbox", Metadata: &runtimeapi.PodSandboxMetadata{Attempt: 1}, State: st, Network: network}
		if mode != runtimeapi.NamespaceMode_POD || rapid.Bool().Draw(t, "linux") {
			b.Linux = &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: &runtimeapi.NamespaceOption{Network: mode}}}
		}
		return b
	}
	withIP := func() *runtimeapi.PodSandboxNetworkStatus {
		switch rapid.IntRange(0, 2).Draw(t, "network") {
		case 0:
			return &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.7"}
		case 1:
			return nil // the runtime reports no network status
		}
		if hostNetwork {
			return &runtimeapi.PodSandboxNetworkStatus{} // ignored for host network
		}
		return &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.9"}
	}
	older := func(list []*runtimeapi.PodSandboxStatus) []*runtimeapi.PodSandboxStatus {
		n := rapid.IntRange(0, 2).Draw(t, "olderSandboxes")
		for i := 0; i < n; i++ {
			list = append(list, box(false, podMode, withIP()))
		}
		return list
	}
	switch s {
	case podphase.SandboxMissing:
		return nil
	case podphase.SandboxMultipleReady:
		n := rapid.IntRange(2, 4).Draw(t, "sandboxes")
		a := rapid.IntRange(0, n-1).Draw(t, "readyA")
		b := (a + 1 + rapid.IntRange(0, n-2).Draw(t, "readyB")) % n
		var list []*runtimeapi.PodSandboxStatus
		for i := 0; i < n; i++ {
			ready := i == a || i == b || rapid.Bool().Draw(t, "alsoReady")
			list = append(list, box(ready, podMode, withIP()))
		}
		return list
	case podphase.SandboxNotReady:
		list := older([]*runtimeapi.PodSandboxStatus{box(false, podMode, withIP())})
		if len(list) > 1 && rapid.Bool().Draw(t, "olderReady") {
			list[len(list)-1].State = runtimeapi.PodSandboxState_SANDBOX_READY
		}
		return list
	case podphase.SandboxNetworkChanged:
		modes := []runtimeapi.NamespaceMode{runtimeapi.NamespaceMode_NODE, runtimeapi.NamespaceMode_POD, runtimeapi.NamespaceMode_CONTAINER, runtimeapi.NamespaceMode_TARGET}
		var other []runtimeapi.NamespaceMode
		for _, m := range modes {
			if m != podMode {
				other = append(other, m)
			}
		}
		return older([]*runtimeapi.PodSandboxStatus{box(true, rapid.SampledFrom(other).Draw(t, "mode"), withIP())})
	case podphase.SandboxNoIP:
		return older([]*runtimeapi.PodSandboxStatus{box(true, podMode, &runtimeapi.PodSandboxNetworkStatus{})})
	}
	return older([]*runtimeapi.PodSandboxStatus{box(true, podMode, withIP())})
}

// runtimeFor returns the runtime's containers behind the kubelet's new
// status s, which podphase reads as its container states: a Terminated
// status is an exited container with its exit code, a Running one a running
// container, any other a created one. Sometimes, when no status is
// Terminated, the runtime has removed every container instead (the end of
// an in-place restart of all containers); podphase then gets
// RuntimeCleanedUp.
func runtimeFor(t *rapid.T, pod *v1.Pod, s *v1.PodStatus) ([]runtimeContainer, bool) {
	inSpec := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		inSpec[c.Name] = true
	}
	for _, c := range pod.Spec.Containers {
		inSpec[c.Name] = true
	}
	var runtime []runtimeContainer
	terminated := false
	for _, list := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for _, st := range list {
			if !inSpec[st.Name] {
				continue
			}
			rs := runtimeContainer{Name: st.Name, State: runtimeCreated}
			switch {
			case st.State.Terminated != nil:
				rs.State, rs.ExitCode = runtimeExited, int(st.State.Terminated.ExitCode)
				terminated = true
			case st.State.Running != nil:
				rs.State = runtimeRunning
			}
			runtime = append(runtime, rs)
		}
	}
	if len(runtime) == 0 || !terminated && rapid.IntRange(0, 3).Draw(t, "cleanedUp") == 3 {
		return nil, true
	}
	return runtime, false
}

// comparable drops what the property does not compare: the
// lastTransitionTime of the conditions the status manager stamps (no
// upstream function to compare it with is exported).
func comparable(conds []v1.PodCondition) []v1.PodCondition {
	out := []v1.PodCondition{}
	for _, c := range conds {
		switch c.Type {
		case v1.ContainersReady, v1.PodReady, v1.PodInitialized, v1.PodReadyToStartContainers, v1.PodScheduled, v1.DisruptionTarget, v1.AllContainersRestarting:
			c.LastTransitionTime = metav1.Time{}
		}
		out = append(out, c)
	}
	return out
}

// knownDifference names the documented difference c falls on, or "".
//
// The kubelet passes its generators append(initContainerStatuses,
// containerStatuses...), which is nil, and so "UnknownContainerStatuses",
// when the init list is nil and the regular list is empty but not nil.
// podphase reads "nil" as both lists nil, so that an empty, non-nil list
// reaches its rules as it reaches the upstream generators in their own
// tests (spec/podphase.md cases N02, N11, N13, N14, N19). A kubelet never
// builds such a status (it reports one status per regular container) and a
// status decoded from the API has nil for an empty list.
func knownDifference(c conditionsCase, gate bool) string {
	if c.status.InitContainerStatuses == nil && c.status.ContainerStatuses != nil && len(c.status.ContainerStatuses) == 0 {
		return "initContainerStatuses nil with containerStatuses empty, not nil"
	}
	return ""
}

func equalConditions(a, b []v1.PodCondition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func conditionsString(conds []v1.PodCondition) string {
	var b strings.Builder
	for _, c := range conds {
		fmt.Fprintf(&b, "\n    %s=%s reason=%q message=%q observedGeneration=%d", c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration)
	}
	return b.String()
}

func describeCase(c conditionsCase, anchor time.Time) string {
	var b strings.Builder
	b.WriteString(describe(c.pod, anchor))
	fmt.Fprintf(&b, "\nnew status phase=%q (container statuses as the pod's)", c.status.Phase)
	if c.old == nil {
		b.WriteString("\nold status: the pod's")
	} else {
		fmt.Fprintf(&b, "\nold status phase=%q conditions:", c.old.Phase)
		for _, o := range c.old.Conditions {
			fmt.Fprintf(&b, " %s=%s(%s, gen %d)", o.Type, o.Status, o.Reason, o.ObservedGeneration)
		}
	}
	fmt.Fprintf(&b, "\nsandbox %s:", sandboxNames[c.sandbox])
	for _, s := range c.sandboxes {
		fmt.Fprintf(&b, " [%s netns=%s network=%v]", s.State, s.GetLinux().GetNamespaces().GetOptions().GetNetwork(), s.Network)
	}
	fmt.Fprintf(&b, "\nruntime containers (cleaned up %v):", c.cleanedUp)
	for _, r := range c.runtime {
		fmt.Fprintf(&b, " %s=%s", r.Name, r.State)
		if r.State == runtimeExited {
			fmt.Fprintf(&b, "(%d)", r.ExitCode)
		}
	}
	return b.String()
}
