package kube

// Classify exposes classify to the external tests.
var Classify = classify
