package nodecondition_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

// fixedRand returns the same draw every time.
type fixedRand float64

func (f fixedRand) Float64() float64 { return float64(f) }

// withRand gives the options a Rand.
func withRand(o nc.KubeletOptions, r nc.Rand) nc.KubeletOptions {
	o.Rand = r
	return o
}

// noJitter gives the options a Rand that draws the middle of the report
// jitter's range, so the one-time jitter is 0.
func noJitter(o nc.KubeletOptions) nc.KubeletOptions { return withRand(o, fixedRand(0.5)) }

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

func memSample(avail int64) *nc.Sample {
	var s nc.Sample
	s.Set(nc.SignalMemoryAvailable, avail, 10*gi)
	return &s
}

func TestKubeletMemoryPressureCase44(t *testing.T) {
	ts, err := nc.ParseThresholds(
		map[string]string{"memory.available": "1Gi"},
		map[string]string{"memory.available": "2Gi"},
		map[string]string{"memory.available": "2m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nc.DefaultKubeletOptions()
	cfg.Thresholds = ts
	cfg.MaxPodGracePeriod = 5
	k, err := nc.NewKubelet(noJitter(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t0 := t12
	type want struct {
		pressure  bool
		evict     bool
		podGrace  int64
		admitBE   bool
		admitBurs bool
	}
	steps := []struct {
		at     time.Duration
		avail  int64
		want   want
		reason string
	}{
		{0, 2 * gi, want{false, false, 0, true, true}, "2Gi is not below 2Gi: no pressure"},
		{1 * time.Minute, 1500 * mi, want{true, false, 0, false, true}, "soft threshold met: pressure at the first observation, no kill within the 2 m grace"},
		{4 * time.Minute, 1500 * mi, want{true, true, 5, false, true}, "soft threshold met for 3 m >= 2 m: kill with the max pod grace 5"},
		{24 * time.Minute, 3 * gi, want{false, false, 0, true, true}, "20 m since the last observation: no pressure"},
		{25 * time.Minute, 500 * mi, want{true, true, 1, false, true}, "hard threshold: kill with grace 1, BestEffort rejected, Burstable admitted"},
		{26 * time.Minute, 2 * gi, want{true, false, 0, false, true}, "inside the 5 m transition window: still pressure, no kill"},
		{31 * time.Minute, 2 * gi, want{false, false, 0, true, true}, "5 m with no observation: pressure gone, all admitted"},
	}
	for i, s := range steps {
		p, err := k.Observe(t0.Add(s.at), memSample(s.avail))
		if err != nil {
			t.Fatal(err)
		}
		got := want{pressure: p.Reported.Memory, evict: p.Evict >= 0, podGrace: p.PodGracePeriod,
			admitBE:   nc.Admit(p.Reported, v1.PodQOSBestEffort, nil, false).Admit,
			admitBurs: nc.Admit(p.Reported, v1.PodQOSBurstable, nil, false).Admit}
		if got != s.want {
			t.Errorf("case 44 step %d (+%v): got %+v, want %+v (%s)", i, s.at, got, s.want, s.reason)
		}
	}
}

func TestKubeletConditionRules(t *testing.T) {
	t0 := t12
	cfg := nc.DefaultKubeletOptions()
	k, err := nc.NewKubelet(withRand(cfg, fixedRand(0.5)))
	if err != nil {
		t.Fatal(err)
	}
	status := func(at time.Duration, h nc.Health) nc.Report {
		t.Helper()
		r, err := k.Status(t0.Add(at), h)
		if err != nil {
			t.Fatal(err)
		}
		r.Conditions = append([]v1.NodeCondition(nil), r.Conditions...)
		r.Events = append([]string(nil), r.Events...)
		return r
	}
	byType := func(r nc.Report, typ v1.NodeConditionType) v1.NodeCondition {
		for _, c := range r.Conditions {
			if c.Type == typ {
				return c
			}
		}
		t.Fatalf("no %s condition", typ)
		return v1.NodeCondition{}
	}

	// 2.3: the first computation creates every condition, in setter order, with no event.
	r := status(0, nc.Health{})
	var types []v1.NodeConditionType
	for _, c := range r.Conditions {
		types = append(types, c.Type)
	}
	if diff := cmp.Diff([]v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure, v1.NodeReady}, types); diff != "" {
		t.Errorf("2.3 order: mismatch (-want +got):\n%s", diff)
	}
	if got := byType(r, v1.NodeReady); got.Status != v1.ConditionTrue || got.Reason != nc.ReasonKubeletReady || got.Message != nc.MessageKubeletReady {
		t.Errorf("2.3 Ready True row: got %+v", got)
	}
	if got := byType(r, v1.NodeMemoryPressure); got.Reason != nc.ReasonSufficientMemory || got.Message != "kubelet has sufficient memory available" {
		t.Errorf("2.3 MemoryPressure False row: got %+v", got)
	}
	// The pressure conditions are created Unknown and flipped at once, each
	// with its event; the new Ready condition records none.
	if !r.Send || r.Reason != nc.FirstReport || !slices.Equal(r.Events, []string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"}) {
		t.Errorf("2.2/2.3: first computation: send=%v reason=%v events=%v, want sent as first report with the three pressure events", r.Send, r.Reason, r.Events)
	}

	// 2.3: the runtime goes down: Ready False with the error as message, a flip, an event.
	r = status(10*time.Second, nc.Health{Errors: []string{nc.MessageRuntimeDown}})
	ready := byType(r, v1.NodeReady)
	if ready.Status != v1.ConditionFalse || ready.Reason != nc.ReasonKubeletNotReady || ready.Message != nc.MessageRuntimeDown ||
		!ready.LastTransitionTime.Time.Equal(t0.Add(10*time.Second)) {
		t.Errorf("2.3 Ready False row: got %+v", ready)
	}
	if !r.Send || r.Reason != nc.Changed || !cmp.Equal(r.Events, []string{"NodeNotReady"}) {
		t.Errorf("2.2: a flip is sent at once with NodeNotReady: send=%v reason=%v events=%v", r.Send, r.Reason, r.Events)
	}

	// 2.3: a second error changes only the message: LastTransitionTime stays, but it is a change.
	r = status(20*time.Second, nc.Health{Errors: []string{nc.MessageRuntimeDown, nc.MessageNetworkUnknown}})
	ready = byType(r, v1.NodeReady)
	if ready.Message != "[container runtime is down, network state unknown]" || !ready.LastTransitionTime.Time.Equal(t0.Add(10*time.Second)) {
		t.Errorf("2.3 several errors print as [a, b] and keep the transition time: got %+v", ready)
	}
	if !r.Send || r.Reason != nc.Changed || len(r.Events) != 0 {
		t.Errorf("2.3: a message change is sent without an event: send=%v reason=%v events=%v", r.Send, r.Reason, r.Events)
	}

	// 2.2: the same status again: only the heartbeat moved, nothing is sent.
	r = status(30*time.Second, nc.Health{Errors: []string{nc.MessageRuntimeDown, nc.MessageNetworkUnknown}})
	if r.Send {
		t.Errorf("2.2: an unchanged status within the report frequency is not sent (reason %v)", r.Reason)
	}
	if hb := byType(r, v1.NodeReady).LastHeartbeatTime; !hb.Time.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("2.5: LastHeartbeatTime = %v, want now", hb)
	}

	// 2.3: missing capacity and a warning.
	r = status(40*time.Second, nc.Health{MissingCapacity: []string{"cpu", "memory"}, Warning: "swap is on"})
	if got := byType(r, v1.NodeReady).Message; got != "missing node capacity for resources: cpu, memory. WARNING: swap is on" {
		t.Errorf("2.3 missing capacity: message %q", got)
	}
	r = status(50*time.Second, nc.Health{Warning: "swap is on"})
	if got := byType(r, v1.NodeReady); got.Status != v1.ConditionTrue || got.Message != "kubelet is posting ready status. WARNING: swap is on" {
		t.Errorf("2.3 Ready True with warning: %+v", got)
	}
	if !cmp.Equal(r.Events, []string{"NodeReady"}) {
		t.Errorf("2.3: back to True records NodeReady, got %v", r.Events)
	}
}

func TestKubeletPressureTransitionTimeline(t *testing.T) {
	// 4.3: memory.available drops below 100Mi at t0 and recovers at t0+30s;
	// eviction passes and status ticks every 10 s. MemoryPressure turns True at
	// the first status tick after the first observation and False at the first
	// tick after the first pass with now - last observation >= 5 m.
	k, err := nc.NewKubelet(noJitter(nc.DefaultKubeletOptions()))
	if err != nil {
		t.Fatal(err)
	}
	t0 := t12
	var flips []string
	var lastObserved time.Duration
	for at := time.Duration(0); at <= 10*time.Minute; at += 10 * time.Second {
		avail := 4 * gi
		if at >= 10*time.Second && at < 40*time.Second {
			avail = 50 * mi
		}
		p, err := k.Observe(t0.Add(at), memSample(avail))
		if err != nil {
			t.Fatal(err)
		}
		if p.Observed.Memory {
			lastObserved = at
		}
		r, err := k.Status(t0.Add(at), nc.Health{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Conditions {
			if c.Type == v1.NodeMemoryPressure && c.LastTransitionTime.Time.Equal(t0.Add(at)) && at > 0 {
				flips = append(flips, at.String()+" "+string(c.Status)+" "+c.Reason)
				if !r.Send || r.Reason != nc.Changed {
					t.Errorf("4.3: the flip at %v must be sent at once", at)
				}
			}
		}
	}
	want := []string{"10s True KubeletHasInsufficientMemory", "5m30s False KubeletHasSufficientMemory"}
	if diff := cmp.Diff(want, flips); diff != "" {
		t.Errorf("4.3 pressure transition (last observation at %v): mismatch (-want +got):\n%s", lastObserved, diff)
	}
}

func TestKubeletEvictionPasses(t *testing.T) {
	// 2.6: which thresholds are met in each synchronize pass, and which one
	// drives the eviction of a pod.
	memHard := nc.Threshold{Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Quantity: 100 * mi},
		MinReclaim: nc.ThresholdValue{Quantity: 500 * mi}}
	diskHard := nc.Threshold{Signal: nc.SignalNodeFsAvailable, Value: nc.ThresholdValue{Percentage: 0.10}}
	memSoft := nc.Threshold{Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Quantity: 2 * gi}, Soft: true, GracePeriod: 2 * time.Minute}
	sample := func(mem, disk int64) *nc.Sample {
		var s nc.Sample
		s.Set(nc.SignalMemoryAvailable, mem, 10*gi)
		s.Set(nc.SignalNodeFsAvailable, disk, 100*gi)
		s.Set(nc.SignalImageFsAvailable, disk, 100*gi)
		return &s
	}
	type pass struct {
		at        time.Duration
		mem, disk int64
		met       uint64 // EvictionPass.Met
		evict     int    // EvictionPass.Evict
	}
	tests := []struct {
		id, reason string
		thresholds []nc.Threshold
		passes     []pass
	}{
		{
			id: "2.6 step 2 minimum reclaim",
			reason: "the minimum reclaim (500Mi) only keeps a threshold met after it drove an eviction: 300Mi is no pressure before; " +
				"after an eviction at 50Mi it stays met (and evicts again) until available passes 100Mi + 500Mi; then 300Mi is no pressure again",
			thresholds: []nc.Threshold{memHard},
			passes: []pass{
				{0, 300 * mi, 50 * gi, 0, -1},
				{10 * time.Second, 50 * mi, 50 * gi, 1, 0},
				{20 * time.Second, 300 * mi, 50 * gi, 1, 0},
				{30 * time.Second, 700 * mi, 50 * gi, 0, -1},
				{40 * time.Second, 300 * mi, 50 * gi, 0, -1},
			},
		},
		{
			id:         "2.6 step 2 minimum reclaim of the acting threshold",
			reason:     "the minimum reclaim applies to the threshold that drove the eviction only: after the disk threshold evicted, 300Mi of memory is still no memory pressure",
			thresholds: []nc.Threshold{memHard, diskHard},
			passes: []pass{
				{0, 4 * gi, 5 * gi, 2, 1},
				{10 * time.Second, 300 * mi, 5 * gi, 2, 1},
			},
		},
		{
			id:         "2.6 step 8 memory first",
			reason:     "with a disk and a memory threshold both met, the memory one evicts, whatever the configured order",
			thresholds: []nc.Threshold{diskHard, {Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Quantity: 100 * mi}}},
			passes: []pass{
				{0, 4 * gi, 5 * gi, 1, 0},
				{10 * time.Second, 50 * mi, 5 * gi, 3, 1},
			},
		},
		{
			id:         "2.6 step 8 configured order",
			reason:     "a memory threshold listed first keeps priority over a disk threshold met after it; alone, the disk threshold evicts",
			thresholds: []nc.Threshold{{Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Quantity: 100 * mi}}, diskHard},
			passes: []pass{
				{0, 50 * mi, 5 * gi, 3, 0},
				{10 * time.Second, 4 * gi, 5 * gi, 2, 1},
			},
		},
		{
			id:         "2.6 step 8 disk thresholds in order",
			reason:     "two disk thresholds met together: the first configured one evicts (the priority sort moves only memory ahead)",
			thresholds: []nc.Threshold{diskHard, {Signal: nc.SignalImageFsAvailable, Value: nc.ThresholdValue{Percentage: 0.15}}},
			passes:     []pass{{0, 4 * gi, 5 * gi, 3, 0}},
		},
		{
			id:         "2.6 step 6 grace reached",
			reason:     "a soft threshold met continuously for exactly its 2 m grace drives an eviction (now - firstObservedAt >= grace)",
			thresholds: []nc.Threshold{memSoft},
			passes: []pass{
				{0, 1 * gi, 50 * gi, 1, -1},
				{time.Minute, 1 * gi, 50 * gi, 1, -1},
				{2 * time.Minute, 1 * gi, 50 * gi, 1, 0},
			},
		},
	}
	for _, tt := range tests {
		cfg := nc.DefaultKubeletOptions()
		cfg.Thresholds = tt.thresholds
		k, err := nc.NewKubelet(noJitter(cfg))
		if err != nil {
			t.Fatal(err)
		}
		for i, ps := range tt.passes {
			p, err := k.Observe(t12.Add(ps.at), sample(ps.mem, ps.disk))
			if err != nil {
				t.Fatal(err)
			}
			if p.Met != ps.met || p.Evict != ps.evict {
				t.Errorf("%s: pass %d (+%v): Met %b Evict %d, want Met %b Evict %d (%s)", tt.id, i, ps.at, p.Met, p.Evict, ps.met, ps.evict, tt.reason)
			}
		}
	}
}

func TestKubeletReportRuleJitter(t *testing.T) {
	// 2.2: after the first report and after every change the kubelet draws
	// d in [-R/2, R/2); the next unchanged report is due at last + R + d, and
	// later unchanged reports come every R.
	for _, tc := range []struct {
		id    string
		u     float64
		first time.Duration
	}{
		{"2.2 earliest", 0, 150 * time.Second},
		{"2.2 middle", 0.5, 300 * time.Second},
		{"2.2 late", 0.9, 420 * time.Second},
	} {
		k, err := nc.NewKubelet(withRand(nc.DefaultKubeletOptions(), fixedRand(tc.u)))
		if err != nil {
			t.Fatal(err)
		}
		var sent []time.Duration
		for at := time.Duration(0); at <= 15*time.Minute; at += 10 * time.Second {
			r, err := k.Status(t12.Add(at), nc.Health{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Send {
				sent = append(sent, at)
			}
		}
		want := []time.Duration{0, tc.first}
		for next := tc.first + 5*time.Minute; next <= 15*time.Minute; next += 5 * time.Minute {
			want = append(want, next)
		}
		if diff := cmp.Diff(want, sent); diff != "" {
			t.Errorf("%s (u=%v): sent times mismatch (-want +got):\n%s", tc.id, tc.u, diff)
		}
	}
}

func TestKubeletRestartAndFailedReport(t *testing.T) {
	k, err := nc.NewKubelet(noJitter(nc.DefaultKubeletOptions()))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := k.Status(t12, nc.Health{}); !r.Send {
		t.Fatal("first report not sent")
	}
	if r, _ := k.Status(t12.Add(10*time.Second), nc.Health{}); r.Send {
		t.Fatal("2.2: unchanged status sent")
	}
	k.Restart()
	if r, _ := k.Status(t12.Add(20*time.Second), nc.Health{}); !r.Send || r.Reason != nc.FirstReport {
		t.Errorf("2.2: after a restart the status is sent at once, got %v", r.Reason)
	}
	r, _ := k.Status(t12.Add(30*time.Second), nc.Health{Errors: []string{nc.MessageRuntimeDown}})
	if !r.Send {
		t.Fatal("change not sent")
	}
	k.ReportFailed()
	if r, _ := k.Status(t12.Add(40*time.Second), nc.Health{Errors: []string{nc.MessageRuntimeDown}}); !r.Send || r.Reason != nc.Changed {
		t.Errorf("a failed PATCH leaves the API copy as it was, so the change is sent again; got %v", r.Reason)
	}
	if _, err := k.Status(t12, nc.Health{}); !errors.Is(err, nc.ErrTimeWentBackwards) {
		t.Errorf("Status with an older time: err = %v, want ErrTimeWentBackwards", err)
	}
}

func TestKubeletRefusedCalls(t *testing.T) {
	// A refused Observe reports no eviction (Evict -1), and a Kubelet that
	// did not come from NewKubelet, zero or nil, refuses Observe and Status
	// with ErrNotInitialized.
	k, err := nc.NewKubelet(noJitter(nc.DefaultKubeletOptions()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Observe(t12, memSample(4*gi)); err != nil {
		t.Fatal(err)
	}
	var zero nc.Kubelet
	var none *nc.Kubelet
	tests := []struct {
		id     string
		call   func() (nc.EvictionPass, error)
		target error
	}{
		{"zero Kubelet", func() (nc.EvictionPass, error) { return zero.Observe(t12, memSample(50*mi)) }, nc.ErrNotInitialized},
		{"nil Kubelet", func() (nc.EvictionPass, error) { return none.Observe(t12, memSample(50*mi)) }, nc.ErrNotInitialized},
		{"nil sample", func() (nc.EvictionPass, error) { return k.Observe(t12.Add(10*time.Second), nil) }, nc.ErrInvalidInput},
		{"time went backwards", func() (nc.EvictionPass, error) { return k.Observe(t12.Add(-time.Second), memSample(50*mi)) }, nc.ErrTimeWentBackwards},
	}
	for _, tt := range tests {
		p, err := tt.call()
		if !errors.Is(err, tt.target) || p.Evict != -1 {
			t.Errorf("%s: Observe = Evict %d, err %v; want Evict -1 (no eviction) and %v", tt.id, p.Evict, err, tt.target)
		}
	}
	for id, call := range map[string]func() (nc.Report, error){
		"zero Kubelet": func() (nc.Report, error) { return zero.Status(t12, nc.Health{}) },
		"nil Kubelet":  func() (nc.Report, error) { return none.Status(t12, nc.Health{}) },
	} {
		if r, err := call(); !errors.Is(err, nc.ErrNotInitialized) || r.Send {
			t.Errorf("%s: Status = send %v, err %v; want nothing sent and ErrNotInitialized", id, r.Send, err)
		}
	}
	none.Restart()
	none.ReportFailed()
	none.APIStatus(nil)
	zero.Restart()
	if none.Thresholds() != nil || none.Pressures() != (nc.Pressures{}) {
		t.Error("a nil Kubelet has no thresholds and no pressure")
	}
	if _, ok := none.LastReport(); ok {
		t.Error("a nil Kubelet has sent no report")
	}
}

func TestKubeletStartsFromAPIStatus(t *testing.T) {
	// 2.3 and 3.3: the node-lifecycle controller marked the four conditions
	// Unknown; the kubelet reads its node before computing, so its next status
	// flips each of them back: a new transition time, the flip's event, and
	// the status sent at once.
	k, err := nc.NewKubelet(noJitter(nc.DefaultKubeletOptions()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Status(t12, nc.Health{}); err != nil {
		t.Fatal(err)
	}
	marked := t12.Add(time.Minute)
	unknown := func(typ v1.NodeConditionType) v1.NodeCondition {
		return v1.NodeCondition{Type: typ, Status: v1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.",
			LastHeartbeatTime: mt(t12), LastTransitionTime: mt(marked)}
	}
	net := v1.NodeCondition{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionFalse, LastTransitionTime: mt(t2012)}
	tests := []struct {
		id, reason string
		api        []v1.NodeCondition
		wantEvents []string
		wantLTT    map[v1.NodeConditionType]time.Time
	}{
		{
			id:         "3.3 all four Unknown",
			reason:     "each condition flips from Unknown and records its event; NetworkUnavailable is not the kubelet's",
			api:        []v1.NodeCondition{net, unknown(v1.NodeMemoryPressure), unknown(v1.NodeDiskPressure), unknown(v1.NodePIDPressure), unknown(v1.NodeReady)},
			wantEvents: []string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeReady"},
		},
		{
			id:         "2.3 only Ready on the node",
			reason:     "Ready flips with its event; the pressure conditions the node lacks are created Unknown and flipped, each with its event",
			api:        []v1.NodeCondition{unknown(v1.NodeReady), net},
			wantEvents: []string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeReady"},
		},
	}
	for i, tt := range tests {
		k.APIStatus(tt.api)
		now := marked.Add(time.Duration(i+1) * 10 * time.Second)
		r, err := k.Status(now, nc.Health{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Send || r.Reason != nc.Changed {
			t.Errorf("%s: send %v reason %v, want sent as changed (%s)", tt.id, r.Send, r.Reason, tt.reason)
		}
		if diff := cmp.Diff(tt.wantEvents, r.Events); diff != "" {
			t.Errorf("%s: %s: events mismatch (-want +got):\n%s", tt.id, tt.reason, diff)
		}
		var types []v1.NodeConditionType
		for _, c := range r.Conditions {
			types = append(types, c.Type)
			if c.Status == v1.ConditionUnknown || !c.LastTransitionTime.Time.Equal(now) || !c.LastHeartbeatTime.Time.Equal(now) {
				t.Errorf("%s: %s %s, transition %v, heartbeat %v; want it set at %v (%s)", tt.id, c.Type, c.Status, c.LastTransitionTime, c.LastHeartbeatTime, now, tt.reason)
			}
		}
		if diff := cmp.Diff([]v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure, v1.NodeReady}, types); diff != "" {
			t.Errorf("%s: condition types mismatch (-want +got):\n%s", tt.id, diff)
		}
	}
}
