package nodecondition_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/kubeversion"
	nc "github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/nodecondition/nodeconditiontest"
)

// lastTransitionTime changes only when the status flips, on the kubelet side.
func TestPropertyKubeletTransitionTime(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k, err := nc.NewKubelet(withRand(nc.DefaultKubeletOptions(), fixedRand(rapid.Float64Range(0, 0.999).Draw(t, "u"))))
		if err != nil {
			t.Fatal(err)
		}
		now := t12
		var prev []v1.NodeCondition
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			now = now.Add(time.Duration(rapid.IntRange(1, 120).Draw(t, "dt")) * time.Second)
			smp := nodeconditiontest.Sample().Draw(t, "sample")
			if _, err := k.Observe(now, &smp); err != nil {
				t.Fatal(err)
			}
			r, err := k.Status(now, nodeconditiontest.Health().Draw(t, "health"))
			if err != nil {
				t.Fatal(err)
			}
			if err := nodeconditiontest.CheckConditionUpdate(prev, r.Conditions); err != nil {
				t.Fatal(err)
			}
			for _, c := range r.Conditions {
				if c.Status == v1.ConditionUnknown {
					t.Fatalf("2.3: the kubelet never posts Unknown, got %+v", c)
				}
			}
			if r.Send {
				prev = append(prev[:0], r.Conditions...)
			}
		}
	})
}

// A pressure condition turns True on the first observation and False only
// after a full transition period with no observation (spec 5.7).
func TestPropertyPressureTransition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := nc.DefaultKubeletOptions()
		k, err := nc.NewKubelet(noJitter(cfg))
		if err != nil {
			t.Fatal(err)
		}
		now := t12
		var last time.Time
		for range rapid.IntRange(1, 80).Draw(t, "steps") {
			now = now.Add(time.Duration(rapid.IntRange(1, 90).Draw(t, "dt")) * time.Second)
			avail := rapid.OneOf(rapid.Int64Range(0, 99<<20), rapid.Int64Range(100<<20, 1<<30)).Draw(t, "available")
			p, err := k.Observe(now, memSample(avail))
			if err != nil {
				t.Fatal(err)
			}
			if avail < 100<<20 {
				last = now
				if !p.Reported.Memory || !p.Observed.Memory {
					t.Fatalf("%v below 100Mi but no MemoryPressure", avail)
				}
			}
			want := !last.IsZero() && now.Sub(last) < cfg.PressureTransitionPeriod
			if p.Reported.Memory != want {
				t.Fatalf("at %v, last observation %v: reported %v, want %v", now, last, p.Reported.Memory, want)
			}
		}
	})
}

// No pod is deleted before its tolerations allow (spec/nodecondition.md
// section 5, invariant 4; section 3.7): a pod is deleted at once only when
// some NoExecute taint is untolerated or its minimum toleration is 0; a
// scheduled deletion is due at its scheduling time plus the minimum toleration
// then, and Due never hands a pod out before that. The tolerations are drawn
// once, so a pending deletion is never moved.
func TestPropertyEvictorNeverEarly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := nc.NewEvictor()
		pod := nc.PodKey{Namespace: "ns", Name: "p"}
		tols := nodeconditiontest.Tolerations().Draw(t, "tolerations")
		now := t12
		var (
			scheduled bool
			earliest  time.Time // the scheduling time plus the minimum toleration then
		)
		keys := []string{nc.TaintNotReady, nc.TaintUnreachable}
		for range rapid.IntRange(1, 20).Draw(t, "steps") {
			now = now.Add(time.Duration(rapid.IntRange(0, 200).Draw(t, "dt")) * time.Second)
			for _, due := range e.Due(now) {
				if due != pod || !scheduled || now.Before(earliest) {
					t.Fatalf("Due(%v) hands out %v, scheduled %v, not before %v", now, due, scheduled, earliest)
				}
				scheduled = false // deleted; the next evaluation is a new pod's
			}
			var taints []v1.Taint
			if k := rapid.IntRange(-1, 1).Draw(t, "taint"); k >= 0 {
				taints = []v1.Taint{{Key: keys[k], Effect: v1.TaintEffectNoExecute}}
			}
			ok, m := nc.TolerationTime(tols, taints)
			d := e.Evaluate(now, pod, tols, taints)
			switch d.Action {
			case nc.EvictionNow:
				if ok && m != 0 {
					t.Fatalf("deleted at once at %v although every taint is tolerated for %v: %v", now, m, d)
				}
				scheduled = false
			case nc.EvictionSchedule:
				if !ok || m <= 0 || !d.At.Equal(now.Add(m)) {
					t.Fatalf("scheduled %v at %v, want now + %v (tolerated %v)", d, now, m, ok)
				}
				scheduled, earliest = true, d.At
			case nc.EvictionKept:
				if !scheduled || !d.At.Equal(earliest) {
					t.Fatalf("kept %v, but the pending deletion is at %v (scheduled %v)", d, earliest, scheduled)
				}
			case nc.EvictionCancel, nc.EvictionNone:
				if ok && m >= 0 {
					t.Fatalf("%v although tolerated for %v", d, m)
				}
				scheduled = false
			}
			if at, pending := e.Scheduled(pod); pending != scheduled || (pending && !at.Equal(earliest)) {
				t.Fatalf("Scheduled = %v %v, want %v %v", at, pending, earliest, scheduled)
			}
		}
	})
}

// The controller as a model test: nodes heartbeat, renew and stop at random;
// after every step, no node was marked Unknown within the grace period of its
// last heartbeat, the NoExecute taints stay exclusive, and a Ready node has no
// not-ready/unreachable NoExecute taint after a pass; in every minor's
// profile (before 1.34 the taint decision reads the Ready condition the pass
// started with, docs/versions.md row NC-V1).
func TestModelController(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := nc.DefaultControllerOptionsFor(rapid.SampledFrom(kubeversion.Supported()).Draw(t, "version"))
		cfg.EvictionRate = rapid.SampledFrom([]float64{0.1, 1, 0}).Draw(t, "rate")
		c, err := nc.NewController(cfg)
		if err != nil {
			t.Fatal(err)
		}
		now := t12
		names := []string{"n0", "n1", "n2"}
		lastBeat := map[string]time.Time{}
		passed := map[string]bool{} // a pass ran since the node's last status update
		beat := map[string]int{}
		for _, n := range names {
			zone := zoneLabels("r", rapid.SampledFrom([]string{"z1", "z2"}).Draw(t, "zone"))
			if _, err := c.UpsertNode(now, node(n, t2012, zone, cond(v1.NodeReady, v1.ConditionTrue, now, now))); err != nil {
				t.Fatal(err)
			}
			lastBeat[n] = now
			c.UpsertPod(readyPod("default", "pod-"+n, n))
		}
		t.Repeat(map[string]func(*rapid.T){
			"status": func(t *rapid.T) {
				n := rapid.SampledFrom(names).Draw(t, "node")
				st := rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}).Draw(t, "status")
				beat[n]++
				hb := now.Add(time.Duration(beat[n]) * time.Microsecond)
				if _, err := c.UpdateStatus(now, n, []v1.NodeCondition{cond(v1.NodeReady, st, hb, hb)}); err != nil {
					t.Fatal(err)
				}
				lastBeat[n] = now
				passed[n] = false
			},
			"lease": func(t *rapid.T) {
				n := rapid.SampledFrom(names).Draw(t, "node")
				beat[n]++
				c.UpsertLease(n, now.Add(time.Duration(beat[n])*time.Microsecond), fmt.Sprint(beat[n]))
				lastBeat[n] = now
			},
			"pass": func(t *rapid.T) {
				now = now.Add(time.Duration(rapid.IntRange(1, 30).Draw(t, "dt")) * time.Second)
				p, err := c.Monitor(now, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range p.Writes {
					if now.Sub(lastBeat[w.Node]) <= cfg.GracePeriod {
						t.Fatalf("%s marked Unknown at %v, %v after its last heartbeat", w.Node, now, now.Sub(lastBeat[w.Node]))
					}
				}
				for _, n := range names {
					passed[n] = true
				}
				if _, err := c.Taint(now.Add(100 * time.Millisecond)); err != nil {
					t.Fatal(err)
				}
				now = now.Add(100 * time.Millisecond)
			},
			"": func(t *rapid.T) {
				for _, n := range names {
					ts := c.Taints(n)
					nr, ur := false, false
					for _, tn := range ts {
						if tn.Effect == v1.TaintEffectNoExecute {
							nr = nr || tn.Key == nc.TaintNotReady
							ur = ur || tn.Key == nc.TaintUnreachable
						}
					}
					if nr && ur {
						t.Fatalf("%s has both NoExecute taints", n)
					}
					conds := c.Conditions(n)
					for _, cd := range conds {
						if cd.Type == v1.NodeReady && cd.Status == v1.ConditionTrue && (nr || ur) && passed[n] {
							t.Fatalf("%s is Ready after a pass but keeps a NoExecute taint", n)
						}
					}
				}
			},
		})
	})
}

// The controller's Unknown write moves lastTransitionTime exactly for the
// conditions whose status flips.
func TestPropertyControllerTransitionTime(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c, err := nc.NewController(nc.DefaultControllerOptions())
		if err != nil {
			t.Fatal(err)
		}
		var conds []v1.NodeCondition
		for _, typ := range []v1.NodeConditionType{v1.NodeReady, v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure, v1.NodeNetworkUnavailable} {
			if rapid.Bool().Draw(t, "has "+string(typ)) {
				st := rapid.SampledFrom([]v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown}).Draw(t, "status")
				conds = append(conds, cond(typ, st, t12, t12.Add(-time.Hour)))
			}
		}
		if _, err := c.UpsertNode(t12, node("n", t2012, nil, conds...)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Monitor(t12, nil); err != nil {
			t.Fatal(err)
		}
		before := c.Conditions("n")
		later := t12.Add(time.Duration(rapid.IntRange(51, 600).Draw(t, "later")) * time.Second)
		if _, err := c.Monitor(later, nil); err != nil {
			t.Fatal(err)
		}
		after := c.Conditions("n")
		if err := nodeconditiontest.CheckConditionUpdate(before, after); err != nil {
			t.Fatal(err)
		}
		for _, b := range before {
			if b.Type == v1.NodeReady && b.Status == v1.ConditionUnknown {
				// 3.3: Ready does not change, so nothing is written.
				if diff := cmp.Diff(before, after); diff != "" {
					t.Fatalf("Ready already Unknown, yet the conditions changed (-before +after):\n%s", diff)
				}
				return
			}
		}
		for _, cd := range after {
			if cd.Type == v1.NodeNetworkUnavailable {
				for _, b := range before {
					if b.Type == cd.Type && b.Status != cd.Status {
						t.Fatalf("3.3: NetworkUnavailable is never touched")
					}
				}
			} else if cd.Status != v1.ConditionUnknown {
				t.Fatalf("after %v with no heartbeat, %s is %s", later.Sub(t12), cd.Type, cd.Status)
			}
		}
		_ = metav1.Time{}
	})
}
