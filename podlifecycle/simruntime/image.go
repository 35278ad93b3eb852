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
// the container status's imageID: "<repository>@sha256:<digest>". The name
// is the one the kubelet pulls: image with the default tag ":latest" added
// when it has neither a tag nor a digest (the kubelet's applyDefaultImageTag,
// without normalizing the registry). The repository is that name without
// its tag or digest, and the digest is the SHA-256 of the name, in hex; so
// every name has its own ref, the same in every run and on every node, as
// the oracle node's runtime reports it. An empty image has none ("").
func ImageRef(image string) string {
	if image == "" {
		return ""
	}
	name, repo := pulledName(image), image
	if i := strings.LastIndexByte(image, '@'); i >= 0 {
		repo = image[:i]
	} else if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		repo = image[:i]
	}
	sum := sha256.Sum256([]byte(name))
	return repo + "@sha256:" + hex.EncodeToString(sum[:])
}

// pulledName is the name the kubelet hands the runtime to pull: the image
// as written, with the default tag ":latest" when it has neither a tag nor
// a digest.
func pulledName(image string) string {
	if strings.LastIndexByte(image, '@') >= 0 || strings.LastIndexByte(image, ':') > strings.LastIndexByte(image, '/') {
		return image
	}
	return image + ":latest"
}

// The kubelet's CPU arithmetic (pkg/kubelet/cm): shares per CPU and their
// range, the CFS period and the smallest quota, in microseconds.
const (
	sharesPerCPU = 1024
	minShares    = 2
	maxShares    = 262144
	quotaPeriod  = 100000
	minQuota     = 1000
)

// Applied returns what the kubelet reads from a CRI runtime that applied
// container c's spec, for a running instance of it: the CPU shares, CFS
// quota and memory limit the kubelet gives the runtime, read back as
// quantities, and the memory request the kubelet keeps in its own record
// (a CRI runtime reports none). pod is the pod-level spec.resources, which
// may be nil.
//
//   - CPU request: the container's CPU request, or when it has none its
//     CPU limit (its own, else the pod-level one), as shares (2 at least,
//     1024 per CPU) read back rounded up, so 2m for a container with
//     neither and the request itself otherwise;
//   - CPU limit: the CPU limit (its own, else the pod-level one) as a
//     quota of at least 1 ms per 100 ms, so 10m at least; none without a
//     limit;
//   - memory limit: the memory limit (its own, else the pod-level one);
//     none without one;
//   - memory request: the container's, when it has one that is not zero.
//
// A nil c gets nil.
func Applied(pod *v1.ResourceRequirements, c *v1.Container) *containerstate.ActuatedResources {
	if c == nil {
		return nil
	}
	limit := func(name v1.ResourceName) resource.Quantity {
		q := c.Resources.Limits[name]
		if q.IsZero() && pod != nil {
			if p := pod.Limits[name]; !p.IsZero() {
				return p
			}
		}
		return q
	}
	var a containerstate.ActuatedResources
	cpuLimit := limit(v1.ResourceCPU)
	cpuRequest, ok := c.Resources.Requests[v1.ResourceCPU]
	if !ok {
		cpuRequest = cpuLimit
	}
	shares := int64(minShares)
	if m := cpuRequest.MilliValue(); m != 0 {
		shares = min(max(m*sharesPerCPU/1000, minShares), maxShares)
	}
	a.CPURequest = resource.NewMilliQuantity((shares*1000+sharesPerCPU-1)/sharesPerCPU, resource.DecimalSI)
	if m := cpuLimit.MilliValue(); m > 0 {
		quota := max(m*quotaPeriod/1000, minQuota)
		a.CPULimit = resource.NewMilliQuantity(quota*1000/quotaPeriod, resource.DecimalSI)
	}
	if mem := limit(v1.ResourceMemory); mem.Value() > 0 {
		a.MemoryLimit = resource.NewQuantity(mem.Value(), resource.BinarySI)
	}
	if mem := c.Resources.Requests[v1.ResourceMemory]; !mem.IsZero() {
		m := mem.DeepCopy()
		a.MemoryRequest = &m
	}
	return &a
}
