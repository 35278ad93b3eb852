package podphase

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/containerstate"
)

type phaseCase struct {
	id       string // case id in spec/podphase.md section 11
	reason   string
	spec     v1.PodSpec
	statuses string
	terminal bool // podIsTerminal
	init     bool // podHasInitialized
	static   bool
	// runtimeOnly marks cases that need the runtime's podHasInitialized:
	// Phase(pod) derives a different value from the statuses.
	runtimeOnly bool
	want        v1.PodPhase
	rule        Rule
}

func runPhaseCases(t *testing.T, o Options, cases []phaseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			pod := podOf(t, tc.spec, tc.statuses)
			got, err := o.Explain(Input{Pod: pod, Terminal: tc.terminal, Initialized: ptr(tc.init), Static: tc.static})
			if err != nil {
				t.Fatalf("Explain: %v", err)
			}
			if got.Phase != tc.want {
				t.Errorf("%s: Explain phase = %s, want %s (%s)", tc.id, got.Phase, tc.want, tc.reason)
			}
			if tc.rule != 0 && got.Rule != tc.rule {
				t.Errorf("%s: rule = %s, want %s", tc.id, got.Rule, tc.rule)
			}
			if !tc.terminal && !tc.static && !tc.runtimeOnly {
				if p := o.Phase(pod); p != tc.want {
					t.Errorf("%s: Phase = %s, want %s (%s)", tc.id, p, tc.want, tc.reason)
				}
			}
		})
	}
}

var (
	always    = v1.RestartPolicyAlways
	never     = v1.RestartPolicyNever
	onFailure = v1.RestartPolicyOnFailure
	ab        = []v1.Container{ctr("A"), ctr("B")}
)

func x() []v1.Container   { return []v1.Container{ctr("X")} }
func xsc() []v1.Container { return []v1.Container{sidecar("X")} }

// TestPhasePodPolicies traces spec section 11.1.
func TestPhasePodPolicies(t *testing.T) {
	runPhaseCases(t, DefaultOptions(), []phaseCase{
		{id: "P01", reason: "no statuses: both containers unknown", spec: specOf(always, nil, ab...), statuses: "", want: v1.PodPending, rule: RuleUnknownStatus},
		{id: "P02", reason: "all running", spec: specOf(always, nil, ab...), statuses: "A:R B:R", want: v1.PodRunning, rule: RuleRunning},
		{id: "P04", reason: "terminal pod, all exited 0", spec: specOf(always, nil, ab...), statuses: "A:T0 B:T0", terminal: true, want: v1.PodSucceeded, rule: RuleTerminated},
		{id: "P05", reason: "terminal pod, one failed", spec: specOf(always, nil, ab...), statuses: "A:T0 B:Tf", terminal: true, want: v1.PodFailed, rule: RuleTerminated},
		{id: "P07", reason: "a missing status keeps the pod Pending", spec: specOf(always, nil, ab...), statuses: "A:R B:—", want: v1.PodPending, rule: RuleUnknownStatus},
		{id: "P08", reason: "a waiting container keeps the pod Pending", spec: specOf(always, nil, ab...), statuses: "A:R B:W", want: v1.PodPending, rule: RuleWaiting},
		{id: "P10", reason: "init container has no status", spec: specOf(always, x(), ab...), statuses: "", want: v1.PodPending, rule: RuleInitPending},
		{id: "P11", reason: "init container running", spec: specOf(always, x(), ab...), statuses: "X:R", want: v1.PodPending, rule: RuleInitPending},
		{id: "P13", reason: "init restarting after exit 0 is not pending; containers unknown", spec: specOf(always, x(), ab...), statuses: "X:WL0", want: v1.PodPending, rule: RuleUnknownStatus},
		{id: "P14", reason: "init failure under Always will restart", spec: specOf(always, x(), ab...), statuses: "X:WLf", want: v1.PodPending, rule: RuleUnknownStatus},
		{id: "P16", reason: "init done, containers running", spec: specOf(always, x(), ab...), statuses: "X:T0 A:R B:R", want: v1.PodRunning, rule: RuleRunning},
		{id: "P17", reason: "no statuses under Never", spec: specOf(never, nil, ab...), statuses: "", want: v1.PodPending},
		{id: "P19", reason: "all exited 0 under Never", spec: specOf(never, nil, ab...), statuses: "A:T0 B:T0", want: v1.PodSucceeded, rule: RuleSucceeded},
		{id: "P20", reason: "all failed under Never", spec: specOf(never, nil, ab...), statuses: "A:Tf B:Tf", want: v1.PodFailed, rule: RuleFailed},
		{id: "P22", reason: "missing status under Never", spec: specOf(never, nil, ab...), statuses: "A:R B:—", want: v1.PodPending},
		{id: "P23", reason: "waiting container under Never", spec: specOf(never, nil, ab...), statuses: "A:R B:W", want: v1.PodPending},
		{id: "P25", reason: "init running under Never", spec: specOf(never, x(), ab...), statuses: "X:R", want: v1.PodPending, rule: RuleInitPending},
		{id: "P26", reason: "init failed under Never fails the pod", spec: specOf(never, x(), ab...), statuses: "X:Tf", want: v1.PodFailed, rule: RuleInitFailed},
		{id: "P28", reason: "init failed (waiting with last failure) under Never", spec: specOf(never, x(), ab...), statuses: "X:WLf", want: v1.PodFailed, rule: RuleInitFailed},
		{id: "P29", reason: "init waiting under Never", spec: specOf(never, x(), ab...), statuses: "X:W", want: v1.PodPending, rule: RuleInitPending},
		{id: "P31", reason: "no statuses under OnFailure", spec: specOf(onFailure, nil, ab...), statuses: "", want: v1.PodPending},
		{id: "P32", reason: "all running under OnFailure", spec: specOf(onFailure, nil, ab...), statuses: "A:R B:R", want: v1.PodRunning},
		{id: "P34", reason: "failed containers will restart under OnFailure", spec: specOf(onFailure, nil, ab...), statuses: "A:Tf B:Tf", want: v1.PodRunning, rule: RuleRestarting},
		{id: "P35", reason: "one running, one succeeded", spec: specOf(onFailure, nil, ab...), statuses: "A:R B:T0", want: v1.PodRunning, rule: RuleRunning},
		{id: "P37", reason: "one waiting", spec: specOf(onFailure, nil, ab...), statuses: "A:R B:W", want: v1.PodPending, rule: RuleWaiting},
		{id: "P38", reason: "waiting with last exit 0 counts as stopped, not waiting", spec: specOf(onFailure, nil, ab...), statuses: "A:R B:WL0", want: v1.PodRunning, rule: RuleRunning},
	})
}

// TestPhaseSidecars traces spec section 11.2.
func TestPhaseSidecars(t *testing.T) {
	xy := []v1.Container{ctr("X"), sidecar("Y")}
	runPhaseCases(t, DefaultOptions(), []phaseCase{
		{id: "S01", reason: "no statuses", spec: specOf(always, xsc(), ab...), statuses: "", want: v1.PodPending},
		{id: "S02", reason: "sidecar running, not started", spec: specOf(always, xsc(), ab...), statuses: "X:R", want: v1.PodPending},
		{id: "S04", reason: "sidecar restarting after exit 0 is ignored; containers unknown", spec: specOf(always, xsc(), ab...), statuses: "X:WL0", want: v1.PodPending, rule: RuleUnknownStatus},
		{id: "S05", reason: "crash-looping sidecar ignored; containers unknown", spec: specOf(always, xsc(), ab...), statuses: "X:WLf", want: v1.PodPending, rule: RuleUnknownStatus},
		{id: "S07", reason: "B is missing, so unknown > 0", spec: specOf(always, xsc(), ab...), statuses: "X:S A:R B:—", init: true, want: v1.PodPending, rule: RuleUnknownStatus},
		{id: "S08", reason: "sidecar started, all running", spec: specOf(always, xsc(), ab...), statuses: "X:S A:R B:R", init: true, want: v1.PodRunning, rule: RuleRunning},
		{id: "S10", reason: "terminated sidecar ignored", spec: specOf(always, xsc(), ab...), statuses: "X:Tst A:R B:R", init: true, want: v1.PodRunning},
		{id: "S11", reason: "restarting sidecar ignored", spec: specOf(always, xsc(), ab...), statuses: "X:WL0 A:R B:R", init: true, want: v1.PodRunning},
		{id: "S13", reason: "terminal pod, all exited 0", spec: specOf(always, xsc(), ab...), statuses: "X:T0 A:T0 B:T0", terminal: true, init: true, want: v1.PodSucceeded, rule: RuleTerminated},
		{id: "S14", reason: "re-initializing after the sandbox was recreated: sidecar not started, no regular container active", spec: specOf(always, xsc(), ab...), statuses: "X:R A:R B:R", init: false, runtimeOnly: true, want: v1.PodPending, rule: RuleSidecarPending},
		{id: "S16", reason: "regular init still running", spec: specOf(always, xy, ctr("A")), statuses: "X:R Y:R A:Tst", want: v1.PodPending, rule: RuleInitPending},
		{id: "S17", reason: "sandbox recreated: sidecar Y not started", spec: specOf(always, xy, ctr("A")), statuses: "X:T0 Y:R A:Tst", runtimeOnly: true, want: v1.PodPending, rule: RuleSidecarPending},
		{id: "S19", reason: "initialized, sidecar and container running", spec: specOf(always, xy, ctr("A")), statuses: "X:T0 Y:R A:R", init: true, want: v1.PodRunning},
		{id: "3.2/pass-1-after-sidecar", reason: "pass 1 counts a regular init container declared after a sidecar: it is still running", spec: specOf(always, []v1.Container{sidecar("Y"), ctr("X")}, ctr("A")), statuses: "Y:S X:R", want: v1.PodPending, rule: RuleInitPending},
		{id: "S20", reason: "no statuses under Never", spec: specOf(never, xsc(), ab...), statuses: "", want: v1.PodPending},
		{id: "S22", reason: "terminated sidecar ignored; containers unknown", spec: specOf(never, xsc(), ab...), statuses: "X:Tst", want: v1.PodPending},
		{id: "S23", reason: "restarting sidecar ignored; containers unknown", spec: specOf(never, xsc(), ab...), statuses: "X:WL0", want: v1.PodPending},
		{id: "S25", reason: "waiting sidecar", spec: specOf(never, xsc(), ab...), statuses: "X:W", want: v1.PodPending},
		{id: "S26", reason: "B missing", spec: specOf(never, xsc(), ab...), statuses: "X:S A:R B:—", init: true, want: v1.PodPending},
		{id: "S28", reason: "a running sidecar keeps a pod whose containers completed Running", spec: specOf(never, xsc(), ab...), statuses: "X:R A:T0 B:T0", init: true, want: v1.PodRunning, rule: RuleRunning},
		{id: "S29", reason: "sidecar exited, containers succeeded", spec: specOf(never, xsc(), ab...), statuses: "X:T0 A:T0 B:T0", init: true, want: v1.PodSucceeded, rule: RuleSucceeded},
		{id: "S31", reason: "restarting sidecar ignored", spec: specOf(never, xsc(), ab...), statuses: "X:WL0 A:T0 B:T0", init: true, want: v1.PodSucceeded},
		{id: "S32", reason: "a failing sidecar never fails the pod", spec: specOf(never, xsc(), ab...), statuses: "X:WLf A:T0 B:T0", init: true, want: v1.PodSucceeded},
	})
}

// TestPhaseContainerPolicy traces spec section 11.3 and the consequences of
// section 3.4.
func TestPhaseContainerPolicy(t *testing.T) {
	cNever := withPolicy(ctr("c"), v1.ContainerRestartPolicyNever)
	cOnFailure := withPolicy(ctr("c"), v1.ContainerRestartPolicyOnFailure)
	runPhaseCases(t, DefaultOptions(), []phaseCase{
		{id: "C01", reason: "container Never overrides pod Always", spec: specOf(always, nil, cNever), statuses: "c:Tf", init: true, want: v1.PodFailed, rule: RuleFailed},
		{id: "C02", reason: "container OnFailure restarts the failure", spec: specOf(always, nil, cOnFailure), statuses: "c:Tf", init: true, want: v1.PodRunning, rule: RuleRestarting},
		{id: "C04", reason: "A (Always) will restart under pod Never", spec: specOf(never, nil, withPolicy(ctr("A"), v1.ContainerRestartPolicyAlways), ctr("B")), statuses: "A:T0 B:Tf", init: true, want: v1.PodRunning, rule: RuleRestarting},
		{id: "C05", reason: "A (Never) failed, B (OnFailure) succeeded: nothing restarts", spec: specOf(always, nil, withPolicy(ctr("A"), v1.ContainerRestartPolicyNever), withPolicy(ctr("B"), v1.ContainerRestartPolicyOnFailure)), statuses: "A:Tf B:T0", init: true, want: v1.PodFailed, rule: RuleFailed},
		{id: "C07", reason: "init container with its own Never fails the pod under pod Always", spec: specOf(always, []v1.Container{withPolicy(ctr("i"), v1.ContainerRestartPolicyNever)}, ctr("c")), statuses: "i:Tf c:—", init: true, want: v1.PodFailed, rule: RuleInitFailed},
		{id: "C08", reason: "init container with OnFailure will restart under pod Never", spec: specOf(never, []v1.Container{withPolicy(ctr("i"), v1.ContainerRestartPolicyOnFailure)}, ctr("c")), statuses: "i:Tf", init: true, want: v1.PodPending},
		{id: "3.4/WL0-OnFailure", reason: "gate on: waiting after exit 0 under OnFailure is neither restartable nor succeeded, so Failed", spec: specOf(onFailure, nil, ab...), statuses: "A:WL0 B:WL0", init: true, want: v1.PodFailed, rule: RuleFailed},
		{id: "3.4/pod-never-container-always", reason: "pod Never plus a failed container with Always gives Running", spec: specOf(never, nil, withPolicy(ctr("A"), v1.ContainerRestartPolicyAlways)), statuses: "A:Tf", init: true, want: v1.PodRunning},
		{id: "3.4/static-terminal", reason: "static pods skip step 5.1, so restart policy still counts", spec: specOf(always, nil, ab...), statuses: "A:T0 B:T0", terminal: true, static: true, init: true, want: v1.PodRunning, rule: RuleRestarting},
		{id: "3.4/terminal-ignores-policy", reason: "step 5.1: terminal pod under OnFailure with a failure is Failed", spec: specOf(onFailure, nil, ab...), statuses: "A:Tf B:T0", terminal: true, init: true, want: v1.PodFailed, rule: RuleTerminated},
		{id: "3.3/6-empty", reason: "no containers at all: neither running nor stopped", spec: specOf(always, nil), statuses: "", want: v1.PodPending, rule: RuleNotStarted},
		{id: "3.2/no-state", reason: "a status with no state set is unknown", spec: specOf(always, nil, ab...), statuses: "A:R B:none", want: v1.PodPending, rule: RuleUnknownStatus},
		{id: "3.2/sidecar-no-state", reason: "a sidecar with no state is pending and unknown", spec: specOf(always, xsc(), ab...), statuses: "X:none A:R B:R", init: true, want: v1.PodPending, rule: RuleUnknownStatus},
		{id: "3.2/init-no-state", reason: "a regular init container with no state is pending", spec: specOf(always, x(), ab...), statuses: "X:none", want: v1.PodPending, rule: RuleInitPending},
	})
}

// TestPhaseGatesOff traces the gate-off branches of spec section 3.3.
func TestPhaseGatesOff(t *testing.T) {
	off := Options{}
	runPhaseCases(t, off, []phaseCase{
		{id: "3.3/1-off-never", reason: "gate off: init failure under pod Never", spec: specOf(never, x(), ab...), statuses: "X:Tf", want: v1.PodFailed, rule: RuleInitFailed},
		{id: "3.3/1-off-always", reason: "gate off: init failure under pod Always restarts, even with container Never", spec: specOf(always, []v1.Container{withPolicy(ctr("X"), v1.ContainerRestartPolicyNever)}, ab...), statuses: "X:Tf", want: v1.PodPending},
		{id: "3.3/5.3-always", reason: "gate off: pod Always, all stopped: Running", spec: specOf(always, nil, ab...), statuses: "A:T0 B:T0", want: v1.PodRunning, rule: RuleRestarting},
		{id: "3.3/5.3-succeeded", reason: "gate off: OnFailure, all exited 0", spec: specOf(onFailure, nil, ab...), statuses: "A:T0 B:T0", want: v1.PodSucceeded, rule: RuleSucceeded},
		{id: "3.3/5.3-never", reason: "gate off: Never with a failure", spec: specOf(never, nil, ab...), statuses: "A:T0 B:Tf", want: v1.PodFailed, rule: RuleFailed},
		{id: "3.3/5.3-onfailure", reason: "gate off: OnFailure with a failure keeps Running", spec: specOf(onFailure, nil, ab...), statuses: "A:T0 B:Tf", want: v1.PodRunning, rule: RuleRestarting},
		{id: "3.4/WL0-OnFailure-off", reason: "gate off: the legacy Running for waiting after exit 0 under OnFailure", spec: specOf(onFailure, nil, ab...), statuses: "A:WL0 B:WL0", want: v1.PodRunning, rule: RuleRestarting},
		{id: "3.3/5.3-container-policy-ignored", reason: "gate off: container Never is ignored, pod Always restarts", spec: specOf(always, nil, withPolicy(ctr("c"), v1.ContainerRestartPolicyNever)), statuses: "c:Tf", want: v1.PodRunning},
	})
}

// TestPhaseRestartAllContainers traces spec section 11.4.
func TestPhaseRestartAllContainers(t *testing.T) {
	rc := withRule(withPolicy(ctr("rc"), v1.ContainerRestartPolicyNever), v1.ContainerRestartRuleActionRestartAllContainers, 42)
	rsc := withRule(sidecar("rsc"), v1.ContainerRestartRuleActionRestartAllContainers, 42)
	cases := []phaseCase{
		{id: "R01", reason: "exit 42 matches RestartAllContainers: restartable", spec: specOf(never, nil, rc), statuses: "rc:T42", want: v1.PodRunning, rule: RuleRestarting},
		{id: "R02", reason: "init container restarting all: Pending", spec: specOf(never, []v1.Container{rc}), statuses: "rc:T42", want: v1.PodPending, rule: RuleNotStarted},
		{id: "R04", reason: "RestartingAllContainers reason is restartable", spec: specOf(never, nil, rc), statuses: "rc:WRA", want: v1.PodRunning},
		{id: "R05", reason: "init container RestartingAllContainers: Pending", spec: specOf(never, []v1.Container{rc}), statuses: "rc:WRA", want: v1.PodPending},
		{id: "R07", reason: "init done, container restarting all", spec: specOf(never, []v1.Container{ctr("init")}, rc), statuses: "init:T0 rc:WRA", want: v1.PodRunning},
		{id: "R08", reason: "a plain init failure under Never", spec: specOf(never, []v1.Container{ctr("init")}, rc), statuses: "init:Tf rc:WRA", want: v1.PodFailed, rule: RuleInitFailed},
		{id: "R10", reason: "sidecar restarting is ignored; regular restarting all", spec: specOf(never, []v1.Container{rsc}, ctr("regular")), statuses: "rsc:WRA regular:WRA", want: v1.PodRunning},
		{id: "R11", reason: "sidecar running; regular restarting all", spec: specOf(never, []v1.Container{rsc}, ctr("regular")), statuses: "rsc:R regular:WRA", want: v1.PodRunning},
	}
	for i := range cases {
		cases[i].init = true
	}
	runPhaseCases(t, DefaultOptions(), cases)

	// Section 11.4 preamble: with RestartAllContainersOnContainerExits off,
	// the rule falls through to the container policy.
	noRestartAll := Options{Features: containerstate.DefaultFeatures()}
	noRestartAll.Features.RestartAllContainersOnContainerExits = false
	runPhaseCases(t, noRestartAll, []phaseCase{
		{id: "R01-gate-off", reason: "gate off: the rule falls through to Never", spec: specOf(never, nil, rc), statuses: "rc:T42", init: true, want: v1.PodFailed},
		{id: "R02-gate-off", reason: "gate off: the init failure is final", spec: specOf(never, []v1.Container{rc}), statuses: "rc:T42", init: true, want: v1.PodFailed},
	})
}

func TestPhaseNilPod(t *testing.T) {
	if got := Phase(nil); got != v1.PodPending {
		t.Errorf("Phase(nil) = %s, want Pending (documented result)", got)
	}
}

// TestPhaseStatusOrder checks that the order-hint lookup finds statuses in
// any order (spec section 2: lookup is by name).
func TestPhaseStatusOrder(t *testing.T) {
	tests := []struct {
		reason   string
		spec     v1.PodSpec
		statuses string // in list order
		want     v1.PodPhase
	}{
		{reason: "statuses in neither spec nor name order", spec: specOf(never, xsc(), ab...), statuses: "X:T0 B:T0 A:Tf", want: v1.PodFailed},
		{reason: "statuses in the kubelet's name order (spec/containerstate.md section 4.5) for containers declared C, A, B",
			spec: specOf(never, nil, ctr("C"), ctr("A"), ctr("B")), statuses: "A:R B:R C:R", want: v1.PodRunning},
		{reason: "statuses in no order, the last declared container without a status yet",
			spec: specOf(never, nil, ctr("A"), ctr("C"), ctr("B"), ctr("D")), statuses: "B:R A:R C:R", want: v1.PodPending},
		{reason: "name order, C declared first and without a status yet", spec: specOf(never, nil, ctr("C"), ctr("A"), ctr("B")), statuses: "A:R B:R", want: v1.PodPending},
	}
	for _, tc := range tests {
		if got := Phase(podOf(t, tc.spec, tc.statuses)); got != tc.want {
			t.Errorf("%s: Phase = %s, want %s", tc.reason, got, tc.want)
		}
	}
}

// TestStatusIndex checks the lookup in every order it handles: spec order,
// sorted by name, reversed, with repeated names and with gaps.
func TestStatusIndex(t *testing.T) {
	list := func(names ...string) []v1.ContainerStatus {
		var out []v1.ContainerStatus
		for i, n := range names {
			out = append(out, v1.ContainerStatus{Name: n, RestartCount: int32(i)})
		}
		return out
	}
	tests := []struct {
		reason string
		list   []v1.ContainerStatus
		name   string
		hint   int
		want   int32 // RestartCount of the entry found, -1 for none
	}{
		{reason: "spec order hit", list: list("a", "b", "c"), name: "b", hint: 1, want: 1},
		{reason: "sorted, hint misses", list: list("a", "b", "c"), name: "c", hint: 0, want: 2},
		{reason: "sorted, missing name", list: list("a", "c"), name: "b", hint: 1, want: -1},
		{reason: "sorted, repeated name, hint misses: binary search finds the first", list: list("a", "b", "b", "c"), name: "b", hint: 3, want: 1},
		{reason: "unsorted, linear scan", list: list("c", "a", "b"), name: "b", hint: 0, want: 2},
		{reason: "unsorted, missing name", list: list("c", "a"), name: "b", hint: 5, want: -1},
		{reason: "empty", list: nil, name: "a", hint: 0, want: -1},
	}
	for _, tc := range tests {
		x := newStatusIndex(tc.list)
		got := x.find(tc.name, tc.hint)
		switch {
		case tc.want < 0 && got != nil:
			t.Errorf("%s: found %+v, want none", tc.reason, got)
		case tc.want >= 0 && (got == nil || got.RestartCount != tc.want):
			t.Errorf("%s: found %+v, want entry %d", tc.reason, got, tc.want)
		}
	}
	// The cursor: statuses shifted by one from the spec order.
	x := newStatusIndex(list("z", "a", "y"))
	if st := x.find("a", 0); st == nil || st.RestartCount != 1 {
		t.Fatalf("shifted: %+v", st)
	}
	if st := x.find("y", 1); st == nil || st.RestartCount != 2 {
		t.Fatalf("cursor: %+v", st)
	}
}
