package reslist

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestCopy(t *testing.T) {
	src := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
	storage := v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}
	for _, c := range []struct {
		name     string
		dst, src v1.ResourceList
		want     v1.ResourceList
	}{
		{"nil src is nil", storage, nil, nil},
		{"empty src is empty, not nil", nil, v1.ResourceList{}, v1.ResourceList{}},
		{"into new storage", nil, src, src},
		{"into old storage, cleared", storage, src, src},
	} {
		if got := Copy(c.dst, c.src); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if got := Empty(nil); got == nil || len(got) != 0 {
		t.Errorf("Empty(nil) = %v, want an empty list", got)
	}
}
