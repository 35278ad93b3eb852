// Package cri is the container runtime of the oracle node: a CRI runtime
// and image service (k8s.io/cri-api runtime/v1) kept in memory, which the
// real kubelet dials on a unix socket, and whose containers behave as
// nodestate's simulated runtime (podlifecycle/simruntime) says.
package cri
