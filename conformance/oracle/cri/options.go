package cri

import (
	"context"
	"net/netip"
	"strings"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

// Options configures a Runtime. Start from DefaultOptions.
type Options struct {
	// Clock is the runtime's clock: container ages, exits, slow pulls,
	// hooks and graceful stops follow it. Nil is the real clock.
	Clock clock.Clock
	// PodCIDR is the range sandbox IPs come from; every sandbox that is not
	// in the host network gets an address of its own, handed out in turn
	// and given back when the sandbox is removed. It must be an IPv4 or
	// IPv6 prefix with room for at least one address.
	PodCIDR string
	// Token goes into every sandbox and container ID
	// ("<token>-<container>-<n>"), so that a runtime started again never
	// reports an ID an API server already shows. Letters, digits and "-"
	// only; empty puts none in.
	Token string
	// ImageSize is the size in bytes of every image a pull stores, which
	// the kubelet puts into its Pulled event ("Image size: <n> bytes"). It
	// must not be negative.
	ImageSize int64
	// Pods looks up the pod of a new sandbox, for the container kinds (a
	// regular init container without a behaviour runs a second), for the
	// exec commands of its probes and hooks, and for the images of its
	// containers. Nil, or a pod it cannot find, leaves only the sandbox's
	// annotations: every container then runs forever unless annotated, and
	// an exec is told apart by its timeout alone (see the package doc).
	Pods PodSource
	// RuntimeName and RuntimeVersion are what Version reports. The kubelet
	// writes container IDs as "<RuntimeName>://<id>" and the Node's
	// containerRuntimeVersion as "<RuntimeName>://<RuntimeVersion>". Both
	// must be set.
	RuntimeName, RuntimeVersion string
	// ImageFsMountpoint is the mountpoint ImageFsInfo reports for the
	// image filesystem; the kubelet asks its cadvisor about it.
	ImageFsMountpoint string
	// Logger receives what the runtime does; the zero Logger discards it.
	Logger logr.Logger
}

// DefaultOptions returns the real clock, pod IPs from 10.244.0.0/24,
// images of 1 MiB (simruntime's default), no token, the runtime name "sim"
// and simruntime's Version (so that the kubelet's container IDs start with
// simruntime.Scheme and its Node's containerRuntimeVersion is
// simruntime.RuntimeVersion, as nodestate's are) and the image filesystem
// "/".
func DefaultOptions() Options {
	return Options{
		PodCIDR:           "10.244.0.0/24",
		ImageSize:         simruntime.DefaultOptions().ImageSize,
		RuntimeName:       strings.TrimSuffix(simruntime.Scheme, "://"),
		RuntimeVersion:    simruntime.Version,
		ImageFsMountpoint: "/",
	}
}

func (o Options) validate() (netip.Prefix, error) {
	for _, r := range o.Token {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return netip.Prefix{}, &OptionError{Field: "Token", Value: o.Token, Reason: `letters, digits and "-" only`}
		}
	}
	p, err := netip.ParsePrefix(o.PodCIDR)
	if err != nil {
		return netip.Prefix{}, &OptionError{Field: "PodCIDR", Value: o.PodCIDR, Reason: "not a prefix"}
	}
	p = p.Masked()
	if hostBits(p) < 1 {
		return netip.Prefix{}, &OptionError{Field: "PodCIDR", Value: o.PodCIDR, Reason: "no room for a pod address"}
	}
	if o.ImageSize < 0 {
		return netip.Prefix{}, &OptionError{Field: "ImageSize", Value: o.ImageSize, Reason: "must not be negative"}
	}
	if o.RuntimeName == "" || strings.ContainsAny(o.RuntimeName, ":/ ") {
		return netip.Prefix{}, &OptionError{Field: "RuntimeName", Value: o.RuntimeName, Reason: `must be set, without ":", "/" or spaces`}
	}
	if o.RuntimeVersion == "" {
		return netip.Prefix{}, &OptionError{Field: "RuntimeVersion", Value: o.RuntimeVersion, Reason: "must be set"}
	}
	return p, nil
}

// PodSource looks up the pod a sandbox is made for.
type PodSource interface {
	// Pod returns the pod namespace/name if its UID is uid. It returns an
	// error when there is no such pod (deleted, or its name taken by
	// another pod) or the lookup failed. The runtime does not change the
	// pod it gets.
	Pod(ctx context.Context, namespace, name, uid string) (*v1.Pod, error)
}

// PodSourceFunc is a function as a PodSource.
type PodSourceFunc func(ctx context.Context, namespace, name, uid string) (*v1.Pod, error)

// Pod calls f.
func (f PodSourceFunc) Pod(ctx context.Context, namespace, name, uid string) (*v1.Pod, error) {
	return f(ctx, namespace, name, uid)
}
