// Package containerstatetest helps property-test code that moves Kubernetes
// containers through their states, with pgregory.net/rapid.
//
// It offers:
//
//   - [PodSpec] and [Target]: generators of pod specs with init containers,
//     sidecars and regular containers, every pod and container restart
//     policy, restart rules (In and NotIn, Restart and RestartAllContainers)
//     and probes, and of one container of such a pod to follow;
//   - [Events]: a generator of the event sequences a real runtime and kubelet
//     can report for that container: image pulls that fail and back off,
//     creation and start failures, runs that exit with any exit code or are
//     OOM-killed, crash-loop back-off, restarts only where the restart policy
//     allows them, probe results, UNKNOWN spells, removals, relisted
//     duplicates and pod deletion;
//   - [Checker]: the invariants a container status must keep from one step to
//     the next, for a downstream test to call after every step of its own
//     machine.
//
// A typical property:
//
//	rapid.Check(t, func(t *rapid.T) {
//		target := containerstatetest.Target().Draw(t, "target")
//		events := containerstatetest.Events(target).Draw(t, "events")
//		m, _ := containerstate.NewMachine(containerstate.DefaultOptions(), target.Pod, target.Name)
//		check := containerstatetest.NewChecker(target, containerstate.DefaultFeatures())
//		for _, ev := range events {
//			if err := m.Step(ev); err != nil {
//				t.Fatal(err)
//			}
//			if err := check.Step(ev, m.Status()); err != nil {
//				t.Fatal(err)
//			}
//		}
//	})
package containerstatetest
