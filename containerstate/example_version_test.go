package containerstate_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
)

// The feature-gate defaults of each supported minor.
func ExampleDefaultFeaturesFor() {
	for _, v := range kubeversion.Supported() {
		f := containerstate.DefaultFeaturesFor(v)
		fmt.Printf("%v rules=%v restartAll=%v resetOnKubeletRestart=%v\n",
			v, f.ContainerRestartRules, f.RestartAllContainersOnContainerExits, f.ChangeContainerStatusOnKubeletRestart)
	}
	// Output:
	// 1.33 rules=false restartAll=false resetOnKubeletRestart=true
	// 1.34 rules=false restartAll=false resetOnKubeletRestart=true
	// 1.35 rules=true restartAll=false resetOnKubeletRestart=false
	// 1.36 rules=true restartAll=true resetOnKubeletRestart=false
	// 1.37 rules=true restartAll=true resetOnKubeletRestart=false
}

// After a kubelet restart, a running container whose startup probe has no
// result yet: 1.34 reports it not started until the probe succeeds, 1.37
// keeps the started of the status it had reported.
func ExampleDefaultOptionsFor() {
	spec := &v1.PodSpec{Containers: []v1.Container{{Name: "app", StartupProbe: &v1.Probe{}}}}
	started := true
	in := containerstate.Input{
		Pod:  containerstate.Pod{Spec: spec, Name: "web", Namespace: "default"},
		Name: "app",
		Old: &v1.ContainerStatus{Name: "app", ContainerID: "containerd://a1", Started: &started,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
		Newest: &containerstate.Instance{ID: "containerd://a1", State: containerstate.RuntimeRunning, StartedAt: start},
		Now:    start,
	}
	for _, v := range []kubeversion.Version{kubeversion.V1_34, kubeversion.V1_37} {
		s, err := containerstate.DefaultOptionsFor(v).Convert(in)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(v, "started:", *s.Started)
	}
	// Output:
	// 1.34 started: false
	// 1.37 started: true
}

// The API server's check of a status update in which a failed container
// with its own restartPolicy OnFailure, in a pod with restartPolicy Never,
// is reported Running again: 1.33 and 1.34 look at the pod's policy only
// (ContainerRestartRules is absent or off), 1.35 and later at the
// container's.
func ExampleOptions_ValidateStatusTransition() {
	onFailure := v1.ContainerRestartPolicyOnFailure
	spec := &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "app", RestartPolicy: &onFailure}}}
	old := &v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "app",
		State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1}}}}}
	running := &v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "app",
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}}
	for _, v := range kubeversion.Supported() {
		err := containerstate.DefaultOptionsFor(v).ValidateStatusTransition(spec, old, running)
		fmt.Printf("%v allowed=%v\n", v, err == nil)
	}
	// Output:
	// 1.33 allowed=false
	// 1.34 allowed=false
	// 1.35 allowed=true
	// 1.36 allowed=true
	// 1.37 allowed=true
}
