package nodecondition_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/kubeversion"
	nc "github.com/nodestate/nodestate/nodecondition"
)

// TestDefaultOptionsFor: the defaults without a version are 1.37's, every
// minor's validate, and only the version-keyed fields differ.
func TestDefaultOptionsFor(t *testing.T) {
	if diff := cmp.Diff(nc.DefaultOptions(), nc.DefaultOptionsFor(kubeversion.Version(0)), cmp.Comparer(func(a, b nc.Threshold) bool { return a == b })); diff != "" {
		t.Fatalf("DefaultOptions is not 1.37's (-DefaultOptions +1.37):\n%s", diff)
	}
	for _, v := range kubeversion.Supported() {
		o := nc.DefaultOptionsFor(v)
		if err := o.Validate(); err != nil {
			t.Errorf("DefaultOptionsFor(%v): %v", v, err)
		}
		if o.Kubelet.Version != v || o.Controller.Version != v {
			t.Errorf("DefaultOptionsFor(%v): versions %v, %v", v, o.Kubelet.Version, o.Controller.Version)
		}
		want := nc.DefaultControllerOptions()
		want.Version, want.LeaseCircuitBreaker = v, v == kubeversion.V1_37
		if o.Controller != want {
			t.Errorf("DefaultControllerOptionsFor(%v) = %+v, want %+v", v, o.Controller, want)
		}
		if _, err := nc.NewKubelet(o.Kubelet); err != nil {
			t.Errorf("NewKubelet(DefaultKubeletOptionsFor(%v)): %v", v, err)
		}
	}
}

// countingRand counts its draws and returns u.
type countingRand struct {
	u     float64
	draws int
}

func (r *countingRand) Float64() float64 { r.draws++; return r.u }

// TestVersionNCV3 is docs/versions.md row NC-V3: from 1.34 the first
// unchanged report after a change comes at R plus a one-time jitter in
// [-R/2, R/2) (here the earliest draw, 150 s); in 1.33 exactly every R
// (300 s), with no draw.
func TestVersionNCV3(t *testing.T) {
	for _, tc := range []struct {
		row   string
		v     kubeversion.Version
		want  []time.Duration
		draws bool
	}{
		{"NC-V3", kubeversion.V1_33, []time.Duration{0, 300 * time.Second, 600 * time.Second, 900 * time.Second}, false},
		{"NC-V3", kubeversion.V1_34, []time.Duration{0, 150 * time.Second, 450 * time.Second, 750 * time.Second}, true},
		{"NC-V3", kubeversion.V1_37, []time.Duration{0, 150 * time.Second, 450 * time.Second, 750 * time.Second}, true},
	} {
		r := &countingRand{u: 0}
		o := nc.DefaultKubeletOptionsFor(tc.v)
		o.Rand = r
		k, err := nc.NewKubelet(o)
		if err != nil {
			t.Fatal(err)
		}
		var sent []time.Duration
		for at := time.Duration(0); at <= 15*time.Minute; at += 10 * time.Second {
			rep, err := k.Status(t12.Add(at), nc.Health{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Send {
				sent = append(sent, at)
			}
		}
		if diff := cmp.Diff(tc.want, sent); diff != "" {
			t.Errorf("%s %v: sent times mismatch (-want +got):\n%s", tc.row, tc.v, diff)
		}
		if (r.draws > 0) != tc.draws {
			t.Errorf("%s %v: %d jitter draws", tc.row, tc.v, r.draws)
		}
	}
}

// TestVersionNCV1 is docs/versions.md row NC-V1: from 1.34 the pass that
// marks a node Unknown also queues it for the unreachable NoExecute taint,
// so the tainting pass right after adds it; in 1.33 that pass still decides
// on the Ready True it started with, and the taint comes after the next
// monitor pass, 5 s later.
func TestVersionNCV1(t *testing.T) {
	ready := cond(v1.NodeReady, v1.ConditionTrue, t12, t12)
	marked := t12.Add(55 * time.Second) // past the 50 s grace
	for _, tc := range []struct {
		row  string
		v    kubeversion.Version
		want time.Duration // after marked, when the NoExecute taint is added
	}{
		{"NC-V1", kubeversion.V1_33, 5 * time.Second},
		{"NC-V1", kubeversion.V1_34, 0},
		{"NC-V1", kubeversion.V1_37, 0},
	} {
		cfg := healthy()
		cfg.Version = tc.v
		c, err := nc.NewController(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// node1 keeps posting, so the zone stays Normal and taints are added.
		for _, n := range []string{"node0", "node1"} {
			if _, err := c.UpsertNode(t12, node(n, t2012, nil, ready)); err != nil {
				t.Fatal(err)
			}
		}
		got := time.Duration(-1)
		for at := t12; !at.After(marked.Add(10 * time.Second)); at = at.Add(5 * time.Second) {
			if _, err := c.UpdateStatus(at, "node1", []v1.NodeCondition{cond(v1.NodeReady, v1.ConditionTrue, at, t12)}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Monitor(at, nil); err != nil {
				t.Fatal(err)
			}
			p, err := c.Taint(at)
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range p.Taints {
				if ch.Node == "node0" && ch.Taint.Key == nc.TaintUnreachable && ch.Taint.Effect == v1.TaintEffectNoExecute && ch.Added && got < 0 {
					got = at.Sub(marked)
				}
			}
		}
		if got != tc.want {
			t.Errorf("%s %v: unreachable:NoExecute added %v after the pass that marked Unknown, want %v", tc.row, tc.v, got, tc.want)
		}
	}
}

// TestVersionNCV2 is docs/versions.md row NC-V2: the live Lease lookup
// before marking Unknown is the NodeControllerLeaseCircuitBreaker gate,
// which exists from 1.37: with 1.36's defaults a newer live Lease does not
// stop the marking; with 1.37's the node is skipped.
func TestVersionNCV2(t *testing.T) {
	live := &liveLeases{rv: map[string]string{"node0": "2"}}
	for _, tc := range []struct {
		row         string
		v           kubeversion.Version
		wantWrites  int
		wantSkipped int
	}{
		{"NC-V2", kubeversion.V1_33, 1, 0},
		{"NC-V2", kubeversion.V1_36, 1, 0},
		{"NC-V2", kubeversion.V1_37, 0, 1},
	} {
		c, err := nc.NewController(nc.DefaultControllerOptionsFor(tc.v))
		if err != nil {
			t.Fatal(err)
		}
		c.UpsertNode(t12, node("node0", t2012, nil, cond(v1.NodeReady, v1.ConditionTrue, t12, t12)))
		c.UpsertLease("node0", t12, "1")
		if _, err := c.Monitor(t12, nil); err != nil {
			t.Fatal(err)
		}
		p, err := c.Monitor(t12.Add(60*time.Second), live)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Writes) != tc.wantWrites || len(p.Skipped) != tc.wantSkipped {
			t.Errorf("%s %v: %d writes, %d skipped; want %d, %d", tc.row, tc.v, len(p.Writes), len(p.Skipped), tc.wantWrites, tc.wantSkipped)
		}
	}
}

// TestInvalidVersionRefused: every entry point that takes options with a
// Version refuses one that is none of kubeversion's constants, set in the
// options or kept by a DefaultXFor, with an *OptionError naming the Version
// field that matches ErrInvalidOptions and kubeversion.ErrUnsupportedVersion.
func TestInvalidVersionRefused(t *testing.T) {
	const bad = kubeversion.Version(99)
	kset := nc.DefaultKubeletOptions()
	kset.Version = bad
	cset := nc.DefaultControllerOptions()
	cset.Version = bad
	oboth := nc.DefaultOptions()
	oboth.Kubelet.Version = bad
	octrl := nc.DefaultOptions()
	octrl.Controller.Version = bad
	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"KubeletOptions.Validate: invalid Version refused", kset.Validate, "Version"},
		{"ControllerOptions.Validate: invalid Version refused", cset.Validate, "Version"},
		{"Options.Validate: invalid Kubelet.Version refused", oboth.Validate, "Kubelet.Version"},
		{"Options.Validate: invalid Controller.Version refused", octrl.Validate, "Controller.Version"},
		{"Options.Validate: DefaultOptionsFor(invalid) keeps it and is refused", nc.DefaultOptionsFor(bad).Validate, "Kubelet.Version"},
		{"NewKubelet: invalid Version refused", func() error { _, err := nc.NewKubelet(kset); return err }, "Version"},
		{"NewKubelet: DefaultKubeletOptionsFor(invalid) refused", func() error { _, err := nc.NewKubelet(nc.DefaultKubeletOptionsFor(bad)); return err }, "Version"},
		{"NewLeaseRenewer: invalid Version refused", func() error { _, err := nc.NewLeaseRenewer(kset, "node-a"); return err }, "Version"},
		{"NewController: invalid Version refused", func() error { _, err := nc.NewController(cset); return err }, "Version"},
		{"NewController: DefaultControllerOptionsFor(invalid) refused", func() error { _, err := nc.NewController(nc.DefaultControllerOptionsFor(bad)); return err }, "Version"},
	}
	for _, tt := range tests {
		err := tt.call()
		var oe *nc.OptionError
		var ve *kubeversion.ValueError
		if !errors.Is(err, nc.ErrInvalidOptions) || !errors.Is(err, kubeversion.ErrUnsupportedVersion) ||
			!errors.As(err, &oe) || oe.Field != tt.field || !errors.As(err, &ve) || ve.Version != bad {
			t.Errorf("%s: err = %v; want a *OptionError on %s matching ErrInvalidOptions and ErrUnsupportedVersion", tt.name, err, tt.field)
		}
	}
	want := "nodecondition: invalid options: Controller.Version kubeversion.Version(99): unsupported Kubernetes version, supported are 1.33 to 1.37"
	if err := octrl.Validate(); err == nil || err.Error() != want {
		t.Errorf("error text %v; want %s", err, want)
	}
}
