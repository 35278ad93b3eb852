package podrunner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
)

// TestNewRefuses: every option out of range, and a missing cache or
// recorder, is an *OptionError naming the field.
func TestNewRefuses(t *testing.T) {
	cache, _ := statussync.NewCache(statussync.DefaultOptions())
	for _, tt := range []struct {
		field string
		set   func(*podrunner.Options)
	}{
		{"PodCIDR", func(o *podrunner.Options) { o.PodCIDR = "10.0.0.0/31" }},
		{"PodCIDR", func(o *podrunner.Options) { o.PodCIDR = "fd00::/64" }},
		{"HostIPs", func(o *podrunner.Options) { o.HostIPs = []string{"nope"} }},
		{"HostIPs", func(o *podrunner.Options) { o.HostIPs = []string{"10.0.0.1", "10.0.0.2"} }},
		{"HostIPs", func(o *podrunner.Options) { o.HostIPs = []string{"10.0.0.1", "fd00::1", "10.0.0.3"} }},
		{"MaxSyncsPerInstant", func(o *podrunner.Options) { o.MaxSyncsPerInstant = 0 }},
		{"StallDelay", func(o *podrunner.Options) { o.StallDelay = 0 }},
		{"RuntimeRetry", func(o *podrunner.Options) { o.RuntimeRetry = -time.Second }},
		{"RuntimeRetryMax", func(o *podrunner.Options) { o.RuntimeRetryMax = time.Millisecond }},
		{"Lifecycle", func(o *podrunner.Options) { o.Lifecycle.SyncFrequency = 0 }},
	} {
		opts := podrunner.DefaultOptions()
		tt.set(&opts)
		_, err := podrunner.New(opts, cache, &recorder{})
		var oe *podrunner.OptionError
		if !errors.As(err, &oe) || oe.Field != tt.field || !errors.Is(err, podrunner.ErrInvalidOptions) {
			t.Errorf("%s: %v", tt.field, err)
		}
	}
	if _, err := podrunner.New(podrunner.DefaultOptions(), cache, &recorder{}); err != nil {
		t.Fatal(err)
	}
	if _, err := podrunner.New(podrunner.DefaultOptions(), nil, &recorder{}); !errors.Is(err, podrunner.ErrInvalidOptions) {
		t.Errorf("nil cache: %v", err)
	}
	if _, err := podrunner.New(podrunner.DefaultOptions(), cache, nil); !errors.Is(err, podrunner.ErrInvalidOptions) {
		t.Errorf("nil recorder: %v", err)
	}
	opts := podrunner.DefaultOptions()
	opts.Lifecycle.SyncFrequency = 0
	_, err := podrunner.New(opts, cache, &recorder{})
	if !errors.Is(err, podlifecycle.ErrInvalidOptions) {
		t.Errorf("a lifecycle option error does not wrap podlifecycle's: %v", err)
	}
}

// TestCallsRefuse: a call about a pod the runner cannot take or does not
// know returns a *PodError wrapping the sentinel that says why, and
// changes nothing.
func TestCallsRefuse(t *testing.T) {
	n := defaultNode(t)
	pod := testPod("web", nil, "app")
	rt, _ := simruntime.New(simruntime.DefaultOptions(), pod, nil)
	noUID := pod.DeepCopy()
	noUID.UID = ""
	dupNames := testPod("dup", nil, "app", "app")
	for name, tt := range map[string]struct {
		err  error
		want error
	}{
		"add nil pod":          {n.r.Add(nil, rt), podrunner.ErrInvalidInput},
		"add nil runtime":      {n.r.Add(pod, nil), podrunner.ErrInvalidInput},
		"add pod without UID":  {n.r.Add(noUID, rt), podrunner.ErrInvalidInput},
		"add duplicate names":  {n.r.Add(dupNames, rt), podlifecycle.ErrInvalidInput},
		"update unknown":       {n.r.Update(pod), podrunner.ErrUnknownPod},
		"update nil":           {n.r.Update(nil), podrunner.ErrInvalidInput},
		"remove unknown":       {n.r.Remove("nope", nil), podrunner.ErrUnknownPod},
		"notify unknown":       {n.r.Notify("nope"), podrunner.ErrUnknownPod},
		"reject nil":           {n.r.Reject(nil, t0, "r", "m"), podrunner.ErrInvalidInput},
		"reject without a UID": {n.r.Reject(noUID, t0, "r", "m"), podrunner.ErrInvalidInput},
	} {
		var pe *podrunner.PodError
		if !errors.Is(tt.err, tt.want) || !errors.As(tt.err, &pe) {
			t.Errorf("%s: %v, want a *PodError wrapping %v", name, tt.err, tt.want)
		}
	}
	if err := n.r.Add(pod, rt); err != nil {
		t.Fatal(err)
	}
	if err := n.r.Add(pod, rt); !errors.Is(err, podrunner.ErrDuplicatePod) {
		t.Errorf("second add: %v", err)
	}
	if s := n.r.Stats(); s.Added != 1 {
		t.Errorf("stats %+v", s)
	}
	if err := n.r.Reject(pod, t0, "r", "m"); !errors.Is(err, podrunner.ErrDuplicatePod) {
		t.Errorf("reject of a running pod: %v", err)
	}
}

// TestZeroRunner: the zero Runner does nothing and says so.
func TestZeroRunner(t *testing.T) {
	var r podrunner.Runner
	pod := testPod("web", nil, "app")
	for name, err := range map[string]error{
		"Add": r.Add(pod, &asyncRuntime{}), "Update": r.Update(pod), "Remove": r.Remove("u", nil), "Notify": r.Notify("u"),
		"Reject": r.Reject(pod, t0, "r", "m"), "SetPodCIDR": r.SetPodCIDR("10.0.0.0/24"), "Run": r.Run(context.Background()),
	} {
		if !errors.Is(err, podrunner.ErrNotInitialized) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !r.Advance(t0).IsZero() || r.Pods() != nil || r.Images() != nil || r.NodeImages() != nil {
		t.Error("the zero Runner reports something")
	}
	if _, ok := r.Pod("u"); ok {
		t.Error("Pod")
	}
	if _, ok := r.Status("u"); ok {
		t.Error("Status")
	}
}
