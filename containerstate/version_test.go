package containerstate

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/kubeversion"
)

// TestDefaultsForVersion: the version-less defaults are the zero Version's,
// 1.37's, and each gate default is the one docs/versions.md gives per minor.
func TestDefaultsForVersion(t *testing.T) {
	if DefaultFeatures() != DefaultFeaturesFor(kubeversion.Version(0)) || DefaultOptions() != DefaultOptionsFor(kubeversion.V1_37) ||
		DefaultCrashLoopOptions() != DefaultCrashLoopOptionsFor(kubeversion.Default) {
		t.Fatal("the version-less defaults are not 1.37's")
	}
	tests := []struct {
		v     kubeversion.Version
		rules bool // CS-V1
		all   bool // CS-V2
		reset bool // CS-V3
		max   bool // CS-V4
		pod   bool // PP-V6
	}{
		{kubeversion.V1_33, false, false, true, false, false},
		{kubeversion.V1_34, false, false, true, false, false},
		{kubeversion.V1_35, true, false, false, true, false},
		{kubeversion.V1_36, true, true, false, true, true},
		{kubeversion.V1_37, true, true, false, true, true},
	}
	for _, tt := range tests {
		f := DefaultFeaturesFor(tt.v)
		// InPlacePodVerticalScaling and SupplementalGroupsPolicy are on in
		// every supported minor, ContainerStopSignals in none.
		want := Features{ContainerRestartRules: tt.rules, RestartAllContainersOnContainerExits: tt.all, ChangeContainerStatusOnKubeletRestart: tt.reset,
			InPlacePodVerticalScaling: true, InPlacePodLevelResourcesVerticalScaling: tt.pod, SupplementalGroupsPolicy: true}
		if f != want {
			t.Errorf("DefaultFeaturesFor(%v) = %+v; want %+v", tt.v, f, want)
		}
		if o := DefaultOptionsFor(tt.v); o.Features != want || o.UnknownGrace != DefaultUnknownGrace || o.Version != tt.v {
			t.Errorf("DefaultOptionsFor(%v) = %+v", tt.v, o)
		}
		if c := DefaultCrashLoopOptionsFor(tt.v); c != (CrashLoopOptions{KubeletCrashLoopBackOffMax: tt.max}) {
			t.Errorf("DefaultCrashLoopOptionsFor(%v) = %+v", tt.v, c)
		}
	}
}

// TestVersionDifferences shows each containerstate row of docs/versions.md
// as the two behaviours: the old minor's and 1.37's.
func TestVersionDifferences(t *testing.T) {
	// CS-V1: a container Never policy in an Always pod. 1.37 reads it; before
	// 1.35 the pod policy decides (the API server drops the field there).
	ownNever := onePod(v1.RestartPolicyAlways, "a")
	ownNever.Spec.Containers[0].RestartPolicy = containerPolicy(v1.ContainerRestartPolicyNever)
	exitedOnce := func(v kubeversion.Version) (v1.ContainerStatus, error) {
		m, err := NewMachine(DefaultOptionsFor(v), ownNever, "a")
		if err != nil {
			return v1.ContainerStatus{}, err
		}
		for _, ev := range []Event{
			{Kind: Started, At: at(1), ContainerID: "test://a1"},
			ExitedEvent(at(2), "test://a1", 1),
			{Kind: Started, At: at(3), ContainerID: "test://a2"},
		} {
			if err := m.Step(ev); err != nil {
				return m.Status(), err
			}
		}
		return m.Status(), nil
	}

	// CS-V2: a pod restarting all its containers after container a exited
	// with 137 under a RestartAllContainers rule; container b last exited 42.
	restartAll := onePod(v1.RestartPolicyNever, "a", "b")
	restartAll.Spec.Containers[0].RestartPolicy = containerPolicy(v1.ContainerRestartPolicyNever)
	restartAll.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{
		exitRule(v1.ContainerRestartRuleActionRestartAllContainers, v1.ContainerRestartRuleOnExitCodesOpIn, 137)}
	restartAll.RestartingAllContainers = true
	restartAllB := Input{Pod: restartAll, Name: "b", Old: &v1.ContainerStatus{Name: "b", State: terminatedState(42, ReasonError, "")}}

	// CS-V3: a running container with a startup probe and no result yet,
	// reported started before the kubelet restarted.
	afterKubeletRestart := Input{Pod: Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "a", StartupProbe: &v1.Probe{}}}}}, Name: "a",
		Old:    &v1.ContainerStatus{Name: "a", State: runningState(at(0)), ContainerID: "test://a1", Started: boolp(true)},
		Newest: &Instance{ID: "test://a1", State: RuntimeRunning, StartedAt: at(0)}}

	convert := func(v kubeversion.Version, in Input) v1.ContainerStatus {
		t.Helper()
		o := DefaultOptionsFor(v)
		o.UnknownGrace = 0
		s, err := o.Convert(in)
		if err != nil {
			t.Fatalf("%v: Convert: %v", v, err)
		}
		return s
	}

	t.Run("CS-V1", func(t *testing.T) {
		s, err := exitedOnce(kubeversion.V1_34)
		if err != nil || s.State.Running == nil || s.RestartCount != 1 {
			t.Errorf("1.34: the container runs again after exit 1 (pod policy Always); got %v, restartCount %d, err %v", s.State, s.RestartCount, err)
		}
		s, err = exitedOnce(kubeversion.V1_37)
		if !errors.Is(err, ErrInvalidInput) || s.State.Terminated == nil || s.State.Terminated.ExitCode != 1 {
			t.Errorf("1.37: the container's own policy Never forbids a new instance; got %v, err %v", s.State, err)
		}
	})
	t.Run("CS-V2", func(t *testing.T) {
		want37 := v1.ContainerStatus{Name: "b", State: waitingState(ReasonRestartingAllContainers, MessageRestartingAll),
			LastTerminationState: terminatedState(137, ReasonRestartingAllContainers, MessageRestartingAll), RestartCount: 1, Started: boolp(false)}
		if diff := cmp.Diff(want37, convert(kubeversion.V1_37, restartAllB)); diff != "" {
			t.Errorf("1.37: container b is restarted in place (-want +got):\n%s", diff)
		}
		for _, v := range []kubeversion.Version{kubeversion.V1_35, kubeversion.V1_36} {
			got := convert(v, restartAllB)
			wantRestarting := v == kubeversion.V1_36
			if isRestarting := got.State.Waiting != nil && got.State.Waiting.Reason == ReasonRestartingAllContainers; isRestarting != wantRestarting {
				t.Errorf("%v: restarting all containers = %v, want %v; got %v", v, isRestarting, wantRestarting, got.State)
			}
		}
		want35 := v1.ContainerStatus{Name: "b", State: terminatedState(42, ReasonError, ""), Started: boolp(false)}
		if diff := cmp.Diff(want35, convert(kubeversion.V1_35, restartAllB)); diff != "" {
			t.Errorf("1.35: no in-place restart, b stays Terminated(42) under pod policy Never (-want +got):\n%s", diff)
		}
	})
	t.Run("CS-V2/restartCount", func(t *testing.T) {
		// The newest instance (restart 1) is gone from the runtime; the
		// previous one (restart 0) is still listed. Without the gate the
		// kubelet reports the runtime's count, with it the larger of the
		// old status's and the runtime's.
		in := Input{Pod: onePod(v1.RestartPolicyAlways, "a"), Name: "a",
			Old:    &v1.ContainerStatus{Name: "a", ContainerID: "test://a2", RestartCount: 1, State: withID(terminatedState(1, ReasonError, ""), "test://a2")},
			Newest: &Instance{ID: "test://a1", State: RuntimeExited, ExitCode: 1, Reason: ReasonError, RestartCount: 0}}
		if got := convert(kubeversion.V1_35, in).RestartCount; got != 0 {
			t.Errorf("1.35: restartCount %d; want the runtime's 0", got)
		}
		if got := convert(kubeversion.V1_37, in).RestartCount; got != 1 {
			t.Errorf("1.37: restartCount %d; want the old status's 1", got)
		}
	})
	t.Run("CS-V3", func(t *testing.T) {
		if s := convert(kubeversion.V1_37, afterKubeletRestart); s.Started == nil || !*s.Started {
			t.Errorf("1.37: started is kept across the kubelet restart; got %v", s.Started)
		}
		for _, v := range []kubeversion.Version{kubeversion.V1_33, kubeversion.V1_34} {
			if s := convert(v, afterKubeletRestart); s.Started == nil || *s.Started {
				t.Errorf("%v: started starts over until the startup probe succeeds; got %v", v, s.Started)
			}
		}
	})
	t.Run("CS-V6", func(t *testing.T) {
		// A regular init container the runtime no longer lists, after a
		// regular container was created (a static pod after a kubelet
		// restart, or a status lost on the way to the API server).
		pod := Pod{Spec: &v1.PodSpec{InitContainers: []v1.Container{{Name: "init", Image: "img-init"}}, Containers: []v1.Container{{Name: "a"}}}}
		pod.RegularContainerCreated = true
		in := Input{Pod: pod, Name: "init", Old: &v1.ContainerStatus{Name: "init", State: waitingState(ReasonPodInitializing, "")}}
		want37 := v1.ContainerStatus{Name: "init", Image: "img-init", State: terminatedState(0, ReasonCompleted, MessageInitInferred), Started: boolp(false), Ready: true}
		if diff := cmp.Diff(want37, convert(kubeversion.V1_37, in)); diff != "" {
			t.Errorf("1.37: inferred Completed (-want +got):\n%s", diff)
		}
		if got := convert(kubeversion.V1_36, in); got.State.Terminated == nil {
			t.Errorf("1.36: inferred Completed; got %v", got.State)
		}
		want35 := v1.ContainerStatus{Name: "init", Image: "img-init", State: waitingState(ReasonPodInitializing, ""), Started: boolp(false)}
		if diff := cmp.Diff(want35, convert(kubeversion.V1_35, in)); diff != "" {
			t.Errorf("1.35: stays Waiting/PodInitializing (-want +got):\n%s", diff)
		}
	})
	t.Run("CS-V7", func(t *testing.T) {
		// Container b of the CS-V2 pod after the in-place restart: the
		// runtime removed its old instance and lists only the new one.
		// RestartAllContainersOnContainerExits is turned on by hand in 1.35,
		// where it is alpha.
		withGate := func(v kubeversion.Version, gate bool, in Input) v1.ContainerStatus {
			t.Helper()
			o := DefaultOptionsFor(v)
			o.UnknownGrace = 0
			o.Features.RestartAllContainersOnContainerExits = gate
			s, err := o.Convert(in)
			if err != nil {
				t.Fatalf("%v: Convert: %v", v, err)
			}
			return s
		}
		pod := restartAll
		pod.RestartingAllContainers = false
		running := v1.ContainerStatus{Name: "b", Image: "img-b", ContainerID: "test://b2", State: runningState(at(5)),
			Started: boolp(true), Ready: true, RestartCount: 1, Resources: &v1.ResourceRequirements{}}

		// The old status is the Terminated one of the removed instance b1.
		fromTerminated := Input{Pod: pod, Name: "b", Newest: &Instance{ID: "test://b2", State: RuntimeRunning, StartedAt: at(5), Image: "img-b", RestartCount: 1},
			Now: at(6), Old: &v1.ContainerStatus{Name: "b", ContainerID: "test://b1", State: withID(terminatedState(42, ReasonError, ""), "test://b1")}}
		want37 := running
		want37.LastTerminationState = withID(terminatedState(42, ReasonError, ""), "test://b1")
		for _, v := range []kubeversion.Version{kubeversion.V1_36, kubeversion.V1_37} {
			if diff := cmp.Diff(want37, withGate(v, true, fromTerminated)); diff != "" {
				t.Errorf("%v: the new instance's lastState is b1's termination (-want +got):\n%s", v, diff)
			}
		}
		if diff := cmp.Diff(running, withGate(kubeversion.V1_35, true, fromTerminated)); diff != "" {
			t.Errorf("1.35, gate on: no lastState, b1's termination is gone with its instance (-want +got):\n%s", diff)
		}

		// The old status is the Waiting one of the restart, with the
		// RestartingAllContainers termination in lastState; the runtime's
		// count of the new instance starts over.
		fromWaiting := Input{Pod: pod, Name: "b", Newest: &Instance{ID: "test://b2", State: RuntimeRunning, StartedAt: at(5), Image: "img-b"},
			Now: at(6), Old: &v1.ContainerStatus{Name: "b", ContainerID: "test://b1", RestartCount: 1,
				State:                waitingState(ReasonRestartingAllContainers, MessageRestartingAll),
				LastTerminationState: terminatedState(137, ReasonRestartingAllContainers, MessageRestartingAll)}}
		want37 = running
		want37.LastTerminationState = terminatedState(137, ReasonRestartingAllContainers, MessageRestartingAll)
		if diff := cmp.Diff(want37, withGate(kubeversion.V1_37, true, fromWaiting)); diff != "" {
			t.Errorf("1.37: lastState carried from the old status (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(running, withGate(kubeversion.V1_35, true, fromWaiting)); diff != "" {
			t.Errorf("1.35, gate on: restartCount carried (max of old and runtime), lastState not (-want +got):\n%s", diff)
		}
		gateOff := running
		gateOff.RestartCount = 0
		if diff := cmp.Diff(gateOff, withGate(kubeversion.V1_35, false, fromWaiting)); diff != "" {
			t.Errorf("1.35, gate off (its default): the runtime's restartCount, no lastState (-want +got):\n%s", diff)
		}
	})
	// CS-V8 and CS-V9: a running container's resources. Its spec asks for
	// 100m CPU and 1Gi of memory, with a 500m CPU limit.
	resources := func(v kubeversion.Version, report *ActuatedResources) *v1.ResourceRequirements {
		t.Helper()
		pod := resPod(v1.ResourceRequirements{Requests: list("cpu", "100m", "memory", "1Gi"), Limits: list("cpu", "500m")})
		s, err := DefaultOptionsFor(v).Convert(Input{Pod: pod, Name: "ctr0", Newest: &Instance{ID: "c://1", State: RuntimeRunning, Resources: report},
			Old: &v1.ContainerStatus{Name: "ctr0", ContainerID: "c://1", State: runningState(at(0)),
				Resources: &v1.ResourceRequirements{Requests: list("cpu", "200m", "memory", "1Gi"), Limits: list("cpu", "700m")}}})
		if err != nil {
			t.Fatalf("%v: Convert: %v", v, err)
		}
		return s.Resources
	}
	t.Run("CS-V8", func(t *testing.T) {
		// A runtime reporting a memory request of 2Gi (a CRI runtime never
		// does; the kubelet completes one from its record from 1.35).
		report := &ActuatedResources{CPURequest: milli(100), CPULimit: milli(500), MemoryRequest: qty("2Gi")}
		for _, v := range kubeversion.Supported() {
			want := "2Gi"
			if !v.AtLeast(kubeversion.V1_35) {
				want = "1Gi" // the kubelet's own record of what it applied: the allocated request
			}
			if got := resources(v, report).Requests[v1.ResourceMemory]; got.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%v: memory request %v, want %s", v, &got, want)
			}
		}
	})
	t.Run("CS-V9", func(t *testing.T) {
		// A runtime reporting nothing for the same running instance.
		for _, v := range kubeversion.Supported() {
			want := &v1.ResourceRequirements{Requests: list("cpu", "100m", "memory", "1Gi"), Limits: list("cpu", "500m", "memory", "0")}
			if !v.AtLeast(kubeversion.V1_35) {
				// Nothing completes the report: what the runtime does not
				// say is the old status's (the memory request the record's).
				want = &v1.ResourceRequirements{Requests: list("cpu", "200m", "memory", "1Gi"), Limits: list("cpu", "700m")}
			}
			if d := cmp.Diff(want, resources(v, nil), cmpQuantities); d != "" {
				t.Errorf("%v: resources (-want +got):\n%s", v, d)
			}
		}
	})
	t.Run("CS-V4", func(t *testing.T) {
		for _, tc := range []struct {
			v   kubeversion.Version
			max time.Duration
		}{{kubeversion.V1_34, CrashLoopMax}, {kubeversion.V1_37, time.Minute}} {
			c := DefaultCrashLoopOptionsFor(tc.v)
			c.MaxContainerRestartPeriod = time.Minute
			b, err := c.BackoffOptions()
			if err != nil || b.Max != tc.max || b.Initial != CrashLoopInitial {
				t.Errorf("%v with maxContainerRestartPeriod 1m: %+v, %v; want max %v", tc.v, b, err, tc.max)
			}
			d, _ := DefaultCrashLoopOptionsFor(tc.v).BackoffOptions()
			if d != (BackoffOptions{Initial: CrashLoopInitial, Max: CrashLoopMax, ResetAfter: CrashLoopReset}) {
				t.Errorf("%v: default back-off %+v; want 10s to 300s in every minor", tc.v, d)
			}
		}
	})
}

// TestInvalidVersionRefused: every entry point that validates Options
// refuses a Version that is none of kubeversion's constants, with an
// *OptionError naming the field and the value that matches both
// ErrInvalidOptions and kubeversion.ErrUnsupportedVersion, instead of
// treating it as 1.37.
func TestInvalidVersionRefused(t *testing.T) {
	pod := onePod(v1.RestartPolicyAlways, "a")
	bad := DefaultOptions()
	bad.Version = kubeversion.Version(99)
	tests := []struct {
		name string
		opts Options
		call func(Options) error
		ok   bool
	}{
		{"NewMachine: invalid Version refused", bad, func(o Options) error { _, err := NewMachine(o, pod, "a"); return err }, false},
		{"Convert: invalid Version refused", bad, func(o Options) error { _, err := o.Convert(Input{Pod: pod, Name: "a"}); return err }, false},
		{"NewMachine: DefaultOptionsFor(invalid) keeps the Version and is refused", DefaultOptionsFor(kubeversion.Version(5)),
			func(o Options) error { _, err := NewMachine(o, pod, "a"); return err }, false},
		{"NewMachine: the oldest supported Version accepted", DefaultOptionsFor(kubeversion.Oldest),
			func(o Options) error { _, err := NewMachine(o, pod, "a"); return err }, true},
		{"Convert: the zero Version accepted", Options{}, func(o Options) error { _, err := o.Convert(Input{Pod: pod, Name: "a"}); return err }, true},
	}
	for _, tt := range tests {
		err := tt.call(tt.opts)
		if tt.ok {
			if err != nil {
				t.Errorf("%s: error %v", tt.name, err)
			}
			continue
		}
		var oe *OptionError
		var ve *kubeversion.ValueError
		if !errors.Is(err, ErrInvalidOptions) || !errors.Is(err, kubeversion.ErrUnsupportedVersion) ||
			!errors.As(err, &oe) || oe.Field != "Version" || !errors.As(err, &ve) || ve.Version != tt.opts.Version {
			t.Errorf("%s: error %v; want an *OptionError on Version matching ErrInvalidOptions and ErrUnsupportedVersion", tt.name, err)
		}
	}
	want := "containerstate: invalid options: Version: unsupported Kubernetes version kubeversion.Version(99): supported are 1.33 to 1.37"
	if _, err := NewMachine(bad, pod, "a"); err == nil || err.Error() != want {
		t.Errorf("error text %v; want %s", err, want)
	}
}

// TestVersionCSV5 shows row CS-V5 of docs/versions.md: the API server's
// container status transition check (spec/containerstate.md section 12.1)
// by minor, through Options.ValidateStatusTransition.
func TestVersionCSV5(t *testing.T) {
	onFailure := containerPolicy(v1.ContainerRestartPolicyOnFailure)
	failedThenRunning := func(init bool) (*v1.PodSpec, *v1.PodStatus, *v1.PodStatus) {
		spec := &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "a"}}}
		old := podStatus(nil, []v1.ContainerStatus{named("a", terminatedState(1, ReasonError, ""))})
		new := podStatus(nil, []v1.ContainerStatus{named("a", runningState(at(1)))})
		if init {
			spec.InitContainers = []v1.Container{{Name: "i"}}
			old = podStatus([]v1.ContainerStatus{named("i", terminatedState(1, ReasonError, ""))}, nil)
			new = podStatus([]v1.ContainerStatus{named("i", runningState(at(1)))}, nil)
		}
		return spec, old, new
	}
	type check struct {
		v       kubeversion.Version
		gateOn  bool // ContainerRestartRules turned on by hand
		allowed bool
	}
	tests := []struct {
		name   string
		init   bool
		checks []check
	}{
		// A regular container with its own restartPolicy OnFailure in a
		// pod with policy Never fails and is reported Running again.
		{"CS-V5 regular", false, []check{
			{kubeversion.V1_33, false, false}, // pod policy only
			{kubeversion.V1_33, true, false},  // the gate does not exist in 1.33
			{kubeversion.V1_34, false, false}, // gate off: pod policy
			{kubeversion.V1_34, true, true},   // gate on: ContainerShouldRestart
			{kubeversion.V1_35, false, true},  // gate on by default; and the old spec uses the policy
			{kubeversion.V1_37, false, true},
		}},
		// The same with a regular init container: 1.34's gate branch
		// covers regular containers only.
		{"CS-V5 init", true, []check{
			{kubeversion.V1_33, false, false},
			{kubeversion.V1_34, true, false},
			{kubeversion.V1_35, false, true},
			{kubeversion.V1_37, false, true},
		}},
	}
	for _, tt := range tests {
		for _, c := range tt.checks {
			spec, old, new := failedThenRunning(tt.init)
			if tt.init {
				spec.InitContainers[0].RestartPolicy = onFailure
			} else {
				spec.Containers[0].RestartPolicy = onFailure
			}
			o := DefaultOptionsFor(c.v)
			if c.gateOn {
				o.Features.ContainerRestartRules = true
			}
			err := o.ValidateStatusTransition(spec, old, new)
			if (err == nil) != c.allowed || (err != nil && !errors.Is(err, ErrTransition)) {
				t.Errorf("%s: %v (ContainerRestartRules %v): error %v, want allowed %v", tt.name, c.v, o.Features.ContainerRestartRules, err, c.allowed)
			}
		}
	}
	// Without a Version the Features method is 1.37's rule.
	spec, old, new := failedThenRunning(true)
	spec.InitContainers[0].RestartPolicy = onFailure
	if err := DefaultFeaturesFor(kubeversion.V1_34).ValidateStatusTransition(spec, old, new); err != nil {
		t.Errorf("Features.ValidateStatusTransition applies 1.37's rule (the old spec uses a container policy); got %v", err)
	}
}
