package podlifecycle

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/podphase"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"pgregory.net/rapid"
)

// genPod draws a pod with regular init containers, sidecars (some with a
// startup probe), regular containers (some with probes and hooks), a
// restart policy, a grace period and maybe a deadline.
func genPod(t *rapid.T) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gen", Namespace: "ns", UID: "uid-gen"}}
	p.Spec.RestartPolicy = rapid.SampledFrom([]v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}).Draw(t, "policy")
	nInit := rapid.IntRange(0, 3).Draw(t, "inits")
	for i := 0; i < nInit; i++ {
		c := v1.Container{Name: "i" + strconv.Itoa(i), Image: "img:1"}
		if rapid.Bool().Draw(t, "sidecar") {
			c.RestartPolicy = ptr(v1.ContainerRestartPolicyAlways)
			if rapid.Bool().Draw(t, "startup") {
				c.StartupProbe = &v1.Probe{PeriodSeconds: int32(rapid.IntRange(1, 5).Draw(t, "period")), FailureThreshold: 2}
			}
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	nReg := rapid.IntRange(1, 3).Draw(t, "regular")
	for i := 0; i < nReg; i++ {
		c := v1.Container{Name: "c" + strconv.Itoa(i), Image: "img:1"}
		if rapid.Bool().Draw(t, "liveness") {
			c.LivenessProbe = &v1.Probe{PeriodSeconds: int32(rapid.IntRange(1, 10).Draw(t, "lperiod")), FailureThreshold: 2}
		}
		if rapid.Bool().Draw(t, "readiness") {
			c.ReadinessProbe = &v1.Probe{PeriodSeconds: 5}
			if rapid.Bool().Draw(t, "execReadiness") {
				c.ReadinessProbe.Exec = &v1.ExecAction{Command: []string{"true"}}
			} else {
				c.ReadinessProbe.HTTPGet = &v1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}
			}
		}
		if rapid.Bool().Draw(t, "prestop") {
			c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 1}}}
		}
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
	p.Spec.TerminationGracePeriodSeconds = ptr(int64(rapid.IntRange(0, 10).Draw(t, "grace")))
	if rapid.Bool().Draw(t, "deadline") {
		p.Spec.ActiveDeadlineSeconds = ptr(int64(rapid.IntRange(1, 600).Draw(t, "deadlineSeconds")))
	}
	return p
}

// rtCtr is the model runtime's view of one container.
type rtCtr struct {
	id       string
	running  bool
	exits    []time.Time // finish times of failed exits, for the back-off check
	stopAt   time.Time   // a pending stop (kill) time
	exitCode int32
	sandbox  uint32 // the sandbox attempt its newest instance was created in
	created  bool   // the newest instance's start failed: it stays created
}

// model drives a Machine with a small runtime whose behaviour rapid draws,
// and checks the invariants of issue 12 after every step.
type model struct {
	m         *Machine
	pod       *v1.Pod
	now       time.Time
	obs       []Observation
	rt        map[string]*rtCtr
	ids       int
	res       Result
	prev      *v1.PodStatus
	terminal  v1.PodPhase
	state     WorkerState
	delAt     time.Time // deletion time
	termAt    time.Time // the pod worker started terminating
	termGrace int64     // the grace its kills began with
	// killAt and killGrace are when each container's last kill began (its
	// Killing event) and with which grace: a whole-pod kill from a sync
	// (rule 3.7) may still be under way when the termination begins.
	killAt    map[string]time.Time
	killGrace map[string]int64
	grace     int64
	probes    map[string]ProbeOutcome
	spins     int
	attempt   uint32          // the newest sandbox attempt asked for
	sbGone    bool            // the runtime's sandbox is gone (a reboot or a KillSandbox)
	resumed   bool            // the step resumed a sync that was blocked on a kill
	failStart map[string]bool // the starts of the container fail
}

func (md *model) ctrSpec(name string) (*v1.Container, containerstate.Kind, int) {
	for i := range md.pod.Spec.InitContainers {
		if md.pod.Spec.InitContainers[i].Name == name {
			return &md.pod.Spec.InitContainers[i], containerstate.Init, i
		}
	}
	for i := range md.pod.Spec.Containers {
		if md.pod.Spec.Containers[i].Name == name {
			return &md.pod.Spec.Containers[i], containerstate.Regular, i
		}
	}
	return nil, 0, -1
}

func (md *model) emit(o Observation) {
	if o.At.IsZero() {
		o.At = md.now
	}
	md.obs = append(md.obs, o)
}

// step runs one Step and checks the invariants on its result.
// deliverDue stops the containers whose kill is due.
func (md *model) deliverDue() {
	for name, rc := range md.rt {
		if rc.running && !rc.stopAt.IsZero() && !rc.stopAt.After(md.now) {
			md.stop(name, 137, false)
		}
	}
}

func (md *model) step(t *rapid.T) {
	md.deliverDue()
	obs := md.obs
	md.obs = nil
	before := md.m.state
	md.resumed = md.m.cont
	if err := md.m.StepTo(md.now, md.pod, obs, &md.res); err != nil {
		t.Fatalf("step: %v", err)
	}
	r := &md.res
	if testing.Verbose() {
		t.Logf("%v: obs %d actions %v events %d state %v next %v", md.now.Sub(t0), len(obs), actionsOf(r), len(r.Events), r.State, r.NextSync.Sub(t0))
	}
	if r.State < md.state {
		t.Fatalf("invariant: the worker state went back from %v to %v", md.state, r.State)
	}
	md.state = r.State
	if before == Syncing && r.State >= Terminating && md.termAt.IsZero() {
		// The grace the kills began with: a later deletion does not change
		// kills under way (section 15, decision 2).
		md.termAt, md.termGrace = md.now, 2
		if tg := md.pod.Spec.TerminationGracePeriodSeconds; tg != nil {
			md.termGrace = *tg
		}
		if md.pod.DeletionTimestamp != nil {
			md.termGrace = md.m.override
		}
	}
	for _, e := range r.Events {
		if e.Reason != ReasonKilling {
			continue
		}
		name := e.FieldPath[strings.IndexByte(e.FieldPath, '{')+1 : len(e.FieldPath)-1]
		g := int64(2) // the pod grace of a kill from a sync (3.8)
		switch {
		case r.State >= Terminating && md.pod.DeletionTimestamp != nil:
			g = md.m.override
		case r.State >= Terminating:
			g = md.termGrace
		case md.pod.DeletionGracePeriodSeconds != nil:
			g = *md.pod.DeletionGracePeriodSeconds
		case md.pod.Spec.TerminationGracePeriodSeconds != nil:
			g = *md.pod.Spec.TerminationGracePeriodSeconds
		}
		if md.killAt == nil {
			md.killAt, md.killGrace = map[string]time.Time{}, map[string]int64{}
		}
		md.killAt[name], md.killGrace[name] = md.now, g
	}
	// Progress: a step with nothing to do must not ask to be run again now.
	if len(obs) == 0 && len(r.Actions) == 0 && len(r.Events) == 0 && len(r.Statuses) == 0 &&
		!r.Finished && !r.NextSync.After(md.now) {
		md.spins++
		if md.spins > 3 {
			t.Fatalf("invariant: the machine asks for a sync at %v again and again without progress", md.now.Sub(t0))
		}
	} else {
		md.spins = 0
	}
	// PL-V5: in 1.35 and 1.36 a deletion cancels the exec probes.
	v := md.m.opts.Version
	cancelling := md.pod.DeletionTimestamp != nil && (v == kubeversion.V1_35 || v == kubeversion.V1_36)
	for _, e := range r.Events {
		if e.FieldPath != "" && !fieldPathOK(&md.pod.Spec, e.FieldPath) {
			t.Fatalf("invariant: event %+v names no container of the spec", e)
		}
		if e.Reason == ReasonUnhealthy && strings.HasSuffix(e.Message, "rpc error: code = Canceled desc = context canceled") && !cancelling {
			t.Fatalf("invariant (PL-V5): %v records %q without a deletion cancelling its exec probes", v, e.Message)
		}
	}
	for i := range r.Statuses {
		st := &r.Statuses[i]
		if md.terminal != "" && st.Phase != md.terminal {
			t.Fatalf("invariant: terminal phase %s changed to %s", md.terminal, st.Phase)
		}
		if podphase.IsTerminal(st.Phase) {
			md.terminal = st.Phase
		}
		if md.prev != nil {
			if got, want := statusEqual(md.prev, st), equality.Semantic.DeepEqual(*md.prev, *st); got != want {
				t.Fatalf("statusEqual %v, semantic equality %v", got, want)
			}
			if err := md.m.csOpts.ValidateStatusTransition(&md.pod.Spec, md.prev, st); err != nil {
				t.Fatalf("invariant: status refused by the API server: %v", err)
			}
		}
		md.prev = st.DeepCopy()
	}
	if r.Finished {
		if !r.NextSync.IsZero() {
			t.Fatalf("invariant: finished, and a sync asked for at %v", r.NextSync.Sub(t0))
		}
		for name, rc := range md.rt {
			if rc.running {
				t.Fatalf("invariant: finished while %s runs", name)
			}
		}
	}
	for _, a := range r.Actions {
		if a.Container != "" && !specHas(&md.pod.Spec, a.Container) {
			t.Fatalf("invariant: action %v for a container the spec lacks", a)
		}
		if spec, _, _ := md.ctrSpec(a.Container); a.Kind == RunProbe && cancelling && spec != nil {
			if ps := probeSpec(spec, a.Probe); ps != nil && ps.Exec != nil {
				t.Fatalf("invariant (PL-V5): %v runs exec probe %v of %s during a deletion", v, a.Probe, a.Container)
			}
		}
		md.check(t, a)
		md.do(t, a)
	}
}

// check holds the ordering invariants for one action, against the model
// runtime as it is when the action is issued.
func (md *model) check(t *rapid.T, a Action) {
	spec, kind, idx := md.ctrSpec(a.Container)
	switch a.Kind {
	case StartContainer:
		if md.state >= Terminating {
			t.Fatalf("invariant: %v while terminating", a)
		}
		if md.sbGone {
			// A sync blocked on a kill while the sandbox was lost goes on with
			// its plan (4.1): the runtime refuses the start (do), nothing
			// starts. A sync that began after the loss creates a sandbox first.
			if !md.resumed {
				t.Fatalf("invariant: %v into a sandbox known to be gone", a)
			}
			return
		}
		inits := md.pod.Spec.InitContainers
		laterDone := func(i int) bool { // a later init container is done: the walk has seen it (3.5)
			for j := i + 1; j < len(inits); j++ {
				if md.initDone(&inits[j]) {
					return true
				}
			}
			return false
		}
		// The first start of an init container waits for the one before;
		// restarts do not (an exited sidecar or a failed init container
		// restarts whatever the others do, 3.5).
		first := md.rt[a.Container] == nil
		if kind == containerstate.Init && idx > 0 && first && !md.initDone(&inits[idx-1]) && !md.regularActive() && !laterDone(idx) {
			t.Fatalf("invariant: init container %s starts before %s is done", a.Container, inits[idx-1].Name)
		}
		// PL-V7: 1.37 starts a regular container once a regular container
		// has an instance in the current sandbox or the last init container
		// is done in it; 1.33 to 1.36 also once the newest instance of a
		// regular container is created or running, in any sandbox.
		if kind == containerstate.Regular && len(inits) > 0 && !md.regularActive() && !md.initDone(&inits[len(inits)-1]) &&
			(md.m.opts.Version.AtLeast(kubeversion.V1_37) || !md.regularCreatedOrRunning()) {
			t.Fatalf("invariant: %v: %s starts before the last init container %s is done in sandbox %d", md.m.opts.Version, a.Container, inits[len(inits)-1].Name, md.attempt)
		}
		if rc := md.rt[a.Container]; rc != nil && len(rc.exits) >= 2 && spec != nil {
			last := rc.exits[len(rc.exits)-1]
			if md.now.Sub(last) < 10*time.Second {
				t.Fatalf("invariant: %s restarted %v after its crash, inside the back-off", a.Container, md.now.Sub(last))
			}
		}
	case KillContainer:
		if a.Grace < 2*time.Second {
			t.Fatalf("invariant: stop grace %v below 2 s", a.Grace)
		}
		if md.state < Terminating || kind != containerstate.Init || !containerstate.IsSidecar(spec) {
			return
		}
		// A sidecar stops after the regular containers and the later
		// sidecars, unless the grace ran out.
		began, g := md.termAt, md.termGrace
		if at, ok := md.killAt[a.Container]; ok {
			began, g = at, md.killGrace[a.Container]
		}
		if md.now.Sub(began) >= time.Duration(g)*time.Second {
			return // the wait for the turn is capped by the kill's grace (7.4 step 5)
		}
		for i := range md.pod.Spec.Containers {
			if rc := md.rt[md.pod.Spec.Containers[i].Name]; rc != nil && rc.running {
				t.Fatalf("invariant: sidecar %s stopped while %s runs", a.Container, md.pod.Spec.Containers[i].Name)
			}
		}
		for i := idx + 1; i < len(md.pod.Spec.InitContainers); i++ {
			c := &md.pod.Spec.InitContainers[i]
			if rc := md.rt[c.Name]; rc != nil && rc.running && containerstate.IsSidecar(c) {
				t.Fatalf("invariant: sidecar %s stopped before the later sidecar %s", a.Container, c.Name)
			}
		}
	}
}

// initDone: in the current sandbox, a regular init container exited 0, a
// sidecar runs and started.
func (md *model) initDone(c *v1.Container) bool {
	rc := md.rt[c.Name]
	if rc == nil || rc.sandbox != md.attempt || rc.created {
		return false
	}
	if containerstate.IsSidecar(c) {
		mc := md.m.find(c.Name)
		return rc.running && len(mc.insts) > 0 && started(mc, &mc.insts[0])
	}
	return !rc.running && rc.id != "" && rc.exitCode == 0
}

// regularCreatedOrRunning: the newest instance of a regular container is
// created or running, in any sandbox.
func (md *model) regularCreatedOrRunning() bool {
	for i := range md.pod.Spec.Containers {
		if rc := md.rt[md.pod.Spec.Containers[i].Name]; rc != nil && (rc.running || rc.created) {
			return true
		}
	}
	return false
}

func (md *model) regularActive() bool {
	rs := md.m.regulars()
	for i := range rs {
		if md.m.active(&rs[i]) != nil {
			return true
		}
	}
	return false
}

// do carries an action out in the model runtime.
func (md *model) do(t *rapid.T, a Action) {
	switch a.Kind {
	case CreateSandbox:
		md.attempt, md.sbGone = a.Attempt, false
		md.emit(Observation{Kind: SandboxReady, Attempt: a.Attempt, IP: "10.1.0.1"})
	case KillSandbox:
		md.sbGone = true
		md.emit(Observation{Kind: SandboxNotReady, Attempt: a.Attempt})
		for _, rc := range md.rt {
			if rc.running {
				t.Fatalf("invariant: sandbox stopped while a container runs")
			}
		}
	case PullImage:
		md.emit(Observation{Kind: ImagePulled, Container: a.Container, Image: a.Image})
	case StartContainer:
		if md.sbGone {
			// A CRI runtime creates no container in a sandbox that is gone.
			md.emit(Observation{Kind: ContainerCreateFailed, Container: a.Container,
				Message: "failed to create containerd container: sandbox " + strconv.Itoa(int(md.attempt)) + " is not ready"})
			return
		}
		md.ids++
		id := "c://" + strconv.Itoa(md.ids)
		rc := md.rt[a.Container]
		if rc == nil {
			rc = &rtCtr{}
			md.rt[a.Container] = rc
		}
		rc.id, rc.running, rc.stopAt, rc.sandbox, rc.created = id, true, time.Time{}, md.attempt, false
		md.emit(Observation{Kind: ContainerCreated, Container: a.Container, ContainerID: id})
		if md.failStart[a.Container] {
			// The start fails and leaves the container created.
			rc.running, rc.created = false, true
			md.emit(Observation{Kind: ContainerStartFailed, Container: a.Container, ContainerID: id, Message: "start failed"})
			return
		}
		md.emit(Observation{Kind: ContainerStarted, Container: a.Container, ContainerID: id})
	case KillContainer:
		if rc := md.rt[a.Container]; rc != nil && rc.id == a.ContainerID && rc.running {
			rc.stopAt = md.now.Add(time.Duration(rapid.IntRange(0, int(a.Grace/time.Second)).Draw(t, "stopAfter")) * time.Second)
		}
	case RemoveContainer:
		md.emit(Observation{Kind: ContainerRemoved, Container: a.Container, ContainerID: a.ContainerID})
	case RunHook:
		id := a.ContainerID
		if id == "" {
			id = md.rt[a.Container].id
		}
		md.emit(Observation{Kind: HookResult, Container: a.Container, ContainerID: id, Hook: a.Hook})
	case RunProbe:
		out, ok := md.probes[a.Container]
		if !ok {
			out = ProbeSuccess
		}
		md.emit(Observation{Kind: ProbeResult, Container: a.Container, ContainerID: a.ContainerID, Probe: a.Probe, Outcome: out})
	}
}

// exit stops container name's running instance with code now.
func (md *model) exit(name string, code int32) { md.stop(name, code, true) }

// stop stops container name's running instance with code now; crash says
// whether it exited by itself (a kill's stop does not start a crash loop).
func (md *model) stop(name string, code int32, crash bool) {
	rc := md.rt[name]
	if rc == nil || !rc.running {
		return
	}
	// An exit while a kill is pending ends that kill: the kubelet restarts
	// it with the back-off of the attempt before (4.2 step 1).
	crash = crash && rc.stopAt.IsZero()
	rc.running, rc.exitCode, rc.stopAt = false, code, time.Time{}
	if code != 0 && crash {
		rc.exits = append(rc.exits, md.now)
	}
	md.emit(Observation{Kind: ContainerExited, Container: name, ContainerID: rc.id, ExitCode: code})
}

// advance moves time to the next thing due and delivers pending stops.
func (md *model) advance(t *rapid.T) {
	next := md.res.NextSync
	for _, rc := range md.rt {
		if !rc.stopAt.IsZero() {
			next = earliest(next, rc.stopAt)
		}
	}
	if len(md.obs) == 0 && next.After(md.now) {
		md.now = next
	}
	md.step(t)
}

// reboot is a node reboot: every running container stops, the sandbox is
// gone, created containers stay. With betweenCreateAndStart it comes
// between the create and the start of the regular containers whose start is
// not yet reported: their start fails and they stay created.
func (md *model) reboot(t *rapid.T, betweenCreateAndStart bool) {
	if betweenCreateAndStart {
		for i := range md.obs {
			o := &md.obs[i]
			rc := md.rt[o.Container]
			if _, kind, _ := md.ctrSpec(o.Container); o.Kind != ContainerStarted || kind != containerstate.Regular ||
				rc == nil || rc.id != o.ContainerID || !rc.running {
				continue
			}
			rc.running, rc.created = false, true
			*o = Observation{Kind: ContainerStartFailed, At: o.At, Container: o.Container, ContainerID: o.ContainerID, Message: "start failed"}
		}
	}
	for name, rc := range md.rt {
		md.stop(name, 255, false)
		if _, kind, _ := md.ctrSpec(name); kind == containerstate.Init {
			// The new sandbox purges the init containers' instances and
			// with them the crash-loop reference: after the start the
			// purging sync holds (4.2 step 1), the kubelet finds no exited
			// instance to back off against.
			rc.exits = nil
		}
	}
	md.sbGone = true
	md.emit(Observation{Kind: SandboxNotReady, Attempt: md.attempt})
	md.step(t)
}

// regularStartPending reports whether a regular container's start is
// issued and not yet reported to the machine.
func (md *model) regularStartPending() bool {
	for i := range md.obs {
		if _, kind, _ := md.ctrSpec(md.obs[i].Container); md.obs[i].Kind == ContainerStarted && kind == containerstate.Regular {
			return true
		}
	}
	return false
}

// TestPropertyPLV7 is docs/versions.md row PL-V7 as a property: a pod with
// init containers runs (its regular init containers exit 0 once running)
// until the first start of a regular container; the node reboots between
// that container's create and start, and the pod runs on in the new
// sandbox. In every minor the model's invariants hold; in 1.37 no regular
// container starts before the last init container is done in the new
// sandbox (spec/podlifecycle.md section 3.5), while 1.33 to 1.36 may start
// it on the created container of the lost sandbox.
func TestPropertyPLV7(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := genPod(t)
		if len(pod.Spec.InitContainers) == 0 {
			pod.Spec.InitContainers = []v1.Container{{Name: "i0", Image: "img:1"}}
		}
		md := newModel(t, pod)
		md.step(t)
		rebooted := false
		for i := 0; i < 100 && md.state == Syncing; i++ {
			if !rebooted && md.regularStartPending() && md.m.sb.ready {
				md.reboot(t, true)
				rebooted = true
				continue
			}
			for j := range pod.Spec.InitContainers {
				if c := &pod.Spec.InitContainers[j]; !containerstate.IsSidecar(c) {
					md.exit(c.Name, 0)
				}
			}
			md.advance(t)
		}
	})
}

// newModel is the model of a machine for pod, of a minor drawn with t.
func newModel(t *rapid.T, pod *v1.Pod) *model {
	v := rapid.SampledFrom(kubeversion.Supported()).Draw(t, "version")
	m, err := New(DefaultOptionsFor(v), pod)
	if err != nil {
		t.Fatal(err)
	}
	return &model{m: m, pod: pod, now: t0, rt: map[string]*rtCtr{}, probes: map[string]ProbeOutcome{}, failStart: map[string]bool{}}
}

// TestModel is the machine's model test: random pods, runtime behaviours,
// crashes, probe outcomes and deletions, with the invariants checked after
// every step.
func TestModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := genPod(t)
		// Every minor: the version-dependent rules (docs/versions.md rows
		// PL-V5, PL-V7) keep the invariants too.
		md := newModel(t, pod)
		md.step(t)
		names, regulars := []string{}, []string{}
		for _, c := range pod.Spec.InitContainers {
			names = append(names, c.Name)
		}
		for _, c := range pod.Spec.Containers {
			names = append(names, c.Name)
			regulars = append(regulars, c.Name)
		}
		t.Repeat(map[string]func(*rapid.T){
			"advance": func(t *rapid.T) { md.advance(t) },
			"exit": func(t *rapid.T) {
				n := rapid.SampledFrom(names).Draw(t, "container")
				md.now = md.now.Add(time.Duration(rapid.IntRange(0, 30).Draw(t, "after")) * time.Second)
				md.deliverDue()
				md.exit(n, int32(rapid.SampledFrom([]int{0, 1, 137}).Draw(t, "code")))
				md.step(t)
			},
			"failStart": func(t *rapid.T) {
				// From now on the starts of the container fail (or no
				// longer fail), leaving it created.
				md.failStart[rapid.SampledFrom(regulars).Draw(t, "container")] = rapid.Bool().Draw(t, "fail")
			},
			"reboot": func(t *rapid.T) {
				if md.state != Syncing || !md.m.sb.ready {
					t.Skip("no running sandbox")
				}
				md.reboot(t, rapid.Bool().Draw(t, "betweenCreateAndStart"))
			},
			"probe": func(t *rapid.T) {
				n := rapid.SampledFrom(names).Draw(t, "container")
				md.probes[n] = rapid.SampledFrom([]ProbeOutcome{ProbeSuccess, ProbeFailure, ProbeError, ProbeWarning}).Draw(t, "outcome")
			},
			"delete": func(t *rapid.T) {
				if md.pod.DeletionTimestamp != nil {
					t.Skip("already deleted")
				}
				g := int64(rapid.IntRange(0, 10).Draw(t, "deletionGrace"))
				md.pod = deleted(md.pod, md.now, g)
				md.grace = effectiveGrace(0, &g, nil, md.pod.Spec.TerminationGracePeriodSeconds) + 1 // + a hook second
				md.delAt = md.now
				md.step(t)
			},
			"": func(t *rapid.T) {
				if !md.delAt.IsZero() && md.state < Terminated && len(md.obs) == 0 && md.now.Sub(md.delAt) > time.Duration(3*md.grace+30)*time.Second {
					t.Fatalf("invariant: deleted at %v, still %v at %v", md.delAt.Sub(t0), md.state, md.now.Sub(t0))
				}
			},
		})
	})
}
