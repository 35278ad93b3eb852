package nodecondition

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

type pressureKind uint8

const (
	memoryPressure pressureKind = iota
	diskPressure
	pidPressure
	numPressure
)

var pressureTypes = [numPressure]v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure}

// Reasons the kubelet writes on a pod it evicts: the pod's status reason and
// the reason of its DisruptionTarget condition.
const (
	ReasonEvicted              = "Evicted"
	ReasonTerminationByKubelet = "TerminationByKubelet"
)

// HardEvictionPodGracePeriod is the grace period, in seconds, the kubelet gives
// a pod it evicts for a hard threshold (immediateEvictionGracePeriodSeconds).
const HardEvictionPodGracePeriod int64 = 1

// EvictionPass is the outcome of one eviction-manager pass over a Sample.
type EvictionPass struct {
	// Met has bit i set when Thresholds()[i] is met in this pass, counting
	// the minimum-reclaim hysteresis of thresholds that already drove eviction.
	Met uint64
	// Observed holds the pressure conditions mapped from Met in this pass.
	Observed Pressures
	// Reported holds the pressure conditions the kubelet reports: those
	// observed less than the pressure-transition period ago.
	Reported Pressures
	// Evict is the index of the threshold that drives an eviction in this
	// pass, or -1. At most one pod is evicted per pass.
	Evict int
	// PodGracePeriod is the grace, in seconds, for the evicted pod: 1 for a
	// hard threshold, the configured maximum for a soft one (the kubelet lowers
	// it further to the pod's terminationGracePeriodSeconds).
	PodGracePeriod int64
}

// Pressures is a set of the three pressure conditions.
type Pressures struct {
	Memory, Disk, PID bool // MemoryPressure, DiskPressure, PIDPressure
}

func (p *Pressures) set(k pressureKind) {
	switch k {
	case memoryPressure:
		p.Memory = true
	case diskPressure:
		p.Disk = true
	case pidPressure:
		p.PID = true
	}
}

func (p Pressures) has(k pressureKind) bool {
	switch k {
	case memoryPressure:
		return p.Memory
	case diskPressure:
		return p.Disk
	default:
		return p.PID
	}
}

// Types lists the condition types in the set, in kubelet order (Memory, Disk, PID).
func (p Pressures) Types() []v1.NodeConditionType {
	var out []v1.NodeConditionType
	for k := pressureKind(0); k < numPressure; k++ {
		if p.has(k) {
			out = append(out, pressureTypes[k])
		}
	}
	return out
}

// pressureTracker is the eviction manager's memory between passes: when each
// threshold was first met (its grace timer), which ones drove an eviction
// (for the minimum-reclaim hysteresis) and when each condition was last observed.
type pressureTracker struct {
	thresholds  []Threshold
	transition  time.Duration
	maxPodGrace int64
	firstMet    []time.Time // zero when not met
	acted       uint64
	lastObs     [numPressure]time.Time // zero when never observed
	current     Pressures              // reported by the last pass
	last        time.Time
}

func newPressureTracker(ts []Threshold, transition time.Duration, maxPodGrace int64) pressureTracker {
	return pressureTracker{thresholds: ts, transition: transition, maxPodGrace: maxPodGrace, firstMet: make([]time.Time, len(ts))}
}

// observe runs one synchronize pass. It allocates nothing.
func (p *pressureTracker) observe(now time.Time, s *Sample) EvictionPass {
	out := EvictionPass{Evict: -1}
	for i := range p.thresholds {
		t := &p.thresholds[i]
		o := s.Signals[t.Signal]
		met := false
		if o.Known {
			limit := t.Value.Of(o.Capacity)
			if p.acted&(1<<i) != 0 {
				limit += t.MinReclaim.Of(o.Capacity)
			}
			met = limit > o.Available
		}
		if !met {
			p.firstMet[i] = time.Time{}
			p.acted &^= 1 << i
			continue
		}
		out.Met |= 1 << i
		if p.firstMet[i].IsZero() {
			p.firstMet[i] = now
		}
		k := t.Signal.pressure()
		out.Observed.set(k)
		p.lastObs[k] = now
	}
	for k := pressureKind(0); k < numPressure; k++ {
		if !p.lastObs[k].IsZero() && now.Sub(p.lastObs[k]) < p.transition {
			out.Reported.set(k)
		}
	}
	// Memory thresholds go first, then the configured order.
	best := -1
	for i := range p.thresholds {
		if out.Met&(1<<i) == 0 || now.Sub(p.firstMet[i]) < p.thresholds[i].GracePeriod {
			continue
		}
		if best < 0 || (p.thresholds[i].Signal.pressure() == memoryPressure && p.thresholds[best].Signal.pressure() != memoryPressure) {
			best = i
		}
	}
	if best >= 0 {
		out.Evict = best
		p.acted |= 1 << best
		if p.thresholds[best].Soft {
			out.PodGracePeriod = p.maxPodGrace
		} else {
			out.PodGracePeriod = HardEvictionPodGracePeriod
		}
	}
	p.current = out.Reported
	p.last = now
	return out
}
