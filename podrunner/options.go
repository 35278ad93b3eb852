package podrunner

import (
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	"github.com/nodestate/nodestate/podlifecycle"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Options configures a Runner. Start from DefaultOptions.
type Options struct {
	// Lifecycle configures each pod's podlifecycle machine (the kubelet
	// minor, its feature gates, resync and requeue intervals, jitter).
	Lifecycle podlifecycle.Options
	// Clock is the runner's time in Run. Nil is the real clock. Advance
	// takes the time as an argument and reads no clock.
	Clock clock.Clock
	// PodCIDR is the range pod IPs come from (an IPv4 range of at least 4
	// addresses, "10.244.0.0/24"): each pod that is not host-network gets
	// one when it is added, and gives it back when it is finished or
	// removed. A sandbox the runtime reports ready without an IP gets the
	// pod's. Empty gives out none: the runtime's IPs are used.
	PodCIDR string
	// HostIPs are the node's addresses (one, or two of different families),
	// written into every status as status.hostIP and hostIPs, and as the
	// pod IPs of a host-network pod, as the kubelet does from its Node's
	// addresses. Empty sets none.
	HostIPs []string
	// MaxSyncsPerInstant bounds the syncs of one pod at one instant: a
	// machine that keeps asking for a sync with nothing happening is a
	// bug, which the runner logs, counts (Stats.Stalls) and answers by
	// waiting StallDelay instead of spinning.
	MaxSyncsPerInstant int
	// StallDelay is that wait.
	StallDelay time.Duration
	// RuntimeRetry is the first wait after a Runtime's Do returned an
	// error, doubling up to RuntimeRetryMax.
	RuntimeRetry, RuntimeRetryMax time.Duration
	// RelistPeriod is the kubelet's PLEG relist period: a change the
	// runtime reports that answers none of the runner's actions (a
	// container that exits by itself or is lost, a sandbox that dies) is
	// taken at the first relist after it, counted from the first Advance,
	// as the kubelet only learns of it then; the answers to a sync's own
	// actions are taken at once (its relist on demand). 0 takes every
	// change when it happens.
	RelistPeriod time.Duration
	// OnDemandRelistDelay is how long after the answers to a sync's calls
	// its relist on demand reads the runtime (the kubelet requests it once
	// SyncPod returned, and its PLEG serves it on another goroutine): the
	// answers are taken then, with every change up to then, so a container
	// that exits within it is seen exited, never running (measured on the
	// real kubelet: a sidecar that runs 1 ms is never seen running, one
	// that runs 22 ms can be; kube's nodes use 10 ms). 0, the default,
	// takes the answers at once, so that every time in a run is exact.
	OnDemandRelistDelay time.Duration
	// Logger receives what fails and what the runner works around. The
	// zero value discards.
	Logger logr.Logger
	// Hooks are called on the runner's goroutine. Nil hooks are skipped.
	Hooks Hooks
}

// Hooks observe the runner. They run on the goroutine that calls Advance
// (Run's), must not block, and must not keep the arguments past the call.
type Hooks struct {
	// Synced is called after each Step of a pod's machine at now, with the
	// API pod it was handed, the observations and the result, before the
	// runner carries the result out.
	Synced func(now time.Time, pod *v1.Pod, obs []podlifecycle.Observation, res *podlifecycle.Result)
	// Finished is called at now once a pod's machine is finished, after its
	// final status went to the cache (or, for a pod the API server no
	// longer has, after it was forgotten).
	Finished func(now time.Time, pod *v1.Pod)
}

// DefaultOptions returns the kubelet's defaults: podlifecycle's, no pod
// CIDR and no host IPs, at most 100 syncs of a pod at one instant then a
// 1 s wait, runtime retries after 1 s doubling up to 30 s, the 1 s relist
// and the relist on demand at once.
func DefaultOptions() Options {
	return Options{Lifecycle: podlifecycle.DefaultOptions(), MaxSyncsPerInstant: 100, StallDelay: time.Second,
		RuntimeRetry: time.Second, RuntimeRetryMax: 30 * time.Second, RelistPeriod: time.Second}
}

func (o *Options) validate() error {
	if o.PodCIDR != "" {
		if _, ok := parsePodCIDR(o.PodCIDR); !ok {
			return &OptionError{Field: "PodCIDR", Value: o.PodCIDR, Reason: "want an IPv4 range of at least 4 addresses"}
		}
	}
	if len(o.HostIPs) > 2 {
		return &OptionError{Field: "HostIPs", Value: o.HostIPs, Reason: "at most two addresses, one of each family"}
	}
	for _, ip := range o.HostIPs {
		if _, err := netip.ParseAddr(ip); err != nil {
			return &OptionError{Field: "HostIPs", Value: o.HostIPs, Reason: err.Error()}
		}
	}
	if len(o.HostIPs) == 2 {
		a, _ := netip.ParseAddr(o.HostIPs[0])
		b, _ := netip.ParseAddr(o.HostIPs[1])
		if a.Is4() == b.Is4() {
			return &OptionError{Field: "HostIPs", Value: o.HostIPs, Reason: "two addresses of one family"}
		}
	}
	switch {
	case o.MaxSyncsPerInstant <= 0:
		return &OptionError{Field: "MaxSyncsPerInstant", Value: o.MaxSyncsPerInstant, Reason: "must be positive"}
	case o.StallDelay <= 0:
		return &OptionError{Field: "StallDelay", Value: o.StallDelay, Reason: "must be positive"}
	case o.RuntimeRetry <= 0:
		return &OptionError{Field: "RuntimeRetry", Value: o.RuntimeRetry, Reason: "must be positive"}
	case o.RuntimeRetryMax < o.RuntimeRetry:
		return &OptionError{Field: "RuntimeRetryMax", Value: o.RuntimeRetryMax, Reason: "must be at least RuntimeRetry"}
	case o.RelistPeriod < 0:
		return &OptionError{Field: "RelistPeriod", Value: o.RelistPeriod, Reason: "must not be negative"}
	case o.OnDemandRelistDelay < 0:
		return &OptionError{Field: "OnDemandRelistDelay", Value: o.OnDemandRelistDelay, Reason: "must not be negative"}
	}
	return nil
}
