package containerstate

import "github.com/nodestate/nodestate/kubeversion"

// DefaultFeaturesFor returns the feature gates as Kubernetes minor v sets
// them by default (docs/versions.md, rows CS-V1 to CS-V3):
//
//   - ContainerRestartRules: absent in 1.33, alpha and off in 1.34, on
//     from 1.35.
//   - RestartAllContainersOnContainerExits: absent in 1.33 and 1.34, alpha
//     and off in 1.35, on from 1.36.
//   - ChangeContainerStatusOnKubeletRestart: on for 1.33 and 1.34, where
//     the gate does not exist and the kubelet always behaves as with it on
//     (started and ready start over after a kubelet restart); off from 1.35.
//   - InPlacePodVerticalScaling and SupplementalGroupsPolicy: on in every
//     supported minor (beta in 1.33 and 1.34, GA and locked from 1.35).
//   - InPlacePodLevelResourcesVerticalScaling: absent before 1.35, alpha
//     and off in 1.35, on from 1.36 (docs/versions.md row PP-V6).
//   - ContainerStopSignals: alpha and off in every supported minor.
//
// The zero Version is 1.37: DefaultFeaturesFor(kubeversion.Default) is
// [DefaultFeatures]. A Version that is none of kubeversion's constants
// gets 1.37's gates, as the zero Version does.
func DefaultFeaturesFor(v kubeversion.Version) Features {
	return Features{
		ContainerRestartRules:                 v.AtLeast(kubeversion.V1_35),
		RestartAllContainersOnContainerExits:  v.AtLeast(kubeversion.V1_36),
		ChangeContainerStatusOnKubeletRestart: !v.AtLeast(kubeversion.V1_35),

		InPlacePodVerticalScaling:               true,
		InPlacePodLevelResourcesVerticalScaling: v.AtLeast(kubeversion.V1_36),
		SupplementalGroupsPolicy:                true,
	}
}

// DefaultOptionsFor returns the options of Kubernetes minor v: the feature
// gates of [DefaultFeaturesFor] and Version v. The UNKNOWN grace,
// nodestate's own, is the same for every minor. A Version that is none of
// kubeversion's constants is kept as it is, with 1.37's gates, so that
// [NewMachine] and [Options.Convert] refuse it.
func DefaultOptionsFor(v kubeversion.Version) Options {
	return Options{Features: DefaultFeaturesFor(v), UnknownGrace: DefaultUnknownGrace, Version: v}
}

// DefaultCrashLoopOptionsFor returns the crash-loop settings of Kubernetes
// minor v (docs/versions.md, row CS-V4): KubeletCrashLoopBackOffMax is alpha
// and off in 1.33 and 1.34, so a configured MaxContainerRestartPeriod is
// ignored there, and on from 1.35. ReduceDefaultCrashLoopBackOffDecay is
// alpha and off in every supported minor, so the default back-off is 10s
// doubling to 300s in all of them. A Version that is none of kubeversion's
// constants gets 1.37's settings, as the zero Version does.
func DefaultCrashLoopOptionsFor(v kubeversion.Version) CrashLoopOptions {
	return CrashLoopOptions{KubeletCrashLoopBackOffMax: v.AtLeast(kubeversion.V1_35)}
}
