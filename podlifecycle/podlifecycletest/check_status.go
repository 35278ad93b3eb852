package podlifecycletest

import (
	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podphase"
	v1 "k8s.io/api/core/v1"
)

// CheckTerminalPhase: once a status has a terminal phase (Succeeded or
// Failed), every later status has the same phase (spec/podlifecycle.md
// section 7.3; podphase's stickiness).
func CheckTerminalPhase(tr *Trace) error {
	if tr == nil {
		return nil
	}
	var terminal v1.PodPhase
	for i := range tr.Steps {
		for _, st := range tr.Steps[i].Result.Statuses {
			if terminal != "" && st.Phase != terminal {
				return violation(tr, "TerminalPhase", i, "phase %s after terminal phase %s", st.Phase, terminal)
			}
			if podphase.IsTerminal(st.Phase) {
				terminal = st.Phase
			}
		}
	}
	return nil
}

// CheckContainerNames: every event names the pod itself or an existing
// container through its field path, and every action for a container
// names one of the pod's containers with its kind (spec/podlifecycle.md
// section 10).
func CheckContainerNames(tr *Trace) error {
	return walk(tr, func(i int, s *Step, v *view) error {
		for _, e := range s.Result.Events {
			if e.FieldPath != "" && v.byFieldPath(e.FieldPath) == nil {
				return violation(tr, "ContainerNames", i, "event %s %q names no container of the pod: %q", e.Reason, e.Message, e.FieldPath)
			}
		}
		for _, a := range s.Result.Actions {
			switch a.Kind {
			case podlifecycle.CreateSandbox, podlifecycle.KillSandbox:
				continue
			}
			if c := v.ctrs[a.Container]; c == nil || c.kind != a.ContainerKind {
				return violation(tr, "ContainerNames", i, "action %v names %q as a %v, which the pod does not have", a, a.Container, a.ContainerKind)
			}
		}
		return nil
	})
}

// CheckStatusTransitions: every status version, after the pod's own and
// each one before it, passes the API server's container-state transition
// validation as the run's profile has it (containerstate's
// Options.ValidateStatusTransition with the feature gates and Version of
// tr.Options.Machine, docs/versions.md row CS-V5): a terminated container
// goes back to waiting or running only if it may restart.
func CheckStatusTransitions(tr *Trace) error {
	if tr == nil || tr.Pod == nil {
		return nil
	}
	f := containerstate.Options{Features: tr.Options.Machine.Features, Version: tr.Options.Machine.Version}
	prev := &tr.Pod.Status
	for i := range tr.Steps {
		s := &tr.Steps[i]
		for j := range s.Result.Statuses {
			st := &s.Result.Statuses[j]
			if err := f.ValidateStatusTransition(&s.Pod.Spec, prev, st); err != nil {
				return violation(tr, "StatusTransitions", i, "status version %d refused: %v", j, err)
			}
			prev = st
		}
	}
	return nil
}

// CheckWakeups: the machine's NextSync moves on. A Step that received no
// observation and returned nothing must not ask for a sync at or before its
// own time again: a runner that honours NextSync would spin
// (spec/podlifecycle.md section 11, item 4).
func CheckWakeups(tr *Trace) error {
	if tr == nil {
		return nil
	}
	for i := range tr.Steps {
		if s := &tr.Steps[i]; stale(s) {
			return violation(tr, "Wakeups", i, "nothing happened and the next sync is due at +%v, not after this step", s.Result.NextSync.Sub(tr.Start))
		}
	}
	return nil
}

// CheckStartsAnswered: the pod does not finish while a StartContainer the
// machine issued is unanswered (by ContainerCreated, ContainerCreateFailed,
// or ImagePullFailed of the pull before it): the kubelet's SyncPod runs
// pulls and starts synchronously, so termination cannot overtake them and
// no container is created in a finished pod (spec/podlifecycle.md sections
// 7.3 and 15).
func CheckStartsAnswered(tr *Trace) error {
	pending := map[string]int{}
	return walk(tr, func(i int, s *Step, v *view) error {
		for _, o := range s.Observations {
			switch o.Kind {
			case podlifecycle.ContainerCreated, podlifecycle.ContainerCreateFailed, podlifecycle.ImagePullFailed:
				if pending[o.Container] > 0 {
					pending[o.Container]--
				}
			}
		}
		for _, a := range s.Result.Actions {
			if a.Kind == podlifecycle.StartContainer {
				pending[a.Container]++
			}
		}
		if !s.Result.Finished {
			return nil
		}
		for _, c := range v.sortedNames() {
			if pending[c] > 0 {
				return violation(tr, "StartsAnswered", i, "finished while the start of container %q is unanswered", c)
			}
		}
		return nil
	})
}

// CheckStatusFields: every status version's fields from the spec, the
// allocation and the runtime are the kubelet's (spec/containerstate.md
// sections 4.1 and 4.6, spec/podphase.md section 4.3): a container
// status's volumeMounts are none or its spec's mounts by name, path and
// readOnly in the spec's order; its allocatedResources are none or the
// spec's requests, and with InPlacePodVerticalScaling present with the spec's
// requests once it has a containerID; a status that is not Running has no
// resources or the spec's; an imageID comes with a containerID; and with
// InPlacePodLevelResourcesVerticalScaling the pod's allocatedResources are
// podphase.PodRequests.
func CheckStatusFields(tr *Trace) error {
	if tr == nil || tr.Pod == nil {
		return nil
	}
	gates := tr.Options.Machine.Features
	for i := range tr.Steps {
		s := &tr.Steps[i]
		spec := &s.Pod.Spec
		for j := range s.Result.Statuses {
			st := &s.Result.Statuses[j]
			for _, l := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
				for k := range l {
					c := specContainer(spec, l[k].Name)
					if c == nil {
						continue
					}
					if bad := fieldsOf(&l[k], c, gates.InPlacePodVerticalScaling); bad != "" {
						return violation(tr, "StatusFields", i, "status version %d, container %s: %s", j, l[k].Name, bad)
					}
				}
			}
			if gates.InPlacePodLevelResourcesVerticalScaling && !sameList(st.AllocatedResources, podphase.PodRequests(s.Pod)) {
				return violation(tr, "StatusFields", i, "status version %d: allocatedResources %v are not the pod's requests", j, st.AllocatedResources)
			}
		}
	}
	return nil
}

func specContainer(spec *v1.PodSpec, name string) *v1.Container {
	for _, l := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range l {
			if l[i].Name == name {
				return &l[i]
			}
		}
	}
	for i := range spec.EphemeralContainers {
		if spec.EphemeralContainers[i].Name == name {
			return (*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon)
		}
	}
	return nil
}

// fieldsOf returns what is wrong with st's fields from the spec c, or "".
func fieldsOf(st *v1.ContainerStatus, c *v1.Container, ippvs bool) string {
	if st.VolumeMounts != nil {
		if len(st.VolumeMounts) != len(c.VolumeMounts) {
			return "volumeMounts do not follow the spec"
		}
		for i, m := range st.VolumeMounts {
			if s := c.VolumeMounts[i]; m.Name != s.Name || m.MountPath != s.MountPath || m.ReadOnly != s.ReadOnly {
				return "volumeMounts do not follow the spec"
			}
		}
	}
	if st.AllocatedResources != nil && !sameList(st.AllocatedResources, c.Resources.Requests) ||
		ippvs && st.ContainerID != "" && !sameList(st.AllocatedResources, c.Resources.Requests) {
		return "allocatedResources are not the spec's requests"
	}
	if r := st.Resources; st.State.Running == nil && r != nil && (!sameList(r.Requests, c.Resources.Requests) || !sameList(r.Limits, c.Resources.Limits)) {
		return "a status that is not Running does not show the allocated resources"
	}
	if st.ImageID != "" && st.ContainerID == "" {
		return "an imageID without a containerID"
	}
	return ""
}

// sameList compares resource lists by value; nil equals empty.
func sameList(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for n, q := range a {
		if r, ok := b[n]; !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}
