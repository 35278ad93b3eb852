package conformance

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
)

// The podlifecycle property's history, shared by the comparison with
// v1.37.2 in this module (lifecycle_test.go, upstream_harness_test.go) and
// the driver of the older releases (conformance/versions, where
// internal/cmd/genversions copies this file): a generated pod and a
// generated runtime history go to a podlifecycle.Machine and to the
// kubelet's kuberuntime manager (a lifecycleRuntime); after each sync the
// runtime calls and the Killing messages of both must be the same, in the
// canonical order of canonicalCalls and canonicalEvents. This file has no
// dependency on k8s.io/kubernetes.

const lifecycleProperty = "podlifecycle Step vs kuberuntime SyncPod/KillPod (calls, kill messages)"

// lifecycleWallGrace is the report's row of the compared histories in
// which the manager shortened a grace by wall-clock time
// (lifecycleSync.Wall, wallClockGrace).
const lifecycleWallGrace = lifecycleProperty + ": a grace shortened by the wall clock (slow preStop hook or turn to stop)"

// lifecycleChecks is how many histories the property draws by default: each
// history builds a kuberuntime manager, so it runs fewer inputs than the
// cheap properties' minChecks. Every history is compared; at least
// lifecycleCompared must be.
const (
	lifecycleChecks   = 2400
	lifecycleCompared = 2000
)

// upstreamEpoch is the virtual time every history starts at.
var upstreamEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// lifecyclePod draws a pod from podlifecycletest.PodWith and keeps what the
// harness can drive the same way on both sides. Each removal names the
// reason. The upstream side defaults the pod as the API server would
// (lifecycleRuntime's start) and the machine gets that pod.
func lifecyclePod(t *rapid.T) *v1.Pod {
	pod := podlifecycletest.PodWith(podlifecycletest.DefaultGenOptions()).Draw(t, "pod")
	// activeDeadlineSeconds is enforced by Kubelet.SyncPod and the pod
	// worker, which the harness does not run (doc.go).
	pod.Spec.ActiveDeadlineSeconds = nil
	strip := func(c *v1.Container) {
		// Probes: the prober workers run on the wall clock and are not
		// driven; startup and liveness results are set directly, after
		// thresholds on the upstream side, so the machine gets one raw
		// outcome per result: threshold 1, no initial delay. Readiness
		// changes no runtime call and is left out.
		for _, p := range []*v1.Probe{c.StartupProbe, c.LivenessProbe} {
			if p != nil {
				p.FailureThreshold, p.SuccessThreshold, p.InitialDelaySeconds = 1, 1, 0
			}
		}
		c.ReadinessProbe = nil
		if c.Lifecycle == nil {
			return
		}
		// postStart: upstream runs it inside the sync that starts the
		// container and kills it in that same sync when it fails; the
		// machine asks for it as an action answered at the next sync.
		c.Lifecycle.PostStart = nil
		// preStop: sleep hooks sleep on the wall clock; exec hooks are
		// driven (ExecSync), HTTP hooks are answered 200 and make no CRI
		// call.
		if h := c.Lifecycle.PreStop; h != nil && h.Exec == nil {
			c.Lifecycle.PreStop = nil
		}
		if c.Lifecycle.PreStop == nil {
			c.Lifecycle = nil
		}
	}
	for i := range pod.Spec.InitContainers {
		strip(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		strip(&pod.Spec.Containers[i])
	}
	return pod
}

// lifecycleStep is one drawn step of a history; Delete ends it with the
// termination.
type lifecycleStep struct {
	Advance time.Duration
	Exits   map[string]int32
	// Startup and Liveness are probe results set for the newest instance.
	Startup, Liveness map[string]bool
	PullErrors        []string
	HookErrors        []string
	Delete            *int64
}

func (s lifecycleStep) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "+%v", s.Advance)
	for _, name := range sortedKeys(s.Exits) {
		fmt.Fprintf(&b, " exit %s=%d", name, s.Exits[name])
	}
	for _, name := range sortedKeys(s.Startup) {
		fmt.Fprintf(&b, " startup %s=%v", name, s.Startup[name])
	}
	for _, name := range sortedKeys(s.Liveness) {
		fmt.Fprintf(&b, " liveness %s=%v", name, s.Liveness[name])
	}
	if len(s.PullErrors) > 0 {
		fmt.Fprintf(&b, " pull-fail x%d", len(s.PullErrors))
	}
	if len(s.HookErrors) > 0 {
		fmt.Fprintf(&b, " hook-fail x%d", len(s.HookErrors))
	}
	if s.Delete != nil {
		fmt.Fprintf(&b, " delete grace=%d", *s.Delete)
	}
	return b.String()
}

// machinePod is the podlifecycle side: a machine and a runtime that carries
// out its actions the way the fake CRI services do (at once, stops exit
// 143), with the same injected pull and hook failures, reporting each
// result at the next sync.
type machinePod struct {
	m        *podlifecycle.Machine
	pod      *v1.Pod
	pending  []podlifecycle.Observation
	newest   map[string]*machineInstance
	byID     map[string]*machineInstance
	pullErrs []string
	hookErrs []string
	serial   int
	// sandboxes are the attempts of the sandboxes created, oldest first.
	sandboxes []uint32
	state     podlifecycle.WorkerState // after the last Step
}

type machineInstance struct {
	name    string
	id      string
	attempt int32
	running bool
	// startedOK: a startup probe success was set for the instance.
	startedOK bool
	// held: a probe Failure was set for it; its prober worker is on hold.
	held bool
	// exitCode is the instance's exit code once it stopped; removed says
	// the runtime no longer lists it.
	exitCode int32
	removed  bool
}

// do carries out the actions of a Step at now and returns them as the CRI
// calls the kuberuntime manager would make for them.
func (p *machinePod) do(now time.Time, actions []podlifecycle.Action) []criCall {
	var calls []criCall
	skip := map[string]bool{}
	for _, a := range actions {
		switch a.Kind {
		case podlifecycle.CreateSandbox:
			calls = append(calls, criCall{Op: "RunPodSandbox", Attempt: a.Attempt})
			p.sandboxes = append(p.sandboxes, a.Attempt)
			p.pending = append(p.pending, podlifecycle.Observation{Kind: podlifecycle.SandboxReady, At: now, Attempt: a.Attempt, IP: "10.0.0.1"})
		case podlifecycle.KillSandbox:
			// KillSandbox stops every sandbox of the pod; the manager
			// calls StopPodSandbox for each, newest first.
			for j := len(p.sandboxes) - 1; j >= 0; j-- {
				calls = append(calls, criCall{Op: "StopPodSandbox", Attempt: p.sandboxes[j]})
			}
			p.pending = append(p.pending, podlifecycle.Observation{Kind: podlifecycle.SandboxNotReady, At: now, Attempt: a.Attempt})
		case podlifecycle.PullImage:
			calls = append(calls, criCall{Op: "PullImage", Name: defaultTag(a.Image)})
			if len(p.pullErrs) > 0 {
				msg := p.pullErrs[0]
				p.pullErrs = p.pullErrs[1:]
				skip[a.Container] = true
				p.pending = append(p.pending, podlifecycle.Observation{Kind: podlifecycle.ImagePullFailed, At: now, Container: a.Container, Image: a.Image, Message: msg})
				continue
			}
			p.pending = append(p.pending, podlifecycle.Observation{Kind: podlifecycle.ImagePulled, At: now, Container: a.Container, Image: a.Image})
		case podlifecycle.StartContainer:
			if skip[a.Container] {
				continue
			}
			p.serial++
			in := &machineInstance{name: a.Container, id: fmt.Sprintf("sim://%d", p.serial), attempt: a.RestartCount, running: true}
			p.newest[a.Container], p.byID[in.id] = in, in
			calls = append(calls,
				criCall{Op: "CreateContainer", Name: a.Container, Attempt: uint32(a.RestartCount)},
				criCall{Op: "StartContainer", Name: a.Container, Attempt: uint32(a.RestartCount)})
			p.pending = append(p.pending,
				podlifecycle.Observation{Kind: podlifecycle.ContainerCreated, At: now, Container: a.Container, ContainerID: in.id},
				podlifecycle.Observation{Kind: podlifecycle.ContainerStarted, At: now, Container: a.Container, ContainerID: in.id})
		case podlifecycle.KillContainer:
			in := p.byID[a.ContainerID]
			if in == nil {
				calls = append(calls, criCall{Op: "StopContainer", Name: a.Container + "?" + a.ContainerID, Timeout: int64(a.Grace / time.Second)})
				continue
			}
			calls = append(calls, criCall{Op: "StopContainer", Name: in.name, Attempt: uint32(in.attempt), Timeout: int64(a.Grace / time.Second)})
			if in.running {
				in.running, in.exitCode = false, 143
				p.pending = append(p.pending, podlifecycle.Observation{Kind: podlifecycle.ContainerExited, At: now, Container: in.name, ContainerID: in.id, ExitCode: 143, Reason: "Error"})
			}
		case podlifecycle.RemoveContainer:
			in := p.byID[a.ContainerID]
			if in != nil {
				in.removed = true
				calls = append(calls, criCall{Op: "RemoveContainer", Name: in.name, Attempt: uint32(in.attempt)})
				p.pending = append(p.pending, podlifecycle.Observation{Kind: podlifecycle.ContainerRemoved, At: now, Container: in.name, ContainerID: in.id})
			}
		case podlifecycle.RunHook:
			in := p.byID[a.ContainerID]
			name, attempt := a.Container, uint32(0)
			if in != nil {
				name, attempt = in.name, uint32(in.attempt)
			}
			calls = append(calls, criCall{Op: "ExecSync", Name: name, Attempt: attempt})
			failed, msg := false, ""
			if len(p.hookErrs) > 0 {
				failed, msg = true, p.hookErrs[0]
				p.hookErrs = p.hookErrs[1:]
			}
			p.pending = append(p.pending, podlifecycle.Observation{Kind: podlifecycle.HookResult, At: now, Container: name, ContainerID: a.ContainerID, Hook: a.Hook, Failed: failed, Message: msg})
		case podlifecycle.RunProbe:
			// Probes are not in the input class (lifecyclePod).
		}
	}
	return calls
}

// step is one sync of the machine at now; it returns the calls and the
// Killing events.
func (p *machinePod) step(now time.Time) ([]criCall, []recordedEvent, podlifecycle.Result, error) {
	obs := p.pending
	p.pending = nil
	res, err := p.m.Step(now, p.pod, obs)
	if err != nil {
		return nil, nil, res, err
	}
	p.state = res.State
	calls, kills := p.do(now, res.Actions), machineKillings(res.Events)
	if !slices.ContainsFunc(res.Actions, func(a podlifecycle.Action) bool { return a.Kind == podlifecycle.CreateSandbox }) {
		return calls, kills, res, nil
	}
	// SyncPod creates the sandbox and starts the containers in one call;
	// the machine asks for the sandbox, then, on SandboxReady at the same
	// instant, for the starts (spec/podlifecycle.md section 15, decision
	// 6): both Steps are that one sync.
	obs = p.pending
	p.pending = nil
	res, err = p.m.Step(now, p.pod, obs)
	if err != nil {
		return nil, nil, res, err
	}
	p.state = res.State
	return append(calls, p.do(now, res.Actions)...), append(kills, machineKillings(res.Events)...), res, nil
}

// settle steps the machine at now on the answers to its kills until the
// sync they belong to is over: SyncPod and KillPod block until every hook
// and stop returned, the machine issues them and waits for their
// observations, then carries out the rest of the same sync (the prune and
// the starts, or the sandbox stop) in the Step that gets the last one
// (podlifecycle doc, "Differences from Kubernetes").
func (p *machinePod) settle(now time.Time) ([]criCall, []recordedEvent, error) {
	var calls []criCall
	var kills []recordedEvent
	for j := 0; len(p.pending) > 0 && j < 20; j++ {
		c, e, res, err := p.step(now)
		if err != nil {
			return nil, nil, err
		}
		calls, kills = append(calls, c...), append(kills, e...)
		if res.Finished || !killing(res.Actions) {
			break
		}
	}
	return calls, kills, nil
}

// killing reports whether actions hold a preStop hook or a kill: what the
// machine waits for before it goes on with the same sync (the rest of
// SyncPod, or KillPod's sandbox stop). A sandbox stop ends the sync; the
// Step after it is the next sync.
func killing(actions []podlifecycle.Action) bool {
	return slices.ContainsFunc(actions, func(a podlifecycle.Action) bool {
		return a.Kind == podlifecycle.KillContainer || a.Kind == podlifecycle.RunHook && a.Hook == podlifecycle.PreStop
	})
}

func machineKillings(events []podlifecycle.Event) []recordedEvent {
	var out []recordedEvent
	for _, e := range events {
		if e.Reason == podlifecycle.ReasonKilling {
			out = append(out, recordedEvent{Type: e.Type, Reason: e.Reason, FieldPath: e.FieldPath, Message: e.Message})
		}
	}
	return out
}

func upstreamKillings(events []recordedEvent) []recordedEvent {
	var out []recordedEvent
	for _, e := range events {
		if e.Reason == "Killing" {
			out = append(out, e)
		}
	}
	return out
}

// defaultTag is the image reference the kubelet pulls: the image with
// ":latest" when it names neither a tag nor a digest.
func defaultTag(image string) string {
	last := image[strings.LastIndex(image, "/")+1:]
	if strings.ContainsAny(last, ":@") {
		return image
	}
	return image + ":latest"
}

// lifecycleOutcome is what one history did on the comparison.
type lifecycleOutcome struct {
	rawOrder bool // the raw calls or events differed only in order
	// wallGrace: a StopContainer grace of the manager was shorter than
	// the machine's by no more than the whole seconds of wall-clock time
	// the manager's call took (lifecycleSync.Wall), and counted as equal.
	wallGrace bool
}

// lifecycleRuntime is the upstream side of a history: the kubelet's
// kuberuntime manager over the fake CRI services, in this process
// (upstreamPod) or in a release's command.
type lifecycleRuntime interface {
	// running lists the containers whose newest instance runs in the fake
	// runtime, in spec order.
	running() []string
	// apply makes the changes of a step before its sync: the clock, the
	// exits, the probe results, the pull and hook failures to come, and
	// the deletion (Delete), in that order.
	apply(s lifecycleStep) error
	// sync is one Kubelet.SyncPod's runtime part (SyncPod with the status
	// read as the PLEG reads it, and the crash-loop back-off).
	sync() (lifecycleSync, error)
	// terminate is SyncTerminatingPod's runtime part: KillPod with grace
	// as the override (nil: none).
	terminate(grace *int64) (lifecycleSync, error)
	// pod is the pod the manager is given, as the API server defaulted it
	// and with the deletion of the last step applied.
	pod() *v1.Pod
	close()
}

// lifecycleSync is what one sync or termination of the manager did: its
// runtime calls and its events.
type lifecycleSync struct {
	Calls  []criCall
	Events []recordedEvent
	// Wall is the wall-clock time the manager's call took. The manager
	// takes the whole seconds that a container's preStop hook and its wait
	// for its turn to stop (sidecars after the regular containers) took on
	// the wall clock off that container's StopContainer grace
	// (kuberuntime_container.go executePreStopHook, killContainer;
	// kuberuntime_termination_order.go waitForTurn), down to its 2 s
	// minimum: on a machine slow enough for a sync to take a second, a
	// grace comes out shorter than the virtual clock says.
	Wall time.Duration
}

// lifecycleHistory draws a pod and a history with t and runs both sides:
// start builds the upstream side for the drawn pod, and the machine gets
// the pod as that side holds it, with opts.
func lifecycleHistory(t *rapid.T, opts podlifecycle.Options, start func(*v1.Pod) (lifecycleRuntime, error)) (lifecycleOutcome, error) {
	var out lifecycleOutcome
	up, err := start(lifecyclePod(t))
	if err != nil {
		return out, fmt.Errorf("starting the upstream side: %w", err)
	}
	defer up.close()
	pod := up.pod().DeepCopy()
	m, err := podlifecycle.New(opts, pod.DeepCopy())
	if err != nil {
		return out, fmt.Errorf("New: %w", err)
	}
	mp := &machinePod{m: m, pod: pod.DeepCopy(), newest: map[string]*machineInstance{}, byID: map[string]*machineInstance{}}
	var log []string
	fail := func(step string, what string, got, want []string) error {
		return fmt.Errorf("%s\nhistory:\n\t%s\n%s: %s differs:\npodlifecycle:\n\t%s\nkuberuntime:\n\t%s",
			describeLifecyclePod(pod), strings.Join(log, "\n\t"), step, what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	compare := func(step string, mc []criCall, me []recordedEvent, u lifecycleSync) error {
		uc, ue := u.Calls, u.Events
		if shortened := wallClockGrace(mc, uc, u.Wall); shortened != nil {
			uc, out.wallGrace = shortened, true
		}
		mcs, ucs := callStrings(canonicalCalls(pod, mc)), callStrings(canonicalCalls(pod, uc))
		if !slices.Equal(mcs, ucs) {
			return fail(step, "calls", mcs, ucs)
		}
		mes, ues := eventStrings(canonicalEvents(me)), eventStrings(canonicalEvents(upstreamKillings(ue)))
		if !slices.Equal(mes, ues) {
			return fail(step, "Killing events", mes, ues)
		}
		if !slices.Equal(callStrings(mc), callStrings(uc)) || !slices.Equal(eventStrings(me), eventStrings(upstreamKillings(ue))) {
			out.rawOrder = true
		}
		return nil
	}

	now := upstreamEpoch
	steps := rapid.IntRange(1, 10).Draw(t, "steps")
	for i := 0; i <= steps; i++ {
		var s lifecycleStep
		if i > 0 {
			s.Advance = time.Duration(rapid.SampledFrom([]int{1, 2, 5, 9, 10, 11, 20, 30, 60}).Draw(t, fmt.Sprint("advance", i))) * time.Second
			for _, name := range up.running() {
				if rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("exit%d-%s", i, name)) == 0 {
					if s.Exits == nil {
						s.Exits = map[string]int32{}
					}
					s.Exits[name] = rapid.SampledFrom([]int32{0, 1, 2, 137}).Draw(t, fmt.Sprintf("code%d-%s", i, name))
				}
			}
		}
		if i > 0 {
			for _, name := range up.running() {
				c := specContainer(pod, name)
				if _, exits := s.Exits[name]; exits {
					continue
				}
				// What the prober workers store, after thresholds: a
				// startup result until the instance has started (a
				// Failure puts the worker on hold), then liveness
				// results; a liveness Failure puts the worker on hold
				// too. A Failure kills the container in this sync.
				in := mp.newest[name]
				if in == nil {
					return out, fail(fmt.Sprintf("step %d", i), "runtime", []string{name + " never started in the machine's runtime"}, []string{name + " running"})
				}
				if in.held {
					continue
				}
				switch {
				case c.StartupProbe != nil && !in.startedOK:
					switch rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("startup%d-%s", i, name)) {
					case 0:
						s.Startup = setResult(s.Startup, name, true)
					case 1:
						s.Startup = setResult(s.Startup, name, false)
					}
				case c.LivenessProbe != nil:
					if rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("liveness%d-%s", i, name)) == 0 {
						s.Liveness = setResult(s.Liveness, name, false)
					}
				}
			}
		}
		for range rapid.IntRange(0, 1).Draw(t, fmt.Sprint("pullErrors", i)) {
			s.PullErrors = append(s.PullErrors, "404 not found")
		}
		for range rapid.IntRange(0, 1).Draw(t, fmt.Sprint("hookErrors", i)) {
			s.HookErrors = append(s.HookErrors, "exit status 1")
		}
		if i == steps && rapid.IntRange(0, 3).Draw(t, "delete") > 0 {
			g := rapid.SampledFrom([]int64{-1, 0, 1, 5, 30}).Draw(t, "deleteGrace")
			if g < 0 {
				g = *pod.Spec.TerminationGracePeriodSeconds
			}
			s.Delete = &g
		}
		log = append(log, s.String())
		name := fmt.Sprintf("step %d (%s)", i, s)

		// The same changes on both sides. Each step is one sync: the
		// harness calls SyncPod at every step, and the machine syncs on a
		// pod update from the API (here an annotation, a change the
		// kubelet's pod config passes on; a status-only update would not
		// sync), as the pod worker does on UpdatePod; without it the
		// machine would wait for its own requeue time.
		now = now.Add(s.Advance)
		mp.pod = mp.pod.DeepCopy()
		mp.pod.ResourceVersion = strconv.Itoa(i + 1)
		mp.pod.Annotations = map[string]string{"conformance.nodestate.io/step": strconv.Itoa(i + 1)}
		for _, c := range sortedKeys(s.Exits) {
			in := mp.newest[c]
			if in == nil || !in.running {
				return out, fail(name, "runtime", []string{c + " not running in the machine's runtime"}, []string{c + " running"})
			}
			in.running, in.exitCode = false, s.Exits[c]
			reason := "Error"
			if s.Exits[c] == 0 {
				reason = "Completed"
			}
			mp.pending = append(mp.pending, podlifecycle.Observation{Kind: podlifecycle.ContainerExited, At: now, Container: c, ContainerID: in.id, ExitCode: s.Exits[c], Reason: reason})
		}
		for _, set := range []struct {
			results map[string]bool
			probe   podlifecycle.Probe
		}{{s.Startup, podlifecycle.Startup}, {s.Liveness, podlifecycle.Liveness}} {
			for _, c := range sortedKeys(set.results) {
				outcome := podlifecycle.ProbeFailure
				if set.results[c] {
					outcome = podlifecycle.ProbeSuccess
				}
				if set.probe == podlifecycle.Startup && set.results[c] {
					mp.newest[c].startedOK = true
				}
				if !set.results[c] {
					mp.newest[c].held = true
				}
				mp.pending = append(mp.pending, podlifecycle.Observation{Kind: podlifecycle.ProbeResult, At: now, Container: c,
					ContainerID: mp.newest[c].id, Probe: set.probe, Outcome: outcome})
			}
		}
		mp.pullErrs = append(mp.pullErrs, s.PullErrors...)
		mp.hookErrs = append(mp.hookErrs, s.HookErrors...)
		if err := up.apply(s); err != nil {
			return out, fail(name, "upstream runtime", nil, []string{err.Error()})
		}

		if s.Delete == nil {
			mc, me, res, err := mp.step(now)
			if err != nil {
				return out, fail(name, "Step", []string{err.Error()}, nil)
			}
			// The status generated at the start of this sync decides
			// whether the kubelet syncs the pod or terminates it: a
			// terminal phase (getPhase, compared by the podphase
			// properties) makes Kubelet.SyncPod return before the runtime
			// and the pod worker run SyncTerminatingPod's KillPod, with
			// no grace override (spec/podlifecycle.md section 7.2).
			var u lifecycleSync
			if mp.state == podlifecycle.Syncing {
				u, err = up.sync()
			} else {
				u, err = up.terminate(nil)
			}
			if err != nil {
				return out, fail(name, "upstream sync", nil, []string{err.Error()})
			}
			if killing(res.Actions) {
				// The machine kills over several Steps what SyncPod
				// does in one call, blocking on each hook and stop; the
				// rest of that sync (prune, starts) comes in the Step
				// that gets the last stop.
				c, e, err := mp.settle(now)
				if err != nil {
					return out, fail(name, "Step", []string{err.Error()}, nil)
				}
				mc, me = append(mc, c...), append(me, e...)
			}
			if err := compare(name, mc, me, u); err != nil {
				return out, err
			}
			if mp.state != podlifecycle.Syncing {
				// A terminal phase: Kubelet.SyncPod returns before the
				// runtime from now on and the pod worker terminates the
				// pod; the harness's SyncPod would go on acting on a
				// pod the kubelet no longer syncs.
				break
			}
			continue
		}

		// Termination: the pod worker's effective grace (at least 1 s)
		// goes to KillPod, which blocks until every stop returned; the
		// machine gets the deleted pod and is stepped, at the same
		// instant, on the answers to its kills until it asks for nothing
		// more. Its actions over those syncs are KillPod's calls.
		grace := max(*s.Delete, 1)
		u, err := up.terminate(&grace)
		if err != nil {
			return out, fail(name, "upstream termination", nil, []string{err.Error()})
		}
		mp.pod.DeletionTimestamp = up.pod().DeletionTimestamp.DeepCopy()
		mp.pod.DeletionGracePeriodSeconds = up.pod().DeletionGracePeriodSeconds
		mc, me, _, err := mp.step(now)
		if err != nil {
			return out, fail(name, "Step", []string{err.Error()}, nil)
		}
		c, e, err := mp.settle(now)
		if err != nil {
			return out, fail(name, "Step", []string{err.Error()}, nil)
		}
		mc, me = append(mc, c...), append(me, e...)
		if err := compare(name, mc, me, u); err != nil {
			return out, err
		}
		break
	}
	return out, nil
}

// setResult adds a probe result for container name to results.
func setResult(results map[string]bool, name string, success bool) map[string]bool {
	if results == nil {
		results = map[string]bool{}
	}
	results[name] = success
	return results
}

// specContainer returns the spec of the container name.
func specContainer(pod *v1.Pod, name string) *v1.Container {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// describeLifecyclePod prints the pod of a failing history in a few lines.
func describeLifecyclePod(pod *v1.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pod restartPolicy=%s terminationGracePeriodSeconds=%d", pod.Spec.RestartPolicy, *pod.Spec.TerminationGracePeriodSeconds)
	line := func(kind containerstate.Kind, c v1.Container) {
		fmt.Fprintf(&b, "\n%s %s image=%s pull=%s", kind, c.Name, c.Image, c.ImagePullPolicy)
		if c.RestartPolicy != nil {
			fmt.Fprintf(&b, " restartPolicy=%s", *c.RestartPolicy)
		}
		if len(c.RestartPolicyRules) > 0 {
			fmt.Fprintf(&b, " rules=%d", len(c.RestartPolicyRules))
			for _, r := range c.RestartPolicyRules {
				if r.ExitCodes != nil {
					fmt.Fprintf(&b, " [%s %s %v]", r.Action, r.ExitCodes.Operator, r.ExitCodes.Values)
				}
			}
		}
		for _, p := range []struct {
			name  string
			probe *v1.Probe
		}{{"startup", c.StartupProbe}, {"liveness", c.LivenessProbe}} {
			if p.probe != nil {
				fmt.Fprintf(&b, " %sProbe", p.name)
				if g := p.probe.TerminationGracePeriodSeconds; g != nil {
					fmt.Fprintf(&b, "(grace=%d)", *g)
				}
			}
		}
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
			b.WriteString(" preStop=exec")
		}
	}
	for _, c := range pod.Spec.InitContainers {
		line(containerstate.Init, c)
	}
	for _, c := range pod.Spec.Containers {
		line(containerstate.Regular, c)
	}
	return b.String()
}

// criCall is one runtime call the kuberuntime manager made: what the
// podlifecycle comparison holds against the machine's actions.
type criCall struct {
	// Op is the CRI method: RunPodSandbox, StopPodSandbox, PullImage,
	// CreateContainer, StartContainer, StopContainer, RemoveContainer or
	// ExecSync (an exec lifecycle hook).
	Op string
	// Name is the container's name, or the image for PullImage; empty for
	// the sandbox calls.
	Name string
	// Attempt is the container's or sandbox's attempt (the container's
	// restart count); unset for PullImage.
	Attempt uint32
	// Timeout is StopContainer's grace in seconds.
	Timeout int64
}

func (c criCall) String() string {
	switch c.Op {
	case "RunPodSandbox", "StopPodSandbox":
		return fmt.Sprintf("%s attempt=%d", c.Op, c.Attempt)
	case "PullImage":
		return fmt.Sprintf("%s %s", c.Op, c.Name)
	case "StopContainer":
		return fmt.Sprintf("%s %s#%d timeout=%d", c.Op, c.Name, c.Attempt, c.Timeout)
	}
	return fmt.Sprintf("%s %s#%d", c.Op, c.Name, c.Attempt)
}

// recordedEvent is one event the manager recorded, with the field path of
// its involved object (empty for pod events).
type recordedEvent struct {
	Type, Reason, FieldPath, Message string
}

func (e recordedEvent) String() string {
	if e.FieldPath == "" {
		return fmt.Sprintf("%s %s %q", e.Type, e.Reason, e.Message)
	}
	return fmt.Sprintf("%s %s %s %q", e.Type, e.Reason, e.FieldPath, e.Message)
}

// canonicalCalls orders the calls that upstream makes from goroutines or from a
// map, so in no fixed order: each run of consecutive StopContainer and
// ExecSync calls (kills and their preStop hooks) is sorted, stably, with
// the containers that are not sidecars first, by name, then the sidecars
// from last to first in spec order, the order killContainersWithSyncResult's
// terminationOrdering enforces. The stable sort keeps a container's own
// calls in their order (its preStop hook before its stop). Each run of
// RemoveContainer calls is sorted by name, stably.
func canonicalCalls(pod *v1.Pod, calls []criCall) []criCall {
	out := append([]criCall(nil), calls...)
	sidecar := map[string]int{}
	for i, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			sidecar[c.Name] = i + 1
		}
	}
	less := func(a, b criCall) bool {
		sa, sb := sidecar[a.Name], sidecar[b.Name]
		if sa != sb {
			if sa == 0 || sb == 0 {
				return sa == 0
			}
			return sa > sb
		}
		return a.Name < b.Name
	}
	sortRuns(out, func(c criCall) bool { return c.Op == "StopContainer" || c.Op == "ExecSync" }, less)
	// pruneInitContainersBeforeStart and purgeInitContainers walk the init
	// containers' names from a set, so in map order; each name's
	// instances go newest first. The RestartAllContainers reset, whose
	// removals have a fixed order, is not driven by the histories.
	sortRuns(out, func(c criCall) bool { return c.Op == "RemoveContainer" }, func(a, b criCall) bool { return a.Name < b.Name })
	return out
}

// canonicalEvents sorts, stably, each run of consecutive Killing and
// FailedPreStopHook events by field path: a whole-pod kill records them
// from one goroutine per container, and SyncPod kills the containers it
// does not keep in map order.
func canonicalEvents(events []recordedEvent) []recordedEvent {
	out := append([]recordedEvent(nil), events...)
	sortRuns(out, func(e recordedEvent) bool { return e.Reason == "Killing" || e.Reason == "FailedPreStopHook" },
		func(a, b recordedEvent) bool { return a.FieldPath < b.FieldPath })
	return out
}

// sortRuns sorts, stably and in place, each maximal run of consecutive
// elements of s that are in the run.
func sortRuns[T any](s []T, in func(T) bool, less func(a, b T) bool) {
	for i := 0; i < len(s); {
		if !in(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && in(s[j]) {
			j++
		}
		run := s[i:j]
		sort.SliceStable(run, func(x, y int) bool { return less(run[x], run[y]) })
		i = j
	}
}

// callStrings prints calls one per element, for comparisons and failures.
// wallClockGrace returns upstream with each StopContainer grace that is
// shorter than the machine's for the same instance by at most the whole
// seconds of wall (the time the manager's call took on the wall clock, see
// lifecycleSync) set to the machine's; nil when there is none. The machine
// has no wall clock: its grace is the one the manager gives when hooks and
// waits take no time.
func wallClockGrace(machine, upstream []criCall, wall time.Duration) []criCall {
	slack := int64(wall / time.Second)
	if slack == 0 {
		return nil
	}
	type instance struct {
		name    string
		attempt uint32
	}
	want := map[instance]int64{}
	for _, c := range machine {
		if c.Op == "StopContainer" {
			want[instance{c.Name, c.Attempt}] = c.Timeout
		}
	}
	var out []criCall
	for i, c := range upstream {
		if c.Op != "StopContainer" {
			continue
		}
		w, ok := want[instance{c.Name, c.Attempt}]
		if !ok || c.Timeout >= w || w-c.Timeout > slack {
			continue
		}
		if out == nil {
			out = append([]criCall(nil), upstream...)
		}
		out[i].Timeout = w
	}
	return out
}

func callStrings(calls []criCall) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.String()
	}
	return out
}

func eventStrings(events []recordedEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.String()
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
