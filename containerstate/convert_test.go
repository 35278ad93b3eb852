package containerstate

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
)

// TestConvertSpecCases traces the case table of spec/containerstate.md
// section 14 (TestConvertToAPIContainerStatuses at v1.37.2).
func TestConvertSpecCases(t *testing.T) {
	running := &v1.ContainerStatus{Name: "a", State: runningState(at(0)), ContainerID: "test://a1", Image: "img-a"}
	initPod := Pod{Spec: &v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init", Image: "img-init"}, {Name: "sidecar", Image: "img-sidecar", RestartPolicy: containerPolicy(v1.ContainerRestartPolicyAlways)}},
		Containers:     []v1.Container{{Name: "a", Image: "img-a"}},
	}}
	initPod.RegularContainerCreated = true
	restartAllPod := onePod(v1.RestartPolicyNever, "a", "b")
	restartAllPod.Spec.Containers[0].RestartPolicy = containerPolicy(v1.ContainerRestartPolicyNever)
	restartAllPod.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{
		exitRule(v1.ContainerRestartRuleActionRestartAllContainers, v1.ContainerRestartRuleOnExitCodesOpIn, 137)}
	restartAllPod.RestartingAllContainers = true
	deleting := onePod(v1.RestartPolicyAlways, "a", "b")
	deleting.Deleting = true

	tests := []struct {
		id     string
		reason string
		in     Input
		want   v1.ContainerStatus
	}{
		{id: "CS01", reason: "a Running container gone from the runtime of a deleted pod gets the unknown lastState, restartCount unchanged",
			in: Input{Pod: deleting, Name: "a", Old: running},
			want: v1.ContainerStatus{Name: "a", Image: "img-a", State: waitingState(ReasonContainerCreating, ""),
				LastTerminationState: terminatedState(137, ReasonContainerStatusUnknown, MessageUnknownDeleted), RestartCount: 0, Started: boolp(false)}},
		{id: "CS02", reason: "same when the pod is not deleted, but restartCount goes up",
			in: Input{Pod: onePod(v1.RestartPolicyAlways, "a", "b"), Name: "a", Old: running},
			want: v1.ContainerStatus{Name: "a", Image: "img-a", State: waitingState(ReasonContainerCreating, ""),
				LastTerminationState: terminatedState(137, ReasonContainerStatusUnknown, MessageUnknownDeleted), RestartCount: 1, Started: boolp(false)}},
		{id: "CS04", reason: "RestartAll gate: a running container whose old Terminated count is not below the runtime's gets old+1, and the old exit as lastState",
			in: Input{Pod: onePod(v1.RestartPolicyAlways, "a", "b"), Name: "a",
				Old:    &v1.ContainerStatus{Name: "a", State: withID(terminatedState(-1, "", ""), "test://old"), ContainerID: "test://old", RestartCount: 5},
				Newest: &Instance{ID: "test://new", State: RuntimeRunning, StartedAt: at(1), Image: "img-a", RestartCount: 0}},
			want: v1.ContainerStatus{Name: "a", Image: "img-a", ContainerID: "test://new", State: runningState(at(1)),
				LastTerminationState: withID(terminatedState(-1, "", ""), "test://old"), RestartCount: 6, Started: boolp(true), Ready: true, Resources: &v1.ResourceRequirements{}}},
		{id: "CS05", reason: "ChangeContainerStatusOnKubeletRestart off: started=true is carried, even past a startup probe without a result",
			in: Input{Pod: Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "a", StartupProbe: &v1.Probe{}}}}}, Name: "a",
				Old:    &v1.ContainerStatus{Name: "a", State: runningState(at(0)), ContainerID: "test://old", Started: boolp(true)},
				Newest: &Instance{ID: "test://old", State: RuntimeRunning, StartedAt: at(0)}},
			want: v1.ContainerStatus{Name: "a", ContainerID: "test://old", State: runningState(at(0)), Started: boolp(true), Ready: true, Resources: &v1.ResourceRequirements{}}},
		{id: "CS07", reason: "a regular init container the runtime no longer has, after a regular container was created, is inferred Completed",
			in:   Input{Pod: initPod, Name: "init", Old: &v1.ContainerStatus{Name: "init", State: waitingState(ReasonPodInitializing, "")}},
			want: v1.ContainerStatus{Name: "init", Image: "img-init", State: terminatedState(0, ReasonCompleted, MessageInitInferred), Started: boolp(false), Ready: true}},
		{id: "CS08", reason: "a sidecar the runtime does not have stays Waiting/PodInitializing",
			in:   Input{Pod: initPod, Name: "sidecar"},
			want: v1.ContainerStatus{Name: "sidecar", Image: "img-sidecar", State: waitingState(ReasonPodInitializing, ""), Started: boolp(false)}},
		{id: "CS10/A", reason: "RestartAll: the exited container keeps its Terminated(137)",
			in: Input{Pod: restartAllPod, Name: "a",
				Newest: &Instance{ID: "test://a1", State: RuntimeExited, ExitCode: 137, Image: "img-a"}},
			want: v1.ContainerStatus{Name: "a", Image: "img-a", ContainerID: "test://a1", State: withID(terminatedState(137, "", ""), "test://a1"), Started: boolp(false), Resources: &v1.ResourceRequirements{}}},
		{id: "CS10/B", reason: "RestartAll: a removed container with old Terminated(42) is Waiting/RestartingAllContainers with the 137 lastState and restartCount+1",
			in: Input{Pod: restartAllPod, Name: "b", Old: &v1.ContainerStatus{Name: "b", State: terminatedState(42, ReasonError, "")}},
			want: v1.ContainerStatus{Name: "b", State: waitingState(ReasonRestartingAllContainers, MessageRestartingAll),
				LastTerminationState: terminatedState(137, ReasonRestartingAllContainers, MessageRestartingAll), RestartCount: 1, Started: boolp(false)}},
		{id: "CS11/A", reason: "RestartAll, runtime empty: old Running becomes Waiting/RestartingAllContainers, restartCount 1",
			in: Input{Pod: restartAllPod, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: runningState(at(0))}},
			want: v1.ContainerStatus{Name: "a", Image: "img-a", State: waitingState(ReasonRestartingAllContainers, MessageRestartingAll),
				LastTerminationState: terminatedState(137, ReasonRestartingAllContainers, MessageRestartingAll), RestartCount: 1, Started: boolp(false)}},
		{id: "CS11/B", reason: "RestartAll, runtime empty: old Terminated(42) too",
			in: Input{Pod: restartAllPod, Name: "b", Old: &v1.ContainerStatus{Name: "b", State: terminatedState(42, "", "")}},
			want: v1.ContainerStatus{Name: "b", State: waitingState(ReasonRestartingAllContainers, MessageRestartingAll),
				LastTerminationState: terminatedState(137, ReasonRestartingAllContainers, MessageRestartingAll), RestartCount: 1, Started: boolp(false)}},
	}
	for _, tt := range tests {
		opts := DefaultOptions()
		opts.UnknownGrace = 0
		got, err := opts.Convert(tt.in)
		if err != nil {
			t.Errorf("%s: %s: unexpected error %v", tt.id, tt.reason, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: %s: mismatch (-want +got):\n%s", tt.id, tt.reason, diff)
		}
	}
}

// TestConvertRules traces the rules of sections 4.1 to 4.4 one by one.
func TestConvertRules(t *testing.T) {
	always := onePod(v1.RestartPolicyAlways, "a")
	never := onePod(v1.RestartPolicyNever, "a")
	onFailure := onePod(v1.RestartPolicyOnFailure, "a")
	withInit := Pod{Spec: &v1.PodSpec{InitContainers: []v1.Container{{Name: "i"}}, Containers: []v1.Container{{Name: "a"}},
		EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug"}}}}}
	exited := func(code int32, reason string) *Instance {
		return &Instance{ID: "c://2", State: RuntimeExited, ExitCode: code, Reason: reason, StartedAt: at(1), FinishedAt: at(2), CreatedAt: at(1), RestartCount: 1}
	}
	crash := &StartError{Reason: ReasonCrashLoopBackOff, Message: "back-off 10s restarting failed container=a pod=web_default(uid-1)"}
	exitedState := func(code int32, reason string) v1.ContainerState {
		return withID(withTimes(terminatedState(code, reason, ""), at(1), at(2)), "c://2")
	}

	tests := []struct {
		rule   string
		reason string
		opts   *Options
		in     Input
		check  func(v1.ContainerStatus) string
	}{
		{rule: "4.1", reason: "no init containers: ContainerCreating, image from the spec",
			in:    Input{Pod: always, Name: "a"},
			check: expect(v1.ContainerStatus{Name: "a", Image: "img-a", State: waitingState(ReasonContainerCreating, ""), Started: boolp(false)})},
		{rule: "4.1", reason: "with init containers every list starts PodInitializing, init containers themselves included",
			in: Input{Pod: withInit, Name: "i"}, check: stateIs(waitingState(ReasonPodInitializing, ""))},
		{rule: "4.1", reason: "ephemeral containers too",
			in: Input{Pod: withInit, Name: "debug"}, check: stateIs(waitingState(ReasonPodInitializing, ""))},
		{rule: "4.1", reason: "an old non-terminated status carries restartCount and lastState",
			in:    Input{Pod: always, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: waitingState("", ""), RestartCount: 3, LastTerminationState: terminatedState(2, ReasonError, "")}},
			check: expect(v1.ContainerStatus{Name: "a", Image: "img-a", State: waitingState(ReasonContainerCreating, ""), RestartCount: 3, LastTerminationState: terminatedState(2, ReasonError, ""), Started: boolp(false)})},
		{rule: "4.2", reason: "an old Terminated status gone from the runtime is kept whole",
			in:    Input{Pod: never, Name: "a", Old: &v1.ContainerStatus{Name: "a", Image: "x", State: terminatedState(3, ReasonError, "boom"), RestartCount: 2}},
			check: expect(v1.ContainerStatus{Name: "a", Image: "x", State: terminatedState(3, ReasonError, "boom"), RestartCount: 2, Started: boolp(false)})},
		{rule: "4.2", reason: "an old Waiting status gone from the runtime keeps the default Waiting, no unknown lastState",
			in:    Input{Pod: always, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: waitingState(ReasonCrashLoopBackOff, "")}},
			check: expect(v1.ContainerStatus{Name: "a", Image: "img-a", State: waitingState(ReasonContainerCreating, ""), Started: boolp(false)})},
		{rule: "4.2", reason: "a disappeared Running container that already has a lastState keeps it and its restartCount",
			in:    Input{Pod: always, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: runningState(at(0)), RestartCount: 4, LastTerminationState: terminatedState(1, ReasonError, "")}},
			check: expect(v1.ContainerStatus{Name: "a", Image: "img-a", State: waitingState(ReasonContainerCreating, ""), RestartCount: 4, LastTerminationState: terminatedState(1, ReasonError, ""), Started: boolp(false)})},
		{rule: "4.3", reason: "created, not started: Waiting with an empty reason",
			in: Input{Pod: always, Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeCreated}}, check: stateIs(waitingState("", ""))},
		{rule: "4.3", reason: "running: Running with startedAt, containerID and image from the runtime",
			in: Input{Pod: always, Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeRunning, StartedAt: at(5), Image: "docker.io/img-a:1", ImageID: "sha256:abc"}},
			check: expect(v1.ContainerStatus{Name: "a", Image: "docker.io/img-a:1", ImageID: "sha256:abc", ContainerID: "c://1", State: runningState(at(5)), Started: boolp(true), Ready: true,
				Resources: &v1.ResourceRequirements{}})},
		{rule: "4.3", reason: "exited: Terminated with the runtime's code, reason, message and times",
			in: Input{Pod: never, Name: "a", Newest: exited(3, ReasonError)}, check: stateIs(exitedState(3, ReasonError))},
		{rule: "4.3", reason: "exited with a negative (Windows) exit code is just an exit code",
			in: Input{Pod: never, Name: "a", Newest: exited(-1073741510, "")}, check: stateIs(exitedState(-1073741510, ""))},
		{rule: "4.3", reason: "UNKNOWN after Running (grace 0): Terminated ContainerStatusUnknown, 137, restartCount+1",
			opts: &Options{Features: DefaultFeatures()},
			in:   Input{Pod: always, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: runningState(at(0)), RestartCount: 2}, Newest: &Instance{ID: "c://1", State: RuntimeUnknown, RestartCount: 2}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(terminatedState(137, ReasonContainerStatusUnknown, MessageUnknownTerminated), s.State), cmp.Diff(int32(3), s.RestartCount))
			}},
		{rule: "4.3 (nodestate grace)", reason: "UNKNOWN after Running within the grace keeps Running, ready false",
			in: Input{Pod: always, Name: "a", Now: at(60), UnknownSince: at(0), Old: &v1.ContainerStatus{Name: "a", State: runningState(at(0)), RestartCount: 2, Ready: true, Started: boolp(true)},
				Newest: &Instance{ID: "c://1", State: RuntimeUnknown, RestartCount: 2}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(runningState(at(0)), s.State), cmp.Diff(false, s.Ready), cmp.Diff(int32(2), s.RestartCount))
			}},
		{rule: "4.3 (nodestate grace)", reason: "UNKNOWN after Running once the grace is over: the kubelet's Terminated",
			in: Input{Pod: always, Name: "a", Now: at(120), UnknownSince: at(0), Old: &v1.ContainerStatus{Name: "a", State: runningState(at(0))},
				Newest: &Instance{ID: "c://1", State: RuntimeUnknown}},
			check: stateIs(terminatedState(137, ReasonContainerStatusUnknown, MessageUnknownTerminated))},
		{rule: "4.3 (nodestate grace)", reason: "grace 0 is the kubelet exactly: Terminated at once, even when UnknownSince is later than Now",
			opts: &Options{Features: DefaultFeatures()},
			in: Input{Pod: always, Name: "a", Now: at(0), UnknownSince: at(10), Old: &v1.ContainerStatus{Name: "a", State: runningState(at(0))},
				Newest: &Instance{ID: "c://1", State: RuntimeUnknown}},
			check: stateIs(terminatedState(137, ReasonContainerStatusUnknown, MessageUnknownTerminated))},
		{rule: "9 started 3-4 (nodestate grace)", reason: "ChangeContainerStatusOnKubeletRestart on: a container held Running through the UNKNOWN grace does not keep its old started=true past a startup probe without a result",
			opts: &Options{Features: Features{ContainerRestartRules: true, RestartAllContainersOnContainerExits: true, ChangeContainerStatusOnKubeletRestart: true}, UnknownGrace: DefaultUnknownGrace},
			in: Input{Pod: Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "a", StartupProbe: &v1.Probe{}}}}}, Name: "a", Now: at(60), UnknownSince: at(0),
				Old:    &v1.ContainerStatus{Name: "a", State: runningState(at(0)), Started: boolp(true), Ready: true},
				Newest: &Instance{ID: "c://1", State: RuntimeUnknown}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(runningState(at(0)), s.State), cmp.Diff(boolp(false), s.Started), cmp.Diff(false, s.Ready))
			}},
		{rule: "4.3", reason: "UNKNOWN while the pod restarts all containers: reason RestartingAllContainers",
			opts: &Options{Features: DefaultFeatures()},
			in: Input{Pod: Pod{Spec: always.Spec, PodFacts: PodFacts{RestartingAllContainers: true}}, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: runningState(at(0))},
				Newest: &Instance{ID: "c://1", State: RuntimeUnknown}},
			check: stateIs(terminatedState(137, ReasonRestartingAllContainers, MessageUnknownTerminated))},
		{rule: "4.3", reason: "UNKNOWN without a Running predecessor: Waiting with an empty reason",
			in: Input{Pod: always, Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeUnknown}}, check: stateIs(waitingState("", ""))},
		{rule: "4.3", reason: "two instances: the previous one's state becomes lastState, whichever order they are given in",
			in: Input{Pod: always, Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeExited, ExitCode: 1, CreatedAt: at(0)},
				Previous: &Instance{ID: "c://2", State: RuntimeRunning, CreatedAt: at(10), StartedAt: at(11), RestartCount: 1}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(runningState(at(11)), s.State), cmp.Diff(withID(terminatedState(1, "", ""), "c://1"), s.LastTerminationState))
			}},
		{rule: "4.3", reason: "RestartAll gate off: a runtime status starts fresh, lastState is not carried",
			opts: &Options{Features: Features{ContainerRestartRules: true}},
			in: Input{Pod: always, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: terminatedState(1, "", ""), RestartCount: 5, ContainerID: "c://1"},
				Newest: &Instance{ID: "c://2", State: RuntimeRunning, RestartCount: 1}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(v1.ContainerState{}, s.LastTerminationState), cmp.Diff(int32(1), s.RestartCount))
			}},
		{rule: "4.3", reason: "RestartAll gate on: restartCount is max(old, runtime) for a non-running container",
			in: Input{Pod: always, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: waitingState("", ""), RestartCount: 7, LastTerminationState: terminatedState(1, "", "")},
				Newest: &Instance{ID: "c://2", State: RuntimeCreated, RestartCount: 2}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(int32(7), s.RestartCount), cmp.Diff(terminatedState(1, "", ""), s.LastTerminationState))
			}},
		{rule: "4.3", reason: "RestartAll gate on: a running container whose old Terminated count equals the runtime's gets old+1",
			in: Input{Pod: always, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: withID(terminatedState(1, ReasonError, ""), "c://1"), ContainerID: "c://1", RestartCount: 3},
				Newest: &Instance{ID: "c://2", State: RuntimeRunning, StartedAt: at(5), RestartCount: 3}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(int32(4), s.RestartCount), cmp.Diff(withID(terminatedState(1, ReasonError, ""), "c://1"), s.LastTerminationState))
			}},
		{rule: "4.3 started preservation / 9", reason: "the prober does not look at ephemeral containers: a running one with no previous status has no started",
			in:    Input{Pod: withInit, Name: "debug", Newest: &Instance{ID: "c://1", State: RuntimeRunning, StartedAt: at(1)}},
			check: func(s v1.ContainerStatus) string { return cmp.Diff((*bool)(nil), s.Started) }},
		{rule: "4.3 started preservation", reason: "ChangeContainerStatusOnKubeletRestart off: a running ephemeral container takes the old started value",
			in: Input{Pod: withInit, Name: "debug", Old: &v1.ContainerStatus{Name: "debug", State: runningState(at(1)), Started: boolp(true)},
				Newest: &Instance{ID: "c://1", State: RuntimeRunning, StartedAt: at(1)}},
			check: func(s v1.ContainerStatus) string { return cmp.Diff(boolp(true), s.Started) }},
		{rule: "4.3 started preservation", reason: "only a running container takes the old started value: an ephemeral container that exited has none",
			in: Input{Pod: withInit, Name: "debug", Old: &v1.ContainerStatus{Name: "debug", State: runningState(at(1)), Started: boolp(true)},
				Newest: &Instance{ID: "c://1", State: RuntimeExited, ExitCode: 1, StartedAt: at(1), FinishedAt: at(2)}},
			check: func(s v1.ContainerStatus) string { return cmp.Diff((*bool)(nil), s.Started) }},
		{rule: "4.3 started preservation", reason: "ChangeContainerStatusOnKubeletRestart on: a running ephemeral container does not take the old started value",
			opts: &Options{Features: Features{ContainerRestartRules: true, RestartAllContainersOnContainerExits: true, ChangeContainerStatusOnKubeletRestart: true}},
			in: Input{Pod: withInit, Name: "debug", Old: &v1.ContainerStatus{Name: "debug", State: runningState(at(1)), Started: boolp(true)},
				Newest: &Instance{ID: "c://1", State: RuntimeRunning, StartedAt: at(1)}},
			check: func(s v1.ContainerStatus) string { return cmp.Diff((*bool)(nil), s.Started) }},
		{rule: "4.3 started preservation", reason: "with ChangeContainerStatusOnKubeletRestart on, started is recomputed: a startup probe without a result is not started",
			opts: &Options{Features: Features{ContainerRestartRules: true, RestartAllContainersOnContainerExits: true, ChangeContainerStatusOnKubeletRestart: true}},
			in: Input{Pod: Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "a", StartupProbe: &v1.Probe{}}}}}, Name: "a",
				Old: &v1.ContainerStatus{Name: "a", State: runningState(at(0)), Started: boolp(true)}, Newest: &Instance{ID: "c://1", State: RuntimeRunning}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(boolp(false), s.Started), cmp.Diff(false, s.Ready))
			}},
		{rule: "4.4.1", reason: "an init container that exited 0 is left alone even with a start error cached",
			in: Input{Pod: withInit, Name: "i", Newest: exited(0, ReasonCompleted), StartError: crash},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(exitedState(0, ReasonCompleted), s.State), cmp.Diff(true, s.Ready), cmp.Diff(boolp(false), s.Started))
			}},
		{rule: "4.4.2", reason: "the init inference needs a regular container to exist",
			in: Input{Pod: withInit, Name: "i"}, check: stateIs(waitingState(ReasonPodInitializing, ""))},
		{rule: "4.4.4", reason: "a restartable exited container shows the cached start error; the exit moves to lastState",
			in: Input{Pod: always, Name: "a", Newest: exited(1, ReasonError), StartError: crash},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(waitingState(crash.Reason, crash.Message), s.State), cmp.Diff(exitedState(1, ReasonError), s.LastTerminationState))
			}},
		{rule: "4.4.3", reason: "a container that will not restart (pod Never) stays Terminated whatever the cache says",
			in: Input{Pod: never, Name: "a", Newest: exited(1, ReasonError), StartError: crash}, check: stateIs(exitedState(1, ReasonError))},
		{rule: "4.4.3 / 3.3", reason: "a pod being deleted restarts nothing, so no start error shows",
			in:    Input{Pod: Pod{Spec: always.Spec, PodFacts: PodFacts{Deleting: true}}, Name: "a", Newest: exited(1, ReasonError), StartError: crash},
			check: stateIs(exitedState(1, ReasonError))},
		{rule: "4.4.3 / 3.3", reason: "a running container never shows a start error",
			in: Input{Pod: always, Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeRunning}, StartError: crash}, check: stateIs(runningState(time.Time{}))},
		{rule: "4.4.4", reason: "no cached error: the default Waiting stays",
			in: Input{Pod: always, Name: "a"}, check: stateIs(waitingState(ReasonContainerCreating, ""))},
		{rule: "4.4.4", reason: "a start error shows over the default Waiting of a container never created",
			in:    Input{Pod: always, Name: "a", StartError: &StartError{Reason: ReasonErrImagePull, Message: "pull access denied"}},
			check: stateIs(waitingState(ReasonErrImagePull, "pull access denied"))},
		{rule: "3.3 gate off", reason: "ContainerRestartRules off: an exit 0 under pod OnFailure is not restarted, even with a container policy Always",
			opts: &Options{},
			in: Input{Pod: Pod{Spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyOnFailure, Containers: []v1.Container{{Name: "a", RestartPolicy: containerPolicy(v1.ContainerRestartPolicyAlways)}}}},
				Name: "a", Newest: exited(0, ReasonCompleted), StartError: crash},
			check: stateIs(exitedState(0, ReasonCompleted))},
		{rule: "3.3 gate on", reason: "ContainerRestartRules on: the container policy Always restarts the same exit",
			in: Input{Pod: Pod{Spec: &v1.PodSpec{RestartPolicy: v1.RestartPolicyOnFailure, Containers: []v1.Container{{Name: "a", RestartPolicy: containerPolicy(v1.ContainerRestartPolicyAlways)}}}},
				Name: "a", Newest: exited(0, ReasonCompleted), StartError: crash},
			check: stateIs(waitingState(crash.Reason, crash.Message))},
		{rule: "12.1 gate off", reason: "ContainerRestartRules off: a Terminated(0) status under pod OnFailure may not leave Terminated, so a cached start error for a container the runtime no longer lists does not show",
			opts:  &Options{},
			in:    Input{Pod: onFailure, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: terminatedState(0, ReasonCompleted, ""), RestartCount: 1}, StartError: crash},
			check: stateIs(terminatedState(0, ReasonCompleted, ""))},
		{rule: "12.1 gate off", reason: "ContainerRestartRules off: a Terminated(1) status under pod OnFailure may leave Terminated: the cached start error shows, the exit in lastState",
			opts: &Options{},
			in:   Input{Pod: onFailure, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: terminatedState(1, ReasonError, ""), RestartCount: 1}, StartError: crash},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(waitingState(crash.Reason, crash.Message), s.State), cmp.Diff(terminatedState(1, ReasonError, ""), s.LastTerminationState))
			}},
		{rule: "12.1 gate off", reason: "ContainerRestartRules off: under pod Never even a non-zero exit may not leave Terminated",
			opts:  &Options{},
			in:    Input{Pod: never, Name: "a", Old: &v1.ContainerStatus{Name: "a", State: terminatedState(1, ReasonError, ""), RestartCount: 1}, StartError: crash},
			check: stateIs(terminatedState(1, ReasonError, ""))},
	}
	for _, tt := range tests {
		opts := DefaultOptions()
		if tt.opts != nil {
			opts = *tt.opts
		}
		got, err := opts.Convert(tt.in)
		if err != nil {
			t.Errorf("rule %s: %s: unexpected error %v", tt.rule, tt.reason, err)
			continue
		}
		if d := tt.check(got); d != "" {
			t.Errorf("rule %s: %s: mismatch (-want +got):\n%s", tt.rule, tt.reason, d)
		}
	}
}

func expect(want v1.ContainerStatus) func(v1.ContainerStatus) string {
	return func(got v1.ContainerStatus) string { return cmp.Diff(want, got) }
}

func stateIs(want v1.ContainerState) func(v1.ContainerStatus) string {
	return func(got v1.ContainerStatus) string { return cmp.Diff(want, got.State) }
}

func firstDiff(diffs ...string) string {
	for _, d := range diffs {
		if d != "" {
			return d
		}
	}
	return ""
}

// TestProbes traces section 9: started and ready.
func TestProbes(t *testing.T) {
	probe := &v1.Probe{}
	spec := &v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init"}, {Name: "side", RestartPolicy: containerPolicy(v1.ContainerRestartPolicyAlways), ReadinessProbe: probe}},
		Containers:     []v1.Container{{Name: "plain"}, {Name: "startup", StartupProbe: probe}, {Name: "ready", ReadinessProbe: probe}},
	}
	pod := Pod{Spec: spec}
	run := &Instance{ID: "c://1", State: RuntimeRunning, StartedAt: at(0)}
	tests := []struct {
		rule          string
		reason        string
		name          string
		inst          *Instance
		old           *v1.ContainerStatus
		probes        Probes
		started, read bool
	}{
		{rule: "9 started 1", reason: "not running is not started", name: "plain", inst: &Instance{ID: "c://1", State: RuntimeCreated}},
		{rule: "9 started 2", reason: "a startup probe success starts it", name: "startup", inst: run, probes: Probes{Startup: ProbeSuccess}, started: true, read: true},
		{rule: "9 started 2", reason: "a startup failure beats a carried started=true", name: "startup", inst: run, probes: Probes{Startup: ProbeFailure},
			old: &v1.ContainerStatus{Name: "startup", State: runningState(at(0)), Started: boolp(true)}},
		{rule: "9 started 4", reason: "a startup probe with no result yet: not started, so not ready", name: "startup", inst: run},
		{rule: "9 started 5", reason: "no startup probe: started at once", name: "plain", inst: run, started: true, read: true},
		{rule: "9 ready 2", reason: "readiness success", name: "ready", inst: run, probes: Probes{Readiness: ProbeSuccess}, started: true, read: true},
		{rule: "9 ready 3", reason: "a readiness probe that has not run yet: not ready", name: "ready", inst: run, started: true},
		{rule: "9 ready 3", reason: "a failed readiness probe: not ready", name: "ready", inst: run, probes: Probes{Readiness: ProbeFailure}, started: true},
		{rule: "9 ready 4", reason: "kubelet-restart grace: started more than 10s before the kubelet, pod Ready: ready",
			name: "ready", inst: run, probes: Probes{KubeletStartedAt: at(11), PodReady: true}, started: true, read: true},
		{rule: "9 ready 4", reason: "kubelet-restart grace: the pod is not Ready, so a probed container is not",
			name: "ready", inst: run, probes: Probes{KubeletStartedAt: at(11)}, started: true},
		{rule: "9 ready 4", reason: "kubelet-restart grace: started only 10s before the kubelet is too recent",
			name: "ready", inst: run, probes: Probes{KubeletStartedAt: at(10), PodReady: true}, started: true},
		{rule: "9 ready (sidecar)", reason: "a sidecar follows its readiness probe", name: "side", inst: run, probes: Probes{Readiness: ProbeSuccess}, started: true, read: true},
		{rule: "9 ready (init)", reason: "a regular init container is ready only once it exited 0, and is then not started",
			name: "init", inst: &Instance{ID: "c://1", State: RuntimeExited, ExitCode: 0}, read: true},
		{rule: "9 ready (init)", reason: "a running regular init container is started but not ready", name: "init", inst: run, started: true},
		{rule: "9 ready (init)", reason: "a failed regular init container is not ready", name: "init", inst: &Instance{ID: "c://1", State: RuntimeExited, ExitCode: 1}},
	}
	for _, tt := range tests {
		got, err := Convert(Input{Pod: pod, Name: tt.name, Newest: tt.inst, Old: tt.old, Probes: tt.probes})
		if err != nil {
			t.Fatalf("rule %s: %v", tt.rule, err)
		}
		if got.Started == nil || *got.Started != tt.started || got.Ready != tt.read {
			t.Errorf("rule %s: %s: started=%v ready=%v, want started=%v ready=%v", tt.rule, tt.reason, got.Started, got.Ready, tt.started, tt.read)
		}
	}
}

func TestConvertBadInput(t *testing.T) {
	pod := onePod(v1.RestartPolicyAlways, "a")
	tests := []struct {
		reason string
		opts   Options
		in     Input
		want   error
	}{
		{reason: "nil pod spec", opts: DefaultOptions(), in: Input{Name: "a"}, want: ErrNilPodSpec},
		{reason: "a status for a container the spec lacks", opts: DefaultOptions(), in: Input{Pod: pod, Name: "ghost"}, want: ErrNotInSpec},
		{reason: "an instance without an ID", opts: DefaultOptions(), in: Input{Pod: pod, Name: "a", Newest: &Instance{State: RuntimeRunning}}, want: ErrNoContainerID},
		{reason: "an undefined runtime state", opts: DefaultOptions(), in: Input{Pod: pod, Name: "a", Newest: &Instance{ID: "c://1", State: 9}}, want: ErrRuntimeState},
		{reason: "a negative UNKNOWN grace", opts: Options{UnknownGrace: -time.Second}, in: Input{Pod: pod, Name: "a"}, want: ErrInvalidOptions},
	}
	for _, tt := range tests {
		_, err := tt.opts.Convert(tt.in)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.reason, err, tt.want)
		}
	}
	var ie *InputError
	if _, err := Convert(Input{Pod: pod, Name: "ghost"}); !errors.As(err, &ie) || ie.Container != "ghost" {
		t.Errorf("want an *InputError naming the container, got %v", err)
	} else if want := `containerstate: container not in pod spec: container "ghost"`; ie.Error() != want {
		t.Errorf("the *InputError's message is %q, want %q", ie.Error(), want)
	}
	var oe *OptionError
	if _, err := (Options{UnknownGrace: -time.Second}).Convert(Input{Pod: pod, Name: "a"}); !errors.As(err, &oe) {
		t.Errorf("want an *OptionError for a negative grace, got %v", err)
	} else if d := cmp.Diff([]error{ErrInvalidOptions}, oe.Unwrap(), cmpopts.EquateErrors()); d != "" {
		t.Errorf("an *OptionError without an underlying error unwraps to ErrInvalidOptions alone (-want +got):\n%s", d)
	}
}

// TestKindString: each kind names the pod-spec list it comes from, and a
// value outside the three is printed, not indexed.
func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{
		Regular: "container", Init: "init container", Ephemeral: "ephemeral container",
		Ephemeral + 1: "Kind(?)", 255: "Kind(?)",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

// TestConvertLonePrevious: an instance given as Previous without a Newest is
// the newest one (Input's contract), not ignored.
func TestConvertLonePrevious(t *testing.T) {
	pod := onePod(v1.RestartPolicyAlways, "a")
	inst := &Instance{ID: "c://1", State: RuntimeRunning, CreatedAt: at(0), StartedAt: at(1)}
	want, err := DefaultOptions().Convert(Input{Pod: pod, Name: "a", Newest: inst})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DefaultOptions().Convert(Input{Pod: pod, Name: "a", Previous: inst})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("a lone Previous converts as Newest (-newest +previous):\n%s", d)
	}
}
