package cri

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestPull checks the pull clauses: which pulls of a container fail, with
// simruntime's message, how long they take, and what a node that started
// with no images then has.
func TestPull(t *testing.T) {
	tests := []struct {
		clause string
		pulls  []bool // the outcome of each pull, in order: true = pulled
		takes  time.Duration
		why    string
	}{
		{"", []bool{true, true}, 0, "no behaviour: every pull succeeds at once"},
		{"pull fail 2", []bool{false, false, true, true}, 0, "pull fail <n>: the container's first n pulls fail"},
		{"pull fail always", []bool{false, false, false}, 0, "pull fail always: every pull fails"},
		{"pull slow 20s", []bool{true, true}, 20 * time.Second, "pull slow <d>: each pull takes d"},
		{"pull slow 5s; pull fail 1", []bool{false, true}, 5 * time.Second, "a failed pull takes the pull time too"},
	}
	for _, tc := range tests {
		t.Run(tc.why, func(t *testing.T) {
			f := newFixture(t, nil)
			beh := map[string]string{}
			if tc.clause != "" {
				beh["app"] = tc.clause
			}
			p := pod("p", beh)
			f.sandbox(p)
			img := f.rt.Images()
			ctx := context.Background()
			if st, _ := img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"}}); st.Image != nil {
				t.Fatal("the node starts with an image")
			}
			for i, ok := range tc.pulls {
				start := f.clk.Now()
				var ref string
				done := async(func() error {
					resp, err := img.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"}, SandboxConfig: sandboxConfig(p)})
					if err == nil {
						ref = resp.ImageRef
					}
					return err
				})
				if tc.takes > 0 {
					f.waiters(1)
					f.clk.Step(tc.takes - time.Millisecond)
					f.waiters(1)
					pending(t, done, "PullImage")
					f.clk.Step(time.Millisecond)
				}
				err := result(t, done, "PullImage")
				if got := f.clk.Since(start); got != tc.takes {
					t.Errorf("pull %d took %v, want %v", i+1, got, tc.takes)
				}
				if ok != (err == nil) {
					t.Fatalf("pull %d: error %v, want pulled=%v", i+1, err, ok)
				}
				if err != nil {
					const msg = `failed to pull and unpack image "busybox:1.36": not found`
					if s := status.Convert(err); s.Code() != codes.NotFound || s.Message() != msg {
						t.Errorf("pull %d: %v, want code NotFound %q", i+1, err, msg)
					}
					continue
				}
				if !strings.HasPrefix(ref, "sha256:") || len(ref) != len("sha256:")+64 {
					t.Errorf("image ref %q, want sha256:<64 hex>", ref)
				}
				st, _ := img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"}})
				if st.Image == nil || st.Image.Id != ref || st.Image.Size != 1<<20 {
					t.Errorf("after a pull, image status %+v, want ID %s and 1 MiB", st.Image, ref)
				}
			}
		})
	}
}

// TestPullShared checks that images are the node's, not the pod's: a pull
// that succeeded for one pod makes the image present for every pod (so
// IfNotPresent does not pull), and pull counts are per pod and container.
func TestPullShared(t *testing.T) {
	f := newFixture(t, nil)
	a, b := pod("a", nil), pod("b", map[string]string{"app": "pull fail 1"})
	f.sandbox(a)
	f.sandbox(b)
	ctx := context.Background()
	img := f.rt.Images()
	f.pull(a, "busybox:1.36")
	for _, ref := range []string{"busybox:1.36", "docker.io/library/busybox:1.36"} {
		if st, _ := img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}}); st.Image == nil {
			t.Errorf("%s is not present after another pod pulled busybox:1.36", ref)
		}
	}
	if _, err := img.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"}, SandboxConfig: sandboxConfig(b)}); err == nil {
		t.Error("b's first pull succeeded; pull fail 1 counts b's pulls, not the node's")
	}
	lst, _ := img.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if len(lst.Images) != 1 {
		t.Errorf("%d images listed, want 1", len(lst.Images))
	}
	if _, err := img.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: lst.Images[0].Id}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"}}); st.Image != nil {
		t.Error("a removed image is still present")
	}
	fs, _ := img.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if len(fs.ImageFilesystems) != 1 || fs.ImageFilesystems[0].UsedBytes.GetValue() != 0 {
		t.Errorf("image filesystems %+v, want one, empty", fs.ImageFilesystems)
	}
}

// TestPullByContainer checks which container's behaviour a pull follows
// when containers of a pod share an image or not.
func TestPullByContainer(t *testing.T) {
	f := newFixture(t, nil)
	p := pod("p", map[string]string{"side": "pull fail always"})
	p.Spec.InitContainers = []v1.Container{{Name: "side", Image: "other:2"}}
	f.sandbox(p)
	ctx := context.Background()
	if _, err := f.rt.Images().PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "other:2"}, SandboxConfig: sandboxConfig(p)}); err == nil {
		t.Error("the pull of side's image succeeded; its behaviour says pull fail always")
	}
	f.pull(p, "busybox:1.36") // app's image: app has no pull clause
}

// TestContainerImage checks the image fields a container reports: the
// spec's image (what simruntime reports), the image ID, and a digest
// reference as the imageID the pod status shows.
func TestContainerImage(t *testing.T) {
	f := newFixture(t, nil)
	p := pod("p", nil)
	id := f.start(p, f.sandbox(p), "app")
	st := f.status(id)
	if st.Image.GetImage() != "busybox:1.36" || !strings.HasPrefix(st.ImageRef, "busybox@sha256:") || !strings.HasPrefix(st.ImageId, "sha256:") {
		t.Errorf("image %q ref %q id %q, want busybox:1.36, busybox@sha256:..., sha256:...", st.Image.GetImage(), st.ImageRef, st.ImageId)
	}
}
