// The kubelet's side of the podlifecycle comparison that does not change
// between releases: the recording wrappers of the fake CRI services, the
// event recorder and the other fakes the kuberuntime manager is built over,
// and the kubelet's back-off settings. The conformance suite drives
// v1.37.2's manager in-process over a copy of this file
// (conformance/zz_kubeletfakes_test.go) and every older release's through
// its command (conformance/versions/v1.N/kubeletfakes.go); internal/cmd/genversions
// writes both copies.

package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientrecord "k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"
)

// The kubelet's crash-loop and image pull back-off with default gates and
// configuration, the same in v1.33.13 to v1.37.2 (docs/versions.md,
// containerstate "no difference").
const (
	crashLoopInitial = 10 * time.Second
	crashLoopMax     = 300 * time.Second
	imageBackOff     = 10 * time.Second
	imageBackOffMax  = 300 * time.Second
	backOffExpiry    = 600 * time.Second
)

// pullDuration matches the measured durations of the Pulled event, the
// only text the manager takes from the wall clock.
var pullDuration = regexp.MustCompile(`in [0-9.]+[µnm]?s \([0-9.]+[µnm]?s including waiting\)`)

// eventLog keeps every event with the field path of its involved object,
// safe for the kill goroutines. It is a client-go record.EventRecorder, and
// a record.EventRecorderLogger for the releases that take one.
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

// container finds a container's name and attempt by ID; a container the
// fake does not hold is named by its ID, attempt 0.
func (r *criLog) container(id string) (name string, attempt uint32) {
	r.FakeRuntimeService.Lock()
	defer r.FakeRuntimeService.Unlock()
	c, ok := r.Containers[id]
	if !ok || c.Metadata == nil {
		return id, 0
	}
	return c.Metadata.Name, c.Metadata.Attempt
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
	name, attempt := r.container(id)
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
	name, attempt := r.container(id)
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
	name, attempt := r.container(id)
	r.record(criCall{Op: "ExecSync", Name: name, Attempt: attempt})
	return r.FakeRuntimeService.ExecSync(ctx, id, cmd, timeout)
}

func (r *criLog) RemoveContainer(ctx context.Context, id string) error {
	name, attempt := r.container(id)
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
