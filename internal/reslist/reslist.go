// Package reslist has the resource-list helpers that write a status into
// storage a caller reuses.
package reslist

import v1 "k8s.io/api/core/v1"

// Copy returns a copy of src in dst's storage (cleared first), or in a new
// map when dst is nil; nil for a nil src, as ResourceList.DeepCopy.
func Copy(dst, src v1.ResourceList) v1.ResourceList {
	if src == nil {
		return nil
	}
	if dst == nil {
		dst = make(v1.ResourceList, len(src))
	} else {
		clear(dst)
	}
	for name, q := range src {
		dst[name] = q.DeepCopy()
	}
	return dst
}

// Empty returns dst cleared, or a new empty list when dst is nil.
func Empty(dst v1.ResourceList) v1.ResourceList {
	if dst == nil {
		return v1.ResourceList{}
	}
	clear(dst)
	return dst
}
