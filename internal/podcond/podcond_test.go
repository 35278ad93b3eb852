package podcond

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestFindAndReplace(t *testing.T) {
	cs := []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}
	if Find(cs, v1.PodScheduled) != nil || Find(cs, v1.PodReady) != &cs[0] {
		t.Fatal("Find returns the element of that type, or nil")
	}
	cs = ReplaceOrAppend(cs, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue})
	cs = ReplaceOrAppend(cs, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
	if len(cs) != 2 || cs[0].Status != v1.ConditionTrue || cs[1].Type != v1.PodScheduled {
		t.Fatalf("replaced in place, appended when new: %+v", cs)
	}
}
