package statussync

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Verb is the kind of an API request.
type Verb uint8

// The requests a Planner asks for.
const (
	// VerbGet reads the pod.
	VerbGet Verb = iota + 1
	// VerbPatch applies Request.Patch to the pod's status subresource.
	VerbPatch
	// VerbDelete deletes the pod with grace period 0 and Request.UID as
	// precondition.
	VerbDelete
)

// String returns "get", "patch" or "delete", the names Hooks.Request uses.
func (v Verb) String() string {
	switch v {
	case VerbGet:
		return "get"
	case VerbPatch:
		return "patch"
	case VerbDelete:
		return "delete"
	}
	return "Verb(" + strconv.Itoa(int(v)) + ")"
}

// Request is one API request a Planner wants made: a Transport call.
type Request struct {
	// Verb says which call.
	Verb Verb
	// Namespace and Name name the pod in the API.
	Namespace, Name string
	// UID is the API object's UID: the DELETE precondition; a PATCH
	// carries it in its body. For a static pod it is the mirror pod's.
	UID types.UID
	// Patch is the strategic merge patch of a PATCH; the planner does not
	// keep it.
	Patch []byte
	// Pod is the UID the cache knows the pod by (the static pod's UID for a
	// mirror pod).
	Pod types.UID
	// Version is the cached status version the request syncs.
	Version uint64
}

// Outcome says what a finished request meant for its pod.
type Outcome struct {
	// Synced is true when the request's version reached the server (also
	// when a GET showed that the server holds it and no PATCH was needed).
	Synced bool
	// Since is the first change the synced version carries (the time it
	// waited is measured from there); zero when unknown.
	Since time.Time
	// Deleted is true when the finished pod is deleted and forgotten.
	Deleted bool
	// Dropped is true when the cache entry was forgotten because the
	// server has another pod under the name (it was recreated).
	Dropped bool
	// Failed is true when the request failed; the pod waits until
	// RetryAt.
	Failed  bool
	RetryAt time.Time
}

// String renders the outcome for traces: "synced", "failed, retry at
// 12:00:01", "dropped", "synced, deleted", or "continues".
func (o Outcome) String() string {
	var s string
	switch {
	case o.Dropped:
		return "dropped"
	case o.Failed:
		s = "failed, retry at " + o.RetryAt.UTC().Format(time.TimeOnly)
	case o.Synced:
		s = "synced"
	default:
		s = "continues"
	}
	if o.Deleted {
		s += ", deleted"
	}
	return s
}

// String renders the request for traces: its verb, pod and patch.
func (r Request) String() string {
	s := fmt.Sprintf("%s %s/%s", r.Verb, r.Namespace, r.Name)
	if r.Verb == VerbPatch {
		s += " " + string(r.Patch)
	}
	return s
}
