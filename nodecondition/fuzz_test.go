package nodecondition_test

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/nodecondition/nodeconditiontest"
)

// FuzzParseThresholds: any flag text parses or gives ErrInvalidInput,
// and whatever parses is accepted by NewKubelet.
func FuzzParseThresholds(f *testing.F) {
	f.Add("memory.available<100Mi,nodefs.available<10%", "memory.available<2Gi", "memory.available=2m", "memory.available=0")
	f.Add("nodefs.available<150%", "", "", "")
	f.Add("pid.available<-1", "x<1", "y=z", "")
	f.Fuzz(func(t *testing.T, hard, soft, grace, reclaim string) {
		ts, err := parseAll(hard, soft, grace, reclaim)
		if err != nil {
			if !errors.Is(err, nc.ErrInvalidInput) {
				t.Fatalf("error %v is not ErrInvalidInput", err)
			}
			return
		}
		cfg := nc.DefaultKubeletOptions()
		cfg.Thresholds = ts
		if _, err := nc.NewKubelet(noJitter(cfg)); err != nil {
			t.Fatalf("parsed thresholds %v rejected: %v", ts, err)
		}
	})
}

// FuzzKubeletSignals drives the kubelet side with arbitrary samples, health
// and times: no panic, only ErrTimeWentBackwards, and lastTransitionTime
// moves exactly on a flip.
func FuzzKubeletSignals(f *testing.F) {
	f.Add([]byte{0, 10, 1, 200, 3, 0, 5, 7, 2, 9})
	f.Add([]byte("memory pressure comes and goes, and the runtime too"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := nc.NewKubelet(withRand(nc.DefaultKubeletOptions(), fixedRand(0.3)))
		if err != nil {
			t.Fatal(err)
		}
		now := t12
		var prev []v1.NodeCondition
		var prevAt time.Time
		for len(data) >= 12 {
			op := data[0]
			dt := time.Duration(int8(data[1])) * time.Second // may go backwards
			sig := nc.Signal(data[2] % (nc.NumSignals + 1))
			avail := int64(binary.LittleEndian.Uint32(data[4:8]))
			capacity := int64(binary.LittleEndian.Uint32(data[8:12]))
			data = data[12:]
			now = now.Add(dt)
			var s nc.Sample
			s.Set(sig, avail, capacity)
			if op&1 == 0 {
				if _, err := k.Observe(now, &s); err != nil && !errors.Is(err, nc.ErrTimeWentBackwards) {
					t.Fatal(err)
				}
				continue
			}
			var h nc.Health
			if op&2 != 0 {
				h.Errors = []string{nc.MessageRuntimeDown}
			}
			if op&4 != 0 {
				h.MissingCapacity = []string{"pods"}
			}
			r, err := k.Status(now, h)
			if err != nil {
				if !errors.Is(err, nc.ErrTimeWentBackwards) {
					t.Fatal(err)
				}
				continue
			}
			// Two computations at one instant cannot tell a flip by its time.
			if now.After(prevAt) {
				if err := nodeconditiontest.CheckConditionUpdate(prev, r.Conditions); err != nil {
					t.Fatal(err)
				}
			}
			if r.Send {
				prev, prevAt = append(prev[:0], r.Conditions...), now
			}
		}
	})
}

// FuzzControllerHeartbeats drives the controller with arbitrary status
// heartbeats, lease renewals, pods and passes: no panic, only
// ErrTimeWentBackwards, never an Unknown write within the grace period of
// the node's last heartbeat.
func FuzzControllerHeartbeats(f *testing.F) {
	f.Add([]byte{0, 5, 1, 0, 2, 60, 3, 1})
	f.Add([]byte("a node heartbeats, stops, comes back"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := nc.DefaultControllerOptions()
		c, err := nc.NewController(cfg)
		if err != nil {
			t.Fatal(err)
		}
		now := t12
		names := []string{"n0", "n1"}
		last := map[string]time.Time{}
		for i, n := range names {
			if _, err := c.UpsertNode(now, node(n, t2012, zoneLabels("r", names[i]))); err != nil {
				t.Fatal(err)
			}
		}
		seq := 0
		for len(data) >= 3 {
			op, arg, n := data[0]%6, data[1], names[data[2]%2]
			data = data[3:]
			seq++
			hb := now.Add(time.Duration(seq) * time.Microsecond)
			var err error
			switch op {
			case 0:
				st := []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown, "bogus"}[arg%4]
				if _, err = c.UpdateStatus(now, n, []v1.NodeCondition{cond(v1.NodeReady, st, hb, hb)}); err == nil {
					last[n] = now
				}
			case 1:
				c.UpsertLease(n, hb, string(rune('a'+arg%26)))
				last[n] = now
			case 2:
				now = now.Add(time.Duration(arg) * time.Second)
				var p nc.Pass
				p, err = c.Monitor(now, nil)
				for _, w := range p.Writes {
					if l, ok := last[w.Node]; ok && now.Sub(l) <= cfg.GracePeriod {
						t.Fatalf("%s written Unknown %v after a heartbeat", w.Node, now.Sub(l))
					}
				}
			case 3:
				_, err = c.Taint(now.Add(time.Duration(int8(arg)) * time.Millisecond))
			case 4:
				c.UpsertPod(readyPod("ns", string(rune('a'+arg%26)), n))
			case 5:
				// An upsert without a Ready condition is no heartbeat, and a
				// heartbeat it replaces before any pass saw it never counted.
				_, err = c.UpsertNode(now, node(n, t2012, nil))
				delete(last, n)
			}
			if err != nil && !errors.Is(err, nc.ErrTimeWentBackwards) {
				t.Fatal(err)
			}
		}
	})
}

// FuzzTolerations: arbitrary tolerations against arbitrary taints. No panic;
// TolerationTime agrees with Tolerates; the admission defaults always leave
// the pod tolerating both node taints; Evaluate follows TolerationTime.
func FuzzTolerations(f *testing.F) {
	f.Add([]byte{1, 0, 2, 3, 0, 1, 2, 0, 5}, int64(300))
	f.Add([]byte("tolerate everything"), int64(-1))
	f.Fuzz(func(t *testing.T, data []byte, seconds int64) {
		keys := []string{"", nc.TaintNotReady, nc.TaintUnreachable, "other"}
		ops := []v1.TolerationOperator{"", v1.TolerationOpExists, v1.TolerationOpEqual, "Gt"}
		effects := []v1.TaintEffect{"", v1.TaintEffectNoExecute, v1.TaintEffectNoSchedule}
		var tols []v1.Toleration
		var taints []v1.Taint
		for len(data) >= 4 {
			b := data[:4]
			data = data[4:]
			if b[0]&1 == 0 {
				tol := v1.Toleration{Key: keys[int(b[1])%len(keys)], Operator: ops[int(b[2])%len(ops)], Effect: effects[int(b[3])%len(effects)], Value: string(rune('a' + b[0]%3))}
				if b[0]&2 != 0 {
					s := seconds
					tol.TolerationSeconds = &s
				}
				tols = append(tols, tol)
			} else {
				taints = append(taints, v1.Taint{Key: keys[1+int(b[1])%3], Value: string(rune('a' + b[2]%3)), Effect: effects[1+int(b[3])%2]})
			}
		}
		ok, d := nc.TolerationTime(tols, taints)
		for i := range taints {
			if taints[i].Effect != v1.TaintEffectNoExecute {
				continue
			}
			found := false
			for j := range tols {
				found = found || nc.Tolerates(&tols[j], &taints[i])
			}
			if !found && ok {
				t.Fatalf("taint %v is tolerated by nothing, yet TolerationTime says tolerated", taints[i])
			}
		}
		if ok && d < -1 {
			t.Fatalf("toleration time %v", d)
		}
		with := nc.WithDefaultTolerations(tols, nc.DefaultTolerationSeconds, nc.DefaultTolerationSeconds)
		for _, key := range []string{nc.TaintNotReady, nc.TaintUnreachable} {
			taint := v1.Taint{Key: key, Effect: v1.TaintEffectNoExecute}
			covered := false
			for j := range with {
				covered = covered || ((with[j].Key == key || with[j].Key == "") && (with[j].Effect == "" || with[j].Effect == v1.TaintEffectNoExecute))
			}
			if !covered {
				t.Fatalf("after the admission defaults nothing names %v", taint)
			}
		}
		dec := nc.NewEvictor().Evaluate(t12, nc.PodKey{Namespace: "ns", Name: "p"}, tols, taints)
		switch {
		case !ok && dec.Action != nc.EvictionNow:
			t.Fatalf("untolerated but %v", dec)
		case ok && d < 0 && dec.Action != nc.EvictionNone:
			t.Fatalf("tolerated forever but %v", dec)
		case ok && d == 0 && dec.Action != nc.EvictionNow:
			t.Fatalf("zero toleration but %v", dec)
		case ok && d > 0 && (dec.Action != nc.EvictionSchedule || !dec.At.Equal(t12.Add(d))):
			t.Fatalf("tolerated for %v but %v", d, dec)
		}
		nc.Admit(nc.Pressures{Memory: true}, v1.PodQOSBestEffort, tols, false)
	})
}
