// Package eventstest helps test code that records Kubernetes events: Sink and SeriesSink are
// in-memory event APIs that behave like the API server (names checked, AlreadyExists on a taken
// name, NotFound when patching a missing event, a new resourceVersion on each write, expiry after
// the event TTL on an injected clock, injected faults); Recorder records the calls made to it
// through client-go's recorder interfaces (SeriesRecorder for the events.k8s.io/v1 form); Event and Stream are rapid generators of event
// streams for property tests of a correlator.
package eventstest
