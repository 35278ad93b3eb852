// Package eventstest helps test code that records Kubernetes events: Sink and SeriesSink are
// in-memory event APIs that behave like the API server (names checked, AlreadyExists on a taken
// name, NotFound when patching a missing event, a new resourceVersion on each write, expiry after
// the event TTL on an injected clock, injected faults) and record the requests they were given
// (Requests: what Create and Patch were passed); Recorder and SeriesRecorder record the
// calls made to them through client-go's record.EventRecorder and tools/events EventRecorder
// interfaces; Event and Stream are rapid generators of event streams for property tests of a
// correlator.
package eventstest
