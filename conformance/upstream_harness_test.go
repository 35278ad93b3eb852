package conformance

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	cadvisorapi "github.com/google/cadvisor/lib/model"
	"go.opentelemetry.io/otel/trace/noop"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientrecord "k8s.io/client-go/tools/record"
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

// The kubelet's crash-loop and image pull back-off at v1.37.2 with default
// gates and configuration (pkg/kubelet/kubelet.go: initialCrashLoopBackOff,
// MaxContainerBackOff, imageBackOffPeriod, MaxImageBackOff).
const (
	upstreamCrashLoopInitial = 10 * time.Second
	upstreamCrashLoopMax     = 300 * time.Second
	upstreamImageBackOff     = 10 * time.Second
	upstreamImageBackOffMax  = 300 * time.Second
	// upstreamBackOffExpiry is the kubelet's HasExpiredFunc for the
	// crash-loop back-off: an entry older than this starts over.
	upstreamBackOffExpiry = 600 * time.Second
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

// pullDuration matches the measured durations of the Pulled event, the
// only text the manager takes from the wall clock.
var pullDuration = regexp.MustCompile(`in [0-9.]+[µnm]?s \([0-9.]+[µnm]?s including waiting\)`)

// eventLog is a client-go record.EventRecorderLogger that keeps every event with the
// field path of its involved object, safe for the kill goroutines.
type eventLog struct {
	mu     *sync.Mutex
	events *[]recordedEvent
}

func newEventLog() eventLog {
	return eventLog{mu: &sync.Mutex{}, events: &[]recordedEvent{}}
}

func (l eventLog) Event(object runtime.Object, eventtype, reason, message string) {
	path := ""
	if ref, ok := object.(*v1.ObjectReference); ok && ref != nil {
		path = ref.FieldPath
	}
	message = pullDuration.ReplaceAllString(message, "in <d> (<d> including waiting)")
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.events = append(*l.events, recordedEvent{Type: eventtype, Reason: reason, FieldPath: path, Message: message})
}

func (l eventLog) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	l.Event(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (l eventLog) AnnotatedEventf(object runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	l.Eventf(object, eventtype, reason, messageFmt, args...)
}

func (l eventLog) WithLogger(klog.Logger) clientrecord.EventRecorderLogger { return l }

func (l eventLog) take() []recordedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := *l.events
	*l.events = nil
	return out
}

// criLog wraps the fake CRI services of k8s.io/cri-api/pkg/apis/testing:
// it records the calls with their arguments (the fakes keep only method
// names) and stamps the objects they create with virtual time (the fakes
// use the wall clock), so that the manager's ordering by creation time
// and its back-off, which reads finishedAt, follow the history's clock.
type criLog struct {
	*critest.FakeRuntimeService
	images *critest.FakeImageService
	clock  *testingclock.FakeClock

	mu    sync.Mutex
	calls []criCall
	// tick orders objects created at the same virtual instant.
	tick time.Duration
	// stopExit is the exit code a stopped container reports: 143 for a
	// process that ends on SIGTERM, 137 for one the runtime SIGKILLs.
	stopExit int32
}

func (r *criLog) record(c criCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

func (r *criLog) take() []criCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// stamp is the virtual time of the next runtime event, one nanosecond
// after the previous one at the same instant.
func (r *criLog) stamp() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tick++
	return r.clock.Now().Add(r.tick).UnixNano()
}

// container finds a container's name and attempt by ID; ok is false when
// the fake does not hold it.
func (r *criLog) container(id string) (name string, attempt uint32, ok bool) {
	r.FakeRuntimeService.Lock()
	defer r.FakeRuntimeService.Unlock()
	c, ok := r.Containers[id]
	if !ok || c.Metadata == nil {
		return id, 0, false
	}
	return c.Metadata.Name, c.Metadata.Attempt, true
}

func (r *criLog) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	r.record(criCall{Op: "RunPodSandbox", Attempt: config.GetMetadata().GetAttempt()})
	id, err := r.FakeRuntimeService.RunPodSandbox(ctx, config, handler)
	if err == nil {
		at := r.stamp()
		r.FakeRuntimeService.Lock()
		r.Sandboxes[id].CreatedAt = at
		r.FakeRuntimeService.Unlock()
	}
	return id, err
}

func (r *criLog) StopPodSandbox(ctx context.Context, id string) error {
	r.FakeRuntimeService.Lock()
	var attempt uint32
	if s, ok := r.Sandboxes[id]; ok {
		attempt = s.GetMetadata().GetAttempt()
	}
	r.FakeRuntimeService.Unlock()
	r.record(criCall{Op: "StopPodSandbox", Attempt: attempt})
	return r.FakeRuntimeService.StopPodSandbox(ctx, id)
}

func (r *criLog) CreateContainer(ctx context.Context, sandboxID string, config *runtimeapi.ContainerConfig, sandbox *runtimeapi.PodSandboxConfig) (string, error) {
	r.record(criCall{Op: "CreateContainer", Name: config.GetMetadata().GetName(), Attempt: config.GetMetadata().GetAttempt()})
	id, err := r.FakeRuntimeService.CreateContainer(ctx, sandboxID, config, sandbox)
	if err == nil {
		at := r.stamp()
		r.FakeRuntimeService.Lock()
		r.Containers[id].CreatedAt = at
		r.FakeRuntimeService.Unlock()
	}
	return id, err
}

func (r *criLog) StartContainer(ctx context.Context, id string) error {
	name, attempt, _ := r.container(id)
	r.record(criCall{Op: "StartContainer", Name: name, Attempt: attempt})
	err := r.FakeRuntimeService.StartContainer(ctx, id)
	if err == nil {
		at := r.stamp()
		r.FakeRuntimeService.Lock()
		r.Containers[id].StartedAt = at
		r.FakeRuntimeService.Unlock()
	}
	return err
}

func (r *criLog) StopContainer(ctx context.Context, id string, timeout int64) error {
	name, attempt, _ := r.container(id)
	r.record(criCall{Op: "StopContainer", Name: name, Attempt: attempt, Timeout: timeout})
	err := r.FakeRuntimeService.StopContainer(ctx, id, timeout)
	if err == nil {
		// The fake leaves exit code 0 and no reason; a runtime reports
		// how the stop signal ended the process. It finishes at the
		// sync's instant, without the ordering nanoseconds of stamp:
		// finishedAt is the crash-loop back-off's reference, which the
		// podlifecycle comparison reports at that instant too.
		at := r.clock.Now().UnixNano()
		r.FakeRuntimeService.Lock()
		c := r.Containers[id]
		c.FinishedAt, c.ExitCode, c.Reason = at, r.stopExit, "Error"
		r.FakeRuntimeService.Unlock()
	}
	return err
}

// ExecSync is how the manager runs exec lifecycle hooks (probes are not run
// by the harness); it is recorded as the hook run of the container.
func (r *criLog) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	name, attempt, _ := r.container(id)
	r.record(criCall{Op: "ExecSync", Name: name, Attempt: attempt})
	return r.FakeRuntimeService.ExecSync(ctx, id, cmd, timeout)
}

func (r *criLog) RemoveContainer(ctx context.Context, id string) error {
	name, attempt, _ := r.container(id)
	r.record(criCall{Op: "RemoveContainer", Name: name, Attempt: attempt})
	return r.FakeRuntimeService.RemoveContainer(ctx, id)
}

// imageLog records the pulls of the fake image service.
type imageLog struct {
	*critest.FakeImageService
	cri *criLog
}

func (i *imageLog) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sandbox *runtimeapi.PodSandboxConfig) (string, error) {
	i.cri.record(criCall{Op: "PullImage", Name: image.GetImage()})
	return i.FakeImageService.PullImage(ctx, image, auth, sandbox)
}

// hookHTTP answers the HTTP lifecycle hooks: every request succeeds.
type hookHTTP struct{}

func (hookHTTP) Do(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

// podStates answers the manager's questions about the pod worker: the pod
// is never being removed while the manager acts (the harness calls KillPod
// itself for termination). It also takes the image manager's pull times.
type podStates struct{}

func (podStates) IsPodTerminationRequested(types.UID) bool { return false }
func (podStates) ShouldPodContentBeRemoved(types.UID) bool { return false }
func (podStates) ShouldPodRuntimeBeRemoved(types.UID) bool { return false }

// The image manager reports pull times for the kubelet's metrics.
func (podStates) RecordImageStartedPulling(types.UID)  {}
func (podStates) RecordImageFinishedPulling(types.UID) {}

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
		backOff:   flowcontrol.NewFakeBackOff(upstreamCrashLoopInitial, upstreamCrashLoopMax, clock),
		pod:       defaultPod(pod),
	}
	p.backOff.HasExpiredFunc = func(eventTime, lastUpdate time.Time, _ time.Duration) bool {
		return eventTime.Sub(lastUpdate) > upstreamBackOffExpiry
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
		flowcontrol.NewFakeBackOff(upstreamImageBackOff, upstreamImageBackOffMax, clock),
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
