package containerstate

import (
	"hash/fnv"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/kubeversion"
)

// Back-off constants of the kubelet (spec/containerstate.md sections 10, 11).
const (
	// CrashLoopInitial and CrashLoopMax are the default crash-loop delays.
	CrashLoopInitial = 10 * time.Second
	CrashLoopMax     = 300 * time.Second
	// ReducedCrashLoopInitial and ReducedCrashLoopMax are the delays with
	// ReduceDefaultCrashLoopBackOffDecay (KEP-4603).
	ReducedCrashLoopInitial = 1 * time.Second
	ReducedCrashLoopMax     = 60 * time.Second
	// CrashLoopReset is how long a container must go without a back-off
	// update for its sequence to start over: fixed by the kubelet at 10
	// minutes, whatever the maximum.
	CrashLoopReset = 600 * time.Second
	// ImagePullInitial and ImagePullMax are the image-pull delays; an entry
	// resets after twice the maximum.
	ImagePullInitial = 10 * time.Second
	ImagePullMax     = 300 * time.Second
)

// BackoffOptions shapes a [Backoff]: the first delay, the cap of the
// doubling, and how long an entry may go without an update before it starts
// over. [DefaultBackoffOptions] and [CrashLoopOptions.BackoffOptions] give
// the kubelet's two.
type BackoffOptions struct {
	// Initial is the first delay.
	Initial time.Duration
	// Max caps the doubling.
	Max time.Duration
	// ResetAfter is how long an entry may go without an update before the
	// next failure starts over at Initial.
	ResetAfter time.Duration
}

func (c BackoffOptions) validate() error {
	switch {
	case c.Initial <= 0:
		return &OptionError{Field: "Initial", Reason: "must be positive, got " + c.Initial.String()}
	case c.Max < c.Initial:
		return &OptionError{Field: "Max", Reason: "must be at least Initial " + c.Initial.String() + ", got " + c.Max.String()}
	case c.ResetAfter <= 0:
		return &OptionError{Field: "ResetAfter", Reason: "must be positive, got " + c.ResetAfter.String()}
	}
	return nil
}

// CrashLoopOptions are the kubelet settings that shape crash-loop back-off.
// Start from [DefaultCrashLoopOptions].
type CrashLoopOptions struct {
	// ReduceDefaultDecay is the ReduceDefaultCrashLoopBackOffDecay gate
	// (alpha, off in 1.37): initial 1s, max 60s.
	ReduceDefaultDecay bool
	// KubeletCrashLoopBackOffMax is that gate (beta, on in 1.37): the
	// per-node maximum MaxContainerRestartPeriod applies.
	KubeletCrashLoopBackOffMax bool
	// MaxContainerRestartPeriod is the kubelet configuration's
	// crashLoopBackOff.maxContainerRestartPeriod, 1s to 300s; zero means
	// unset, which the configuration defaults to 300s.
	MaxContainerRestartPeriod time.Duration
}

// DefaultCrashLoopOptions returns the Kubernetes 1.37 defaults;
// [DefaultCrashLoopOptionsFor] gives another minor's.
func DefaultCrashLoopOptions() CrashLoopOptions {
	return DefaultCrashLoopOptionsFor(kubeversion.Default)
}

// BackoffOptions returns the crash-loop back-off the kubelet builds from
// these settings: 10s doubling to 300s by default; 1s to 60s with the reduced
// decay; the per-node maximum replacing the cap (and the initial delay when
// it is smaller) when its gate is on. Note that with both gates on and no
// maximum configured the cap is the configuration default, 300s.
func (o CrashLoopOptions) BackoffOptions() (BackoffOptions, error) {
	c := BackoffOptions{Initial: CrashLoopInitial, Max: CrashLoopMax, ResetAfter: CrashLoopReset}
	if o.ReduceDefaultDecay {
		c.Initial, c.Max = ReducedCrashLoopInitial, ReducedCrashLoopMax
	}
	if o.MaxContainerRestartPeriod != 0 && (o.MaxContainerRestartPeriod < time.Second || o.MaxContainerRestartPeriod > CrashLoopMax) {
		return BackoffOptions{}, &OptionError{Field: "MaxContainerRestartPeriod", Reason: "must be between 1s and 5m0s, got " + o.MaxContainerRestartPeriod.String()}
	}
	if o.KubeletCrashLoopBackOffMax {
		c.Max = o.MaxContainerRestartPeriod
		if c.Max == 0 {
			c.Max = CrashLoopMax
		}
		if c.Max < c.Initial {
			c.Initial = c.Max
		}
	}
	return c, nil
}

// DefaultBackoffOptions returns the kubelet's image-pull back-off, which is
// also the crash-loop back-off's shape: 10s doubling to 300s, reset after
// 10 minutes without an update.
func DefaultBackoffOptions() BackoffOptions {
	return BackoffOptions{Initial: ImagePullInitial, Max: ImagePullMax, ResetAfter: 2 * ImagePullMax}
}

type backoffEntry struct {
	delay      time.Duration
	lastUpdate time.Time
}

// Backoff is a set of per-key exponential back-offs, the way the kubelet
// keeps one for crash loops and one for image pulls per node. Time is an
// argument everywhere: eventTime is when the thing that is backed off
// happened (a container's finishedAt), now is the caller's clock.
//
// Make one with [NewBackoff]. The zero value (a struct field nobody
// initialised) is inert: it holds no key, records nothing and never blocks,
// so [Backoff.CrashLoop] and [Backoff.ImagePull] always let the container
// start; a nil *Backoff behaves the same.
//
// A Backoff is not safe for concurrent use. Lookups allocate nothing; a new
// key may grow the map.
type Backoff struct {
	cfg     BackoffOptions
	entries map[string]backoffEntry
}

// NewBackoff returns an empty back-off set, or an [*OptionError] for a
// configuration with a non-positive initial delay or reset period, or a
// maximum below the initial delay.
func NewBackoff(opts BackoffOptions) (*Backoff, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Backoff{cfg: opts, entries: make(map[string]backoffEntry)}, nil
}

// Options returns the back-off's options; the zero BackoffOptions for a zero or
// nil Backoff.
func (b *Backoff) Options() BackoffOptions {
	if b == nil {
		return BackoffOptions{}
	}
	return b.cfg
}

// Len returns the number of keys held.
func (b *Backoff) Len() int {
	if b == nil {
		return 0
	}
	return len(b.entries)
}

func (b *Backoff) expired(e backoffEntry, eventTime time.Time) bool {
	return eventTime.Sub(e.lastUpdate) > b.cfg.ResetAfter
}

// Next records one more failure for key: the delay becomes the initial one
// for a new or expired key, and doubles (up to the maximum) otherwise. On a
// zero or nil Backoff it does nothing.
func (b *Backoff) Next(key string, eventTime, now time.Time) {
	if b == nil || b.entries == nil {
		return
	}
	e, ok := b.entries[key]
	if !ok || b.expired(e, eventTime) {
		e.delay = b.cfg.Initial
	} else {
		e.delay = min(2*e.delay, b.cfg.Max)
	}
	e.lastUpdate = now
	b.entries[key] = e
}

// Get returns key's current delay, or zero for an unknown key.
func (b *Backoff) Get(key string) time.Duration {
	if b == nil {
		return 0
	}
	return b.entries[key].delay
}

// InBackoffSince reports whether, at now, less than key's delay has passed
// since eventTime. An unknown or expired key is not in back-off.
func (b *Backoff) InBackoffSince(key string, eventTime, now time.Time) bool {
	if b == nil {
		return false
	}
	e, ok := b.entries[key]
	if !ok || b.expired(e, eventTime) {
		return false
	}
	return now.Sub(eventTime) < e.delay
}

// InBackoffSinceUpdate reports whether, at now, less than key's delay has
// passed since its last update.
func (b *Backoff) InBackoffSinceUpdate(key string, now time.Time) bool {
	if b == nil {
		return false
	}
	e, ok := b.entries[key]
	if !ok || b.expired(e, now) {
		return false
	}
	return now.Sub(e.lastUpdate) < e.delay
}

// Reset forgets key.
func (b *Backoff) Reset(key string) {
	if b != nil {
		delete(b.entries, key)
	}
}

// GC forgets every key not updated for longer than the reset period.
func (b *Backoff) GC(now time.Time) {
	if b == nil {
		return
	}
	for k, e := range b.entries {
		if b.expired(e, now) {
			delete(b.entries, k)
		}
	}
}

// CrashLoop is the kubelet's decision before it starts a container again
// whose newest instance finished at finishedAt. If the container is still in
// back-off it returns blocked with the current delay and the time the
// back-off ends (finishedAt + delay); the kubelet then reports Waiting with
// reason CrashLoopBackOff (see [BackOffEvent]). Otherwise it records the
// restart, lengthening the next delay, and returns blocked false.
func (b *Backoff) CrashLoop(key string, finishedAt, now time.Time) (delay time.Duration, until time.Time, blocked bool) {
	if b.InBackoffSince(key, finishedAt, now) {
		d := b.Get(key)
		return d, finishedAt.Add(d), true
	}
	b.Next(key, finishedAt, now)
	return 0, time.Time{}, false
}

// ImagePull is the kubelet's decision before it pulls an image: blocked
// while key (see [ImagePullKey]) is within its delay of its last failure; the
// kubelet then reports ImagePullBackOff (see [PullBackOffEvent]). A caller
// whose pull fails records it with [Backoff.Next](key, now, now).
func (b *Backoff) ImagePull(key string, now time.Time) (blocked bool) {
	return b.InBackoffSinceUpdate(key, now)
}

// CrashLoopKey returns the kubelet's crash-loop back-off key for a
// container: the FNV-64a hash, in hex, of the pod's name, namespace and UID
// and the container's name, image and resources, joined with "/". A new
// image or new resources start a fresh back-off.
func CrashLoopKey(podName, namespace string, uid types.UID, c *v1.Container) string {
	if c == nil {
		c = &v1.Container{}
	}
	h := fnv.New64a()
	for i, s := range [...]string{podName, namespace, string(uid), c.Name, c.Image, c.Resources.String()} {
		if i > 0 {
			h.Write([]byte{'/'})
		}
		h.Write([]byte(s))
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// ImagePullKey returns the kubelet's image-pull back-off key: "<uid>_<image>".
func ImagePullKey(uid types.UID, image string) string {
	return string(uid) + "_" + image
}
