// Package podphase computes a Kubernetes pod's phase the way the kubelet of
// Kubernetes 1.37 does, and explains it.
package podphase
