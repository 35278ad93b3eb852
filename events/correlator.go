package events

import (
	"fmt"
	"hash/maphash"
	"math"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of client-go v0.37.2 tools/record (spec A.1).
const (
	// DefaultCacheSize is the number of entries in each of the correlator's three LRU caches.
	DefaultCacheSize = 4096
	// DefaultMaxEvents is the number of distinct messages of similar events that starts aggregation.
	DefaultMaxEvents = 10
	// DefaultWindow is how long after the last similar event an aggregation record is kept.
	DefaultWindow = 600 * time.Second
	// DefaultBurst is the size of the spam filter's token bucket.
	DefaultBurst = 25
	// DefaultQPS is the spam filter's refill rate, one token per 300 s, as the float32 client-go uses.
	DefaultQPS = float32(1. / 300)
	// AggregatePrefix starts the message of an aggregate event.
	AggregatePrefix = "(combined from similar events): "
)

// maxMaxEvents bounds AggregationOptions.MaxEvents: the set of distinct messages is scanned
// linearly. To never aggregate, set Disabled.
const maxMaxEvents = 1024

// CorrelatorOptions configures a Correlator. The zero value is not valid on purpose: a zero field would
// hide a choice, so start from DefaultCorrelatorOptions and change what you need, or set Disabled on a
// stage to switch it off.
type CorrelatorOptions struct {
	// CacheSize is the number of entries of each LRU cache (aggregation records, observed
	// events, spam buckets). At least 1.
	CacheSize int
	// Aggregation folds similar events (same source, object, type, reason and reporting
	// fields, different messages) into one aggregate event.
	Aggregation AggregationOptions
	// SpamFilter rate-limits events per source, object and type.
	SpamFilter SpamFilterOptions
}

// AggregationOptions configures the aggregation stage.
type AggregationOptions struct {
	// Disabled switches aggregation off: every event is deduplicated on its own.
	Disabled bool
	// MaxEvents is the number of distinct messages within Window that makes an event
	// part of the aggregate. Between 1 and 1024.
	MaxEvents int
	// Window is the longest gap between similar events that keeps their aggregation record;
	// a longer gap starts afresh. Positive.
	Window time.Duration
}

// SpamFilterOptions configures the token-bucket spam filter.
type SpamFilterOptions struct {
	// Disabled switches the spam filter off: no event is dropped by it.
	Disabled bool
	// Burst is the size of each token bucket. At least 1.
	Burst int
	// QPS is the refill rate in tokens per second. Positive (+Inf never drops).
	QPS float32
	// ByReason adds the event reason to the spam key, so a noisy reason does not starve the
	// other reasons of the same object. client-go's default key has no reason.
	ByReason bool
}

// DefaultCorrelatorOptions returns the options of client-go v0.37.2's NewEventCorrelator.
func DefaultCorrelatorOptions() CorrelatorOptions {
	return CorrelatorOptions{
		CacheSize:   DefaultCacheSize,
		Aggregation: DefaultAggregationOptions(),
		SpamFilter:  DefaultSpamFilterOptions(),
	}
}

// DefaultAggregationOptions returns client-go's aggregation: DefaultMaxEvents distinct
// messages within DefaultWindow.
func DefaultAggregationOptions() AggregationOptions {
	return AggregationOptions{MaxEvents: DefaultMaxEvents, Window: DefaultWindow}
}

// DefaultSpamFilterOptions returns client-go's spam filter: buckets of DefaultBurst tokens
// refilled at DefaultQPS, keyed by source, object and type.
func DefaultSpamFilterOptions() SpamFilterOptions {
	return SpamFilterOptions{Burst: DefaultBurst, QPS: DefaultQPS}
}

// Validate reports the first invalid field of o as an *OptionError (matching
// ErrInvalidOptions).
func (o CorrelatorOptions) Validate() error {
	if o.CacheSize < 1 {
		return &OptionError{Field: "CacheSize", Value: strconv.Itoa(o.CacheSize), Reason: "must be at least 1"}
	}
	if o.CacheSize > math.MaxInt32 {
		return &OptionError{Field: "CacheSize", Value: strconv.Itoa(o.CacheSize), Reason: "must fit in an int32"}
	}
	if !o.Aggregation.Disabled {
		if o.Aggregation.MaxEvents < 1 || o.Aggregation.MaxEvents > maxMaxEvents {
			return &OptionError{Field: "Aggregation.MaxEvents", Value: strconv.Itoa(o.Aggregation.MaxEvents), Reason: "must be between 1 and 1024 (set Disabled to switch aggregation off)"}
		}
		if o.Aggregation.Window <= 0 {
			return &OptionError{Field: "Aggregation.Window", Value: o.Aggregation.Window.String(), Reason: "must be positive (set Disabled to switch aggregation off)"}
		}
	}
	if !o.SpamFilter.Disabled {
		if o.SpamFilter.Burst < 1 {
			return &OptionError{Field: "SpamFilter.Burst", Value: strconv.Itoa(o.SpamFilter.Burst), Reason: "must be at least 1 (set Disabled to switch the filter off)"}
		}
		if !(o.SpamFilter.QPS > 0) {
			return &OptionError{Field: "SpamFilter.QPS", Value: strconv.FormatFloat(float64(o.SpamFilter.QPS), 'g', -1, 32), Reason: "must be positive (set Disabled to switch the filter off)"}
		}
	}
	return nil
}

// Decision says what to do with a correlated event.
type Decision uint8

const (
	// Create means: create the event (its count is 1, or it was never written before).
	Create Decision = iota + 1
	// Patch means: patch the existing event (count above 1) with Result.Patch.
	Patch
	// Skip means: the spam filter dropped the event; write nothing.
	Skip
)

// String returns "create", "patch" or "skip".
func (d Decision) String() string {
	switch d {
	case Create:
		return "create"
	case Patch:
		return "patch"
	case Skip:
		return "skip"
	}
	return "Decision(" + strconv.Itoa(int(d)) + ")"
}

// Result is the outcome of Correlate.
type Result struct {
	// Decision is what to write.
	Decision Decision
	// Aggregated is true when the event was folded into its aggregate event: Event is then the
	// aggregate event, not the input.
	Aggregated bool
	// Event is the event to write, new and owned by the caller: a shallow copy of the input
	// (sharing its maps) carrying the cached name, resourceVersion, firstTimestamp and count, or
	// the aggregate event. Nil when Decision is Skip.
	Event *v1.Event
	// Patch is the strategic merge patch for Decision Patch: count, lastTimestamp and message,
	// byte for byte what client-go sends. A new slice owned by the caller; nil otherwise.
	Patch []byte
}

// String renders r on one line: the decision, then for a write the count, the event name,
// "aggregated" when it is the aggregate event, and the patch.
func (r Result) String() string {
	var b strings.Builder
	b.WriteString(r.Decision.String())
	if r.Event != nil {
		fmt.Fprintf(&b, " count=%d name=%s", r.Event.Count, r.Event.Name)
	}
	if r.Aggregated {
		b.WriteString(" aggregated")
	}
	if r.Patch != nil {
		b.WriteString(" patch=")
		b.Write(r.Patch)
	}
	return b.String()
}

// CorrelatorStats counts the correlator's outcomes.
type CorrelatorStats struct {
	// Created counts Create decisions, Patched counts Patch decisions.
	Created, Patched uint64
	// Aggregated counts events folded into an aggregate event (a subset of Created+Patched+SpamDropped).
	Aggregated uint64
	// SpamDropped counts events dropped by the spam filter.
	SpamDropped uint64
}

// Correlator is client-go's EventCorrelator as a value: aggregation of similar events,
// deduplication into a count and a patch, and the token-bucket spam filter, in that order. Time
// is an argument. Use NewCorrelator: Correlate and CorrelateTo of the zero value return
// ErrNotInitialized, its other methods do nothing. A Correlator is not safe for concurrent
// use; the broadcaster gives each sink its own.
type Correlator struct {
	opts  CorrelatorOptions
	seed  maphash.Seed
	agg   lru[aggKey, aggRecord]
	log   lru[logKey, observation]
	spam  lru[spamKey, bucket]
	stats CorrelatorStats
}

// aggKey groups similar events: every identifying field but the message and the field path.
type aggKey struct {
	component, host                 string
	kind, namespace, name, uid, api string
	typ, reason                     string
	reportingController             string
	reportingInstance               string
}

// logKey is the dedup key: for a plain event the aggregation key without the reporting fields
// plus field path and message; for an aggregate event the aggregation key itself.
type logKey struct {
	aggregate          bool
	a                  aggKey
	fieldPath, message string
}

type spamKey struct {
	component, host                 string
	kind, namespace, name, uid, api string
	typ, reason                     string
}

type aggRecord struct {
	// messages are the distinct messages of the window that are recorded on their own, in
	// the order they arrived; never more than MaxEvents-1.
	messages []string
	last     time.Time
}

type observation struct {
	count           int32
	firstTimestamp  metav1.Time
	name            string
	resourceVersion string
}

// bucket is a token bucket with golang.org/x/time/rate's arithmetic, so that its decisions are
// those of client-go's flowcontrol passive rate limiter to the bit.
type bucket struct {
	tokens float64
	last   time.Time
}

// NewCorrelator returns a correlator with the given options, or an *OptionError (matching
// ErrInvalidOptions).
func NewCorrelator(opts CorrelatorOptions) (*Correlator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Correlator{
		opts: opts,
		seed: maphash.MakeSeed(),
		agg:  newLRU[aggKey, aggRecord](opts.CacheSize),
		log:  newLRU[logKey, observation](opts.CacheSize),
		spam: newLRU[spamKey, bucket](opts.CacheSize),
	}, nil
}

// Options returns the options the correlator was built with (zero for the zero Correlator).
func (c *Correlator) Options() CorrelatorOptions {
	if c == nil {
		return CorrelatorOptions{}
	}
	return c.opts
}

// Stats returns the counts of outcomes so far.
func (c *Correlator) Stats() CorrelatorStats {
	if c == nil {
		return CorrelatorStats{}
	}
	return c.stats
}

// Len returns the number of entries of the aggregation, dedup and spam caches; each is at most
// CorrelatorOptions.CacheSize.
func (c *Correlator) Len() (aggregation, dedup, spam int) {
	if c == nil {
		return 0, 0, 0
	}
	return c.agg.len(), c.log.len(), c.spam.len()
}

func aggregateKeyOf(ev *v1.Event) aggKey {
	o := &ev.InvolvedObject
	return aggKey{
		component: ev.Source.Component, host: ev.Source.Host,
		kind: o.Kind, namespace: o.Namespace, name: o.Name, uid: string(o.UID), api: o.APIVersion,
		typ: ev.Type, reason: ev.Reason,
		reportingController: ev.ReportingController, reportingInstance: ev.ReportingInstance,
	}
}

func fullKeyOf(ev *v1.Event) logKey {
	o := &ev.InvolvedObject
	return logKey{
		a: aggKey{
			component: ev.Source.Component, host: ev.Source.Host,
			kind: o.Kind, namespace: o.Namespace, name: o.Name, uid: string(o.UID), api: o.APIVersion,
			typ: ev.Type, reason: ev.Reason,
		},
		fieldPath: o.FieldPath,
		message:   ev.Message,
	}
}

func (c *Correlator) spamKeyOf(ev *v1.Event) spamKey {
	o := &ev.InvolvedObject
	k := spamKey{
		component: ev.Source.Component, host: ev.Source.Host,
		kind: o.Kind, namespace: o.Namespace, name: o.Name, uid: string(o.UID), api: o.APIVersion,
		typ: ev.Type,
	}
	if c.opts.SpamFilter.ByReason {
		k.reason = ev.Reason
	}
	return k
}

// correlate runs the three stages for ev at now and updates the caches and counters.
func (c *Correlator) correlate(ev *v1.Event, now time.Time) (step, error) {
	if c == nil || c.opts.CacheSize == 0 {
		return step{}, ErrNotInitialized
	}
	if ev == nil {
		return step{}, ErrNilEvent
	}
	sums := c.sumsOf(ev, !c.opts.Aggregation.Disabled)
	var ak aggKey
	aggregated := false
	if !c.opts.Aggregation.Disabled {
		ak = aggregateKeyOf(ev)
		rec, fresh := c.agg.slot(ak, sums.agg)
		if fresh || now.Sub(rec.last) > c.opts.Aggregation.Window {
			clear(rec.messages)
			rec.messages = rec.messages[:0]
		}
		rec.last = now
		if !containsString(rec.messages, ev.Message) {
			if len(rec.messages)+1 < c.opts.Aggregation.MaxEvents {
				rec.messages = append(rec.messages, ev.Message)
			} else {
				aggregated = true
			}
		}
	}

	// The identity of the event to write: the input's, or a fresh aggregate event's; then the
	// cached one when this is a repeat.
	var obs *observation
	var fresh bool
	var next observation
	if aggregated {
		obs, fresh = c.log.slot(logKey{aggregate: true, a: ak}, aggLogSum(sums.agg))
		next = observation{count: 1, firstTimestamp: metav1.NewTime(now), name: aggregateName(ev, now)}
	} else {
		obs, fresh = c.log.slot(fullKeyOf(ev), sums.full)
		next = observation{count: ev.Count, firstTimestamp: ev.FirstTimestamp, name: ev.Name, resourceVersion: ev.ResourceVersion}
	}
	repeat := !fresh && obs.count != 0
	if repeat {
		next = observation{count: obs.count + 1, firstTimestamp: obs.firstTimestamp, name: obs.name, resourceVersion: obs.resourceVersion}
	}
	*obs = next

	if !c.opts.SpamFilter.Disabled && !c.allow(c.spamKeyOf(ev), c.spamSum(sums), now) {
		c.stats.SpamDropped++
		if aggregated {
			c.stats.Aggregated++
		}
		return step{decision: Skip, aggregated: aggregated}, nil
	}
	st := step{aggregated: aggregated, repeat: repeat, next: next, decision: Create}
	if next.count > 1 {
		st.decision = Patch
		c.stats.Patched++
	} else {
		c.stats.Created++
	}
	if aggregated {
		c.stats.Aggregated++
	}
	return st, nil
}

// aggregateName names a new aggregate event: the name of the event it replaces, which is
// unique per recorder and is never written itself; client-go's name (the object's name and
// now's nanoseconds, without the UUID fallback) for an event without a name. client-go
// always uses the latter, which collides with the name of an event recorded at the same
// nanosecond (always the case under a fake clock) and makes the create fail.
func aggregateName(ev *v1.Event, now time.Time) string {
	if ev.Name != "" {
		return ev.Name
	}
	return ev.InvolvedObject.Name + "." + strconv.FormatInt(now.UnixNano(), 16)
}

// step is what correlate decided, before the event to write is built.
type step struct {
	decision   Decision
	aggregated bool
	repeat     bool
	next       observation
}

// build writes into out the event step says to write for ev at now.
func (st *step) build(ev *v1.Event, now time.Time, out *v1.Event) {
	if st.aggregated {
		*out = v1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ev.Namespace},
			InvolvedObject: ev.InvolvedObject,
			Reason:         ev.Reason,
			Message:        AggregatePrefix + ev.Message,
			Source:         ev.Source,
			LastTimestamp:  metav1.NewTime(now),
			Type:           ev.Type,
		}
	} else {
		*out = *ev
	}
	out.Name, out.ResourceVersion, out.FirstTimestamp, out.Count = st.next.name, st.next.resourceVersion, st.next.firstTimestamp, st.next.count
}

// Correlate decides what to write for ev, observed at now, and updates the caches. ev is not
// modified. Order and rules are client-go's (spec A.4): aggregate, then observe (count and
// patch, cached before the filter runs, so dropped events still raise later counts), then the
// spam filter. The deliberate differences are which message leaves the aggregation set and
// the name of a new aggregate event: see the package documentation. Only a nil event is an
// error (ErrNilEvent, matching ErrInvalidInput), and the zero Correlator (ErrNotInitialized).
func (c *Correlator) Correlate(ev *v1.Event, now time.Time) (Result, error) {
	st, err := c.correlate(ev, now)
	if err != nil || st.decision == Skip {
		return Result{Decision: st.decision, Aggregated: st.aggregated}, err
	}
	res := Result{Decision: st.decision, Aggregated: st.aggregated, Event: new(v1.Event)}
	st.build(ev, now, res.Event)
	if st.repeat {
		res.Patch = appendCountPatch(make([]byte, 0, countPatchLen(res.Event.Message)), res.Event.Count, res.Event.LastTimestamp, res.Event.Message)
	}
	return res, nil
}

// CorrelateTo is Correlate for a caller that reuses its memory: the event to write is stored
// in *dst (left alone on Skip) and the patch, for a Patch, is appended to patch[:0] and
// returned. With a reused dst and a patch buffer that has grown to size, it allocates nothing
// but the name and message of a new aggregate event.
func (c *Correlator) CorrelateTo(ev *v1.Event, now time.Time, dst *v1.Event, patch []byte) (d Decision, aggregated bool, outPatch []byte, err error) {
	if dst == nil {
		return 0, false, nil, &InvalidEventError{Field: "dst", Value: "<nil>", Detail: "must not be nil"}
	}
	st, err := c.correlate(ev, now)
	if err != nil || st.decision == Skip {
		return st.decision, st.aggregated, nil, err
	}
	st.build(ev, now, dst)
	if st.repeat {
		outPatch = appendCountPatch(patch[:0], dst.Count, dst.LastTimestamp, dst.Message)
	}
	return st.decision, st.aggregated, outPatch, nil
}

// UpdateState records what the server returned for a written event (its name, resourceVersion,
// count and firstTimestamp), keyed by the event's own dedup key, as client-go does after every
// successful write. A nil event is ignored.
func (c *Correlator) UpdateState(ev *v1.Event) {
	if c == nil || c.opts.CacheSize == 0 || ev == nil {
		return
	}
	obs, _ := c.log.slot(fullKeyOf(ev), c.sumsOf(ev, false).full)
	*obs = observation{count: ev.Count, firstTimestamp: ev.FirstTimestamp, name: ev.Name, resourceVersion: ev.ResourceVersion}
}

// allow takes one token from the bucket of k at now, creating a full bucket when k is new (or
// was evicted), with x/time/rate's AllowN(now, 1) arithmetic.
func (c *Correlator) allow(k spamKey, sum uint64, now time.Time) bool {
	b, fresh := c.spam.slot(k, sum)
	burst := float64(c.opts.SpamFilter.Burst)
	if fresh {
		*b = bucket{tokens: burst}
	}
	limit := float64(c.opts.SpamFilter.QPS)
	if math.IsInf(limit, 1) {
		return true
	}
	last := b.last
	if now.Before(last) {
		last = now
	}
	tokens := b.tokens + now.Sub(last).Seconds()*limit
	if tokens > burst {
		tokens = burst
	}
	tokens--
	if tokens < 0 {
		wait := (-tokens / limit) * float64(time.Second)
		if wait > float64(math.MaxInt64) || time.Duration(wait) > 0 {
			return false
		}
	}
	b.last = now
	b.tokens = tokens
	return true
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
