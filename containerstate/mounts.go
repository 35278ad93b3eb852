package containerstate

import v1 "k8s.io/api/core/v1"

// mountsFrom says where the volumeMounts of a status come from.
type mountsFrom uint8

const (
	mountsNone    mountsFrom = iota // not from the spec
	mountsSpec                      // the spec's, on a runtime without recursive read-only mounts
	mountsSpecRRO                   // the spec's, on a runtime with them
)

// appendSpecMounts builds the volumeMounts of a default status entry from
// the container's spec into dst's storage, in the spec's order (spec
// section 4.1; the kubelet's RecursiveReadOnlyMounts, GA and locked on in
// every supported minor): name, mount path and readOnly of each mount, and
// for a read-only mount its recursive read-only mode, Enabled when it asks
// for it (IfPossible or Enabled) and can have it, Disabled otherwise. rro
// says whether the pod's runtime handler supports recursive read-only
// mounts. A container without mounts has none (nil).
func appendSpecMounts(dst []v1.VolumeMountStatus, c *v1.Container, rro bool) []v1.VolumeMountStatus {
	if len(c.VolumeMounts) == 0 {
		return nil
	}
	out := growMounts(dst, len(c.VolumeMounts))
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		mode := out[i].RecursiveReadOnly
		out[i] = v1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			if mode == nil {
				mode = new(v1.RecursiveReadOnlyMode)
			}
			*mode = v1.RecursiveReadOnlyDisabled
			if recursiveReadOnly(m, rro) {
				*mode = v1.RecursiveReadOnlyEnabled
			}
			out[i].RecursiveReadOnly = mode
		}
	}
	return out
}

// recursiveReadOnly reports whether mount m is made recursively read-only.
// A mode the kubelet cannot honour (Enabled on a runtime without support, a
// mount that is not read-only, a propagation other than None, an unknown
// mode) is an error it logs, and the mount shows Disabled.
func recursiveReadOnly(m *v1.VolumeMount, rro bool) bool {
	if m.RecursiveReadOnly == nil || !m.ReadOnly || !rro {
		return false
	}
	if m.MountPropagation != nil && *m.MountPropagation != v1.MountPropagationNone {
		return false
	}
	switch *m.RecursiveReadOnly {
	case v1.RecursiveReadOnlyIfPossible, v1.RecursiveReadOnlyEnabled:
		return true
	}
	return false
}
