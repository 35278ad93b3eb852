// Package explain builds the reports of the kubectl-nodestate plugin from API
// objects already fetched: why a pod is in its phase and what it waits for
// (podphase's explanation, containerstate's back-off), and what would become
// of a node and its pods if it stopped renewing its Lease now
// (nodecondition/simulation). It does no I/O and reads no clock: the command
// fetches the objects and passes the time, so every report is tested over
// constructed objects with golden outputs.
//
// Each report renders as aligned text for a terminal (WriteText) and is plain
// data with JSON tags for -o json and -o yaml.
package explain
