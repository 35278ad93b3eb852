package containerstate

import (
	"errors"
	"hash/fnv"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func mustBackoff(t *testing.T, c BackoffOptions, err error) *Backoff {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBackoff(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCrashLoopTimeline traces section 10's resulting timeline: the first
// restart is immediate, then 10s, 20s, 40s, 80s, 160s and the 300s cap, for a
// container that crashes one second after each start.
func TestCrashLoopTimeline(t *testing.T) {
	cfg, err := DefaultCrashLoopOptions().BackoffOptions()
	b := mustBackoff(t, cfg, err)
	const key = "k"
	now := t0
	var waits []time.Duration
	for range 9 {
		finished := now.Add(time.Second) // it runs one second and crashes
		now = finished
		delay, until, blocked := b.CrashLoop(key, finished, now)
		wait := time.Duration(0)
		if blocked {
			if until != finished.Add(delay) {
				t.Fatalf("back-off ends at finishedAt+delay: got %v, want %v", until, finished.Add(delay))
			}
			// One second before the end it is still blocked, at the end it is not.
			if _, _, still := b.CrashLoop(key, finished, until.Add(-time.Second)); !still {
				t.Fatalf("released one second early at delay %v", delay)
			}
			now = until
			if _, _, still := b.CrashLoop(key, finished, now); still {
				t.Fatalf("still blocked at the end of delay %v", delay)
			}
			wait = delay
		}
		waits = append(waits, wait)
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second, 300 * time.Second}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("rule 10 timeline: waits %v, want %v", waits, want)
		}
	}
}

// TestCrashLoopReset traces the kubelet's reset rule: an entry expires when
// the event is more than 600s after its last update, whatever the maximum.
func TestCrashLoopReset(t *testing.T) {
	cfg, err := DefaultCrashLoopOptions().BackoffOptions()
	b := mustBackoff(t, cfg, err)
	b.Next("k", t0, t0)
	b.Next("k", t0, t0)
	b.Next("k", t0, t0)
	if got := b.Get("k"); got != 40*time.Second {
		t.Fatalf("three failures: delay %v, want 40s", got)
	}
	// 600s after the last update is not yet expired; 601s is.
	if !b.InBackoffSince("k", t0.Add(600*time.Second), t0.Add(601*time.Second)) {
		t.Fatal("rule 10 reset: an event exactly 600s after the last update is still backed off")
	}
	if b.InBackoffSince("k", t0.Add(601*time.Second), t0.Add(602*time.Second)) {
		t.Fatal("rule 10 reset: an event 601s after the last update has expired")
	}
	b.Next("k", t0.Add(601*time.Second), t0.Add(601*time.Second))
	if got := b.Get("k"); got != 10*time.Second {
		t.Fatalf("rule 10 reset: after expiry the delay starts over at 10s, got %v", got)
	}
	b.GC(t0.Add(601*time.Second + 600*time.Second))
	if b.Len() != 1 {
		t.Fatalf("GC at exactly the reset period keeps the entry, len %d", b.Len())
	}
	b.GC(t0.Add(601*time.Second + 601*time.Second))
	if b.Len() != 0 {
		t.Fatalf("GC after the reset period forgets the entry, len %d", b.Len())
	}
}

// TestCrashLoopConfig traces the constants table of section 10.
func TestCrashLoopConfig(t *testing.T) {
	tests := []struct {
		reason       string
		opts         CrashLoopOptions
		initial, max time.Duration
		wantErr      bool
	}{
		{reason: "1.37 defaults: 10s to 300s", opts: DefaultCrashLoopOptions(), initial: 10 * time.Second, max: 300 * time.Second},
		{reason: "every gate off: 10s to 300s", opts: CrashLoopOptions{}, initial: 10 * time.Second, max: 300 * time.Second},
		{reason: "reduced decay alone: 1s to 60s", opts: CrashLoopOptions{ReduceDefaultDecay: true}, initial: time.Second, max: 60 * time.Second},
		{reason: "reduced decay and per-node max unset: the config default 300s overrides 60s", opts: CrashLoopOptions{ReduceDefaultDecay: true, KubeletCrashLoopBackOffMax: true}, initial: time.Second, max: 300 * time.Second},
		{reason: "per-node max 30s", opts: CrashLoopOptions{KubeletCrashLoopBackOffMax: true, MaxContainerRestartPeriod: 30 * time.Second}, initial: 10 * time.Second, max: 30 * time.Second},
		{reason: "per-node max below the initial delay lowers the initial delay", opts: CrashLoopOptions{KubeletCrashLoopBackOffMax: true, MaxContainerRestartPeriod: 5 * time.Second}, initial: 5 * time.Second, max: 5 * time.Second},
		{reason: "per-node max ignored with its gate off", opts: CrashLoopOptions{MaxContainerRestartPeriod: 5 * time.Second}, initial: 10 * time.Second, max: 300 * time.Second},
		{reason: "per-node max below 1s is invalid", opts: CrashLoopOptions{KubeletCrashLoopBackOffMax: true, MaxContainerRestartPeriod: 500 * time.Millisecond}, wantErr: true},
		{reason: "per-node max above 300s is invalid", opts: CrashLoopOptions{KubeletCrashLoopBackOffMax: true, MaxContainerRestartPeriod: 301 * time.Second}, wantErr: true},
		{reason: "per-node max of exactly 1s is the least valid one", opts: CrashLoopOptions{KubeletCrashLoopBackOffMax: true, MaxContainerRestartPeriod: time.Second}, initial: time.Second, max: time.Second},
		{reason: "per-node max of exactly 300s is the greatest valid one", opts: CrashLoopOptions{KubeletCrashLoopBackOffMax: true, MaxContainerRestartPeriod: 300 * time.Second}, initial: 10 * time.Second, max: 300 * time.Second},
	}
	for _, tt := range tests {
		c, err := tt.opts.BackoffOptions()
		if tt.wantErr {
			if !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("%s: error %v, want ErrInvalidOptions", tt.reason, err)
			}
			continue
		}
		if err != nil || c.Initial != tt.initial || c.Max != tt.max || c.ResetAfter != CrashLoopReset {
			t.Errorf("%s: got %+v (err %v), want initial %v max %v reset 600s", tt.reason, c, err, tt.initial, tt.max)
		}
	}
	for _, bad := range []struct {
		opts  BackoffOptions
		field string
	}{
		{BackoffOptions{}, "Initial"},
		{BackoffOptions{Initial: 0, Max: time.Second, ResetAfter: time.Second}, "Initial"},
		{BackoffOptions{Initial: time.Second, Max: time.Millisecond, ResetAfter: time.Second}, "Max"},
		{BackoffOptions{Initial: time.Second, Max: time.Second}, "ResetAfter"},
	} {
		_, err := NewBackoff(bad.opts)
		var oe *OptionError
		if !errors.Is(err, ErrInvalidOptions) || !errors.As(err, &oe) || oe.Field != bad.field {
			t.Errorf("NewBackoff(%+v): error %v, want an OptionError for %s", bad.opts, err, bad.field)
		}
	}
	// A fixed delay, Max equal to Initial, is valid.
	if _, err := NewBackoff(BackoffOptions{Initial: time.Second, Max: time.Second, ResetAfter: time.Second}); err != nil {
		t.Errorf("NewBackoff with Max equal to Initial: %v", err)
	}
}

// TestBackoffExpiredSinceUpdate: an entry whose last update is more than
// ResetAfter ago is forgotten, so it is not in back-off even while its delay
// has not yet passed (a reset period shorter than the delay).
func TestBackoffExpiredSinceUpdate(t *testing.T) {
	b := mustBackoff(t, BackoffOptions{Initial: 10 * time.Second, Max: 10 * time.Second, ResetAfter: 5 * time.Second}, nil)
	b.Next("k", t0, t0)
	if !b.InBackoffSinceUpdate("k", t0.Add(5*time.Second)) {
		t.Fatal("5s after the update, at the reset period, the 10s delay still holds")
	}
	if b.InBackoffSinceUpdate("k", t0.Add(6*time.Second)) {
		t.Fatal("6s after the update the entry has expired: not in back-off, though the delay is 10s")
	}
	if b.InBackoffSinceUpdate("other", t0) {
		t.Fatal("a key never updated is not in back-off")
	}
}

// TestImagePullAlternation traces section 11: the Waiting reason alternates
// between ErrImagePull and ImagePullBackOff as the delay doubles.
func TestImagePullAlternation(t *testing.T) {
	b := mustBackoff(t, DefaultBackoffOptions(), nil)
	pod := onePod(v1.RestartPolicyAlways, "a")
	m := mustMachine(t, DefaultOptions(), pod, "a")
	key := ImagePullKey(pod.UID, "img-a")
	if key != "uid-1_img-a" {
		t.Fatalf("image pull key %q", key)
	}
	var pulls []int
	lastErr := ""
	for sec := 0; sec <= 75; sec++ {
		now := at(sec)
		if b.ImagePull(key, now) {
			steps(t, m, PullBackOffEvent(now, "img-a", ReasonErrImagePull, lastErr))
			if m.Status().State.Waiting.Reason != ReasonImagePullBackOff {
				t.Fatalf("at %ds: want ImagePullBackOff, got %+v", sec, m.Status().State)
			}
			continue
		}
		lastErr = "manifest unknown"
		b.Next(key, now, now)
		steps(t, m, PullErrorEvent(now, "img-a", lastErr))
		if m.Status().State.Waiting.Reason != ReasonErrImagePull {
			t.Fatalf("at %ds: want ErrImagePull, got %+v", sec, m.Status().State)
		}
		pulls = append(pulls, sec)
	}
	want := []int{0, 10, 30, 70}
	if len(pulls) != len(want) {
		t.Fatalf("rule 11: pulls at %v, want %v", pulls, want)
	}
	for i := range want {
		if pulls[i] != want[i] {
			t.Fatalf("rule 11: pulls at %v, want %v", pulls, want)
		}
	}
	// The image back-off expires after twice its maximum without an update:
	// the next failure starts over at 10s.
	b.Next(key, at(70+600), at(70+600))
	if got := b.Get(key); got != 160*time.Second {
		t.Fatalf("rule 11: 600s after the last update the delay still doubles, got %v", got)
	}
	b.Next(key, at(670+601), at(670+601))
	if got := b.Get(key); got != ImagePullInitial {
		t.Fatalf("rule 11: more than 600s after the last update the delay starts over, got %v", got)
	}
}

func TestCrashLoopKey(t *testing.T) {
	c := &v1.Container{Name: "app", Image: "nginx:1"}
	k1 := CrashLoopKey("web", "default", "uid-1", c)
	if k1 != CrashLoopKey("web", "default", "uid-1", c.DeepCopy()) {
		t.Fatal("the key is a function of its inputs")
	}
	other := c.DeepCopy()
	other.Image = "nginx:2"
	if k1 == CrashLoopKey("web", "default", "uid-1", other) {
		t.Fatal("rule 10: a new image starts a fresh back-off")
	}
	other = c.DeepCopy()
	other.Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
	if k1 == CrashLoopKey("web", "default", "uid-1", other) {
		t.Fatal("rule 10: new resources start a fresh back-off")
	}
	if k1 == CrashLoopKey("web", "default", "uid-2", c) {
		t.Fatal("rule 10: another pod UID is another key")
	}
	if CrashLoopKey("web", "default", "uid-1", nil) == "" {
		t.Fatal("a nil container still gives a key")
	}
	// Section 10: the hex FNV-64a of the six fields joined with "/", as
	// GetBackoffKey computes it.
	h := fnv.New64a()
	h.Write([]byte("web/default/uid-1/app/nginx:1/" + c.Resources.String()))
	if want := strconv.FormatUint(h.Sum64(), 16); k1 != want {
		t.Fatalf("rule 10: key %s, want %s (FNV-64a of the fields joined with /)", k1, want)
	}
}
