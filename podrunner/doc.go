// Package podrunner runs a node's pods: one podlifecycle machine per pod on
// a Runtime of the user's choice, the statuses the machines produce into a
// statussync cache, their events into a recorder, the pods' IPs from the
// node's pod CIDR, and the kubelet's sync triggers deciding when each
// machine steps. It is the one loop that kube.Node, the virtual-kubelet
// provider of the vk module, the example agent and podlifecycletest's
// driver run on; a node agent of one's own needs nothing else between the
// machines and its transport.
//
//	cache, _ := statussync.NewCache(statussync.DefaultOptions())
//	r, _ := podrunner.New(opts, cache, recorder) // opts.PodCIDR, opts.HostIPs, ...
//	go r.Run(ctx)
//	r.Add(pod, runtime)                          // a pod bound to the node
//	r.Update(newer)                              // from the watch
//	r.Remove(pod.UID, last)                      // the API server deleted it
//
// A status engine (statussync.Engine over a transport: kube's client-go
// one, or a provider's notifier) writes the cache to the API server;
// TerminatePod has been called for a pod once its machine is finished, so
// that the engine deletes it when the API server marks it for deletion.
//
// # When a pod syncs
//
// This is the runner's trigger policy, the kubelet's pod worker's
// (spec/podlifecycle.md rule 4.5), in one place. A pod's machine steps at
// Advance's now when one of these holds, and at no other time:
//
//   - it was just added (its first sync);
//   - its runtime reports something (Runtime.Due is not empty at now, which
//     Runtime.Next or Notify said it would be): the results of the calls
//     the previous sync made (pulls, starts, kills, hooks, probes), taken
//     as the kubelet's relist on demand takes them (a container's creation,
//     start or stop, a hook's end, a sandbox's: Options.OnDemandRelistDelay
//     after them, at once by default, or at a periodic relist before
//     that, with every change up to then; the others at once), which the machine
//     takes as the kubelet does (a probe result that changes nothing, a
//     pull, or the failure that ends a sync schedules no sync of its own);
//     and a change no call asked for (a container that exits by itself or
//     is lost, a sandbox that dies), taken at the next periodic relist
//     (Options.RelistPeriod, 1 s from the first Advance) or with the
//     answers of a sync's calls, which the relist after that sync sees
//     together (a container that exits as it starts never shows running),
//     whichever comes first, so that a probe
//     that ticks in between runs against the stopped container and errors,
//     as the kubelet's does;
//   - Update handed it an object that differs in what the kubelet's pod
//     config compares (podlifecycle.Changed: spec, labels, annotations,
//     deletionTimestamp, deletionGracePeriodSeconds), or one whose Ready
//     condition its readiness gates make stale (podphase.ReadyConditionStale).
//     An update of the status alone, the node's own status write coming back
//     from the watch among them, costs no sync: the runner keeps the newer
//     object for the next one;
//   - Remove: the API server deleted the pod before it finished (a forced
//     deletion); the machine terminates it as a deletion with the grace of
//     the last object known (0 without one);
//   - the machine's NextSync has come: the requeue after an error (10 s,
//     Options.Lifecycle.ErrorRequeue) or a crash-loop back-off (its expiry),
//     the on-demand relist after a sync that acted (at once), the relist
//     after the one that found a failed postStart hook's kill (1 s), the
//     next probe tick, the end of a grace period or a preStop hook, the active
//     deadline, and the resync (1 min, Options.Lifecycle.SyncFrequency).
//
// So a crash-looping container shows Terminated/Error from the sync its
// exit triggers until its back-off expires, then CrashLoopBackOff in the
// status of the sync that restarts it, as on a kubelet with the default
// resync; one with a probe shows CrashLoopBackOff from its probe worker's
// next tick after the exit, which stores Failure and syncs (measured
// against the real kubelet code: conformance/compare's crashloop and
// crashloop-readiness cases).
//
// The runner never syncs one pod more than Options.MaxSyncsPerInstant
// times at one instant (a machine or runtime that keeps asking for a sync
// with nothing happening): it logs, counts Stats.Stalls and waits
// Options.StallDelay. It tolerates a clock that steps back: Advance goes on
// at the latest time it has seen (Stats.ClockSteppedBack), and a runtime's
// report stamped ahead of now or behind the pod's last sync is moved into
// that window.
//
// # Runtimes
//
// A [Runtime] has three methods: Do takes a sync's actions, Due reports what
// happened, Next says when it next has news (zero when it cannot know; it
// then calls [Runner.Notify]). A failed action is an observation, as a
// failed CRI call is; Do returns an error only when it took none of the
// actions, and the runner hands the same actions again after
// Options.RuntimeRetry, doubling up to Options.RuntimeRetryMax, queueing the
// actions of later syncs behind them so that the runtime sees them in order
// (Stats.RuntimeErrors). An observation the machine refuses (a container the
// spec lacks, an ID that never started) is dropped, logged and counted
// (Stats.DroppedObservations), and the rest of its batch applied. A runtime
// that never answers blocks nothing: the pod's status shows what the
// kubelet's would (a container waiting in ContainerCreating) and the resync
// goes on. package simruntime is the simulated runtime; kube wraps runtimes
// with its volume gate.
//
// # The node around the pods
//
// The runner also does what the kubelet does around each pod's sync: it
// hands out pod IPs from Options.PodCIDR (lowest free first, from the
// second address on; a ready sandbox without an IP gets the pod's), writes
// Options.HostIPs as every status's hostIP and hostIPs and as a host-network
// pod's pod IPs, tells each machine of the images other pods pulled onto the
// node (ImagePresent, so IfNotPresent does not pull them again), records
// every event against the pod with its field path (podlifecycle.Event's
// Reference), and calls statussync's TerminatePod when a machine is
// finished. Reject fails a pod the node's admission refuses, as the
// kubelet's does.
//
// # Concurrency
//
// Add, Update, Remove, Reject, Notify and the readers may be called from any
// goroutine; they queue their work for the goroutine that calls Advance:
// Run's, or in virtual time the caller's own (Advance(now) returns when the
// next pod is due). The Runtime of a pod and the Hooks are called on that
// goroutine only. Nothing in the runner sleeps or reads a clock but Run.
package podrunner
