package nodecondition_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	nc "github.com/nodestate/nodestate/nodecondition"
)

var update = flag.Bool("update", false, "rewrite the golden timelines in testdata")

const (
	taintUnreachableNE = "node.kubernetes.io/unreachable:NoExecute"
	taintUnreachableNS = "node.kubernetes.io/unreachable:NoSchedule"
	taintNotReadyNE    = "node.kubernetes.io/not-ready:NoExecute"
)

func simulate(t *testing.T, s nc.Scenario) nc.Timeline {
	t.Helper()
	tl, err := nc.Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func at(t *testing.T, tl nc.Timeline, kind nc.EntryKind, node, subject string) time.Duration {
	t.Helper()
	e, ok := tl.Find(kind, node, subject)
	if !ok {
		t.Fatalf("no %v entry for %s %s in\n%s", kind, node, subject, tl.Table())
	}
	return e.At
}

func TestTimelineKubeletStops(t *testing.T) {
	// Spec 4.1: t=0 is the last lease renewal; the controller's passes run at
	// 0, 5, 10 s ..., so t_obs = 0 and the first pass strictly after 50 s is 55 s.
	tl := simulate(t, nc.ScenarioKubeletStops())
	tests := []struct {
		id, reason    string
		kind          nc.EntryKind
		node, subject string
		want          time.Duration
	}{
		{"4.1 Unknown", "the first pass strictly after t_obs + 50 s", nc.KindCondition, "node-1", "Ready", 55 * time.Second},
		{"4.1 pressure Unknown", "all four conditions go Unknown together", nc.KindCondition, "node-1", "MemoryPressure", 55 * time.Second},
		{"4.1 NoSchedule", "node-update handler right after the write", nc.KindTaintAdded, "node-1", taintUnreachableNS, 55 * time.Second},
		{"4.1 NoExecute", "queued in the pass that writes Unknown, tainted by the tainting pass at once", nc.KindTaintAdded, "node-1", taintUnreachableNE, 55 * time.Second},
		{"4.1 pods not ready", "MarkPodsNotReady in the same pass", nc.KindPodNotReady, "node-1", "default/default-toleration", 55 * time.Second},
		{"4.1 no toleration", "deleted at T_NE", nc.KindPodDeleted, "node-1", "default/no-toleration", 55 * time.Second},
		{"4.1 zero seconds", "tolerationSeconds 0 deletes at T_NE", nc.KindPodDeleted, "node-1", "default/zero-seconds", 55 * time.Second},
		{"4.1 default toleration", "T_NE + 300 s", nc.KindPodDeleted, "node-1", "default/default-toleration", 355 * time.Second},
	}
	for _, tt := range tests {
		if got := at(t, tl, tt.kind, tt.node, tt.subject); got != tt.want {
			t.Errorf("%s: %v %s at %v, want %v (%s)", tt.id, tt.kind, tt.subject, got, tt.want, tt.reason)
		}
	}
	if _, ok := tl.Find(nc.KindPodDeleted, "node-1", "default/daemonset"); ok {
		t.Errorf("4.1: a pod tolerating unreachable with no seconds is never deleted")
	}
	if _, ok := tl.Find(nc.KindCondition, "node-2", ""); ok {
		t.Errorf("healthy nodes keep their conditions")
	}
}

func TestTimelineKubeletReturns(t *testing.T) {
	// Spec 4.1 recovery: the kubelet comes back before the deletions fire.
	s := nc.ScenarioKubeletStops()
	s.Nodes[0].Down = []nc.Interval{{From: 0, To: 2 * time.Minute}}
	tl := simulate(t, s)
	if got := at(t, tl, nc.KindCondition, "node-1", "Ready"); got != 55*time.Second {
		t.Fatalf("Unknown at %v", got)
	}
	ready := tl.Entries[0]
	for _, e := range tl.Entries {
		if e.Kind == nc.KindCondition && e.Node == "node-1" && e.Subject == "Ready" && e.To == "True" {
			ready = e
		}
	}
	if ready.At != 2*time.Minute || ready.From != "Unknown" {
		t.Fatalf("4.1 recovery: a restarted kubelet posts Ready True at once; got %+v", ready)
	}
	for _, taint := range []string{taintUnreachableNE, taintUnreachableNS} {
		if got := at(t, tl, nc.KindTaintRemoved, "node-1", taint); got != 2*time.Minute {
			t.Errorf("4.1 recovery: %s removed at %v, want 2m (3.5: removal on recovery is immediate)", taint, got)
		}
	}
	if got := at(t, tl, nc.KindEvictionCancelled, "node-1", "default/default-toleration"); got != 2*time.Minute {
		t.Errorf("3.7: the pending deletion is cancelled when the NoExecute taints go, at %v", got)
	}
	if _, ok := tl.Find(nc.KindPodDeleted, "node-1", "default/default-toleration"); ok {
		t.Errorf("4.1 recovery: the tolerating pod must survive")
	}
}

func TestTimelineNotReady(t *testing.T) {
	// Spec 4.2: the kubelet reports Ready False at its tick; the next pass
	// taints not-ready:NoExecute; no NodeNotReady marking of pods.
	tl := simulate(t, nc.ScenarioFlappingNetwork())
	if got := at(t, tl, nc.KindCondition, "node-1", "Ready"); got != 30*time.Second {
		t.Errorf("4.2: Ready False posted at %v, want 30s", got)
	}
	if got := at(t, tl, nc.KindTaintAdded, "node-1", taintNotReadyNE); got != 30*time.Second {
		t.Errorf("4.2: not-ready:NoExecute at %v, want 30s (pass at 30 s, token available)", got)
	}
	if _, ok := tl.Find(nc.KindPodNotReady, "node-1", ""); ok {
		t.Errorf("3.4: a kubelet-posted False does not mark pods not ready")
	}
	if got := at(t, tl, nc.KindPodDeleted, "node-1", "default/no-toleration"); got != 30*time.Second {
		t.Errorf("4.2: a pod without toleration goes at once, got %v", got)
	}
	if _, ok := tl.Find(nc.KindPodDeleted, "node-1", "default/default-toleration"); ok {
		t.Errorf("4.2: each recovery within 300 s cancels the deletion")
	}
}

func TestTimelineMemoryPressure(t *testing.T) {
	// Spec 4.3: True at the first tick after the first observation; False at
	// the first pass with now - t_last >= 5 m (t_last = 110 s, the last pass
	// below the threshold), with the NoSchedule taint following.
	tl := simulate(t, nc.ScenarioMemoryPressure())
	var flips []string
	for _, e := range tl.Entries {
		if e.Node == "node-1" && (e.Kind == nc.KindCondition || e.Kind == nc.KindTaintAdded || e.Kind == nc.KindTaintRemoved) {
			flips = append(flips, nc.FormatOffset(e.At)+" "+e.Kind.String()+" "+e.Subject+" "+e.To)
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
	tl := simulate(t, nc.ScenarioZoneOutage())
	for i, node := range []string{"a-1", "a-2", "a-3"} {
		want := 55*time.Second + time.Duration(i)*10*time.Second
		if got := at(t, tl, nc.KindTaintAdded, node, taintUnreachableNE); got != want {
			t.Errorf("3.6: zone-a is FullDisruption with zone-b healthy, so the healthy rate 0.1/s applies: %s tainted at %v, want %v", node, got, want)
		}
	}
	tl = simulate(t, nc.ScenarioClusterOutage())
	if _, ok := tl.Find(nc.KindTaintAdded, "", taintUnreachableNE); ok {
		t.Errorf("3.6 master disruption mode: no NoExecute taint when every zone is FullDisruption")
	}
	if _, ok := tl.Find(nc.KindPodDeleted, "", ""); ok {
		t.Errorf("5.6: nothing is evicted when every zone is fully disrupted")
	}
}

func TestGoldenTimelines(t *testing.T) {
	for name, s := range nc.NamedScenarios() {
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
	base := nc.ScenarioKubeletStops()
	tests := []struct {
		id     string
		edit   func(*nc.Scenario)
		target error
	}{
		{"no duration", func(s *nc.Scenario) { s.Duration = 0 }, nc.ErrInvalidScenario},
		{"duplicate node", func(s *nc.Scenario) { s.Nodes[1].Name = "node-1" }, nc.ErrInvalidScenario},
		{"empty interval", func(s *nc.Scenario) { s.Nodes[0].Down = []nc.Interval{{From: time.Minute, To: time.Second}} }, nc.ErrInvalidScenario},
		{"grace shorter than renew", func(s *nc.Scenario) {
			s.Controller = nc.DefaultControllerConfig()
			s.Controller.GracePeriod = 5 * time.Second
		}, nc.ErrInvalidConfig},
		{"negative period", func(s *nc.Scenario) {
			s.Kubelet = nc.DefaultKubeletConfig()
			s.Kubelet.StatusReportFrequency = -time.Minute
		}, nc.ErrInvalidConfig},
	}
	for _, tt := range tests {
		s := base
		s.Nodes = append([]nc.SimNode(nil), base.Nodes...)
		tt.edit(&s)
		if _, err := nc.Simulate(s); !errors.Is(err, tt.target) {
			t.Errorf("%s: err = %v, want %v", tt.id, err, tt.target)
		}
	}
}

func TestTimelineLeaseOrStatusAlone(t *testing.T) {
	// Spec cases 10 and 11: either heartbeat keeps the node healthy.
	s := nc.Scenario{Duration: 10 * time.Minute, Nodes: []nc.SimNode{
		{Name: "status-only", StatusDown: []nc.Interval{{From: 0}}},
		{Name: "ok"},
	}}
	tl := simulate(t, s)
	if e, ok := tl.Find(nc.KindCondition, "status-only", ""); ok {
		t.Errorf("case 10: the lease alone keeps the node healthy, got %v", e)
	}
	// With the lease failing, only status PATCHes count, and an unchanged
	// status is sent every 5 m: the node goes Unknown after 50 s, the kubelet
	// sees the controller's Unknown as a change and posts Ready True at its
	// next tick, and the node flaps. After each status heartbeat the saved
	// lease is dropped, so the old lease counts once more (3.2 quirk): the
	// second Unknown comes 60 s after the heartbeat at 1m0s, not 55 s.
	s.Nodes[0] = nc.SimNode{Name: "lease-down", LeaseDown: []nc.Interval{{From: 0}}}
	tl = simulate(t, s)
	var ready []string
	for _, e := range tl.Entries {
		if e.Node == "lease-down" && e.Kind == nc.KindCondition && e.Subject == "Ready" && e.At < 3*time.Minute {
			ready = append(ready, nc.FormatOffset(e.At)+" "+e.To)
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
	s := nc.Scenario{Duration: 3 * time.Minute, Nodes: []nc.SimNode{
		{Name: "n", Down: []nc.Interval{{From: 30 * time.Second}},
			Signals: []nc.SignalStep{{At: 0, Signal: nc.SignalMemoryAvailable, Available: 10 << 20, Capacity: 16 << 30}}},
		{Name: "ok"},
	}}
	tl := simulate(t, s)
	const mp = "node.kubernetes.io/memory-pressure:NoSchedule"
	if got := at(t, tl, nc.KindTaintAdded, "n", mp); got != 0 {
		t.Errorf("4.3: the first status (t=0) carries MemoryPressure True and the taint follows at once, got %v", got)
	}
	if got := at(t, tl, nc.KindTaintRemoved, "n", mp); got != 75*time.Second {
		t.Errorf("3.5: memory-pressure:NoSchedule removed at %v, want 75s (the kubelet is down from 30 s, so the last renewal is at 20 s; Unknown at the first pass after 70 s)", got)
	}
	if got := at(t, tl, nc.KindCondition, "n", "MemoryPressure"); got != 75*time.Second {
		t.Errorf("3.3: MemoryPressure Unknown at %v", got)
	}
}

func TestScenarioTooFine(t *testing.T) {
	s := nc.ScenarioKubeletStops()
	s.Duration = 24 * time.Hour
	s.Controller = nc.DefaultControllerConfig()
	s.Controller.TaintingPeriod = time.Microsecond
	if _, err := nc.Simulate(s); !errors.Is(err, nc.ErrInvalidScenario) {
		t.Errorf("a microsecond tainting loop over a day is refused, got %v", err)
	}
}

func TestScenarioPodOnTwoNodes(t *testing.T) {
	_, err := nc.ParseScenario("node a pods=web\nnode b pods=web")
	if !errors.Is(err, nc.ErrInvalidScenario) {
		t.Errorf("a pod name used on two nodes is refused at parse time, got %v", err)
	}
}
