package statussync

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/nodestate/nodestate/internal/podcond"
	"github.com/nodestate/nodestate/podphase"
)

// Merge returns the status to send for a pod whose status on the API server
// is api and whose kubelet status is kubelet (spec section 8):
//
//   - conditions the kubelet does not own, and DisruptionTarget, come from
//     api; the kubelet's owned conditions replace the API's; the kubelet's
//     DisruptionTarget is written only when the pod moves to a terminal
//     phase and couldHaveRunningContainers is false;
//   - resource claim statuses come from api;
//   - a move to a terminal phase is held back (the API's phase, reason and
//     message are kept) while couldHaveRunningContainers is true;
//   - a terminal phase on the API is kept, with its reason and message,
//     whatever the kubelet's phase: another writer (pod garbage
//     collection, the eviction API) may have ended the pod, and a terminal
//     phase never changes;
//   - on a terminal phase, a True Ready or ContainersReady becomes False
//     with reason PodFailed or PodCompleted.
//
// Neither input is modified; the result shares nothing with them. A nil
// status is an empty one (a pod not read yet).
func (o Options) Merge(api, kubelet *v1.PodStatus, couldHaveRunningContainers bool) v1.PodStatus {
	if api == nil {
		api = &v1.PodStatus{}
	}
	if kubelet == nil {
		kubelet = &v1.PodStatus{}
	}
	out := *kubelet.DeepCopy()
	transitioning := !podphase.IsTerminal(api.Phase) && podphase.IsTerminal(kubelet.Phase)

	conds := make([]v1.PodCondition, 0, len(api.Conditions)+len(kubelet.Conditions))
	for i := range api.Conditions {
		if o.OwnershipOf(api.Conditions[i].Type) != Owned {
			conds = append(conds, *api.Conditions[i].DeepCopy())
		}
	}
	for i := range kubelet.Conditions {
		c := kubelet.Conditions[i].DeepCopy()
		switch o.OwnershipOf(c.Type) {
		case Owned:
			conds = append(conds, *c)
		case Shared:
			if transitioning && !couldHaveRunningContainers {
				if ac := podcond.Find(api.Conditions, c.Type); ac != nil && ac.Status == c.Status {
					c.LastTransitionTime = ac.LastTransitionTime
				}
				conds = podcond.ReplaceOrAppend(conds, *c)
			}
		}
	}
	out.Conditions = conds

	a := api.DeepCopy()
	out.ResourceClaimStatuses = a.ResourceClaimStatuses
	out.ExtendedResourceClaimStatus = a.ExtendedResourceClaimStatus
	out.NodeAllocatableResourceClaimStatuses = a.NodeAllocatableResourceClaimStatuses

	if transitioning && couldHaveRunningContainers || podphase.IsTerminal(api.Phase) && api.Phase != kubelet.Phase {
		out.Phase, out.Reason, out.Message = api.Phase, api.Reason, api.Message
	}

	if podphase.IsTerminal(out.Phase) {
		reason := podphase.ReasonPodCompleted
		if out.Phase == v1.PodFailed {
			reason = podphase.ReasonPodFailed
		}
		for i := range out.Conditions {
			c := &out.Conditions[i]
			if (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && c.Status == v1.ConditionTrue {
				c.Status, c.Reason = v1.ConditionFalse, reason
			}
		}
	}
	return out
}

// Patch returns the strategic merge patch that moves a pod's status from
// api to merged, carrying uid in metadata.uid so that the API server refuses
// it if the pod was recreated; and, when resourceVersion is not empty, that
// resourceVersion too, so that the server refuses it (409) if the pod changed
// since. unchanged is true when the patch carries nothing else: then there is
// nothing to send (the patch returned then carries the metadata alone: a
// conditional read when it has a resourceVersion).
//
// A nil status is an error wrapping ErrInvalidInput.
func Patch(uid types.UID, resourceVersion string, api, merged *v1.PodStatus) (patch []byte, unchanged bool, err error) {
	if api == nil || merged == nil {
		return nil, false, fmt.Errorf("%w: nil status for Patch", ErrInvalidInput)
	}
	oldJSON, err := json.Marshal(v1.Pod{Status: *api})
	if err != nil {
		return nil, false, fmt.Errorf("statussync: encoding the API status: %w", err)
	}
	newJSON, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid, ResourceVersion: resourceVersion}, Status: *merged})
	if err != nil {
		return nil, false, fmt.Errorf("statussync: encoding the merged status: %w", err)
	}
	patch, err = strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, v1.Pod{})
	if err != nil {
		return nil, false, fmt.Errorf("statussync: building the status patch: %w", err)
	}
	// The metadata differs from the empty one of api, so the patch carries
	// it; a patch of the metadata alone changes nothing.
	return patch, bytes.Equal(patch, metadataOnly(uid, resourceVersion)), nil
}

func metadataOnly(uid types.UID, rv string) []byte {
	meta := map[string]any{}
	if uid != "" {
		meta["uid"] = uid
	}
	if rv != "" {
		meta["resourceVersion"] = rv
	}
	if len(meta) == 0 {
		return []byte("{}")
	}
	b, _ := json.Marshal(map[string]any{"metadata": meta})
	return b
}
