package podphase

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
)

// TestDefaultOptionsFor: DefaultOptions is the zero Version's, and each
// minor gets containerstate's gates and its own Version.
func TestDefaultOptionsFor(t *testing.T) {
	if DefaultOptions() != DefaultOptionsFor(kubeversion.Version(0)) || DefaultOptions().Version != kubeversion.V1_37 {
		t.Fatalf("DefaultOptions() = %+v; want 1.37's", DefaultOptions())
	}
	for _, v := range kubeversion.Supported() {
		if o := DefaultOptionsFor(v); o.Features != containerstate.DefaultFeaturesFor(v) || o.Version != v {
			t.Errorf("DefaultOptionsFor(%v) = %+v", v, o)
		}
	}
}

// TestVersionDifferences shows each podphase row of docs/versions.md as the
// two behaviours: the old minor's and 1.37's.
func TestVersionDifferences(t *testing.T) {
	v37 := DefaultOptionsFor(kubeversion.V1_37)

	t.Run("PP-V1", func(t *testing.T) {
		// A container whose own policy is Never exited 42 in an Always pod.
		pod := podOf(t, specOf(v1.RestartPolicyAlways, nil, withPolicy(ctr("a"), v1.ContainerRestartPolicyNever)), "a:T42")
		if got := DefaultOptionsFor(kubeversion.V1_34).Phase(pod); got != v1.PodRunning {
			t.Errorf("1.34: the pod policy Always restarts it, phase Running; got %v", got)
		}
		if got := v37.Phase(pod); got != v1.PodFailed {
			t.Errorf("1.37: the container's own Never makes it final, phase Failed; got %v", got)
		}
	})

	t.Run("PP-V2", func(t *testing.T) {
		// A container restarting in place after a RestartAllContainers exit.
		spec := specOf(v1.RestartPolicyNever, nil,
			withRule(withPolicy(ctr("a"), v1.ContainerRestartPolicyNever), v1.ContainerRestartRuleActionRestartAllContainers, 137))
		pod := podOf(t, spec, "a:WRA")
		v35 := DefaultOptionsFor(kubeversion.V1_35)
		if got := v35.Phase(pod); got != v1.PodFailed {
			t.Errorf("1.35: the rule is passed over and Never decides, phase Failed; got %v", got)
		}
		if got := v37.Phase(pod); got != v1.PodRunning {
			t.Errorf("1.37: the pod is restarting all containers, phase Running; got %v", got)
		}
		in := ConditionsInput{Pod: pod, Status: &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: pod.Status.ContainerStatuses}, Now: t0}
		has := func(o Options) bool {
			conds, err := o.Conditions(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range conds {
				if c.Type == v1.AllContainersRestarting {
					return true
				}
			}
			return false
		}
		if has(v35) || !has(v37) {
			t.Errorf("AllContainersRestarting: 1.35 has it %v (want false), 1.37 has it %v (want true)", has(v35), has(v37))
		}
	})

	t.Run("PP-V3", func(t *testing.T) {
		// Generation 3; of the old conditions only Ready carries an
		// observedGeneration (written while the gate was on).
		pod := podOf(t, specOf(v1.RestartPolicyAlways, nil, ctr("a")), "a:S")
		pod.Generation = 3
		old := &v1.PodStatus{Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionFalse, ObservedGeneration: 2},
			{Type: v1.ContainersReady, Status: v1.ConditionFalse},
		}}
		in := ConditionsInput{Pod: pod, Status: &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: pod.Status.ContainerStatuses}, Old: old, Now: t0}
		gens := func(o Options) map[v1.PodConditionType]int64 {
			conds, err := o.Conditions(in)
			if err != nil {
				t.Fatal(err)
			}
			m := map[v1.PodConditionType]int64{}
			for _, c := range conds {
				m[c.Type] = c.ObservedGeneration
			}
			return m
		}
		all := []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled}
		g33, g37 := gens(DefaultOptionsFor(kubeversion.V1_33)), gens(v37)
		for _, ct := range all {
			want33 := int64(0)
			if ct == v1.PodReady {
				want33 = 3
			}
			if g33[ct] != want33 {
				t.Errorf("1.33 %s: observedGeneration %d; want %d (gate off: kept only where the old condition had one)", ct, g33[ct], want33)
			}
			if g37[ct] != 3 {
				t.Errorf("1.37 %s: observedGeneration %d; want the generation 3", ct, g37[ct])
			}
		}
		// A resize condition the kubelet holds, written at generation 2:
		// 1.33 restamps it with the generation, 1.34 and later keep 2.
		old.Conditions = append(old.Conditions, v1.PodCondition{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, ObservedGeneration: 2})
		if got := gens(DefaultOptionsFor(kubeversion.V1_33))[v1.PodResizeInProgress]; got != 3 {
			t.Errorf("1.33 PodResizeInProgress: observedGeneration %d; want 3", got)
		}
		if got := gens(v37)[v1.PodResizeInProgress]; got != 2 {
			t.Errorf("1.37 PodResizeInProgress: observedGeneration %d; want the condition's own 2", got)
		}
		if got := gens(DefaultOptionsFor(kubeversion.V1_34))[v1.PodInitialized]; got != 3 {
			t.Errorf("1.34 Initialized: observedGeneration %d; want 3 (the gate is beta and on)", got)
		}
	})

	t.Run("PP-V4", func(t *testing.T) {
		pod := podOf(t, specOf(v1.RestartPolicyAlways, nil, ctr("a")), "")
		in := ConditionsInput{Pod: pod, Status: &v1.PodStatus{Phase: v1.PodPending}, Sandbox: SandboxMissing, Now: t0}
		find := func(o Options) v1.PodCondition {
			conds, err := o.Conditions(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range conds {
				if c.Type == v1.PodReadyToStartContainers {
					return c
				}
			}
			t.Fatal("no PodReadyToStartContainers")
			return v1.PodCondition{}
		}
		if c := find(DefaultOptionsFor(kubeversion.V1_36)); c.Status != v1.ConditionFalse || c.Reason != "" || c.Message != "" {
			t.Errorf("1.36: False without reason or message; got %s %q %q", c.Status, c.Reason, c.Message)
		}
		if c := find(v37); c.Status != v1.ConditionFalse || c.Reason != ReasonPodSandboxNotReady || c.Message != "no pod sandbox exists" {
			t.Errorf("1.37: False, PodSandboxNotReady, the sandbox's message; got %s %q %q", c.Status, c.Reason, c.Message)
		}
	})

	t.Run("PP-V5", func(t *testing.T) {
		signal := func(name string) v1.ContainerStatus {
			return v1.ContainerStatus{Name: name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137, Signal: 9}}}
		}
		readyRunning := func(name string) v1.ContainerStatus {
			return v1.ContainerStatus{Name: name, Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
		}
		tests := []struct {
			name       string
			statuses   []v1.ContainerStatus
			old, new   string
			reasonText string
		}{
			{"completed then error", []v1.ContainerStatus{status(t, "a", "T0"), status(t, "b", "T42")}, "Completed", "Error",
				"the first container completed, the second failed with reason Error"},
			{"completed then signal", []v1.ContainerStatus{status(t, "a", "T0"), signal("b")}, "Completed", "Signal:9",
				"a failed container without a reason shows Signal:N from 1.35"},
			{"completed, running, error, no Ready condition", []v1.ContainerStatus{status(t, "a", "T0"), readyRunning("b"), status(t, "c", "T42")}, "NotReady", "Error",
				"before 1.35 a ready running container without the Ready condition gives NotReady; from 1.35 the failure wins"},
			{"completed only", []v1.ContainerStatus{status(t, "a", "T0"), status(t, "b", "T0")}, "Completed", "Completed",
				"no failure: the same in every minor"},
		}
		for _, tc := range tests {
			pod := &v1.Pod{Spec: specOf(v1.RestartPolicyNever, nil, ctr("a"), ctr("b"), ctr("c")),
				Status: v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: tc.statuses}}
			for _, v := range []kubeversion.Version{kubeversion.V1_33, kubeversion.V1_34} {
				if got := DefaultOptionsFor(v).DisplayStatus(pod); got != tc.old {
					t.Errorf("%s, %v: STATUS %q; want %q (%s)", tc.name, v, got, tc.old, tc.reasonText)
				}
			}
			for _, v := range []kubeversion.Version{kubeversion.V1_35, kubeversion.V1_36, kubeversion.V1_37} {
				if got := DefaultOptionsFor(v).DisplayStatus(pod); got != tc.new {
					t.Errorf("%s, %v: STATUS %q; want %q (%s)", tc.name, v, got, tc.new, tc.reasonText)
				}
				row, err := DefaultOptionsFor(v).Columns(pod, t0)
				if err != nil || row.Status != tc.new {
					t.Errorf("%s, %v: Columns STATUS %q, %v; want %q", tc.name, v, row.Status, err, tc.new)
				}
			}
			if got := DisplayStatus(pod); got != tc.new {
				t.Errorf("%s: DisplayStatus %q; want 1.37's %q", tc.name, got, tc.new)
			}
		}
	})
}

// TestInvalidVersionRefused: each method of Options with an error result
// refuses a Version that is none of kubeversion's constants with an
// *OptionError on Version matching ErrInvalidInput and
// kubeversion.ErrUnsupportedVersion; each method without one answers as the
// zero Version, 1.37, does.
func TestInvalidVersionRefused(t *testing.T) {
	pod := podOf(t, specOf(v1.RestartPolicyAlways, nil, ctr("a"), ctr("b")), "a:T0 b:T42")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bad := DefaultOptionsFor(kubeversion.Version(99))
	calls := []struct {
		name string
		call func(Options) error
	}{
		{"Explain: invalid Version refused", func(o Options) error { _, err := o.Explain(Input{Pod: pod}); return err }},
		{"GenerateStatus: invalid Version refused", func(o Options) error {
			_, err := o.GenerateStatus(StatusInput{Input: Input{Pod: pod}, ContainerStatuses: pod.Status.ContainerStatuses, Now: now})
			return err
		}},
		{"Conditions: invalid Version refused", func(o Options) error {
			_, err := o.Conditions(ConditionsInput{Pod: pod, Status: &pod.Status, Now: now})
			return err
		}},
		{"Columns: invalid Version refused", func(o Options) error { _, err := o.Columns(pod, now); return err }},
	}
	for _, c := range calls {
		if err := c.call(DefaultOptions()); err != nil {
			t.Errorf("%s: the default options give %v", c.name, err)
		}
		err := c.call(bad)
		var oe *OptionError
		var ve *kubeversion.ValueError
		if !errors.Is(err, ErrInvalidInput) || !errors.Is(err, kubeversion.ErrUnsupportedVersion) ||
			!errors.As(err, &oe) || oe.Field != "Version" || !errors.As(err, &ve) || ve.Version != bad.Version {
			t.Errorf("%s: error %v; want an *OptionError on Version matching ErrInvalidInput and ErrUnsupportedVersion", c.name, err)
		}
	}
	if _, err := bad.Columns(pod, now); err == nil || err.Error() != "podphase: invalid options: Version kubeversion.Version(99): unsupported Kubernetes version, supported are 1.33 to 1.37" {
		t.Errorf("error text %v", err)
	}

	// The methods without an error treat it as the zero Version.
	zero := bad
	zero.Version = kubeversion.Default
	if bad.Phase(pod) != zero.Phase(pod) || bad.DisplayStatus(pod) != zero.DisplayStatus(pod) ||
		bad.KubeletOwned(v1.PodReadyToStartContainers) != zero.KubeletOwned(v1.PodReadyToStartContainers) ||
		len(bad.OwnedConditionTypes()) != len(zero.OwnedConditionTypes()) {
		t.Errorf("Phase, DisplayStatus, KubeletOwned or OwnedConditionTypes: invalid Version answers differently from 1.37")
	}
}
