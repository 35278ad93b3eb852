package versions

import (
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// request and response are the lines exchanged with the upstream command;
// they mirror the types of conformance/cmd/upstream/main.go, which holds
// their documentation.
type request struct {
	Op         string                         `json:"op"`
	RestartAll bool                           `json:"restartAll,omitempty"`
	Pod        *v1.Pod                        `json:"pod,omitempty"`
	Status     *v1.PodStatus                  `json:"status,omitempty"`
	Old        *v1.PodStatus                  `json:"old,omitempty"`
	Sandboxes  []*runtimeapi.PodSandboxStatus `json:"sandboxes,omitempty"`
	Runtime    []runtimeContainer             `json:"runtime,omitempty"`
	Container  *v1.Container                  `json:"container,omitempty"`
	Exit       int32                          `json:"exit,omitempty"`
	Session    int                            `json:"session,omitempty"`
	Step       *lifecycleStep                 `json:"step,omitempty"`
	Terminate  bool                           `json:"terminate,omitempty"`
	Grace      *int64                         `json:"grace,omitempty"`
}

type response struct {
	Error              string            `json:"error,omitempty"`
	Release            string            `json:"release,omitempty"`
	RestartAllVariants []bool            `json:"restartAllVariants,omitempty"`
	NoShouldRestart    string            `json:"noShouldRestart,omitempty"`
	Pod                *v1.Pod           `json:"pod,omitempty"`
	Status             *v1.PodStatus     `json:"status,omitempty"`
	Old                *v1.PodStatus     `json:"old,omitempty"`
	Container          *v1.Container     `json:"container,omitempty"`
	Row                *kubectlRow       `json:"row,omitempty"`
	Conditions         []v1.PodCondition `json:"conditions,omitempty"`
	Restart            bool              `json:"restart,omitempty"`
	Session            int               `json:"session,omitempty"`
	Calls              []criCall         `json:"calls,omitempty"`
	Events             []recordedEvent   `json:"events,omitempty"`
	Running            []string          `json:"running,omitempty"`
	Wall               time.Duration     `json:"wall,omitempty"`
	Refused            string            `json:"refused,omitempty"`
}
