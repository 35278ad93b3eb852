// Package agent is a simulated node agent assembled from nodestate's packages: what a kubelet
// does for the pods bound to its node, with the container runtime replaced by a script, so
// that the whole library can be watched at work end to end.
//
// # What it runs
//
// New hands out Options.Pods pods in order of interest: a crash-looping worker, a cache whose
// image tag does not exist, a Job pod with a log-shipping sidecar, an API Deployment with a
// migration init container and a readiness probe that fails while it warms up, a StatefulSet
// pod with two init containers, and web replicas with readiness probes; then the same again
// with new replicas. Every name, UID, duration and jitter is drawn from
// Options.Seed, so a seed decides a run.
//
// # How the library is used
//
//   - podlifecycle: one Machine per pod decides what the kubelet does with it, one Step per
//     sync: the init containers one at a time, the sidecar before the next container, the
//     regular containers, restarts with crash-loop back-off, pulls with image-pull back-off,
//     readiness probes, and stopping a Job's sidecar once its main container completed. Each
//     Step's actions go to a simulated runtime (simruntime.Runtime, following the
//     workload's behaviours), its events to the events recorder with the field path the
//     machine gives, its status versions to statussync's cache; a finished pod is
//     TerminatePod'ed. The agent syncs a pod when the runtime has something to report or at
//     the machine's NextSync, with the kubelet's jitter drawn from Options.Seed.
//   - statussync: the status goes to a Cache; an Engine writes it through the given Transport,
//     a fast pass when the cache changed and a full pass every 10 s (SyncOnce in the agent's
//     time), with the kubelet's GET and PATCH or, with Options.NoGet, the no-GET mode.
//   - events: the machine's events are built by an events.Recorder and written to the given
//     Sink by an events.Broadcaster, whose queue correlates them (aggregation, counts, spam
//     filter) and retries failed writes as client-go does.
//   - nodecondition: the kubelet side computes the node's conditions every 10 s from an
//     eviction-signal sample and sends them by its report rule; a LeaseRenewer schedules the
//     lease renewals.
//
// # Transport-agnostic
//
// The agent asks for a statussync.Transport (pod GET, status PATCH, DELETE), an events.Sink
// (core/v1 event create and patch), a Cluster (create pod, write node, renew lease) and a
// k8s.io/utils clock. Package agenttest wires it to in-memory APIs on a fake clock. Against a
// real cluster, kube.Node (kube/cmd/node) runs the pods the cluster binds to it on the same
// parts; kube's StatusTransport and CoreEventSink are client-go's Transport and Sink.
//
// # Time and concurrency
//
// An Agent runs on the caller's goroutine and starts none. Step does what is due at the
// clock's time and says when it next has work; Run loops over Step and, when the clock can be
// set (a fake clock's SetTime), jumps from one due instant to the next, so ten minutes of
// virtual time take a fraction of a second; with a real clock it waits. An Agent is not safe
// for concurrent use.
//
// # Where it simplifies
//
// The runtime is simruntime's, with the registry's error, the image
// sizes, the probe output and pod IPs rewritten to what a node would report: an instance runs
// for a set time and exits with a set code, or runs until stopped; a readiness probe fails for
// a set number of periods and then passes for good; each pod's pulls run one after the other,
// but pulls of different pods overlap (a kubelet with serialized pulls would queue them);
// container IDs are the simulator's. Liveness probes, pod deletion and eviction are not
// exercised, and the node's signals stay healthy. The events.Broadcaster's sink is added
// without a goroutine (AddSink): the agent flushes it on its own goroutine after each event
// and before the clock moves, so the spam filter and the retry waits see virtual time
// exactly, and a seed decides every count.
//
// # Usage
//
//	a, err := agent.New(agent.Options{Pods: 8, Seed: 1}, clk, transport, sink, cluster)
//	...
//	err = a.Run(ctx, 10*time.Minute)
//	agent.WriteTable(os.Stdout, podsFromTheAPI, clk.Now())
//	agent.WriteEvents(os.Stdout, agent.EventsFor(eventsFromTheAPI, uid), clk.Now())
//	agent.WriteSummary(os.Stdout, a.Stats(), 10*time.Minute)
package agent
