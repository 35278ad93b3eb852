// Package statussync is the kubelet's pod status manager as a library: a
// versioned cache of the statuses a node computes, and an engine that writes
// them to the API server through a small [Transport].
//
// # The cache
//
// [Cache] holds, per pod UID, the newest status with a version that goes up
// by one each time the kubelet-owned part of it really changes
// ([Options.EqualByKubelet]). Before it stores a status it applies the
// kubelet's rules (Kubernetes v1.37.2, pkg/kubelet/status): observedGeneration
// from the pod and never lower; lastTransitionTime of its conditions
// recomputed; startTime kept once set; timestamps cut to seconds, terminated
// messages cut to their share of 12 KiB, container statuses sorted
// ([Normalize]); and a container that was Terminated and may not restart
// never reported alive again (the update is refused with an error, as the
// kubelet drops it). [Cache.TerminatePod] fails every container that could
// still look alive and marks the pod finished, which it stays. Bad input (nil
// pod, no UID, a status for a container the spec lacks) gets a [*PodError]
// and changes nothing.
//
// # The engine
//
// [Engine] syncs the cache: a fast pass ([Engine.SyncOnce] with full false)
// whenever the cache signals a change, for every pod whose version is ahead of
// what the server holds; and a full pass every 10 seconds that also writes
// again a pod whose server copy drifted from the cache, retries deletions and
// forgets pods no longer cached. Each sync merges the cache's status with the
// server's ([Options.Merge]: others' conditions and claim statuses kept, the
// terminal phase and DisruptionTarget held back while containers could still
// run) and sends a strategic merge patch of the status subresource that
// carries the pod's UID as a precondition ([Patch]); a patch with nothing to
// change is not sent. A finished pod whose server copy is terminal and
// deleting is deleted with grace period 0 and its UID as precondition.
//
// The decisions live in a [Planner], which has no transport and no clock,
// the way raft's RawNode holds the logic its Node runs: it owns each pod's
// sync state and back-off, answers which request to make now
// ([Planner.Next]) and takes how each one ended ([Planner.Done]), with the
// time as an argument. The Engine is a loop around it: SyncOnce is one pass
// with the transport's calls in between, Run makes passes when the cache
// changes, when a back-off ends ([Planner.NextWake]) and every full period.
// A user with their own loop (or a recorded trace: see testdata) drives
// the Planner directly.
//
// One pod, as the engine sees it:
//
//	```mermaid
//	stateDiagram-v2
//	    [*] --> Dirty: SetPodStatus / TerminatePod (version+1)
//	    Dirty --> Synced: GET + PATCH (or no-op patch) succeeded
//	    Dirty --> BackingOff: request failed
//	    BackingOff --> Dirty: back-off over (1s doubling to 1m)
//	    Dirty --> NotFound: the server has no such pod
//	    NotFound --> Dirty: status changed, or full pass after back-off
//	    Dirty --> [*]: the server has another UID under the name (dropped)
//	    Synced --> Dirty: new version, or drift seen in a full pass
//	    Synced --> Deleted: finished, terminal and deleting on the server
//	    Deleted --> [*]
//	```
//
// # Guarantees
//
//   - An older status version is never written after a newer one: one pass
//     runs at a time and always sends the newest cached status.
//   - Any number of updates between passes become one write per pod.
//   - A terminal phase is never written back to a non-terminal one, nor
//     published while containers could still run; a terminal phase another
//     writer set on the server is kept ([Options.Merge]).
//   - A condition another controller owns is never lost: the patch is
//     computed against the server's copy, merges conditions by type, and
//     carries the copy's resourceVersion, so a stale copy gets 409 and a
//     fresh read (one retry per sync, then back-off).
//   - A write stored late (a PATCH that timed out but reached the server
//     after a newer one) cannot overwrite the newer status: its
//     resourceVersion precondition no longer holds and the server refuses
//     it. The kubelet patches without one and has this exposure.
//   - A write whose outcome is unknown (a lost answer, a timeout) makes the
//     engine read the pod before its next patch, also in NoGet mode, and a
//     finished pod is read before it is patched unless its known copy is
//     already deleting, so NoGet deletes it without a watch.
//   - A PATCH answer that shows another writer's change of a kubelet-owned
//     field is not taken as synced: the next full pass writes again.
//   - Run wakes up for a pod's back-off only when a fast pass will sync it
//     then, and at most once per back-off: a pod waiting for the full pass
//     (a 404, a failed deletion) costs no wake-ups.
//   - After faults stop, every pod on the server holds the newest cached
//     status (the model tests check this against an API failing 30-60% of
//     requests).
//
// # Where nodestate differs from the kubelet
//
// The default mode makes the kubelet's two requests (GET, PATCH) per synced
// version. What the kubelet lacks, nodestate adds: terminal statuses are
// synced first; a pod the server does not have is not read again until its
// status changes (or, on full passes, after its back-off), instead of on every
// pass; failed requests back off per pod (1s doubling to 1m), so a broken pod
// cannot starve the others; [Engine.Observe] takes a watch's pods, which both
// serve as the base of the next patch and reveal drift without extra reads
// (a pod observed before its first status waits for it, up to two full
// passes);
// [EngineOptions.NoGet] patches without a GET when the server's copy is known,
// about one request per synced version; the time a change waited is measured
// from its first change to its write and reset after each write (the kubelet
// never resets it); and a patch answered 422 on metadata.uid (the pod was
// recreated) drops the entry, as the kubelet does when its GET shows another
// UID.
//
// # Other Kubernetes minors
//
// [DefaultOptionsFor] gives the defaults of Kubernetes 1.33 to 1.37 (a
// kubeversion.Version; the zero Version is 1.37; [NewCache] refuses a
// Version that is none of kubeversion's constants with an [*OptionError]
// matching both [ErrInvalidOptions] and kubeversion.ErrUnsupportedVersion).
// What changes with the minor (docs/versions.md, rows SS-V1 to SS-V4):
//
//   - observedGeneration: in 1.33 (PodObservedGenerationTracking alpha and
//     off) the cached status carries the pod's generation only when the
//     pod's status already has one (row SS-V1);
//   - through podphase, with Options.Features and Options.Version: which
//     conditions the kubelet owns (AllContainersRestarting from 1.36, row
//     SS-V2), and the observedGeneration of the Ready and ContainersReady
//     conditions regenerated on a readiness or startup change (row PP-V3);
//     the conditions of the statuses the caller sets are the caller's
//     (podphase or podlifecycle of the same minor: row SS-V3);
//   - nothing in the merge (row SS-V4): the status fields it keeps from the
//     API or the cache (extendedResourceClaimStatus, nodeAllocatable-
//     ResourceClaimStatuses, volumeHealth) appear in the API types of the
//     same minor whose kubelet starts keeping them; an older kubelet cannot
//     decode them, so its patch leaves them as the server has them, which
//     is what keeping them does.
//
// The engine's timing (10 s full sync, back-off) is the same in every
// supported minor.
//
// # Concurrency
//
// A Cache is safe for simultaneous use. An Engine's SyncOnce and Run may be
// called from any goroutine; passes never overlap; Observe may be called at
// any time. Run starts no goroutine and returns when its context ends. The
// engine's clock is injected ([EngineOptions.Clock]); the cache takes the time
// as an argument.
//
// # Usage
//
//	cache, err := statussync.NewCache(statussync.DefaultOptions())
//	engine, err := statussync.NewEngine(statussync.DefaultEngineOptions(), cache, transport)
//	go engine.Run(ctx)
//	...
//	cache.SetPodStatus(pod, status, time.Now())
//
// The package statussynctest has an in-memory API with fault injection and
// a History that checks what an engine wrote.
package statussync
