// Package vk is a virtual-kubelet provider built from any podrunner.Runtime.
package vk
