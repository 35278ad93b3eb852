package podrunner

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podphase"
	"github.com/nodestate/nodestate/statussync"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Runner runs a node's pods: for each pod a podlifecycle machine and its
// Runtime, their statuses into a statussync cache and their events into a
// Recorder, driven by the kubelet's sync triggers (see the package doc).
//
// Add, Update, Remove, Reject, Notify and the readers are safe for
// simultaneous use by multiple goroutines (an informer's, a provider's);
// they hand their work to the goroutine that calls Advance, which is Run's
// or, for a runner in virtual time, the caller's own. Advance must not be
// called from two goroutines at once, nor beside Run. Use New; the methods
// of the zero value return ErrNotInitialized or do nothing.
type Runner struct {
	opts  Options
	cache *statussync.Cache
	rec   Recorder
	clock clock.Clock
	log   logr.Logger

	mu      sync.Mutex
	inbox   []op
	spare   []op // the inbox's other buffer
	known   map[types.UID]*v1.Pod
	ips     *ipPool
	hostIPs []v1.HostIP
	podIPs  []v1.PodIP // the host IPs as pod IPs, for host-network pods
	wakeCh  chan struct{}
	running bool

	// owned by the goroutine that calls Advance
	pods   map[types.UID]*podEntry
	heap   wakeHeap
	seq    uint64
	last   time.Time // the latest time Advance ran at
	epoch  time.Time // the first time Advance ran at: the relists count from it
	images []Image   // images on the node, in the order they arrived

	statsMu sync.Mutex
	stats   Stats
}

// Stats counts what a Runner did, and every piece of work it could not do,
// with the reason.
type Stats struct {
	// Added, Rejected and Removed count pods by call; Finished the pods
	// whose machines finished; Running the pods added and not yet finished
	// or removed.
	Added, Rejected, Removed, Finished, Running int
	// Steps counts machine Steps.
	Steps uint64
	// Updates counts the Update calls applied to a pod still running;
	// UpdatesSynced those of them that woke its machine (a change of spec,
	// labels, annotations or deletion, or a Ready condition gone stale,
	// podlifecycle.Changed). The rest, the echo of the runner's own status
	// writes among them, cost no sync.
	Updates, UpdatesSynced uint64
	// StatusErrors and StepErrors count statuses the cache refused and
	// Steps the machine refused (logged); DroppedObservations the
	// observations dropped because the machine refused them (each logged
	// with the reason; the rest of their batch was applied).
	StatusErrors, StepErrors, DroppedObservations uint64
	// RuntimeErrors counts calls of Do that returned an error; their
	// actions were handed again later.
	RuntimeErrors uint64
	// Stalls counts the times a pod hit MaxSyncsPerInstant.
	Stalls uint64
	// ClockSteppedBack counts calls of Advance with a time earlier than an
	// earlier call's; the runner went on at the later time.
	ClockSteppedBack uint64
}

type opKind uint8

const (
	opAdd opKind = iota + 1
	opUpdate
	opRemove
	opNotify
)

type op struct {
	kind opKind
	uid  types.UID
	pod  *v1.Pod   // add, update, remove (the last object known, may be nil)
	p    *podEntry // add
}

// New returns a runner that writes its pods' statuses into cache and
// their events to rec. It returns an *OptionError for options out of
// range, a nil cache or a nil recorder.
func New(opts Options, cache *statussync.Cache, rec Recorder) (*Runner, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if _, err := podlifecycle.New(opts.Lifecycle, probePod()); err != nil {
		return nil, &OptionError{Field: "Lifecycle", Value: "", Reason: "refused by podlifecycle", Err: err}
	}
	if cache == nil {
		return nil, &OptionError{Field: "cache", Value: nil, Reason: "a status cache is required"}
	}
	if rec == nil {
		return nil, &OptionError{Field: "recorder", Value: nil, Reason: "an event recorder is required"}
	}
	r := &Runner{opts: opts, cache: cache, rec: rec, clock: opts.Clock, log: opts.Logger,
		known: map[types.UID]*v1.Pod{}, wakeCh: make(chan struct{}, 1), pods: map[types.UID]*podEntry{}}
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	if opts.PodCIDR != "" {
		p, _ := parsePodCIDR(opts.PodCIDR)
		r.ips = newIPPool(p)
	}
	for _, ip := range opts.HostIPs {
		r.hostIPs = append(r.hostIPs, v1.HostIP{IP: ip})
		r.podIPs = append(r.podIPs, v1.PodIP{IP: ip})
	}
	return r, nil
}

// probePod is a minimal valid pod, to check the lifecycle options early.
func probePod() *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}}}
}

// SetPodCIDR replaces the range pod IPs come from, for the pods added from
// now on (a node's Node object may be given a pod CIDR by the cluster
// after the runner was made). Pods keep the addresses they have.
func (r *Runner) SetPodCIDR(cidr string) error {
	if r.pods == nil {
		return ErrNotInitialized
	}
	p, ok := parsePodCIDR(cidr)
	if !ok {
		return &OptionError{Field: "PodCIDR", Value: cidr, Reason: "want an IPv4 range of at least 4 addresses"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ips == nil || r.ips.prefix != p {
		old := r.ips
		r.ips = newIPPool(p)
		if old != nil {
			// Addresses still held in the old range stay held if the
			// ranges overlap.
			for a := range old.used {
				if p.Contains(a) {
					r.ips.used[a] = true
				}
			}
		}
	}
	return nil
}

// PodCIDR returns the range pod IPs come from ("" for none).
func (r *Runner) PodCIDR() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ips == nil {
		return ""
	}
	return r.ips.prefix.String()
}

// Add starts running pod on rt: a new machine, the pod's IP from the pod
// CIDR, and a first sync at the next Advance. It returns a *PodError for a
// nil pod or runtime, a pod without a UID or one the machine refuses
// (ErrInvalidInput), a pod already added (ErrDuplicatePod), and a pod that
// is not host-network when the pod CIDR is full (ErrPodCIDRExhausted; the
// caller rejects it, see Reject). The runner keeps pod and reads it as
// immutable: hand a changed copy to Update.
func (r *Runner) Add(pod *v1.Pod, rt Runtime) error {
	if r.pods == nil {
		return ErrNotInitialized
	}
	if pod == nil || rt == nil || pod.UID == "" {
		e := &PodError{Op: "add", Kind: ErrInvalidInput}
		if pod != nil {
			e.Namespace, e.Name, e.UID = pod.Namespace, pod.Name, pod.UID
		}
		switch {
		case pod == nil:
			e.Err = errorString("nil pod")
		case rt == nil:
			e.Err = errorString("nil runtime")
		default:
			e.Err = errorString("pod without a UID")
		}
		return e
	}
	m, err := podlifecycle.New(r.opts.Lifecycle, pod)
	if err != nil {
		return &PodError{Op: "add", UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Kind: ErrInvalidInput, Err: err}
	}
	p := &podEntry{api: pod, m: m, rt: rt, hidx: -1}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.known[pod.UID]; dup {
		return &PodError{Op: "add", UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Kind: ErrDuplicatePod}
	}
	if r.ips != nil && !pod.Spec.HostNetwork {
		ip, ok := r.ips.get()
		if !ok {
			return &PodError{Op: "add", UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Kind: ErrPodCIDRExhausted,
				Err: errorString("no free IP address in the node's pod CIDR " + r.ips.prefix.String())}
		}
		p.ip, p.ipPool = ip, r.ips
	}
	r.known[pod.UID] = pod
	r.push(op{kind: opAdd, uid: pod.UID, pod: pod, p: p})
	r.count(func(s *Stats) { s.Added++; s.Running++ })
	return nil
}

// Update hands the runner a newer API object of a pod it runs. A change of
// the spec, labels, annotations or deletion (podlifecycle.Changed) syncs
// the pod at the next Advance; an update of the status alone (the node's
// own status write coming back from a watch) does not, unless the pod's
// readiness gates make its Ready condition stale
// (podphase.ReadyConditionStale). A pod the runner does not know returns a
// *PodError wrapping ErrUnknownPod.
func (r *Runner) Update(pod *v1.Pod) error {
	if r.pods == nil {
		return ErrNotInitialized
	}
	if pod == nil || pod.UID == "" {
		return &PodError{Op: "update", Kind: ErrInvalidInput, Err: errorString("nil pod or pod without a UID")}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.known[pod.UID]; !ok {
		return &PodError{Op: "update", UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Kind: ErrUnknownPod}
	}
	r.known[pod.UID] = pod
	r.push(op{kind: opUpdate, uid: pod.UID, pod: pod})
	return nil
}

// Remove tells the runner that the API server no longer has pod uid. A
// finished pod is forgotten at the next Advance (its cached status too);
// one still running is killed first, with the grace of the last object
// known (last may be nil: grace 0, as a forced deletion), and forgotten
// once its machine is finished. A pod the runner does not know returns a
// *PodError wrapping ErrUnknownPod.
func (r *Runner) Remove(uid types.UID, last *v1.Pod) error {
	if r.pods == nil {
		return ErrNotInitialized
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.known[uid]; !ok {
		return &PodError{Op: "remove", UID: uid, Kind: ErrUnknownPod}
	}
	if last != nil && last.UID != uid {
		last = nil
	}
	r.push(op{kind: opRemove, uid: uid, pod: last})
	return nil
}

// Notify tells the runner that pod uid's runtime has something to report:
// its Due is read at the next Advance. A runtime that knows its next report
// in advance (Runtime.Next) needs no Notify. A pod the runner does not know
// returns a *PodError wrapping ErrUnknownPod.
func (r *Runner) Notify(uid types.UID) error {
	if r.pods == nil {
		return ErrNotInitialized
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.known[uid]; !ok {
		return &PodError{Op: "notify", UID: uid, Kind: ErrUnknownPod}
	}
	r.push(op{kind: opNotify, uid: uid})
	return nil
}

// Reject fails a pod the node will not run, as the kubelet's admission
// does: a Warning event with reason and message, and the final status
// (phase Failed, the reason, message "Pod was rejected: <message>") into
// the cache as terminated, so that a status engine writes it and deletes
// the pod once the API server marks it for deletion. The pod is then known
// (Remove forgets it). It returns a *PodError for a nil pod or one without
// a UID, and for a pod already added.
func (r *Runner) Reject(pod *v1.Pod, now time.Time, reason, message string) error {
	if r.pods == nil {
		return ErrNotInitialized
	}
	if pod == nil || pod.UID == "" {
		return &PodError{Op: "reject", Kind: ErrInvalidInput, Err: errorString("nil pod or pod without a UID")}
	}
	r.mu.Lock()
	if _, dup := r.known[pod.UID]; dup {
		r.mu.Unlock()
		return &PodError{Op: "reject", UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Kind: ErrDuplicatePod}
	}
	r.known[pod.UID] = pod
	r.push(op{kind: opAdd, uid: pod.UID, pod: pod, p: &podEntry{api: pod, finished: true, hidx: -1}})
	r.mu.Unlock()
	r.rec.Event(podlifecycle.Event{}.Reference(pod), v1.EventTypeWarning, reason, message)
	st := v1.PodStatus{Phase: v1.PodFailed, Reason: reason, Message: "Pod was rejected: " + message, QOSClass: pod.Status.QOSClass}
	r.setHostIPs(pod, &st)
	if _, _, err := r.cache.SetPodStatus(pod, st, now); err != nil {
		r.log.Error(err, "rejected pod status", "pod", klog(pod))
		r.count(func(s *Stats) { s.StatusErrors++ })
	}
	if err := r.cache.TerminatePod(pod, now); err != nil {
		r.log.Error(err, "rejected pod", "pod", klog(pod))
		r.count(func(s *Stats) { s.StatusErrors++ })
	}
	r.count(func(s *Stats) { s.Rejected++ })
	return nil
}

// push queues an op and wakes Run; r.mu is held.
func (r *Runner) push(o op) {
	r.inbox = append(r.inbox, o)
	select {
	case r.wakeCh <- struct{}{}:
	default:
	}
}

// Pod returns the newest API object of pod uid the runner was handed, and
// whether it knows the pod. The object is shared: do not change it.
func (r *Runner) Pod(uid types.UID) (*v1.Pod, bool) {
	if r.pods == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.known[uid]
	return p, ok
}

// Pods returns the UIDs of the pods the runner knows, in no order.
func (r *Runner) Pods() []types.UID {
	if r.pods == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]types.UID, 0, len(r.known))
	for uid := range r.known {
		out = append(out, uid)
	}
	return out
}

// Status returns the newest status of pod uid in the cache (a copy), and
// whether there is one.
func (r *Runner) Status(uid types.UID) (v1.PodStatus, bool) {
	if r.cache == nil {
		return v1.PodStatus{}, false
	}
	return r.cache.GetPodStatus(uid)
}

// Stats returns what the runner did so far. It is safe to call while Run
// runs.
func (r *Runner) Stats() Stats {
	r.statsMu.Lock()
	defer r.statsMu.Unlock()
	return r.stats
}

func (r *Runner) count(f func(*Stats)) {
	r.statsMu.Lock()
	f(&r.stats)
	r.statsMu.Unlock()
}

// Wakeup returns a channel that receives when a call (Add, Update, Remove,
// Notify, Reject) handed the runner work. A loop of one's own that calls
// Advance, beside other work (a node's status and Lease), waits on it and
// on a timer for the time Advance returned; Run does exactly that. The zero
// Runner's channel is nil.
func (r *Runner) Wakeup() <-chan struct{} { return r.wakeCh }

// Run advances the runner on its clock until ctx ends, and returns ctx's
// error. It wakes when a pod is due, and at once when a call hands it work.
// A Runner runs once; a second Run returns an error at once.
func (r *Runner) Run(ctx context.Context) error {
	if r.pods == nil {
		return ErrNotInitialized
	}
	r.mu.Lock()
	if r.running {
		r.mu.Unlock()
		return ErrRunning
	}
	r.running = true
	r.mu.Unlock()
	var t clock.Timer
	for {
		now := r.clock.Now()
		next := r.Advance(now)
		var tc <-chan time.Time
		if !next.IsZero() {
			d := next.Sub(r.clock.Now())
			if d <= 0 {
				continue // due already: the clock moved while Advance ran
			}
			if t == nil {
				t = r.clock.NewTimer(d)
			} else {
				t.Reset(d)
			}
			tc = t.C()
		}
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			return ctx.Err()
		case <-r.wakeCh:
			if t != nil && !t.Stop() {
				select {
				case <-t.C():
				default:
				}
			}
		case <-tc:
		}
	}
}

// Advance does everything due at now: the calls handed to the runner since
// the last Advance, in order, then the sync of every pod that is due, in
// wake-up order (pods due at the same instant in the order they were
// added). It returns when the next pod is due, zero for none. A now earlier
// than an earlier call's is taken as that call's time (a clock that
// stepped back; counted in Stats.ClockSteppedBack).
func (r *Runner) Advance(now time.Time) time.Time {
	if r.pods == nil {
		return time.Time{}
	}
	if now.Before(r.last) {
		r.count(func(s *Stats) { s.ClockSteppedBack++ })
		now = r.last
	}
	r.last = now
	if r.epoch.IsZero() {
		r.epoch = now
	}
	r.drain(now)
	for len(r.heap) > 0 && !r.heap[0].wake.After(now) {
		r.sync(r.heap[0], now)
	}
	if len(r.heap) == 0 {
		return time.Time{}
	}
	return r.heap[0].wake
}

// drain applies the calls queued since the last Advance.
func (r *Runner) drain(now time.Time) {
	r.mu.Lock()
	ops := r.inbox
	r.inbox = r.spare[:0]
	r.mu.Unlock()
	for i := range ops {
		o := &ops[i]
		switch o.kind {
		case opAdd:
			p := o.p
			r.seq++
			p.seq = r.seq
			r.pods[o.uid] = p
			if !p.finished {
				p.changed = true
				r.heap.set(p, now)
			}
		case opUpdate:
			p := r.pods[o.uid]
			if p == nil || o.pod == p.api || p.removed {
				break
			}
			changed := podlifecycle.Changed(p.api, o.pod) || podphase.ReadyConditionStale(o.pod)
			p.api = o.pod
			if p.finished {
				break
			}
			synced := uint64(0)
			if changed {
				p.changed, synced = true, 1
				r.heap.set(p, now)
			}
			r.count(func(s *Stats) { s.Updates++; s.UpdatesSynced += synced })
		case opRemove:
			p := r.pods[o.uid]
			if p == nil {
				break
			}
			p.removed = true
			if p.finished {
				r.forget(p)
				break
			}
			// Killed as a deletion of the last object known would kill it;
			// without one, as a forced deletion.
			d := p.api.DeepCopy()
			if o.pod != nil && o.pod.DeletionTimestamp != nil {
				d.DeletionTimestamp, d.DeletionGracePeriodSeconds = o.pod.DeletionTimestamp, o.pod.DeletionGracePeriodSeconds
			}
			if d.DeletionTimestamp == nil {
				t := metav1.NewTime(now)
				zero := int64(0)
				d.DeletionTimestamp, d.DeletionGracePeriodSeconds = &t, &zero
			}
			p.api, p.changed = d, true
			r.heap.set(p, now)
		case opNotify:
			if p := r.pods[o.uid]; p != nil && !p.finished {
				p.notified = true
				r.heap.set(p, now)
			}
		}
		*o = op{}
	}
	r.mu.Lock()
	r.spare = ops[:0]
	r.mu.Unlock()
}

// forget drops a removed pod: its cached status, its IP, the runner's
// record of it.
func (r *Runner) forget(p *podEntry) {
	if p.hidx >= 0 {
		r.heap.remove(p)
	}
	r.releaseIP(p)
	r.cache.Forget(p.api.UID)
	delete(r.pods, p.api.UID)
	r.mu.Lock()
	delete(r.known, p.api.UID)
	r.mu.Unlock()
	r.count(func(s *Stats) { s.Removed++ })
}

func (r *Runner) releaseIP(p *podEntry) {
	if p.ip == "" {
		return
	}
	r.mu.Lock()
	p.ipPool.put(p.ip)
	r.mu.Unlock()
	p.ip = ""
}

// setHostIPs writes the node's addresses into st, and a host-network pod's
// pod IPs, as the kubelet's status generation does.
func (r *Runner) setHostIPs(pod *v1.Pod, st *v1.PodStatus) {
	if len(r.hostIPs) == 0 {
		return
	}
	st.HostIP, st.HostIPs = r.hostIPs[0].IP, r.hostIPs
	if pod.Spec.HostNetwork && st.PodIP == "" {
		st.PodIP, st.PodIPs = r.podIPs[0].IP, r.podIPs
	}
}

// klog names a pod in logs: namespace/name.
func klog(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

type errorString string

func (e errorString) Error() string { return string(e) }
