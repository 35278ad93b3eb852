package nodecondition

import (
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/nodestate/nodestate/kubeversion"
)

// Rand is a source of random numbers; *math/rand/v2.Rand and *math/rand.Rand
// satisfy it. Float64 returns a number in [0, 1). The machines draw their
// jitter from it; a nil Rand in the options is the process-wide source of
// math/rand/v2. Tests pass a seeded one.
type Rand interface{ Float64() float64 }

// globalRand is the process-wide source of math/rand/v2.
type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

func randOrGlobal(r Rand) Rand {
	if r == nil {
		return globalRand{}
	}
	return r
}

// Options holds the options of every configurable type of the package.
// DefaultOptions gives the Kubernetes 1.37 defaults.
type Options struct {
	Kubelet    KubeletOptions    // the kubelet side: Kubelet and LeaseRenewer
	Controller ControllerOptions // the node-lifecycle controller
	Runner     RunnerOptions     // the controller runner
}

// DefaultOptions returns the Kubernetes 1.37 defaults: [DefaultOptionsFor]
// the zero kubeversion.Version.
func DefaultOptions() Options {
	return DefaultOptionsFor(kubeversion.Default)
}

// DefaultOptionsFor returns the defaults of Kubernetes minor v for the
// kubelet and the controller ([DefaultKubeletOptionsFor],
// [DefaultControllerOptionsFor]) and the runner's, which are the same in
// every minor. A kubelet and a controller of different minors (version
// skew) are configured by setting the two parts from different minors.
func DefaultOptionsFor(v kubeversion.Version) Options {
	return Options{Kubelet: DefaultKubeletOptionsFor(v), Controller: DefaultControllerOptionsFor(v), Runner: DefaultRunnerOptions()}
}

// Validate checks each part and the kubelet and controller timing against
// each other: a grace period that is not longer than the kubelet's lease
// renew interval marks a healthy node Unknown between two renewals. A nil
// Kubelet.Thresholds counts as DefaultHardThresholds. The error names the
// field as "Kubelet.X" or "Controller.X".
func (o Options) Validate() error {
	prefixed := func(part string, err error) error {
		var oe *OptionError
		if errors.As(err, &oe) {
			return &OptionError{Field: part + "." + oe.Field, Value: oe.Value, Reason: oe.Reason, Err: oe.Err}
		}
		return err
	}
	if err := o.Kubelet.Validate(); err != nil {
		return prefixed("Kubelet", err)
	}
	if err := o.Controller.Validate(); err != nil {
		return prefixed("Controller", err)
	}
	if err := o.Runner.Validate(); err != nil {
		return prefixed("Runner", err)
	}
	if o.Controller.GracePeriod <= o.Kubelet.LeaseRenewInterval() {
		return &OptionError{Field: "Controller.GracePeriod", Value: o.Controller.GracePeriod.String(),
			Reason: "must be longer than the kubelet's lease renew interval " + o.Kubelet.LeaseRenewInterval().String()}
	}
	return nil
}

// KubeletOptions holds the kubelet settings the node-status machine and the
// lease renewer use. DefaultKubeletOptions gives the Kubernetes 1.37 defaults.
type KubeletOptions struct {
	// StatusUpdateFrequency is how often status is computed (nodeStatusUpdateFrequency, 10 s).
	StatusUpdateFrequency time.Duration
	// StatusReportFrequency is how often an unchanged status is still sent
	// (nodeStatusReportFrequency, 5 m). The kubelet defaults it to
	// StatusUpdateFrequency when only that one is set explicitly; set both here.
	StatusReportFrequency time.Duration
	// EvictionMonitoringInterval is the eviction manager's pass period (10 s).
	EvictionMonitoringInterval time.Duration
	// PressureTransitionPeriod keeps a pressure condition True after its last observation (5 m).
	PressureTransitionPeriod time.Duration
	// Thresholds are the hard and soft eviction thresholds; nil means DefaultHardThresholds.
	Thresholds []Threshold
	// MaxPodGracePeriod caps the grace of a soft eviction, in seconds (evictionMaxPodGracePeriod, 0).
	MaxPodGracePeriod int64
	// LeaseDuration is written into the Lease (nodeLeaseDurationSeconds, 40 s).
	LeaseDuration time.Duration
	// LeaseRenewFraction times LeaseDuration is the renew interval (0.25, so 10 s).
	LeaseRenewFraction float64
	// LoopJitter is the jitter factor of the status and lease loops (0.04).
	LoopJitter float64
	// Rand supplies the one-time report jitter and the lease loop jitter;
	// nil is the process-wide source of math/rand/v2.
	Rand Rand
	// Version is the Kubernetes minor of the kubelet (docs/versions.md row
	// NC-V3): before 1.34 an unchanged status is reported exactly every
	// StatusReportFrequency, with no one-time jitter (and none is drawn from
	// Rand). The zero Version is 1.37; Validate refuses a value that is none
	// of kubeversion's constants.
	Version kubeversion.Version
}

// DefaultKubeletOptions returns the Kubernetes 1.37 kubelet defaults on
// Linux: [DefaultKubeletOptionsFor] the zero kubeversion.Version.
func DefaultKubeletOptions() KubeletOptions {
	return DefaultKubeletOptionsFor(kubeversion.Default)
}

// DefaultKubeletOptionsFor returns the kubelet defaults of Kubernetes minor
// v on Linux: the settings are the same in every supported minor, and
// Version is v, kept as it is when it is none of kubeversion's constants
// so that NewKubelet and NewLeaseRenewer refuse it.
func DefaultKubeletOptionsFor(v kubeversion.Version) KubeletOptions {
	return KubeletOptions{
		Version:                    v,
		StatusUpdateFrequency:      10 * time.Second,
		StatusReportFrequency:      5 * time.Minute,
		EvictionMonitoringInterval: 10 * time.Second,
		PressureTransitionPeriod:   5 * time.Minute,
		Thresholds:                 DefaultHardThresholds(),
		LeaseDuration:              40 * time.Second,
		LeaseRenewFraction:         0.25,
		LoopJitter:                 0.04,
	}
}

// LeaseRenewInterval is LeaseDuration times LeaseRenewFraction (10 s by default).
func (c KubeletOptions) LeaseRenewInterval() time.Duration {
	return time.Duration(float64(c.LeaseDuration) * c.LeaseRenewFraction)
}

// Validate reports the first invalid setting as a *OptionError. A nil
// Thresholds is valid (DefaultHardThresholds). A Version that is none of
// kubeversion's constants is refused first, with an error that also matches
// kubeversion.ErrUnsupportedVersion.
func (c KubeletOptions) Validate() error {
	if err := versionError(c.Version); err != nil {
		return err
	}
	if err := allPositive(
		namedPeriod{"StatusUpdateFrequency", c.StatusUpdateFrequency},
		namedPeriod{"StatusReportFrequency", c.StatusReportFrequency},
		namedPeriod{"EvictionMonitoringInterval", c.EvictionMonitoringInterval},
		namedPeriod{"LeaseDuration", c.LeaseDuration},
	); err != nil {
		return err
	}
	if c.PressureTransitionPeriod < 0 {
		return &OptionError{Field: "PressureTransitionPeriod", Value: c.PressureTransitionPeriod.String(), Reason: "must not be negative"}
	}
	if !(c.LeaseRenewFraction > 0 && c.LeaseRenewFraction < 1) {
		return &OptionError{Field: "LeaseRenewFraction", Value: fmtFloat(c.LeaseRenewFraction), Reason: "must be in (0, 1)"}
	}
	if c.LeaseRenewInterval() <= 0 {
		return &OptionError{Field: "LeaseDuration", Value: c.LeaseDuration.String(), Reason: "renew interval rounds to zero"}
	}
	if !(c.LoopJitter >= 0 && c.LoopJitter <= 1) {
		return &OptionError{Field: "LoopJitter", Value: fmtFloat(c.LoopJitter), Reason: "must be in [0, 1]"}
	}
	return validateThresholds(c.Thresholds)
}

// ControllerOptions holds the node-lifecycle controller settings.
// DefaultControllerOptions gives the Kubernetes 1.37 defaults.
type ControllerOptions struct {
	// MonitorPeriod is the health-check pass period (--node-monitor-period, 5 s).
	MonitorPeriod time.Duration
	// GracePeriod is how long a node may go without a heartbeat before it is
	// marked Unknown (--node-monitor-grace-period, 50 s).
	GracePeriod time.Duration
	// StartupGracePeriod applies while the node has no Ready condition (--node-startup-grace-period, 60 s).
	StartupGracePeriod time.Duration
	// EvictionRate is the NoExecute tainting rate per zone, nodes/s
	// (--node-eviction-rate, 0.1). math.Inf(1) means no limit.
	EvictionRate float64
	// SecondaryEvictionRate is used in PartialDisruption by large zones (--secondary-node-eviction-rate, 0.01).
	SecondaryEvictionRate float64
	// UnhealthyZoneThreshold is the not-ready share that makes a zone PartialDisruption (0.55).
	UnhealthyZoneThreshold float64
	// LargeClusterThreshold: a zone with strictly more nodes is large (50).
	LargeClusterThreshold int
	// TaintingPeriod is the NoExecute tainting loop period (100 ms).
	TaintingPeriod time.Duration
	// LeaseCircuitBreaker is the NodeControllerLeaseCircuitBreaker gate (beta, on):
	// a live Lease lookup before marking a node Unknown. The gate exists
	// from 1.37 only (docs/versions.md row NC-V2), so DefaultControllerOptionsFor
	// sets it for 1.37 alone.
	LeaseCircuitBreaker bool
	// Version is the Kubernetes minor of the controller where no field above
	// expresses the difference (docs/versions.md row NC-V1): before 1.34 the
	// NoExecute decision of a pass reads the Ready condition the pass started
	// with, not the one it ends with, so a node marked Unknown is queued for
	// its taint one pass later. The zero Version is 1.37; Validate refuses
	// a value that is none of kubeversion's constants.
	Version kubeversion.Version
}

// DefaultControllerOptions returns the Kubernetes 1.37 defaults:
// [DefaultControllerOptionsFor] the zero kubeversion.Version.
func DefaultControllerOptions() ControllerOptions {
	return DefaultControllerOptionsFor(kubeversion.Default)
}

// DefaultControllerOptionsFor returns the controller defaults of Kubernetes
// minor v: the periods, grace periods and rates are the same in every
// supported minor; LeaseCircuitBreaker is on from 1.37 (the gate is absent
// before); Version is v, kept as it is (with 1.37's settings) when it is
// none of kubeversion's constants so that NewController refuses it.
func DefaultControllerOptionsFor(v kubeversion.Version) ControllerOptions {
	return ControllerOptions{
		Version:                v,
		MonitorPeriod:          5 * time.Second,
		GracePeriod:            50 * time.Second,
		StartupGracePeriod:     60 * time.Second,
		EvictionRate:           0.1,
		SecondaryEvictionRate:  0.01,
		UnhealthyZoneThreshold: 0.55,
		LargeClusterThreshold:  50,
		TaintingPeriod:         100 * time.Millisecond,
		LeaseCircuitBreaker:    v.AtLeast(kubeversion.V1_37),
	}
}

// Validate reports the first invalid setting as a *OptionError. A Version
// that is none of kubeversion's constants is refused first, with an error
// that also matches kubeversion.ErrUnsupportedVersion.
func (c ControllerOptions) Validate() error {
	if err := versionError(c.Version); err != nil {
		return err
	}
	if err := allPositive(
		namedPeriod{"MonitorPeriod", c.MonitorPeriod},
		namedPeriod{"GracePeriod", c.GracePeriod},
		namedPeriod{"StartupGracePeriod", c.StartupGracePeriod},
		namedPeriod{"TaintingPeriod", c.TaintingPeriod},
	); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"EvictionRate", c.EvictionRate}, {"SecondaryEvictionRate", c.SecondaryEvictionRate}} {
		if p.v < 0 || math.IsNaN(p.v) {
			return &OptionError{Field: p.name, Value: fmtFloat(p.v), Reason: "must be a rate >= 0"}
		}
	}
	if !(c.UnhealthyZoneThreshold >= 0 && c.UnhealthyZoneThreshold <= 1) {
		return &OptionError{Field: "UnhealthyZoneThreshold", Value: fmtFloat(c.UnhealthyZoneThreshold), Reason: "must be in [0, 1]"}
	}
	if c.LargeClusterThreshold < 0 {
		return &OptionError{Field: "LargeClusterThreshold", Value: fmtFloat(float64(c.LargeClusterThreshold)), Reason: "must not be negative"}
	}
	return nil
}
