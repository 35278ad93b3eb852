package podrunner_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestPlainPod: a pod added runs to Running within its first instant, with
// the pod's IP from the pod CIDR, the node's host IP, and the kubelet's
// events against the container's field path.
func TestPlainPod(t *testing.T) {
	n := defaultNode(t)
	n.add(testPod("web", nil, "app"))
	n.run(time.Second)
	st := n.status("uid-web")
	if st.Phase != v1.PodRunning || state(st, "app") != "Running" {
		t.Fatalf("phase %s, app %s", st.Phase, state(st, "app"))
	}
	if st.PodIP != "10.244.1.2" || len(st.PodIPs) != 1 || st.HostIP != "192.0.2.10" || len(st.HostIPs) != 1 || st.HostIPs[0].IP != "192.0.2.10" {
		t.Fatalf("pod IP %q %v, host IP %q %v", st.PodIP, st.PodIPs, st.HostIP, st.HostIPs)
	}
	want := []string{
		`Normal Pulling spec.containers{app}: Pulling image "app:1"`,
		`Normal Pulled spec.containers{app}: Successfully pulled image "app:1" in 0s (0s including waiting). Image size: 1048576 bytes.`,
		`Normal Created spec.containers{app}: Container created`,
		`Normal Started spec.containers{app}: Container started`,
	}
	if d := cmp.Diff(want, n.rec.reasons()); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	ref := n.rec.refs[0]
	if ref.Kind != "Pod" || ref.APIVersion != "v1" || ref.Name != "web" || ref.Namespace != "default" || ref.UID != "uid-web" || ref.ResourceVersion != "1" {
		t.Fatalf("involved object %+v", ref)
	}
	if s := n.r.Stats(); s.Added != 1 || s.Running != 1 || s.Steps == 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestStatusesGoToTheCache: once a step's statuses are in the cache the
// runner lets its copies go, so a settled pod holds its status once, in
// the cache, not also in the result of its last step.
func TestStatusesGoToTheCache(t *testing.T) {
	opts := podrunner.DefaultOptions()
	var results []*podlifecycle.Result
	statuses := 0
	opts.Hooks.Synced = func(_ time.Time, _ *v1.Pod, _ []podlifecycle.Observation, res *podlifecycle.Result) {
		statuses += len(res.Statuses)
		results = append(results, res) // kept past the call only to look at what the runner left in it
	}
	n := newNode(t, opts)
	n.add(testPod("web", nil, "app"))
	n.run(time.Second)
	if statuses == 0 {
		t.Fatal("no step produced a status")
	}
	for _, res := range results {
		if len(res.Statuses) != 0 {
			t.Fatalf("the runner keeps %d statuses after carrying them out", len(res.Statuses))
		}
	}
	if st := n.status("uid-web"); state(st, "app") != "Running" {
		t.Fatalf("cached app %s, want Running", state(st, "app"))
	}
}

// TestPodIPs: every pod that is not host-network gets its own address,
// lowest free first; a host-network pod gets the node's addresses as pod
// IPs and takes none; a pod removed gives its address back.
func TestPodIPs(t *testing.T) {
	n := defaultNode(t)
	for _, name := range []string{"a", "b", "c"} {
		n.add(testPod(name, nil, "app"))
	}
	host := testPod("host", nil, "app")
	host.Spec.HostNetwork = true
	n.add(host)
	n.run(time.Second)
	for name, ip := range map[string]string{"a": "10.244.1.2", "b": "10.244.1.3", "c": "10.244.1.4", "host": "192.0.2.10"} {
		if st := n.status(types.UID("uid-" + name)); st.PodIP != ip || st.PodIPs[0].IP != ip {
			t.Errorf("%s: pod IP %q, want %q", name, st.PodIP, ip)
		}
	}
	if err := n.r.Remove("uid-b", nil); err != nil {
		t.Fatal(err)
	}
	n.run(time.Minute) // killed with the minimum grace, then forgotten
	if _, ok := n.r.Pod("uid-b"); ok {
		t.Fatal("removed pod still known")
	}
	n.add(testPod("d", nil, "app"))
	n.run(time.Second)
	if st := n.status("uid-d"); st.PodIP != "10.244.1.3" {
		t.Fatalf("the freed address is not handed out again: %q", st.PodIP)
	}
}

// TestPodCIDRExhausted: Add refuses a pod when the range has no free
// address, so the caller can reject it; host-network pods need none.
func TestPodCIDRExhausted(t *testing.T) {
	opts := podrunner.DefaultOptions()
	opts.PodCIDR = "10.0.0.0/30" // one usable address
	n := newNode(t, opts)
	n.add(testPod("a", nil, "app"))
	rt, _ := simruntime.New(simruntime.DefaultOptions(), testPod("b", nil, "app"), nil)
	err := n.r.Add(testPod("b", nil, "app"), rt)
	var pe *podrunner.PodError
	if !errors.Is(err, podrunner.ErrPodCIDRExhausted) || !errors.As(err, &pe) || pe.Name != "b" || !strings.Contains(err.Error(), "10.0.0.0/30") {
		t.Fatalf("second pod: %v", err)
	}
	host := testPod("host", nil, "app")
	host.Spec.HostNetwork = true
	n.add(host)
	if err := n.r.SetPodCIDR("10.0.1.0/24"); err != nil {
		t.Fatal(err)
	}
	n.add(testPod("b", nil, "app"))
	n.run(time.Second)
	if st := n.status("uid-b"); st.PodIP != "10.0.1.2" {
		t.Fatalf("after SetPodCIDR: %q", st.PodIP)
	}
	if err := n.r.SetPodCIDR("10.0.1.0/31"); !errors.Is(err, podrunner.ErrInvalidOptions) {
		t.Fatalf("SetPodCIDR of a /31: %v", err)
	}
}

// echo is what a watch delivers after the node's own status write: the
// same pod with the new status and a new resourceVersion.
func echo(pod *v1.Pod, st v1.PodStatus, rv string) *v1.Pod {
	p := pod.DeepCopy()
	p.Status, p.ResourceVersion = *st.DeepCopy(), rv
	return p
}

// TestStatusOnlyUpdateCostsNoSync: the node's own status write coming back
// from the watch is no sync trigger (spec/podlifecycle.md rule 4.5); a
// label change is.
func TestStatusOnlyUpdateCostsNoSync(t *testing.T) {
	n := defaultNode(t)
	pod := testPod("web", nil, "app")
	n.add(pod)
	n.run(time.Second)
	steps := n.r.Stats().Steps
	cur := echo(pod, n.status("uid-web"), "2")
	if err := n.r.Update(cur); err != nil {
		t.Fatal(err)
	}
	n.run(time.Second)
	if s := n.r.Stats().Steps; s != steps {
		t.Fatalf("a status-only update stepped the machine: %d steps, was %d", s, steps)
	}
	if p, _ := n.r.Pod("uid-web"); p != cur {
		t.Fatal("the runner does not hold the newest object")
	}
	if s := n.r.Stats(); s.Updates != 1 || s.UpdatesSynced != 0 {
		t.Fatalf("after the echo: %d updates, %d synced; want 1, 0", s.Updates, s.UpdatesSynced)
	}
	labelled := cur.DeepCopy()
	labelled.Labels = map[string]string{"tier": "web"}
	labelled.ResourceVersion = "3"
	_ = n.r.Update(labelled)
	n.run(time.Second)
	if s := n.r.Stats().Steps; s != steps+1 {
		t.Fatalf("a label change: %d steps, want %d", s, steps+1)
	}
	if s := n.r.Stats(); s.Updates != 2 || s.UpdatesSynced != 1 {
		t.Fatalf("after the label change: %d updates, %d synced; want 2, 1", s.Updates, s.UpdatesSynced)
	}
}

// TestReadinessGateReconcile: a status-only update that sets a readiness
// gate's condition syncs the pod, whose Ready condition then turns True
// (rule 4.5, the readiness reconcile).
func TestReadinessGateReconcile(t *testing.T) {
	n := defaultNode(t)
	pod := testPod("gated", nil, "app")
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/lb"}}
	n.add(pod)
	n.run(time.Second)
	st := n.status("uid-gated")
	if c := cond(st, v1.PodReady); c == nil || c.Status != v1.ConditionFalse {
		t.Fatalf("Ready before the gate: %+v", c)
	}
	steps := n.r.Stats().Steps
	gated := echo(pod, st, "2")
	gated.Status.Conditions = append(gated.Status.Conditions, v1.PodCondition{Type: "example.com/lb", Status: v1.ConditionTrue})
	_ = n.r.Update(gated)
	n.run(time.Second)
	if s := n.r.Stats().Steps; s != steps+1 {
		t.Fatalf("the gate's condition: %d steps, want %d", s, steps+1)
	}
	if c := cond(n.status("uid-gated"), v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("Ready after the gate: %+v", c)
	}
}

func cond(st v1.PodStatus, t v1.PodConditionType) *v1.PodCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// TestCrashLoopDisplay: a container exiting 1 after 3 s, followed over
// five restarts with every status write coming back from the "watch":
// the first restart is at once; after each later crash the container
// shows Terminated/Error until its back-off (10, 20, 40, 80 s) expires, and
// CrashLoopBackOff only in the status of the sync that restarts it (what
// the real kubelet shows with the default 1 min resync; rules 4.3, 4.5).
func TestCrashLoopDisplay(t *testing.T) {
	var rows []string
	var n *node
	opts := podrunner.DefaultOptions()
	opts.PodCIDR = "10.244.1.0/24"
	rv := 1
	opts.Hooks.Synced = func(_ time.Time, pod *v1.Pod, _ []podlifecycle.Observation, res *podlifecycle.Result) {
		for _, st := range res.Statuses {
			row := state(st, "app") + " at " + n.now.Sub(t0).String()
			if len(rows) == 0 || !strings.HasPrefix(rows[len(rows)-1], state(st, "app")+" ") {
				rows = append(rows, row)
			}
			// The watch delivers the node's own write back.
			rv++
			_ = n.r.Update(echo(pod, st, strconv.Itoa(rv)))
		}
	}
	n = newNode(t, opts)
	n.add(testPod("crash", map[string]string{simruntime.AnnotationPrefix + "app": "run 3s exit 1"}, "app"))
	n.run(170 * time.Second)
	want := []string{
		"Waiting/ContainerCreating at 0s",
		"Running at 0s",
		"Terminated/Error at 3s", // the first crash: restarted in the sync its exit triggers
		"Running at 3s",
		"Terminated/Error at 6s",
		"Waiting/CrashLoopBackOff at 16s",
		"Running at 16s",
		"Terminated/Error at 19s",
		"Waiting/CrashLoopBackOff at 39s",
		"Running at 39s",
		"Terminated/Error at 42s",
		"Waiting/CrashLoopBackOff at 1m22s",
		"Running at 1m22s",
		"Terminated/Error at 1m25s",
		// The 80 s back-off's requeue is clamped to the 1 min resync: the
		// sync at 2m25s shows the back-off, the one at its expiry restarts.
		"Waiting/CrashLoopBackOff at 2m25s",
		"Running at 2m45s",
		"Terminated/Error at 2m48s",
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Fatalf("the container's states over five restarts (-want +got):\n%s", d)
	}
}
