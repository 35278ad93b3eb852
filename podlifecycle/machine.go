package podlifecycle

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Machine is one pod on one node. Use New; the methods of the zero value
// return ErrNotInitialized. A Machine is not safe for concurrent use.
type Machine struct {
	opts Options
	uid  string
	last time.Time
}

// New returns a machine for pod, or an error: an *OptionError for options
// out of range, an *InputError for a nil pod, a pod without a UID or with
// duplicate container names.
func New(opts Options, pod *v1.Pod) (*Machine, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if err := checkPod(pod, ""); err != nil {
		return nil, err
	}
	return &Machine{opts: opts, uid: string(pod.UID)}, nil
}

// Step is one kubelet sync at now: it applies obs to the machine's view of
// the runtime, generates the status, decides the actions and returns them.
// The returned Result's slices are new; see StepTo to reuse them.
//
// Bad input (a nil pod, another UID, duplicate container names, an
// observation for a container the spec lacks or that never started, a time
// earlier than one already accepted) returns an *InputError and leaves the
// machine unchanged.
func (m *Machine) Step(now time.Time, pod *v1.Pod, obs []Observation) (Result, error) {
	var r Result
	err := m.StepTo(now, pod, obs, &r)
	return r, err
}

// StepTo is Step writing into res, whose slices are truncated and reused:
// a steady-state sync allocates nothing. A nil res is refused.
func (m *Machine) StepTo(now time.Time, pod *v1.Pod, obs []Observation, res *Result) error {
	if m == nil || m.uid == "" {
		return ErrNotInitialized
	}
	if res == nil {
		return &InputError{Index: -1, Reason: "nil result", Err: ErrInvalidInput}
	}
	res.Reset()
	if err := checkPod(pod, m.uid); err != nil {
		return err
	}
	if now.Before(m.last) {
		return &InputError{Index: -1, At: now, Last: m.last, Err: ErrTimeWentBackwards}
	}
	m.last = now
	return nil
}

// checkPod refuses a nil pod, a pod without a UID, one whose UID is not uid
// (when set) and one with duplicate container names.
func checkPod(pod *v1.Pod, uid string) error {
	switch {
	case pod == nil:
		return &InputError{Index: -1, Reason: "nil pod", Err: ErrInvalidInput}
	case pod.UID == "":
		return &InputError{Index: -1, Reason: "pod without a UID", Err: ErrInvalidInput}
	case uid != "" && string(pod.UID) != uid:
		return &InputError{Index: -1, Reason: "pod UID " + string(pod.UID) + " is not the machine's " + uid, Err: ErrInvalidInput}
	}
	seen := make(map[string]struct{}, len(pod.Spec.InitContainers)+len(pod.Spec.Containers)+len(pod.Spec.EphemeralContainers))
	check := func(name string) error {
		if name == "" {
			return &InputError{Index: -1, Reason: "container without a name", Err: ErrInvalidInput}
		}
		if _, dup := seen[name]; dup {
			return &InputError{Index: -1, Container: name, Reason: "duplicate container name", Err: ErrInvalidInput}
		}
		seen[name] = struct{}{}
		return nil
	}
	for i := range pod.Spec.InitContainers {
		if err := check(pod.Spec.InitContainers[i].Name); err != nil {
			return err
		}
	}
	for i := range pod.Spec.Containers {
		if err := check(pod.Spec.Containers[i].Name); err != nil {
			return err
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if err := check(pod.Spec.EphemeralContainers[i].Name); err != nil {
			return err
		}
	}
	return nil
}
