package nodecondition_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

func TestLeaseSchedule(t *testing.T) {
	r, err := nc.NewLeaseRenewer(withRand(nc.DefaultKubeletOptions(), fixedRand(0.5)), "node-1")
	if err != nil {
		t.Fatal(err)
	}
	spec, next, err := r.Renewed(t12)
	if err != nil {
		t.Fatal(err)
	}
	if *spec.HolderIdentity != "node-1" || *spec.LeaseDurationSeconds != 40 || !spec.RenewTime.Time.Equal(t12) {
		t.Errorf("2.4 lease fields: holder %q duration %d renew %v", *spec.HolderIdentity, *spec.LeaseDurationSeconds, spec.RenewTime)
	}
	if want := t12.Add(10*time.Second + 200*time.Millisecond); !next.Equal(want) {
		t.Errorf("2.4: next renewal %v, want 10 s plus jitter 0.5*0.04*10 s = %v", next, want)
	}
	var waits []time.Duration
	now := t12
	for range 8 {
		n, err := r.Failed(now)
		if err != nil {
			t.Fatal(err)
		}
		waits = append(waits, n.Sub(now))
		now = n
	}
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond,
		3200 * time.Millisecond, 6400 * time.Millisecond, 7 * time.Second, 7 * time.Second}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("2.4 ensure back-off: mismatch (-want +got):\n%s", diff)
	}
}

func TestOptionErrors(t *testing.T) {
	neg := nc.DefaultKubeletOptions()
	neg.StatusUpdateFrequency = -time.Second
	negCtrl := nc.DefaultControllerOptions()
	negCtrl.MonitorPeriod = -5 * time.Second
	short := nc.DefaultControllerOptions()
	short.GracePeriod = 8 * time.Second
	badFrac := nc.DefaultKubeletOptions()
	badFrac.LeaseRenewFraction = 1.5
	tests := []struct {
		id     string
		err    error
		field  string
		reason string
	}{
		{"negative kubelet period", neg.Validate(), "StatusUpdateFrequency", "periods must be positive"},
		{"negative monitor period", negCtrl.Validate(), "MonitorPeriod", "periods must be positive"},
		{"grace shorter than renew", nc.Options{Kubelet: nc.DefaultKubeletOptions(), Controller: short}.Validate(), "Controller.GracePeriod", "8 s grace is shorter than the 10 s lease renew interval"},
		{"renew fraction", badFrac.Validate(), "LeaseRenewFraction", "fraction must be in (0, 1)"},
	}
	for _, tt := range tests {
		var ce *nc.OptionError
		if !errors.Is(tt.err, nc.ErrInvalidOptions) || !errors.As(tt.err, &ce) || ce.Field != tt.field {
			t.Errorf("%s: err = %v, want a *OptionError on %s (%s)", tt.id, tt.err, tt.field, tt.reason)
		}
	}
	if _, err := nc.NewController(negCtrl); !errors.Is(err, nc.ErrInvalidOptions) {
		t.Errorf("NewController: err = %v", err)
	}
	if _, err := nc.NewKubelet(noJitter(neg)); !errors.Is(err, nc.ErrInvalidOptions) {
		t.Errorf("NewKubelet: err = %v", err)
	}
}

func TestParseThresholds(t *testing.T) {
	tests := []struct {
		id      string
		hard    string
		soft    string
		grace   string
		reclaim string
		want    []nc.Threshold
		wantErr bool
		reason  string
	}{
		{id: "defaults", hard: "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%",
			want: nc.DefaultHardThresholds(), reason: "1: the Linux evictionHard defaults"},
		{id: "soft with grace", soft: "memory.available<2Gi", grace: "memory.available=2m",
			want: []nc.Threshold{{Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Quantity: 2 * gi}, Soft: true, GracePeriod: 2 * time.Minute}}, reason: "2.6: soft threshold with its grace"},
		{id: "disabled", hard: "memory.available<0%", want: nil, reason: "0% disables a threshold"},
		{id: "min reclaim", hard: "pid.available<1000", reclaim: "pid.available=500",
			want: []nc.Threshold{{Signal: nc.SignalPIDAvailable, Value: nc.ThresholdValue{Quantity: 1000}, MinReclaim: nc.ThresholdValue{Quantity: 500}}}, reason: "minimum reclaim"},
		{id: "unknown signal", hard: "memory.free<1Gi", wantErr: true, reason: "unknown signal"},
		{id: "unparseable", hard: "memory.available<lots", wantErr: true, reason: "unparseable quantity"},
		{id: "negative", hard: "memory.available<-1Gi", wantErr: true, reason: "quantities must be positive"},
		{id: "percent range", hard: "nodefs.available<150%", wantErr: true, reason: "percentages are at most 100"},
		{id: "soft without grace", soft: "memory.available<2Gi", wantErr: true, reason: "2.6: a soft threshold must have a grace period"},
		{id: "negative grace", soft: "memory.available<2Gi", grace: "memory.available=-1m", wantErr: true, reason: "grace must not be negative"},
		{id: "no operator", hard: "memory.available=1Gi", wantErr: true, reason: "only < exists"},
		{id: "soft grace zero", soft: "memory.available<2Gi", grace: "memory.available=0s",
			want: []nc.Threshold{{Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Quantity: 2 * gi}, Soft: true}}, reason: "2.6: only a negative grace period is refused; 0 evicts at the first observation"},
		{id: "unparseable grace", soft: "memory.available<2Gi", grace: "memory.available=soon", wantErr: true, reason: "a grace period is a duration"},
		{id: "unparseable percentage", hard: "nodefs.available<lots%", wantErr: true, reason: "a percentage is a number followed by %"},
		{id: "zero percentage written otherwise", hard: "nodefs.available<0.0%",
			want: []nc.Threshold{{Signal: nc.SignalNodeFsAvailable}}, reason: "only the text 0% disables a threshold; 0.0% is a 0 % threshold, never met, as the kubelet parses it"},
		{id: "min reclaim zero quantity", hard: "memory.available<100Mi", reclaim: "memory.available=0",
			want: []nc.Threshold{{Signal: nc.SignalMemoryAvailable, Value: nc.ThresholdValue{Quantity: 100 * mi}}}, reason: "a minimum reclaim quantity may be 0 (only a negative one is refused)"},
		{id: "min reclaim 0%", hard: "nodefs.available<10%", reclaim: "nodefs.available=0%", wantErr: true,
			reason: "the kubelet refuses a minimum reclaim percentage that is not positive"},
		{id: "min reclaim 100%", hard: "nodefs.available<10%", reclaim: "nodefs.available=100%",
			want: []nc.Threshold{{Signal: nc.SignalNodeFsAvailable, Value: nc.ThresholdValue{Percentage: 0.1}, MinReclaim: nc.ThresholdValue{Percentage: 1}}}, reason: "a minimum reclaim percentage may be up to 100%"},
	}
	for _, tt := range tests {
		got, err := parseAll(tt.hard, tt.soft, tt.grace, tt.reclaim)
		if tt.wantErr {
			if !errors.Is(err, nc.ErrInvalidInput) {
				t.Errorf("%s: err = %v, want ErrInvalidInput (%s)", tt.id, err, tt.reason)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.id, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: %s: mismatch (-want +got):\n%s", tt.id, tt.reason, diff)
		}
	}
}

func TestParseThresholdsDisabledOnly(t *testing.T) {
	// "0%" and "100%" disable their own threshold and nothing else. The
	// settings are maps, read in no fixed order, so parse them several times.
	want := []nc.Threshold{
		{Signal: nc.SignalNodeFsAvailable, Value: nc.ThresholdValue{Percentage: 0.1}},
		{Signal: nc.SignalNodeFsInodesFree, Value: nc.ThresholdValue{Percentage: 0.05}},
		{Signal: nc.SignalImageFsAvailable, Value: nc.ThresholdValue{Percentage: 0.15}},
	}
	for range 20 {
		got, err := parseAll("memory.available<0%,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<100%", "", "", "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("the disabled thresholds must not drop the others: mismatch (-want +got):\n%s", diff)
		}
	}
}

func parseAll(hard, soft, grace, reclaim string) ([]nc.Threshold, error) {
	h, err := nc.ParseThresholdList(hard)
	if err != nil {
		return nil, err
	}
	s, err := nc.ParseThresholdList(soft)
	if err != nil {
		return nil, err
	}
	g, err := nc.ParseGraceList(grace)
	if err != nil {
		return nil, err
	}
	r, err := nc.ParseGraceList(reclaim)
	if err != nil {
		return nil, err
	}
	return nc.ParseThresholds(h, s, g, r)
}

func TestJitterDrawOutsideRange(t *testing.T) {
	// Rand.Float64 is documented to return a number in [0, 1). A draw
	// outside it (1 included) is not used: the kubelet's first unchanged
	// report comes exactly R (5 m) after the first one, and the lease is
	// renewed exactly every 10 s.
	for _, u := range []float64{1, 1.5, -0.5, math.NaN()} {
		k, err := nc.NewKubelet(withRand(nc.DefaultKubeletOptions(), fixedRand(u)))
		if err != nil {
			t.Fatal(err)
		}
		r, err := k.Status(t12, nc.Health{})
		if err != nil {
			t.Fatal(err)
		}
		if want := t12.Add(5 * time.Minute); !r.Send || !r.NextReport.Equal(want) {
			t.Errorf("draw %v: first report sent %v, next unchanged report at %v, want %v (2.2: no jitter from a draw outside [0, 1))", u, r.Send, r.NextReport, want)
		}
		lr, err := nc.NewLeaseRenewer(withRand(nc.DefaultKubeletOptions(), fixedRand(u)), "node-1")
		if err != nil {
			t.Fatal(err)
		}
		if _, next, err := lr.Renewed(t12); err != nil || !next.Equal(t12.Add(10*time.Second)) {
			t.Errorf("draw %v: next renewal at %v (%v), want %v (2.4: no loop jitter from a draw outside [0, 1))", u, next, err, t12.Add(10*time.Second))
		}
	}
}

func TestLeaseRenewerWithoutJitter(t *testing.T) {
	// 2.4 with LoopJitter 0: renewals exactly every renew interval, and no
	// draw from Rand, which KubeletOptions.Rand shares with the Kubelet's
	// report jitter: the Kubelet's draws stay the same whether or not the
	// lease renews.
	r := &countingRand{u: 0.9}
	o := nc.DefaultKubeletOptions()
	o.LoopJitter, o.Rand = 0, r
	lr, err := nc.NewLeaseRenewer(o, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	now := t12
	for range 3 {
		_, next, err := lr.Renewed(now)
		if err != nil {
			t.Fatal(err)
		}
		if !next.Equal(now.Add(10 * time.Second)) {
			t.Errorf("renewed at %v: next at %v, want 10 s later", now, next)
		}
		now = next
	}
	if r.draws != 0 {
		t.Errorf("LoopJitter 0: %d draws from Rand, want none", r.draws)
	}
}

func TestLeaseRenewerNotInitialized(t *testing.T) {
	// A LeaseRenewer that did not come from NewLeaseRenewer, zero or nil,
	// refuses Renewed and Failed with ErrNotInitialized and has no failures.
	var zero nc.LeaseRenewer
	var none *nc.LeaseRenewer
	for id, r := range map[string]*nc.LeaseRenewer{"zero": &zero, "nil": none} {
		if _, _, err := r.Renewed(t12); !errors.Is(err, nc.ErrNotInitialized) {
			t.Errorf("%s LeaseRenewer: Renewed err = %v, want ErrNotInitialized", id, err)
		}
		if _, err := r.Failed(t12); !errors.Is(err, nc.ErrNotInitialized) {
			t.Errorf("%s LeaseRenewer: Failed err = %v, want ErrNotInitialized", id, err)
		}
		if r.Failures() != 0 {
			t.Errorf("%s LeaseRenewer: %d failures", id, r.Failures())
		}
	}
}

// TestHealthySampleIsFarFromThresholds: the kubelet's default thresholds (hard memory
// 100Mi, nodefs 10%, inodes 5%, imagefs 15%) see no pressure in HealthySample, and every
// signal the eviction manager reads is known.
func TestHealthySampleIsFarFromThresholds(t *testing.T) {
	k, err := nc.NewKubelet(noJitter(nc.DefaultKubeletOptions()))
	if err != nil {
		t.Fatal(err)
	}
	s := nc.HealthySample()
	for _, sig := range []nc.Signal{nc.SignalMemoryAvailable, nc.SignalNodeFsAvailable, nc.SignalNodeFsInodesFree,
		nc.SignalImageFsAvailable, nc.SignalPIDAvailable} {
		if !s.Signals[sig].Known {
			t.Errorf("signal %v is not in the sample", sig)
		}
	}
	pass, err := k.Observe(t12, &s)
	if err != nil || pass.Evict >= 0 {
		t.Fatalf("Observe: pass %+v, err %v; want no eviction", pass, err)
	}
	r, err := k.Status(t12, nc.Health{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Conditions {
		if c.Type != v1.NodeReady && c.Status != v1.ConditionFalse {
			t.Errorf("%s is %s, want False", c.Type, c.Status)
		}
	}
}

// TestOtherFieldChangeSendsStatus: the kubelet compares the whole node status, so a change of
// another field (Health.OtherChanged, its images for one) sends an unchanged set of conditions
// as Changed before the report is due; without it nothing is sent.
func TestOtherFieldChangeSendsStatus(t *testing.T) {
	k, err := nc.NewKubelet(noJitter(nc.DefaultKubeletOptions()))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := k.Status(t12, nc.Health{}); err != nil || r.Reason != nc.FirstReport {
		t.Fatalf("first: %v %v", r.Reason, err)
	}
	if r, _ := k.Status(t12.Add(10*time.Second), nc.Health{}); r.Send {
		t.Fatalf("unchanged: sent as %v", r.Reason)
	}
	if r, _ := k.Status(t12.Add(20*time.Second), nc.Health{OtherChanged: true}); !r.Send || r.Reason != nc.Changed {
		t.Fatalf("another field changed: send %v as %v, want Changed", r.Send, r.Reason)
	}
}
