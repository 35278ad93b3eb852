package nodecondition

import (
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/kubeversion"
)

// Reasons and messages the kubelet writes on its node conditions.
const (
	ReasonKubeletReady    = "KubeletReady"
	ReasonKubeletNotReady = "KubeletNotReady"
	MessageKubeletReady   = "kubelet is posting ready status"

	ReasonInsufficientMemory = "KubeletHasInsufficientMemory"
	ReasonSufficientMemory   = "KubeletHasSufficientMemory"
	ReasonDiskPressure       = "KubeletHasDiskPressure"
	ReasonNoDiskPressure     = "KubeletHasNoDiskPressure"
	ReasonInsufficientPID    = "KubeletHasInsufficientPID"
	ReasonSufficientPID      = "KubeletHasSufficientPID"

	// MessageRuntimeDown is the runtime error once no check succeeded for 30 s.
	MessageRuntimeDown = "container runtime is down"
	// MessageRuntimeNotChecked is the runtime error before the first check completed.
	MessageRuntimeNotChecked = "container runtime status check may not have completed yet"
	// MessageNetworkUnknown is the network error before the runtime reported network status.
	MessageNetworkUnknown = "network state unknown"
)

type pressureText struct {
	trueReason, trueMessage, trueEvent    string
	falseReason, falseMessage, falseEvent string
}

var pressureTexts = [numPressure]pressureText{
	{ReasonInsufficientMemory, "kubelet has insufficient memory available", "NodeHasInsufficientMemory",
		ReasonSufficientMemory, "kubelet has sufficient memory available", "NodeHasSufficientMemory"},
	{ReasonDiskPressure, "kubelet has disk pressure", "NodeHasDiskPressure",
		ReasonNoDiskPressure, "kubelet has no disk pressure", "NodeHasNoDiskPressure"},
	{ReasonInsufficientPID, "kubelet has insufficient PID available", "NodeHasInsufficientPID",
		ReasonSufficientPID, "kubelet has sufficient PID available", "NodeHasSufficientPID"},
}

// Health is what the Ready setter sees besides the signals.
type Health struct {
	// Errors are the runtime, network, storage and node-shutdown errors, in the
	// order the kubelet collects them (for example MessageRuntimeDown).
	Errors []string
	// MissingCapacity names required capacity resources the node lacks ("cpu", "memory", "pods").
	MissingCapacity []string
	// Warning is the container manager's unmet soft requirements, "" when none.
	Warning string
	// OtherChanged says that a field of the node status besides the
	// conditions (its images, addresses, capacity) differs from the one last
	// sent: the kubelet compares the whole status, so the report is sent as
	// Changed.
	OtherChanged bool
}

// SendReason says why a status report is sent, or that it is not.
type SendReason uint8

// The reasons a status is sent.
const (
	NotSent     SendReason = iota // unchanged and not yet due
	FirstReport                   // the kubelet (re)started and has not reported yet
	Changed                       // some condition differs in more than its heartbeat, or another field (Health.OtherChanged)
	Due                           // unchanged, but the report frequency (plus jitter) has passed
)

// String names the reason: "first report", "changed", "due" or "not sent".
func (r SendReason) String() string {
	switch r {
	case FirstReport:
		return "first report"
	case Changed:
		return "changed"
	case Due:
		return "due"
	default:
		return "not sent"
	}
}

// Report is the outcome of one status computation.
type Report struct {
	// Conditions are the computed conditions, in kubelet order: MemoryPressure,
	// DiskPressure, PIDPressure, Ready. The slice belongs to the Kubelet and is
	// valid until its next call; copy it to keep it.
	Conditions []v1.NodeCondition
	// Send is true when the kubelet PATCHes the status now; Reason says why.
	Send   bool
	Reason SendReason // why it is sent, or NotSent
	// NextReport is when an unchanged status is next due.
	NextReport time.Time
	// Events are the Normal node events recorded for conditions that flipped
	// (for example "NodeNotReady"), and for pressure conditions created now
	// (the kubelet creates them Unknown and flips them at once:
	// "NodeHasSufficientMemory"); a Ready condition created now records none.
	// Valid until the next call.
	Events []string
}

const numKubeletConditions = 4 // MemoryPressure, DiskPressure, PIDPressure, Ready

// Kubelet is the kubelet's node-status machine: the eviction manager's
// pressure bookkeeping, the condition setters and the report rule. It is a
// value with no clock: every call takes the time. It is not safe for
// concurrent use. Use NewKubelet: Observe and Status of the zero value return
// ErrNotInitialized, and its other methods do nothing.
type Kubelet struct {
	cfg      KubeletOptions
	rnd      Rand
	pressure pressureTracker

	sent, prevSent         [numKubeletConditions]v1.NodeCondition
	hasSent, prevHasSent   [numKubeletConditions]bool
	lastReport, prevReport time.Time
	reported, prevReported bool
	delay, prevDelay       time.Duration
	last                   time.Time

	out    [numKubeletConditions]v1.NodeCondition
	events []string
}

// NewKubelet returns a machine for opts, or a *OptionError
// (ErrInvalidOptions) when they do not validate. opts.Rand supplies the
// one-time report jitter (nil: the process-wide source); a nil
// opts.Thresholds means DefaultHardThresholds.
func NewKubelet(opts KubeletOptions) (*Kubelet, error) {
	if opts.Thresholds == nil {
		opts.Thresholds = DefaultHardThresholds()
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ts := append([]Threshold(nil), opts.Thresholds...)
	opts.Thresholds = ts
	return &Kubelet{cfg: opts, rnd: randOrGlobal(opts.Rand), pressure: newPressureTracker(ts, opts.PressureTransitionPeriod, opts.MaxPodGracePeriod)}, nil
}

// initialized reports whether k came from NewKubelet.
func (k *Kubelet) initialized() bool { return k != nil && k.rnd != nil }

// Thresholds returns the thresholds in the order EvictionPass indexes them
// (nil for a zero Kubelet).
func (k *Kubelet) Thresholds() []Threshold {
	if k == nil {
		return nil
	}
	return append([]Threshold(nil), k.cfg.Thresholds...)
}

// Observe runs one eviction-manager pass on a signal sample. The pressure
// conditions it reports are what the next Status call writes. It allocates nothing.
//
// A nil sample is refused with an *InputError (ErrInvalidInput); a zero
// Kubelet returns ErrNotInitialized.
func (k *Kubelet) Observe(now time.Time, s *Sample) (EvictionPass, error) {
	if !k.initialized() {
		return EvictionPass{Evict: -1}, notInit("Kubelet", "Observe")
	}
	if s == nil {
		return EvictionPass{Evict: -1}, &InputError{Op: "Observe", Value: "<nil>", Reason: "a sample is required"}
	}
	if now.Before(k.last) {
		return EvictionPass{Evict: -1}, timeErr("Observe", now, k.last)
	}
	k.last = now
	return k.pressure.observe(now, s), nil
}

// Pressures returns the pressure conditions reported by the last Observe.
func (k *Kubelet) Pressures() Pressures {
	if k == nil {
		return Pressures{}
	}
	return k.pressure.current
}

// Status runs the condition setters at now and applies the report rule.
// A sent report becomes the status the next computation starts from (the
// API's copy); if the PATCH fails, call ReportFailed.
func (k *Kubelet) Status(now time.Time, h Health) (Report, error) {
	if !k.initialized() {
		return Report{}, notInit("Kubelet", "Status")
	}
	if now.Before(k.last) {
		return Report{}, timeErr("Status", now, k.last)
	}
	k.last = now
	k.events = k.events[:0]
	cur := k.pressure.current
	for i := pressureKind(0); i < numPressure; i++ {
		txt := &pressureTexts[i]
		st, reason, msg, ev := v1.ConditionFalse, txt.falseReason, txt.falseMessage, txt.falseEvent
		if cur.has(i) {
			st, reason, msg, ev = v1.ConditionTrue, txt.trueReason, txt.trueMessage, txt.trueEvent
		}
		k.setCondition(int(i), pressureTypes[i], st, reason, msg, ev, now, false)
	}
	st, reason, msg := v1.ConditionTrue, ReasonKubeletReady, MessageKubeletReady
	if len(h.Errors) > 0 || len(h.MissingCapacity) > 0 {
		st, reason, msg = v1.ConditionFalse, ReasonKubeletNotReady, readyErrors(h)
	}
	if h.Warning != "" {
		msg += ". WARNING: " + h.Warning
	}
	ev := "NodeReady"
	if st != v1.ConditionTrue {
		ev = "NodeNotReady"
	}
	k.setCondition(3, v1.NodeReady, st, reason, msg, ev, now, true)

	changed := h.OtherChanged
	for i := range k.out {
		if !k.hasSent[i] || !sameButHeartbeat(&k.out[i], &k.sent[i]) {
			changed = true
		}
	}
	r := Report{Conditions: k.out[:], Events: k.events}
	switch {
	case !k.reported:
		r.Reason = FirstReport
	case changed:
		r.Reason = Changed
	case !now.Before(k.lastReport.Add(k.cfg.StatusReportFrequency + k.delay)):
		r.Reason = Due
	}
	if r.Reason != NotSent {
		r.Send = true
		k.prevSent, k.prevHasSent, k.prevReport, k.prevReported, k.prevDelay = k.sent, k.hasSent, k.lastReport, k.reported, k.delay
		k.sent, k.lastReport, k.reported = k.out, now, true
		k.hasSent = [numKubeletConditions]bool{true, true, true, true}
		if r.Reason == Due || !k.cfg.Version.AtLeast(kubeversion.V1_34) {
			k.delay = 0 // before 1.34 the report period has no jitter (docs/versions.md NC-V3)
		} else {
			k.delay = k.jitter()
		}
	}
	r.NextReport = k.lastReport.Add(k.cfg.StatusReportFrequency + k.delay)
	return r, nil
}

// ReportFailed undoes the bookkeeping of the last sent report, as when the
// PATCH did not reach the API: the next Status compares against the status
// the API still has.
func (k *Kubelet) ReportFailed() {
	if k == nil {
		return
	}
	k.sent, k.hasSent, k.lastReport, k.reported, k.delay = k.prevSent, k.prevHasSent, k.prevReport, k.prevReported, k.prevDelay
}

// Restart models a kubelet restart at now: the eviction manager forgets its
// observations and the next status is sent whatever it holds. The status the
// API has is kept.
func (k *Kubelet) Restart() {
	if !k.initialized() {
		return
	}
	k.pressure = newPressureTracker(k.cfg.Thresholds, k.cfg.PressureTransitionPeriod, k.cfg.MaxPodGracePeriod)
	k.reported = false
	k.delay = 0
}

// APIStatus records the node's conditions as the API now has them, for
// example after the node-lifecycle controller wrote Unknown: the kubelet reads
// its node before every computation, so the next Status starts from these.
// Conditions other than the four the kubelet owns are ignored.
func (k *Kubelet) APIStatus(conds []v1.NodeCondition) {
	if k == nil {
		return
	}
	for i, typ := range [numKubeletConditions]v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure, v1.NodeReady} {
		k.hasSent[i] = false
		for j := range conds {
			if conds[j].Type == typ {
				k.sent[i], k.hasSent[i] = conds[j], true
			}
		}
	}
}

// LastReport returns the time of the last sent report and whether there is one.
func (k *Kubelet) LastReport() (time.Time, bool) {
	if k == nil {
		return time.Time{}, false
	}
	return k.lastReport, k.reported
}

func (k *Kubelet) jitter() time.Duration {
	u := k.rnd.Float64()
	if !(u >= 0 && u < 1) {
		u = 0.5
	}
	return time.Duration(float64(k.cfg.StatusReportFrequency) * (u - 0.5))
}

// setCondition writes condition i from the API copy: the heartbeat always
// moves, the transition time only when the status flips. For Ready a change of
// reason or message is written too; the pressure setters write them only on a flip.
func (k *Kubelet) setCondition(i int, typ v1.NodeConditionType, st v1.ConditionStatus, reason, msg, event string, now time.Time, ready bool) {
	t := metav1.NewTime(now)
	c := &k.out[i]
	if !k.hasSent[i] {
		*c = v1.NodeCondition{Type: typ, Status: st, Reason: reason, Message: msg, LastHeartbeatTime: t, LastTransitionTime: t}
		if !ready {
			// The kubelet creates a missing pressure condition as Unknown
			// and flips it in the same call, which records its event; a new
			// Ready condition records none (spec/nodecondition.md section 2.3).
			k.events = append(k.events, event)
		}
		return
	}
	*c = k.sent[i]
	c.LastHeartbeatTime = t
	if c.Status != st {
		c.Status, c.Reason, c.Message, c.LastTransitionTime = st, reason, msg, t
		k.events = append(k.events, event)
		return
	}
	if ready {
		c.Reason, c.Message = reason, msg
	}
}

func sameButHeartbeat(a, b *v1.NodeCondition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.LastTransitionTime.Equal(&b.LastTransitionTime)
}

// readyErrors joins the errors the way the kubelet aggregates them: one
// distinct message prints as is, several as "[a, b]".
func readyErrors(h Health) string {
	msgs := make([]string, 0, len(h.Errors)+1)
	seen := func(m string) bool {
		for _, x := range msgs {
			if x == m {
				return true
			}
		}
		return false
	}
	for _, e := range h.Errors {
		if !seen(e) {
			msgs = append(msgs, e)
		}
	}
	if len(h.MissingCapacity) > 0 {
		m := "missing node capacity for resources: " + strings.Join(h.MissingCapacity, ", ")
		if !seen(m) {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}
