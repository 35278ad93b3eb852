package statuseq

import (
	"flag"
	"os"
	"reflect"
	"testing"

	"github.com/nodestate/nodestate/internal/apifill"
	"github.com/nodestate/nodestate/internal/rapidcheck"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"pgregory.net/rapid"
)

// plain clears the fields Equal leaves to Semantic.DeepEqual, but those
// keep says to keep, so that both of its ways are compared.
func plain(s *v1.PodStatus, keep []bool) {
	if !keep[0] {
		s.ResourceClaimStatuses = nil
	}
	if !keep[1] {
		s.ExtendedResourceClaimStatus = nil
	}
	if !keep[2] {
		s.NodeAllocatableResourceClaimStatuses = nil
	}
	if !keep[3] {
		s.VolumeHealth = nil
	}
	if !keep[4] && s.Resources != nil {
		s.Resources.Claims = nil
	}
	for _, l := range [3][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range l {
			if !keep[5] {
				l[i].AllocatedResourcesStatus = nil
				if l[i].Resources != nil {
					l[i].Resources.Claims = nil
				}
			}
			for j := range l[i].VolumeMounts {
				if !keep[6] {
					l[i].VolumeMounts[j].VolumeStatus = nil
				}
			}
		}
	}
}

// TestPropertyEqualIsSemantic: Equal agrees with equality.Semantic.DeepEqual
// on statuses with every field of the API drawn, and on a copy of one with
// a field drawn again (equal as often as not: nil and empty lists, the same
// quantity written another way, the same instant in another zone).
func TestPropertyEqualIsSemantic(t *testing.T) {
	var equal, unequal int
	rapid.Check(t, func(t *rapid.T) {
		var a v1.PodStatus
		apifill.Fill(t, reflect.ValueOf(&a).Elem())
		all := rapid.Bool().Draw(t, "plain")
		keep := make([]bool, 7)
		for i := range keep {
			keep[i] = !all && rapid.Bool().Draw(t, "keepExotic")
		}
		plain(&a, keep)
		b := a.DeepCopy()
		for range rapid.IntRange(0, 2).Draw(t, "perturbations") {
			apifill.Perturb(t, reflect.ValueOf(b).Elem())
		}
		plain(b, keep)
		want := equality.Semantic.DeepEqual(a, *b)
		if got := Equal(&a, b); got != want {
			t.Fatalf("Equal %v, Semantic.DeepEqual %v", got, want)
		}
		if want {
			equal++
		} else {
			unequal++
		}
	})
	if equal == 0 || unequal == 0 {
		t.Fatalf("%d equal and %d unequal pairs: the property compares one side only", equal, unequal)
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	if err := rapidcheck.MinChecks(3000); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// TestPropertyIdenticalIsDeepEqual: Identical holds only for container
// statuses reflect.DeepEqual holds for, on drawn statuses and perturbed
// copies, and holds for a status and itself unless it has a field
// Identical does not compare.
func TestPropertyIdenticalIsDeepEqual(t *testing.T) {
	var identical int
	rapid.Check(t, func(t *rapid.T) {
		var a v1.ContainerStatus
		apifill.Fill(t, reflect.ValueOf(&a).Elem())
		if rapid.Bool().Draw(t, "supported") {
			a.AllocatedResourcesStatus = nil
			for i := range a.VolumeMounts {
				a.VolumeMounts[i].VolumeStatus = nil
			}
		}
		b := a
		if rapid.Bool().Draw(t, "copy") {
			b = *a.DeepCopy()
		}
		for range rapid.IntRange(0, 2).Draw(t, "perturbations") {
			if rapid.Bool().Draw(t, "copyFirst") {
				b = *b.DeepCopy()
			}
			apifill.Perturb(t, reflect.ValueOf(&b).Elem())
		}
		got := Identical(&a, &b)
		if got && !reflect.DeepEqual(a, b) {
			t.Fatalf("Identical for statuses that differ:\n%+v\n%+v", a, b)
		}
		supported := a.AllocatedResourcesStatus == nil
		for i := range a.VolumeMounts {
			supported = supported && a.VolumeMounts[i].VolumeStatus == nil
		}
		if supported && !Identical(&a, &a) {
			t.Fatal("a status is not identical to itself")
		}
		if got {
			identical++
		}
	})
	if identical == 0 {
		t.Fatal("no identical pair was drawn")
	}
}
