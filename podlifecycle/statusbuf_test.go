package podlifecycle

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/internal/apifill"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
)

// TestPropertyCopyOutIsDeepCopy: the copy of a status the machine hands
// out equals DeepCopy's field for field, for statuses with every field of
// the API drawn (nil, empty and set lists and pointers), and shares no
// memory with the status it copies.
func TestPropertyCopyOutIsDeepCopy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var st v1.PodStatus
		apifill.Fill(t, reflect.ValueOf(&st).Elem())
		want := st.DeepCopy()
		got := copyOut(&st)
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("copyOut differs from DeepCopy (-DeepCopy +copyOut):\n%s", cmp.Diff(want, &got))
		}
		apifill.Scribble(reflect.ValueOf(&got).Elem())
		if !reflect.DeepEqual(&st, want) {
			t.Fatalf("copyOut's copy shares memory with the status (-before +after):\n%s", cmp.Diff(want, &st))
		}
	})
}
