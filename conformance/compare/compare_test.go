package compare

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// TestNormalize: what differs between two copies of one pod on two nodes
// for no reason of behaviour is replaced: container IDs (by order of
// appearance, keeping the scheme), pod and host IPs, the namespace, name,
// UID and node in text, the token volume's random suffix and a pull's
// duration; times are taken aside relative to the pod's creation.
func TestNormalize(t *testing.T) {
	n := newNormalizer(subject{Namespace: "on-kubelet", Name: "web", UID: "u-1", Node: "kubelet-1"}, t0, []string{"192.0.2.2"})
	st := &corev1.PodStatus{
		Phase: corev1.PodRunning, HostIP: "192.0.2.2", PodIP: "10.244.1.7", PodIPs: []corev1.PodIP{{IP: "10.244.1.7"}},
		StartTime: &metav1.Time{Time: t0.Add(2 * time.Second)},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", ContainerID: "sim://abc-app-1",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: "back-off 10s restarting failed container=app pod=web_on-kubelet(u-1)"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ContainerID: "sim://abc-app-1",
				StartedAt: metav1.Time{Time: t0.Add(3 * time.Second)}, FinishedAt: metav1.Time{Time: t0.Add(6 * time.Second)}}},
			VolumeMounts: []corev1.VolumeMountStatus{{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets"}},
		}},
	}
	got, err := n.status(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"hostIP":"host-ip"`, `"podIP":"ip1"`, `"containerID":"sim://app#1"`, `pod=\u003cpod\u003e_\u003cnamespace\u003e(\u003cuid\u003e)`,
		`"kube-api-access-*"`, `"startTime":"t"`} {
		if !strings.Contains(got.Key, want) {
			t.Errorf("normalised status lacks %s:\n%s", want, got.Key)
		}
	}
	for path, want := range map[string]time.Duration{"startTime": 2 * time.Second,
		"containerStatuses[app].lastState.terminated.finishedAt": 6 * time.Second} {
		if got.Times[path] != want {
			t.Errorf("time %s = %v, want %v (times %v)", path, got.Times[path], want, got.Times)
		}
	}
	if s := n.text(`Successfully pulled image "x" in 1.234s (5.6s including waiting). Image size: 7 bytes.`); s != `Successfully pulled image "x" in <d> (<d> including waiting). Image size: 7 bytes.` {
		t.Errorf("pull message %q", s)
	}
	// A second ID of the same pod gets the next number; the first keeps its own.
	if id := n.containerID("sim://abc-app-2", "app"); id != "sim://app#2" {
		t.Errorf("second container ID %q", id)
	}
	if id := n.containerID("sim://abc-side-1", "side"); id != "sim://side#1" {
		t.Errorf("another container's first ID %q", id)
	}
	if id := n.containerID("sim://abc-app-1", "app"); id != "sim://app#1" {
		t.Errorf("first container ID again %q", id)
	}
	// A status that shows two instances of a container when it is met
	// first numbers the last state's, the older, first (oracle case
	// gen-108: a sidecar that exits at once and restarted within the
	// kubelet's first status of it).
	n = newNormalizer(subject{Namespace: "on-kubelet", Name: "web", UID: "u-1", Node: "kubelet-1"}, t0, nil)
	two := &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "sim://abc-app-2",
		State:                corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ContainerID: "sim://abc-app-2"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ContainerID: "sim://abc-app-1"}}}}}
	got, err = n.status(two)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"containerStatuses":[{"containerID":"sim://app#2"`, `"lastState":{"terminated":{"containerID":"sim://app#1"`} {
		if !strings.Contains(got.Key, want) {
			t.Errorf("two instances met at once: want %s in\n%s", want, got.Key)
		}
	}
}

// TestDiff: lists of named elements are compared by name, and the same
// elements in another order are a difference of their own.
func TestDiff(t *testing.T) {
	a := map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Initialized", "status": "True"}}}
	b := map[string]any{"conditions": []any{map[string]any{"type": "Initialized", "status": "True"}, map[string]any{"type": "Ready", "status": "False"}}}
	got := diff(a, b)
	want := []string{`conditions (order): kubelet Ready,Initialized, nodestate Initialized,Ready`,
		`conditions[Ready].status: kubelet "True", nodestate "False"`}
	if len(got) != len(want) {
		t.Fatalf("diff %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("diff[%d] = %s, want %s", i, got[i], want[i])
		}
	}
	if d := diff(a, a); len(d) != 0 {
		t.Errorf("an object differs from itself: %v", d)
	}
}

// ent is an entry of key k shown at at seconds.
func ent(k string, at float64, obj ...map[string]any) entry {
	o := map[string]any{"k": k}
	if len(obj) > 0 {
		o = obj[0]
	}
	return entry{normalized: normalized{Key: k, Obj: o, Times: map[string]time.Duration{}}, At: time.Duration(at * float64(time.Second))}
}

// entC is an entry whose container "app" is in state ("terminated" or
// "waiting", with message) with restarts.
func entC(k string, at float64, state, message string, restarts float64) entry {
	st := map[string]any{state: map[string]any{"reason": "Error"}}
	if state == "running" {
		st = map[string]any{"running": map[string]any{}}
	}
	if state == "waiting" {
		st = map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff", "message": message}}
	}
	return ent(k, at, map[string]any{"containerStatuses": []any{map[string]any{"name": "app", "state": st, "restartCount": restarts}}})
}

// TestCountsAgree: an event recorded more than once may differ by one, or
// by a third of the larger count (the crashloop case's BackOff: 5 or 7);
// one recorded once or never must match.
func TestCountsAgree(t *testing.T) {
	tol := DefaultTolerances()
	for _, c := range []struct {
		k, n int32
		want bool
	}{{7, 6, true}, {12, 10, true}, {7, 5, true}, {5, 7, true}, {9, 6, true}, {8, 4, false}, {1, 0, false}, {1, 2, false}, {2, 3, true}, {20, 13, false}, {0, 0, true}} {
		if got := tol.countsAgree(c.k, c.n); got != c.want {
			t.Errorf("countsAgree(%d, %d) = %v, want %v", c.k, c.n, got, c.want)
		}
	}
}

// seq closes a sequence: each entry lasts until the next, the last until end.
func seq(end float64, es ...entry) []entry {
	for i := range es {
		if i+1 < len(es) {
			es[i].Until = es[i+1].At
		} else {
			es[i].Until = time.Duration(end * float64(time.Second))
		}
	}
	return es
}

func kinds(ds []SequenceDifference) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Kind)
	}
	return strings.Join(out, ",")
}

// TestCompareSequences: the tolerances, case by case.
func TestCompareSequences(t *testing.T) {
	tol := DefaultTolerances()
	waiting := func(k, reason string) map[string]any {
		return map[string]any{"k": k, "containerStatuses": []any{map[string]any{"name": "app",
			"state": map[string]any{"waiting": map[string]any{"reason": reason}}}}}
	}
	for _, tc := range []struct {
		name   string
		a, b   []entry
		want   string
		reason string
	}{
		{"equal", seq(60, ent("A", 0), ent("B", 5)), seq(60, ent("A", 0), ent("B", 5.5)), "",
			"the same statuses within 2 s"},
		{"transient", seq(60, ent("A", 0), ent("X", 5), ent("B", 6)), seq(60, ent("A", 0), ent("B", 5.5)), "",
			"a status shown for 1 s on one node may be missing on the other"},
		{"long only on the kubelet", seq(60, ent("A", 0), ent("X", 5), ent("B", 15)), seq(60, ent("A", 0), ent("B", 15)), "only-kubelet",
			"a status shown for 10 s is a difference"},
		{"paired fields", seq(60, ent("A", 0), ent("X", 5)), seq(60, ent("A", 0), ent("Y", 5)), "fields",
			"two long statuses in one place are compared field by field"},
		{"late", seq(60, ent("A", 0), ent("B", 5)), seq(60, ent("A", 0), ent("B", 9)), "timing",
			"4 s later than the kubelet, beyond 2 s"},
		{"jittered back-off", seq(90, ent("A", 0), ent("W", 5, waiting("W", "CrashLoopBackOff")), ent("B", 30)),
			seq(90, ent("A", 0), ent("W", 5, waiting("W", "CrashLoopBackOff")), ent("B", 24)), "",
			"the change that ends a back-off may differ by half the wait"},
		{"not jittered", seq(90, ent("A", 0), ent("W", 5, waiting("W", "Running")), ent("B", 30)),
			seq(90, ent("A", 0), ent("W", 5, waiting("W", "Running")), ent("B", 24)), "timing",
			"a wait the pod worker does not jitter gets no allowance"},
		{"a long back-off shown by chance", seq(200, ent("R", 0), entC("E", 10, "terminated", "", 4), entC("W", 60, "waiting", "back-off 1m20s restarting failed container=app", 4), entC("R5", 92, "running", "", 5)),
			seq(200, ent("R", 0), entC("E", 10, "terminated", "", 4), entC("R5", 95, "running", "", 5)), "",
			"whether a sync falls into an 80 s back-off before its end is the jittered requeue's chance"},
		{"a short back-off is never by chance", seq(200, ent("R", 0), entC("E", 10, "terminated", "", 2), entC("W", 13, "waiting", "back-off 20s restarting failed container=app", 2), entC("R3", 32, "running", "", 3)),
			seq(200, ent("R", 0), entC("E", 10, "terminated", "", 2), entC("R3", 32, "running", "", 3)), "only-kubelet",
			"a 20 s back-off shown for 19 s by one node only is a difference"},
		{"drift at the end", seq(100, ent("A", 0), ent("W", 10, waiting("W", "CrashLoopBackOff")), ent("B", 40)),
			seq(100, ent("A", 0), ent("W", 10, waiting("W", "CrashLoopBackOff")), ent("B", 30), ent("C", 95)), "",
			"a status only one node shows once the two drifted apart by the end is the next one the other would show"},
	} {
		got := kinds(compareSequences(tc.a, tc.b, tc.a[len(tc.a)-1].Until, tol))
		if got != tc.want {
			t.Errorf("%s: %q, want %q (%s)", tc.name, got, tc.want, tc.reason)
		}
	}
}

// genSequence generates a status sequence: distinct keys, times increasing,
// each status shown for 0.1 to 40 s.
func genSequence(t *rapid.T, label string) []entry {
	n := rapid.IntRange(1, 12).Draw(t, label+"-n")
	var es []entry
	at := 0.0
	for i := range n {
		es = append(es, ent(fmt.Sprintf("S%d", rapid.IntRange(0, 5).Draw(t, fmt.Sprintf("%s-%d", label, i))), at))
		at += float64(rapid.IntRange(1, 400).Draw(t, fmt.Sprintf("%s-d%d", label, i))) / 10
	}
	var out []entry
	for _, e := range es {
		if len(out) == 0 || out[len(out)-1].Key != e.Key {
			out = append(out, e)
		}
	}
	return seq(at, out...)
}

// TestCompareSequencesProperties: a sequence never differs from itself
// (whatever its shape); dropping a status shown longer than the transient
// tolerance, not near the end, always makes a difference.
func TestCompareSequencesProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tol := DefaultTolerances()
		tol.ProbePeriod = false
		a := genSequence(t, "a")
		end := a[len(a)-1].Until
		if d := compareSequences(a, a, end, tol); len(d) != 0 {
			t.Fatalf("a sequence differs from itself: %v", d)
		}
		i := rapid.IntRange(0, len(a)-1).Draw(t, "drop")
		if a[i].lasted() < 5*time.Second || end-a[i].At < 30*time.Second || i == 0 || i == len(a)-1 || a[i-1].Key == a[i+1].Key {
			return
		}
		b := append(append([]entry(nil), a[:i]...), a[i+1:]...)
		b = seq(end.Seconds(), b...)
		if d := compareSequences(a, b, end, tol); len(d) == 0 {
			t.Fatalf("dropping %s (shown %v at %v) made no difference", a[i].Key, a[i].lasted(), a[i].At)
		}
	})
}

// TestBestPairing: a workload's interchangeable pods are paired the way
// that differs least (a Deployment's two pods, each pulling the image on
// one node and finding it present on the other); on a tie the creation
// order holds; a pod one node lacks is left out.
func TestBestPairing(t *testing.T) {
	h := func(name string) *history { return &history{Name: name} }
	// compare reports a difference for every pair whose names differ in
	// their last letter.
	compare := func(p [2]*history) PodReport {
		r := PodReport{Kubelet: p[0].Name, Nodestate: p[1].Name}
		if p[0].Name[len(p[0].Name)-1] != p[1].Name[len(p[1].Name)-1] {
			r.Events = []EventDifference{{}}
		}
		return r
	}
	names := func(rs []PodReport) string {
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(r.Kubelet + "=" + r.Nodestate + " ")
		}
		return b.String()
	}
	for _, tc := range []struct {
		pairs [][2]*history
		want  string
	}{
		{[][2]*history{{h("k-a"), h("n-b")}, {h("k-b"), h("n-a")}}, "k-a=n-a k-b=n-b "},
		{[][2]*history{{h("k-a"), h("n-a")}, {h("k-b"), h("n-b")}}, "k-a=n-a k-b=n-b "},
		{[][2]*history{{h("k-a"), h("n-x")}, {h("k-b"), h("n-y")}}, "k-a=n-x k-b=n-y "},
		{[][2]*history{{h("k-a"), h("n-c")}, {h("k-b"), h("n-a")}, {h("k-c"), h("n-b")}}, "k-a=n-a k-b=n-b k-c=n-c "},
		{[][2]*history{{h("k-a"), h("n-b")}, {h("k-b"), nil}}, "k-a=n-b "},
	} {
		if got := names(bestPairing(tc.pairs, compare)); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	p := []int{0, 1, 2}
	n := 1
	for nextPermutation(p) {
		n++
	}
	if n != 6 || !slices.Equal(p, []int{2, 1, 0}) {
		t.Errorf("%d permutations of 3, ending at %v", n, p)
	}
}

// TestConfirm: the workloads that differ without a documented or baseline
// reason run again, all at once from their start; one a rerun shows equal
// is counted as not reproduced and runs no more, one that differs in every
// rerun stays an undocumented difference; equal and baseline-explained
// workloads never run again.
func TestConfirm(t *testing.T) {
	differing := func(name string) WorkloadReport { return WorkloadReport{Name: name, Errors: []string{"differs"}} }
	rep := &Report{Workloads: []WorkloadReport{
		{Name: "equal"},
		differing("once"), differing("twice"), differing("always"),
		{Name: "baseline", Errors: []string{"differs"}, Baseline: &BaselineReport{Explained: ExplainedMatch}},
	}}
	var ws []Workload
	for _, w := range rep.Workloads {
		ws = append(ws, Workload{Name: w.Name, Start: time.Minute})
	}
	var asked [][]string
	err := confirm(rep, ws, 3, func(run int, again []Workload) (*Report, error) {
		var names []string
		out := &Report{}
		for _, w := range again {
			if w.Start != 0 {
				t.Errorf("run %d: %s starts at %v, want at once", run, w.Name, w.Start)
			}
			names = append(names, w.Name)
			switch {
			case w.Name == "once" && run == 1, w.Name == "twice" && run == 2:
				out.Workloads = append(out.Workloads, WorkloadReport{Name: w.Name})
			default:
				out.Workloads = append(out.Workloads, differing(w.Name))
			}
		}
		asked = append(asked, names)
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := confirm(nil, ws, 1, nil); err == nil {
		t.Error("a nil report: no error")
	}
	want := [][]string{{"once", "twice", "always"}, {"twice", "always"}, {"always"}}
	if fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Fatalf("reruns %v, want %v", asked, want)
	}
	for _, tt := range []struct {
		name       string
		runs       int
		reproduced bool
	}{{"once", 1, false}, {"twice", 2, false}, {"always", 3, true}} {
		w := &rep.Workloads[slices.IndexFunc(rep.Workloads, func(w WorkloadReport) bool { return w.Name == tt.name })]
		if w.Rerun == nil || w.Rerun.Runs != tt.runs || w.Rerun.Reproduced != tt.reproduced || w.Explained() == tt.reproduced {
			t.Errorf("%s: rerun %+v, explained %v; want %d runs, reproduced %v", tt.name, w.Rerun, w.Explained(), tt.runs, tt.reproduced)
		}
	}
	if rep.Workloads[0].Rerun != nil || rep.Workloads[4].Rerun != nil {
		t.Error("an equal or baseline-explained workload ran again")
	}
	if n := rep.Differences(); n != 1 {
		t.Errorf("%d undocumented differences left, want 1 (always)", n)
	}
	if d := rep.Documented(); d["not reproduced"] != 2 || d["baseline"] != 1 {
		t.Errorf("documented %v, want 2 not reproduced and 1 baseline", d)
	}
	if s := rep.String(); !strings.Contains(s, "rerun: 3 differing workloads ran again on their own: 2 did not differ again (timing), 1 differed each time") {
		t.Errorf("the report's summary lacks the reruns:\n%s", s)
	}
}
