package statussync

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/podphase"
)

// TestDefaultOptionsFor: DefaultOptions is the zero Version's, and each
// minor's options carry containerstate's gates for it and the minor.
func TestDefaultOptionsFor(t *testing.T) {
	if d, z := DefaultOptions(), DefaultOptionsFor(kubeversion.Version(0)); d.Features != z.Features || d.Version != z.Version || d.Mirrors != nil {
		t.Fatalf("DefaultOptions %+v is not 1.37's %+v", d, z)
	}
	for _, v := range kubeversion.Supported() {
		o := DefaultOptionsFor(v)
		if o.Features != containerstate.DefaultFeaturesFor(v) || o.Version != v || o.Mirrors != nil {
			t.Errorf("DefaultOptionsFor(%v) = %+v", v, o)
		}
		if _, err := NewCache(o); err != nil {
			t.Errorf("NewCache(DefaultOptionsFor(%v)): %v", v, err)
		}
	}
}

// TestVersionSSV1 is docs/versions.md row SS-V1: from 1.34
// status.observedGeneration is the pod's generation; in 1.33
// (PodObservedGenerationTracking alpha and off) only when the pod's status
// already carries one, and then it follows the generation.
func TestVersionSSV1(t *testing.T) {
	tests := []struct {
		row, reason string
		v           kubeversion.Version
		apiObserved int64 // the pod's status.observedGeneration as the kubelet received it
		want        int64
	}{
		{row: "SS-V1", reason: "1.33: gate off and no value yet, so none is written", v: kubeversion.V1_33, want: 0},
		{row: "SS-V1", reason: "1.33: a value set while the gate was on is kept current, not cleared", v: kubeversion.V1_33, apiObserved: 2, want: 5},
		{row: "SS-V1", reason: "1.34: the gate is on, the generation is observed", v: kubeversion.V1_34, want: 5},
		{row: "SS-V1", reason: "1.37: the gate is locked on", v: kubeversion.V1_37, want: 5},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptionsFor(tt.v))
		pod := testPod("u1", "p1")
		pod.Generation = 5
		pod.Status.ObservedGeneration = tt.apiObserved
		h.set(pod, runningStatus("app"))
		s, _ := h.cache.GetPodStatus("u1")
		if s.ObservedGeneration != tt.want {
			t.Errorf("%s %v: %s: observedGeneration %d, want %d", tt.row, tt.v, tt.reason, s.ObservedGeneration, tt.want)
		}
	}
}

// TestVersionSSV1Conditions: the Ready and ContainersReady conditions the
// cache regenerates on a readiness change follow podphase's rule of the same
// profile (docs/versions.md row PP-V3; kubelet SetContainerReadiness, spec
// section 7): in 1.33 no observedGeneration where the old condition had none,
// from 1.34 the pod's generation.
func TestVersionSSV1Conditions(t *testing.T) {
	for _, tc := range []struct {
		row  string
		v    kubeversion.Version
		want int64
	}{
		{"PP-V3 through SS", kubeversion.V1_33, 0},
		{"PP-V3 through SS", kubeversion.V1_34, 5},
		{"PP-V3 through SS", kubeversion.V1_37, 5},
	} {
		c, err := NewCache(DefaultOptionsFor(tc.v))
		if err != nil {
			t.Fatal(err)
		}
		pod := testPod("u1", "p1")
		pod.Generation = 5
		if _, _, err := c.SetPodStatus(pod, runningStatus("app"), t0); err != nil {
			t.Fatal(err)
		}
		if _, err := c.SetContainerReadiness("u1", "c://app", true, t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		s, _ := c.GetPodStatus("u1")
		for _, typ := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
			var got *v1.PodCondition
			for i := range s.Conditions {
				if s.Conditions[i].Type == typ {
					got = &s.Conditions[i]
				}
			}
			if got == nil || got.Status != v1.ConditionTrue || got.ObservedGeneration != tc.want {
				t.Errorf("%s %v: %s = %+v, want True with observedGeneration %d", tc.row, tc.v, typ, got, tc.want)
			}
		}
	}
}

// TestVersionSSV4 is docs/versions.md row SS-V4, where the profile changes
// nothing: extendedResourceClaimStatus (API types of 1.34),
// nodeAllocatableResourceClaimStatuses (1.36) and volumeHealth (1.37) reach
// the kubelet in the same minor as the rule that keeps them, so an older
// kubelet, which cannot decode them, leaves the server's value alone, as
// the keep does: in every profile the merge keeps the API's claim
// statuses, the patch does not touch them, and a status without volume
// health keeps the cached one.
func TestVersionSSV4(t *testing.T) {
	api := v1.PodStatus{
		Phase:                                v1.PodRunning,
		ExtendedResourceClaimStatus:          &v1.PodExtendedResourceClaimStatus{ResourceClaimName: "ext"},
		NodeAllocatableResourceClaimStatuses: []v1.NodeAllocatableResourceClaimStatus{{ResourceClaimName: "alloc"}},
	}
	health := []v1.PodVolumeHealth{{Name: "data"}}
	for _, v := range []kubeversion.Version{kubeversion.V1_33, kubeversion.V1_35, kubeversion.V1_37} {
		o := DefaultOptionsFor(v)
		kubelet := runningStatus("app")
		merged := o.Merge(&api, &kubelet, false)
		if merged.ExtendedResourceClaimStatus == nil || len(merged.NodeAllocatableResourceClaimStatuses) != 1 {
			t.Errorf("SS-V4 %v: the merge dropped the API's claim statuses: %+v", v, merged)
		}
		patch, _, err := Patch("u1", "", &api, &merged)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(patch, []byte("ResourceClaimStatus")) {
			t.Errorf("SS-V4 %v: the patch touches a claim status: %s", v, patch)
		}

		h := newHarness(t, o)
		pod := testPod("u1", "p1")
		withHealth := runningStatus("app")
		withHealth.VolumeHealth = health
		h.set(pod, withHealth)
		without := runningStatus("app")
		without.Message = "changed"
		h.set(pod, without)
		if s, _ := h.cache.GetPodStatus("u1"); len(s.VolumeHealth) != 1 {
			t.Errorf("SS-V4 %v: volumeHealth not kept from the cached status: %+v", v, s.VolumeHealth)
		}
	}
}

// TestPropertySSV1 models row SS-V1 over any sequence of SetPodStatus calls
// of one pod, in every profile: the cached observedGeneration is the highest
// generation written so far (spec section 6 step 5: it never goes down),
// where a call writes the pod's generation from 1.34 on, and in 1.33 only
// when the pod's status already carries an observedGeneration.
func TestPropertySSV1(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.SampledFrom(kubeversion.Supported()).Draw(t, "version")
		c, err := NewCache(DefaultOptionsFor(v))
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		steps := rapid.IntRange(1, 8).Draw(t, "steps")
		for i := range steps {
			pod := testPod("u1", "p1")
			pod.Generation = rapid.Int64Range(1, 6).Draw(t, "generation")
			pod.Status.ObservedGeneration = rapid.SampledFrom([]int64{0, 0, 1, pod.Generation}).Draw(t, "apiObserved")
			if v.AtLeast(kubeversion.V1_34) || pod.Status.ObservedGeneration != 0 {
				want = max(want, pod.Generation)
			}
			s, _, err := c.SetPodStatus(pod, runningStatus("app"), t0.Add(time.Duration(i)*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if s.ObservedGeneration != want {
				t.Fatalf("%v, step %d (generation %d, API observed %d): observedGeneration %d, want %d", v, i, pod.Generation, pod.Status.ObservedGeneration, s.ObservedGeneration, want)
			}
		}
	})
}

// TestInvalidVersionRefused: NewCache refuses a Version that is none of
// kubeversion's constants, set in the options or kept by DefaultOptionsFor,
// with an *OptionError on Version matching ErrInvalidOptions and
// kubeversion.ErrUnsupportedVersion; the methods of Options without an error
// answer as the zero Version.
func TestInvalidVersionRefused(t *testing.T) {
	set := DefaultOptions()
	set.Version = kubeversion.Version(99)
	tests := []struct {
		name string
		opts Options
	}{
		{"NewCache: invalid Version refused (set in Options)", set},
		{"NewCache: invalid Version refused (DefaultOptionsFor keeps it)", DefaultOptionsFor(kubeversion.Version(5))},
	}
	for _, tt := range tests {
		c, err := NewCache(tt.opts)
		var oe *OptionError
		var ve *kubeversion.ValueError
		if c != nil || !errors.Is(err, ErrInvalidOptions) || !errors.Is(err, kubeversion.ErrUnsupportedVersion) ||
			!errors.As(err, &oe) || oe.Field != "Version" || !errors.As(err, &ve) || ve.Version != tt.opts.Version {
			t.Errorf("%s: NewCache = %v, %v; want an *OptionError on Version matching ErrInvalidOptions and ErrUnsupportedVersion", tt.name, c, err)
		}
	}
	if _, err := NewCache(set); err == nil ||
		err.Error() != "statussync: invalid options: Version kubeversion.Version(99): unsupported Kubernetes version, supported are 1.33 to 1.37" {
		t.Errorf("error text %v", err)
	}
	zero := set
	zero.Version = kubeversion.Default
	for _, ct := range []v1.PodConditionType{v1.PodReady, v1.PodReadyToStartContainers, v1.AllContainersRestarting, v1.DisruptionTarget, "custom"} {
		if set.OwnershipOf(ct) != zero.OwnershipOf(ct) {
			t.Errorf("OwnershipOf(%s): invalid Version answers differently from 1.37", ct)
		}
	}
}

// serverCondition returns the condition of type ct of the server's copy of
// pod default/p1, or nil.
func serverCondition(t *testing.T, h *harness, ct v1.PodConditionType) *v1.PodCondition {
	t.Helper()
	p, ok := h.api.Pod("default", "p1")
	if !ok {
		t.Fatal("pod default/p1 is gone from the server")
	}
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == ct {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// driftPass makes change to the server's copy of default/p1 (another
// writer), shows the engine the new copy and runs a full pass (drift
// detection, spec section 4), returning the requests it made.
func driftPass(h *harness, change func(*v1.Pod)) map[string]int {
	if err := h.api.Update("default", "p1", change); err != nil {
		h.t.Fatal(err)
	}
	last := h.api.Requests()
	server, _ := h.api.Pod("default", "p1")
	h.engine.Observe(server)
	h.engine.SyncOnce(context.Background(), true)
	return h.requests(&last)
}

// TestVersionSSV2 is docs/versions.md row SS-V2, through the cache and the
// planner: an AllContainersRestarting condition another writer puts on the
// server is the kubelet's to correct from 1.36 (the
// RestartAllContainersOnContainerExits gate on: the kubelet owns it, its
// status has none, so a full pass sees drift and the patch removes it) and
// left alone in 1.35 (gate off: not the kubelet's, kept from the API by the
// merge, no drift).
func TestVersionSSV2(t *testing.T) {
	for _, tc := range []struct {
		v     kubeversion.Version
		owned bool
	}{{kubeversion.V1_35, false}, {kubeversion.V1_36, true}, {kubeversion.V1_37, true}} {
		h := newHarness(t, DefaultOptionsFor(tc.v))
		pod := h.create(testPod("u1", "p1"))
		h.set(pod, runningStatus("app"))
		h.sync()
		reqs := driftPass(h, func(p *v1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, cond(v1.AllContainersRestarting, v1.ConditionTrue))
		})
		got := serverCondition(t, h, v1.AllContainersRestarting)
		if tc.owned && (got != nil || reqs["patch"] != 1) {
			t.Errorf("SS-V2 %v: the kubelet owns AllContainersRestarting: want it removed by one patch; got %+v, requests %v", tc.v, got, reqs)
		}
		if !tc.owned && (got == nil || got.Status != v1.ConditionTrue || reqs["patch"] != 0) {
			t.Errorf("SS-V2 %v: AllContainersRestarting is not the kubelet's: want it kept, no patch; got %+v, requests %v", tc.v, got, reqs)
		}
	}
}

// TestVersionSSV3 is docs/versions.md row SS-V3, through podphase, the
// cache and the planner: the kubelet of each profile computes a pending
// pod's conditions with no sandbox yet (podphase of the same minor) and
// syncs them; another writer then sets PodReadyToStartContainers as the
// other minor writes it. Drift detection compares reason and message, so
// a 1.37 kubelet writes back reason PodSandboxNotReady and its message
// over 1.36's bare False, and a 1.36 kubelet removes 1.37's.
func TestVersionSSV3(t *testing.T) {
	for _, tc := range []struct {
		v, other            kubeversion.Version
		wantReason, wantMsg string
	}{
		{kubeversion.V1_36, kubeversion.V1_37, "", ""},
		{kubeversion.V1_37, kubeversion.V1_36, podphase.ReasonPodSandboxNotReady, "no pod sandbox exists"},
	} {
		h := newHarness(t, DefaultOptionsFor(tc.v))
		pod := h.create(testPod("u1", "p1"))
		conditions := func(v kubeversion.Version) []v1.PodCondition {
			s := v1.PodStatus{Phase: v1.PodPending}
			conds, err := podphase.DefaultOptionsFor(v).Conditions(podphase.ConditionsInput{Pod: pod, Status: &s, Sandbox: podphase.SandboxMissing, Now: t0})
			if err != nil {
				t.Fatal(err)
			}
			return conds
		}
		status := v1.PodStatus{Phase: v1.PodPending, Conditions: conditions(tc.v)}
		h.set(pod, status)
		h.sync()
		c := serverCondition(t, h, v1.PodReadyToStartContainers)
		if c == nil || c.Status != v1.ConditionFalse || c.Reason != tc.wantReason || c.Message != tc.wantMsg {
			t.Fatalf("SS-V3 %v: synced PodReadyToStartContainers %+v; want False %q %q", tc.v, c, tc.wantReason, tc.wantMsg)
		}
		var others v1.PodCondition
		for _, oc := range conditions(tc.other) {
			if oc.Type == v1.PodReadyToStartContainers {
				others = oc
			}
		}
		reqs := driftPass(h, func(p *v1.Pod) {
			for i := range p.Status.Conditions {
				if p.Status.Conditions[i].Type == v1.PodReadyToStartContainers {
					p.Status.Conditions[i].Reason, p.Status.Conditions[i].Message = others.Reason, others.Message
				}
			}
		})
		c = serverCondition(t, h, v1.PodReadyToStartContainers)
		if reqs["patch"] != 1 || c == nil || c.Reason != tc.wantReason || c.Message != tc.wantMsg {
			t.Errorf("SS-V3 %v: over %v's reason %q and message %q, want one patch writing %q %q back; got %+v, requests %v",
				tc.v, tc.other, others.Reason, others.Message, tc.wantReason, tc.wantMsg, c, reqs)
		}
	}
}
