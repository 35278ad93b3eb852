package nodecondition

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Lease renewal constants of the kubelet's lease controller.
const (
	// LeaseUpdateRetries is how many immediate UPDATE tries one renewal makes.
	LeaseUpdateRetries = 5
	// LeaseFirstRetryDelay is the first wait after a failed ensure (GET/CREATE).
	LeaseFirstRetryDelay = 200 * time.Millisecond
	// LeaseMaxRetryDelay caps the doubling wait between ensure retries.
	LeaseMaxRetryDelay = 7 * time.Second
	// LeaseNamespace holds the node leases.
	LeaseNamespace = "kube-node-lease"
)

// LeaseRetryDelay returns the wait after the n-th consecutive failed ensure
// (n >= 1): 200 ms, doubling, at most 7 s. It returns 0 for n < 1.
func LeaseRetryDelay(n int) time.Duration {
	if n < 1 {
		return 0
	}
	d := LeaseFirstRetryDelay
	for i := 1; i < n && d < LeaseMaxRetryDelay; i++ {
		d *= 2
	}
	return min(d, LeaseMaxRetryDelay)
}

// LeaseRenewer is the kubelet's lease schedule as a value: after a successful
// renewal the next one is due a renew interval (10 s, plus loop jitter) later;
// after a failure the ensure step retries with a doubling back-off. It holds
// no clock and is not safe for concurrent use. Use NewLeaseRenewer: Renewed
// and Failed of the zero value return ErrNotInitialized.
type LeaseRenewer struct {
	holder   string
	duration time.Duration
	interval time.Duration
	jitter   float64
	rnd      Rand
	failures int
	last     time.Time
}

// NewLeaseRenewer returns the renew schedule of node holder under opts:
// opts.Rand supplies the loop jitter (nil: the process-wide source; set
// opts.LoopJitter to 0 for none). It returns a *OptionError
// (ErrInvalidOptions) when opts do not validate and a *InputError
// (ErrInvalidInput) for an empty holder.
func NewLeaseRenewer(opts KubeletOptions, holder string) (*LeaseRenewer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if holder == "" {
		return nil, &InputError{Op: "NewLeaseRenewer", Value: `""`, Reason: "a lease needs a holder"}
	}
	return &LeaseRenewer{holder: holder, duration: opts.LeaseDuration, interval: opts.LeaseRenewInterval(), jitter: opts.LoopJitter, rnd: randOrGlobal(opts.Rand)}, nil
}

// Renewed records a successful renewal at now. It returns the spec the lease
// now carries and when the next renewal is due.
// A zero LeaseRenewer returns ErrNotInitialized.
func (r *LeaseRenewer) Renewed(now time.Time) (coordinationv1.LeaseSpec, time.Time, error) {
	if r == nil || r.rnd == nil {
		return coordinationv1.LeaseSpec{}, time.Time{}, notInit("LeaseRenewer", "Renewed")
	}
	if now.Before(r.last) {
		return coordinationv1.LeaseSpec{}, time.Time{}, timeErr("Renewed", now, r.last)
	}
	r.last = now
	r.failures = 0
	secs := int32(r.duration / time.Second)
	holder := r.holder
	renew := metav1.NewMicroTime(now)
	spec := coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &renew}
	next := r.interval
	if r.jitter > 0 {
		u := r.rnd.Float64()
		if u >= 0 && u < 1 {
			next += time.Duration(u * r.jitter * float64(r.interval))
		}
	}
	return spec, now.Add(next), nil
}

// Failed records that a renewal, with its update retries, failed at now and
// returns when the ensure step tries again.
// A zero LeaseRenewer returns ErrNotInitialized.
func (r *LeaseRenewer) Failed(now time.Time) (time.Time, error) {
	if r == nil || r.rnd == nil {
		return time.Time{}, notInit("LeaseRenewer", "Failed")
	}
	if now.Before(r.last) {
		return time.Time{}, timeErr("Failed", now, r.last)
	}
	r.last = now
	r.failures++
	return now.Add(LeaseRetryDelay(r.failures)), nil
}

// Failures returns the number of consecutive failed renewals.
func (r *LeaseRenewer) Failures() int {
	if r == nil {
		return 0
	}
	return r.failures
}
