package statussynctest

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// History checks what an engine wrote to an API against what its cache
// held. The test tags every status it caches with a unique message (see
// [History.Tag]) and records its version; the API reports every stored
// status through [API.OnWrite]. History then checks, for every pod:
//
//   - no status version older than one already written is written;
//   - a terminal phase on the server is never replaced by a non-terminal
//     one by the engine;
//   - a condition another writer set (a type the kubelet does not own) is
//     never lost by an engine write.
//
// It is safe for simultaneous use; the zero value is an empty history.
type History struct {
	mu sync.Mutex
	// versions maps a pod's tagged message to its cache version.
	versions map[types.UID]map[string]uint64
	written  map[types.UID]uint64
	phase    map[types.UID]v1.PodPhase
	foreign  map[types.UID]map[v1.PodConditionType]v1.ConditionStatus
	writes   int
	errs     []string
}

// init readies a zero History; the caller holds the lock.
func (h *History) init() {
	if h.versions == nil {
		h.versions, h.written = map[types.UID]map[string]uint64{}, map[types.UID]uint64{}
		h.phase, h.foreign = map[types.UID]v1.PodPhase{}, map[types.UID]map[v1.PodConditionType]v1.ConditionStatus{}
	}
}

// NewHistory returns an empty history.
func NewHistory() *History {
	return &History{versions: map[types.UID]map[string]uint64{}, written: map[types.UID]uint64{},
		phase: map[types.UID]v1.PodPhase{}, foreign: map[types.UID]map[v1.PodConditionType]v1.ConditionStatus{}}
}

// Tag returns the message that identifies version of pod uid.
func (h *History) Tag(uid types.UID, version uint64) string {
	return fmt.Sprintf("%s@v%d", uid, version)
}

// Cached records that the cache holds version of pod uid with the tagged
// message msg.
func (h *History) Cached(uid types.UID, version uint64, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	if h.versions[uid] == nil {
		h.versions[uid] = map[string]uint64{}
	}
	h.versions[uid][msg] = version
}

// Write is the function to give API.OnWrite.
func (h *History) Write(pod *v1.Pod, by string) {
	if pod == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	uid := pod.UID
	if by != "patch" {
		f := map[v1.PodConditionType]v1.ConditionStatus{}
		for _, c := range pod.Status.Conditions {
			if isForeign(c.Type) {
				f[c.Type] = c.Status
			}
		}
		h.foreign[uid] = f
		h.phase[uid] = pod.Status.Phase
		return
	}
	h.writes++
	if v, ok := h.versions[uid][pod.Status.Message]; ok {
		if v < h.written[uid] {
			h.errs = append(h.errs, fmt.Sprintf("pod %s: version %d written after version %d", uid, v, h.written[uid]))
		} else {
			h.written[uid] = v
		}
	}
	if old := h.phase[uid]; (old == v1.PodSucceeded || old == v1.PodFailed) && pod.Status.Phase != old {
		h.errs = append(h.errs, fmt.Sprintf("pod %s: terminal phase %s replaced by %s", uid, old, pod.Status.Phase))
	}
	h.phase[uid] = pod.Status.Phase
	for t, s := range h.foreign[uid] {
		found := false
		for _, c := range pod.Status.Conditions {
			if c.Type == t && c.Status == s {
				found = true
			}
		}
		if !found {
			h.errs = append(h.errs, fmt.Sprintf("pod %s: condition %s=%s of another writer lost", uid, t, s))
		}
	}
}

// ForeignConditionPrefix starts the condition types the history treats as
// another writer's.
const ForeignConditionPrefix = "example.com/"

func isForeign(t v1.PodConditionType) bool {
	return len(t) > len(ForeignConditionPrefix) && string(t[:len(ForeignConditionPrefix)]) == ForeignConditionPrefix
}

// Writes returns the number of engine writes seen.
func (h *History) Writes() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.writes
}

// Err returns the first broken rule, or nil.
func (h *History) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) == 0 {
		return nil
	}
	return fmt.Errorf("statussynctest: %s (and %d more)", h.errs[0], len(h.errs)-1)
}
