package simulation_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nodestate/nodestate/kubeversion"
	nc "github.com/nodestate/nodestate/nodecondition"
	sim "github.com/nodestate/nodestate/nodecondition/simulation"
)

// TestVersionNCV1Simulated is docs/versions.md row NC-V1 through the
// simulation: with spec 4.1's scenario, a 1.33 controller adds the
// unreachable NoExecute taint one monitor pass (5 s) after it marks the node
// Unknown, and so deletes the pods 5 s later; from 1.34 both come in the
// marking pass.
func TestVersionNCV1Simulated(t *testing.T) {
	for _, tc := range []struct {
		row                      string
		v                        kubeversion.Version
		noExecute, plainDeletion time.Duration
	}{
		{"NC-V1", kubeversion.V1_33, 60 * time.Second, 360 * time.Second},
		{"NC-V1", kubeversion.V1_34, 55 * time.Second, 355 * time.Second},
		{"NC-V1", kubeversion.V1_37, 55 * time.Second, 355 * time.Second},
	} {
		s := exact(sim.ScenarioKubeletStops())
		s.Version = tc.v
		tl := simulate(t, s)
		if got := at(t, tl, sim.KindCondition, "node-1", "Ready"); got != 55*time.Second {
			t.Errorf("%s %v: Unknown at %v, want 55s in every minor", tc.row, tc.v, got)
		}
		if got := at(t, tl, sim.KindTaintAdded, "node-1", taintUnreachableNE); got != tc.noExecute {
			t.Errorf("%s %v: NoExecute at %v, want %v", tc.row, tc.v, got, tc.noExecute)
		}
		if got := at(t, tl, sim.KindPodDeleted, "node-1", "default/plain"); got != tc.plainDeletion {
			t.Errorf("%s %v: default/plain deleted at %v, want %v", tc.row, tc.v, got, tc.plainDeletion)
		}
	}
}

// TestParseScenarioVersion: the version directive sets the minor of the
// default options, also after a grace line, and an unsupported one is
// refused with an error matching both sentinels.
func TestParseScenarioVersion(t *testing.T) {
	for _, text := range []string{"version 1.36\nnode n", "grace 40s\nversion v1.36.3\nnode n"} {
		sc, err := sim.ParseScenario(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if sc.Version != kubeversion.V1_36 {
			t.Errorf("%q: Version %v", text, sc.Version)
		}
		if sc.Controller != (nc.ControllerOptions{}) && (sc.Controller.Version != kubeversion.V1_36 || sc.Controller.LeaseCircuitBreaker) {
			t.Errorf("%q: controller options %+v are not 1.36's", text, sc.Controller)
		}
	}
	_, err := sim.ParseScenario("node n\nversion 1.32")
	want := `simulation: invalid scenario: line 2: unsupported Kubernetes version "1.32": supported are 1.33 to 1.37`
	if err == nil || err.Error() != want || !errors.Is(err, sim.ErrInvalidInput) || !errors.Is(err, kubeversion.ErrUnsupportedVersion) {
		t.Errorf("version 1.32: err = %v, want %q matching both sentinels", err, want)
	}
}

// TestInvalidVersionRefused: Scenario.Validate and Simulate refuse a
// Version that is none of kubeversion's constants, in the scenario or in
// its options, with a *ScenarioError matching ErrInvalidInput and
// kubeversion.ErrUnsupportedVersion.
func TestInvalidVersionRefused(t *testing.T) {
	const bad = kubeversion.Version(99)
	withVersion := sim.ScenarioKubeletStops()
	withVersion.Version = bad
	bothSet := sim.ScenarioKubeletStops()
	bothSet.Version = bad
	bothSet.Kubelet, bothSet.Controller = nc.DefaultKubeletOptions(), nc.DefaultControllerOptions()
	kubelet := sim.ScenarioKubeletStops()
	kubelet.Kubelet = nc.DefaultKubeletOptionsFor(bad)
	ctrl := sim.ScenarioKubeletStops()
	ctrl.Controller = nc.DefaultControllerOptionsFor(bad)
	tests := []struct {
		name string
		s    sim.Scenario
	}{
		{"invalid Version refused (Scenario.Version, options left zero)", withVersion},
		{"invalid Version refused (Scenario.Version, both options set)", bothSet},
		{"invalid Version refused (Kubelet.Version)", kubelet},
		{"invalid Version refused (Controller.Version)", ctrl},
	}
	for _, tt := range tests {
		for call, err := range map[string]error{"Validate": tt.s.Validate(), "Simulate": func() error { _, err := sim.Simulate(tt.s); return err }()} {
			var se *sim.ScenarioError
			var ve *kubeversion.ValueError
			if !errors.Is(err, sim.ErrInvalidInput) || !errors.Is(err, kubeversion.ErrUnsupportedVersion) ||
				!errors.As(err, &se) || !errors.As(err, &ve) || ve.Version != bad {
				t.Errorf("%s: %s: err = %v; want a *ScenarioError matching ErrInvalidInput and ErrUnsupportedVersion", call, tt.name, err)
			}
		}
	}
	want := "simulation: invalid scenario: Version: unsupported Kubernetes version kubeversion.Version(99): supported are 1.33 to 1.37"
	if err := withVersion.Validate(); err == nil || err.Error() != want {
		t.Errorf("error text %v; want %s", err, want)
	}
}
