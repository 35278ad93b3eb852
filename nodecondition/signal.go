package nodecondition

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Signal is an eviction signal the kubelet's eviction manager observes.
type Signal uint8

// The eviction signals, in the kubelet's naming.
const (
	SignalMemoryAvailable            Signal = iota // memory.available
	SignalAllocatableMemoryAvailable               // allocatableMemory.available
	SignalNodeFsAvailable                          // nodefs.available
	SignalNodeFsInodesFree                         // nodefs.inodesFree
	SignalImageFsAvailable                         // imagefs.available
	SignalImageFsInodesFree                        // imagefs.inodesFree
	SignalContainerFsAvailable                     // containerfs.available
	SignalContainerFsInodesFree                    // containerfs.inodesFree
	SignalPIDAvailable                             // pid.available
)

// NumSignals is the number of eviction signals; Sample holds one observation per signal.
const NumSignals = 9

var signalNames = [NumSignals]string{
	"memory.available",
	"allocatableMemory.available",
	"nodefs.available",
	"nodefs.inodesFree",
	"imagefs.available",
	"imagefs.inodesFree",
	"containerfs.available",
	"containerfs.inodesFree",
	"pid.available",
}

// String returns the kubelet's name for the signal, for example "memory.available".
func (s Signal) String() string {
	if int(s) < NumSignals {
		return signalNames[s]
	}
	return "Signal(" + strconv.Itoa(int(s)) + ")"
}

// Condition returns the node condition the signal drives: MemoryPressure for the
// memory signals, PIDPressure for pid.available and DiskPressure for the rest.
func (s Signal) Condition() v1.NodeConditionType {
	switch s {
	case SignalMemoryAvailable, SignalAllocatableMemoryAvailable:
		return v1.NodeMemoryPressure
	case SignalPIDAvailable:
		return v1.NodePIDPressure
	default:
		return v1.NodeDiskPressure
	}
}

func (s Signal) pressure() pressureKind {
	switch s.Condition() {
	case v1.NodeMemoryPressure:
		return memoryPressure
	case v1.NodePIDPressure:
		return pidPressure
	default:
		return diskPressure
	}
}

// ParseSignal returns the signal with the given kubelet name.
func ParseSignal(name string) (Signal, bool) {
	for i, n := range signalNames {
		if n == name {
			return Signal(i), true
		}
	}
	return 0, false
}

// Observation is what the eviction manager knows about one signal in a sample:
// the available amount and the capacity that percentages are taken of
// (bytes, inodes or process IDs). A zero Observation (Known false) is a signal
// the stats did not report; no threshold on it is met.
type Observation struct {
	Available int64 // the available amount
	Capacity  int64 // what percentages are taken of
	Known     bool  // whether the stats reported the signal
}

// Sample is one observation of every signal, as a summary-stats read gives it.
type Sample struct {
	Signals [NumSignals]Observation // indexed by Signal
}

// Set records the available amount and capacity of one signal.
func (s *Sample) Set(sig Signal, available, capacity int64) {
	if int(sig) < NumSignals {
		s.Signals[sig] = Observation{Available: available, Capacity: capacity, Known: true}
	}
}

// HealthySample is the sample of a machine with plenty of every resource: 12 of 16 GiB of
// memory, 70 of 100 GiB on the node and image file systems, 5.8 of 6.5 million inodes and 4.19
// of 4.19 million process IDs available, far from every default eviction threshold. It is what
// a node without eviction signals of its own (a simulated or virtual node) observes.
func HealthySample() Sample {
	var s Sample
	s.Set(SignalMemoryAvailable, 12<<30, 16<<30)
	s.Set(SignalNodeFsAvailable, 70<<30, 100<<30)
	s.Set(SignalNodeFsInodesFree, 5_800_000, 6_553_600)
	s.Set(SignalImageFsAvailable, 70<<30, 100<<30)
	s.Set(SignalPIDAvailable, 4_190_000, 4_194_304)
	return s
}

// ThresholdValue is a threshold amount: an absolute quantity, or a fraction of
// the signal's capacity when Percentage is non-zero (0.1 is "10%").
type ThresholdValue struct {
	Quantity   int64   // bytes, inodes or process IDs; used when Percentage is 0
	Percentage float64 // a fraction of capacity in [0, 1]
}

// Of returns the amount the value stands for, given the signal's capacity.
func (v ThresholdValue) Of(capacity int64) int64 {
	if v.Percentage != 0 {
		return int64(float64(capacity) * v.Percentage)
	}
	return v.Quantity
}

// String renders the value as the kubelet flags write it ("100Mi", "10%").
func (v ThresholdValue) String() string {
	if v.Percentage != 0 {
		return strconv.FormatFloat(v.Percentage*100, 'f', -1, 64) + "%"
	}
	return resource.NewQuantity(v.Quantity, resource.BinarySI).String()
}

// Threshold is one eviction threshold: met when the signal's available amount
// is strictly less than Value. A soft threshold drives eviction only after it
// has been met continuously for GracePeriod; a hard one has no grace.
type Threshold struct {
	Signal      Signal         // the signal it watches
	Value       ThresholdValue // met when available < Value
	Soft        bool           // soft thresholds need a grace period
	GracePeriod time.Duration  // how long a soft threshold must hold before it evicts
	MinReclaim  ThresholdValue // the extra amount to reclaim once it evicted
}

// String renders the threshold in flag form, for example "memory.available<100Mi".
func (t Threshold) String() string {
	s := t.Signal.String() + "<" + t.Value.String()
	if t.Soft {
		s += " (soft, grace " + t.GracePeriod.String() + ")"
	}
	return s
}

// DefaultHardThresholds returns the kubelet's Linux evictionHard defaults:
// memory.available<100Mi, nodefs.available<10%, nodefs.inodesFree<5%,
// imagefs.available<15%, imagefs.inodesFree<5%.
func DefaultHardThresholds() []Threshold {
	return []Threshold{
		{Signal: SignalMemoryAvailable, Value: ThresholdValue{Quantity: 100 << 20}},
		{Signal: SignalNodeFsAvailable, Value: ThresholdValue{Percentage: 0.10}},
		{Signal: SignalNodeFsInodesFree, Value: ThresholdValue{Percentage: 0.05}},
		{Signal: SignalImageFsAvailable, Value: ThresholdValue{Percentage: 0.15}},
		{Signal: SignalImageFsInodesFree, Value: ThresholdValue{Percentage: 0.05}},
	}
}

// MergeDefaultHardThresholds returns ts plus the default hard threshold of
// every signal ts has no hard threshold for: the kubelet's
// mergeDefaultEvictionSettings (off by default, where an evictionHard that
// is set replaces the defaults entirely). ts is not modified.
func MergeDefaultHardThresholds(ts []Threshold) []Threshold {
	out := append([]Threshold(nil), ts...)
	for _, d := range DefaultHardThresholds() {
		found := false
		for _, t := range ts {
			if !t.Soft && t.Signal == d.Signal {
				found = true
			}
		}
		if !found {
			out = append(out, d)
		}
	}
	return out
}

// ParseThresholdList splits a flag value such as
// "memory.available<100Mi,nodefs.available<10%" into signal -> value pairs,
// the form ParseThresholds takes. Only the "<" operator exists.
func ParseThresholdList(s string) (map[string]string, error) {
	return splitPairs(s, "<", `want "signal<value"`, true)
}

// ParseGraceList splits a flag value such as "memory.available=1m30s" into
// signal -> duration pairs (also used for minimum-reclaim lists).
func ParseGraceList(s string) (map[string]string, error) {
	return splitPairs(s, "=", `want "signal=value"`, false)
}

// splitPairs splits a comma-separated "name<sep>value" list; want is the
// reason given for a statement without sep, and noDup refuses a name given
// twice (otherwise the last value wins).
func splitPairs(s, sep, want string, noDup bool) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, stmt := range strings.Split(s, ",") {
		stmt = strings.TrimSpace(stmt)
		name, val, ok := strings.Cut(stmt, sep)
		if !ok {
			return nil, &ThresholdError{Input: stmt, Reason: want}
		}
		if _, dup := out[name]; dup && noDup {
			return nil, &ThresholdError{Input: stmt, Reason: "signal given twice"}
		}
		out[name] = val
	}
	return out, nil
}

// ParseThresholds builds thresholds from the kubelet's four eviction settings
// (evictionHard, evictionSoft, evictionSoftGracePeriod, evictionMinimumReclaim),
// each a signal -> value map. Values are quantities ("100Mi") or percentages
// ("10%"); "0%" and "100%" disable a threshold as the kubelet does. A soft
// threshold needs a non-negative grace period; a minimum reclaim needs a
// threshold on its signal, and as a percentage it must be positive ("0%" is
// refused, as the kubelet refuses it). The result is sorted: hard before soft,
// then by signal.
func ParseThresholds(hard, soft, softGrace, minReclaim map[string]string) ([]Threshold, error) {
	var out []Threshold
	parse := func(m map[string]string, isSoft bool) error {
		for name, val := range m {
			sig, ok := ParseSignal(name)
			if !ok {
				return &ThresholdError{Input: name + "<" + val, Reason: "unknown signal " + strconv.Quote(name)}
			}
			v, disabled, err := parseThresholdValue(name, val, false)
			if err != nil {
				return err
			}
			if disabled {
				continue
			}
			t := Threshold{Signal: sig, Value: v, Soft: isSoft}
			if isSoft {
				g, ok := softGrace[name]
				if !ok {
					return &ThresholdError{Input: name + "<" + val, Reason: "soft threshold has no grace period"}
				}
				d, err := time.ParseDuration(g)
				if err != nil {
					return &ThresholdError{Input: name + "=" + g, Reason: "unparseable grace period"}
				}
				if d < 0 {
					return &ThresholdError{Input: name + "=" + g, Reason: "negative grace period"}
				}
				t.GracePeriod = d
			}
			if r, ok := minReclaim[name]; ok {
				mv, _, err := parseThresholdValue(name, r, true)
				if err != nil {
					return err
				}
				t.MinReclaim = mv
			}
			out = append(out, t)
		}
		return nil
	}
	if err := parse(hard, false); err != nil {
		return nil, err
	}
	if err := parse(soft, true); err != nil {
		return nil, err
	}
	for name := range softGrace {
		if _, ok := soft[name]; !ok {
			return nil, &ThresholdError{Input: name + "=" + softGrace[name], Reason: "grace period for a signal with no soft threshold"}
		}
	}
	for name := range minReclaim {
		_, h := hard[name]
		_, s := soft[name]
		if !h && !s {
			return nil, &ThresholdError{Input: name + "=" + minReclaim[name], Reason: "minimum reclaim for a signal with no threshold"}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Soft != out[j].Soft {
			return !out[i].Soft
		}
		return out[i].Signal < out[j].Signal
	})
	return out, nil
}

// parseThresholdValue parses "100Mi" or "10%". For a threshold, "0%" and "100%"
// mean disabled; a quantity must be positive. A minimum reclaim quantity may be
// zero, but a minimum reclaim percentage must be positive, as the kubelet's
// parsing of evictionMinimumReclaim requires.
func parseThresholdValue(name, val string, reclaim bool) (v ThresholdValue, disabled bool, err error) {
	input := name + "<" + val
	if reclaim {
		input = name + "=" + val
	}
	if strings.HasSuffix(val, "%") {
		if !reclaim && (val == "0%" || val == "100%") {
			return ThresholdValue{}, true, nil
		}
		p, perr := strconv.ParseFloat(strings.TrimSuffix(val, "%"), 64)
		if perr != nil || math.IsNaN(p) {
			return v, false, &ThresholdError{Input: input, Reason: "unparseable percentage"}
		}
		if p < 0 || p > 100 {
			return v, false, &ThresholdError{Input: input, Reason: fmt.Sprintf("percentage %g outside [0, 100]", p)}
		}
		if reclaim && p == 0 {
			return v, false, &ThresholdError{Input: input, Reason: "a percentage minimum reclaim must be positive"}
		}
		return ThresholdValue{Percentage: p / 100}, false, nil
	}
	q, qerr := resource.ParseQuantity(val)
	if qerr != nil {
		return v, false, &ThresholdError{Input: input, Reason: "unparseable quantity"}
	}
	if q.Sign() < 0 || (!reclaim && q.IsZero()) {
		return v, false, &ThresholdError{Input: input, Reason: "quantity must be positive"}
	}
	n, ok := q.AsInt64()
	if !ok {
		return v, false, &ThresholdError{Input: input, Reason: "quantity out of range"}
	}
	return ThresholdValue{Quantity: n}, false, nil
}

// validateThresholds checks thresholds given as values rather than parsed.
func validateThresholds(ts []Threshold) error {
	if len(ts) > 64 {
		return &OptionError{Field: "Thresholds", Value: strconv.Itoa(len(ts)), Reason: "at most 64 thresholds"}
	}
	for _, t := range ts {
		switch {
		case int(t.Signal) >= NumSignals:
			return &OptionError{Field: "Thresholds", Value: t.Signal.String(), Reason: "unknown signal"}
		case t.Value.Percentage < 0 || t.Value.Percentage > 1 || math.IsNaN(t.Value.Percentage):
			return &OptionError{Field: "Thresholds", Value: t.String(), Reason: "percentage outside [0, 1]"}
		case t.Value.Quantity < 0 || t.MinReclaim.Quantity < 0:
			return &OptionError{Field: "Thresholds", Value: t.String(), Reason: "negative quantity"}
		case t.MinReclaim.Percentage < 0 || t.MinReclaim.Percentage > 1 || math.IsNaN(t.MinReclaim.Percentage):
			return &OptionError{Field: "Thresholds", Value: t.String(), Reason: "minimum reclaim percentage outside [0, 1]"}
		case t.GracePeriod < 0:
			return &OptionError{Field: "Thresholds", Value: t.String(), Reason: "negative grace period"}
		case !t.Soft && t.GracePeriod != 0:
			return &OptionError{Field: "Thresholds", Value: t.String(), Reason: "a hard threshold has no grace period"}
		}
	}
	return nil
}
