// Package podcond has the small pod-condition list helpers that podphase
// and statussync share.
package podcond

import v1 "k8s.io/api/core/v1"

// Find returns the condition of type t in cs, or nil.
func Find(cs []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// ReplaceOrAppend puts c in place of the condition of its type in cs, or
// appends it.
func ReplaceOrAppend(cs []v1.PodCondition, c v1.PodCondition) []v1.PodCondition {
	if prev := Find(cs, c.Type); prev != nil {
		*prev = c
		return cs
	}
	return append(cs, c)
}
