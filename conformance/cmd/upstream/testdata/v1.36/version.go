package main

import (
	"context"
	"time"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	"go.opentelemetry.io/otel/trace/noop"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/util/flowcontrol"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/features"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	containertest "k8s.io/kubernetes/pkg/kubelet/container/testing"
	"k8s.io/kubernetes/pkg/kubelet/kuberuntime"
	"k8s.io/kubernetes/pkg/kubelet/logs"
	"k8s.io/kubernetes/pkg/kubelet/status"
)

// The shim of Kubernetes v1.36.3: the upstream APIs whose presence or
// signature differs between the releases the suite compares with.

const release = "v1.36.3"

// noShouldRestart is empty: the release has ContainerShouldRestart.
const noShouldRestart = ""

// restartAllVariants are the settings of RestartAllContainersOnContainerExits
// the properties run with: its default (on, beta) first, then off.
func restartAllVariants() []bool { return []bool{true, false} }

func setRestartAll(on bool) error {
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(features.RestartAllContainersOnContainerExits): on})
}

func shouldRestart(c v1.Container, spec v1.PodSpec, exit int32) (bool, error) {
	return podutil.ContainerShouldRestart(c, spec, exit), nil
}

func observedGeneration(old *v1.PodStatus, generation int64, t v1.PodConditionType) int64 {
	return podutil.CalculatePodConditionObservedGeneration(old, generation, t)
}

// restartingCondition is generateAPIPodStatus's AllContainersRestarting
// condition: with the gate on, for a pod with a RestartAllContainers rule.
func restartingCondition(pod *v1.Pod, runtime *kubecontainer.PodStatus, old *v1.PodStatus, phase v1.PodPhase) (v1.PodCondition, bool) {
	if !utilfeature.DefaultFeatureGate.Enabled(features.RestartAllContainersOnContainerExits) || !podutil.AllContainersCouldRestart(&pod.Spec) {
		return v1.PodCondition{}, false
	}
	return status.GenerateAllContainersRestartingCondition(pod, runtime, old, phase), true
}

// newRuntimeManager is the release's NewKubeGenericRuntimeManager over the
// fakes of d, on a node of 16 cores and 32 GiB with default configuration.
// v1.36.3 takes no defaultPodSysctls and a float memoryThrottlingFactor.
func newRuntimeManager(ctx context.Context, d runtimeDeps) (kuberuntime.KubeGenericRuntime, error) {
	m, _, err := kuberuntime.NewKubeGenericRuntimeManager(
		ctx,
		d.recorder,
		d.liveness, d.readiness, d.startup,
		d.root,         // rootDirectory
		d.root+"/pods", // podLogsDirectory: empty, so restart counts come from the runtime
		&cadvisorapi.MachineInfo{MemoryCapacity: 32 << 30, NumCores: 16},
		podStates{},
		110, // maxPods
		&containertest.FakeOS{},
		&containertest.FakeRuntimeHelper{},
		hookHTTP{},
		d.imageBackOff,
		false, // serializeImagePulls
		nil,   // maxParallelImagePulls: no limit
		0, 0,  // imagePullQPS, imagePullBurst: no throttling
		string(kubeletconfig.NeverVerifyPreloadedImages), nil,
		"", "", // no credential provider plugins
		nil,   // singleProcessOOMKill
		false, // cpuCFSQuota
		metav1.Duration{Duration: 100 * time.Millisecond},
		d.runtime,
		d.images,
		cm.NewFakeContainerManager(),
		logs.NewStubContainerLogManager(),
		nil,       // runtimeClassManager: pods name no runtime class
		false, "", // seccompDefault, memorySwapBehavior
		allocatable,
		0.9,         // memoryThrottlingFactor: the kubelet's default
		"",          // memoryReservationPolicy
		podStates{}, // podPullingTimeRecorder
		noop.NewTracerProvider(),
		nil, nil, // tokenManager, getServiceAccount: no credential provider plugins
		nil, // podInitContainerTimeRecorder
	)
	return m, err
}

func allocatable() v1.ResourceList {
	return v1.ResourceList{v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourceCPU: resource.MustParse("16")}
}

// syncPod is the manager's SyncPod with the crash-loop back-off, the
// AllContainersRestarting condition false.
func syncPod(ctx context.Context, m kuberuntime.KubeGenericRuntime, pod *v1.Pod, status *kubecontainer.PodStatus, backOff *flowcontrol.Backoff) kubecontainer.PodSyncResult {
	return m.SyncPod(ctx, pod, status, nil, backOff, false)
}

func podStatus(ctx context.Context, m kuberuntime.KubeGenericRuntime, pod *kubecontainer.Pod) (*kubecontainer.PodStatus, error) {
	return m.GetPodStatus(ctx, pod)
}

// initializeActuated: the kubelet of this release calls nothing on the
// manager before SyncPod (InitializeActuatedPod came in 1.37).
func initializeActuated(context.Context, kuberuntime.KubeGenericRuntime, *v1.Pod) {}

// refused is empty: the pods the podlifecycle histories draw are valid in
// this release once createdPod dropped what its gates turn off.
func refused(*v1.Pod) string { return "" }
