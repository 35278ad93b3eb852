// Package simulation is a deterministic simulator of node health built on
// nodecondition: both sides of it, the kubelets and the node-lifecycle and
// taint-eviction controllers, run in virtual time over a Scenario, and the
// result is a Timeline of every condition change, taint change, pod marked
// not ready, scheduled, cancelled and performed deletion, zone change and
// kubelet eviction, printable with Table and Mermaid. It follows Kubernetes
// v1.37.2 with default settings, as nodecondition does; Scenario.Version (or
// the "version 1.34" line of scenario text) runs the kubelets and the
// controller as another minor, 1.33 to 1.37, with nodecondition's
// DefaultKubeletOptionsFor and DefaultControllerOptionsFor: before 1.34 the
// NoExecute taint, and so the deletions it starts, come one monitor pass
// later and unchanged statuses are reported every 5 minutes without jitter;
// before 1.37 there is no live Lease lookup (docs/versions.md rows NC-V1 to
// NC-V3). The named scenarios' checks against a real controller are 1.37's.
// A Version that is none of kubeversion's constants, in Scenario.Version or
// in the Kubelet or Controller options, is refused by Scenario.Validate and
// Simulate with a *ScenarioError matching both ErrInvalidInput and
// kubeversion.ErrUnsupportedVersion.
//
// A Scenario schedules, per node, kubelet outages, failing lease renewals,
// failing status reports, runtime and network failures, eviction-signal
// values and pods with tolerations; ParseScenario reads one from text.
// NamedScenarios holds the timelines of spec/nodecondition.md section 4: a
// kubelet that stops, memory pressure coming and going, a flapping network,
// a zone outage and a cluster-wide outage.
//
// # Realism
//
// The named scenarios were checked against kube-controller-manager v1.37.2:
//
//   - The controller's monitor pass starts a period after the previous one
//     ended, so its passes drift by their duration, and the pass that marks a
//     silent node Unknown is the tenth after the pass that saw the last lease
//     renewal. Where that pass falls relative to the renewal (the loop's
//     phase) is chance: Unknown came 50.96 to 54.14 s after the last renewal in
//     five measured runs. Scenario.MonitorPhase and MonitorPassDuration set
//     the loop; Scenario.WindowPhases states each entry's window across the
//     phase (Entry.Earliest, Entry.Latest), 50.1 to 54.6 s for the
//     kubelet-stops scenario. The zero values run the passes exactly 5 s
//     apart from t=0 (Unknown at 55 s, the model of the spec's table).
//   - A default API server runs the DefaultTolerationSeconds admission plugin,
//     so a pod without its own not-ready or unreachable toleration gets both
//     for 300 s; Scenario.NoDefaultTolerationSeconds turns it off.
//   - Only pods with a Ready condition are marked not ready
//     (Pod.NoReadyCondition models one that has none yet).
//
// # Differences from Kubernetes
//
//   - No informer latency; the kubelet loops run without their 0.04 jitter;
//     a monitor pass's writes carry its start time.
//   - A kubelet outage ends with a restart; the 30 s runtime-down detection
//     and the fast startup status loop are left to the scenario.
//   - Every entry is matched across the window's runs by node, kind, subject,
//     values and occurrence; an entry a run lacks leaves that run out of its
//     window.
//
// # Concurrency
//
// Simulate is a pure function of its Scenario and safe for concurrent use;
// a Timeline is plain data.
//
// # Usage
//
//	tl, err := simulation.Simulate(simulation.ScenarioKubeletStops())
//	if err != nil { // errors.Is(err, simulation.ErrInvalidInput)
//		return err
//	}
//	fmt.Print(tl.Table())
package simulation
