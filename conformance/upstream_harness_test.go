package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	cadvisorapi "github.com/google/cadvisor/lib/model"
	"go.opentelemetry.io/otel/trace/noop"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	containertest "k8s.io/kubernetes/pkg/kubelet/container/testing"
	"k8s.io/kubernetes/pkg/kubelet/kuberuntime"
	"k8s.io/kubernetes/pkg/kubelet/logs"
	proberesults "k8s.io/kubernetes/pkg/kubelet/prober/results"
	testingclock "k8s.io/utils/clock/testing"
)

// upstreamSync is what one call of the kuberuntime manager did.
type upstreamSync struct {
	Calls  []criCall
	Events []recordedEvent
	// Failures are the failed sync results, "action target: error: message"
	// (for a start, the error is the Waiting reason the next status shows).
	Failures []string
	// Err is KillPod's error, or the sync result's aggregate error.
	Err error
	// Wall is the wall-clock time the manager's call took (see
	// lifecycleSync).
	Wall time.Duration
}

// upstreamPod drives the kubelet's kuberuntime manager
// (k8s.io/kubernetes/pkg/kubelet/kuberuntime), built with its exported
// constructor over the fake CRI services, for one pod: each sync reads the
// pod status from the manager as the PLEG does and calls SyncPod with the
// crash-loop back-off, as Kubelet.SyncPod does; terminate calls KillPod as
// SyncTerminatingPod does. Between syncs the history changes the fake
// runtime (exits, pull failures, lost sandbox) and the probe results.
type upstreamPod struct {
	t       testing.TB
	ctx     context.Context
	clock   *testingclock.FakeClock
	cri     *criLog
	events  eventLog
	manager kuberuntime.KubeGenericRuntime

	liveness, readiness, startup proberesults.Manager
	backOff                      *flowcontrol.Backoff

	pod *v1.Pod
}

// newUpstreamPod builds a kuberuntime manager for pod, which it defaults as
// the API server would. The images listed are present on the node.
func newUpstreamPod(t testing.TB, pod *v1.Pod, images ...string) *upstreamPod {
	t.Helper()
	// The manager's own logs are of no use to a comparison.
	ctx := klog.NewContext(context.Background(), logr.Discard())
	clock := testingclock.NewFakeClock(upstreamEpoch)
	runtimeService := critest.NewFakeRuntimeService()
	imageService := critest.NewFakeImageService()
	imageService.SetFakeImages(images)
	cri := &criLog{FakeRuntimeService: runtimeService, images: imageService, clock: clock, stopExit: 143}

	events := newEventLog()
	p := &upstreamPod{
		t: t, ctx: ctx, clock: clock, cri: cri, events: events,
		liveness:  proberesults.NewManager(),
		readiness: proberesults.NewManager(),
		startup:   proberesults.NewManager(),
		backOff:   flowcontrol.NewFakeBackOff(crashLoopInitial, crashLoopMax, clock),
		pod:       defaultPod(pod),
	}
	p.backOff.HasExpiredFunc = func(eventTime, lastUpdate time.Time, _ time.Duration) bool {
		return eventTime.Sub(lastUpdate) > backOffExpiry
	}
	root := t.TempDir()
	manager, _, err := kuberuntime.NewKubeGenericRuntimeManager(
		ctx,
		events,
		p.liveness, p.readiness, p.startup,
		root,         // rootDirectory: seccomp profiles, pull records, actuated state
		root+"/pods", // podLogsDirectory: empty, so restart counts come from the runtime
		&cadvisorapi.MachineInfo{MemoryCapacity: 32 << 30, NumCores: 16},
		podStates{},
		110, // maxPods
		&containertest.FakeOS{},
		&containertest.FakeRuntimeHelper{},
		hookHTTP{},
		flowcontrol.NewFakeBackOff(imageBackOff, imageBackOffMax, clock),
		false, // serializeImagePulls
		nil,   // maxParallelImagePulls: no limit
		0, 0,  // imagePullQPS, imagePullBurst: no throttling
		string(kubeletconfig.NeverVerifyPreloadedImages), nil,
		"", "", // no credential provider plugins
		nil,   // singleProcessOOMKill
		false, // cpuCFSQuota
		metav1.Duration{Duration: 100 * time.Millisecond},
		nil, // defaultPodSysctls
		cri,
		&imageLog{FakeImageService: imageService, cri: cri},
		cm.NewFakeContainerManager(klog.FromContext(ctx)),
		logs.NewStubContainerLogManager(),
		nil,       // runtimeClassManager: pods name no runtime class
		false, "", // seccompDefault, memorySwapBehavior
		func() v1.ResourceList {
			return v1.ResourceList{v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourceCPU: resource.MustParse("16")}
		},
		nil, "", // memoryThrottlingFactor, memoryReservationPolicy
		podStates{}, // podPullingTimeRecorder
		noop.NewTracerProvider(),
		nil, nil, // tokenManager, getServiceAccount: no credential provider plugins
		nil, // podInitContainerTimeRecorder
	)
	if err != nil {
		t.Fatalf("NewKubeGenericRuntimeManager: %v", err)
	}
	p.manager = manager
	cri.take() // the constructor's Version call
	return p
}

// defaultPod returns a copy of pod with the v1 defaults the API server
// applies (pull policy, termination message policy, restart policy, ...).
func defaultPod(pod *v1.Pod) *v1.Pod {
	p := pod.DeepCopy()
	legacyscheme.Scheme.Default(p)
	return p
}

// status reads the pod's runtime status the way the PLEG does: the pod from
// GetPods(all), then GetPodStatus.
func (p *upstreamPod) status() *kubecontainer.PodStatus {
	p.t.Helper()
	pods, err := p.manager.GetPods(p.ctx, true)
	if err != nil {
		p.t.Fatalf("GetPods: %v", err)
	}
	running := &kubecontainer.Pod{ID: p.pod.UID, Name: p.pod.Name, Namespace: p.pod.Namespace}
	for _, rp := range pods {
		if rp.ID == p.pod.UID {
			running = rp
		}
	}
	status, err := p.manager.GetPodStatus(p.ctx, running)
	if err != nil {
		p.t.Fatalf("GetPodStatus: %v", err)
	}
	return status
}

// sync is one Kubelet.SyncPod's runtime part: SyncPod with the status just
// read and the crash-loop back-off. restartingAll is the
// AllContainersRestarting condition of the status generated at the start of
// the sync.
func (p *upstreamPod) sync(restartingAll bool) upstreamSync {
	p.t.Helper()
	p.manager.InitializeActuatedPod(klog.FromContext(p.ctx), p.pod)
	status := p.status()
	p.cri.take() // the status reads
	p.events.take()
	began := time.Now()
	result := p.manager.SyncPod(p.ctx, p.pod, status, nil, p.backOff, restartingAll)
	out := upstreamSync{Calls: p.cri.take(), Events: p.events.take(), Err: result.Error(), Wall: time.Since(began)}
	for _, r := range result.SyncResults {
		if r.Error != nil {
			out.Failures = append(out.Failures, fmt.Sprintf("%s %v: %v: %s", r.Action, r.Target, r.Error, r.Message))
		}
	}
	return out
}

// terminate is SyncTerminatingPod's runtime part: KillPod of the running
// containers and every sandbox, with the pod worker's effective grace as
// the override (nil: none).
func (p *upstreamPod) terminate(grace *int64) upstreamSync {
	p.t.Helper()
	status := p.status()
	p.cri.take()
	p.events.take()
	running := kubecontainer.ConvertPodStatusToRunningPod(p.manager.Type(), status)
	began := time.Now()
	err := p.manager.KillPod(p.ctx, p.pod, running, grace)
	return upstreamSync{Calls: p.cri.take(), Events: p.events.take(), Err: err, Wall: time.Since(began)}
}

// advance moves the virtual clock on.
func (p *upstreamPod) advance(d time.Duration) {
	p.clock.Step(d)
	p.cri.mu.Lock()
	p.cri.tick = 0
	p.cri.mu.Unlock()
}

// newest returns the newest fake container with this name (nil: none).
// The caller holds the fake's lock.
func (p *upstreamPod) newest(name string) *critest.FakeContainer {
	var found *critest.FakeContainer
	for _, c := range p.cri.Containers {
		if c.Metadata.Name == name && (found == nil || c.CreatedAt > found.CreatedAt) {
			found = c
		}
	}
	return found
}

// exit makes the newest instance of a container exit with code, at the
// current virtual time, with the reason a CRI runtime gives (Completed,
// Error, or the one given).
func (p *upstreamPod) exit(name string, code int32, reason ...string) {
	p.t.Helper()
	p.cri.FakeRuntimeService.Lock()
	defer p.cri.FakeRuntimeService.Unlock()
	c := p.newest(name)
	if c == nil {
		p.t.Fatalf("exit %s: no such container in the runtime", name)
	}
	c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.ExitCode = code
	c.FinishedAt = p.clock.Now().UnixNano()
	switch {
	case len(reason) > 0:
		c.Reason = reason[0]
	case code == 0:
		c.Reason = "Completed"
	default:
		c.Reason = "Error"
	}
}

// unknown puts the newest instance of a container in the unknown state.
func (p *upstreamPod) unknown(name string) {
	p.t.Helper()
	p.cri.FakeRuntimeService.Lock()
	defer p.cri.FakeRuntimeService.Unlock()
	c := p.newest(name)
	if c == nil {
		p.t.Fatalf("unknown %s: no such container in the runtime", name)
	}
	c.State = runtimeapi.ContainerState_CONTAINER_UNKNOWN
}

// loseSandbox marks every sandbox of the pod not ready, as after a node
// reboot or a runtime that lost the network namespace.
func (p *upstreamPod) loseSandbox() {
	p.cri.FakeRuntimeService.Lock()
	defer p.cri.FakeRuntimeService.Unlock()
	for _, s := range p.cri.Sandboxes {
		s.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	}
}

// failHooks makes the next exec hooks fail with these errors, in order.
func (p *upstreamPod) failHooks(errs ...error) {
	for _, err := range errs {
		p.cri.InjectError("ExecSync", err)
	}
}

// failPulls makes the next pulls fail with these errors, in order.
func (p *upstreamPod) failPulls(errs ...error) {
	for _, err := range errs {
		p.cri.images.InjectError("PullImage", err)
	}
}

// containerID is the runtime ID of the newest instance of a container.
func (p *upstreamPod) containerID(name string) kubecontainer.ContainerID {
	p.t.Helper()
	p.cri.FakeRuntimeService.Lock()
	defer p.cri.FakeRuntimeService.Unlock()
	c := p.newest(name)
	if c == nil {
		p.t.Fatalf("probe %s: no such container in the runtime", name)
	}
	return kubecontainer.ContainerID{Type: p.manager.Type(), ID: c.Id}
}

// setProbe stores a liveness, readiness or startup result for the newest
// instance of a container and drains the manager's update channel, which
// the kubelet's sync loop reads.
func (p *upstreamPod) setProbe(m proberesults.Manager, name string, result proberesults.Result) {
	m.Set(p.containerID(name), result, p.pod)
	select {
	case <-m.Updates():
	default:
	}
}

// deleteAt sets the pod's deletionTimestamp and grace, as a graceful delete
// through the API server does.
func (p *upstreamPod) deleteAt(grace int64) {
	now := metav1.NewTime(p.clock.Now())
	p.pod.DeletionTimestamp = &now
	p.pod.DeletionGracePeriodSeconds = &grace
}

// canonical is canonicalCalls for this pod.
func (p *upstreamPod) canonical(calls []criCall) []criCall { return canonicalCalls(p.pod, calls) }

// diffLines fails t with both lists when they differ.
func diffLines(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n\t%s\nwant:\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// upstreamStep is one step of a runtime history: what changed since the
// previous sync, then one sync (or, with Terminate, the termination).
type upstreamStep struct {
	// Advance moves the virtual clock on before the changes.
	Advance time.Duration
	// Exits are containers whose newest instance exited, with the code.
	Exits map[string]int32
	// Unknown are containers whose newest instance is in the unknown state.
	Unknown []string
	// LoseSandbox marks every sandbox not ready.
	LoseSandbox bool
	// PullErrors and HookErrors fail the next pulls and exec hooks.
	PullErrors, HookErrors []error
	// Liveness, Readiness and Startup are stored probe results of the
	// newest instance of a container.
	Liveness, Readiness, Startup map[string]proberesults.Result
	// Delete, when set, deletes the pod with this grace.
	Delete *int64
	// RestartingAll is the AllContainersRestarting condition of the status
	// the kubelet generates at the start of this sync.
	RestartingAll bool
	// Terminate runs the termination (KillPod with Grace as the override)
	// instead of a sync.
	Terminate bool
	Grace     *int64
}

// run applies the steps in order and returns what each sync or
// termination did.
func (p *upstreamPod) run(steps []upstreamStep) []upstreamSync {
	p.t.Helper()
	out := make([]upstreamSync, 0, len(steps))
	for _, s := range steps {
		p.advance(s.Advance)
		for _, name := range sortedKeys(s.Exits) {
			p.exit(name, s.Exits[name])
		}
		for _, name := range s.Unknown {
			p.unknown(name)
		}
		if s.LoseSandbox {
			p.loseSandbox()
		}
		p.failPulls(s.PullErrors...)
		p.failHooks(s.HookErrors...)
		for m, results := range map[proberesults.Manager]map[string]proberesults.Result{p.liveness: s.Liveness, p.readiness: s.Readiness, p.startup: s.Startup} {
			for _, name := range sortedKeys(results) {
				p.setProbe(m, name, results[name])
			}
		}
		if s.Delete != nil {
			p.deleteAt(*s.Delete)
		}
		if s.Terminate {
			out = append(out, p.terminate(s.Grace))
			continue
		}
		out = append(out, p.sync(s.RestartingAll))
	}
	return out
}
