package eventstest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"
)

// DefaultTTL is the kube-apiserver's default --event-ttl.
const DefaultTTL = time.Hour

// Op names a sink call, for fault injection and call counts.
type Op string

// The sink operations.
const (
	OpCreate Op = "create"
	OpPatch  Op = "patch"
)

// FaultFunc decides whether a call fails: it gets the operation, the event's namespace and
// name, and the number of that operation so far (1 for the first); a non-nil error is returned
// by the call instead of doing it.
type FaultFunc func(op Op, namespace, name string, n int) error

// store is the API-server-like part both sinks share: objects by namespace/name, a global
// resourceVersion, expiry TTL after the last write.
type store struct {
	mu      sync.Mutex
	clock   clock.PassiveClock
	ttl     time.Duration
	rv      int64
	uid     int64
	fault   FaultFunc
	calls   map[Op]int
	expires map[string]time.Time
	objects map[string][]byte // JSON
}

func newStore(clk clock.PassiveClock, ttl time.Duration) store {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return store{clock: clk, ttl: ttl, calls: map[Op]int{}, expires: map[string]time.Time{}, objects: map[string][]byte{}}
}

var eventsResource = schema.GroupResource{Resource: "events"}

// init readies the zero store: the real clock, DefaultTTL.
func (s *store) init() {
	if s.calls == nil {
		s.calls, s.expires, s.objects = map[Op]int{}, map[string]time.Time{}, map[string][]byte{}
	}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
}

func (s *store) begin(ctx context.Context, op Op, ns, name string) error {
	s.init()
	s.calls[op]++
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.fault != nil {
		if err := s.fault(op, ns, name, s.calls[op]); err != nil {
			return err
		}
	}
	s.expire()
	return nil
}

// expire deletes objects past their TTL.
func (s *store) expire() {
	now := s.clock.Now()
	for k, t := range s.expires {
		if !now.Before(t) {
			delete(s.expires, k)
			delete(s.objects, k)
		}
	}
}

// create stores obj (its metadata set by the caller) after the name checks the server makes.
func (s *store) create(ns, name string, meta metav1.Object, obj any, dnsName bool) error {
	if name == "" {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Event"}, name, nil)
	}
	if dnsName && len(validation.IsDNS1123Subdomain(name)) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, name, nil)
	}
	key := ns + "/" + name
	if _, ok := s.objects[key]; ok {
		return apierrors.NewAlreadyExists(eventsResource, name)
	}
	s.rv++
	s.uid++
	meta.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	meta.SetUID(types.UID(fmt.Sprintf("uid-%d", s.uid)))
	meta.SetCreationTimestamp(metav1.NewTime(s.clock.Now()))
	data, err := json.Marshal(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	s.objects[key] = data
	s.expires[key] = s.clock.Now().Add(s.ttl)
	return nil
}

// patch applies a strategic merge patch to the stored object and decodes the result into out.
func (s *store) patch(ns, name string, patch []byte, schemaObj any, out any, setRV func(string)) error {
	key := ns + "/" + name
	data, ok := s.objects[key]
	if !ok {
		return apierrors.NewNotFound(eventsResource, name)
	}
	merged, err := strategicpatch.StrategicMergePatch(data, patch, schemaObj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if err := json.Unmarshal(merged, out); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	s.rv++
	setRV(strconv.FormatInt(s.rv, 10))
	data, err = json.Marshal(out)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	s.objects[key] = data
	s.expires[key] = s.clock.Now().Add(s.ttl)
	return nil
}

// event is the type of each events API.
type event interface{ v1.Event | eventsv1.Event }

// eventPtr is a pointer to an event, with its metadata and deep copy.
type eventPtr[E event] interface {
	*E
	metav1.Object
	DeepCopy() *E
}

// memSink is the in-memory events API both Sink and SeriesSink are.
type memSink[E event, P eventPtr[E]] struct {
	s        store
	dnsNames bool // names must be DNS subdomains (events.k8s.io/v1)
	requests []request[P]
}

// request is one call as the sink received it: copies of the event and the patch, and what
// the call returned.
type request[P any] struct {
	op    Op
	ev    P
	patch []byte
	err   error
}

// note records a call; the caller holds the lock.
func (k *memSink[E, P]) note(op Op, ev P, patch []byte, err error) {
	r := request[P]{op: op, err: err}
	if ev != nil {
		r.ev = P(ev.DeepCopy())
	}
	if patch != nil {
		r.patch = append([]byte{}, patch...)
	}
	k.requests = append(k.requests, r)
}

var errNilEvent = apierrors.NewBadRequest("event is nil")

func newMemSink[E event, P eventPtr[E]](clk clock.PassiveClock, ttl time.Duration, dnsNames bool) memSink[E, P] {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	return memSink[E, P]{s: newStore(clk, ttl), dnsNames: dnsNames}
}

// SetFault installs f (nil removes it).
func (k *memSink[E, P]) SetFault(f FaultFunc) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	k.s.fault = f
}

// Calls returns how many times op was called, failed calls included.
func (k *memSink[E, P]) Calls(op Op) int {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	return k.s.calls[op]
}

func (k *memSink[E, P]) create(ctx context.Context, ev P) (out P, err error) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	defer func() { k.note(OpCreate, ev, nil, err) }()
	if ev == nil {
		k.s.init()
		k.s.calls[OpCreate]++
		return nil, errNilEvent
	}
	if err := k.s.begin(ctx, OpCreate, ev.GetNamespace(), ev.GetName()); err != nil {
		return nil, err
	}
	c := P(ev.DeepCopy())
	if err := k.s.create(c.GetNamespace(), c.GetName(), c, c, k.dnsNames); err != nil {
		return nil, err
	}
	return c, nil
}

func (k *memSink[E, P]) patch(ctx context.Context, ev P, patch []byte) (_ P, err error) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	defer func() { k.note(OpPatch, ev, patch, err) }()
	if ev == nil {
		k.s.init()
		k.s.calls[OpPatch]++
		return nil, errNilEvent
	}
	if err := k.s.begin(ctx, OpPatch, ev.GetNamespace(), ev.GetName()); err != nil {
		return nil, err
	}
	out := P(new(E))
	var schemaObj E
	if err := k.s.patch(ev.GetNamespace(), ev.GetName(), patch, schemaObj, out, out.SetResourceVersion); err != nil {
		return nil, err
	}
	return out, nil
}

// events returns copies of the stored, unexpired events sorted by namespace and name.
func (k *memSink[E, P]) events() []E {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	k.s.init()
	k.s.expire()
	out := make([]E, 0, len(k.s.objects))
	for _, data := range k.s.objects {
		var ev E
		if err := json.Unmarshal(data, &ev); err == nil {
			out = append(out, ev)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := P(&out[i]), P(&out[j])
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
	return out
}

// Sink is an in-memory core/v1 event API: Create refuses an existing name with AlreadyExists,
// Patch applies a strategic merge patch or answers NotFound, every write sets a new
// resourceVersion, and events expire TTL after their last write on the injected clock. Faults
// are injected with SetFault; Requests returns what each call was given. The zero value is
// ready to use (the real clock, DefaultTTL). Safe for concurrent use.
type Sink struct {
	memSink[v1.Event, *v1.Event]
}

// Request is one call a Sink received: copies of the event and the patch it was given (the
// caller may reuse its own), and the error the call returned.
type Request struct {
	// Op is OpCreate or OpPatch.
	Op Op
	// Event is a copy of the event passed (nil when nil was passed).
	Event *v1.Event
	// Patch is a copy of the patch passed to Patch, nil for a create.
	Patch []byte
	// Err is what the call returned (nil on success).
	Err error
}

// Requests returns the calls so far, in order, failed ones included.
func (k *Sink) Requests() []Request {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	out := make([]Request, len(k.requests))
	for i, r := range k.requests {
		out[i] = Request{Op: r.op, Event: r.ev, Patch: r.patch, Err: r.err}
	}
	return out
}

// NewSink returns an empty sink on clk (the real clock when nil) with the given TTL
// (DefaultTTL when 0).
func NewSink(clk clock.PassiveClock, ttl time.Duration) *Sink {
	return &Sink{newMemSink[v1.Event, *v1.Event](clk, ttl, false)}
}

// Create stores a copy of ev and returns the stored copy.
func (k *Sink) Create(ctx context.Context, ev *v1.Event) (*v1.Event, error) { return k.create(ctx, ev) }

// Patch applies patch to the stored event named ev.Name in ev.Namespace.
func (k *Sink) Patch(ctx context.Context, ev *v1.Event, patch []byte) (*v1.Event, error) {
	return k.patch(ctx, ev, patch)
}

// Events returns copies of the stored, unexpired events sorted by namespace and name.
func (k *Sink) Events() []v1.Event { return k.events() }

// SeriesSink is the events.k8s.io/v1 counterpart of Sink; it also refuses names that are not
// DNS subdomains, as the server does for that API. The zero value is ready to use but, like
// a Sink, does not check names; use NewSeriesSink.
type SeriesSink struct {
	memSink[eventsv1.Event, *eventsv1.Event]
}

// SeriesRequest is one call a SeriesSink received, as Request.
type SeriesRequest struct {
	// Op is OpCreate or OpPatch.
	Op Op
	// Event is a copy of the event passed (nil when nil was passed).
	Event *eventsv1.Event
	// Patch is a copy of the patch passed to Patch (the series), nil for a create.
	Patch []byte
	// Err is what the call returned (nil on success).
	Err error
}

// Requests returns the calls so far, in order, failed ones included.
func (k *SeriesSink) Requests() []SeriesRequest {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	out := make([]SeriesRequest, len(k.requests))
	for i, r := range k.requests {
		out[i] = SeriesRequest{Op: r.op, Event: r.ev, Patch: r.patch, Err: r.err}
	}
	return out
}

// NewSeriesSink returns an empty sink on clk (the real clock when nil) with the given TTL
// (DefaultTTL when 0).
func NewSeriesSink(clk clock.PassiveClock, ttl time.Duration) *SeriesSink {
	return &SeriesSink{newMemSink[eventsv1.Event, *eventsv1.Event](clk, ttl, true)}
}

// Create stores a copy of ev and returns the stored copy.
func (k *SeriesSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	return k.create(ctx, ev)
}

// Patch applies patch to the stored event named ev.Name in ev.Namespace.
func (k *SeriesSink) Patch(ctx context.Context, ev *eventsv1.Event, patch []byte) (*eventsv1.Event, error) {
	return k.patch(ctx, ev, patch)
}

// Events returns copies of the stored, unexpired events sorted by namespace and name.
func (k *SeriesSink) Events() []eventsv1.Event { return k.events() }
