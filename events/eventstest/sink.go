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

func (s *store) begin(ctx context.Context, op Op, ns, name string) error {
	s.calls[op]++
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
func (s *store) create(ns, name string, meta *metav1.ObjectMeta, obj any, dnsName bool) error {
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
	meta.ResourceVersion = strconv.FormatInt(s.rv, 10)
	meta.UID = types.UID(fmt.Sprintf("uid-%d", s.uid))
	meta.CreationTimestamp = metav1.NewTime(s.clock.Now())
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

// Sink is an in-memory core/v1 event API: Create refuses an existing name with AlreadyExists,
// Patch applies a strategic merge patch or answers NotFound, every write sets a new
// resourceVersion, and events expire TTL after their last write on the injected clock. Faults
// are injected with SetFault. Safe for concurrent use.
type Sink struct{ s store }

// NewSink returns an empty sink on clk (the real clock when nil) with the given TTL
// (DefaultTTL when 0).
func NewSink(clk clock.PassiveClock, ttl time.Duration) *Sink {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	return &Sink{s: newStore(clk, ttl)}
}

// SetFault installs f (nil removes it).
func (k *Sink) SetFault(f FaultFunc) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	k.s.fault = f
}

// Calls returns how many times op was called, failed calls included.
func (k *Sink) Calls(op Op) int {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	return k.s.calls[op]
}

// Create stores a copy of ev and returns the stored copy.
func (k *Sink) Create(ctx context.Context, ev *v1.Event) (*v1.Event, error) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	if err := k.s.begin(ctx, OpCreate, ev.Namespace, ev.Name); err != nil {
		return nil, err
	}
	c := ev.DeepCopy()
	if err := k.s.create(c.Namespace, c.Name, &c.ObjectMeta, c, false); err != nil {
		return nil, err
	}
	return c, nil
}

// Patch applies patch to the stored event named ev.Name in ev.Namespace.
func (k *Sink) Patch(ctx context.Context, ev *v1.Event, patch []byte) (*v1.Event, error) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	if err := k.s.begin(ctx, OpPatch, ev.Namespace, ev.Name); err != nil {
		return nil, err
	}
	out := &v1.Event{}
	if err := k.s.patch(ev.Namespace, ev.Name, patch, v1.Event{}, out, func(rv string) { out.ResourceVersion = rv }); err != nil {
		return nil, err
	}
	return out, nil
}

// Events returns copies of the stored, unexpired events sorted by namespace and name.
func (k *Sink) Events() []v1.Event {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	k.s.expire()
	out := make([]v1.Event, 0, len(k.s.objects))
	for _, data := range k.s.objects {
		var ev v1.Event
		if err := json.Unmarshal(data, &ev); err == nil {
			out = append(out, ev)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// SeriesSink is the events.k8s.io/v1 counterpart of Sink; it also refuses names that are not
// DNS subdomains, as the server does for that API.
type SeriesSink struct{ s store }

// NewSeriesSink returns an empty sink on clk (the real clock when nil) with the given TTL
// (DefaultTTL when 0).
func NewSeriesSink(clk clock.PassiveClock, ttl time.Duration) *SeriesSink {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	return &SeriesSink{s: newStore(clk, ttl)}
}

// SetFault installs f (nil removes it).
func (k *SeriesSink) SetFault(f FaultFunc) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	k.s.fault = f
}

// Calls returns how many times op was called, failed calls included.
func (k *SeriesSink) Calls(op Op) int {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	return k.s.calls[op]
}

// Create stores a copy of ev and returns the stored copy.
func (k *SeriesSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	if err := k.s.begin(ctx, OpCreate, ev.Namespace, ev.Name); err != nil {
		return nil, err
	}
	c := ev.DeepCopy()
	if err := k.s.create(c.Namespace, c.Name, &c.ObjectMeta, c, true); err != nil {
		return nil, err
	}
	return c, nil
}

// Patch applies patch to the stored event named ev.Name in ev.Namespace.
func (k *SeriesSink) Patch(ctx context.Context, ev *eventsv1.Event, patch []byte) (*eventsv1.Event, error) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	if err := k.s.begin(ctx, OpPatch, ev.Namespace, ev.Name); err != nil {
		return nil, err
	}
	out := &eventsv1.Event{}
	if err := k.s.patch(ev.Namespace, ev.Name, patch, eventsv1.Event{}, out, func(rv string) { out.ResourceVersion = rv }); err != nil {
		return nil, err
	}
	return out, nil
}

// Events returns copies of the stored, unexpired events sorted by namespace and name.
func (k *SeriesSink) Events() []eventsv1.Event {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	k.s.expire()
	out := make([]eventsv1.Event, 0, len(k.s.objects))
	for _, data := range k.s.objects {
		var ev eventsv1.Event
		if err := json.Unmarshal(data, &ev); err == nil {
			out = append(out, ev)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}
