package podlifecycle

import (
	"testing"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

// TestEventMessages checks each message format against the text of
// spec/podlifecycle.md section 10 (and 3.8 for Killing).
func TestEventMessages(t *testing.T) {
	for _, tc := range []struct{ rule, got, want string }{
		{"section 10 Pulling", PullingMessage("busybox"), `Pulling image "busybox"`},
		{"section 10 Pulled", PulledMessage("busybox", 1234567*time.Microsecond, 2*time.Second+5*time.Microsecond, 42),
			`Successfully pulled image "busybox" in 1.234s (2s including waiting). Image size: 42 bytes.`},
		{"section 5 step 3 gate on", AlreadyPresentMessage("busybox", true), `Container image "busybox" already present on machine and can be accessed by the pod`},
		{"section 5 step 3 gate off", AlreadyPresentMessage("busybox", false), `Container image "busybox" already present on machine`},
		{"section 10 Failed pull", PullFailedMessage("missing:latest", "404"), `Failed to pull image "missing:latest": 404`},
		{"section 4.2 step 2", ErrorMessage("ErrImagePull"), `Error: ErrImagePull`},
		{"section 4.2 step 4", PreCreateHookFailedMessage("m"), `Internal PreCreateContainer hook failed: m`},
		{"section 4.2 step 5", PreStartHookFailedMessage("m"), `Internal PreStartContainer hook failed: m`},
		{"section 10 pull BackOff", PullBackOffMessage("img"), `Back-off pulling image "img"`},
		{"section 10 ErrImageNeverPull", NeverPullMessage("img"), `Container image "img" is not present with pull policy of Never`},
		{"section 10 InspectFailed", InspectFailedMessage("", "boom"), `Failed to inspect image "": boom`},
		{"section 10 InspectFailed tag", DefaultTagFailedMessage("A:", "bad"), `Failed to apply default image tag "A:": bad`},
		{"section 4.2 step 1", CrashLoopBackOffMessage("foo", "p", "ns", "u"), `Back-off restarting failed container foo in pod p_ns(u)`},
		{"section 3.8 changed", KillMessage(KillChanged, containerstate.Regular, "foo2", true), `Container foo2 definition changed, will be restarted`},
		{"section 3.8 liveness", KillMessage(KillLivenessProbe, containerstate.Regular, "foo2", true), `Container foo2 failed liveness probe, will be restarted`},
		{"section 3.8 liveness Never", KillMessage(KillLivenessProbe, containerstate.Regular, "foo2", false), `Container foo2 failed liveness probe`},
		{"section 3.8 startup", KillMessage(KillStartupProbe, containerstate.Regular, "c", true), `Container c failed startup probe, will be restarted`},
		{"section 3.8 sidecar startup", KillMessage(KillStartupProbe, containerstate.Init, "ri", false), `Init container ri failed startup probe`},
		{"section 3.8 sidecar changed", KillMessage(KillChanged, containerstate.Init, "ri", false), `Init container ri definition changed`},
		{"section 3.8 sidecar liveness", KillMessage(KillLivenessProbe, containerstate.Init, "ri", false), `Init container ri failed liveness probe`},
		{"section 3.8 postStart", KillMessage(KillFailedPostStartHook, containerstate.Regular, "c", true), `FailedPostStartHook`},
		{"section 3.8 reset", KillMessage(KillRestartAllContainers, containerstate.Regular, "c", false), `killing`},
		{"section 3.8 whole pod", KillMessage(KillUnknown, containerstate.Regular, "c", false), `Stopping container c`},
		{"section 10 Unhealthy", ProbeFailedMessage(Liveness, "HTTP probe failed with statuscode: 500"), `Liveness probe failed: HTTP probe failed with statuscode: 500`},
		{"section 10 Unhealthy errored", ProbeErroredMessage(Readiness, "unknown", "boom"), `Readiness probe errored and resulted in unknown state: boom`},
		{"section 10 ProbeWarning", ProbeWarningMessage(Startup, "x"), `Startup probe warning: x`},
		{"section 10 FailedCreatePodSandBox", FailedCreatePodSandBoxMessage("e"), `Failed to create pod sandbox: e`},
		{"section 10 FailedPodSandBoxStatus", FailedPodSandBoxStatusMessage("e"), `Unable to get pod sandbox status: e`},
		{"section 10 FailedPrepareDynamicResources", FailedPrepareDynamicResourcesMessage("e"), `Failed to prepare dynamic resources: e`},
		{"section 10 NetworkNotReady", NetworkNotReadyMessage("e"), `network is not ready: e`},
		{"section 10 FailedMount", FailedMountMessage("e"), `Unable to attach or mount volumes: e`},
		{"PL44", FailedToRetrieveImagePullSecretMessage([]string{"missing"}), `Unable to retrieve some image pull secrets (missing); attempting to pull the image may not succeed.`},
		{"section 10 LifecycleHTTPFallback", LifecycleHTTPFallbackMessage("h:1"), `request to HTTPS lifecycle hook h:1 got HTTP response, retry with HTTP succeeded`},
		{"section 10 FailedKillPod", FailedKillPodMessage("e"), `error killing pod: e`},
		{"section 4.3 FailedSync", FailedSyncMessage("e"), `error determining status: e`},
		{"section 10 field path", FieldPath(containerstate.Init, "i"), `spec.initContainers{i}`},
		{"section 10 field path eph", FieldPath(containerstate.Ephemeral, "d"), `spec.ephemeralContainers{d}`},
		{"section 10 field path regular", FieldPath(containerstate.Regular, "c"), `spec.containers{c}`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.rule, tc.got, tc.want)
		}
	}
}

// TestHookFailedMessage: the waiting message of PostStartHookError as the
// kubelet's handler runner words it, around the runtime's error (oracle
// case "poststart-fails": `Exec lifecycle hook ([init]) for Container "app"
// in Pod "..." failed - error: command 'init' exited with 1: , message: ""`).
func TestHookFailedMessage(t *testing.T) {
	ref := PodRef("web", "ns", "u-1")
	for _, tc := range []struct {
		h    *v1.LifecycleHandler
		want string
	}{
		{&v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"init", "-v"}}},
			`Exec lifecycle hook ([init -v]) for Container "app" in Pod "web_ns(u-1)" failed - error: command 'init -v' exited with 1: , message: "out"`},
		{&v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/start"}},
			`HTTP lifecycle hook (/start) for Container "app" in Pod "web_ns(u-1)" failed - error: command 'init -v' exited with 1: `},
		{&v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 5}},
			`Sleep lifecycle hook (5) for Container "app" in Pod "web_ns(u-1)" failed - error: command 'init -v' exited with 1: `},
		{nil, `command 'init -v' exited with 1: `},
	} {
		if got := HookFailedMessage(tc.h, "app", ref, "command 'init -v' exited with 1: ", "out"); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
