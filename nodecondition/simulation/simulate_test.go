package simulation_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	nc "github.com/nodestate/nodestate/nodecondition"
	sim "github.com/nodestate/nodestate/nodecondition/simulation"
)

var update = flag.Bool("update", false, "rewrite the golden timelines in testdata")

const (
	taintUnreachableNE = "node.kubernetes.io/unreachable:NoExecute"
	taintUnreachableNS = "node.kubernetes.io/unreachable:NoSchedule"
	taintNotReadyNE    = "node.kubernetes.io/not-ready:NoExecute"
)

func simulate(t *testing.T, s sim.Scenario) sim.Timeline {
	t.Helper()
	tl, err := sim.Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func at(t *testing.T, tl sim.Timeline, kind sim.EntryKind, node, subject string) time.Duration {
	t.Helper()
	e, ok := tl.Find(kind, node, subject)
	if !ok {
		t.Fatalf("no %v entry for %s %s in\n%s", kind, node, subject, tl.Table())
	}
	return e.At
}

// exact is a named scenario run with the monitor passes exactly a period
// apart from t=0 and no window: the model of spec 4.1's table.
func exact(s sim.Scenario) sim.Scenario {
	s.MonitorPassDuration, s.WindowPhases = 0, 0
	return s
}

func TestTimelineKubeletStops(t *testing.T) {
	// Spec 4.1 with passes exactly 5 s apart from t=0: t=0 is the last lease
	// renewal, t_obs = 0 and the first pass strictly after 50 s is 55 s.
	tl := simulate(t, exact(sim.ScenarioKubeletStops()))
	tests := []struct {
		id, reason    string
		kind          sim.EntryKind
		node, subject string
		want          time.Duration
	}{
		{"4.1 Unknown", "the first pass strictly after t_obs + 50 s", sim.KindCondition, "node-1", "Ready", 55 * time.Second},
		{"4.1 pressure Unknown", "all four conditions go Unknown together", sim.KindCondition, "node-1", "MemoryPressure", 55 * time.Second},
		{"4.1 NoSchedule", "node-update handler right after the write", sim.KindTaintAdded, "node-1", taintUnreachableNS, 55 * time.Second},
		{"4.1 NoExecute", "queued in the pass that writes Unknown, tainted by the tainting pass at once", sim.KindTaintAdded, "node-1", taintUnreachableNE, 55 * time.Second},
		{"4.1 pods not ready", "3.4 MarkPodsNotReady in the same pass", sim.KindPodNotReady, "node-1", "default/plain", 55 * time.Second},
		{"4.1 no toleration that applies", "a toleration the admission plugin counts but which does not match: deleted at T_NE", sim.KindPodDeleted, "node-1", "default/wrong-value", 55 * time.Second},
		{"4.1 zero seconds", "tolerationSeconds 0 deletes at T_NE", sim.KindPodDeleted, "node-1", "default/zero-seconds", 55 * time.Second},
		{"4.1 default toleration", "3.8: no toleration of its own, so the plugin's 300 s: T_NE + 300 s", sim.KindPodDeleted, "node-1", "default/plain", 355 * time.Second},
	}
	for _, tt := range tests {
		if got := at(t, tl, tt.kind, tt.node, tt.subject); got != tt.want {
			t.Errorf("%s: %v %s at %v, want %v (%s)", tt.id, tt.kind, tt.subject, got, tt.want, tt.reason)
		}
	}
	if _, ok := tl.Find(sim.KindPodDeleted, "node-1", "default/daemonset"); ok {
		t.Errorf("4.1: a pod tolerating unreachable with no seconds is never deleted")
	}
	if _, ok := tl.Find(sim.KindPodNotReady, "node-1", "default/pending"); ok {
		t.Errorf("3.4: a pod with no Ready condition is not marked not ready")
	}
	if _, ok := tl.Find(sim.KindCondition, "node-2", ""); ok {
		t.Errorf("healthy nodes keep their conditions")
	}
}

func TestMonitorPhaseAndWindow(t *testing.T) {
	// Measured on kube-controller-manager v1.37.2 (five runs): Unknown came
	// 50.96 to 54.14 s after the last lease renewal, because a real pass
	// starts a period after the previous one ended, so the pass that marks
	// the node is the tenth after the one that saw the renewal.
	base := sim.ScenarioKubeletStops()
	tests := []struct {
		id, reason  string
		phase, pass time.Duration
		window      int
		want        time.Duration
		earliest    time.Duration
		latest      time.Duration
	}{
		{"4.1 exact", "passes exactly 5 s apart from t=0: the eleventh pass, as the spec's table", 0, 0, 0, 55 * time.Second, 0, 0},
		{"4.1 phase", "first pass at 2 s, exactly 5 s apart: 2 s + 55 s", 2 * time.Second, 0, 0, 57 * time.Second, 0, 0},
		{"measured", "passes drift by 10 ms: the tenth pass after t=0, at 10 × 5.01 s", 0, 10 * time.Millisecond, 0, 50100 * time.Millisecond, 0, 0},
		{"measured phase", "first pass at 3 s with 10 ms passes: 3 s + 10 × 5.01 s", 3 * time.Second, 10 * time.Millisecond, 0, 53100 * time.Millisecond, 0, 0},
		{"measured window", "over 10 phases 0, 0.5 s, ... 4.5 s: 50.1 s to 54.6 s, inside the measured 50 to 55 s", 0, 10 * time.Millisecond, 10,
			50100 * time.Millisecond, 50100 * time.Millisecond, 54600 * time.Millisecond},
	}
	for _, tt := range tests {
		s := base
		s.MonitorPhase, s.MonitorPassDuration, s.WindowPhases = tt.phase, tt.pass, tt.window
		tl := simulate(t, s)
		e, ok := tl.Find(sim.KindCondition, "node-1", "Ready")
		if !ok || e.At != tt.want || e.Earliest != tt.earliest || e.Latest != tt.latest {
			t.Errorf("%s: Unknown %+v, want at %v in [%v, %v] (%s)", tt.id, e, tt.want, tt.earliest, tt.latest, tt.reason)
		}
		if tt.window > 0 && tl.Phases != tt.window {
			t.Errorf("%s: Phases = %d", tt.id, tl.Phases)
		}
	}
}

func TestDefaultTolerationSeconds(t *testing.T) {
	// 3.8 and case 47: on a default API server a pod with no toleration of
	// its own gets 300 s; with the plugin off it has none and goes at T_NE.
	s := exact(sim.ScenarioKubeletStops())
	if got := at(t, simulate(t, s), sim.KindPodDeleted, "node-1", "default/plain"); got != 355*time.Second {
		t.Errorf("3.8 plugin on: plain deleted at %v, want 5m55s", got)
	}
	s.NoDefaultTolerationSeconds = true
	if got := at(t, simulate(t, s), sim.KindPodDeleted, "node-1", "default/plain"); got != 55*time.Second {
		t.Errorf("3.8 plugin off: plain deleted at %v, want 55s", got)
	}
}

func TestTimelineKubeletReturns(t *testing.T) {
	// Spec 4.1 recovery: the kubelet comes back before the deletions fire.
	s := exact(sim.ScenarioKubeletStops())
	s.Nodes[0].Down = []sim.Interval{{From: 0, To: 2 * time.Minute}}
	tl := simulate(t, s)
	if got := at(t, tl, sim.KindCondition, "node-1", "Ready"); got != 55*time.Second {
		t.Fatalf("Unknown at %v", got)
	}
	ready := tl.Entries[0]
	for _, e := range tl.Entries {
		if e.Kind == sim.KindCondition && e.Node == "node-1" && e.Subject == "Ready" && e.To == "True" {
			ready = e
		}
	}
	if ready.At != 2*time.Minute || ready.From != "Unknown" {
		t.Fatalf("4.1 recovery: a restarted kubelet posts Ready True at once; got %+v", ready)
	}
	for _, taint := range []string{taintUnreachableNE, taintUnreachableNS} {
		if got := at(t, tl, sim.KindTaintRemoved, "node-1", taint); got != 2*time.Minute {
			t.Errorf("4.1 recovery: %s removed at %v, want 2m (3.5: removal on recovery is immediate)", taint, got)
		}
	}
	if got := at(t, tl, sim.KindEvictionCancelled, "node-1", "default/plain"); got != 2*time.Minute {
		t.Errorf("3.7: the pending deletion is cancelled when the NoExecute taints go, at %v", got)
	}
	if _, ok := tl.Find(sim.KindPodDeleted, "node-1", "default/plain"); ok {
		t.Errorf("4.1 recovery: the tolerating pod must survive")
	}
}

func TestTimelineNotReady(t *testing.T) {
	// Spec 4.2: the kubelet reports Ready False at its tick; the next pass
	// taints not-ready:NoExecute; no NodeNotReady marking of pods.
	tl := simulate(t, exact(sim.ScenarioFlappingNetwork()))
	if got := at(t, tl, sim.KindCondition, "node-1", "Ready"); got != 30*time.Second {
		t.Errorf("4.2: Ready False posted at %v, want 30s", got)
	}
	if got := at(t, tl, sim.KindTaintAdded, "node-1", taintNotReadyNE); got != 30*time.Second {
		t.Errorf("4.2: not-ready:NoExecute at %v, want 30s (pass at 30 s, token available)", got)
	}
	if _, ok := tl.Find(sim.KindPodNotReady, "node-1", ""); ok {
		t.Errorf("3.4: a kubelet-posted False does not mark pods not ready")
	}
	if got := at(t, tl, sim.KindPodDeleted, "node-1", "default/wrong-value"); got != 30*time.Second {
		t.Errorf("4.2: a pod with no toleration that applies goes at once, got %v", got)
	}
	if _, ok := tl.Find(sim.KindPodDeleted, "node-1", "default/plain"); ok {
		t.Errorf("4.2: each recovery within 300 s cancels the deletion")
	}
}

func TestTimelineMemoryPressure(t *testing.T) {
	// Spec 4.3: True at the first tick after the first observation; False at
	// the first pass with now - t_last >= 5 m (t_last = 110 s, the last pass
	// below the threshold), with the NoSchedule taint following.
	tl := simulate(t, sim.ScenarioMemoryPressure())
	var flips []string
	for _, e := range tl.Entries {
		if e.Node == "node-1" && (e.Kind == sim.KindCondition || e.Kind == sim.KindTaintAdded || e.Kind == sim.KindTaintRemoved) {
			flips = append(flips, sim.FormatOffset(e.At)+" "+e.Kind.String()+" "+e.Subject+" "+e.To)
		}
	}
	want := []string{
		"1m0s condition MemoryPressure True",
		"1m0s taint added node.kubernetes.io/memory-pressure:NoSchedule ",
		"6m50s condition MemoryPressure False",
		"6m50s taint removed node.kubernetes.io/memory-pressure:NoSchedule ",
	}
	if diff := cmp.Diff(want, flips); diff != "" {
		t.Errorf("4.3 pressure-transition timeline mismatch (-want +got):\n%s", diff)
	}
}

func TestTimelineZones(t *testing.T) {
	tl := simulate(t, exact(sim.ScenarioZoneOutage()))
	for i, node := range []string{"a-1", "a-2", "a-3"} {
		want := 55*time.Second + time.Duration(i)*10*time.Second
		if got := at(t, tl, sim.KindTaintAdded, node, taintUnreachableNE); got != want {
			t.Errorf("3.6: zone-a is FullDisruption with zone-b healthy, so the healthy rate 0.1/s applies: %s tainted at %v, want %v", node, got, want)
		}
	}
	tl = simulate(t, sim.ScenarioClusterOutage())
	if _, ok := tl.Find(sim.KindTaintAdded, "", taintUnreachableNE); ok {
		t.Errorf("3.6 master disruption mode: no NoExecute taint when every zone is FullDisruption")
	}
	if _, ok := tl.Find(sim.KindPodDeleted, "", ""); ok {
		t.Errorf("5.6: nothing is evicted when every zone is fully disrupted")
	}
}

func TestGoldenTimelines(t *testing.T) {
	for name, s := range sim.NamedScenarios() {
		t.Run(name, func(t *testing.T) {
			tl := simulate(t, s)
			got := tl.Table() + "\n" + tl.Mermaid()
			path := filepath.Join("testdata", name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("timeline mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScenarioErrors(t *testing.T) {
	base := sim.ScenarioKubeletStops()
	tests := []struct {
		id     string
		edit   func(*sim.Scenario)
		target error
	}{
		{"no duration", func(s *sim.Scenario) { s.Duration = 0 }, sim.ErrInvalidInput},
		{"duplicate node", func(s *sim.Scenario) { s.Nodes[1].Name = "node-1" }, sim.ErrInvalidInput},
		{"empty interval", func(s *sim.Scenario) { s.Nodes[0].Down = []sim.Interval{{From: time.Minute, To: time.Second}} }, sim.ErrInvalidInput},
		{"grace shorter than renew", func(s *sim.Scenario) {
			s.Controller = nc.DefaultControllerOptions()
			s.Controller.GracePeriod = 5 * time.Second
		}, nc.ErrInvalidOptions},
		{"phase", func(s *sim.Scenario) { s.MonitorPhase = 5 * time.Second }, sim.ErrInvalidInput},
		{"pass duration", func(s *sim.Scenario) { s.MonitorPassDuration = -time.Second }, sim.ErrInvalidInput},
		{"window", func(s *sim.Scenario) { s.WindowPhases = sim.MaxWindowPhases + 1 }, sim.ErrInvalidInput},
		{"negative period", func(s *sim.Scenario) {
			s.Kubelet = nc.DefaultKubeletOptions()
			s.Kubelet.StatusReportFrequency = -time.Minute
		}, nc.ErrInvalidOptions},
	}
	for _, tt := range tests {
		s := base
		s.Nodes = append([]sim.Node(nil), base.Nodes...)
		tt.edit(&s)
		if _, err := sim.Simulate(s); !errors.Is(err, tt.target) {
			t.Errorf("%s: err = %v, want %v", tt.id, err, tt.target)
		}
	}
}

func TestTimelineLeaseOrStatusAlone(t *testing.T) {
	// Spec cases 10 and 11: either heartbeat keeps the node healthy.
	s := sim.Scenario{Duration: 10 * time.Minute, Nodes: []sim.Node{
		{Name: "status-only", StatusDown: []sim.Interval{{From: 0}}},
		{Name: "ok"},
	}}
	tl := simulate(t, s)
	if e, ok := tl.Find(sim.KindCondition, "status-only", ""); ok {
		t.Errorf("case 10: the lease alone keeps the node healthy, got %v", e)
	}
	// With the lease failing, only status PATCHes count, and an unchanged
	// status is sent every 5 m: the node goes Unknown after 50 s, the kubelet
	// sees the controller's Unknown as a change and posts Ready True at its
	// next tick, and the node flaps. After each status heartbeat the saved
	// lease is dropped, so the old lease counts once more (3.2 quirk): the
	// second Unknown comes 60 s after the heartbeat at 1m0s, not 55 s.
	s.Nodes[0] = sim.Node{Name: "lease-down", LeaseDown: []sim.Interval{{From: 0}}}
	tl = simulate(t, s)
	var ready []string
	for _, e := range tl.Entries {
		if e.Node == "lease-down" && e.Kind == sim.KindCondition && e.Subject == "Ready" && e.At < 3*time.Minute {
			ready = append(ready, sim.FormatOffset(e.At)+" "+e.To)
		}
	}
	want := []string{"55s Unknown", "1m0s True", "2m0s Unknown", "2m10s True"}
	if diff := cmp.Diff(want, ready); diff != "" {
		t.Errorf("2.2/3.2: lease down, status only on change or every 5 m: mismatch (-want +got):\n%s", diff)
	}
}

func TestTimelinePressureTaintRemovedOnUnknown(t *testing.T) {
	// Spec 4.1 and 3.5: a node under memory pressure stops; when its
	// conditions go Unknown the memory-pressure NoSchedule taint goes too.
	s := sim.Scenario{Duration: 3 * time.Minute, Nodes: []sim.Node{
		{Name: "n", Down: []sim.Interval{{From: 30 * time.Second}},
			Signals: []sim.SignalStep{{At: 0, Signal: nc.SignalMemoryAvailable, Available: 10 << 20, Capacity: 16 << 30}}},
		{Name: "ok"},
	}}
	tl := simulate(t, s)
	const mp = "node.kubernetes.io/memory-pressure:NoSchedule"
	if got := at(t, tl, sim.KindTaintAdded, "n", mp); got != 0 {
		t.Errorf("4.3: the first status (t=0) carries MemoryPressure True and the taint follows at once, got %v", got)
	}
	if got := at(t, tl, sim.KindTaintRemoved, "n", mp); got != 75*time.Second {
		t.Errorf("3.5: memory-pressure:NoSchedule removed at %v, want 75s (the kubelet is down from 30 s, so the last renewal is at 20 s; Unknown at the first pass after 70 s)", got)
	}
	if got := at(t, tl, sim.KindCondition, "n", "MemoryPressure"); got != 75*time.Second {
		t.Errorf("3.3: MemoryPressure Unknown at %v", got)
	}
}

func TestScenarioTooFine(t *testing.T) {
	s := sim.ScenarioKubeletStops()
	s.Duration = 24 * time.Hour
	s.Controller = nc.DefaultControllerOptions()
	s.Controller.TaintingPeriod = time.Microsecond
	if _, err := sim.Simulate(s); !errors.Is(err, sim.ErrInvalidInput) {
		t.Errorf("a microsecond tainting loop over a day is refused, got %v", err)
	}
}

func TestScenarioPodOnTwoNodes(t *testing.T) {
	_, err := sim.ParseScenario("node a pods=web\nnode b pods=web")
	if !errors.Is(err, sim.ErrInvalidInput) {
		t.Errorf("a pod name used on two nodes is refused at parse time, got %v", err)
	}
}

func TestScenarioErrorMessages(t *testing.T) {
	// docs/conventions.md section 3: the package is named once, also when a
	// nodecondition error is wrapped, and the line is named.
	tests := []struct {
		text, want string
	}{
		{"node n down=x", `simulation: invalid scenario: line 1: interval "x": want FROM-TO or FROM-`},
		{"\nnode n\ngrace 5s", "simulation: invalid scenario: invalid options: Controller.GracePeriod 5s: must be longer than the kubelet's lease renew interval 10s"},
		{"bogus", `simulation: invalid scenario: line 1: unknown directive "bogus"`},
		{"node n pods=a:x", `simulation: invalid scenario: line 1: pod "a:x": kind must be none, default, forever, pending or seconds`},
	}
	for _, tt := range tests {
		_, err := sim.ParseScenario(tt.text)
		if err == nil || err.Error() != tt.want || !errors.Is(err, sim.ErrInvalidInput) {
			t.Errorf("%q: err = %v, want %q", tt.text, err, tt.want)
		}
	}
	_, err := sim.ParseScenario("node n\ngrace 5s")
	if !errors.Is(err, nc.ErrInvalidOptions) {
		t.Errorf("a wrapped option error matches nc.ErrInvalidOptions too: %v", err)
	}
}

func TestParseScenarioDirectives(t *testing.T) {
	sc, err := sim.ParseScenario("phase 2s\npass-duration 10ms\nwindow 4\ndefault-tolerations off\nnode n pods=a,b:pending,c:default")
	if err != nil {
		t.Fatal(err)
	}
	if sc.MonitorPhase != 2*time.Second || sc.MonitorPassDuration != 10*time.Millisecond || sc.WindowPhases != 4 || !sc.NoDefaultTolerationSeconds {
		t.Errorf("directives not applied: %+v", sc)
	}
	pods := sc.Nodes[0].Pods
	if len(pods) != 3 || len(pods[0].Tolerations) != 0 || !pods[1].NoReadyCondition || len(pods[2].Tolerations) != 2 {
		t.Errorf("pods = %+v", pods)
	}
}
