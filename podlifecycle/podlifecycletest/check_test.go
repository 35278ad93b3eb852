package podlifecycletest_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

func startupProbe() *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"ready"}}}, PeriodSeconds: 1, FailureThreshold: 5}
}

// runTrace runs pod with the behaviour text and deletion and fails on a
// refused run.
func runTrace(t *testing.T, pod *v1.Pod, text string, del *podlifecycletest.Deletion) *podlifecycletest.Trace {
	t.Helper()
	bs, err := simruntime.ParseBehaviours(text)
	if err != nil {
		t.Fatal(err)
	}
	opts := podlifecycletest.DefaultOptions()
	opts.Until, opts.Delete = 3*time.Minute, del
	tr, err := podlifecycletest.Run(pod, bs, opts)
	if err != nil {
		t.Fatalf("%v\n%s", err, tr)
	}
	return tr
}

// initPod has two regular init containers, a sidecar with a startup probe
// that fails for its first 3 s, a crash-looping app0 and app1; it is
// deleted at +90 s.
func initTrace(t *testing.T) *podlifecycletest.Trace {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "init0", Image: "init:1"}, {Name: "init1", Image: "init:1"},
				{Name: "side2", Image: "proxy:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways), StartupProbe: startupProbe()}},
			Containers: []v1.Container{{Name: "app0", Image: "app:1"}, {Name: "app1", Image: "app:1"}},
		}}
	return runTrace(t, pod, "init0: run 2s exit 0\ninit1: run 2s exit 0\nside2: startup fail 0s-3s\napp0: run 5s exit 1",
		&podlifecycletest.Deletion{After: 90 * time.Second, Grace: ptr(int64(10))})
}

// sidecarTrace has sidecars side0 and side1 and app, each taking 5 s to
// honour SIGTERM; it is deleted at +10 s with 30 s of grace.
func sidecarTrace(t *testing.T) *podlifecycletest.Trace {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: ptr(int64(30)),
			InitContainers: []v1.Container{{Name: "side0", Image: "proxy:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways)},
				{Name: "side1", Image: "proxy:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways)}},
			Containers: []v1.Container{{Name: "app", Image: "app:1"}},
		}}
	return runTrace(t, pod, "side0: ignore-sigterm 5s\nside1: ignore-sigterm 5s\napp: ignore-sigterm 5s",
		&podlifecycletest.Deletion{After: 10 * time.Second})
}

// neverTrace is a pod with restartPolicy Never whose app exits 1 after a
// second while other runs on.
func neverTrace(t *testing.T) *podlifecycletest.Trace {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever,
			Containers: []v1.Container{{Name: "app", Image: "app:1"}, {Name: "other", Image: "app:1"}}}}
	return runTrace(t, pod, "app: run 1s exit 1", &podlifecycletest.Deletion{After: time.Minute})
}

// clone copies tr deeply enough to mutate its steps' slices.
func clone(tr *podlifecycletest.Trace) *podlifecycletest.Trace {
	c := *tr
	c.Steps = slices.Clone(tr.Steps)
	for i := range c.Steps {
		s := &c.Steps[i]
		s.Observations = slices.Clone(s.Observations)
		s.Result.Actions = slices.Clone(s.Result.Actions)
		s.Result.Events = slices.Clone(s.Result.Events)
		s.Result.Statuses = slices.Clone(s.Result.Statuses)
	}
	return &c
}

// find returns the step and action index of the n-th (0-based) action of
// kind for container, or fails.
func find(t *testing.T, tr *podlifecycletest.Trace, kind podlifecycle.ActionKind, container string, n int) (int, int) {
	t.Helper()
	for i := range tr.Steps {
		for j, a := range tr.Steps[i].Result.Actions {
			if a.Kind == kind && a.Container == container {
				if n == 0 {
					return i, j
				}
				n--
			}
		}
	}
	t.Fatalf("no %v for %s in\n%s", kind, container, tr)
	return 0, 0
}

// findObs returns the step whose observations include the first of kind
// for container.
func findObs(t *testing.T, tr *podlifecycletest.Trace, kind podlifecycle.ObservationKind, container string) int {
	t.Helper()
	for i := range tr.Steps {
		for _, o := range tr.Steps[i].Observations {
			if o.Kind == kind && o.Container == container {
				return i
			}
		}
	}
	t.Fatalf("no %v for %s in\n%s", kind, container, tr)
	return 0
}

// move moves action j of step from to the end of step to's actions.
func move(tr *podlifecycletest.Trace, from, j, to int) {
	a := tr.Steps[from].Result.Actions[j]
	tr.Steps[from].Result.Actions = slices.Delete(tr.Steps[from].Result.Actions, j, j+1)
	tr.Steps[to].Result.Actions = append(tr.Steps[to].Result.Actions, a)
}

// TestChecksPassOnRealTraces: the hand-made pods' traces keep every
// invariant, so that each mutation below is what breaks one.
func TestChecksPassOnRealTraces(t *testing.T) {
	for name, tr := range map[string]*podlifecycletest.Trace{"init": initTrace(t), "sidecars": sidecarTrace(t), "never": neverTrace(t)} {
		if err := podlifecycletest.CheckAll(tr); err != nil {
			t.Errorf("%s: %v\n%s", name, err, tr)
		}
	}
}

// TestChecksCatchViolations feeds each check a real trace mutated to break
// its invariant and wants the violation reported, naming the check.
func TestChecksCatchViolations(t *testing.T) {
	initTr, sideTr, neverTr := initTrace(t), sidecarTrace(t), neverTrace(t)
	tests := []struct {
		name   string
		check  string
		base   *podlifecycletest.Trace
		mutate func(t *testing.T, tr *podlifecycletest.Trace)
		want   string
		reason string
	}{{
		name: "init starts swapped", check: "InitOrder", base: initTr, want: `"init1" started before init container "init0"`,
		reason: "rule 2.3: init containers run one at a time in spec order",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			i, j := find(t, tr, podlifecycle.StartContainer, "init0", 0)
			tr.Steps[i].Result.Actions[j].Container = "init1"
		},
	}, {
		name: "init rerun after success", check: "InitOrder", base: initTr, want: `"init0" started again`,
		reason: "rule 2.3: a regular init container that succeeded is done in its sandbox",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			i, j := find(t, tr, podlifecycle.StartContainer, "init1", 0)
			a := tr.Steps[i].Result.Actions[j]
			a.Container = "init0"
			tr.Steps[i].Result.Actions = append(tr.Steps[i].Result.Actions, a)
		},
	}, {
		name: "regular start before init end", check: "RegularAfterInit", base: initTr, want: `"app1" started before init container`,
		reason: "rule 2.5: regular containers start once the pod is initialized",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			i, j := find(t, tr, podlifecycle.StartContainer, "app1", 0)
			k, _ := find(t, tr, podlifecycle.StartContainer, "init1", 0)
			move(tr, i, j, k)
		},
	}, {
		name: "successor before startup success", check: "SidecarStartup", base: initTr, want: `"app0" started before sidecar "side2"`,
		reason: "rule 2.4: the container after a sidecar waits for its startup probe",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			i, j := find(t, tr, podlifecycle.StartContainer, "app0", 0)
			move(tr, i, j, findObs(t, tr, podlifecycle.ContainerStarted, "side2"))
		},
	}, {
		name: "back-off shortened", check: "CrashLoopBackoff", base: initTr, want: `within its back-off of 10s`,
		reason: "section 4.2: the second restart waits 10 s after the exit",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			// The third start of app0 is the first held by back-off; move
			// it to the step that saw the exit before it.
			i, j := find(t, tr, podlifecycle.StartContainer, "app0", 2)
			k := i - 1
			for ; k > 0 && len(tr.Steps[k].Observations) == 0; k-- {
			}
			move(tr, i, j, k)
		},
	}, {
		name: "sidecars stopped in spec order", check: "TerminationOrder", base: sideTr, want: `sidecar "side0" stopped while the later sidecar "side1" still runs`,
		reason: "section 7.5: sidecars stop from last to first",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			i, j := find(t, tr, podlifecycle.KillContainer, "side0", 0)
			k, _ := find(t, tr, podlifecycle.KillContainer, "side1", 0)
			move(tr, i, j, k)
		},
	}, {
		name: "sidecar stopped before the app", check: "TerminationOrder", base: sideTr, want: `sidecar "side1" stopped while container "app" still runs`,
		reason: "section 7.5: regular containers stop before sidecars",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			i, j := find(t, tr, podlifecycle.KillContainer, "side1", 0)
			k, _ := find(t, tr, podlifecycle.KillContainer, "app", 0)
			move(tr, i, j, k)
		},
	}, {
		name: "stop grace above the pod's", check: "TerminationOrder", base: sideTr, want: `stopped with grace 1m0s`,
		reason: "section 7.4: the stop gets the effective grace, at least 2 s",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			i, j := find(t, tr, podlifecycle.KillContainer, "app", 0)
			tr.Steps[i].Result.Actions[j].Grace = time.Minute
		},
	}, {
		name: "phase back to Running", check: "TerminalPhase", base: neverTr, want: "phase Running after terminal phase",
		reason: "section 7.3: a terminal phase is final",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			last := &tr.Steps[len(tr.Steps)-1].Result
			st := last.Statuses[len(last.Statuses)-1]
			st.Phase = v1.PodRunning
			last.Statuses = append(last.Statuses, st)
		},
	}, {
		name: "event for a container the pod lacks", check: "ContainerNames", base: initTr, want: `spec.containers{ghost}`,
		reason: "section 10: the field path names a container of the spec",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			tr.Steps[2].Result.Events = append(tr.Steps[2].Result.Events, podlifecycle.Event{Type: v1.EventTypeNormal,
				Reason: podlifecycle.ReasonStarted, Message: podlifecycle.MessageStarted, FieldPath: "spec.containers{ghost}"})
		},
	}, {
		name: "init container event under containers", check: "ContainerNames", base: initTr, want: `spec.containers{init0}`,
		reason: "section 10: an init container's field path is spec.initContainers{name}",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			for i := range tr.Steps {
				for j, e := range tr.Steps[i].Result.Events {
					if e.FieldPath == "spec.initContainers{init0}" {
						tr.Steps[i].Result.Events[j].FieldPath = "spec.containers{init0}"
						return
					}
				}
			}
		},
	}, {
		name: "action with the wrong kind", check: "ContainerNames", base: initTr, want: `names "init0" as a container, which the pod does not have`,
		reason: "an action names a container of the pod with its kind",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			i, j := find(t, tr, podlifecycle.StartContainer, "init0", 0)
			tr.Steps[i].Result.Actions[j].ContainerKind = containerstate.Regular
		},
	}, {
		name: "terminated container running again", check: "StatusTransitions", base: neverTr, want: `container "app"`,
		reason: "containerstate: under Never a terminated container may not leave Terminated",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			last := &tr.Steps[len(tr.Steps)-1].Result
			st := *last.Statuses[len(last.Statuses)-1].DeepCopy()
			for k := range st.ContainerStatuses {
				if st.ContainerStatuses[k].Name == "app" {
					st.ContainerStatuses[k].State = v1.ContainerState{Running: &v1.ContainerStateRunning{}}
				}
			}
			last.Statuses = append(last.Statuses, st)
		},
	}, {
		name: "finished with a start unanswered", check: "StartsAnswered", base: neverTr, want: `start of container "app" is unanswered`,
		reason: "sections 7.3 and 15: termination does not overtake a start",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			i, _ := find(t, tr, podlifecycle.StartContainer, "app", 0)
			tr.Steps[i].Result.Finished = true
		},
	}, {
		name: "stale wake-up", check: "Wakeups", base: initTr, want: "nothing happened",
		reason: "section 11: the next wake-up moves on",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			s := tr.Steps[len(tr.Steps)-1]
			s.Observations, s.Result = nil, podlifecycle.Result{NextSync: s.At}
			tr.Steps = append(tr.Steps, s)
		},
	}, {
		name: "allocatedResources other than the requests", check: "StatusFields", base: initTr, want: "allocatedResources are not the spec's requests",
		reason: "spec/containerstate.md section 4.6: allocatedResources are the spec's requests",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			for i := range tr.Steps {
				for j := range tr.Steps[i].Result.Statuses {
					st := &tr.Steps[i].Result.Statuses[j]
					st.ContainerStatuses = slices.Clone(st.ContainerStatuses)
					st.ContainerStatuses[0].AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
					return
				}
			}
		},
	}, {
		name: "volumeMounts out of the spec's order", check: "StatusFields", base: initTr, want: "volumeMounts do not follow the spec",
		reason: "spec/containerstate.md section 4.1: the spec's mounts",
		mutate: func(t *testing.T, tr *podlifecycletest.Trace) {
			for i := range tr.Steps {
				for j := range tr.Steps[i].Result.Statuses {
					st := &tr.Steps[i].Result.Statuses[j]
					st.ContainerStatuses = slices.Clone(st.ContainerStatuses)
					st.ContainerStatuses[0].VolumeMounts = []v1.VolumeMountStatus{{Name: "ghost", MountPath: "/ghost"}}
					return
				}
			}
		},
	}}
	checks := map[string]podlifecycletest.Check{}
	for _, c := range podlifecycletest.Checks() {
		checks[c.Name] = c
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := clone(tt.base)
			tt.mutate(t, tr)
			err := checks[tt.check].Func(tr)
			var v *podlifecycletest.Violation
			if !errors.As(err, &v) || !errors.Is(err, podlifecycletest.ErrViolation) {
				t.Fatalf("%s: want a violation (%s), got %v\n%s", tt.check, tt.reason, err, tr)
			}
			if v.Check != tt.check || !strings.Contains(v.Detail, tt.want) {
				t.Fatalf("got %v, want check %s with %q (%s)", err, tt.check, tt.want, tt.reason)
			}
			if err := checks[tt.check].Func(tt.base); err != nil {
				t.Fatalf("the base trace was changed: %v", err)
			}
		})
	}
}

// TestChecksOnNothing: no check panics on a nil or empty trace.
func TestChecksOnNothing(t *testing.T) {
	for _, c := range podlifecycletest.Checks() {
		if err := c.Func(nil); err != nil {
			t.Errorf("%s(nil) = %v", c.Name, err)
		}
		if err := c.Func(&podlifecycletest.Trace{}); err != nil {
			t.Errorf("%s(empty) = %v", c.Name, err)
		}
	}
}

// TestCheckStatusTransitionsProfile: CheckStatusTransitions validates with
// the run's profile (the Machine options' gates and Version), as that
// minor's API server would (spec/containerstate.md section 12.1,
// docs/versions.md row CS-V5), not always with 1.37's rule.
func TestCheckStatusTransitionsProfile(t *testing.T) {
	tests := []struct {
		name    string
		v       kubeversion.Version
		pod     v1.RestartPolicy
		own     v1.ContainerRestartPolicy
		allowed bool
		reason  string
	}{
		{"containerstate spec section 12.1: 1.37, own policy Never in an Always pod", kubeversion.V1_37, v1.RestartPolicyAlways, v1.ContainerRestartPolicyNever, false,
			"1.37 asks ContainerShouldRestart: the container's own policy Never forbids it"},
		{"containerstate spec section 12.1: 1.34, own policy Never in an Always pod", kubeversion.V1_34, v1.RestartPolicyAlways, v1.ContainerRestartPolicyNever, true,
			"1.34 with ContainerRestartRules off (its default) reads the pod's policy Always"},
		{"containerstate spec section 12.1: 1.37, own policy OnFailure in a Never pod", kubeversion.V1_37, v1.RestartPolicyNever, v1.ContainerRestartPolicyOnFailure, true,
			"the container's own policy OnFailure allows a restart after exit 1"},
		{"containerstate spec section 12.1: 1.34, own policy OnFailure in a Never pod", kubeversion.V1_34, v1.RestartPolicyNever, v1.ContainerRestartPolicyOnFailure, false,
			"1.34 with the gate off reads the pod's policy Never"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
				Spec: v1.PodSpec{RestartPolicy: tt.pod, Containers: []v1.Container{{Name: "app", Image: "app:1", RestartPolicy: ptr(tt.own)}}}}
			status := func(s v1.ContainerState) v1.PodStatus {
				return v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "app", State: s}}}
			}
			opts := podlifecycletest.DefaultOptions()
			opts.Machine = podlifecycle.DefaultOptionsFor(tt.v)
			tr := &podlifecycletest.Trace{Pod: pod, Options: opts, Start: time.Unix(0, 0), Steps: []podlifecycletest.Step{{
				At: time.Unix(1, 0), Pod: pod, Result: podlifecycle.Result{Statuses: []v1.PodStatus{
					status(v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}),
					status(v1.ContainerState{Running: &v1.ContainerStateRunning{}}),
				}}}}}
			err := podlifecycletest.CheckStatusTransitions(tr)
			if tt.allowed && err != nil || !tt.allowed && !errors.Is(err, podlifecycletest.ErrViolation) {
				t.Errorf("Terminated(1) to Running under %v: %v, want allowed %v (%s)", tt.v, err, tt.allowed, tt.reason)
			}
		})
	}
}
