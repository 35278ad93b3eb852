package kube

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/podrunner"
)

// TestNodeImages: status.images as the kubelet's Images setter writes it: largest first
// (ties by name), the digest reference then the tag (":latest" for an untagged image, none for
// one named by digest only), at most 50 images.
func TestNodeImages(t *testing.T) {
	got := nodeImages([]podrunner.Image{
		{Name: "small:1", Ref: "small@sha256:aa", Size: 10},
		{Name: "big", Ref: "big@sha256:bb", Size: 30},
		{Name: "pinned@sha256:cc", Size: 20},
		{Name: "registry:5000/app", Size: 10},
	})
	want := []corev1.ContainerImage{
		{Names: []string{"big@sha256:bb", "big:latest"}, SizeBytes: 30},
		{Names: []string{"pinned@sha256:cc"}, SizeBytes: 20},
		{Names: []string{"registry:5000/app:latest"}, SizeBytes: 10},
		{Names: []string{"small@sha256:aa", "small:1"}, SizeBytes: 10},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("images (-want +got):\n%s", d)
	}
	var many []podrunner.Image
	for i := range 60 {
		many = append(many, podrunner.Image{Name: "img" + strconv.Itoa(i) + ":1", Size: int64(i)})
	}
	if got := nodeImages(many); len(got) != maxNodeImages || got[0].SizeBytes != 59 || got[49].SizeBytes != 10 {
		t.Errorf("60 images: %d listed, from %d to %d bytes; want the 50 largest", len(got), got[0].SizeBytes, got[len(got)-1].SizeBytes)
	}
	if nodeImages(nil) != nil {
		t.Error("no images: want no list")
	}
}
