package statussync

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/internal/podcond"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

// Section 7 SetPodStatus and section 6 step 5: the status's
// observedGeneration is the pod's generation, and it never goes down.
func TestObservedGenerationRule(t *testing.T) {
	tests := []struct {
		id, reason  string
		generations []int64 // the pod's generation at each SetPodStatus of the same status
		want        int64
		wantVersion uint64
	}{
		{id: "7 SetPodStatus observedGeneration", reason: "the first status observes the pod's generation", generations: []int64{3}, want: 3, wantVersion: 1},
		{id: "6.1 observedGeneration compared", reason: "a new generation is a new version even with the same status", generations: []int64{1, 2}, want: 2, wantVersion: 2},
		{id: "6 step 5 monotonic", reason: "an older generation (a stale pod object) does not take it back", generations: []int64{2, 1}, want: 2, wantVersion: 1},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		for _, g := range tt.generations {
			pod := testPod("u1", "p1")
			pod.Generation = g
			h.set(pod, runningStatus("app"))
		}
		s, _ := h.cache.GetPodStatus("u1")
		if s.ObservedGeneration != tt.want || h.cache.Version("u1") != tt.wantVersion {
			t.Errorf("%s: %s: observedGeneration %d version %d, want %d version %d", tt.id, tt.reason, s.ObservedGeneration, h.cache.Version("u1"), tt.want, tt.wantVersion)
		}
	}
}

// Section 6 step 6 (normalizeStatus), through the exported Normalize:
// container and ephemeral container statuses sorted by name, init
// container statuses put in spec order, whatever order they came in.
func TestNormalizeOrderRule(t *testing.T) {
	spec := &v1.PodSpec{
		InitContainers:      []v1.Container{{Name: "i0"}, {Name: "i1"}, {Name: "i2"}},
		Containers:          []v1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}},
		EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug-x"}}, {EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug-y"}}},
	}
	// A name "a#1" is container a's status with container ID 1: two
	// statuses of one name that the test tells apart.
	names := func(list []v1.ContainerStatus) []string {
		var out []string
		for _, cs := range list {
			n := cs.Name
			if cs.ContainerID != "" {
				n += "#" + cs.ContainerID
			}
			out = append(out, n)
		}
		return out
	}
	statuses := func(n ...string) []v1.ContainerStatus {
		var out []v1.ContainerStatus
		for _, s := range n {
			name, id, _ := strings.Cut(s, "#")
			out = append(out, v1.ContainerStatus{Name: name, ContainerID: id})
		}
		return out
	}
	tests := []struct {
		id, reason                 string
		spec                       *v1.PodSpec
		init, regular, ephemeral   []string
		wantInit, wantReg, wantEph []string
		dropUnknown                bool // compare the statuses of the spec's init containers only
	}{
		{id: "6 step 6 init spec order", reason: "init container statuses out of spec order are put in spec order",
			spec: spec, init: []string{"i2", "i0", "i1"}, wantInit: []string{"i0", "i1", "i2"}},
		{id: "6 step 6 init two swapped", reason: "the second init container reported before the first is put after it",
			spec: spec, init: []string{"i1", "i0"}, wantInit: []string{"i0", "i1"}},
		{id: "6 step 6 init subset", reason: "statuses of some init containers only, in spec order, stay as they are",
			spec: spec, init: []string{"i1", "i2"}, wantInit: []string{"i1", "i2"}},
		{id: "6 step 6 init nil spec", reason: "without a spec the init container statuses keep their order",
			init: []string{"i2", "i0"}, wantInit: []string{"i2", "i0"}},
		{id: "6 step 6 sorted by name", reason: "container statuses are sorted by name",
			spec: spec, regular: []string{"c", "a", "b"}, wantReg: []string{"a", "b", "c"}},
		{id: "6 step 6 ephemeral sorted by name", reason: "ephemeral container statuses are sorted by name",
			spec: spec, ephemeral: []string{"debug-y", "debug-x"}, wantEph: []string{"debug-x", "debug-y"}},
		{id: "6 step 6 init unknown first", reason: "a status the spec has no init container for does not keep the others out of spec order",
			spec: spec, init: []string{"ghost", "i1", "i0"}, wantInit: []string{"i0", "i1"}, dropUnknown: true},
		{id: "6 step 6 init unknown behind", reason: "as the kubelet's SortInitContainerStatuses swaps them, statuses of names the spec lacks end up behind the known ones",
			spec: spec, init: []string{"ghost", "i1", "i0"}, wantInit: []string{"i0", "i1", "ghost"}},
		{id: "6 step 6 init unknown swapped", reason: "the swaps leave unknown statuses in the order they make: i0 swapped with the first of two unknown ones puts that one last",
			spec: spec, init: []string{"g1", "g2", "i0"}, wantInit: []string{"i0", "g2", "g1"}},
		{id: "6 step 6 init same name", reason: "of two init container statuses of one name, the kubelet's SortInitContainerStatuses moves only the first into its spec place; the second stays behind",
			spec: spec, init: []string{"i1", "i0#1", "i0#2"}, wantInit: []string{"i0#1", "i1", "i0#2"}},
		{id: "6 step 6 same name", reason: "container statuses of the same name keep their order, as the kubelet's sort leaves them",
			spec: spec, regular: []string{"b", "a#1", "a#2"}, wantReg: []string{"a#1", "a#2", "b"}},
	}
	for _, tt := range tests {
		s := &v1.PodStatus{InitContainerStatuses: statuses(tt.init...), ContainerStatuses: statuses(tt.regular...), EphemeralContainerStatuses: statuses(tt.ephemeral...)}
		Normalize(tt.spec, s)
		if tt.dropUnknown {
			s.InitContainerStatuses = slices.DeleteFunc(s.InitContainerStatuses, func(cs v1.ContainerStatus) bool { return !hasContainer(spec.InitContainers, cs.Name) })
		}
		for _, c := range []struct {
			what      string
			got, want []string
		}{{"init", names(s.InitContainerStatuses), tt.wantInit}, {"regular", names(s.ContainerStatuses), tt.wantReg}, {"ephemeral", names(s.EphemeralContainerStatuses), tt.wantEph}} {
			if d := cmp.Diff(c.want, c.got); d != "" {
				t.Errorf("%s: %s: %s container statuses (-want +got):\n%s", tt.id, tt.reason, c.what, d)
			}
		}
	}
}

// Section 6 step 4: startTime is copied from the old status when that one
// is set and not zero; otherwise the new status's own is kept, and a
// missing or zero one becomes now.
func TestStartTimeRule(t *testing.T) {
	earlier := metav1.NewTime(t0.Add(-time.Minute))
	own := metav1.NewTime(t0.Add(-30 * time.Second))
	zero := metav1.Time{}
	now := t0.Add(time.Hour)
	tests := []struct {
		id, reason string
		podStart   *metav1.Time // the pod's status, the old status when nothing is cached
		newStart   *metav1.Time
		want       time.Time
	}{
		{id: "6 step 4 old kept", reason: "a set old startTime wins over the new status's", podStart: &earlier, newStart: &own, want: earlier.Time},
		{id: "6 step 4 new kept", reason: "without an old startTime the new status's own is kept", newStart: &own, want: own.Time},
		{id: "6 step 4 none", reason: "no startTime anywhere: now", want: now},
		{id: "6 step 4 old zero", reason: "an old startTime that is set but zero counts as none: the new one is kept", podStart: &zero, newStart: &own, want: own.Time},
		{id: "6 step 4 old zero, new none", reason: "an old zero startTime is not copied: now", podStart: &zero, want: now},
		{id: "6 step 4 new zero", reason: "a new startTime that is set but zero becomes now", newStart: &zero, want: now},
	}
	for _, tt := range tests {
		c := defaultCache(t)
		pod := testPod("u1", "p1")
		pod.Status.StartTime = tt.podStart
		s := runningStatus("app")
		s.StartTime = tt.newStart
		got, _, err := c.SetPodStatus(pod, s, now)
		if err != nil {
			t.Fatalf("%s: %v", tt.id, err)
		}
		if got.StartTime == nil || !got.StartTime.Time.Equal(tt.want) {
			t.Errorf("%s: %s: startTime %v, want %v", tt.id, tt.reason, got.StartTime, tt.want)
		}
	}
}

// Section 6 step 4, VolumeHealth: a new status without volume health keeps
// the old status's entries (they are set on their own path); a new status
// with entries replaces them.
func TestVolumeHealthRule(t *testing.T) {
	healthy := []v1.PodVolumeHealth{{Name: "data"}}
	other := []v1.PodVolumeHealth{{Name: "logs"}}
	tests := []struct {
		id, reason    string
		first, second []v1.PodVolumeHealth
		want          []v1.PodVolumeHealth
	}{
		{id: "6 step 4 volumeHealth kept", reason: "a status without volume health keeps the cached entries", first: healthy, want: healthy},
		{id: "6 step 4 volumeHealth replaced", reason: "a status with its own volume health replaces the cached entries", first: healthy, second: other, want: other},
		{id: "6 step 4 volumeHealth first", reason: "volume health on a pod that had none is stored", second: other, want: other},
		{id: "6 step 4 volumeHealth none", reason: "no volume health on either side stays none"},
	}
	for _, tt := range tests {
		h := newHarness(t, DefaultOptions())
		pod := testPod("u1", "p1")
		s := runningStatus("app")
		s.VolumeHealth = tt.first
		h.set(pod, s)
		s = runningStatus("app")
		s.Message = "second"
		s.VolumeHealth = tt.second
		h.set(pod, s)
		got, _ := h.cache.GetPodStatus(pod.UID)
		if d := cmp.Diff(tt.want, got.VolumeHealth); d != "" {
			t.Errorf("%s: %s: volumeHealth (-want +got):\n%s", tt.id, tt.reason, d)
		}
	}
}

// SetPodStatus's contract: a status for a container the spec lacks is
// refused; the check covers every container kind, ephemeral containers
// included.
func TestUnknownContainerRule(t *testing.T) {
	debug := v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug"}}
	tests := []struct {
		id, reason string
		ephemeral  []v1.EphemeralContainer
		status     string // the ephemeral container status's name
		wantErr    bool
	}{
		{id: "SetPodStatus ephemeral known", reason: "a status of the spec's ephemeral container is accepted",
			ephemeral: []v1.EphemeralContainer{debug}, status: "debug"},
		{id: "SetPodStatus ephemeral second", reason: "a status of the spec's second ephemeral container is accepted",
			ephemeral: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "first"}}, debug}, status: "debug"},
		{id: "SetPodStatus ephemeral unknown", reason: "a status of an ephemeral container the spec lacks is refused",
			ephemeral: []v1.EphemeralContainer{debug}, status: "ghost", wantErr: true},
	}
	for _, tt := range tests {
		c := defaultCache(t)
		pod := testPod("u1", "p1")
		pod.Spec.EphemeralContainers = tt.ephemeral
		s := runningStatus("app")
		s.EphemeralContainerStatuses = []v1.ContainerStatus{{Name: tt.status, State: runningState()}}
		_, _, err := c.SetPodStatus(pod, s, t0)
		if gotErr := errors.Is(err, ErrUnknownContainer); gotErr != tt.wantErr {
			t.Errorf("%s: %s: error %v", tt.id, tt.reason, err)
		}
		if cached := c.Len() == 1; cached == tt.wantErr {
			t.Errorf("%s: %s: cached %v", tt.id, tt.reason, cached)
		}
	}
}

// Section 11, BackfillPodResizeConditions: every pod of the list has its
// resize conditions rebuilt; a nil entry is skipped, not the end of the
// list.
func TestBackfillResizeRule(t *testing.T) {
	pending := v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: ResizeReasonDeferred}
	inProgress := v1.PodCondition{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, ObservedGeneration: 4}
	pod := func(uid types.UID, conds ...v1.PodCondition) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: v1.PodStatus{Conditions: conds}}
	}
	tests := []struct {
		id, reason string
		pods       []*v1.Pod
		want       map[types.UID][]v1.PodCondition
	}{
		{id: "11 Backfill", reason: "both conditions come back, pending first",
			pods: []*v1.Pod{pod("u1", inProgress, cond(v1.PodReady, v1.ConditionTrue), pending)},
			want: map[types.UID][]v1.PodCondition{"u1": {pending, inProgress}}},
		{id: "11 Backfill nil", reason: "a nil pod in the list is skipped and the pods after it are backfilled",
			pods: []*v1.Pod{pod("u1", pending), nil, pod("u2", inProgress)},
			want: map[types.UID][]v1.PodCondition{"u1": {pending}, "u2": {inProgress}}},
		{id: "11 Backfill none", reason: "a pod without resize conditions gets none",
			pods: []*v1.Pod{pod("u1", cond(v1.PodReady, v1.ConditionTrue))},
			want: map[types.UID][]v1.PodCondition{"u1": nil}},
	}
	for _, tt := range tests {
		c := defaultCache(t)
		c.BackfillResizeConditions(tt.pods)
		for uid, want := range tt.want {
			if d := cmp.Diff(want, c.ResizeConditions(uid)); d != "" {
				t.Errorf("%s: %s: pod %s (-want +got):\n%s", tt.id, tt.reason, uid, d)
			}
		}
	}
}

// PlannerOptions' and EngineOptions' contract: zero periods are refused,
// not defaulted, and RetryMax must be at least RetryInitial.
func TestOptionsValidationRule(t *testing.T) {
	tests := []struct {
		id, reason string
		change     func(*EngineOptions)
		wantField  string // "" when accepted
	}{
		{id: "PlannerOptions defaults", reason: "the defaults are valid", change: func(*EngineOptions) {}},
		{id: "PlannerOptions RetryInitial zero", reason: "a zero RetryInitial is refused", change: func(o *EngineOptions) { o.Planner.RetryInitial = 0 },
			wantField: "Planner.RetryInitial"},
		{id: "PlannerOptions RetryInitial negative", reason: "a negative RetryInitial is refused", change: func(o *EngineOptions) { o.Planner.RetryInitial = -time.Second },
			wantField: "Planner.RetryInitial"},
		{id: "PlannerOptions RetryMax below", reason: "a RetryMax below RetryInitial is refused", change: func(o *EngineOptions) { o.Planner.RetryMax = o.Planner.RetryInitial - 1 },
			wantField: "Planner.RetryMax"},
		{id: "PlannerOptions RetryMax equal", reason: "a RetryMax equal to RetryInitial (no doubling) is accepted", change: func(o *EngineOptions) { o.Planner.RetryMax = o.Planner.RetryInitial }},
		{id: "EngineOptions FullSyncPeriod zero", reason: "a zero FullSyncPeriod is refused", change: func(o *EngineOptions) { o.FullSyncPeriod = 0 },
			wantField: "FullSyncPeriod"},
		{id: "EngineOptions FullSyncPeriod tiny", reason: "any positive FullSyncPeriod is accepted", change: func(o *EngineOptions) { o.FullSyncPeriod = time.Nanosecond }},
	}
	for _, tt := range tests {
		c := defaultCache(t)
		eo := DefaultEngineOptions()
		tt.change(&eo)
		_, err := NewEngine(eo, c, statussynctest.NewAPI(1))
		_, perr := NewPlanner(eo.Planner, c)
		var oe *OptionError
		switch {
		case tt.wantField == "" && (err != nil || perr != nil):
			t.Errorf("%s: %s: NewEngine: %v, NewPlanner: %v", tt.id, tt.reason, err, perr)
		case tt.wantField != "" && (!errors.As(err, &oe) || oe.Field != tt.wantField || !errors.Is(err, ErrInvalidOptions)):
			t.Errorf("%s: %s: NewEngine: %v, want an *OptionError for %s", tt.id, tt.reason, err, tt.wantField)
		case tt.wantField != "" && tt.wantField != "FullSyncPeriod" && !errors.Is(perr, ErrInvalidOptions):
			t.Errorf("%s: %s: NewPlanner: %v, want it refused", tt.id, tt.reason, perr)
		}
	}
}

// Section 6.1, isPodStatusByKubeletEqual: owned and shared conditions are
// compared by type, status, reason and message; their times and
// observedGeneration, conditions others own and the claim statuses are not.
func TestEqualByKubeletRule(t *testing.T) {
	o := DefaultOptions()
	base := func(c ...v1.PodCondition) *v1.PodStatus {
		s := runningStatus("app")
		s.Conditions = c
		return &s
	}
	ready := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]"}
	with := func(change func(*v1.PodCondition)) v1.PodCondition {
		c := ready
		change(&c)
		return c
	}
	dt := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "TerminationByKubelet"}
	tests := []struct {
		id, reason string
		old, new   *v1.PodStatus
		want       bool
	}{
		{id: "6.1 same", reason: "the same status is equal", old: base(ready), new: base(ready), want: true},
		{id: "6.1 status", reason: "an owned condition whose status changed differs", old: base(ready), new: base(with(func(c *v1.PodCondition) { c.Status = v1.ConditionTrue })), want: false},
		{id: "6.1 reason", reason: "an owned condition whose reason alone changed differs", old: base(ready), new: base(with(func(c *v1.PodCondition) { c.Reason = "PodCompleted" })), want: false},
		{id: "6.1 message", reason: "an owned condition whose message alone changed differs", old: base(ready), new: base(with(func(c *v1.PodCondition) { c.Message = "other" })), want: false},
		{id: "6.1 times", reason: "the probe and transition times are ignored",
			old: base(ready), new: base(with(func(c *v1.PodCondition) {
				c.LastProbeTime, c.LastTransitionTime = metav1.NewTime(t0), metav1.NewTime(t0)
			})), want: true},
		{id: "6.1 condition observedGeneration", reason: "a condition's observedGeneration is ignored", old: base(ready), new: base(with(func(c *v1.PodCondition) { c.ObservedGeneration = 7 })), want: true},
		{id: "6.1 shared", reason: "DisruptionTarget, shared, is compared", old: base(ready), new: base(ready, dt), want: false},
		{id: "6.1 not owned", reason: "a condition others own is ignored", old: base(ready), new: base(ready, cond("example.com/gate", v1.ConditionTrue)), want: true},
		{id: "6.1 claims", reason: "resource claim statuses are ignored", old: base(ready),
			new: func() *v1.PodStatus {
				s := base(ready)
				s.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu"}}
				return s
			}(), want: true},
		{id: "6.1 phase", reason: "every other field is compared", old: base(ready),
			new: func() *v1.PodStatus { s := base(ready); s.Phase = v1.PodSucceeded; return s }(), want: false},
		{id: "6.1 nil", reason: "a nil status is an empty one", old: nil, new: &v1.PodStatus{}, want: true},
	}
	for _, tt := range tests {
		if got := o.EqualByKubelet(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: %s: EqualByKubelet %v, want %v", tt.id, tt.reason, got, tt.want)
		}
		if got := o.EqualByKubelet(tt.new, tt.old); got != tt.want {
			t.Errorf("%s: %s: EqualByKubelet with the sides swapped %v, want %v", tt.id, tt.reason, got, tt.want)
		}
	}
}

// Section 8 step 1, the shared DisruptionTarget: the kubelet's copy is
// written only on the move into a terminal phase with nothing left
// running, and then keeps the API's lastTransitionTime when the API
// already has the same status.
func TestDisruptionTargetMergeRule(t *testing.T) {
	o := DefaultOptions()
	apiTime, kubeletTime := metav1.NewTime(t0), metav1.NewTime(t0.Add(time.Minute))
	dt := func(s v1.ConditionStatus, reason string, at metav1.Time) v1.PodCondition {
		return v1.PodCondition{Type: v1.DisruptionTarget, Status: s, Reason: reason, LastTransitionTime: at}
	}
	tests := []struct {
		id, reason string
		apiPhase   v1.PodPhase
		apiDT      []v1.PodCondition
		kubePhase  v1.PodPhase
		kubeDT     v1.PodCondition
		couldRun   bool
		want       *v1.PodCondition // nil: no DisruptionTarget
	}{
		{id: "8.1 DT not terminal", reason: "a pod that stays Running does not get the kubelet's DisruptionTarget, even with nothing running",
			apiPhase: v1.PodRunning, kubePhase: v1.PodRunning, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime)},
		{id: "8.1 DT not terminal, API's kept", reason: "the API's DisruptionTarget stays while the pod is not terminal",
			apiPhase: v1.PodRunning, apiDT: []v1.PodCondition{dt(v1.ConditionTrue, "EvictedByEvictionAPI", apiTime)},
			kubePhase: v1.PodRunning, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime),
			want: new(dt(v1.ConditionTrue, "EvictedByEvictionAPI", apiTime))},
		{id: "8.1 DT could run", reason: "a pod going Failed while containers could run does not get it yet",
			apiPhase: v1.PodRunning, kubePhase: v1.PodFailed, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime), couldRun: true},
		{id: "8.1 DT already terminal", reason: "a pod the API has terminal already is not transitioning: the kubelet's DisruptionTarget is not written",
			apiPhase: v1.PodFailed, kubePhase: v1.PodFailed, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime)},
		{id: "8.1 DT written", reason: "going Failed with nothing running writes it with the kubelet's time",
			apiPhase: v1.PodRunning, kubePhase: v1.PodFailed, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime),
			want: new(dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime))},
		{id: "8.1 DT same status", reason: "over an API DisruptionTarget of the same status, the API's lastTransitionTime is kept",
			apiPhase: v1.PodRunning, apiDT: []v1.PodCondition{dt(v1.ConditionTrue, "EvictedByEvictionAPI", apiTime)},
			kubePhase: v1.PodFailed, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime),
			want: new(dt(v1.ConditionTrue, "TerminationByKubelet", apiTime))},
		{id: "8.1 DT other status", reason: "over an API DisruptionTarget of another status, the kubelet's lastTransitionTime is written",
			apiPhase: v1.PodRunning, apiDT: []v1.PodCondition{dt(v1.ConditionFalse, "", apiTime)},
			kubePhase: v1.PodFailed, kubeDT: dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime),
			want: new(dt(v1.ConditionTrue, "TerminationByKubelet", kubeletTime))},
	}
	for _, tt := range tests {
		api := v1.PodStatus{Phase: tt.apiPhase, Conditions: tt.apiDT}
		kube := v1.PodStatus{Phase: tt.kubePhase, Conditions: []v1.PodCondition{tt.kubeDT}}
		got := podcond.Find(o.Merge(&api, &kube, tt.couldRun).Conditions, v1.DisruptionTarget)
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: %s: DisruptionTarget (-want +got):\n%s", tt.id, tt.reason, d)
		}
	}
}

// Section 6 step 6: each terminated message is cut to 12 KiB divided by
// the number of containers of every kind in the spec (regular, init and
// ephemeral); a message of exactly that length is kept whole.
func TestNormalizeMessageLimitRule(t *testing.T) {
	containers := func(n ...string) []v1.Container {
		var out []v1.Container
		for _, s := range n {
			out = append(out, v1.Container{Name: s})
		}
		return out
	}
	debug := []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "d0"}}, {EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "d1"}}}
	tests := []struct {
		id, reason string
		spec       *v1.PodSpec
		msg        int // the message's length
		want       int
	}{
		{id: "6 step 6 every kind", reason: "two regular, two init and two ephemeral containers share 12 KiB: 2048 bytes each",
			spec: &v1.PodSpec{Containers: containers("a", "b"), InitContainers: containers("i0", "i1"), EphemeralContainers: debug}, msg: 3000, want: 2048},
		{id: "6 step 6 init counted", reason: "init containers count: two regular and four init share 12 KiB",
			spec: &v1.PodSpec{Containers: containers("a", "b"), InitContainers: containers("i0", "i1", "i2", "i3")}, msg: 3000, want: 2048},
		{id: "6 step 6 ephemeral counted", reason: "ephemeral containers count: one regular and two ephemeral share 12 KiB",
			spec: &v1.PodSpec{Containers: containers("a"), EphemeralContainers: debug}, msg: 5000, want: 4096},
		{id: "6 step 6 exact", reason: "a message of exactly its share is kept",
			spec: &v1.PodSpec{Containers: containers("a", "b", "c")}, msg: 4096, want: 4096},
		{id: "6 step 6 nil spec", reason: "without a spec the limit is the whole 12 KiB",
			msg: 13000, want: 12 * 1024},
	}
	for _, tt := range tests {
		s := &v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "a", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Message: strings.Repeat("m", tt.msg)}}}}}
		Normalize(tt.spec, s)
		if got := len(s.ContainerStatuses[0].State.Terminated.Message); got != tt.want {
			t.Errorf("%s: %s: message of %d bytes, want %d", tt.id, tt.reason, got, tt.want)
		}
	}
}

// Section 11, SetPodResizeInProgressCondition: the result says whether the
// condition changed, probe and transition times aside: its reason, its
// message, or its status (a backfilled condition that was not True).
// Empty reason and message both keep the old ones; one of them set
// replaces both.
func TestResizeInProgressRule(t *testing.T) {
	tests := []struct {
		id, reason     string
		backfill       *v1.PodCondition // the condition before, from the API
		setReason      string
		setMessage     string
		wantChanged    bool
		wantR, wantM   string
		wantStatusTrue bool
	}{
		{id: "11 InProgress same", reason: "the same reason and message again is no change",
			setReason: "r", setMessage: "m", wantR: "r", wantM: "m", wantStatusTrue: true},
		{id: "11 InProgress reason", reason: "a new reason alone is a change",
			setReason: "r2", setMessage: "m", wantChanged: true, wantR: "r2", wantM: "m", wantStatusTrue: true},
		{id: "11 InProgress message", reason: "a new message alone is a change",
			setReason: "r", setMessage: "m2", wantChanged: true, wantR: "r", wantM: "m2", wantStatusTrue: true},
		{id: "11 InProgress empty reason", reason: "an empty reason with a message is taken as it is, not the old reason",
			setMessage: "m2", wantChanged: true, wantM: "m2", wantStatusTrue: true},
		{id: "11 InProgress empty message", reason: "a reason with an empty message is taken as it is, not the old message",
			setReason: "r", wantChanged: true, wantR: "r", wantStatusTrue: true},
		{id: "11 InProgress status", reason: "a backfilled condition that was not True becomes True: a change",
			backfill:  &v1.PodCondition{Type: v1.PodResizeInProgress, Status: v1.ConditionFalse, Reason: "r", Message: "m", ObservedGeneration: 2},
			setReason: "r", setMessage: "m", wantChanged: true, wantR: "r", wantM: "m", wantStatusTrue: true},
	}
	for _, tt := range tests {
		c := defaultCache(t)
		if tt.backfill != nil {
			c.BackfillResizeConditions([]*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "u1"}, Status: v1.PodStatus{Conditions: []v1.PodCondition{*tt.backfill}}}})
		} else {
			c.SetResizeInProgress("u1", "r", "m", 2, t0)
		}
		_, changed := c.SetResizeInProgress("u1", tt.setReason, tt.setMessage, 2, t0.Add(time.Second))
		conds := c.ResizeConditions("u1")
		switch {
		case changed != tt.wantChanged:
			t.Errorf("%s: %s: changed %v, want %v", tt.id, tt.reason, changed, tt.wantChanged)
		case len(conds) != 1 || conds[0].Reason != tt.wantR || conds[0].Message != tt.wantM || (conds[0].Status == v1.ConditionTrue) != tt.wantStatusTrue:
			t.Errorf("%s: %s: conditions %+v, want reason %q message %q status True", tt.id, tt.reason, conds, tt.wantR, tt.wantM)
		}
	}
}

// Section 11, Clear*Condition on a pod that never had a resize condition:
// nothing to clear, no error.
func TestResizeClearUnknownPodRule(t *testing.T) {
	c := defaultCache(t)
	if c.ClearResizePending("never") {
		t.Error("11 ClearPodResizePendingCondition: a pod without resize conditions has no pending condition to clear")
	}
	if gen, ok := c.ClearResizeInProgress("never"); ok || gen != 0 {
		t.Errorf("11 ClearPodResizeInProgressCondition: a pod without resize conditions gives (0, false), got (%d, %v)", gen, ok)
	}
}
