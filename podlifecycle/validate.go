package podlifecycle

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// validate refuses bad input without changing the machine.
func (m *Machine) validate(now time.Time, pod *v1.Pod, obs []Observation) error {
	if err := checkPod(pod, m.uid); err != nil {
		return err
	}
	if !m.sameContainers(pod) {
		return &InputError{Index: -1, Reason: "the pod's containers changed (only ephemeral containers may be added)", Err: ErrInvalidInput}
	}
	if now.Before(m.last) {
		return &InputError{Index: -1, At: now, Last: m.last, Err: ErrTimeWentBackwards}
	}
	m.scratch, m.implied = m.scratch[:0], m.implied[:0]
	s := &pod.Spec
	for i := range obs {
		o := &obs[i]
		bad := func(reason string) error {
			return &InputError{Index: i, Container: o.Container, Reason: reason, Err: ErrInvalidInput}
		}
		if !o.At.IsZero() {
			if o.At.After(now) {
				return bad("observation at " + o.At.Format(time.RFC3339Nano) + " is after now " + now.Format(time.RFC3339Nano))
			}
			if o.At.Before(m.last) {
				return &InputError{Index: i, Container: o.Container, At: o.At, Last: m.last, Err: ErrTimeWentBackwards}
			}
		}
		switch o.Kind {
		case SandboxReady, SandboxNotReady, SandboxCreateFailed, ImagePresent:
			if o.Kind == ImagePresent && o.Image == "" {
				return bad("ImagePresent without an image")
			}
			continue
		case ImagePulled, ImagePullFailed, ContainerCreateFailed:
		case ContainerCreated, ContainerStarted, ContainerStartFailed, ContainerExited, ContainerUnknown,
			ContainerRemoved, ProbeResult, HookResult:
			if o.ContainerID == "" {
				return bad("observation without a container ID")
			}
		default:
			return bad("unknown observation kind")
		}
		if !specHas(s, o.Container) {
			return bad("container not in the pod spec")
		}
		if o.Kind == ContainerCreated {
			if owner := m.ownerOf(o.ContainerID); owner != "" && owner != o.Container {
				return bad("container ID " + o.ContainerID + " belongs to container " + owner)
			}
			if owner, ok := m.retired[o.ContainerID]; ok && owner != o.Container {
				return bad("container ID " + o.ContainerID + " belonged to container " + owner)
			}
			m.scratch = append(m.scratch, o.Container, o.ContainerID)
			continue
		}
		if o.Kind == ProbeResult && (o.Probe < Startup || o.Probe > Liveness || o.Outcome < ProbeSuccess || o.Outcome > ProbeError) {
			return bad("undefined probe or outcome")
		}
		if o.Kind == HookResult && o.Hook != PostStart && o.Hook != PreStop {
			return bad("undefined hook")
		}
		if o.ContainerID == "" {
			continue
		}
		known := m.ownerOf(o.ContainerID) == o.Container || m.isRetired(o.Container, o.ContainerID)
		for j := 0; !known && j+1 < len(m.scratch); j += 2 {
			known = m.scratch[j] == o.Container && m.scratch[j+1] == o.ContainerID
		}
		if !known && (o.Kind == ContainerStarted || o.Kind == ContainerExited) && m.impliesCreation(o.Container) {
			// The answer to the start in flight, first seen running or
			// exited: its creation is implied (a relist may first see a
			// container in any state).
			m.scratch = append(m.scratch, o.Container, o.ContainerID)
			m.implied = append(m.implied, i)
			known = true
		}
		if !known {
			if o.Kind == ContainerExited {
				return bad("exit of container ID " + o.ContainerID + " that never started")
			}
			return bad("unknown container ID " + o.ContainerID)
		}
	}
	return nil
}
