package podrunner

import (
	"slices"

	"github.com/nodestate/nodestate/podlifecycle"
	v1 "k8s.io/api/core/v1"
)

// Images returns the names of the images pulled onto the node so far, in
// the order they arrived.
func (r *Runner) Images() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.images) == 0 {
		return nil
	}
	out := make([]string, len(r.images))
	for i := range r.images {
		out[i] = r.images[i].Name
	}
	return out
}

// Image is one image on the node, as the runtime reported it.
type Image struct {
	// Name is the image as the pod specs name it.
	Name string
	// Ref is the runtime's reference of it (ImageRef of the first
	// container created from it); empty until one is.
	Ref string
	// Size is the size in bytes its pull reported.
	Size int64
}

// NodeImages returns the images pulled onto the node so far, in the order
// they arrived, with their refs and sizes: what a kubelet's node status
// lists (status.images).
func (r *Runner) NodeImages() []Image {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.images)
}

// withImages returns p's observations behind the images other pods pulled
// onto the node since p last stepped (ImagePresent): news for the step p
// takes anyway, never a reason to step.
func (r *Runner) withImages(p *podEntry) []podlifecycle.Observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.told == len(r.images) {
		return p.obs
	}
	p.imgs = p.imgs[:0]
	for ; p.told < len(r.images); p.told++ {
		if img := r.images[p.told].Name; usesImage(p.api, img) {
			p.imgs = append(p.imgs, podlifecycle.Observation{Kind: podlifecycle.ImagePresent, Image: img})
		}
	}
	if len(p.imgs) == 0 {
		return p.obs
	}
	p.imgs = append(p.imgs, p.obs...)
	return p.imgs
}

// pulled adds an image p pulled to the node's images, with the size its
// pull reported; p learns it from its own pull.
func (r *Runner) pulled(p *podEntry, img string, size int64) {
	if img == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.images {
		if r.images[i].Name == img {
			return
		}
	}
	r.images = append(r.images, Image{Name: img, Size: size})
	if p.told == len(r.images)-1 {
		p.told++
	}
}

// imageRef records ref as the runtime's reference of image img, when the
// node has the image and knows no ref of it yet.
func (r *Runner) imageRef(img, ref string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.images {
		if r.images[i].Name == img && r.images[i].Ref == "" {
			r.images[i].Ref = ref
		}
	}
}

// containerImage is the image of pod's container name ("" for none).
func containerImage(pod *v1.Pod, name string) string {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return list[i].Image
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if c := &pod.Spec.EphemeralContainers[i].EphemeralContainerCommon; c.Name == name {
			return c.Image
		}
	}
	return ""
}

func usesImage(pod *v1.Pod, img string) bool {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Image == img {
				return true
			}
		}
	}
	return false
}
