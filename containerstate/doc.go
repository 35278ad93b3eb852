// Package containerstate models one Kubernetes container the way the kubelet
// of Kubernetes 1.37 reports it.
package containerstate
