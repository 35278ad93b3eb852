package podlifecycle

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/containerstate"
)

// TestCrashKeyFields: the crash-loop back-off key (section 4.2 step 1: the
// kubelet's key hashes the container's name, image and resources as text) is
// computed again exactly when one of those differs, a quantity's
// representation included, and never for anything else in the spec.
func TestCrashKeyFields(t *testing.T) {
	base := func() *v1.Container {
		return &v1.Container{Name: "app", Image: "app:1", Resources: v1.ResourceRequirements{
			Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")},
			Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")},
			Claims:   []v1.ResourceClaim{{Name: "gpu"}},
		}}
	}
	for _, tc := range []struct {
		name   string
		change func(*v1.Container)
		same   bool
	}{
		{"identical", func(*v1.Container) {}, true},
		{"another command", func(c *v1.Container) { c.Command = []string{"run"} }, true},
		{"another name", func(c *v1.Container) { c.Name = "other" }, false},
		{"another image", func(c *v1.Container) { c.Image = "app:2" }, false},
		{"another limit", func(c *v1.Container) { c.Resources.Limits[v1.ResourceCPU] = resource.MustParse("2") }, false},
		{"a limit written otherwise", func(c *v1.Container) { c.Resources.Limits[v1.ResourceCPU] = resource.MustParse("1000m") }, false},
		{"one limit more", func(c *v1.Container) { c.Resources.Limits[v1.ResourceMemory] = resource.MustParse("1Gi") }, false},
		{"a limit of another resource", func(c *v1.Container) {
			c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("1")}
		}, false},
		{"no limits", func(c *v1.Container) { c.Resources.Limits = nil }, false},
		{"another request", func(c *v1.Container) { c.Resources.Requests[v1.ResourceMemory] = resource.MustParse("128Mi") }, false},
		{"no requests", func(c *v1.Container) { c.Resources.Requests = nil }, false},
		{"empty claims", func(c *v1.Container) { c.Resources.Claims = []v1.ResourceClaim{} }, false},
		{"another claim", func(c *v1.Container) { c.Resources.Claims[0].Name = "fpga" }, false},
		{"one claim more", func(c *v1.Container) { c.Resources.Claims = append(c.Resources.Claims, v1.ResourceClaim{Name: "fpga"}) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := base(), base()
			tc.change(b)
			if got := sameKeyFields(a, b); got != tc.same {
				t.Errorf("sameKeyFields: %v, want %v", got, tc.same)
			}
			if got := sameKeyFields(b, a); got != tc.same {
				t.Errorf("sameKeyFields reversed: %v, want %v", got, tc.same)
			}
			// The key itself agrees: the same key exactly when the fields
			// are the same.
			ka := containerstate.CrashLoopKey("p", "ns", "uid", a)
			kb := containerstate.CrashLoopKey("p", "ns", "uid", b)
			if (ka == kb) != tc.same {
				t.Errorf("keys %q and %q, same fields %v", ka, kb, tc.same)
			}
		})
	}
}
