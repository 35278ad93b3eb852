package podlifecycle

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// podP3 is fixture P3 of spec/podlifecycle.md section 13: pod foo in foo-ns,
// UID 12345678, containers foo1..foo3 (busybox), restartPolicy unset.
func podP3() *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "foo-ns", UID: "12345678"}}
	for i := 1; i <= 3; i++ {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprintf("foo%d", i), Image: "busybox"})
	}
	return p
}

// podPI is P3 plus regular init containers init1..init3 (bar-image).
func podPI() *v1.Pod {
	p := podP3()
	for i := 1; i <= 3; i++ {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: fmt.Sprintf("init%d", i), Image: "bar-image"})
	}
	return p
}

func probe() *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 10}
}

// podPS is P3 plus sidecars restartable-init-1..3; ri2 and ri3 have
// liveness and startup probes.
func podPS() *v1.Pod {
	p := podP3()
	for i := 1; i <= 3; i++ {
		c := v1.Container{Name: fmt.Sprintf("restartable-init-%d", i), Image: "bar-image",
			RestartPolicy: ptr(v1.ContainerRestartPolicyAlways)}
		if i > 1 {
			c.LivenessProbe, c.StartupProbe = probe(), probe()
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	return p
}

// podPE is P3 plus regular init container init1 and ephemeral container debug.
func podPE() *v1.Pod {
	p := podP3()
	p.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "bar-image"}}
	p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
	return p
}

// snap builds a machine whose view of the runtime is set directly, for the
// computePodActions cases.
type snap struct {
	t  *testing.T
	m  *Machine
	id int
}

func newSnap(t *testing.T, pod *v1.Pod) *snap {
	t.Helper()
	m, err := New(DefaultOptions(), pod)
	if err != nil {
		t.Fatal(err)
	}
	m.sb = sandbox{exists: true, ready: true, ip: "10.0.0.1"}
	m.started = true
	return &snap{t: t, m: m}
}

// add gives container name a new instance in state st in the current sandbox.
func (s *snap) add(name string, st containerstate.RuntimeState, exit int32) *inst {
	s.t.Helper()
	c := s.m.find(name)
	if c == nil {
		s.t.Fatalf("no container %s", name)
	}
	s.id++
	in := inst{id: fmt.Sprintf("docker://%d", s.id), state: st, created: t0, image: c.spec.Image, sandbox: s.m.sb.attempt}
	if st != containerstate.RuntimeCreated {
		in.started = t0
	}
	if st == containerstate.RuntimeExited {
		in.finished, in.exitCode, in.reason = t0, exit, containerstate.ReasonCompleted
		if exit != 0 {
			in.reason = containerstate.ReasonError
		}
	}
	if st == containerstate.RuntimeRunning && c.spec.LivenessProbe != nil {
		in.probes[Liveness-1].result = containerstate.ProbeSuccess
	}
	if st == containerstate.RuntimeRunning && c.spec.StartupProbe != nil {
		in.probes[Startup-1].result = containerstate.ProbeSuccess
	}
	c.push(in)
	return &c.insts[0]
}

// planOf is a plan in the section 13 shorthand.
type planOf struct {
	K, S  bool
	Att   uint32
	I, C  []int
	E     []int
	X     []string // killed containers
	XMsgs []string
	R     []string // reset list, "*" = kill before remove
}

// plan decides the snapshot's plan, twice: computePodActions only reads the
// machine, so the second plan, from the same view into the first's storage,
// is the same.
func (s *snap) plan() planOf {
	s.t.Helper()
	first := shorthand(s.m.computePodActions(plan{}))
	again := shorthand(s.m.computePodActions(s.m.plan))
	if d := cmp.Diff(first, again, cmpopts.EquateEmpty()); d != "" {
		s.t.Fatalf("a second computePodActions on the same view differs (-first +second):\n%s", d)
	}
	return first
}

// shorthand is p in the section 13 shorthand.
func shorthand(p plan) planOf {
	out := planOf{K: p.killPod, S: p.createSandbox, Att: p.attempt,
		I: append([]int(nil), p.initToStart...), C: append([]int(nil), p.toStart...), E: append([]int(nil), p.ephToStart...)}
	for _, k := range p.toKill {
		out.X = append(out.X, k.c.name)
		out.XMsgs = append(out.XMsgs, k.message)
	}
	for _, r := range p.toReset {
		n := r.c.name
		if r.kill {
			n += "*"
		}
		out.R = append(out.R, n)
	}
	return out
}

// sim is a small simulated runtime for the tests of this package: it
// carries actions out at once, with per-container outcomes.
type sim struct {
	t      *testing.T
	m      *Machine
	pod    *v1.Pod
	now    time.Time
	ids    int
	obs    []Observation
	res    Result
	exits  map[string]int32 // container -> exit code when killed (default 137)
	pullOK map[string]bool  // image -> pull fails when false
	probe  map[string]ProbeOutcome
	hook   map[string]bool // container -> postStart fails
	all    []Result
	seen   map[string]string // container ID -> container

	// startFail: container -> the error of its next start, which leaves
	// the instance created (one start only).
	startFail map[string]string
	// holdKill: container -> its KillContainer is not answered; it keeps
	// running until the test makes it exit.
	holdKill map[string]bool
	// createFail: container -> the error of its next creation, after a
	// pull that succeeded (one start only); no instance is made.
	createFail map[string]string
}

func newSim(t *testing.T, pod *v1.Pod, opts Options) *sim {
	t.Helper()
	m, err := New(opts, pod)
	if err != nil {
		t.Fatal(err)
	}
	return &sim{t: t, m: m, pod: pod, now: t0, exits: map[string]int32{}, pullOK: map[string]bool{},
		probe: map[string]ProbeOutcome{}, hook: map[string]bool{}, startFail: map[string]string{}, holdKill: map[string]bool{}, seen: map[string]string{},
		createFail: map[string]string{}}
}

// step runs one Step at the sim's time and carries the actions out,
// queueing their observations for the next step.
func (s *sim) step() *Result {
	s.t.Helper()
	obs := s.obs
	s.obs = nil
	if err := s.m.StepTo(s.now, s.pod, obs, &s.res); err != nil {
		s.t.Fatalf("step at %v: %v", s.now.Sub(t0), err)
	}
	cp := Result{Actions: append([]Action(nil), s.res.Actions...), Events: append([]Event(nil), s.res.Events...),
		Statuses: append([]v1.PodStatus(nil), s.res.Statuses...), NextSync: s.res.NextSync, State: s.res.State, Finished: s.res.Finished}
	s.all = append(s.all, cp)
	skip := ""
	for _, a := range s.res.Actions {
		s.do(a, &skip)
	}
	return &s.all[len(s.all)-1]
}

func (s *sim) emit(o Observation) {
	o.At = s.now
	s.obs = append(s.obs, o)
}

func (s *sim) do(a Action, skip *string) {
	switch a.Kind {
	case CreateSandbox:
		s.emit(Observation{Kind: SandboxReady, Attempt: a.Attempt, IP: "10.0.0.1"})
	case KillSandbox:
		s.emit(Observation{Kind: SandboxNotReady, Attempt: a.Attempt})
	case PullImage:
		if ok, set := s.pullOK[a.Image]; set && !ok {
			s.emit(Observation{Kind: ImagePullFailed, Container: a.Container, Image: a.Image, Message: "404"})
			*skip = a.Container
			return
		}
		s.emit(Observation{Kind: ImagePulled, Container: a.Container, Image: a.Image, Duration: time.Second, Size: 100})
	case StartContainer:
		if *skip == a.Container {
			return
		}
		if msg, ok := s.createFail[a.Container]; ok {
			delete(s.createFail, a.Container)
			s.emit(Observation{Kind: ContainerCreateFailed, Container: a.Container, Message: msg})
			return
		}
		s.ids++
		id := fmt.Sprintf("containerd://%s-%d", a.Container, s.ids)
		s.seen[id] = a.Container
		s.emit(Observation{Kind: ContainerCreated, Container: a.Container, ContainerID: id})
		if msg, ok := s.startFail[a.Container]; ok {
			delete(s.startFail, a.Container)
			s.emit(Observation{Kind: ContainerStartFailed, Container: a.Container, ContainerID: id, Message: msg})
			return
		}
		s.emit(Observation{Kind: ContainerStarted, Container: a.Container, ContainerID: id})
	case RunHook:
		if a.Hook == PostStart {
			id := s.lastID(a.Container)
			s.emit(Observation{Kind: HookResult, Container: a.Container, ContainerID: id, Hook: PostStart, Failed: s.hook[a.Container], Message: "hook failed"})
			return
		}
		s.emit(Observation{Kind: HookResult, Container: a.Container, ContainerID: a.ContainerID, Hook: PreStop})
	case KillContainer:
		if s.holdKill[a.Container] {
			return
		}
		code, ok := s.exits[a.Container]
		if !ok {
			code = 137
		}
		s.emit(Observation{Kind: ContainerExited, Container: a.Container, ContainerID: a.ContainerID, ExitCode: code})
	case RunProbe:
		out, ok := s.probe[a.Container]
		if !ok {
			out = ProbeSuccess
		}
		s.emit(Observation{Kind: ProbeResult, Container: a.Container, ContainerID: a.ContainerID, Probe: a.Probe, Outcome: out, Message: "probe output"})
	}
}

func (s *sim) lastID(name string) string {
	best := ""
	for i := s.ids; i > 0 && best == ""; i-- {
		id := fmt.Sprintf("containerd://%s-%d", name, i)
		if s.seen[id] == name {
			best = id
		}
	}
	return best
}

// exit makes the newest instance of name exit with code now.
func (s *sim) exit(name string, code int32) {
	s.emit(Observation{Kind: ContainerExited, Container: name, ContainerID: s.lastID(name), ExitCode: code})
}

// run steps until nothing is queued and returns the results.
func (s *sim) settle() {
	s.t.Helper()
	for i := 0; i < 50; i++ {
		s.step()
		if len(s.obs) == 0 {
			return
		}
	}
	s.t.Fatal("no settling")
}

// exitPastBackOff runs the pod until it settles, makes name exit with code
// and runs it again until it settles, then past the first crash-loop
// back-off, so a container that is restarted has started again.
func (s *sim) exitPastBackOff(name string, code int32) {
	s.t.Helper()
	s.settle()
	s.exit(name, code)
	s.settle()
	s.now = s.now.Add(containerstate.CrashLoopInitial + time.Second)
	s.settle()
}

// stepExitingInits steps n times; each init container exits 0 as soon as it
// is started.
func (s *sim) stepExitingInits(n int) {
	s.t.Helper()
	for range n {
		for _, a := range s.step().Actions {
			if a.Kind == StartContainer && a.ContainerKind == containerstate.Init {
				s.exit(a.Container, 0)
			}
		}
	}
}

// count returns how many actions of kind the machine asked for so far, of
// container when it is not empty.
func (s *sim) count(kind ActionKind, container string) int {
	n := 0
	for _, r := range s.all {
		for _, a := range r.Actions {
			if a.Kind == kind && (container == "" || a.Container == container) {
				n++
			}
		}
	}
	return n
}

// events returns every event recorded so far as "Type Reason Message [fieldPath]".
func (s *sim) events() []string {
	var out []string
	for _, r := range s.all {
		for _, e := range r.Events {
			out = append(out, e.Type+" "+e.Reason+" "+e.Message+" "+e.FieldPath)
		}
	}
	return out
}

// actionsOf lists the actions of r in a compact form.
func actionsOf(r *Result) []string {
	var out []string
	for _, a := range r.Actions {
		out = append(out, a.String())
	}
	return out
}
