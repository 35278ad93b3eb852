package podrunner_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"
)

// TestModel drives a runner with random calls (pods added with generated
// specs and behaviours, status echoes, label changes, graceful deletions,
// removals, notifications) in virtual time, and checks after every call:
// a status-only update and a notification with nothing to report cost no
// step; a label change of a running pod costs one; every running pod has a
// status with the node's host IP and, unless host-network, an address no
// other running pod has; Running is Added minus Finished; a removed pod
// that finished is forgotten with its status; the machines refuse nothing
// and nothing stalls.
func TestModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cache, _ := statussync.NewCache(statussync.DefaultOptions())
		opts := podrunner.DefaultOptions()
		opts.PodCIDR, opts.HostIPs = "10.244.1.0/24", []string{"192.0.2.10"}
		opts.OnDemandRelistDelay = time.Duration(rapid.SampledFrom([]int{0, 10, 300}).Draw(t, "onDemandMs")) * time.Millisecond
		r, err := podrunner.New(opts, cache, &recorder{})
		if err != nil {
			t.Fatal(err)
		}
		now := t0
		pods := map[types.UID]*v1.Pod{} // the newest object handed to the runner
		var uids []types.UID
		removed := map[types.UID]bool{}
		settle := func() {
			for next := r.Advance(now); !next.IsZero() && !next.After(now); next = r.Advance(now) {
			}
		}
		live := func(t *rapid.T) (types.UID, bool) {
			var cand []types.UID
			for _, uid := range uids {
				if !removed[uid] {
					cand = append(cand, uid)
				}
			}
			if len(cand) == 0 {
				return "", false
			}
			return rapid.SampledFrom(cand).Draw(t, "pod"), true
		}
		finished := func(uid types.UID) bool {
			st, ok := cache.GetPodStatus(uid)
			return ok && (st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed)
		}
		t.Repeat(map[string]func(*rapid.T){
			"add": func(t *rapid.T) {
				if len(uids) >= 8 {
					t.Skip("enough pods")
				}
				pod := podlifecycletest.Pod().Draw(t, "spec")
				bs := podlifecycletest.BehavioursFor(pod).Draw(t, "behaviours")
				pod.Name = fmt.Sprint("pod-", len(uids))
				pod.UID = types.UID("uid-" + pod.Name)
				pod.ResourceVersion = "1"
				pod.Spec.HostNetwork = rapid.IntRange(0, 4).Draw(t, "hostNetwork") == 0
				rt, err := simruntime.New(simruntime.DefaultOptions(), pod, bs)
				if err != nil {
					t.Fatal(err)
				}
				if err := r.Add(pod, rt); err != nil {
					t.Fatal(err)
				}
				pods[pod.UID] = pod
				uids = append(uids, pod.UID)
				settle()
			},
			"echo": func(t *rapid.T) {
				uid, ok := live(t)
				if !ok {
					t.Skip("no pod")
				}
				st, _ := cache.GetPodStatus(uid)
				p := pods[uid].DeepCopy()
				p.Status = st
				p.ResourceVersion += "e"
				steps := r.Stats().Steps
				if err := r.Update(p); err != nil {
					t.Fatal(err)
				}
				pods[uid] = p
				settle()
				if s := r.Stats().Steps; s != steps {
					t.Fatalf("a status-only update of %s stepped the machine (%d steps, was %d)", uid, s, steps)
				}
			},
			"notify": func(t *rapid.T) {
				uid, ok := live(t)
				if !ok {
					t.Skip("no pod")
				}
				steps := r.Stats().Steps
				_ = r.Notify(uid)
				settle()
				if s := r.Stats().Steps; s != steps {
					t.Fatalf("a notification with nothing to report stepped %s", uid)
				}
			},
			"label": func(t *rapid.T) {
				uid, ok := live(t)
				if !ok {
					t.Skip("no pod")
				}
				p := pods[uid].DeepCopy()
				p.Labels = map[string]string{"v": p.ResourceVersion}
				p.ResourceVersion += "l"
				steps, fin := r.Stats().Steps, r.Stats().Finished
				_ = r.Update(p)
				pods[uid] = p
				settle()
				if s := r.Stats(); s.Finished == fin && !finished(uid) && s.Steps == steps {
					t.Fatalf("a label change of running pod %s did not sync it", uid)
				}
			},
			"delete": func(t *rapid.T) {
				uid, ok := live(t)
				if !ok || pods[uid].DeletionTimestamp != nil {
					t.Skip("no pod to delete")
				}
				p := pods[uid].DeepCopy()
				ts := metav1.NewTime(now)
				g := rapid.Int64Range(0, 30).Draw(t, "grace")
				p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &g
				p.ResourceVersion += "d"
				_ = r.Update(p)
				pods[uid] = p
				settle()
			},
			"remove": func(t *rapid.T) {
				uid, ok := live(t)
				if !ok {
					t.Skip("no pod")
				}
				if err := r.Remove(uid, pods[uid]); err != nil {
					t.Fatal(err)
				}
				removed[uid] = true
				settle()
			},
			"advance": func(t *rapid.T) {
				now = now.Add(time.Duration(rapid.IntRange(1, 120).Draw(t, "seconds")) * time.Second)
				settle()
			},
			"": func(t *rapid.T) {
				s := r.Stats()
				if s.StepErrors != 0 || s.DroppedObservations != 0 || s.Stalls != 0 || s.StatusErrors != 0 {
					t.Fatalf("stats %+v", s)
				}
				if s.Running != s.Added-s.Finished {
					t.Fatalf("running %d, added %d, finished %d", s.Running, s.Added, s.Finished)
				}
				var ips []string
				for _, uid := range uids {
					_, known := r.Pod(uid)
					st, cached := cache.GetPodStatus(uid)
					switch {
					case removed[uid] && !known:
						if cached {
							t.Fatalf("forgotten pod %s still has a status", uid)
						}
						continue
					case !known:
						t.Fatalf("pod %s forgotten without a Remove", uid)
					case !cached:
						t.Fatalf("pod %s has no status", uid)
					case st.HostIP != "192.0.2.10":
						t.Fatalf("pod %s: host IP %q", uid, st.HostIP)
					}
					if finished(uid) || st.PodIP == "" {
						continue
					}
					if pods[uid].Spec.HostNetwork {
						if st.PodIP != "192.0.2.10" {
							t.Fatalf("host-network pod %s: pod IP %q", uid, st.PodIP)
						}
						continue
					}
					if slices.Contains(ips, st.PodIP) {
						t.Fatalf("pod IP %s given twice", st.PodIP)
					}
					ips = append(ips, st.PodIP)
				}
			},
		})
	})
}
