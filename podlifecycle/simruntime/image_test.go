package simruntime_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/containerstate"
	pl "github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestImageRef(t *testing.T) {
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	tests := []struct{ reason, image, want string }{
		{"a tag is dropped from the repository; the digest is the name's", "nginx:1.27", "nginx@sha256:" + sum("nginx:1.27")},
		{"no tag: the name the kubelet pulls has :latest", "busybox", "busybox@sha256:" + sum("busybox:latest")},
		{"a registry port is not a tag", "registry.example:5000/team/app", "registry.example:5000/team/app@sha256:" + sum("registry.example:5000/team/app:latest")},
		{"a registry port and a tag", "registry.example:5000/team/app:v2", "registry.example:5000/team/app@sha256:" + sum("registry.example:5000/team/app:v2")},
		{"an image named by digest keeps its repository, the digest is the name's", "nginx@sha256:" + sum("x"), "nginx@sha256:" + sum("nginx@sha256:"+sum("x"))},
		{"no image, no ref", "", ""},
	}
	for _, tt := range tests {
		if got := simruntime.ImageRef(tt.image); got != tt.want {
			t.Errorf("%s: ImageRef(%q) = %q, want %q", tt.reason, tt.image, got, tt.want)
		}
	}
	if simruntime.ImageRef("app:1") == simruntime.ImageRef("app:2") {
		t.Error("two tags of a repository have the same ref")
	}
	if simruntime.ImageRef("app") != simruntime.ImageRef("app:latest") {
		t.Error("an untagged image is the :latest one")
	}
}

func TestApplied(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	l := func(kv ...string) v1.ResourceList {
		out := v1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	tests := []struct {
		reason string
		pod    *v1.ResourceRequirements
		c      v1.ResourceRequirements
		want   *containerstate.ActuatedResources
	}{
		{reason: "no resources: the minimum shares read back as 2m, nothing else",
			want: &containerstate.ActuatedResources{CPURequest: q("2m")}},
		{reason: "the spec's requests and limits, as shares, quota and limit read back",
			c:    v1.ResourceRequirements{Requests: l("cpu", "100m", "memory", "64Mi"), Limits: l("cpu", "500m", "memory", "128Mi")},
			want: &containerstate.ActuatedResources{CPURequest: q("100m"), MemoryRequest: q("64Mi"), CPULimit: q("500m"), MemoryLimit: q("128Mi")}},
		{reason: "a CPU limit below 10m is the smallest quota, 10m; a request below 2m the smallest shares",
			c:    v1.ResourceRequirements{Requests: l("cpu", "1m"), Limits: l("cpu", "5m")},
			want: &containerstate.ActuatedResources{CPURequest: q("2m"), CPULimit: q("10m")}},
		{reason: "a limit the container lacks is the pod-level one, and without a CPU request the shares follow the CPU limit",
			pod:  &v1.ResourceRequirements{Limits: l("memory", "1Gi", "cpu", "2")},
			c:    v1.ResourceRequirements{Requests: l("memory", "64Mi")},
			want: &containerstate.ActuatedResources{CPURequest: q("2"), CPULimit: q("2"), MemoryRequest: q("64Mi"), MemoryLimit: q("1Gi")}},
		{reason: "other resources are not reported",
			c: v1.ResourceRequirements{Requests: l("ephemeral-storage", "1Gi")}, want: &containerstate.ActuatedResources{CPURequest: q("2m")}},
	}
	for _, tt := range tests {
		got := simruntime.Applied(tt.pod, &v1.Container{Name: "c", Resources: tt.c})
		if d := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tt.reason, d)
		}
	}
}

// TestRuntimeReportsImageRefAndResources: a start reports the image ref on
// ContainerCreated, for a pulled image and for one that was present, and
// the applied resources on ContainerStarted.
func TestRuntimeReportsImageRefAndResources(t *testing.T) {
	pod := onePod()
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")}}
	rt, err := simruntime.New(simruntime.DefaultOptions(), pod, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Do(t0, []pl.Action{pull, start}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Do(t0.Add(time.Minute), []pl.Action{start}); err != nil { // the image is present now
		t.Fatal(err)
	}
	var created, started int
	for _, o := range rt.Due(t0.Add(time.Hour)) {
		switch o.Kind {
		case pl.ContainerCreated:
			created++
			if o.ImageRef != simruntime.ImageRef("app:1") || !strings.HasPrefix(o.ImageRef, "app@sha256:") {
				t.Errorf("ContainerCreated image ref %q", o.ImageRef)
			}
		case pl.ContainerStarted:
			started++
			if o.Resources == nil || o.Resources.CPURequest == nil || o.Resources.CPURequest.MilliValue() != 250 || o.Resources.CPULimit != nil {
				t.Errorf("ContainerStarted resources %+v, want a CPU request of 250m and nothing else", o.Resources)
			}
		}
	}
	if created != 2 || started != 2 {
		t.Fatalf("%d creates and %d starts, want 2 of each", created, started)
	}
}

// FuzzImageRef: any image name gets a ref without panicking, the same
// every time: "<a prefix of the name>@sha256:<64 hex>".
func FuzzImageRef(f *testing.F) {
	for _, s := range []string{"nginx", "nginx:1", "r:5000/a/b:c", "a@sha256:00", "", ":", "/:", "a:b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, image string) {
		ref := simruntime.ImageRef(image)
		if ref != simruntime.ImageRef(image) {
			t.Fatal("not deterministic")
		}
		switch {
		case image == "":
			if ref != "" {
				t.Fatalf("ref %q for no image", ref)
			}
		default:
			i := strings.LastIndex(ref, "@sha256:")
			repo, digest := ref[:max(i, 0)], ref[i+len("@sha256:"):]
			if i < 0 || len(digest) != 64 || !strings.HasPrefix(image, repo) {
				t.Fatalf("ref %q for %q", ref, image)
			}
			if _, err := hex.DecodeString(digest); err != nil {
				t.Fatalf("digest %q: %v", digest, err)
			}
		}
	})
}
