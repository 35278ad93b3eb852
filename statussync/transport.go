package statussync

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodGetter reads a pod from the API server.
type PodGetter interface {
	// GetPod returns the pod namespace/name as the server has it. The
	// caller owns the result. A missing pod is an error for which
	// k8s.io/apimachinery/pkg/api/errors.IsNotFound is true.
	GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error)
}

// StatusPatcher writes a pod's status.
type StatusPatcher interface {
	// PatchPodStatus applies a strategic merge patch
	// (application/strategic-merge-patch+json) to the status subresource of
	// pod namespace/name and returns the pod as the server stored it. The
	// patch carries metadata.uid, and may carry metadata.resourceVersion;
	// the server answers 422 Invalid when the UID is not the pod's (the pod
	// was recreated) and 409 Conflict when the resourceVersion is stale.
	// Errors are apimachinery StatusErrors so that IsNotFound, IsConflict
	// and IsInvalid classify them.
	PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error)
}

// PodDeleter deletes pods.
type PodDeleter interface {
	// DeletePod deletes pod namespace/name at once (grace period 0) if its
	// UID is still uid (a UID precondition: 409 Conflict otherwise).
	DeletePod(ctx context.Context, namespace, name string, uid types.UID) error
}

// Transport is everything an Engine asks of the API server. The client-go
// one is in the kube module; an in-memory one with fault injection is in
// statussynctest.
type Transport interface {
	PodGetter
	StatusPatcher
	PodDeleter
}

// Mirrors tells an Engine about static pods, whose status is cached under
// the static pod's UID but written to its mirror pod in the API. A node
// agent without static pods needs none.
type Mirrors interface {
	// MirrorUID returns the UID of the mirror pod of pod uid, and whether
	// uid is a static pod at all. A static pod whose mirror pod does not
	// exist yet returns ("", true): its status is not written.
	MirrorUID(uid types.UID) (mirror types.UID, static bool)
	// StaticUID returns the static pod UID for a mirror pod UID, and any
	// other UID unchanged.
	StaticUID(uid types.UID) types.UID
}

// DeletionSafety tells whether a pod's containers could still be running,
// which holds back a terminal phase (and DisruptionTarget) from the API.
type DeletionSafety interface {
	// PodCouldHaveRunningContainers reports whether any container of pod
	// could still run on the node.
	PodCouldHaveRunningContainers(pod *v1.Pod) bool
}
