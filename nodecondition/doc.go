// Package nodecondition models both sides of Kubernetes node health as pure
// values: the kubelet, which computes node conditions and renews its Lease,
// and the node-lifecycle controller, which watches those heartbeats, marks
// conditions Unknown, taints the node and, through pod tolerations, has pods
// evicted. It answers "what happens, and when" deterministically, without a
// control plane.
//
// It follows Kubernetes v1.37.2 with default settings and feature gates: the
// kubelet's node-status setters, report rule (with the one-time report jitter
// of v1.34) and eviction manager; the node Lease (KEP-589); the
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
// # Runner
//
// A Runner runs a Controller and an Evictor on a k8s.io/utils/clock.Clock:
// the monitor pass every MonitorPeriod after the previous one ended, the
// tainting pass when a queued node can be tainted, and scheduled deletions
// when they come due. It writes through three small interfaces the caller
// implements: NodeWriter (conditions and taints), PodStatusWriter (Ready
// False) and PodDeleter (taint-based deletion); its Upsert and Delete
// methods take the informers' updates.
//
// The deterministic simulator of both sides (scenarios, timelines, Mermaid)
// is the package nodecondition/simulation.
//
// # Other Kubernetes minors
//
// [DefaultOptionsFor], [DefaultKubeletOptionsFor] and
// [DefaultControllerOptionsFor] give the defaults of Kubernetes 1.33 to
// 1.37 (a kubeversion.Version; the zero Version is 1.37). The kubelet and
// the controller each carry their own Version (KubeletOptions.Version,
// ControllerOptions.Version), so version skew between them is two settings.
// What changes with the minor (docs/versions.md, rows NC-V1 to NC-V3):
//
//   - the controller's NoExecute decision: before 1.34 a monitor pass
//     decides on the Ready condition it started with, so the pass that marks
//     a node Unknown does not queue it yet and the taint comes one pass
//     (5 s) later (row NC-V1);
//   - the live Lease lookup before marking Unknown: the
//     NodeControllerLeaseCircuitBreaker gate exists from 1.37, so
//     DefaultControllerOptionsFor turns LeaseCircuitBreaker off before it
//     (row NC-V2);
//   - the kubelet's report of an unchanged status: before 1.34 exactly every
//     StatusReportFrequency, with no one-time jitter and no draw from Rand
//     (row NC-V3).
//
// The grace periods, the eviction timeout, the monitor, status and lease
// periods, and the conditions' reasons and messages are the same in every
// supported minor.
//
// A Version that is none of kubeversion's constants (kubeversion.Version(99))
// is refused by [KubeletOptions.Validate], [ControllerOptions.Validate],
// [Options.Validate] and so by [NewKubelet], [NewLeaseRenewer] and
// [NewController], with an [*OptionError] on the Version field that matches
// both [ErrInvalidOptions] and kubeversion.ErrUnsupportedVersion. The
// DefaultXFor functions keep such a Version (with 1.37's settings), so that
// the constructor refuses it.
//
// # Concurrency
//
// Kubelet, LeaseRenewer, Controller and Evictor are values with no
// goroutines, no clock and no I/O: every call takes the time, and a call with
// a time older than one already accepted returns ErrTimeWentBackwards and
// changes nothing. They are not safe for concurrent use; a runner owns each
// one. A Pass owns its slices; the slices of a Report belong to the Kubelet
// and are valid until its next call. The steady-state Monitor pass, Observe
// and Status allocate nothing. A Runner is safe for concurrent use.
//
// # Zero values and errors
//
// The zero Evictor is ready to use. Kubelet, LeaseRenewer, Controller and
// Runner need their constructors: their methods on a zero value return
// ErrNotInitialized, or a documented inert result when they have no error.
// No exported function or method panics on nil or zero arguments. Every
// error unwraps to ErrInvalidOptions, ErrInvalidInput, ErrTimeWentBackwards
// or ErrNotInitialized (docs/conventions.md).
//
// # Usage
//
//	c, _ := nodecondition.NewController(nodecondition.DefaultControllerOptions())
//	c.UpsertNode(now, node)                 // from the node informer
//	c.UpsertLease(node.Name, renewTime, rv) // from the lease informer
//	pass, _ := c.Monitor(now, nil)          // every 5 s
//	for _, w := range pass.Writes { /* UpdateStatus */ }
//	for _, p := range pass.PodsNotReady { /* set Ready=False */ }
//	pass, _ = c.Taint(now)                  // every 100 ms
//	for _, t := range pass.Taints { /* patch the node */ }
//
// or, with the loop written once:
//
//	r, _ := nodecondition.NewRunner(nodecondition.DefaultRunnerOptions(), c, nodes, pods, deleter)
//	go r.Run(ctx)                  // monitor, taint and delete on the clock
//	r.UpsertNode(ctx, node)        // from the informers, at any time
//	r.UpsertLease(node.Name, renewTime, rv)
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
//   - The Runner retries nothing itself: a failed condition or taint write is
//     counted in RunnerStats, a failed pod status write is retried by the next
//     monitor pass, as MarkPodsNotReadyFailed does.
//   - Zone keys read "region/zone" (or the zone alone) instead of the
//     controller's internal separator.
package nodecondition
