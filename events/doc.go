// Package events records Kubernetes Events the way client-go v0.37.2 does, with the decisions
// taken by a pure, fast, deterministic core instead of goroutines and channels.
//
// It models two pipelines of k8s.io/client-go:
//
//   - tools/record, for core/v1 Events: a Recorder (its Event, Eventf and AnnotatedEventf are
//     those of record.EventRecorder) feeds a Broadcaster, which writes to one or more Sinks,
//     each through its own Correlator;
//   - tools/events, for events.k8s.io/v1 Events: a SeriesRecorder (the tools/events Eventf and
//     AnnotatedEventf) feeds a SeriesBroadcaster, which writes to a SeriesSink through a Series
//     cache.
//
// # The correlator
//
// Correlator is client-go's EventCorrelator as a value with time as an argument:
//
//	res, err := c.Correlate(ev, now) // Create, Patch (with res.Patch) or Skip
//	...write res.Event...
//	c.UpdateState(serverCopy)
//
// It runs client-go's three stages in client-go's order. Aggregation: events that differ only
// in their message are similar; the tenth distinct message within a sliding 600 s window turns
// them into one "(combined from similar events): ..." event. Deduplication: a repeat of an event
// already written is a Patch of count, lastTimestamp and message, byte for byte the strategic
// merge patch client-go computes, written directly rather than through JSON round trips; the new
// count is cached before the spam filter runs, as in client-go, so dropped repeats still raise
// the next count. Spam filter: a token bucket per source, object and type (burst 25, one token
// per 300 s), with golang.org/x/time/rate's arithmetic. Each stage keeps an LRU cache of 4096
// entries by default. Options sets or disables each stage; its zero value is refused rather than
// read as "defaults", so no choice is hidden (start from DefaultOptions).
//
// The hot paths allocate little: a spam-dropped event costs no allocation, a new event one (the
// event returned), a repeat two (the event and its patch); CorrelateTo, which writes into the
// caller's event and patch buffer, allocates nothing on any of them. client-go spends over 200
// allocations on each repeat and 24 on a new event.
//
// # Series
//
// Series is the cache of client-go's tools/events broadcaster as a value: the first occurrence
// of an isomorphic event (same type, action, reason, reporting controller and instance, regarding
// and related object; the note does not count) is created; the second is written as a patch that
// makes it a series of count 2; later ones are counted locally and written by Refresh (every
// 30 min) and Finish (series idle for 6 min; singletons older than 6 min are forgotten).
//
// # Runners
//
// Broadcaster and SeriesBroadcaster are the runners: recording puts the event on a bounded
// queue (1000 by default) without blocking and without starting a goroutine, or drops it and
// counts the drop; one goroutine per sink writes events with client-go's retry rules (server
// answers, that is apimachinery StatusErrors of any code, are never retried; transport errors
// and UnexpectedObjectError are, up to 12 attempts; core/v1 sleeps a random fraction of 10 s
// before the first retry and 10 s before the others, events.k8s.io/v1 10 to 12.5 s each time;
// AlreadyExists is retried for a series write only). Sleeps and series loops run on an injected
// k8s.io/utils/clock.Clock, jitter comes from an injected source. Shutdown(ctx) stops
// accepting events, flushes the queues until ctx ends, and returns when every goroutine it
// started has exited. Every drop is counted with its reason (Stats).
//
// # Where nodestate differs from client-go, on purpose
//
//   - Which message leaves the aggregation set. client-go removes an arbitrary member
//     (sets.PopAny) when the set reaches ten, so whether a later message is aggregated is random.
//     nodestate's rule: the first MaxEvents-1 (nine) distinct messages of a window are recorded
//     on their own, and every other message of that window goes into the aggregate event.
//   - Keys are structs, not concatenated strings, so events that client-go's keys would confuse
//     (fields that run into each other) stay apart.
//   - Validation is done before queueing. A core/v1 event needs a type of Normal or Warning, as in
//     client-go. An events.k8s.io/v1 event is also refused when the server would refuse it: an
//     empty or over-128-character reason or action, a note over 1024 characters. Refused events
//     come back as *InvalidEventError from Record and are counted.
//   - Nothing is dropped silently and nothing blocks: client-go's events.k8s.io/v1 recorder
//     starts a goroutine per event and blocks it on a 25-slot queue; its core/v1 broadcaster
//     drops without counting. Both runners here have one bounded queue per sink and count every
//     drop.
//   - The events.k8s.io/v1 runner writes one event at a time, in order, so the race where a
//     series patch overtakes the create of its first occurrence does not happen.
//   - Sink errors are classified through wrapping (errors.As), not by dynamic type; a sink marks
//     a request it could not build with ErrNotRetryable.
//   - Refresh and Finish return their writes sorted by namespace and name (client-go walks a map).
//
// # Concurrency
//
// Correlator and Series are plain values, not safe for concurrent use; the runners give each
// sink its own and touch it from one goroutine. Recorder, SeriesRecorder, Broadcaster and
// SeriesBroadcaster are safe for concurrent use.
//
// # Usage
//
//	b, err := events.NewBroadcaster()
//	...
//	err = b.StartRecordingToSink(sink, events.DefaultOptions())
//	rec := b.NewRecorder(v1.EventSource{Component: "my-node-agent", Host: nodeName})
//	rec.Eventf(pod, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", name)
//	...
//	err = b.Shutdown(ctx)
//
// Package eventstest has an in-memory sink that behaves like the API server, a recorder that
// records calls, and rapid generators of event streams.
package events
