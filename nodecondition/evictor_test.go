package nodecondition_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
)

func secs(n int64) *int64 { return &n }

// maxSeconds is the largest whole number of seconds a time.Duration holds.
const maxSeconds = int64(math.MaxInt64 / int64(time.Second))

func tol(key string, s *int64) v1.Toleration {
	return v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: s}
}

func ne(key string) v1.Taint { return v1.Taint{Key: key, Effect: v1.TaintEffectNoExecute} }

func TestMinTolerationTime(t *testing.T) {
	tests := []struct {
		id     string
		tols   []v1.Toleration
		want   time.Duration
		reason string
	}{
		{"case 43a", nil, 0, "an empty list means delete now"},
		{"case 43b", []v1.Toleration{tol("a", nil)}, -1, "no seconds anywhere means forever"},
		{"case 43c", []v1.Toleration{tol("a", secs(1)), tol("b", secs(2))}, time.Second, "the minimum"},
		{"case 43d", []v1.Toleration{tol("a", secs(1)), tol("b", nil)}, time.Second, "nil is skipped"},
		{"case 43e", []v1.Toleration{tol("a", nil), tol("b", secs(1))}, time.Second, "order does not matter"},
		{"3.7 zero", []v1.Toleration{tol("a", secs(5)), tol("b", secs(-3))}, 0, "any value <= 0 means delete now"},
		{"3.7 zero first", []v1.Toleration{tol("a", secs(0)), tol("b", secs(5))}, 0, "0 is delete now, whatever follows"},
		{"3.7 largest exact", []v1.Toleration{tol("a", secs(maxSeconds))}, time.Duration(maxSeconds) * time.Second, "the largest whole number of seconds a Duration holds is taken as is"},
		{"3.7 saturated", []v1.Toleration{tol("a", secs(math.MaxInt64)), tol("b", nil)}, time.Duration(math.MaxInt64), "more seconds than a Duration holds saturate instead of wrapping around"},
		{"3.7 saturated then shorter", []v1.Toleration{tol("a", secs(maxSeconds+1)), tol("b", secs(60))}, time.Minute, "a saturated value is still compared with the others"},
	}
	for _, tt := range tests {
		if got := nc.MinTolerationTime(tt.tols); got != tt.want {
			t.Errorf("%s: MinTolerationTime = %v, want %v (%s)", tt.id, got, tt.want, tt.reason)
		}
	}
}

func TestEvictorSpecCases(t *testing.T) {
	t0 := t12
	pod := nc.PodKey{Namespace: "default", Name: "pod1"}
	type ev struct {
		at     time.Duration
		tols   []v1.Toleration
		taints []v1.Taint
	}
	tests := []struct {
		id, reason string
		evals      []ev
		want       []nc.EvictionDecision
	}{
		{
			id:     "case 34",
			reason: "3.7: a NoExecute taint the pod does not tolerate deletes it now",
			evals:  []ev{{0, nil, []v1.Taint{ne("taint1")}}},
			want:   []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionNow, At: t0}},
		},
		{
			id:     "case 35a",
			reason: "3.7: tolerated for 100 s: scheduled, not deleted now",
			evals:  []ev{{0, []v1.Toleration{tol("taint1", secs(100))}, []v1.Taint{ne("taint1")}}},
			want:   []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionSchedule, At: t0.Add(100 * time.Second)}},
		},
		{
			id:     "case 35b",
			reason: "3.7: tolerated forever: nothing scheduled",
			evals:  []ev{{0, []v1.Toleration{tol("taint1", nil)}, []v1.Taint{ne("taint1")}}},
			want:   []nc.EvictionDecision{{Pod: pod}},
		},
		{
			id:     "case 35c",
			reason: "3.7: a toleration for a different key does not help",
			evals:  []ev{{0, []v1.Toleration{tol("taint2", nil)}, []v1.Taint{ne("taint1")}}},
			want:   []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionNow, At: t0}},
		},
		{
			id:     "case 37",
			reason: "3.7: raising tolerationSeconds from 1 s to 100 s does not move the pending deletion",
			evals: []ev{
				{0, []v1.Toleration{tol("taint1", secs(1))}, []v1.Taint{ne("taint1")}},
				{100 * time.Millisecond, []v1.Toleration{tol("taint1", secs(100))}, []v1.Taint{ne("taint1")}},
			},
			want: []nc.EvictionDecision{
				{Pod: pod, Action: nc.EvictionSchedule, At: t0.Add(time.Second)},
				{Pod: pod, Action: nc.EvictionKept, At: t0.Add(time.Second)},
			},
		},
		{
			id:     "case 38",
			reason: "3.7: taints {1,2} and only taint1 tolerated (100 s): deleted at once",
			evals:  []ev{{0, []v1.Toleration{tol("taint1", secs(100))}, []v1.Taint{ne("taint1"), ne("taint2")}}},
			want:   []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionNow, At: t0}},
		},
		{
			id:     "case 40",
			reason: "3.7: tolerations 1 s and 100 s for the two taints: the minimum, 1 s, wins",
			evals:  []ev{{0, []v1.Toleration{tol("taint1", secs(1)), tol("taint2", secs(100))}, []v1.Taint{ne("taint1"), ne("taint2")}}},
			want:   []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionSchedule, At: t0.Add(time.Second)}},
		},
		{
			id:     "3.7 first toleration used",
			reason: "3.7: the taint is matched by the first toleration that tolerates it, here one with no seconds: the pod stays forever although a later toleration of the same taint has 100 s",
			evals:  []ev{{0, []v1.Toleration{tol("taint1", nil), tol("taint1", secs(100))}, []v1.Taint{ne("taint1")}}},
			want:   []nc.EvictionDecision{{Pod: pod}},
		},
		{
			id:     "3.7 first toleration used, seconds",
			reason: "3.7: the first toleration of taint1 gives 200 s; a later one of 100 s for the same taint is not used",
			evals:  []ev{{0, []v1.Toleration{tol("taint1", secs(200)), tol("taint1", secs(100))}, []v1.Taint{ne("taint1")}}},
			want:   []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionSchedule, At: t0.Add(200 * time.Second)}},
		},
		{
			id:     "3.7 wildcard first",
			reason: "3.7: a toleration of every taint listed before a 60 s not-ready toleration is the one used: tolerated forever",
			evals: []ev{{0, []v1.Toleration{{Operator: v1.TolerationOpExists}, tol(nc.TaintNotReady, secs(60))},
				[]v1.Taint{ne(nc.TaintNotReady)}}},
			want: []nc.EvictionDecision{{Pod: pod}},
		},
		{
			id:     "3.7 no seconds on one taint",
			reason: "3.7: taint1 is tolerated forever and taint2 for 100 s: the minimum over the tolerations used is 100 s",
			evals: []ev{{0, []v1.Toleration{tol("taint1", nil), tol("taint2", secs(100))},
				[]v1.Taint{ne("taint1"), ne("taint2")}}},
			want: []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionSchedule, At: t0.Add(100 * time.Second)}},
		},
		{
			id:     "4.1 zero seconds",
			reason: "4.1: a pod with tolerationSeconds 0 for unreachable is deleted as soon as the taint is seen",
			evals:  []ev{{0, []v1.Toleration{tol(nc.TaintUnreachable, secs(0))}, []v1.Taint{ne(nc.TaintUnreachable)}}},
			want:   []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionNow, At: t0}},
		},
		{
			id:     "3.7 largest exact seconds",
			reason: "3.7: the largest whole number of seconds a Duration holds schedules the deletion exactly that far ahead",
			evals:  []ev{{0, []v1.Toleration{tol("taint1", secs(maxSeconds))}, []v1.Taint{ne("taint1")}}},
			want:   []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionSchedule, At: t0.Add(time.Duration(maxSeconds) * time.Second)}},
		},
		{
			id:     "3.7 saturated seconds",
			reason: "3.7: more seconds than a Duration holds schedule the deletion at the farthest time, not in the past and not never",
			evals: []ev{{0, []v1.Toleration{tol("taint1", secs(math.MaxInt64)), tol("taint2", secs(maxSeconds+1))},
				[]v1.Taint{ne("taint1"), ne("taint2")}}},
			want: []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionSchedule, At: t0.Add(time.Duration(math.MaxInt64))}},
		},
		{
			id:     "3.7 saturated then shorter",
			reason: "3.7: a saturated toleration time is still compared with the other taints': the 60 s one wins",
			evals: []ev{{0, []v1.Toleration{tol("taint1", secs(math.MaxInt64)), tol("taint2", secs(60))},
				[]v1.Taint{ne("taint1"), ne("taint2")}}},
			want: []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionSchedule, At: t0.Add(time.Minute)}},
		},
		{
			id:     "3.7 zero seconds on one taint",
			reason: "3.7: any toleration used with tolerationSeconds <= 0 means delete now, even when the next taint is tolerated for 60 s",
			evals: []ev{{0, []v1.Toleration{tol("taint1", secs(0)), tol("taint2", secs(60))},
				[]v1.Taint{ne("taint1"), ne("taint2")}}},
			want: []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionNow, At: t0}},
		},
		{
			id:     "3.7 NoSchedule taints ignored",
			reason: "3.7: only NoExecute taints count; an untolerated NoExecute taint listed after a NoSchedule one still deletes the pod now",
			evals:  []ev{{0, nil, []v1.Taint{{Key: nc.TaintNotReady, Effect: v1.TaintEffectNoSchedule}, ne(nc.TaintNotReady)}}},
			want:   []nc.EvictionDecision{{Pod: pod, Action: nc.EvictionNow, At: t0}},
		},
		{
			id:     "3.7 cancel",
			reason: "3.7: the NoExecute taints go away: the pending deletion is cancelled",
			evals: []ev{
				{0, []v1.Toleration{tol("taint1", secs(300))}, []v1.Taint{ne("taint1")}},
				{time.Second, []v1.Toleration{tol("taint1", secs(300))}, nil},
			},
			want: []nc.EvictionDecision{
				{Pod: pod, Action: nc.EvictionSchedule, At: t0.Add(300 * time.Second)},
				{Pod: pod, Action: nc.EvictionCancel},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			e := nc.NewEvictor()
			var got []nc.EvictionDecision
			for _, x := range tt.evals {
				got = append(got, e.Evaluate(t0.Add(x.at), pod, x.tols, x.taints))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s: decisions mismatch (-want +got):\n%s", tt.reason, diff)
			}
		})
	}
}

func TestEvictorPodGone(t *testing.T) {
	pod := nc.PodKey{Namespace: "default", Name: "web-0"}
	tols := []v1.Toleration{tol(nc.TaintUnreachable, secs(300))}
	taints := []v1.Taint{ne(nc.TaintUnreachable)}
	tests := []struct {
		id, reason string
		forget     bool
		wantDue    []nc.PodKey // due at the first schedule's time
		wantAgain  nc.EvictionDecision
	}{
		{
			id:        "3.7 pod deleted",
			reason:    "the pod is gone: its pending deletion is dropped, and a pod re-created with the same name (a StatefulSet's) gets its own 300 s from when it is seen",
			forget:    true,
			wantAgain: nc.EvictionDecision{Pod: pod, Action: nc.EvictionSchedule, At: t12.Add(400 * time.Second)},
		},
		{
			id:        "3.7 pod kept",
			reason:    "without the deletion the pending deletion stays where it was",
			wantDue:   []nc.PodKey{pod},
			wantAgain: nc.EvictionDecision{Pod: pod, Action: nc.EvictionKept, At: t12.Add(300 * time.Second)},
		},
	}
	for _, tt := range tests {
		e := nc.NewEvictor()
		e.Evaluate(t12, pod, tols, taints)
		if tt.forget {
			e.Forget(pod)
		}
		_, scheduled := e.Scheduled(pod)
		_, next := e.Next()
		if scheduled != !tt.forget || next != !tt.forget {
			t.Errorf("%s: Scheduled %v, Next %v after the pod went: %s", tt.id, scheduled, next, tt.reason)
		}
		again := e.Evaluate(t12.Add(100*time.Second), pod, tols, taints)
		if diff := cmp.Diff(tt.wantAgain, again); diff != "" {
			t.Errorf("%s: %s: decision for the pod seen again mismatch (-want +got):\n%s", tt.id, tt.reason, diff)
		}
		if tt.wantDue == nil {
			continue
		}
		if diff := cmp.Diff(tt.wantDue, e.Due(t12.Add(300*time.Second))); diff != "" {
			t.Errorf("%s: %s: due mismatch (-want +got):\n%s", tt.id, tt.reason, diff)
		}
	}
	e := nc.NewEvictor()
	e.Forget(pod) // nothing scheduled: nothing to drop
	if _, ok := e.Next(); ok {
		t.Error("forgetting an unknown pod schedules nothing")
	}
}

func TestEvictorMultiplePods(t *testing.T) {
	// case 41: taint1 on pod1 (no toleration), pod2 (1 s), pod3 (forever);
	// with taints {1,2} all three go at 0 s.
	pods := []struct {
		key  nc.PodKey
		tols []v1.Toleration
	}{
		{nc.PodKey{Namespace: "ns", Name: "pod1"}, nil},
		{nc.PodKey{Namespace: "ns", Name: "pod2"}, []v1.Toleration{tol("taint1", secs(1))}},
		{nc.PodKey{Namespace: "ns", Name: "pod3"}, []v1.Toleration{tol("taint1", nil)}},
	}
	for _, tc := range []struct {
		id     string
		taints []v1.Taint
		want   map[string]time.Duration // deletion delay; absent = never
		reason string
	}{
		{"case 41a", []v1.Taint{ne("taint1")}, map[string]time.Duration{"pod1": 0, "pod2": time.Second}, "3.7: untolerated now, 1 s, forever"},
		{"case 41b", []v1.Taint{ne("taint1"), ne("taint2")}, map[string]time.Duration{"pod1": 0, "pod2": 0, "pod3": 0}, "3.7: nobody tolerates taint2"},
	} {
		e := nc.NewEvictor()
		got := map[string]time.Duration{}
		for _, p := range pods {
			d := e.Evaluate(t12, p.key, p.tols, tc.taints)
			if d.Action == nc.EvictionNow || d.Action == nc.EvictionSchedule {
				got[p.key.Name] = d.At.Sub(t12)
			}
		}
		due := e.Due(t12.Add(time.Second))
		if tc.id == "case 41a" && (len(due) != 1 || due[0].Name != "pod2") {
			t.Errorf("%s: due at 1 s = %v, want [pod2]", tc.id, due)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: %s: deletion delays mismatch (-want +got):\n%s", tc.id, tc.reason, diff)
		}
	}
}

func TestEvictorDueOrder(t *testing.T) {
	// Due hands out the deletions in time order, then by namespace and name,
	// so a runner deletes pods that came due together in a stable order.
	tols := func(s int64) []v1.Toleration { return []v1.Toleration{tol("taint1", secs(s))} }
	taints := []v1.Taint{ne("taint1")}
	type sched struct {
		pod  nc.PodKey
		secs int64
	}
	tests := []struct {
		id, reason string
		scheds     []sched
		want       []nc.PodKey
	}{
		{"3.7 due by time", "the pod due first comes first",
			[]sched{{nc.PodKey{Namespace: "a", Name: "late"}, 20}, {nc.PodKey{Namespace: "b", Name: "early"}, 10}},
			[]nc.PodKey{{Namespace: "b", Name: "early"}, {Namespace: "a", Name: "late"}}},
		{"3.7 due together, by namespace", "due at the same time: by namespace first",
			[]sched{{nc.PodKey{Namespace: "b", Name: "a"}, 10}, {nc.PodKey{Namespace: "a", Name: "z"}, 10}, {nc.PodKey{Namespace: "c", Name: "a"}, 10}},
			[]nc.PodKey{{Namespace: "a", Name: "z"}, {Namespace: "b", Name: "a"}, {Namespace: "c", Name: "a"}}},
		{"3.7 due together, by name", "due at the same time in one namespace: by name",
			[]sched{{nc.PodKey{Namespace: "a", Name: "y"}, 10}, {nc.PodKey{Namespace: "a", Name: "x"}, 10}, {nc.PodKey{Namespace: "a", Name: "z"}, 10}},
			[]nc.PodKey{{Namespace: "a", Name: "x"}, {Namespace: "a", Name: "y"}, {Namespace: "a", Name: "z"}}},
	}
	for _, tt := range tests {
		e := nc.NewEvictor()
		for _, s := range tt.scheds {
			e.Evaluate(t12, s.pod, tols(s.secs), taints)
		}
		if diff := cmp.Diff(tt.want, e.Due(t12.Add(time.Minute))); diff != "" {
			t.Errorf("%s: %s: Due mismatch (-want +got):\n%s", tt.id, tt.reason, diff)
		}
	}
}

func TestWithDefaultTolerations(t *testing.T) {
	s300 := secs(300)
	notReady300 := v1.Toleration{Key: nc.TaintNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: s300}
	unreach300 := v1.Toleration{Key: nc.TaintUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: s300}
	own := v1.Toleration{Key: nc.TaintNotReady, Operator: v1.TolerationOpEqual, Effect: v1.TaintEffectNoExecute, TolerationSeconds: secs(7)}
	wild := v1.Toleration{Operator: v1.TolerationOpExists}
	tests := []struct {
		id     string
		in     []v1.Toleration
		want   []v1.Toleration
		reason string
	}{
		{"case 47a", nil, []v1.Toleration{notReady300, unreach300}, "3.8: both defaults added"},
		{"case 47b", []v1.Toleration{wild}, []v1.Toleration{wild}, "3.8: key \"\" and effect \"\" cover both"},
		{"case 47c", []v1.Toleration{own}, []v1.Toleration{own, unreach300}, "3.8: an own not-ready NoExecute toleration is kept, only unreachable added"},
	}
	for _, tt := range tests {
		got := nc.WithDefaultTolerations(tt.in, nc.DefaultTolerationSeconds, nc.DefaultTolerationSeconds)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: %s: mismatch (-want +got):\n%s", tt.id, tt.reason, diff)
		}
	}
}

func TestAdmit(t *testing.T) {
	mem := nc.Pressures{Memory: true}
	memDisk := nc.Pressures{Memory: true, Disk: true}
	tolMP := []v1.Toleration{{Key: nc.TaintMemoryPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	tests := []struct {
		id       string
		p        nc.Pressures
		qos      v1.PodQOSClass
		tols     []v1.Toleration
		critical bool
		want     nc.AdmitResult
		reason   string
	}{
		{"case 46a", nc.Pressures{}, v1.PodQOSBestEffort, nil, false, nc.AdmitResult{Admit: true}, "2.6: no condition: all admitted"},
		{"case 46b", mem, v1.PodQOSGuaranteed, nil, false, nc.AdmitResult{Admit: true}, "2.6: MemoryPressure alone admits Guaranteed"},
		{"case 46c", mem, v1.PodQOSBurstable, nil, false, nc.AdmitResult{Admit: true}, "2.6: MemoryPressure alone admits Burstable"},
		{"case 46d", mem, v1.PodQOSBestEffort, nil, false, nc.AdmitResult{Reason: "Evicted", Message: "The node had condition: [MemoryPressure]. "}, "2.6: BestEffort rejected under MemoryPressure"},
		{"case 46e", memDisk, v1.PodQOSGuaranteed, nil, false, nc.AdmitResult{Reason: "Evicted", Message: "The node had condition: [MemoryPressure DiskPressure]. "}, "2.6: any other condition rejects all"},
		{"2.6 toleration", mem, v1.PodQOSBestEffort, tolMP, false, nc.AdmitResult{Admit: true}, "2.6: BestEffort tolerating memory-pressure:NoSchedule"},
		{"2.6 critical", memDisk, v1.PodQOSBestEffort, nil, true, nc.AdmitResult{Admit: true}, "2.6: critical pods always"},
	}
	for _, tt := range tests {
		if got := nc.Admit(tt.p, tt.qos, tt.tols, tt.critical); got != tt.want {
			t.Errorf("%s: Admit = %+v, want %+v (%s)", tt.id, got, tt.want, tt.reason)
		}
	}
}
