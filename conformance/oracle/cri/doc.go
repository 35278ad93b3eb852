// Package cri is the container runtime of the oracle node: the runtime and
// image services of the CRI (k8s.io/cri-api runtime/v1), kept in memory and
// served over gRPC on a unix socket that the real kubelet dials, whose
// containers behave as nodestate's simulated runtime (package
// podlifecycle/simruntime) says. A pod run by the real kubelet on this
// runtime and by a nodestate node on simruntime runs the same simulated
// processes on both, in wall-clock time here, in the runner's time there.
//
//	rt, err := cri.New(opts)        // opts.Pods looks up a sandbox's pod
//	l, _ := net.Listen("unix", sock)
//	go rt.Serve(ctx, l)              // the kubelet dials unix://<sock>
//
// # Behaviours
//
// A pod's behaviours are its "sim.nodestate.io/<container>" annotations
// (simruntime.PodBehaviours), which the kubelet passes to RunPodSandbox in
// the sandbox config; the runtime also looks the pod up (Options.Pods) for
// what the CRI does not say: which containers are regular init containers,
// the commands of their probes and hooks, and their images. A container
// without a behaviour gets simruntime.DefaultBehaviour: a regular init
// container runs a second and exits 0, every other runs until it is
// stopped, its image pulls at once and its probes pass. Annotations that do
// not parse fail RunPodSandbox (code InvalidArgument, simruntime's message),
// which the kubelet reports as FailedCreatePodSandBox.
//
// The clauses become CRI behaviour as follows, in the runtime's clock:
//
//   - run <d> exit <code>: the container exits d after StartContainer,
//     with the code; ContainerStatus reports reason Completed for 0, Error
//     otherwise, and nanosecond created, started and finished times, so the
//     kubelet's PLEG relist sees the exit within its period.
//   - pull fail <n> | always, pull slow <d>: PullImage takes d, and the
//     container's first n pulls (counted per pod and container, the
//     container found by its image) fail with a gRPC NotFound error
//     "failed to pull and unpack image \"<image>\": not found", simruntime's
//     message. The node starts with no images; a pull that succeeds stores
//     the image (ID "sha256:<hex>", digest reference "<repo>@sha256:<hex>",
//     Options.ImageSize bytes) for every pod, so IfNotPresent finds it.
//   - <probe> <outcome> <from>-[<to>]: ExecSync of that probe's command
//     answers by the container's age since it started: success exit 0;
//     fail exit 1 with output "probe failed"; error a gRPC error (code
//     Unknown, "probe could not run"); warning exit 0, since exec probes
//     have no warning. Outside every window a probe succeeds.
//   - ignore-sigterm <d>: StopContainer(timeout) returns when the container
//     has exited: at once with 143 when it honours SIGTERM, else after
//     min(timeout, d), with 143 when d is shorter and 137 (SIGKILL) when the
//     timeout runs out first.
//   - poststart <d> [fail], prestop <d> [fail]: the kubelet runs exec hooks
//     through ExecSync with no timeout; the hook takes d and exits 0, or 1
//     when it fails, or 137 when the container exits first.
//
// StopPodSandbox kills what still runs in the sandbox (137) and makes it
// not ready, without an IP from then on; RemovePodSandbox removes it with
// its containers and gives its IP back. Each sandbox outside the host
// network gets an IP of its own from Options.PodCIDR.
//
// # Telling execs apart
//
// The CRI does not say what an ExecSync is for. The kubelet (v1.37) runs
// lifecycle hooks with timeout 0 and probes with their timeoutSeconds (at
// least 1), so the timeout tells hooks from probes; the command tells
// which probe (after the kubelet's static $(VAR) expansion) and which
// hook. A container's probes need commands of their own for their windows
// to be told apart: with the same command the first of startup, readiness
// and liveness wins. When the postStart and preStop hooks have the same
// command, an instance's first hook is its postStart.
//
// # Differences from containerd
//
// Nothing runs: no processes, no logs beyond the empty log file the kubelet
// names, no streaming (Exec, Attach and PortForward are unimplemented), no
// usage statistics (the stats calls answer with attributes only), no
// checkpoints. A sandbox is never lost. A container reports the image its
// pod spec names (as simruntime reports it) rather than a normalized
// reference, and the Linux resources the kubelet gave it.
package cri
