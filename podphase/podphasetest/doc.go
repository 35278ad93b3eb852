// Package podphasetest helps test code that computes or writes pod
// statuses, with the tools podphase's own tests use.
//
// Generators (pgregory.net/rapid):
//   - [Pod]: pods a kubelet of Kubernetes 1.37 could report, with a spec
//     (restart policies, sidecars, restart rules, readiness gates) and
//     container statuses, phase and conditions consistent with it;
//   - [PodAt]: the same for one [Stage] of a pod's life;
//   - [Spec]: pod specs alone.
//
// Invariant checks, each returning nil or an error that says what broke:
//   - [CheckPhase]: the phase is one the kubelet writes;
//   - [CheckConditions]: Ready=True implies ContainersReady=True and every
//     readiness gate True; no duplicate condition types; no readiness on a
//     terminal pod;
//   - [CheckUpdate]: a status update keeps a terminal phase, never lowers a
//     restart count and keeps the lastTransitionTime of unchanged
//     conditions;
//   - [CheckExplanation]: an explanation names only containers of the pod;
//   - [CheckDisplay]: the kubectl STATUS of a pod with a phase is not empty.
//
// A downstream project calls the checks on its own status updates:
//
//	rapid.Check(t, func(t *rapid.T) {
//		pod := podphasetest.Pod().Draw(t, "pod")
//		next := myAgent.Status(pod)
//		if err := podphasetest.CheckUpdate(&pod.Status, next); err != nil {
//			t.Fatal(err)
//		}
//	})
package podphasetest
