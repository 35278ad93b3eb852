package statuscopy

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/internal/apifill"
)

// TestPropertyContainerStatusIsDeepCopy: a container status copied over
// another equals DeepCopy's field for field, for statuses with every field
// of the API drawn, and shares no memory with the status it copies.
func TestPropertyContainerStatusIsDeepCopy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var dst, src v1.ContainerStatus
		apifill.Fill(t, reflect.ValueOf(&dst).Elem())
		apifill.Fill(t, reflect.ValueOf(&src).Elem())
		want := src.DeepCopy()
		ContainerStatus(&dst, &src)
		if !reflect.DeepEqual(&dst, want) {
			t.Fatalf("the copy differs from DeepCopy (-DeepCopy +copy):\n%s", cmp.Diff(want, &dst))
		}
		apifill.Scribble(reflect.ValueOf(&dst).Elem())
		if !reflect.DeepEqual(&src, want) {
			t.Fatalf("the copy shares memory with the status (-before +after):\n%s", cmp.Diff(want, &src))
		}
	})
}
