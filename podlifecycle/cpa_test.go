package podlifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

const (
	running = containerstate.RuntimeRunning
	exited  = containerstate.RuntimeExited
	created = containerstate.RuntimeCreated
	unknown = containerstate.RuntimeUnknown
)

// TestComputePodActions checks computePodActions against the cases of
// spec/podlifecycle.md section 13 (PL01-PL29, PL32), in the section's
// shorthand.
func TestComputePodActions(t *testing.T) {
	p3running := func(t *testing.T, pod *v1.Pod) *snap {
		s := newSnap(t, pod)
		for _, n := range []string{"foo1", "foo2", "foo3"} {
			s.add(n, running, 0)
		}
		return s
	}
	sidecars := func(t *testing.T, pod *v1.Pod, names ...int) *snap {
		s := newSnap(t, pod)
		for _, i := range names {
			s.add([]string{"", "restartable-init-1", "restartable-init-2", "restartable-init-3"}[i], running, 0)
		}
		return s
	}
	never := func(p *v1.Pod) *v1.Pod { p.Spec.RestartPolicy = v1.RestartPolicyNever; return p }
	always := func(p *v1.Pod) *v1.Pod { p.Spec.RestartPolicy = v1.RestartPolicyAlways; return p }
	onFailure := func(p *v1.Pod) *v1.Pod { p.Spec.RestartPolicy = v1.RestartPolicyOnFailure; return p }
	for _, tc := range []struct {
		id, reason string
		build      func(t *testing.T) *snap
		want       planOf
	}{
		{"PL01", "rule 3.6: running unchanged containers are kept", func(t *testing.T) *snap { return p3running(t, podP3()) }, planOf{}},
		{"PL02", "rule 3.1/3.3: no sandbox: create attempt 0 and start every container", func(t *testing.T) *snap {
			s := newSnap(t, podP3())
			s.m.sb = sandbox{}
			return s
		}, planOf{K: true, S: true, C: []int{0, 1, 2}}},
		{"PL03", "rule 3.6: Always restarts both exits", func(t *testing.T) *snap {
			s := newSnap(t, always(podP3()))
			s.add("foo1", exited, 0)
			s.add("foo2", exited, 111)
			s.add("foo3", running, 0)
			return s
		}, planOf{C: []int{0, 1}}},
		{"PL04", "rule 3.6: OnFailure restarts only the failure", func(t *testing.T) *snap {
			s := newSnap(t, onFailure(podP3()))
			s.add("foo1", exited, 0)
			s.add("foo2", exited, 111)
			s.add("foo3", running, 0)
			return s
		}, planOf{C: []int{1}}},
		{"PL05", "rule 3.6: Never restarts nothing, foo3 kept", func(t *testing.T) *snap {
			s := newSnap(t, never(podP3()))
			s.add("foo1", exited, 0)
			s.add("foo2", exited, 111)
			s.add("foo3", running, 0)
			return s
		}, planOf{}},
		{"PL06", "rule 3.1/3.3: sandbox not ready: new attempt, all candidates", func(t *testing.T) *snap {
			s := p3running(t, always(podP3()))
			s.m.sb.ready = false
			return s
		}, planOf{K: true, S: true, Att: 1, C: []int{0, 1, 2}}},
		{"PL07", "rule 3.6 step 1: changed image: kill and restart", func(t *testing.T) *snap {
			s := p3running(t, always(podP3()))
			s.m.find("foo2").insts[0].image = "busybox:old"
			return s
		}, planOf{C: []int{1}, X: []string{"foo2"}, XMsgs: []string{"Container foo2 definition changed, will be restarted"}}},
		{"PL08", "rule 3.6 step 2: liveness failure: kill and restart", func(t *testing.T) *snap {
			s := p3running(t, always(podP3()))
			s.m.find("foo2").insts[0].probes[Liveness-1].result = containerstate.ProbeFailure
			return s
		}, planOf{C: []int{1}, X: []string{"foo2"}, XMsgs: []string{"Container foo2 failed liveness probe, will be restarted"}}},
		{"PL09", "rule 3.3 step 1: Never with containers seen gets no new sandbox", func(t *testing.T) *snap {
			s := newSnap(t, never(podP3()))
			s.m.sb.attempt = 1
			for _, n := range []string{"foo1", "foo2", "foo3"} {
				s.add(n, exited, 0)
			}
			s.m.sb.ready = false
			return s
		}, planOf{K: true, Att: 2}},
		{"PL10", "rule 3.6: unknown is killed and restarted even under Never", func(t *testing.T) *snap {
			s := p3running(t, never(podP3()))
			s.m.find("foo2").insts[0].state = unknown
			return s
		}, planOf{C: []int{1}, X: []string{"foo2"}, XMsgs: []string{MessageKillUnknownContainer}}},
		{"PL11", "rule 3.5: init containers done: start the regular containers", func(t *testing.T) *snap {
			s := newSnap(t, podPI())
			for _, n := range []string{"init1", "init2", "init3"} {
				s.add(n, exited, 0)
			}
			return s
		}, planOf{C: []int{0, 1, 2}}},
		{"PL12", "rule 3.5: nothing ran: init container 0", func(t *testing.T) *snap { return newSnap(t, podPI()) }, planOf{I: []int{0}}},
		{"PL13", "rule 3.5: failed init restarted under Always", func(t *testing.T) *snap {
			s := newSnap(t, always(podPI()))
			s.add("init1", exited, 0)
			s.add("init2", exited, 0)
			s.add("init3", exited, 137)
			return s
		}, planOf{I: []int{2}}},
		{"PL14", "rule 3.5: failed init under Never kills the pod", func(t *testing.T) *snap {
			s := newSnap(t, never(podPI()))
			s.add("init1", exited, 0)
			s.add("init2", exited, 0)
			s.add("init3", exited, 137)
			return s
		}, planOf{K: true}},
		{"PL15", "rule 3.3 step 4: new sandbox reruns init 0", func(t *testing.T) *snap {
			s := newSnap(t, never(podPI()))
			s.m.sb.ready = false
			return s
		}, planOf{K: true, S: true, Att: 1, I: []int{0}}},
		{"PL16", "rule 3.5: a stale regular container does not count as initialized", func(t *testing.T) *snap {
			s := newSnap(t, podPI())
			s.add("foo1", created, 0).sandbox = 7
			return s
		}, planOf{I: []int{0}}},
		{"PL17", "rule 3.5: running sidecar without startup probe: next", func(t *testing.T) *snap { return sidecars(t, always(podPS()), 1) }, planOf{I: []int{1}}},
		{"PL18", "rule 3.5: started sidecar without liveness result: next starts", func(t *testing.T) *snap {
			s := sidecars(t, always(podPS()), 1, 2)
			s.m.find("restartable-init-2").insts[0].probes[Liveness-1].result = containerstate.ProbeNone
			return s
		}, planOf{I: []int{2}}},
		{"PL19", "rule 3.5: sidecar without startup result holds the next", func(t *testing.T) *snap {
			s := sidecars(t, always(podPS()), 1, 2)
			s.m.find("restartable-init-2").insts[0].probes[Startup-1].result = containerstate.ProbeNone
			return s
		}, planOf{}},
		{"PL20", "rule 3.5 step 4: last sidecar liveness failure: kill, start; initialized", func(t *testing.T) *snap {
			s := sidecars(t, always(podPS()), 1, 2, 3)
			s.m.find("restartable-init-3").insts[0].probes[Liveness-1].result = containerstate.ProbeFailure
			return s
		}, planOf{I: []int{2}, C: []int{0, 1, 2}, X: []string{"restartable-init-3"}, XMsgs: []string{"Init container restartable-init-3 failed liveness probe"}}},
		{"PL21", "rule 3.5 step 1: startup failure: kill, start; not initialized", func(t *testing.T) *snap {
			s := sidecars(t, always(podPS()), 1, 2, 3)
			s.m.find("restartable-init-3").insts[0].probes[Startup-1].result = containerstate.ProbeFailure
			return s
		}, planOf{I: []int{2}, X: []string{"restartable-init-3"}, XMsgs: []string{"Init container restartable-init-3 failed startup probe"}}},
		{"PL22", "rule 3.5: exited sidecars restart", func(t *testing.T) *snap {
			s := sidecars(t, always(podPS()), 1, 2, 3)
			s.m.find("restartable-init-1").insts[0].state = exited
			s.m.find("restartable-init-3").insts[0].state = exited
			return s
		}, planOf{I: []int{0, 2}}},
		{"PL23", "rule 3.5: a sidecar restarts under Never", func(t *testing.T) *snap {
			s := sidecars(t, never(podPS()), 1, 2, 3)
			in := s.m.find("restartable-init-3").insts
			in[0].state, in[0].exitCode = exited, 137
			return s
		}, planOf{I: []int{2}}},
		{"PL24", "rule 3.7: sidecars do not keep the pod alive", func(t *testing.T) *snap {
			s := sidecars(t, never(podPS()), 1, 2, 3)
			for _, n := range []string{"foo1", "foo2", "foo3"} {
				s.add(n, exited, 0).sandbox = 9
			}
			return s
		}, planOf{K: true}},
		{"PL25", "rule 3.5: only the last sidecar runs: restart the others, initialized", func(t *testing.T) *snap { return sidecars(t, always(podPS()), 3) },
			planOf{I: []int{0, 1}, C: []int{0, 1, 2}}},
		{"PL26", "rule 3.4: ephemeral container started once", func(t *testing.T) *snap {
			s := p3running(t, podPE())
			s.add("init1", exited, 0)
			return s
		}, planOf{E: []int{0}}},
		{"PL27", "rule 3.4: an exited ephemeral container is not restarted", func(t *testing.T) *snap {
			s := p3running(t, always(podPE()))
			s.add("init1", exited, 0)
			s.add("debug", exited, 0)
			return s
		}, planOf{}},
		{"PL28", "rule 3.6: container Always wins over pod Never", func(t *testing.T) *snap {
			p := never(podP3())
			p.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyAlways)
			p.Spec.Containers[1].RestartPolicy = ptr(v1.ContainerRestartPolicyAlways)
			s := newSnap(t, p)
			s.add("foo1", exited, 0)
			s.add("foo2", exited, 111)
			s.add("foo3", running, 0)
			return s
		}, planOf{C: []int{0, 1}}},
		{"PL29", "rule 3.6: container Never wins over pod Always", func(t *testing.T) *snap {
			p := always(podP3())
			p.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
			p.Spec.Containers[1].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
			s := newSnap(t, p)
			s.add("foo1", exited, 0)
			s.add("foo2", exited, 111)
			s.add("foo3", running, 0)
			return s
		}, planOf{}},
		{"PL32", "rule 3.2: not marked: the usual start", func(t *testing.T) *snap { return newSnap(t, podP3()) }, planOf{C: []int{0, 1, 2}}},
		{"3.5-sidecar-image", "rule 3.5 step 3: a running sidecar's image changed: kill and start it again", func(t *testing.T) *snap {
			s := sidecars(t, always(podPS()), 1, 2, 3)
			s.m.find("restartable-init-2").insts[0].image = "bar-image:old"
			return s
		}, planOf{I: []int{1}, C: []int{0, 1, 2}, X: []string{"restartable-init-2"}, XMsgs: []string{"Init container restartable-init-2 definition changed"}}},
		{"3.5-last-sidecar-image", "rule 3.5 step 3: the last sidecar's image changed: it alone is started again, the failed init container before it is not", func(t *testing.T) *snap {
			return sidecarsAroundFailedInit(t, func(in *inst) { in.image = "bar-image:old" })
		}, planOf{I: []int{2}, C: []int{0, 1, 2}, X: []string{"side-b"}, XMsgs: []string{"Init container side-b definition changed"}}},
		{"3.5-last-sidecar-startup", "rule 3.5 step 1: the last sidecar's startup probe failed: it alone is started again, the failed init container before it is not", func(t *testing.T) *snap {
			return sidecarsAroundFailedInit(t, func(in *inst) { in.probes[Startup-1].result = containerstate.ProbeFailure })
		}, planOf{I: []int{2}, X: []string{"side-b"}, XMsgs: []string{"Init container side-b failed startup probe"}}},
		{"3.5-last-sidecar-exited", "rule 3.5: the last sidecar exited: it alone is started again, the failed init container before it is not", func(t *testing.T) *snap {
			return sidecarsAroundFailedInit(t, func(in *inst) { in.state, in.finished, in.reason = exited, t0, containerstate.ReasonCompleted })
		}, planOf{I: []int{2}}},
		{"3.5-last-init-failed", "rule 3.5: the last init container failed and restarts: it alone is started again, a failed one before it is not", func(t *testing.T) *snap {
			pod := always(podPI())
			s := newSnap(t, pod)
			s.add("init1", exited, 0)
			s.add("init2", exited, 1)
			s.add("init3", exited, 1)
			return s
		}, planOf{I: []int{2}}},
		{"3.5-first-sidecar-exited", "rule 3.5: a sidecar before the failed init container exited: it is started again, the walk goes on past the failed one", func(t *testing.T) *snap {
			s := sidecarsAroundFailedInit(t, func(*inst) {})
			in := &s.m.find("side-a").insts[0]
			in.state, in.finished, in.reason = exited, t0, containerstate.ReasonCompleted
			return s
		}, planOf{I: []int{0}, C: []int{0, 1, 2}}},
		{"3.7-kill-under-way-keeps", "rule 3.7: a container whose kill is under way and a running one keep the pod, under Never with the third exited", func(t *testing.T) *snap {
			s := newSnap(t, never(podP3()))
			s.add("foo1", running, 0)
			s.add("foo2", running, 0).kill = killState{active: true}
			s.add("foo3", exited, 1)
			return s
		}, planOf{}},
		{"3.6-after-kill-under-way", "rule 3.6: the containers after one whose kill is under way are still decided: the exited one restarts under Always", func(t *testing.T) *snap {
			s := newSnap(t, always(podP3()))
			s.add("foo1", running, 0)
			s.add("foo2", running, 0).kill = killState{active: true}
			s.add("foo3", exited, 1)
			return s
		}, planOf{C: []int{2}}},
		{"3.3-onfailure-all-succeeded", "rule 3.3: sandbox gone, every container succeeded under OnFailure: no new sandbox", func(t *testing.T) *snap {
			s := newSnap(t, onFailure(podP3()))
			for _, n := range []string{"foo1", "foo2", "foo3"} {
				s.add(n, exited, 0)
			}
			s.m.sb.ready = false
			return s
		}, planOf{K: true, Att: 1}},
		{"3.3-own-onfailure", "rule 3.3: sandbox gone, pod Always: a container whose own policy is OnFailure and that succeeded is not started in the new sandbox", func(t *testing.T) *snap {
			pod := always(podP3())
			pod.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyOnFailure)
			s := newSnap(t, pod)
			for _, n := range []string{"foo1", "foo2", "foo3"} {
				s.add(n, exited, 0)
			}
			s.m.sb.ready = false
			return s
		}, planOf{K: true, S: true, Att: 1, C: []int{1, 2}}},
		{"3.5-last-sidecar-unknown", "rule 3.5: the last sidecar in an unknown state: it alone is started again, the failed init container before it is not", func(t *testing.T) *snap {
			return sidecarsAroundFailedInit(t, func(in *inst) { in.state = unknown })
		}, planOf{I: []int{2}, X: []string{"side-b"}, XMsgs: []string{MessageKillUnknownInitContainer}}},
		{"3.5-sidecar-unknown", "rule 3.5: a sidecar in an unknown state is killed and started again", func(t *testing.T) *snap {
			s := sidecars(t, always(podPS()), 1, 2, 3)
			s.m.find("restartable-init-2").insts[0].state = unknown
			return s
		}, planOf{I: []int{1}, C: []int{0, 1, 2}, X: []string{"restartable-init-2"}, XMsgs: []string{MessageKillUnknownInitContainer}}},
		{"3.5-init-unknown-never", "rule 3.5: an init container in an unknown state under its own Never kills the pod", func(t *testing.T) *snap {
			pod := always(podPI())
			pod.Spec.InitContainers[1].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
			s := newSnap(t, pod)
			s.add("init1", exited, 0)
			s.add("init2", unknown, 0)
			return s
		}, planOf{K: true}},
		{"3.5-init-unknown-onfailure", "rule 3.5: an init container in an unknown state under its own OnFailure is killed and started again, pod Never", func(t *testing.T) *snap {
			pod := never(podPI())
			pod.Spec.InitContainers[1].RestartPolicy = ptr(v1.ContainerRestartPolicyOnFailure)
			s := newSnap(t, pod)
			s.add("init1", exited, 0)
			s.add("init2", unknown, 0)
			return s
		}, planOf{I: []int{1}, X: []string{"init2"}, XMsgs: []string{MessageKillUnknownInitContainer}}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			got := tc.build(t).plan()
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s (%s): mismatch (-want +got):\n%s", tc.id, tc.reason, d)
			}
		})
	}
}

// sidecarsAroundFailedInit is a snapshot of a pod whose init containers
// are sidecar side-a, regular init container mid and sidecar side-b (with a
// startup probe): side-a and side-b run, side-b started, mid exited 1 (the walk of section 3.5 from the last init
// container never comes back to it once a later one ran); change is
// applied to side-b's instance.
func sidecarsAroundFailedInit(t *testing.T, change func(*inst)) *snap {
	pod := podP3()
	pod.Spec.RestartPolicy = v1.RestartPolicyAlways
	always := ptr(v1.ContainerRestartPolicyAlways)
	pod.Spec.InitContainers = []v1.Container{{Name: "side-a", Image: "bar-image", RestartPolicy: always},
		{Name: "mid", Image: "bar-image"}, {Name: "side-b", Image: "bar-image", RestartPolicy: always, StartupProbe: probe()}}
	s := newSnap(t, pod)
	s.add("side-a", running, 0)
	s.add("mid", exited, 1)
	change(s.add("side-b", running, 0))
	return s
}

// TestComputePodActionsForRestartAllContainers: cases PL30 and PL31 of
// spec/podlifecycle.md section 13 (rule 3.2).
func TestComputePodActionsForRestartAllContainers(t *testing.T) {
	rule := []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}}}}
	t.Run("PL30", func(t *testing.T) {
		p := podPS()
		p.Spec.InitContainers[2].RestartPolicyRules = rule
		s := newSnap(t, p)
		s.add("restartable-init-1", running, 0)
		s.add("restartable-init-2", running, 0)
		s.add("restartable-init-3", exited, 1)
		s.add("foo1", running, 0)
		s.m.marked = true
		want := planOf{R: []string{"foo1*", "restartable-init-1*", "restartable-init-2*", "restartable-init-3"}}
		if d := cmp.Diff(want, s.plan(), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("PL30 (rule 3.2: sources last, running killed first): mismatch (-want +got):\n%s", d)
		}
	})
	t.Run("3.2-sources", func(t *testing.T) {
		// Only an exited instance whose first matching rule is
		// RestartAllContainers is a source: not a running one whose rule
		// would match its (zero) exit code, nor an exit matching a Restart
		// rule.
		onZero := []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{0}}}}
		restartOnOne := []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}}}}
		p := podP3()
		never := ptr(v1.ContainerRestartPolicyNever)
		p.Spec.Containers[0].RestartPolicy, p.Spec.Containers[0].RestartPolicyRules = never, onZero
		p.Spec.Containers[1].RestartPolicy, p.Spec.Containers[1].RestartPolicyRules = never, restartOnOne
		p.Spec.Containers[2].RestartPolicy, p.Spec.Containers[2].RestartPolicyRules = never, onZero
		s := newSnap(t, p)
		s.add("foo1", running, 0)
		s.add("foo2", exited, 1)
		s.add("foo3", exited, 0)
		s.m.marked = true
		want := planOf{R: []string{"foo1*", "foo2", "foo3"}}
		if d := cmp.Diff(want, s.plan(), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("rule 3.2 (sources last; a running instance and a Restart rule make no source): mismatch (-want +got):\n%s", d)
		}
	})
	t.Run("PL31", func(t *testing.T) {
		p := podPS()
		p.Spec.Containers[2].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
		p.Spec.Containers[2].RestartPolicyRules = rule
		s := newSnap(t, p)
		for _, n := range []string{"restartable-init-1", "restartable-init-2", "restartable-init-3", "foo1", "foo2"} {
			s.add(n, running, 0)
		}
		s.add("foo3", exited, 1)
		s.m.marked = true
		want := planOf{R: []string{"foo1*", "foo2*", "restartable-init-1*", "restartable-init-2*", "restartable-init-3*", "foo3"}}
		if d := cmp.Diff(want, s.plan(), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("PL31 (rule 3.2): mismatch (-want +got):\n%s", d)
		}
	})
}

// TestRule3_2_RestartAllInPlace runs a RestartAllContainers rule through
// the machine: the condition marks the pod, every container is reset
// (killed with the 2 s floor, message "killing", no preStop), and the pod
// starts again from its first init container with no crash-loop back-off
// (rules 3.2, 4.4, section 12 pitfall 9).
func TestRule3_2_RestartAllInPlace(t *testing.T) {
	p := podPI()
	p.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
	p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	s := newSim(t, p, DefaultOptions())
	s.stepExitingInits(10)
	s.now = s.now.Add(time.Minute)
	s.exit("foo1", 42)
	var all []string
	for i := 0; i < 8; i++ {
		r := s.step()
		all = append(all, actionsOf(r)...)
		for _, a := range r.Actions {
			if a.Kind == RemoveContainer {
				s.emit(Observation{Kind: ContainerRemoved, Container: a.Container, ContainerID: a.ContainerID})
			}
			if a.Kind == StartContainer && a.ContainerKind == containerstate.Init {
				s.exit(a.Container, 0)
			}
		}
	}
	if testing.Verbose() {
		dump(t, s)
	}
	for _, w := range []string{"KillContainer foo2 grace=2s reason=RestartAllContainers", "RemoveContainer init1", "RemoveContainer foo1", "StartContainer init1"} {
		if !slices.Contains(all, w) {
			t.Errorf("missing %q in %v", w, all)
		}
	}
	if slices.Index(all, "RemoveContainer foo1") < slices.Index(all, "RemoveContainer init3") {
		t.Errorf("the source is removed last: %v", all)
	}
	for _, e := range s.events() {
		if strings.HasPrefix(e, "Warning BackOff") {
			t.Errorf("no crash-loop back-off after a reset: %s", e)
		}
	}
}
