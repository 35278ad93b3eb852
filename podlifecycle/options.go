package podlifecycle

import (
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
)

// Kubelet defaults (spec/podlifecycle.md sections 4.5 and 5).
const (
	// DefaultSyncFrequency is the kubelet's syncFrequency: the resync after
	// a sync without error.
	DefaultSyncFrequency = time.Minute
	// DefaultErrorRequeue is the pod worker's requeue after a sync error
	// other than a crash-loop back-off.
	DefaultErrorRequeue = 10 * time.Second
)

// Options configures a Machine. Start from DefaultOptions; the zero value
// is refused by New.
type Options struct {
	// Features are the container feature gates (spec/podlifecycle.md
	// section 14): ContainerRestartRules, RestartAllContainersOnContainerExits
	// and ChangeContainerStatusOnKubeletRestart.
	Features containerstate.Features
	// CrashLoop shapes crash-loop back-off (KubeletCrashLoopBackOffMax,
	// ReduceDefaultCrashLoopBackOffDecay, maxContainerRestartPeriod).
	CrashLoop containerstate.CrashLoopOptions
	// ImagePullBackoff shapes image-pull back-off: 10 s doubling to 300 s.
	ImagePullBackoff containerstate.BackoffOptions
	// EnsureSecretPulledImages is the KubeletEnsureSecretPulledImages gate
	// (beta, on): the wording of the Pulled event for a present image.
	EnsureSecretPulledImages bool
	// RecursiveReadOnlyMounts says that the runtime handler of the pod's
	// runtime class supports recursive read-only mounts (a CRI runtime
	// lists its handlers and their features in its status): a read-only
	// volume mount asking for recursiveReadOnly IfPossible or Enabled then
	// shows Enabled in the container statuses (spec/containerstate.md
	// section 4.1). False, the default, is a runtime that lists no
	// handlers, such as the simulated one.
	RecursiveReadOnlyMounts bool
	// SyncFrequency is the resync interval after a sync without error.
	SyncFrequency time.Duration
	// ErrorRequeue is the requeue after a failed sync (pulls, create and
	// config errors, sandbox errors); at most SyncFrequency.
	ErrorRequeue time.Duration
	// Version is the Kubernetes minor whose rules apply where no gate above
	// expresses the difference; it is handed to containerstate and podphase
	// (docs/versions.md rows CS-V6, PP-V3 to PP-V5), and the machine reads
	// it for the Created and Started messages (PL-V6), the init-container
	// decision (PL-V7) and exec probes during a deletion (PL-V5). The zero
	// Version is
	// 1.37. DefaultOptionsFor sets it with the gates of the same minor. A
	// value that is none of kubeversion's constants
	// (kubeversion.Version(99)) is refused by New with an *OptionError
	// matching both ErrInvalidOptions and kubeversion.ErrUnsupportedVersion.
	Version kubeversion.Version
	// Cgroups is what the node's pod cgroups read back for a running pod's
	// status.resources: CgroupsV2, the zero value, the kubelet's pod
	// cgroups on a cgroup v2 host; CgroupsNone a node without pod cgroups.
	Cgroups Cgroups
	// Rand, when set, adds the kubelet's jitter: up to 50 % to requeues.
	// Nil means no jitter, so runs are reproducible (spec/podlifecycle.md
	// section 15, decision 5). Probes tick on their workers' tickers, which
	// the kubelet does not jitter in a steady state (decision 4).
	Rand Rand
}

// Cgroups says what the machine reads back from a pod's cgroup once the API
// pod is Running, for status.resources with
// InPlacePodLevelResourcesVerticalScaling (spec/podphase.md sections 4.3 and
// 4.5).
type Cgroups uint8

const (
	// CgroupsV2: the kubelet's own pod cgroups on a cgroup v2 host, its
	// default since the kubelet creates a cgroup for every pod: the values
	// podphase.PodCgroupOf gives for the pod, read back through cgroup v2's
	// files (podphase's ReadBackV2), as the oracle node reads them.
	CgroupsV2 Cgroups = iota
	// CgroupsNone: no pod cgroups (a container manager that manages none):
	// nothing is read, and a running pod's status.resources keep the
	// values of the old status.
	CgroupsNone
)

// DefaultOptions returns the Kubernetes v1.37.2 defaults, without jitter:
// [DefaultOptionsFor] the zero kubeversion.Version.
func DefaultOptions() Options {
	return DefaultOptionsFor(kubeversion.Default)
}

// DefaultOptionsFor returns the defaults of Kubernetes minor v, without
// jitter: containerstate's gates and crash-loop settings for v
// (containerstate.DefaultFeaturesFor, DefaultCrashLoopOptionsFor),
// KubeletEnsureSecretPulledImages on from 1.35 (alpha and off in 1.33 and
// 1.34, docs/versions.md row PL-V2), and Version v. The image-pull
// back-off, the sync frequency and the error requeue are the same in every
// supported minor. A v that is none of kubeversion's constants is kept as it
// is, with 1.37's gates, so that New refuses it.
func DefaultOptionsFor(v kubeversion.Version) Options {
	return Options{
		Features:                 containerstate.DefaultFeaturesFor(v),
		CrashLoop:                containerstate.DefaultCrashLoopOptionsFor(v),
		ImagePullBackoff:         containerstate.DefaultBackoffOptions(),
		EnsureSecretPulledImages: v.AtLeast(kubeversion.V1_35),
		SyncFrequency:            DefaultSyncFrequency,
		ErrorRequeue:             DefaultErrorRequeue,
		Version:                  v,
	}
}

// validate checks every field; it returns an *OptionError.
func (o Options) validate() error {
	if err := o.Version.Validate(); err != nil {
		return &OptionError{Field: "Version", Value: o.Version, Reason: unsupportedVersion, Err: err}
	}
	if o.Cgroups > CgroupsNone {
		return &OptionError{Field: "Cgroups", Value: o.Cgroups, Reason: "undefined"}
	}
	if o.SyncFrequency <= 0 {
		return &OptionError{Field: "SyncFrequency", Value: o.SyncFrequency, Reason: "must be positive"}
	}
	if o.ErrorRequeue <= 0 {
		return &OptionError{Field: "ErrorRequeue", Value: o.ErrorRequeue, Reason: "must be positive"}
	}
	if _, err := o.CrashLoop.BackoffOptions(); err != nil {
		return &OptionError{Field: "CrashLoop", Value: o.CrashLoop, Reason: err.Error()}
	}
	if _, err := containerstate.NewBackoff(o.ImagePullBackoff); err != nil {
		return &OptionError{Field: "ImagePullBackoff", Value: o.ImagePullBackoff, Reason: err.Error()}
	}
	return nil
}

// unsupportedVersion is the reason of an *OptionError on Version.
var unsupportedVersion = "unsupported Kubernetes version, supported are " + kubeversion.Oldest.String() + " to " + kubeversion.Newest.String()
