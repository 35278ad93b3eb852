// Package kubeversion names the Kubernetes minors whose node-side behaviour
// nodestate reproduces: 1.33, 1.34, 1.35, 1.36 and 1.37.
//
// A [Version] is a profile: the packages of nodestate take one (for example
// containerstate.DefaultOptionsFor(kubeversion.V1_34) or podphase's
// Options.Version) and then behave as that minor's kubelet, controllers and
// kubectl do with their default feature gates. docs/versions.md lists what
// changes between the minors, each row with the upstream change and the
// lines where it was confirmed in that release's source.
//
// Packages that take a profile: containerstate (DefaultOptionsFor,
// DefaultFeaturesFor, DefaultCrashLoopOptionsFor, Options.Version), podphase
// (DefaultOptionsFor, Options.Version), podlifecycle (DefaultOptionsFor,
// Options.Version), statussync (DefaultOptionsFor, Options.Version) and
// nodecondition (DefaultOptionsFor, DefaultKubeletOptionsFor,
// DefaultControllerOptionsFor, KubeletOptions.Version,
// ControllerOptions.Version; its simulation's Scenario.Version). events
// takes none: nothing it models differs between the minors
// (docs/versions.md row EV-V1).
//
// Each minor is followed at one release, the newest patch of that minor the
// module proxy served when the profile was written ([Version.Release]):
// v1.33.13, v1.34.4, v1.35.4, v1.36.3 and v1.37.2. Patches within a minor do
// not change the rules nodestate models, so [Parse] accepts any patch.
//
// # The zero value
//
// The zero Version is [Default], Kubernetes 1.37: a Version field nobody set
// follows the library's reference release. The numeric values of the
// constants are not minors; use the constants, [Parse] and [Version.Minor].
//
// # Errors
//
// [Parse] refuses anything but 1.N, v1.N, 1.N.P or v1.N.P for a supported N
// with a [*ParseError] that matches [ErrUnsupportedVersion].
// [Version.Validate] refuses a Version value that is none of the constants
// (Version(99)) with a [*ValueError] that matches it too. Every constructor
// or validation that takes options with a Version (containerstate,
// podphase, podlifecycle, statussync, nodecondition and its simulation)
// refuses such a value with its own option error, which matches both its
// package's sentinel and ErrUnsupportedVersion; the functions that return
// no error treat it as [Default].
//
// Everything here is a pure function of its arguments and safe for
// simultaneous use.
package kubeversion
