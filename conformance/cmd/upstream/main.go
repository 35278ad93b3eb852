// Command upstream answers the conformance suite's questions with the code of
// one Kubernetes release, so that nodestate can be compared with a release
// whose k8s.io/api cannot be built into the same binary as nodestate (see the
// conformance package's doc, "Older minors"). It reads one JSON request a
// line on stdin and writes one JSON response a line on stdout.
//
// Every request carries the objects a property compares on; the response
// echoes them as this release's types decoded them (a field the release does
// not know is dropped, as its API server drops it) and gives the upstream
// result: the pod table row of pkg/printers/internalversion, the conditions
// of pkg/kubelet/status's generators assembled in generateAPIPodStatus's
// order, ContainerShouldRestart's decision, or the runtime calls of the
// kuberuntime manager's SyncPod and KillPod over a history (lifecycle.go).
//
// This directory is the source of every release's copy: main.go and
// lifecycle.go are shared,
// version.go is the v1.37.2 shim and testdata/<minor>/version.go the other
// releases' (the APIs whose signatures or presence differ). The copies under
// conformance/versions/ are written by `go run ./internal/cmd/genversions`
// from the repository root.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // registers the core types with legacyscheme
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/status"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	"k8s.io/kubernetes/pkg/printers"
	"k8s.io/kubernetes/pkg/printers/internalversion"
	utilpod "k8s.io/kubernetes/pkg/util/pod"
)

// request is one question. Op is "info", "print", "conditions",
// "restart", or one of the podlifecycle comparison's "lifecycle-new",
// "lifecycle-step" and "lifecycle-end" (lifecycle.go).
type request struct {
	Op string `json:"op"`
	// RestartAll is the RestartAllContainersOnContainerExits gate for
	// "conditions" and "restart"; it is set only where the release has the
	// gate (info's RestartAllVariants).
	RestartAll bool `json:"restartAll,omitempty"`

	Pod *v1.Pod `json:"pod,omitempty"`
	// Status and Old are the kubelet's new status and its cached one (nil:
	// the pod's) for "conditions".
	Status *v1.PodStatus `json:"status,omitempty"`
	Old    *v1.PodStatus `json:"old,omitempty"`
	// Sandboxes and Runtime are the runtime's view for "conditions".
	Sandboxes []*runtimeapi.PodSandboxStatus `json:"sandboxes,omitempty"`
	Runtime   []runtimeContainer             `json:"runtime,omitempty"`

	// Container and Exit are the exited container of Pod's spec for
	// "restart".
	Container *v1.Container `json:"container,omitempty"`
	Exit      int32         `json:"exit,omitempty"`

	// Session is the history of "lifecycle-step" and "lifecycle-end";
	// Step its changes before the sync, Terminate runs KillPod with Grace
	// as the override instead of SyncPod.
	Session   int            `json:"session,omitempty"`
	Step      *lifecycleStep `json:"step,omitempty"`
	Terminate bool           `json:"terminate,omitempty"`
	Grace     *int64         `json:"grace,omitempty"`
}

// runtimeContainer is one container as the runtime lists it: State is
// "created", "running" or "exited".
type runtimeContainer struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	ExitCode int    `json:"exitCode,omitempty"`
}

// response is the answer to one request.
type response struct {
	Error string `json:"error,omitempty"`

	// info
	Release            string `json:"release,omitempty"`
	RestartAllVariants []bool `json:"restartAllVariants,omitempty"`
	// NoShouldRestart, when set, says why the release has no
	// ContainerShouldRestart to compare with.
	NoShouldRestart string `json:"noShouldRestart,omitempty"`

	// The request's objects as this release decoded them.
	Pod       *v1.Pod       `json:"pod,omitempty"`
	Status    *v1.PodStatus `json:"status,omitempty"`
	Old       *v1.PodStatus `json:"old,omitempty"`
	Container *v1.Container `json:"container,omitempty"`

	Row        *row              `json:"row,omitempty"`
	Conditions []v1.PodCondition `json:"conditions,omitempty"`
	Restart    bool              `json:"restart,omitempty"`

	// lifecycle: the session, the runtime calls and events of the sync,
	// and the containers whose newest instance runs after it.
	Session int             `json:"session,omitempty"`
	Calls   []criCall       `json:"calls,omitempty"`
	Events  []recordedEvent `json:"events,omitempty"`
	Running []string        `json:"running,omitempty"`
	// Wall is the wall-clock time SyncPod or KillPod took: the manager
	// takes the whole seconds a preStop hook and a container's wait for
	// its turn to stop took on the wall clock off that container's
	// StopContainer grace (executePreStopHook, waitForTurn), so a slow
	// machine can shorten a grace.
	Wall time.Duration `json:"wall,omitempty"`
	// Refused says why the release's API server refuses a lifecycle-new
	// pod.
	Refused string `json:"refused,omitempty"`
}

// row is the printer's row: the cells after NAME and the Completed row
// condition.
type row struct {
	Ready, Status, Restarts           string
	IP, Node, Nominated, Gates        string
	Completed                         bool
	CompletedReason, CompletedMessage string
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	gen := printers.NewTableGenerator().With(internalversion.AddHandlers)
	for in.Scan() {
		var req request
		var resp response
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			resp.Error = fmt.Sprintf("decoding the request: %v", err)
		} else {
			resp = answer(gen, &req)
		}
		if err := out.Encode(&resp); err != nil {
			fmt.Fprintln(os.Stderr, "upstream:", err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(1)
	}
}

func answer(gen *printers.HumanReadableGenerator, req *request) response {
	switch req.Op {
	case "info":
		return response{Release: release, RestartAllVariants: restartAllVariants(), NoShouldRestart: noShouldRestart}
	case "print":
		r, err := printRow(gen, req.Pod)
		if err != nil {
			return response{Error: err.Error()}
		}
		return response{Pod: req.Pod, Row: r}
	case "conditions":
		if err := setRestartAll(req.RestartAll); err != nil {
			return response{Error: err.Error()}
		}
		return response{Pod: req.Pod, Status: req.Status, Old: req.Old, Conditions: conditions(req)}
	case "restart":
		if err := setRestartAll(req.RestartAll); err != nil {
			return response{Error: err.Error()}
		}
		if req.Pod == nil || req.Container == nil {
			return response{Error: "restart needs pod and container"}
		}
		restart, err := shouldRestart(*req.Container, req.Pod.Spec, req.Exit)
		if err != nil {
			return response{Error: err.Error()}
		}
		return response{Pod: req.Pod, Container: req.Container, Restart: restart}
	case "lifecycle-new", "lifecycle-step", "lifecycle-end":
		return lifecycle(req)
	}
	return response{Error: fmt.Sprintf("unknown op %q", req.Op)}
}

// printRow prints pod as `kubectl get pods -o wide` receives it from the API
// server: decoded with the v1 defaults, converted to the internal type and
// printed by the handlers of pkg/printers/internalversion.
func printRow(gen *printers.HumanReadableGenerator, pod *v1.Pod) (*row, error) {
	if pod == nil {
		return nil, fmt.Errorf("print needs a pod")
	}
	decoded := pod.DeepCopy()
	legacyscheme.Scheme.Default(decoded)
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(decoded, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the pod to the internal type: %v", err)
	}
	table, err := gen.GenerateTable(internal, printers.GenerateOptions{Wide: true})
	if err != nil {
		return nil, fmt.Errorf("printer: %v", err)
	}
	if len(table.Rows) != 1 || len(table.Rows[0].Cells) != 9 {
		return nil, fmt.Errorf("printer gave %d rows, want 1 with 9 cells: %v", len(table.Rows), table.Rows)
	}
	c := table.Rows[0].Cells
	r := &row{Ready: c[1].(string), Status: c[2].(string), Restarts: c[3].(string),
		IP: c[5].(string), Node: c[6].(string), Nominated: c[7].(string), Gates: c[8].(string)}
	for _, rc := range table.Rows[0].Conditions {
		if rc.Type == metav1.RowCompleted && rc.Status == metav1.ConditionTrue {
			r.Completed, r.CompletedReason, r.CompletedMessage = true, rc.Reason, rc.Message
		}
	}
	return r, nil
}

// conditions builds the conditions as the kubelet's generateAPIPodStatus
// assembles them: the conditions the kubelet does not own, DisruptionTarget
// from the cached status, PodReadyToStartContainers, Initialized, Ready,
// ContainersReady, PodScheduled and, where the release has it and the gate
// is on, AllContainersRestarting.
func conditions(req *request) []v1.PodCondition {
	pod := req.Pod.DeepCopy()
	s := req.Status.DeepCopy()
	old := &pod.Status
	if req.Old != nil {
		old = req.Old.DeepCopy()
	}
	conds := make([]v1.PodCondition, 0, len(pod.Status.Conditions)+1)
	for _, cond := range pod.Status.Conditions {
		if !kubetypes.PodConditionByKubelet(cond.Type) {
			conds = append(conds, cond)
		}
	}
	if _, dt := podutil.GetPodConditionFromList(old.Conditions, v1.DisruptionTarget); dt != nil {
		conds = utilpod.ReplaceOrAppendPodCondition(conds, dt)
	}
	runtime := &kubecontainer.PodStatus{SandboxStatuses: req.Sandboxes}
	for _, c := range req.Runtime {
		runtime.ContainerStatuses = append(runtime.ContainerStatuses, &kubecontainer.Status{
			Name: c.Name, State: kubecontainer.State(c.State), ExitCode: c.ExitCode})
	}
	conds = append(conds, status.GeneratePodReadyToStartContainersCondition(pod, old, runtime))
	all := append(s.InitContainerStatuses, s.ContainerStatuses...)
	conds = append(conds, status.GeneratePodInitializedCondition(pod, old, all, s.Phase))
	conds = append(conds, status.GeneratePodReadyCondition(pod, old, conds, all, s.Phase))
	conds = append(conds, status.GenerateContainersReadyCondition(pod, old, all, s.Phase))
	conds = append(conds, v1.PodCondition{
		Type:               v1.PodScheduled,
		ObservedGeneration: observedGeneration(old, pod.Generation, v1.PodScheduled),
		Status:             v1.ConditionTrue,
	})
	if c, ok := restartingCondition(pod, runtime, old, s.Phase); ok {
		conds = append(conds, c)
	}
	return conds
}
