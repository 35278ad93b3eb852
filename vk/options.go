package vk

import (
	"math/rand/v2"
	"net/netip"
	"strings"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
)

// KubeletVersion is the kubelet version the Node reports by default: the
// Kubernetes release whose kubelet nodestate follows.
const KubeletVersion = "v1.37.2"

// Options configures a Provider. Start from DefaultOptions and set Name.
type Options struct {
	// Name is the node's name; the client should authenticate as
	// system:node:<Name> in the group system:nodes.
	Name string
	// Address is the node's InternalIP, its only address, and by default
	// its pods' hostIP (Runner.HostIPs empty). Port is its kubelet
	// endpoint port in the Node's daemonEndpoints.
	Address string
	Port    int32
	// Capacity and Allocatable are the node's resources ("cpu", "memory",
	// "pods", ...), as the Node reports them.
	Capacity, Allocatable v1.ResourceList
	// Labels are added to the kubelet's own (hostname, os, arch); Taints
	// are registered with the Node.
	Labels map[string]string
	Taints []v1.Taint
	// KubeletVersion is the nodeInfo's kubeletVersion.
	KubeletVersion string
	// RuntimeVersion is the nodeInfo's containerRuntimeVersion,
	// "<runtime name>://<version>" as a CRI runtime names itself; the
	// default is the simulated runtime's. Empty reports none.
	RuntimeVersion string

	// Runner configures the pod runner: each pod's podlifecycle machine
	// (Runner.Lifecycle), the pod CIDR pod IPs come from
	// (Runner.PodCIDR, also the Node's spec.podCIDR), the host IPs (empty:
	// Address). Its Clock, Logger and Hooks are the provider's.
	Runner podrunner.Options
	// Kubelet configures the node status computation and its report rule
	// (nodecondition's kubelet side) and the Lease's duration and renew
	// interval, which NodeControllerOptions hands to virtual-kubelet's
	// lease controller.
	Kubelet nodecondition.KubeletOptions
	// Events configures the event broadcaster the kubelet's events go
	// through; Correlator the per-sink correlator (aggregation, dedup, spam
	// filter). Their Clock is the provider's.
	Events     events.BroadcasterOptions
	Correlator events.CorrelatorOptions
	// FullSyncPeriod is how often every pod's status in the API server is
	// compared with the node's and sent again when it drifted, and a
	// deletion that failed is tried again: the status manager's full sync
	// (10 s).
	FullSyncPeriod time.Duration
	// RuntimeTimeout bounds a Runtime's Do: a call that has not returned by
	// then counts as refused (ErrRuntime; the runner hands its actions
	// again), as a CRI call that exceeds the kubelet's
	// --runtime-request-timeout (2 min). Zero calls Do without a bound, on
	// the runner's goroutine.
	RuntimeTimeout time.Duration
	// ShutdownTimeout bounds how long Run flushes the events still queued
	// once its context ends.
	ShutdownTimeout time.Duration
	// Clock is the provider's time. Nil is the real clock.
	Clock clock.Clock
	// Logger receives what fails and what the provider works around. The
	// zero value discards.
	Logger logr.Logger
}

// DefaultOptions returns the kubelet's defaults for a node without a name:
// 4 CPUs, 16 GiB of memory, 100 GiB of ephemeral storage and 110 pods (a
// kube.Node's), address 127.0.0.1 and port 10250, pod IPs
// from 10.244.0.0/24, podrunner's, nodecondition's and the events package's
// defaults, a 10 s full sync, a 2 min runtime timeout and a 5 s flush of
// the events at shutdown. The pods' requeues are jittered as the kubelet's
// pod worker jitters them (Runner.Lifecycle.Rand, math/rand/v2's
// process-wide source): a crash-looping container restarts up to half its
// back-off after the back-off ends, as on a kubelet and a kube.Node. Set
// Runner.Lifecycle.Rand to nil for runs that repeat exactly.
func DefaultOptions() Options {
	res := nodecondition.Capacity(4000, 16<<30, 100<<30, 110)
	r := podrunner.DefaultOptions()
	r.PodCIDR = "10.244.0.0/24"
	r.Lifecycle.Rand = processRand{}
	return Options{
		Address: "127.0.0.1", Port: 10250, Capacity: res, Allocatable: nodecondition.Allocatable(res, nil, nodecondition.DefaultHardThresholds()),
		KubeletVersion: KubeletVersion,
		RuntimeVersion: simruntime.RuntimeVersion,
		Runner:         r,
		Kubelet:        nodecondition.DefaultKubeletOptions(),
		Events:         events.DefaultBroadcasterOptions(),
		Correlator:     events.DefaultCorrelatorOptions(),
		FullSyncPeriod: statussync.DefaultFullSyncPeriod,
		RuntimeTimeout: 2 * time.Minute, ShutdownTimeout: 5 * time.Second,
	}
}

// processRand is math/rand/v2's process-wide source as a podlifecycle.Rand.
type processRand struct{}

func (processRand) Float64() float64 { return rand.Float64() }

func (o *Options) validate() error {
	if o.Name == "" {
		return &OptionError{Field: "Name", Value: `""`, Reason: "a node name is required"}
	}
	if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
		return &OptionError{Field: "Name", Value: o.Name, Reason: strings.Join(errs, "; ")}
	}
	if _, err := netip.ParseAddr(o.Address); err != nil {
		return &OptionError{Field: "Address", Value: o.Address, Reason: err.Error()}
	}
	if o.Port < 0 {
		return &OptionError{Field: "Port", Value: o.Port, Reason: "must not be negative"}
	}
	if o.KubeletVersion == "" {
		return &OptionError{Field: "KubeletVersion", Value: `""`, Reason: "a version is required"}
	}
	if err := o.Kubelet.Validate(); err != nil {
		return &OptionError{Field: "Kubelet", Value: "", Reason: "refused by nodecondition", Err: err}
	}
	if err := o.Events.Validate(); err != nil {
		return &OptionError{Field: "Events", Value: "", Reason: "refused by events", Err: err}
	}
	if err := o.Correlator.Validate(); err != nil {
		return &OptionError{Field: "Correlator", Value: "", Reason: "refused by events", Err: err}
	}
	switch {
	case o.FullSyncPeriod <= 0:
		return &OptionError{Field: "FullSyncPeriod", Value: o.FullSyncPeriod, Reason: "must be positive"}
	case o.RuntimeTimeout < 0:
		return &OptionError{Field: "RuntimeTimeout", Value: o.RuntimeTimeout, Reason: "must not be negative"}
	case o.ShutdownTimeout <= 0:
		return &OptionError{Field: "ShutdownTimeout", Value: o.ShutdownTimeout, Reason: "must be positive"}
	}
	return nil
}
