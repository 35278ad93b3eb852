package nodecondition_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/kubeversion"
	nc "github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/nodecondition/nodeconditiontest"
)

// The kubelet's report rule against a model (spec 2.2 and 5.8): a status is
// sent exactly on the first report after a start, on any change other than
// the heartbeat, or once the report frequency plus the pending one-time
// jitter has passed; the jitter is drawn after every first or changed report
// and reset by a due one. Before 1.34 there is no jitter (docs/versions.md
// row NC-V3).
func TestModelKubeletReportRule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		u := rapid.Float64Range(0, 0.999).Draw(t, "u")
		v := rapid.SampledFrom(kubeversion.Supported()).Draw(t, "version")
		cfg := nc.DefaultKubeletOptionsFor(v)
		k, err := nc.NewKubelet(withRand(cfg, fixedRand(u)))
		if err != nil {
			t.Fatal(err)
		}
		R := cfg.StatusReportFrequency
		jitter := time.Duration(float64(R) * (u - 0.5))
		if !v.AtLeast(kubeversion.V1_34) {
			jitter = 0
		}
		now := t12
		var api []v1.NodeCondition // what the API holds
		var prevAPI []v1.NodeCondition
		reported, prevReported := false, false
		var last, prevLast time.Time
		var delay, prevDelay time.Duration
		canFail := false
		t.Repeat(map[string]func(*rapid.T){
			"observe": func(t *rapid.T) {
				now = now.Add(time.Duration(rapid.IntRange(0, 30).Draw(t, "dt")) * time.Second)
				s := nodeconditiontest.Sample().Draw(t, "sample")
				if _, err := k.Observe(now, &s); err != nil {
					t.Fatal(err)
				}
			},
			"status": func(t *rapid.T) {
				now = now.Add(time.Duration(rapid.IntRange(1, 200).Draw(t, "dt")) * time.Second)
				r, err := k.Status(now, nodeconditiontest.Health().Draw(t, "health"))
				if err != nil {
					t.Fatal(err)
				}
				changed := len(api) != len(r.Conditions)
				for i := range r.Conditions {
					if changed {
						break
					}
					a, b := api[i], r.Conditions[i]
					changed = a.Type != b.Type || a.Status != b.Status || a.Reason != b.Reason || a.Message != b.Message || !a.LastTransitionTime.Equal(&b.LastTransitionTime)
				}
				var want nc.SendReason
				switch {
				case !reported:
					want = nc.FirstReport
				case changed:
					want = nc.Changed
				case !now.Before(last.Add(R + delay)):
					want = nc.Due
				}
				if r.Reason != want || r.Send != (want != nc.NotSent) {
					t.Fatalf("at %v: reason %v send %v, want %v (last report %v, delay %v, changed %v)", now.Sub(t12), r.Reason, r.Send, want, last.Sub(t12), delay, changed)
				}
				canFail = r.Send
				if r.Send {
					prevAPI, prevReported, prevLast, prevDelay = api, reported, last, delay
					api = append([]v1.NodeCondition(nil), r.Conditions...)
					reported, last = true, now
					if want == nc.Due {
						delay = 0
					} else {
						delay = jitter
					}
				}
				if !r.NextReport.Equal(last.Add(R + delay)) {
					t.Fatalf("NextReport %v, want %v", r.NextReport, last.Add(R+delay))
				}
			},
			"fail": func(t *rapid.T) {
				if !canFail {
					t.Skip("no report to fail")
				}
				k.ReportFailed()
				api, reported, last, delay = prevAPI, prevReported, prevLast, prevDelay
				canFail = false
			},
			"restart": func(t *rapid.T) {
				k.Restart()
				reported, delay, canFail = false, 0, false
			},
		})
	})
}

// The taint-eviction controller against a model of spec 3.7.
func TestModelEvictor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := nc.NewEvictor()
		pods := []nc.PodKey{{Namespace: "ns", Name: "a"}, {Namespace: "ns", Name: "b"}}
		sched := map[nc.PodKey]time.Time{}
		created := map[nc.PodKey]time.Time{}
		now := t12
		keys := []string{nc.TaintNotReady, nc.TaintUnreachable, "other"}
		t.Repeat(map[string]func(*rapid.T){
			"evaluate": func(t *rapid.T) {
				now = now.Add(time.Duration(rapid.IntRange(0, 400).Draw(t, "dt")) * time.Second)
				pod := rapid.SampledFrom(pods).Draw(t, "pod")
				tols := nodeconditiontest.Tolerations().Draw(t, "tolerations")
				var taints []v1.Taint
				for _, k := range keys {
					if rapid.Bool().Draw(t, "taint "+k) {
						taints = append(taints, v1.Taint{Key: k, Effect: v1.TaintEffectNoExecute})
					}
				}
				d := e.Evaluate(now, pod, tols, taints)
				old, had := sched[pod]
				ok, m := nc.TolerationTime(tols, taints)
				var want nc.EvictionDecision
				switch {
				case !ok:
					want = nc.EvictionDecision{Pod: pod, Action: nc.EvictionNow, At: now}
					delete(sched, pod)
				case m < 0 && had:
					want = nc.EvictionDecision{Pod: pod, Action: nc.EvictionCancel}
					delete(sched, pod)
				case m < 0:
					want = nc.EvictionDecision{Pod: pod}
				case had && created[pod].Before(now):
					// A pending deletion is never moved while the pod stays tolerated.
					want = nc.EvictionDecision{Pod: pod, Action: nc.EvictionKept, At: old}
				case m == 0:
					want = nc.EvictionDecision{Pod: pod, Action: nc.EvictionNow, At: now}
					delete(sched, pod)
				default:
					want = nc.EvictionDecision{Pod: pod, Action: nc.EvictionSchedule, At: now.Add(m)}
					sched[pod] = now.Add(m)
					if !had {
						created[pod] = now
					}
				}
				if d != want {
					t.Fatalf("decision %+v, want %+v", d, want)
				}
			},
			"due": func(t *rapid.T) {
				now = now.Add(time.Duration(rapid.IntRange(0, 400).Draw(t, "dt")) * time.Second)
				due := e.Due(now)
				got := map[nc.PodKey]bool{}
				for _, p := range due {
					got[p] = true
					if sched[p].After(now) {
						t.Fatalf("%v due at %v before its time %v", p, now, sched[p])
					}
				}
				for p, at := range sched {
					if !at.After(now) {
						if !got[p] {
							t.Fatalf("%v not due at %v although scheduled for %v", p, now, at)
						}
						delete(sched, p)
					}
				}
			},
			"": func(t *rapid.T) {
				for _, p := range pods {
					at, ok := e.Scheduled(p)
					want, wok := sched[p]
					if ok != wok || !at.Equal(want) {
						t.Fatalf("%v scheduled %v %v, model %v %v", p, at, ok, want, wok)
					}
				}
			},
		})
	})
}

// The lease schedule against a model of spec 2.4: a renewal is due one renew
// interval (plus at most the 0.04 loop jitter) after a success; after the
// n-th failure in a row the retry waits 200 ms doubled n-1 times, at most 7 s.
func TestModelLeaseRenewer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		u := rapid.Float64Range(0, 0.999).Draw(t, "u")
		r, err := nc.NewLeaseRenewer(withRand(nc.DefaultKubeletOptions(), fixedRand(u)), "node")
		if err != nil {
			t.Fatal(err)
		}
		now := t12
		failures := 0
		t.Repeat(map[string]func(*rapid.T){
			"renewed": func(t *rapid.T) {
				spec, next, err := r.Renewed(now)
				if err != nil {
					t.Fatal(err)
				}
				want := now.Add(10*time.Second + time.Duration(u*0.04*float64(10*time.Second)))
				if !next.Equal(want) || !spec.RenewTime.Time.Equal(now) {
					t.Fatalf("next %v, want %v", next, want)
				}
				failures = 0
				now = next
			},
			"failed": func(t *rapid.T) {
				next, err := r.Failed(now)
				if err != nil {
					t.Fatal(err)
				}
				failures++
				want := 200 * time.Millisecond
				for i := 1; i < failures && want < 7*time.Second; i++ {
					want *= 2
				}
				want = min(want, 7*time.Second)
				if next.Sub(now) != want || r.Failures() != failures {
					t.Fatalf("after %d failures: wait %v, want %v", failures, next.Sub(now), want)
				}
				now = next
			},
		})
	})
}
