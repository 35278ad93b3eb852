// Package nodecondition models both sides of Kubernetes node health as pure
// values: the kubelet, which computes node conditions and renews its Lease,
// and the node-lifecycle controller, which watches those heartbeats, marks
// conditions Unknown, taints the node and, through pod tolerations, has pods
// evicted. It answers "what happens, and when" deterministically, without a
// control plane.
//
// It follows Kubernetes v1.37.2 with default settings and feature gates: the
// kubelet's node-status setters, report rule (with the one-time report jitter
// of v1.33) and eviction manager; the node Lease (KEP-589); the
// node-lifecycle controller with the 50 s grace of v1.32 and the
// NodeControllerLeaseCircuitBreaker gate of v1.37 (beta, on); taint-based
// eviction by the separate taint-eviction controller (KEP-3902) and the
// DefaultTolerationSeconds admission plugin.
//
// # Kubelet side
//
// A Kubelet takes eviction-signal samples (Observe, every 10 s) and health
// inputs (Status, every 10 s) and returns the MemoryPressure, DiskPressure,
// PIDPressure and Ready conditions with the kubelet's reasons and messages,
// and whether the status is PATCHed now: on any change other than the
// heartbeat, on the first report after a (re)start, or once the report
// frequency (5 m) plus the one-time jitter drawn from an injected Rand has
// passed. Hard and soft thresholds (ParseThresholds, DefaultHardThresholds)
// drive the pressure conditions; a condition turns True at the first
// observation and False only after the 5 m pressure-transition period with no
// observation. LeaseRenewer gives the renew schedule: every 10 s (40 s × 0.25)
// and a 200 ms to 7 s doubling back-off after failures. Admit is the eviction
// manager's admission rule.
//
// # Controller side
//
// A Controller holds what the controller's informers show (UpsertNode,
// UpdateStatus, UpsertLease, UpsertPod) and its own health bookkeeping.
// Monitor is the 5 s pass: conditions to Unknown with NodeStatusUnknown or
// NodeStatusNeverUpdated after the grace period (60 s while the node has no
// Ready condition), pods to mark not ready, NoExecute decisions (immediate
// swaps and removals, rate-limited additions through per-zone queues), and
// zone states (Initial, Normal, PartialDisruption, FullDisruption) with their
// tainting rates, including the "every zone down" mode that removes every
// NoExecute taint. Taint is the 100 ms tainting pass. Status changes also
// return the NoSchedule condition taints. An Evictor is the taint-eviction
// controller: per pod, delete now, schedule at now plus the minimum
// tolerationSeconds (a pending deletion is never moved), or cancel.
// Everything returned is plain data a runner applies.
//
// # Simulation
//
// A Scenario schedules, per node, kubelet outages, failing lease renewals,
// failing status reports, runtime and network failures, eviction-signal
// values and pods with tolerations. Simulate runs both sides of it in
// virtual time and returns a Timeline of every condition change, taint
// change, pod marked not ready, scheduled, cancelled and performed deletion,
// zone change and kubelet eviction, printable with Table and Mermaid. NamedScenarios holds the
// timelines of the spec: a kubelet that stops (Unknown at 55 s, NoExecute at
// 55 s, pods without toleration deleted at 55 s and those with the default one
// at 355 s), memory pressure coming and going, a flapping network, a zone
// outage and a cluster-wide outage. ParseScenario reads scenarios from text.
//
// # Concurrency
//
// Kubelet, LeaseRenewer, Controller and Evictor are values with no
// goroutines, no clock and no I/O: every call takes the time, and a call with
// a time older than one already accepted returns ErrTimeWentBackwards and
// changes nothing. They are not safe for concurrent use; a runner owns each
// one. Slices in a Pass or a Report belong to the machine and are valid until
// its next call. The steady-state Monitor pass, Observe and Status allocate nothing.
//
// # Usage
//
//	c, _ := nodecondition.NewController(nodecondition.DefaultControllerConfig())
//	c.UpsertNode(now, node)                 // from the node informer
//	c.UpsertLease(node.Name, renewTime, rv) // from the lease informer
//	pass, _ := c.Monitor(now, nil)          // every 5 s
//	for _, w := range pass.Writes { /* UpdateStatus */ }
//	for _, p := range pass.PodsNotReady { /* set Ready=False */ }
//	pass, _ = c.Taint(now)                  // every 100 ms
//	for _, t := range pass.Taints { /* patch the node */ }
//
// # Where nodestate differs
//
//   - The live Lease lookup of the circuit breaker is the LeaseLookup passed
//     to Monitor; nil means the controller's view is current, so the lookup
//     would agree with it. The controller-wide pause after a differing
//     resourceVersion lasts until the recorded node's cached Lease shows that
//     resourceVersion, standing in for the informer's last synced version.
//   - The controller does not change its own view of pods: the runner upserts
//     the pods it set not ready, and reports failures with MarkPodsNotReadyFailed.
//   - Tolerates matches the Exists and Equal operators; the alpha Gt and Lt
//     operators match nothing.
//   - The eviction manager's minimum-reclaim hysteresis applies to thresholds
//     that drove an eviction; node-level reclaim (image and container garbage
//     collection), pod ranking and local-storage evictions are not modelled:
//     an EvictionPass says which threshold evicts one pod and with what grace.
//   - The simulation has no informer latency and runs the loops without their
//     0.04 jitter; a kubelet outage ends with a restart; the 30 s runtime-down
//     detection and the fast startup status loop are left to the scenario.
//   - Zone keys read "region/zone" (or the zone alone) instead of the
//     controller's internal separator.
package nodecondition
