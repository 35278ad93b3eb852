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
// entries by default. CorrelatorOptions sets or disables each stage; its zero value is refused
// rather than read as "defaults", so no choice is hidden (start from DefaultCorrelatorOptions).
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
// # The sink queue
//
// SinkQueue is the pure part of writing core/v1 events to a sink, the part client-go's
// recordToSink does between its sleeps: a bounded queue of recorded events (1000 by default;
// a full queue drops and counts); the head correlated at the time its recorder stamped it;
// Next says which request to make (a create, or a patch that becomes a create when the server
// answers 404), Done takes its outcome and schedules the retry (server answers, that is
// apimachinery StatusErrors of any code, are never retried; transport errors and
// UnexpectedObjectError are, up to 12 attempts, a random part of 10 s before the first retry
// and 10 s before the others). Time is an argument; it sleeps never and starts nothing:
//
//	q.Push(ev, stampedAt)
//	for req, ok := q.Next(now); ok; req, ok = q.Next(now) {
//		srv, err := write(req)   // sink.Create or sink.Patch
//		q.Done(srv, err, now)
//	}
//	due, waiting := q.Due()    // sleep until due, or until the next Push
//
// The same queue, with the events.k8s.io/v1 schedule (10 to 12.5 s before every retry,
// AlreadyExists retried for a series write), drives the SeriesBroadcaster.
//
// # Runners
//
// Broadcaster and SeriesBroadcaster are the runners: recording puts the event on each sink's
// queue without blocking and without starting a goroutine, or drops it and counts the drop.
// A sink started with StartRecordingToSink (and a SeriesBroadcaster after Start) has one
// goroutine that writes its queue and sleeps on the injected k8s.io/utils/clock.Clock; a sink
// added with AddSink has none, and Flush writes it on the caller's goroutine, which suits a
// simulation that moves a fake clock itself. Flush returns when every queue is empty or waits
// for a retry (NextRetry says until when). Events are correlated (or observed into a series)
// at the time their recorder stamped them, so the clock of the goroutine that writes them does
// not matter. Shutdown(ctx) stops accepting events, flushes the queues until ctx ends, and
// returns when every goroutine it started has exited. Every drop is counted with its reason
// (Stats).
//
// # Options, zero values and errors
//
// Each configurable type has an options struct and a Default function: CorrelatorOptions (the
// correlator's, also given per sink), SinkQueueOptions, BroadcasterOptions,
// SeriesBroadcasterOptions and RecorderOptions; Options holds one of each, and DefaultOptions
// client-go's defaults for all. Constructors validate and return an
// *OptionError matching ErrInvalidOptions; they start no goroutine. Randomness comes from a
// Rand (nil: math/rand/v2's process-wide source), time from a clock.Clock (nil: the real
// clock). Bad arguments give an *InvalidEventError matching ErrInvalidInput; the methods of a
// zero Broadcaster, SeriesBroadcaster, Recorder, SeriesRecorder, Correlator or SinkQueue
// return ErrNotInitialized or do nothing; a zero Series is an empty cache. No exported
// function or method panics on nil or zero arguments.
//
// # Other Kubernetes minors
//
// The package takes no kubeversion.Version: nothing it models differs between client-go 0.33
// and 0.37 (docs/versions.md, events rows). The correlator's keys, limits and spam filter, the
// broadcasters' retries and the events.k8s.io/v1 series are the same in every minor; the one
// difference, row EV-V1, is API surface: 0.37 adds AnnotatedEventf to the events.k8s.io/v1
// recorder (annotations on the new event, not part of the series key), and a program written
// for an older minor simply does not call it. Its Eventf is every minor's.
//
// # Where nodestate differs from client-go, on purpose
//
//   - Event names are unique per recorder: an event recorded at the nanosecond of the
//     recorder's previous one (always under a fake clock, sometimes under a coarse real one)
//     is named one nanosecond later. client-go gives both the same name; the second create
//     fails with AlreadyExists, and the repeats of the second event patch the first. Its
//     timestamps are not changed.
//   - A new aggregate event takes the name of the event it replaces (unique, and never
//     written itself); client-go names it after the object and the current nanosecond, which
//     collides with an event recorded at that nanosecond.
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
//     series patch overtakes the create of its first occurrence does not happen. Its refresh
//     and finish writes go through the same queue (one attempt each, ahead of the events).
//   - Events are correlated at the time their recorder stamped them; client-go reads the
//     correlator's clock when the sink goroutine takes the event.
//   - Sink errors are classified through wrapping (errors.As), not by dynamic type; a sink marks
//     a request it could not build with ErrNotRetryable.
//   - Refresh and Finish return their writes sorted by namespace and name (client-go walks a map).
//
// # Concurrency
//
// Correlator, SinkQueue and Series are plain values, not safe for concurrent use; the runners
// give each sink its own and touch it under the sink's lock. Recorder, SeriesRecorder,
// Broadcaster and SeriesBroadcaster are safe for concurrent use.
//
// # Usage
//
//	b, err := events.NewBroadcaster(events.DefaultBroadcasterOptions())
//	...
//	err = b.StartRecordingToSink(sink, events.DefaultCorrelatorOptions())
//	rec, err := b.NewRecorder(v1.EventSource{Component: "my-node-agent", Host: nodeName}, events.RecorderOptions{})
//	rec.Eventf(pod, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", name)
//	...
//	err = b.Shutdown(ctx)
//
// FieldSelector gives the field selector that lists an object's events, as kubectl describe
// asks for them. Package eventstest has an in-memory sink that behaves like the API server
// and records the requests it was given, a recorder that records calls, and rapid generators
// of event streams.
package events
