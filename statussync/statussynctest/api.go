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
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
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
	// LostAnswerRate is the share of PATCH requests that are stored but
	// answered 500 Internal Error, as when a connection breaks after the
	// server acted.
	LostAnswerRate float64
	// LateRate is the share of PATCH requests answered 504 Gateway Timeout
	// that the server stores later: after it has served the next PATCH (of
	// any pod), with the checks of that moment (UID, resourceVersion,
	// container states).
	LateRate float64
	// InterleaveRate is the share of PATCH requests before which another
	// writer flips the pod's PodScheduled condition (a kubelet-owned
	// condition), as a write landing between the engine's GET and PATCH.
	InterleaveRate float64
	// Delay, if set, is called before each request is served, outside the
	// API's lock: a test can advance a fake clock there to model latency.
	Delay func(verb string)
}

// Fault is a scripted fault for one request; see [API.FailNext].
type Fault uint8

const (
	// FaultError answers 500 Internal Error before the server acts.
	FaultError Fault = iota + 1
	// FaultLostAnswer lets the server act, then answers 500 Internal
	// Error: the write is stored but the client does not know.
	FaultLostAnswer
	// FaultLate answers 504 Gateway Timeout and stores a PATCH later,
	// after the next PATCH has been served (see [Faults.LateRate]).
	FaultLate
	// FaultConflict answers 409 Conflict.
	FaultConflict
	// FaultNotFound answers 404 Not Found.
	FaultNotFound
)

// String names the fault.
func (f Fault) String() string {
	switch f {
	case FaultError:
		return "error"
	case FaultLostAnswer:
		return "lost answer"
	case FaultLate:
		return "late"
	case FaultConflict:
		return "conflict"
	case FaultNotFound:
		return "not found"
	}
	return fmt.Sprintf("Fault(%d)", uint8(f))
}

// API is an in-memory pod API. It is safe for simultaneous use. Its zero
// value is an empty API whose faults draw from seed 0, standing for the
// Kubernetes 1.37 API server with its default feature gates (as
// [DefaultOptions]).
type API struct {
	mu       sync.Mutex
	pods     map[string]*v1.Pod // by namespace/name
	rv       uint64
	rand     *rand.Rand
	faults   Faults
	requests map[string]int
	server   containerstate.Options // the API server's gates and minor
	script   map[string][]Fault     // scripted faults by verb, in order
	before   []func(*v1.Pod)        // foreign writes before the next PATCH
	late     []lateWrite            // PATCHes to store after the next one
	// OnWrite, if set, is called with every status the API stores, after
	// a patch or a foreign write, under the API's lock.
	onWrite func(pod *v1.Pod, by string)
}

// NewAPI returns an empty API whose faults draw from seed, standing for the
// API server of Kubernetes 1.37 with its default feature gates:
// [NewAPIWithOptions] with [DefaultOptions] and Seed seed.
func NewAPI(seed int64) *API {
	o := DefaultOptions()
	o.Seed = seed
	return newAPI(o)
}

// Options configures an [API]: the seed of its faults and the API server
// it stands for. Start from [DefaultOptions], or [DefaultOptionsFor]
// to stand for another Kubernetes minor.
type Options struct {
	// Seed seeds the source the fault rates draw from; zero is seed 0.
	Seed int64
	// Features are the API server's feature gates its status validation
	// reads (ContainerRestartRules, RestartAllContainersOnContainerExits).
	// The zero value has every gate off.
	Features containerstate.Features
	// Version is the API server's Kubernetes minor: a status update whose
	// container states break that minor's transition rule
	// (containerstate.Options.ValidateStatusTransition, docs/versions.md
	// row CS-V5) is refused with 422 Invalid. The zero Version is 1.37.
	Version kubeversion.Version
}

// DefaultOptions returns the options of the Kubernetes 1.37 API server
// with its default feature gates, seed 0: [DefaultOptionsFor] the zero
// kubeversion.Version.
func DefaultOptions() Options {
	return DefaultOptionsFor(kubeversion.Default)
}

// DefaultOptionsFor returns the options of the API server of Kubernetes
// minor v: the feature gates of containerstate.DefaultFeaturesFor(v),
// Version v and seed 0. A Version that is none of kubeversion's constants
// is kept as it is, so that [NewAPIWithOptions] refuses it.
func DefaultOptionsFor(v kubeversion.Version) Options {
	return Options{Features: containerstate.DefaultFeaturesFor(v), Version: v}
}

// NewAPIWithOptions returns an empty API configured by opts. It returns an
// [*OptionError] (ErrInvalidOptions, and kubeversion.ErrUnsupportedVersion)
// for a Version that is none of kubeversion's constants.
func NewAPIWithOptions(opts Options) (*API, error) {
	if err := opts.Version.Validate(); err != nil {
		return nil, &OptionError{Field: "Version", Value: opts.Version, Reason: "unsupported Kubernetes version", Err: err}
	}
	return newAPI(opts), nil
}

func newAPI(o Options) *API {
	return &API{pods: map[string]*v1.Pod{}, rand: rand.New(rand.NewSource(o.Seed)), requests: map[string]int{},
		server: containerstate.Options{Features: o.Features, Version: o.Version}}
}

func key(ns, name string) string { return ns + "/" + name }

// init readies a zero API; the caller holds the lock.
func (a *API) init() {
	if a.pods == nil {
		a.pods = map[string]*v1.Pod{}
	}
	if a.requests == nil {
		a.requests = map[string]int{}
	}
	if a.rand == nil {
		a.rand = rand.New(rand.NewSource(0))
		a.server = containerstate.Options{Features: containerstate.DefaultFeatures()}
	}
}

type lateWrite struct {
	namespace, name string
	patch           []byte
}

// FailNext makes the next request of verb ("get", "patch" or "delete") fail
// with f, before any random fault is drawn. Several calls queue in order. A
// fault that does not apply to the verb (a late GET) is an error before the
// server acts.
func (a *API) FailNext(verb string, f Fault) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	if a.script == nil {
		a.script = map[string][]Fault{}
	}
	a.script[verb] = append(a.script[verb], f)
}

// BeforeNextPatch makes change a write by another writer, applied to the
// pod of the next PATCH right before that PATCH is served (a write between
// an engine's GET and its PATCH). The change bumps the resource version and
// is reported to OnWrite as "foreign".
func (a *API) BeforeNextPatch(change func(*v1.Pod)) {
	if change == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	a.before = append(a.before, change)
}

// Pending returns the number of late PATCHes not stored yet.
func (a *API) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	return len(a.late)
}

// scripted pops the next scripted fault of verb; the caller holds the lock.
func (a *API) scripted(verb string) Fault {
	q := a.script[verb]
	if len(q) == 0 {
		return 0
	}
	a.script[verb] = q[1:]
	return q[0]
}

// SetFaults sets the fault rates; the zero Faults turns them off.
func (a *API) SetFaults(f Faults) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	a.faults = f
}

// OnWrite sets a function called with every status stored (by "patch" or
// "foreign"), under the API's lock; it must not call the API.
func (a *API) OnWrite(f func(pod *v1.Pod, by string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	a.onWrite = f
}

// Requests returns the number of requests served so far, by verb, failed
// ones included.
func (a *API) Requests() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
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
	a.init()
	if pod == nil {
		return nil, apierrors.NewBadRequest("nil pod")
	}
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
	a.init()
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
	a.init()
	p, ok := a.pods[key(namespace, name)]
	if !ok {
		return apierrors.NewNotFound(podsResource, name)
	}
	if change == nil {
		return apierrors.NewBadRequest("nil change")
	}
	a.foreignWrite(p, change)
	return nil
}

// foreignWrite changes p as another writer; the caller holds the lock.
func (a *API) foreignWrite(p *v1.Pod, change func(*v1.Pod)) {
	change(p)
	p.ResourceVersion = a.nextRV()
	if a.onWrite != nil {
		a.onWrite(p.DeepCopy(), "foreign")
	}
}

// Recreate deletes the pod and creates it again under the same name with a
// new UID and an empty status, as a controller replacing a pod does.
func (a *API) Recreate(namespace, name string, uid types.UID) (*v1.Pod, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
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
	a.init()
	a.requests["get"]++
	switch a.scripted("get") {
	case 0:
	case FaultNotFound:
		return nil, apierrors.NewNotFound(podsResource, name)
	case FaultConflict:
		return nil, apierrors.NewConflict(podsResource, name, errors.New("injected conflict"))
	default:
		return nil, internalError()
	}
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
// may not come back unless it may restart by the rule of the API's
// Version and Features (422 Invalid).
func (a *API) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.delay("patch")
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	a.requests["patch"]++
	late := a.late
	a.late = nil
	defer func() {
		// Late writes of earlier requests land after this one.
		for _, w := range late {
			_, _ = a.apply(w.namespace, w.name, w.patch)
		}
	}()
	if len(a.before) > 0 {
		change := a.before[0]
		a.before = a.before[1:]
		if p, ok := a.pods[key(namespace, name)]; ok {
			a.foreignWrite(p, change)
		}
	} else if p, ok := a.pods[key(namespace, name)]; ok && a.fault(a.faults.InterleaveRate) {
		a.foreignWrite(p, flipScheduled)
	}
	f := a.scripted("patch")
	switch {
	case f == FaultError, f == 0 && a.fault(a.faults.ErrorRate/2):
		return nil, internalError()
	case f == FaultNotFound:
		return nil, apierrors.NewNotFound(podsResource, name)
	case f == FaultLate, f == 0 && a.fault(a.faults.LateRate):
		a.late = append(a.late, lateWrite{namespace: namespace, name: name, patch: append([]byte(nil), patch...)})
		return nil, apierrors.NewTimeoutError("injected timeout: the request may still complete", 0)
	}
	if _, ok := a.pods[key(namespace, name)]; ok && (f == FaultConflict || f == 0 && a.fault(a.faults.ConflictRate)) {
		return nil, apierrors.NewConflict(podsResource, name, fmt.Errorf("injected conflict"))
	}
	n, err := a.apply(namespace, name, patch)
	if err != nil {
		return nil, err
	}
	if f == FaultLostAnswer || f == 0 && (a.fault(a.faults.ErrorRate/2) || a.fault(a.faults.LostAnswerRate)) {
		return nil, internalError() // stored, but the answer was lost
	}
	return n, nil
}

// flipScheduled is another writer's change of a kubelet-owned condition.
func flipScheduled(p *v1.Pod) {
	for i := range p.Status.Conditions {
		if c := &p.Status.Conditions[i]; c.Type == v1.PodScheduled {
			if c.Status == v1.ConditionTrue {
				c.Status = v1.ConditionFalse
			} else {
				c.Status = v1.ConditionTrue
			}
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse})
}

// apply stores a status patch as kube-apiserver does and returns a copy of
// the stored pod; the caller holds the lock.
func (a *API) apply(namespace, name string, patch []byte) (*v1.Pod, error) {
	p, ok := a.pods[key(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(podsResource, name)
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
	if err := a.server.ValidateStatusTransition(&p.Spec, &p.Status, &patched.Status); err != nil {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, name, field.ErrorList{
			field.Forbidden(field.NewPath("status", "containerStatuses"), err.Error())})
	}
	if equality.Semantic.DeepEqual(p.Status, patched.Status) {
		return p.DeepCopy(), nil // a write that changes nothing stores nothing
	}
	n := p.DeepCopy()
	n.Status = patched.Status
	n.ResourceVersion = a.nextRV()
	a.pods[key(namespace, name)] = n
	if a.onWrite != nil {
		a.onWrite(n.DeepCopy(), "patch")
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
	a.init()
	a.requests["delete"]++
	f := a.scripted("delete")
	switch {
	case f == FaultNotFound:
		return apierrors.NewNotFound(podsResource, name)
	case f == FaultConflict:
		return apierrors.NewConflict(podsResource, name, errors.New("injected conflict"))
	case f == FaultError, f == FaultLate, f == 0 && a.fault(a.faults.ErrorRate):
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
	if f == FaultLostAnswer {
		return internalError()
	}
	return nil
}
