// Package kube connects nodestate to a real API server through k8s.io/client-go v0.37.2: event
// sinks for core/v1 and events.k8s.io/v1, compile-time checks that nodestate's recorders satisfy
// client-go's recorder interfaces, and, in its tests, a differential test and side-by-side
// benchmarks of nodestate's event correlator against client-go's EventCorrelator.
package kube
