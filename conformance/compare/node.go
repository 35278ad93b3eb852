package compare

import (
	"errors"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeStatusMaxImages is the kubelet's --node-status-max-images default.
const nodeStatusMaxImages = 50

// NodeReport is the comparison of the two Node objects, field by field.
type NodeReport struct {
	// Differences are the fields that differ, without the documented ones.
	Differences []Difference
	// Documented counts the differences a documented one explains, by ID.
	Documented map[string]int
}

// normalizeNode normalises a Node: its name, addresses and kubelet port
// replaced, the API server's bookkeeping (uid, resourceVersion,
// creationTimestamp, managedFields) and every time dropped.
func normalizeNode(n *corev1.Node) (map[string]any, error) {
	var hostIPs []string
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP {
			hostIPs = append(hostIPs, a.Address)
		}
	}
	c := n.DeepCopy()
	c.UID, c.ResourceVersion, c.CreationTimestamp, c.ManagedFields = "", "", metav1.Time{}, nil
	c.Status.DaemonEndpoints.KubeletEndpoint.Port = 0
	bySize := sort.SliceIsSorted(c.Status.Images, func(i, j int) bool { return c.Status.Images[i].SizeBytes > c.Status.Images[j].SizeBytes })
	// The kubelet lists images by size, largest first, and equal sizes in
	// the order its runtime gave them; the comparison orders those by name.
	sort.SliceStable(c.Status.Images, func(i, j int) bool {
		a, b := c.Status.Images[i], c.Status.Images[j]
		if a.SizeBytes != b.SizeBytes {
			return a.SizeBytes > b.SizeBytes
		}
		return strings.Join(a.Names, ",") < strings.Join(b.Names, ",")
	})
	norm := newNormalizer(subject{Node: n.Name}, n.CreationTimestamp.Time, hostIPs)
	out, err := norm.object(c)
	if err != nil {
		return nil, err
	}
	out.Obj["imagesLargestFirst"] = bySize
	if len(c.Status.Images) >= nodeStatusMaxImages {
		// The kubelet keeps the 50 largest; which of images of one size
		// make the cut is the order its runtime lists them in.
		st, _ := out.Obj["status"].(map[string]any)
		sizes := make([]any, len(c.Status.Images))
		for i, im := range c.Status.Images {
			sizes[i] = float64(im.SizeBytes)
		}
		st["images"] = map[string]any{"count": float64(len(c.Status.Images)), "sizes": sizes}
	}
	return out.Obj, nil
}

// compareNodes compares the kubelet's Node with nodestate's.
func compareNodes(k, n *corev1.Node, known []Known) (NodeReport, error) {
	r := NodeReport{Documented: map[string]int{}}
	if k == nil || n == nil {
		return r, errors.New("compare: a Node is missing from the recording")
	}
	a, err := normalizeNode(k)
	if err != nil {
		return r, err
	}
	b, err := normalizeNode(n)
	if err != nil {
		return r, err
	}
	for _, d := range diff(a, b) {
		if id := matchNode(known, d); id != "" {
			r.Documented[id]++
			continue
		}
		r.Differences = append(r.Differences, d)
	}
	return r, nil
}
