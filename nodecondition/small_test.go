package nodecondition_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

func TestPressureConditionRows(t *testing.T) {
	// 2.3 pressure table and 2.6 signal -> condition mapping.
	tests := []struct {
		id      string
		signal  nc.Signal
		typ     v1.NodeConditionType
		reason  string
		message string
		event   string
	}{
		{"2.3 memory", nc.SignalMemoryAvailable, v1.NodeMemoryPressure, nc.ReasonInsufficientMemory, "kubelet has insufficient memory available", "NodeHasInsufficientMemory"},
		{"2.3 disk", nc.SignalNodeFsAvailable, v1.NodeDiskPressure, nc.ReasonDiskPressure, "kubelet has disk pressure", "NodeHasDiskPressure"},
		{"2.3 disk inodes", nc.SignalImageFsInodesFree, v1.NodeDiskPressure, nc.ReasonDiskPressure, "kubelet has disk pressure", "NodeHasDiskPressure"},
		{"2.3 pid", nc.SignalPIDAvailable, v1.NodePIDPressure, nc.ReasonInsufficientPID, "kubelet has insufficient PID available", "NodeHasInsufficientPID"},
	}
	for _, tt := range tests {
		cfg := nc.DefaultKubeletOptions()
		cfg.Thresholds = []nc.Threshold{{Signal: tt.signal, Value: nc.ThresholdValue{Percentage: 0.5}}}
		k, err := nc.NewKubelet(noJitter(cfg))
		if err != nil {
			t.Fatal(err)
		}
		var s nc.Sample
		s.Set(tt.signal, 60, 100)
		k.Observe(t12, &s)
		k.Status(t12, nc.Health{})
		s.Set(tt.signal, 40, 100)
		p, _ := k.Observe(t12.Add(10*time.Second), &s)
		if tt.signal.Condition() != tt.typ || !cmp.Equal(p.Reported.Types(), []v1.NodeConditionType{tt.typ}) || k.Pressures() != p.Reported {
			t.Errorf("%s: %v maps to %v, reported %v", tt.id, tt.signal, tt.signal.Condition(), p.Reported.Types())
		}
		r, _ := k.Status(t12.Add(10*time.Second), nc.Health{})
		var got v1.NodeCondition
		for _, c := range r.Conditions {
			if c.Type == tt.typ {
				got = c
			}
		}
		if got.Status != v1.ConditionTrue || got.Reason != tt.reason || got.Message != tt.message || !cmp.Equal(r.Events, []string{tt.event}) {
			t.Errorf("%s: condition %+v events %v", tt.id, got, r.Events)
		}
		if ts := k.Thresholds(); len(ts) != 1 || ts[0].Signal != tt.signal {
			t.Errorf("%s: Thresholds() = %v", tt.id, ts)
		}
		if last, ok := k.LastReport(); !ok || !last.Equal(t12.Add(10*time.Second)) {
			t.Errorf("%s: LastReport = %v %v", tt.id, last, ok)
		}
	}
}

func TestSignalNames(t *testing.T) {
	for i := 0; i < nc.NumSignals; i++ {
		s := nc.Signal(i)
		back, ok := nc.ParseSignal(s.String())
		if !ok || back != s {
			t.Errorf("signal %d: %q does not parse back", i, s.String())
		}
	}
	if _, ok := nc.ParseSignal("memory.free"); ok {
		t.Error("unknown signal parsed")
	}
	if got := nc.Signal(42).String(); got != "Signal(42)" {
		t.Errorf("out-of-range signal renders %q", got)
	}
	if got := nc.Signal(nc.NumSignals).String(); got != "Signal(9)" {
		t.Errorf("the first signal past the last renders %q, want Signal(9)", got)
	}
	var s nc.Sample
	s.Set(nc.NumSignals, 1, 2)
	if s != (nc.Sample{}) {
		t.Errorf("Set of a signal that is none of the constants records nothing, got %+v", s)
	}
}

func TestTolerates(t *testing.T) {
	taint := v1.Taint{Key: "k", Value: "v", Effect: v1.TaintEffectNoExecute}
	tests := []struct {
		id   string
		tol  v1.Toleration
		want bool
	}{
		{"exists", v1.Toleration{Key: "k", Operator: v1.TolerationOpExists}, true},
		{"equal", v1.Toleration{Key: "k", Operator: v1.TolerationOpEqual, Value: "v"}, true},
		{"empty operator means equal", v1.Toleration{Key: "k", Value: "v"}, true},
		{"other value", v1.Toleration{Key: "k", Operator: v1.TolerationOpEqual, Value: "w"}, false},
		{"other effect", v1.Toleration{Key: "k", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}, false},
		{"wildcard", v1.Toleration{Operator: v1.TolerationOpExists}, true},
		{"empty key with equal", v1.Toleration{Operator: v1.TolerationOpEqual, Value: "v"}, false},
		{"other key", v1.Toleration{Key: "x", Operator: v1.TolerationOpExists}, false},
		{"comparison operator", v1.Toleration{Key: "k", Operator: "Gt", Value: "1"}, false},
	}
	for _, tt := range tests {
		if got := nc.Tolerates(&tt.tol, &taint); got != tt.want {
			t.Errorf("%s: Tolerates = %v, want %v", tt.id, got, tt.want)
		}
	}
	wildcard := v1.Toleration{Operator: v1.TolerationOpExists}
	if nc.Tolerates(nil, &taint) || nc.Tolerates(&wildcard, nil) {
		t.Error("a nil toleration or taint matches nothing (documented), not even the wildcard")
	}
}

func TestOptionValidation(t *testing.T) {
	bad := []struct {
		id   string
		edit func(*nc.KubeletOptions)
	}{
		{"unknown signal", func(c *nc.KubeletOptions) { c.Thresholds = []nc.Threshold{{Signal: 99}} }},
		{"percentage", func(c *nc.KubeletOptions) {
			c.Thresholds = []nc.Threshold{{Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Percentage: 2}}}
		}},
		{"negative quantity", func(c *nc.KubeletOptions) {
			c.Thresholds = []nc.Threshold{{Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Quantity: -1}}}
		}},
		{"reclaim percentage", func(c *nc.KubeletOptions) {
			c.Thresholds = []nc.Threshold{{Signal: nc.SignalMemoryAvailable, MinReclaim: nc.ThresholdValue{Percentage: -0.1}}}
		}},
		{"negative grace", func(c *nc.KubeletOptions) {
			c.Thresholds = []nc.Threshold{{Signal: nc.SignalMemoryAvailable, Soft: true, GracePeriod: -time.Second}}
		}},
		{"hard with grace", func(c *nc.KubeletOptions) {
			c.Thresholds = []nc.Threshold{{Signal: nc.SignalMemoryAvailable, GracePeriod: time.Second}}
		}},
		{"transition", func(c *nc.KubeletOptions) { c.PressureTransitionPeriod = -time.Second }},
		{"jitter", func(c *nc.KubeletOptions) { c.LoopJitter = 2 }},
		{"renew rounds to zero", func(c *nc.KubeletOptions) { c.LeaseDuration = 1; c.LeaseRenewFraction = 0.25 }},
		{"too many thresholds", func(c *nc.KubeletOptions) {
			c.Thresholds = make([]nc.Threshold, 65)
		}},
	}
	for _, tt := range bad {
		cfg := nc.DefaultKubeletOptions()
		tt.edit(&cfg)
		err := cfg.Validate()
		var ce *nc.OptionError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "nodecondition: invalid ") {
			t.Errorf("%s: err = %v, want a *OptionError", tt.id, err)
		}
		if _, err := nc.NewLeaseRenewer(withRand(cfg, fixedRand(0)), "n"); !errors.Is(err, nc.ErrInvalidOptions) {
			t.Errorf("%s: NewLeaseRenewer accepted it: %v", tt.id, err)
		}
	}
	if _, err := nc.NewLeaseRenewer(withRand(nc.DefaultKubeletOptions(), fixedRand(0)), ""); !errors.Is(err, nc.ErrInvalidInput) {
		t.Errorf("a lease without holder: %v", err)
	}
	if err := nc.DefaultOptions().Validate(); err != nil {
		t.Errorf("the defaults fit together: %v", err)
	}
}

func TestLeaseRenewerTime(t *testing.T) {
	r, _ := nc.NewLeaseRenewer(withRand(nc.DefaultKubeletOptions(), fixedRand(0)), "n")
	r.Failed(t12)
	r.Failed(t12.Add(time.Second))
	if r.Failures() != 2 {
		t.Errorf("Failures = %d", r.Failures())
	}
	if _, _, err := r.Renewed(t12); !errors.Is(err, nc.ErrTimeWentBackwards) {
		t.Errorf("Renewed backwards: %v", err)
	}
	if _, err := r.Failed(t12); !errors.Is(err, nc.ErrTimeWentBackwards) {
		t.Errorf("Failed backwards: %v", err)
	}
	if _, _, err := r.Renewed(t12.Add(2 * time.Second)); err != nil || r.Failures() != 0 {
		t.Errorf("a renewal resets the failures: %v %d", err, r.Failures())
	}
	if nc.LeaseRetryDelay(0) != 0 {
		t.Error("LeaseRetryDelay(0) != 0")
	}
}

func TestControllerAccessors(t *testing.T) {
	cfg := nc.DefaultControllerOptions()
	c, _ := nc.NewController(cfg)
	if c.Options() != cfg {
		t.Error("Options() differs")
	}
	if _, ok := c.NextTaint(); ok {
		t.Error("an empty controller has nothing to taint")
	}
	c.UpsertNode(t12, node("bad", t12, nil, cond(v1.NodeReady, v1.ConditionFalse, t12, t12)))
	c.UpsertNode(t12, node("ok", t12, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.Monitor(t12, nil)
	if at, ok := c.NextTaint(); !ok || !at.Equal(t12) || !c.Queued("bad") || c.Queued("ok") || c.Queued("ghost") {
		t.Errorf("NextTaint = %v %v", at, ok)
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{nc.ZoneInitial.String(), "Initial"},
		{nc.ZoneState(9).String(), "ZoneState(?)"},
		{nc.EvictionNone.String(), "none"},
		{nc.NotSent.String(), "not sent"},
		{nc.ThresholdValue{Percentage: 0.05}.String(), "5%"},
		{nc.ThresholdValue{Quantity: 100 << 20}.String(), "100Mi"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestEvents(t *testing.T) {
	// 3.4 and 3.7: the event texts.
	pod := nc.PodKey{Namespace: "ns", Name: "web"}
	for _, tc := range []struct {
		d       nc.EvictionDecision
		message string
		ok      bool
	}{
		{nc.EvictionDecision{Pod: pod, Action: nc.EvictionNow}, "Marking for deletion Pod ns/web", true},
		{nc.EvictionDecision{Pod: pod, Action: nc.EvictionCancel}, "Cancelling deletion of Pod ns/web", true},
		{nc.EvictionDecision{Pod: pod, Action: nc.EvictionSchedule}, "", false},
	} {
		reason, msg, ok := tc.d.Event()
		if ok != tc.ok || msg != tc.message || (ok && reason != nc.ReasonTaintManagerEviction) {
			t.Errorf("%v: event %q %q %v", tc.d.Action, reason, msg, ok)
		}
	}
	c, _ := nc.NewController(healthy())
	c.UpsertNode(t12, node("n", t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
	c.Monitor(t12, nil)
	p, _ := c.Monitor(t12.Add(time.Minute), nil)
	if diff := cmp.Diff([]nc.NodeEvent{{Node: "n", Reason: "NodeNotReady", Message: "Node n status is now: NodeNotReady"}}, p.Events); diff != "" {
		t.Errorf("3.4 node event mismatch (-want +got):\n%s", diff)
	}
}

func TestMergeDefaultHardThresholds(t *testing.T) {
	// 1: mergeDefaultEvictionSettings keeps the defaults of the keys left out.
	own := []nc.Threshold{{Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Quantity: 1 << 30}}}
	got := nc.MergeDefaultHardThresholds(own)
	want := append(append([]nc.Threshold(nil), own...), nc.DefaultHardThresholds()[1:]...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestOptionRangeEdges(t *testing.T) {
	// Each documented range at its edges: a value the range includes is
	// accepted, the first one it excludes is refused with a *OptionError that
	// names the field and carries the value as given.
	tests := []struct {
		id           string
		edit         func(*nc.Options)
		field, value string // the error's Field and Value; "" when accepted
		reason       string
	}{
		{"grace equal to the renew interval", func(o *nc.Options) { o.Controller.GracePeriod = 10 * time.Second },
			"Controller.GracePeriod", "10s", "a grace no longer than the 10 s lease renew interval marks a healthy node Unknown between two renewals"},
		{"grace just over the renew interval", func(o *nc.Options) { o.Controller.GracePeriod = 10*time.Second + time.Millisecond },
			"", "", "longer than the renew interval is enough"},
		{"no transition period", func(o *nc.Options) { o.Kubelet.PressureTransitionPeriod = 0 },
			"", "", "only a negative pressure-transition period is refused; 0 clears a condition at the first pass without observation"},
		{"renew fraction 0", func(o *nc.Options) { o.Kubelet.LeaseRenewFraction = 0 },
			"Kubelet.LeaseRenewFraction", "0", "the renew fraction must be in (0, 1)"},
		{"renew fraction 1", func(o *nc.Options) { o.Kubelet.LeaseRenewFraction = 1 },
			"Kubelet.LeaseRenewFraction", "1", "the renew fraction must be in (0, 1)"},
		{"renew fraction 1.5", func(o *nc.Options) { o.Kubelet.LeaseRenewFraction = 1.5 },
			"Kubelet.LeaseRenewFraction", "1.5", "the error carries the refused value as given"},
		{"no loop jitter", func(o *nc.Options) { o.Kubelet.LoopJitter = 0 },
			"", "", "LoopJitter 0 is documented as no jitter"},
		{"loop jitter 1", func(o *nc.Options) { o.Kubelet.LoopJitter = 1 },
			"", "", "the jitter factor may be up to 1"},
		{"eviction rate 0", func(o *nc.Options) { o.Controller.EvictionRate, o.Controller.SecondaryEvictionRate = 0, 0 },
			"", "", "3.6: a rate of 0 taints nothing (the secondary rate small zones use)"},
		{"eviction rate NaN", func(o *nc.Options) { o.Controller.EvictionRate = math.NaN() },
			"Controller.EvictionRate", "NaN", "a rate must be a number >= 0"},
		{"unhealthy zone threshold 0", func(o *nc.Options) { o.Controller.UnhealthyZoneThreshold = 0 },
			"", "", "the not-ready share may be anywhere in [0, 1]"},
		{"unhealthy zone threshold 1", func(o *nc.Options) { o.Controller.UnhealthyZoneThreshold = 1 },
			"", "", "the not-ready share may be anywhere in [0, 1]"},
		{"large cluster threshold 0", func(o *nc.Options) { o.Controller.LargeClusterThreshold = 0 },
			"", "", "only a negative size is refused: with 0 every non-empty zone is large"},
		{"64 thresholds", func(o *nc.Options) { o.Kubelet.Thresholds = make([]nc.Threshold, 64) },
			"", "", "EvictionPass.Met has a bit for each of up to 64 thresholds"},
		{"signal past the last", func(o *nc.Options) { o.Kubelet.Thresholds = []nc.Threshold{{Signal: nc.NumSignals}} },
			"Kubelet.Thresholds", "Signal(9)", "the signals are 0 to NumSignals-1"},
		{"percentage 1", func(o *nc.Options) {
			o.Kubelet.Thresholds = []nc.Threshold{{Signal: nc.SignalNodeFsAvailable, Value: nc.ThresholdValue{Percentage: 1}}}
		}, "", "", "a percentage is a fraction in [0, 1]"},
		{"minimum reclaim percentage 1", func(o *nc.Options) {
			o.Kubelet.Thresholds = []nc.Threshold{{Signal: nc.SignalNodeFsAvailable, Value: nc.ThresholdValue{Percentage: 0.1}, MinReclaim: nc.ThresholdValue{Percentage: 1}}}
		}, "", "", "a minimum-reclaim percentage is a fraction in [0, 1]"},
		{"minimum reclaim percentage 1.5", func(o *nc.Options) {
			o.Kubelet.Thresholds = []nc.Threshold{{Signal: nc.SignalNodeFsAvailable, Value: nc.ThresholdValue{Percentage: 0.1}, MinReclaim: nc.ThresholdValue{Percentage: 1.5}}}
		}, "Kubelet.Thresholds", "nodefs.available<10%", "a minimum-reclaim percentage above 1 is refused"},
		{"minimum reclaim percentage NaN", func(o *nc.Options) {
			o.Kubelet.Thresholds = []nc.Threshold{{Signal: nc.SignalNodeFsAvailable, Value: nc.ThresholdValue{Percentage: 0.1}, MinReclaim: nc.ThresholdValue{Percentage: math.NaN()}}}
		}, "Kubelet.Thresholds", "nodefs.available<10%", "a minimum-reclaim percentage that is not a number is refused"},
	}
	for _, tt := range tests {
		o := nc.DefaultOptions()
		tt.edit(&o)
		err := o.Validate()
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: Validate = %v, want accepted (%s)", tt.id, err, tt.reason)
			}
			continue
		}
		var oe *nc.OptionError
		if !errors.As(err, &oe) || !errors.Is(err, nc.ErrInvalidOptions) || oe.Field != tt.field || oe.Value != tt.value {
			t.Errorf("%s: Validate = %v, want a *OptionError on %s with value %s (%s)", tt.id, err, tt.field, tt.value, tt.reason)
		}
	}
}

func TestOptionErrorUnwrap(t *testing.T) {
	// Unwrap returns ErrInvalidOptions and, only when set, Err; a nil
	// *OptionError still unwraps to ErrInvalidOptions.
	var none *nc.OptionError
	for _, tc := range []struct {
		id   string
		err  *nc.OptionError
		want []error
	}{
		{"no underlying error", &nc.OptionError{Field: "GracePeriod", Value: "0s", Reason: "must be positive"}, []error{nc.ErrInvalidOptions}},
		{"nil", none, []error{nc.ErrInvalidOptions}},
	} {
		got := tc.err.Unwrap()
		if len(got) != len(tc.want) || got[0] != tc.want[0] {
			t.Errorf("%s: Unwrap = %v, want %v", tc.id, got, tc.want)
		}
	}
}
