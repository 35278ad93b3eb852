package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	apipod "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/kuberuntime"
	proberesults "k8s.io/kubernetes/pkg/kubelet/prober/results"
	testingclock "k8s.io/utils/clock/testing"
)

// The podlifecycle comparison's upstream side: the kubelet's kuberuntime
// manager, built with NewKubeGenericRuntimeManager (version.go's
// newRuntimeManager) over the fake CRI services of
// k8s.io/cri-api/pkg/apis/testing, driven one history at a time, as
// conformance/upstream_harness_test.go drives v1.37.2's in-process (its
// comments give the reasons of each choice; the two are kept alike).
//
// "lifecycle-new" starts a session for Pod and answers with its ID, the pod
// as the release's API server stores it (createdPod), and the running
// containers (none), or says why that API server refuses the pod (Refused);
// "lifecycle-step" applies Step's changes to the fake runtime and the probe
// result managers (clock, exits, probe results, failures to come, the
// deletion), then runs one sync (SyncPod), or the termination (KillPod with
// Grace as the override) with Terminate, and answers with the runtime calls
// and events of that sync, the pod and the containers running after it;
// "lifecycle-end" drops the session.

// epoch is the virtual time every history starts at (the suite's
// upstreamEpoch).
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// lifecycleStep is the suite's step of a history (the fields the suite's
// lifecycleStep encodes, by name).
type lifecycleStep struct {
	Advance           time.Duration
	Exits             map[string]int32
	Startup, Liveness map[string]bool
	PullErrors        []string
	HookErrors        []string
	Delete            *int64
}

// criCall is one runtime call the manager made.
type criCall struct {
	Op      string
	Name    string
	Attempt uint32
	Timeout int64
}

// recordedEvent is one event the manager recorded, with the field path of
// its involved object.
type recordedEvent struct {
	Type, Reason, FieldPath, Message string
}

var (
	sessions    = map[int]*session{}
	lastSession int
)

// lifecycle answers the lifecycle requests.
func lifecycle(req *request) response {
	switch req.Op {
	case "lifecycle-new":
		if req.Pod == nil {
			return response{Error: "lifecycle-new needs a pod"}
		}
		// The release's default for RestartAllContainersOnContainerExits,
		// as the profile has it; a conditions request may have flipped it.
		if err := setRestartAll(restartAllVariants()[0]); err != nil {
			return response{Error: err.Error()}
		}
		if why := refused(req.Pod); why != "" {
			return response{Refused: why}
		}
		s, err := newSession(req.Pod)
		if err != nil {
			return response{Error: err.Error()}
		}
		lastSession++
		sessions[lastSession] = s
		return response{Session: lastSession, Pod: s.pod, Running: s.running()}
	case "lifecycle-step":
		s := sessions[req.Session]
		if s == nil || req.Step == nil {
			return response{Error: fmt.Sprintf("lifecycle-step needs a step of a session (session %d)", req.Session)}
		}
		if err := s.apply(*req.Step); err != nil {
			return response{Error: err.Error()}
		}
		var calls []criCall
		var events []recordedEvent
		var wall time.Duration
		var err error
		if req.Terminate {
			calls, events, wall, err = s.terminate(req.Grace)
		} else {
			calls, events, wall, err = s.sync()
		}
		if err != nil {
			return response{Error: err.Error()}
		}
		return response{Session: req.Session, Pod: s.pod, Calls: calls, Events: events, Running: s.running(), Wall: wall}
	case "lifecycle-end":
		if s := sessions[req.Session]; s != nil {
			os.RemoveAll(s.root)
			delete(sessions, req.Session)
		}
		return response{Session: req.Session}
	}
	return response{Error: fmt.Sprintf("unknown op %q", req.Op)}
}

// runtimeDeps are what newRuntimeManager builds the manager over; the rest
// of its arguments (the node's capacity, the fake container and log
// managers, the defaults) the shim gives, as they differ per release.
type runtimeDeps struct {
	recorder                     eventLog
	liveness, readiness, startup proberesults.Manager
	root                         string
	imageBackOff                 *flowcontrol.Backoff
	runtime                      *criLog
	images                       *imageLog
}

// session is one history's manager and fake runtime.
type session struct {
	ctx     context.Context
	clock   *testingclock.FakeClock
	cri     *criLog
	events  eventLog
	manager kuberuntime.KubeGenericRuntime
	root    string

	liveness, readiness, startup proberesults.Manager
	backOff                      *flowcontrol.Backoff

	pod *v1.Pod
}

func newSession(pod *v1.Pod) (*session, error) {
	// The manager's own logs are of no use to a comparison; the releases
	// that take no context log through klog's global logger.
	klog.SetLogger(logr.Discard())
	ctx := klog.NewContext(context.Background(), logr.Discard())
	clock := testingclock.NewFakeClock(epoch)
	cri := &criLog{FakeRuntimeService: critest.NewFakeRuntimeService(), images: critest.NewFakeImageService(), clock: clock, stopExit: 143}
	root, err := os.MkdirTemp("", "nodestate-kuberuntime-")
	if err != nil {
		return nil, err
	}
	created, err := createdPod(pod)
	if err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	s := &session{
		ctx: ctx, clock: clock, cri: cri, root: root,
		events:    newEventLog(),
		liveness:  proberesults.NewManager(),
		readiness: proberesults.NewManager(),
		startup:   proberesults.NewManager(),
		backOff:   flowcontrol.NewFakeBackOff(crashLoopInitial, crashLoopMax, clock),
		pod:       created,
	}
	s.backOff.HasExpiredFunc = func(eventTime, lastUpdate time.Time, _ time.Duration) bool {
		return eventTime.Sub(lastUpdate) > backOffExpiry
	}
	s.manager, err = newRuntimeManager(ctx, runtimeDeps{
		recorder: s.events, liveness: s.liveness, readiness: s.readiness, startup: s.startup,
		root: root, imageBackOff: flowcontrol.NewFakeBackOff(imageBackOff, imageBackOffMax, clock),
		runtime: cri, images: &imageLog{FakeImageService: cri.images, cri: cri},
	})
	if err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("NewKubeGenericRuntimeManager: %v", err)
	}
	cri.take() // the constructor's Version call
	return s, nil
}

// createdPod is pod as the release's API server stores it on create:
// defaulted, and without the fields of the gates that are off
// (pkg/api/pod.DropDisabledPodFields; in 1.34 that is where container
// restartPolicy and restartPolicyRules go, ContainerRestartRules being
// alpha and off).
func createdPod(pod *v1.Pod) (*v1.Pod, error) {
	defaulted := pod.DeepCopy()
	legacyscheme.Scheme.Default(defaulted)
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(defaulted, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the pod to the internal type: %v", err)
	}
	apipod.DropDisabledPodFields(internal, nil)
	out := &v1.Pod{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, fmt.Errorf("converting the pod back: %v", err)
	}
	return out, nil
}

// status reads the pod's runtime status the way the PLEG does.
func (s *session) status() (*kubecontainer.PodStatus, error) {
	pods, err := s.manager.GetPods(s.ctx, true)
	if err != nil {
		return nil, fmt.Errorf("GetPods: %v", err)
	}
	running := &kubecontainer.Pod{ID: s.pod.UID, Name: s.pod.Name, Namespace: s.pod.Namespace}
	for _, rp := range pods {
		if rp.ID == s.pod.UID {
			running = rp
		}
	}
	status, err := podStatus(s.ctx, s.manager, running)
	if err != nil {
		return nil, fmt.Errorf("GetPodStatus: %v", err)
	}
	return status, nil
}

// sync runs SyncPod; wall is the wall-clock time it took (see the
// response's Wall).
func (s *session) sync() (calls []criCall, events []recordedEvent, wall time.Duration, err error) {
	initializeActuated(s.ctx, s.manager, s.pod)
	status, err := s.status()
	if err != nil {
		return nil, nil, 0, err
	}
	s.cri.take()
	s.events.take()
	began := time.Now()
	syncPod(s.ctx, s.manager, s.pod, status, s.backOff)
	return s.cri.take(), s.events.take(), time.Since(began), nil
}

// terminate runs KillPod; wall is the wall-clock time it took.
func (s *session) terminate(grace *int64) (calls []criCall, events []recordedEvent, wall time.Duration, err error) {
	status, err := s.status()
	if err != nil {
		return nil, nil, 0, err
	}
	s.cri.take()
	s.events.take()
	running := kubecontainer.ConvertPodStatusToRunningPod(s.manager.Type(), status)
	// KillPod's error is the failed stops and hooks, which the calls
	// show.
	began := time.Now()
	_ = s.manager.KillPod(s.ctx, s.pod, running, grace)
	return s.cri.take(), s.events.take(), time.Since(began), nil
}

// newest returns the newest fake container with this name (nil: none).
// The caller holds the fake's lock.
func (s *session) newest(name string) *critest.FakeContainer {
	var found *critest.FakeContainer
	for _, c := range s.cri.Containers {
		if c.Metadata.Name == name && (found == nil || c.CreatedAt > found.CreatedAt) {
			found = c
		}
	}
	return found
}

// running lists the containers whose newest instance runs, in spec order.
func (s *session) running() []string {
	s.cri.FakeRuntimeService.Lock()
	defer s.cri.FakeRuntimeService.Unlock()
	out := []string{}
	for _, list := range [][]v1.Container{s.pod.Spec.InitContainers, s.pod.Spec.Containers} {
		for _, c := range list {
			if in := s.newest(c.Name); in != nil && in.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				out = append(out, c.Name)
			}
		}
	}
	return out
}

// apply makes a step's changes: the clock, the exits (by name), the
// startup then liveness results (by name), the failures to come, and the
// deletion.
func (s *session) apply(st lifecycleStep) error {
	s.clock.Step(st.Advance)
	s.cri.mu.Lock()
	s.cri.tick = 0
	s.cri.mu.Unlock()
	for _, name := range sortedNames(st.Exits) {
		if err := s.exit(name, st.Exits[name]); err != nil {
			return err
		}
	}
	for _, set := range []struct {
		results map[string]bool
		m       proberesults.Manager
	}{{st.Startup, s.startup}, {st.Liveness, s.liveness}} {
		for _, name := range sortedNames(set.results) {
			result := proberesults.Failure
			if set.results[name] {
				result = proberesults.Success
			}
			if err := s.setProbe(set.m, name, result); err != nil {
				return err
			}
		}
	}
	for _, e := range st.PullErrors {
		s.cri.images.InjectError("PullImage", errors.New(e))
	}
	for _, e := range st.HookErrors {
		s.cri.InjectError("ExecSync", errors.New(e))
	}
	if st.Delete != nil {
		now := metav1.NewTime(s.clock.Now())
		grace := *st.Delete
		s.pod.DeletionTimestamp = &now
		s.pod.DeletionGracePeriodSeconds = &grace
	}
	return nil
}

// exit makes the newest instance of a container exit with code, with the
// reason a CRI runtime gives.
func (s *session) exit(name string, code int32) error {
	s.cri.FakeRuntimeService.Lock()
	defer s.cri.FakeRuntimeService.Unlock()
	c := s.newest(name)
	if c == nil {
		return fmt.Errorf("exit %s: no such container in the runtime", name)
	}
	c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.ExitCode = code
	c.FinishedAt = s.clock.Now().UnixNano()
	c.Reason = "Error"
	if code == 0 {
		c.Reason = "Completed"
	}
	return nil
}

// setProbe stores a probe result for the newest instance of a container
// and drains the manager's update channel, which the sync loop reads.
func (s *session) setProbe(m proberesults.Manager, name string, result proberesults.Result) error {
	s.cri.FakeRuntimeService.Lock()
	c := s.newest(name)
	s.cri.FakeRuntimeService.Unlock()
	if c == nil {
		return fmt.Errorf("probe %s: no such container in the runtime", name)
	}
	m.Set(kubecontainer.ContainerID{Type: s.manager.Type(), ID: c.Id}, result, s.pod)
	select {
	case <-m.Updates():
	default:
	}
	return nil
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
