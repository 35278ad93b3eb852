package simruntime

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ImageRef returns the image ref the simulated runtime reports for image,
// the container status's imageID: "<repository>@sha256:<digest>", where the
// repository is image without its tag and the digest is the SHA-256 of
// image itself, in hex. So every image name has its own ref, the same in
// every run and on every node. An image already named by digest
// ("repo@sha256:...") is its own ref, as a runtime reports it; an empty
// image has none ("").
func ImageRef(image string) string {
	if image == "" {
		return ""
	}
	if strings.Contains(image, "@") {
		return image
	}
	repo := image
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo = repo[:i]
	}
	sum := sha256.Sum256([]byte(image))
	return repo + "@sha256:" + hex.EncodeToString(sum[:])
}

// Applied returns what a runtime that applied container c's spec reports
// for a running instance of it: the CPU request, and the CPU and memory
// limits the kubelet gives the runtime, which are the container's own or,
// when it sets none, the pod-level ones of pod (spec.resources, which may be
// nil); and the memory request, which a CRI runtime does not report but the
// kubelet reads from its own record of the same spec. A value the spec does
// not set is not reported (nil); a container that sets none of them, or a
// nil c, gets nil.
func Applied(pod *v1.ResourceRequirements, c *v1.Container) *containerstate.ActuatedResources {
	if c == nil {
		return nil
	}
	var a containerstate.ActuatedResources
	set := false
	get := func(list v1.ResourceList, name v1.ResourceName) *resource.Quantity {
		if q, ok := list[name]; ok {
			c := q.DeepCopy()
			set = true
			return &c
		}
		return nil
	}
	a.CPURequest = get(c.Resources.Requests, v1.ResourceCPU)
	a.MemoryRequest = get(c.Resources.Requests, v1.ResourceMemory)
	limits := c.Resources.Limits
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		q := get(limits, name)
		if (q == nil || q.IsZero()) && pod != nil {
			if p := pod.Limits[name]; !p.IsZero() {
				q = get(pod.Limits, name)
			}
		}
		if name == v1.ResourceCPU {
			a.CPULimit = q
		} else {
			a.MemoryLimit = q
		}
	}
	if !set {
		return nil
	}
	return &a
}
