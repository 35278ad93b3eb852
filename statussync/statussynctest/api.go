// Package statussynctest has an in-memory pod API that implements
// statussync.Transport the way kube-apiserver answers it (resource versions,
// UID preconditions, strategic merge patches of the status subresource, the
// container-state validation, deletion), with fault injection, and a
// History that checks what an engine wrote.
package statussynctest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodestate/nodestate/containerstate"
)

var podsResource = schema.GroupResource{Resource: "pods"}

// Faults makes requests fail. Rates are probabilities in [0, 1], drawn from
// the API's own seeded source, so a run is reproducible.
type Faults struct {
	// ErrorRate is the share of requests that fail with 500 Internal Error
	// (half before the server acts, half after: a write whose answer was
	// lost).
	ErrorRate float64
	// ConflictRate is the share of PATCH requests refused with 409 Conflict.
	ConflictRate float64
	// NotFoundRate is the share of GET requests answered 404 although the
	// pod exists (a stale cache in front of the server).
	NotFoundRate float64
	// Delay, if set, is called before each request is served, outside the
	// API's lock: a test can advance a fake clock there to model latency.
	Delay func(verb string)
}

// API is an in-memory pod API. It is safe for simultaneous use.
type API struct {
	mu       sync.Mutex
	pods     map[string]*v1.Pod // by namespace/name
	rv       uint64
	rand     *rand.Rand
	faults   Faults
	requests map[string]int
	features containerstate.Features
	// OnWrite, if set, is called with every status the API stores, after
	// a patch or a foreign write, under the API's lock.
	onWrite func(pod *v1.Pod, by string)
}

// NewAPI returns an empty API whose faults draw from seed.
func NewAPI(seed int64) *API {
	return &API{pods: map[string]*v1.Pod{}, rand: rand.New(rand.NewSource(seed)), requests: map[string]int{},
		features: containerstate.DefaultFeatures()}
}

func key(ns, name string) string { return ns + "/" + name }

// SetFaults sets the fault rates; the zero Faults turns them off.
func (a *API) SetFaults(f Faults) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.faults = f
}

// OnWrite sets a function called with every status stored (by "patch" or
// "foreign"), under the API's lock; it must not call the API.
func (a *API) OnWrite(f func(pod *v1.Pod, by string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.onWrite = f
}

// Requests returns the number of requests served so far, by verb, failed
// ones included.
func (a *API) Requests() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int, len(a.requests))
	for k, v := range a.requests {
		out[k] = v
	}
	return out
}

func (a *API) nextRV() string {
	a.rv++
	return strconv.FormatUint(a.rv, 10)
}

// Create stores a new pod and returns it with a resource version. A pod
// without a UID gets one.
func (a *API) Create(pod *v1.Pod) (*v1.Pod, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := key(pod.Namespace, pod.Name)
	if _, ok := a.pods[k]; ok {
		return nil, apierrors.NewAlreadyExists(podsResource, pod.Name)
	}
	p := pod.DeepCopy()
	if p.UID == "" {
		p.UID = types.UID(fmt.Sprintf("uid-%s-%d", pod.Name, a.rv+1))
	}
	p.ResourceVersion = a.nextRV()
	a.pods[k] = p
	return p.DeepCopy(), nil
}

// Pod returns the stored pod, bypassing faults and counts.
func (a *API) Pod(namespace, name string) (*v1.Pod, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pods[key(namespace, name)]
	if !ok {
		return nil, false
	}
	return p.DeepCopy(), true
}

// Update changes a stored pod as another writer would (for example setting
// its deletionTimestamp, or another controller writing status), bumping its
// resource version.
func (a *API) Update(namespace, name string, change func(*v1.Pod)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pods[key(namespace, name)]
	if !ok {
		return apierrors.NewNotFound(podsResource, name)
	}
	change(p)
	p.ResourceVersion = a.nextRV()
	if a.onWrite != nil {
		a.onWrite(p.DeepCopy(), "foreign")
	}
	return nil
}

// Recreate deletes the pod and creates it again under the same name with a
// new UID and an empty status, as a controller replacing a pod does.
func (a *API) Recreate(namespace, name string, uid types.UID) (*v1.Pod, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pods[key(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(podsResource, name)
	}
	n := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: uid, Labels: p.Labels, Annotations: p.Annotations},
		Spec: *p.Spec.DeepCopy()}
	n.ResourceVersion = a.nextRV()
	a.pods[key(namespace, name)] = n
	return n.DeepCopy(), nil
}

// fault draws whether a request fails; the caller holds the lock.
func (a *API) fault(rate float64) bool { return rate > 0 && a.rand.Float64() < rate }

func internalError() error {
	return apierrors.NewInternalError(fmt.Errorf("injected fault"))
}

func (a *API) delay(verb string) {
	a.mu.Lock()
	d := a.faults.Delay
	a.mu.Unlock()
	if d != nil {
		d(verb)
	}
}

// GetPod implements statussync.PodGetter.
func (a *API) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.delay("get")
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests["get"]++
	if a.fault(a.faults.ErrorRate) {
		return nil, internalError()
	}
	p, ok := a.pods[key(namespace, name)]
	if !ok || a.fault(a.faults.NotFoundRate) {
		return nil, apierrors.NewNotFound(podsResource, name)
	}
	return p.DeepCopy(), nil
}

// PatchPodStatus implements statussync.StatusPatcher like kube-apiserver's
// status subresource: metadata.uid must be the pod's (422 Invalid
// otherwise), a metadata.resourceVersion must be current (409 Conflict
// otherwise), only the status changes, and a container that was Terminated
// may not come back unless it may restart (422 Invalid).
func (a *API) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.delay("patch")
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests["patch"]++
	if a.fault(a.faults.ErrorRate / 2) {
		return nil, internalError()
	}
	p, ok := a.pods[key(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(podsResource, name)
	}
	if a.fault(a.faults.ConflictRate) {
		return nil, apierrors.NewConflict(podsResource, name, fmt.Errorf("injected conflict"))
	}
	var meta struct {
		Metadata struct {
			UID             types.UID `json:"uid"`
			ResourceVersion string    `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patch, &meta); err != nil {
		return nil, apierrors.NewBadRequest("invalid patch: " + err.Error())
	}
	if meta.Metadata.UID != "" && meta.Metadata.UID != p.UID {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "uid"), meta.Metadata.UID, "field is immutable")})
	}
	if meta.Metadata.ResourceVersion != "" && meta.Metadata.ResourceVersion != p.ResourceVersion {
		return nil, apierrors.NewConflict(podsResource, name,
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	orig, err := json.Marshal(p)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out, err := strategicpatch.StrategicMergePatch(orig, patch, v1.Pod{})
	if err != nil {
		return nil, apierrors.NewBadRequest("invalid patch: " + err.Error())
	}
	var patched v1.Pod
	if err := json.Unmarshal(out, &patched); err != nil {
		return nil, apierrors.NewBadRequest("invalid patch: " + err.Error())
	}
	if err := a.features.ValidateStatusTransition(&p.Spec, &p.Status, &patched.Status); err != nil {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, name, field.ErrorList{
			field.Forbidden(field.NewPath("status", "containerStatuses"), err.Error())})
	}
	n := p.DeepCopy()
	n.Status = patched.Status
	n.ResourceVersion = a.nextRV()
	a.pods[key(namespace, name)] = n
	if a.onWrite != nil {
		a.onWrite(n.DeepCopy(), "patch")
	}
	if a.fault(a.faults.ErrorRate / 2) {
		return nil, internalError() // stored, but the answer was lost
	}
	return n.DeepCopy(), nil
}

// DeletePod implements statussync.PodDeleter: grace period 0, UID
// precondition (409 Conflict when the UID is not the pod's).
func (a *API) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.delay("delete")
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests["delete"]++
	if a.fault(a.faults.ErrorRate) {
		return internalError()
	}
	p, ok := a.pods[key(namespace, name)]
	if !ok {
		return apierrors.NewNotFound(podsResource, name)
	}
	if uid != "" && p.UID != uid {
		return apierrors.NewConflict(podsResource, name, errors.New("Precondition failed: UID in precondition: "+string(uid)+", UID in object meta: "+string(p.UID)))
	}
	delete(a.pods, key(namespace, name))
	return nil
}
