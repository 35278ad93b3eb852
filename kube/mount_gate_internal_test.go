package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/podlifecycle"
)

// mntStepClock is a fake clock whose timers fire at once, moving the clock
// to their end: a loop that waits on it runs without another goroutine.
type mntStepClock struct {
	*clocktesting.FakeClock
}

func (c mntStepClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d)
	c.FakeClock.Step(d)
	return t
}

// mntForbidden answers the first n gets of resource with the Node
// authorizer's 403, and counts every get. After limit gets it answers a
// plain error, so that a lookup that would never end does end.
func mntForbidden(cs *fake.Clientset, resource string, n, limit int, gets *int) {
	cs.PrependReactor("get", resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		*gets++
		switch {
		case *gets > limit:
			return true, nil, errors.New("too many lookups")
		case *gets <= n:
			return true, nil, apierrors.NewForbidden(corev1.Resource(resource), "x", errors.New("no relationship found"))
		}
		return false, nil, nil
	})
}

// TestMountLookupWaitsForNodeAuthorizer: a ConfigMap or Secret lookup that
// the Node authorizer refuses is tried again every 50 ms for up to a second
// (the kubelet's watch-based manager waiting for its cache), so the error
// reported is the object's real state once the node may read it; an
// answer other than Forbidden ends the lookup at once; a lookup still
// refused after a second, or whose context ended, reports the refusal.
func TestMountLookupWaitsForNodeAuthorizer(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	t.Run("refused twice, then not found", func(t *testing.T) {
		cs, gets := fake.NewClientset(), 0
		mntForbidden(cs, "configmaps", 2, 100, &gets)
		clk := mntStepClock{clocktesting.NewFakeClock(t0)}
		err := apiObjects{client: cs, clock: clk}.ConfigMap(context.Background(), "ns", "settings")
		if err == nil || err.Error() != `configmap "settings" not found` {
			t.Fatalf("error %v, want the watch-based manager's not found", err)
		}
		if gets != 3 || !clk.Now().Equal(t0.Add(100*time.Millisecond)) {
			t.Errorf("%d gets over %v, want 3 over 100ms", gets, clk.Now().Sub(t0))
		}
	})
	t.Run("visible at once", func(t *testing.T) {
		cs, gets := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "ns"}}), 0
		mntForbidden(cs, "secrets", 0, 100, &gets)
		clk := mntStepClock{clocktesting.NewFakeClock(t0)}
		if err := (apiObjects{client: cs, clock: clk}).Secret(context.Background(), "ns", "tls"); err != nil || gets != 1 {
			t.Errorf("error %v after %d gets, want none after 1", err, gets)
		}
	})
	t.Run("refused for a second", func(t *testing.T) {
		cs, gets := fake.NewClientset(), 0
		mntForbidden(cs, "secrets", 1000, 100, &gets)
		clk := mntStepClock{clocktesting.NewFakeClock(t0)}
		err := apiObjects{client: cs, clock: clk}.Secret(context.Background(), "ns", "tls")
		if !apierrors.IsForbidden(err) {
			t.Fatalf("error %v, want the refusal", err)
		}
		if gets != 21 || !clk.Now().Equal(t0.Add(visibleWithin)) {
			t.Errorf("%d gets over %v, want 21 (every 50ms) over 1s", gets, clk.Now().Sub(t0))
		}
	})
	t.Run("context ended", func(t *testing.T) {
		cs, gets := fake.NewClientset(), 0
		mntForbidden(cs, "configmaps", 1000, 100, &gets)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		clk := clocktesting.NewFakeClock(t0)
		if err := (apiObjects{client: cs, clock: clk}).ConfigMap(ctx, "ns", "settings"); !apierrors.IsForbidden(err) || gets != 1 {
			t.Errorf("error %v after %d gets, want the refusal after 1", err, gets)
		}
	})
}

// TestMountClaimLookupThroughAPI: a claim read from the API server is
// checked as the kubelet checks it: a missing claim cannot be fetched (the
// client's empty object is not taken for an unbound claim); a bound one
// with its volume is usable.
func TestMountClaimLookupThroughAPI(t *testing.T) {
	bound := claim(corev1.ClaimBound, "pv-1", false)
	bound.Name, bound.Namespace = "data", "ns"
	objs := apiObjects{client: fake.NewClientset(bound), clock: clocktesting.NewFakeClock(time.Unix(0, 0))}
	err := claimUsable(context.Background(), objs, "ns", "gone")
	if want := `failed to fetch PVC from API server: persistentvolumeclaims "gone" not found`; err == nil || err.Error() != want {
		t.Errorf("missing claim: %v, want %q", err, want)
	}
	if err := claimUsable(context.Background(), objs, "ns", "data"); err != nil {
		t.Errorf("bound claim: %v", err)
	}
}

// TestCheckVolumesLooksAtEveryVolume: a volume no container mounts, or one
// that is set up without a claim, does not end the look: the volumes after
// it are still checked.
func TestCheckVolumesLooksAtEveryVolume(t *testing.T) {
	objs := &fakeObjects{configMaps: []string{"cfg"}}
	pod := volumePod([]corev1.Volume{cmVol("unused", "nope", nil), cmVol("c", "nope", nil)}, []string{"c"})
	c := checkVolumes(context.Background(), pod, objs)
	if diff := cmp.Diff([]string{"c"}, c.unmountedNames); diff != "" {
		t.Errorf("after an unmounted volume (-want +got):\n%s", diff)
	}
	pod = volumePod([]corev1.Volume{cmVol("ok", "cfg", nil), pvcVol("d", "gone")}, []string{"ok", "d"})
	c = checkVolumes(context.Background(), pod, objs)
	if diff := cmp.Diff([]string{"d"}, c.processFailed); diff != "" {
		t.Errorf("after a volume set up (-want +got):\n%s", diff)
	}
}

// TestMountGateBackoffStartsAtFirstSetupFailure: looks that found only a
// claim that cannot be processed do not advance the set-up back-off: the
// first set-up failure that follows is reported at once and tried again
// after 500 ms.
func TestMountGateBackoffStartsAtFirstSetupFailure(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	g := mountGate{next: t0, syncAt: t0, setupAt: t0, delay: mountRetryFirst}
	claimOnly := checkVolumes(context.Background(), volumePod([]corev1.Volume{pvcVol("d", "gone")}, []string{"d"}), &fakeObjects{})
	for i := 0; i < 2; i++ {
		at := t0.Add(time.Duration(i) * syncRetry)
		if got := g.failed(&claimOnly, at); len(got) != 1 {
			t.Fatalf("at %v: events %q, want the wait's only", at.Sub(t0), got)
		}
	}
	both := checkVolumes(context.Background(), volumePod([]corev1.Volume{pvcVol("d", "gone"), cmVol("c", "nope", nil)}, []string{"d", "c"}), &fakeObjects{})
	at := t0.Add(2 * syncRetry)
	got := g.failed(&both, at)
	if len(got) != 2 || got[0] != both.setupMessages[0] {
		t.Fatalf("events %q, want the set-up failure then the wait's", got)
	}
	if want := at.Add(mountRetryFirst); !g.next.Equal(want) {
		t.Errorf("next look after %v, want %v", g.next.Sub(at), mountRetryFirst)
	}
}

// TestNeedsGate: a pod waits before its sandbox for a RuntimeClass or for
// a ConfigMap, Secret, claim or ephemeral volume; other sources need no
// wait.
func TestNeedsGate(t *testing.T) {
	vol := func(src corev1.VolumeSource) []corev1.Volume { return []corev1.Volume{{Name: "v", VolumeSource: src}} }
	cases := []struct {
		name string
		rc   *string
		vols []corev1.Volume
		want bool
	}{
		{"nothing", nil, nil, false},
		{"emptyDir", nil, vol(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}), false},
		{"runtime class", ptr.To("gvisor"), nil, true},
		{"ConfigMap", nil, vol(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}), true},
		{"Secret", nil, vol(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}), true},
		{"claim", nil, vol(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{}}), true},
		{"ephemeral", nil, vol(corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}), true},
	}
	for _, tc := range cases {
		pod := volumePod(tc.vols, nil)
		pod.Spec.RuntimeClassName = tc.rc
		if got := needsGate(pod); got != tc.want {
			t.Errorf("%s: needsGate = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// mntRuntime records the actions it is given; it refuses them while err
// is set, and reports due and next.
type mntRuntime struct {
	calls [][]podlifecycle.Action
	err   error
	due   []podlifecycle.Observation
	next  time.Time
}

func (r *mntRuntime) Do(_ time.Time, actions []podlifecycle.Action) error {
	r.calls = append(r.calls, append([]podlifecycle.Action(nil), actions...))
	return r.err
}

func (r *mntRuntime) Due(time.Time) []podlifecycle.Observation {
	d := r.due
	r.due = nil
	return d
}

func (r *mntRuntime) Next() time.Time { return r.next }

// mntSink keeps the events the node's broadcaster writes.
type mntSink struct{ got []string }

func (s *mntSink) Create(_ context.Context, ev *corev1.Event) (*corev1.Event, error) {
	s.got = append(s.got, ev.Reason+" "+ev.Message)
	return ev.DeepCopy(), nil
}

func (s *mntSink) Patch(_ context.Context, ev *corev1.Event, _ []byte) (*corev1.Event, error) {
	s.got = append(s.got, ev.Reason+" "+ev.Message)
	return ev.DeepCopy(), nil
}

// mntNode is a node on a fake clock whose pods' objects are objs and whose
// events go to the returned sink (written by mntEvents).
func mntNode(t *testing.T, objs mountObjects) (*Node, *clocktesting.FakeClock, *mntSink) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	opts := DefaultOptions("n1")
	opts.Clock = clk
	n, err := NewNode(opts, fake.NewClientset())
	if err != nil {
		t.Fatal(err)
	}
	n.objects = objs
	sink := &mntSink{}
	if err := n.bcast.AddSink(sink, events.DefaultCorrelatorOptions()); err != nil {
		t.Fatal(err)
	}
	return n, clk, sink
}

// mntEvents writes the node's queued events and returns those written since
// the last call.
func mntEvents(t *testing.T, n *Node, sink *mntSink) []string {
	t.Helper()
	if err := n.bcast.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := sink.got
	sink.got = nil
	return got
}

// mntGated is pod admitted on n, behind the volume gate, on rt.
func mntGated(n *Node, pod *corev1.Pod, rt Runtime) *gatedRuntime {
	n.pods[pod.UID] = &nodePod{api: pod, running: true, inRunner: true}
	return &gatedRuntime{Runtime: rt, n: n, pod: pod}
}

func mntActions(kinds ...podlifecycle.ActionKind) []podlifecycle.Action {
	out := make([]podlifecycle.Action, len(kinds))
	for i, k := range kinds {
		out[i] = podlifecycle.Action{Kind: k, Attempt: 1}
	}
	return out
}

// mntSettingsPod is a pod whose container mounts ConfigMap "settings" as
// volume "c".
func mntSettingsPod(name string) *corev1.Pod {
	pod := volumePod([]corev1.Volume{cmVol("c", "settings", nil)}, []string{"c"})
	pod.Name, pod.UID = name, "uid-"+types.UID(name)
	return pod
}

// TestGatedRuntimeHoldsSandboxUntilMounted: the gate lets a sync without a
// sandbox creation through, passes on what precedes the creation and holds
// the creation and what follows while a volume is not set up, recording a
// FailedMount event and counting the failure; the node's next wake-up is
// the gate's next look, earlier than the runtime's; once the volume is set
// up the held actions go to the runtime, and the node wakes for the
// runtime again; the volumes stay mounted for later sandboxes.
func TestGatedRuntimeHoldsSandboxUntilMounted(t *testing.T) {
	objs := &fakeObjects{}
	n, clk, sink := mntNode(t, objs)
	rt := &mntRuntime{}
	t0 := clk.Now()
	g := mntGated(n, mntSettingsPod("web"), rt)
	if err := g.Do(t0, mntActions(podlifecycle.KillSandbox)); err != nil || len(rt.calls) != 1 || objs.reads != 0 {
		t.Fatalf("a sync without a sandbox: error %v, runtime calls %v, %d lookups", err, rt.calls, objs.reads)
	}
	rt.calls = nil
	if err := g.Do(t0, mntActions(podlifecycle.KillSandbox, podlifecycle.CreateSandbox, podlifecycle.PullImage)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]podlifecycle.Action{mntActions(podlifecycle.KillSandbox)}, rt.calls); diff != "" {
		t.Errorf("runtime calls while held (-want +got):\n%s", diff)
	}
	want := []string{`FailedMount MountVolume.SetUp failed for volume "c" : configmap "settings" not found`}
	if diff := cmp.Diff(want, mntEvents(t, n, sink)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := n.Stats().MountFailures; got != 1 {
		t.Errorf("MountFailures %d, want 1", got)
	}
	for _, r := range []time.Time{{}, t0.Add(10 * time.Second)} {
		rt.next = r
		if got := g.Next(); !got.Equal(t0.Add(mountRetryFirst)) {
			t.Errorf("runtime next %v: Next after %v, want the gate's look after %v", r, got.Sub(t0), mountRetryFirst)
		}
	}
	objs.configMaps = []string{"settings"}
	clk.Step(mountRetryFirst)
	if obs := g.Due(clk.Now()); len(obs) != 0 {
		t.Errorf("observations %v", obs)
	}
	wantCalls := [][]podlifecycle.Action{mntActions(podlifecycle.KillSandbox), mntActions(podlifecycle.CreateSandbox, podlifecycle.PullImage)}
	if diff := cmp.Diff(wantCalls, rt.calls); diff != "" {
		t.Errorf("runtime calls once mounted (-want +got):\n%s", diff)
	}
	if got := g.Next(); !got.Equal(rt.next) {
		t.Errorf("Next after %v, want the runtime's after 10s", got.Sub(t0))
	}
	if got := n.Stats().MountFailures; got != 1 {
		t.Errorf("MountFailures %d, want 1", got)
	}
	reads := objs.reads
	if err := g.Do(clk.Now(), mntActions(podlifecycle.KillSandbox, podlifecycle.CreateSandbox)); err != nil {
		t.Fatal(err)
	}
	wantCalls = append(wantCalls, mntActions(podlifecycle.KillSandbox, podlifecycle.CreateSandbox))
	if diff := cmp.Diff(wantCalls, rt.calls); diff != "" || objs.reads != reads {
		t.Errorf("a later sandbox: %d lookups, runtime calls (-want +got):\n%s", objs.reads-reads, diff)
	}
}

// TestGatedRuntimeRuntimeClass: each sandbox creation of a pod with a
// RuntimeClass looks the class up; while the API server does not have it
// the creation fails with the server's error, reported before the
// runtime's observations, and the runtime is not asked; once it exists the
// runtime creates the sandbox. An empty class name is the default handler,
// with no lookup.
func TestGatedRuntimeRuntimeClass(t *testing.T) {
	objs := &fakeObjects{}
	n, clk, _ := mntNode(t, objs)
	rt := &mntRuntime{}
	pod := volumePod(nil, nil)
	pod.Spec.RuntimeClassName = ptr.To("gvisor")
	g := mntGated(n, pod, rt)
	now := clk.Now()
	exited := podlifecycle.Observation{Kind: podlifecycle.ContainerExited, Container: "app"}
	for attempt := uint32(0); attempt < 2; attempt++ {
		if err := g.Do(now, []podlifecycle.Action{{Kind: podlifecycle.CreateSandbox, Attempt: attempt}}); err != nil {
			t.Fatal(err)
		}
		rt.due = []podlifecycle.Observation{exited}
		want := []podlifecycle.Observation{{Kind: podlifecycle.SandboxCreateFailed, Attempt: attempt,
			Message: `runtimeclasses.node.k8s.io "gvisor" not found`}, exited}
		if diff := cmp.Diff(want, g.Due(now)); diff != "" {
			t.Errorf("attempt %d: observations (-want +got):\n%s", attempt, diff)
		}
	}
	if len(rt.calls) != 0 {
		t.Errorf("runtime calls %v without the class", rt.calls)
	}
	objs.runtimeClasses = []string{"gvisor"}
	create := []podlifecycle.Action{{Kind: podlifecycle.CreateSandbox, Attempt: 2}}
	if err := g.Do(now, create); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]podlifecycle.Action{create}, rt.calls); diff != "" {
		t.Errorf("runtime calls with the class (-want +got):\n%s", diff)
	}
	if obs := g.Due(now); len(obs) != 0 {
		t.Errorf("observations %v", obs)
	}
	plain := volumePod(nil, nil)
	plain.Name, plain.UID, plain.Spec.RuntimeClassName = "plain", "uid-plain", ptr.To("")
	rt2, reads := &mntRuntime{}, objs.reads
	if err := mntGated(n, plain, rt2).Do(now, create); err != nil || len(rt2.calls) != 1 || objs.reads != reads {
		t.Errorf("empty class name: error %v, runtime calls %v, %d lookups", err, rt2.calls, objs.reads-reads)
	}
}

// TestGatedRuntimeDeletedWhileHeld: a pod deleted while its sandbox
// creation is held (the node's newest object has a deletion timestamp)
// ends the creation without a sandbox, reported before the runtime's
// observations; the runtime is not asked anything meanwhile.
func TestGatedRuntimeDeletedWhileHeld(t *testing.T) {
	n, clk, _ := mntNode(t, &fakeObjects{})
	rt := &mntRuntime{}
	pod := mntSettingsPod("web")
	g := mntGated(n, pod, rt)
	now := clk.Now()
	if err := g.Do(now, mntActions(podlifecycle.CreateSandbox)); err != nil || len(rt.calls) != 0 {
		t.Fatalf("held: error %v, runtime calls %v", err, rt.calls)
	}
	deleting := pod.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	n.pods[pod.UID].api = deleting
	exited := podlifecycle.Observation{Kind: podlifecycle.ContainerExited, Container: "app"}
	rt.due = []podlifecycle.Observation{exited}
	want := []podlifecycle.Observation{{Kind: podlifecycle.SandboxCreateFailed, Attempt: 1, Message: "pod is being deleted"}, exited}
	if diff := cmp.Diff(want, g.Due(now)); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
	if len(rt.calls) != 0 || !g.Next().IsZero() {
		t.Errorf("runtime calls %v, next wake-up %v; want none", rt.calls, g.Next())
	}
}

// TestGatedRuntimeRetriesRefusedSandbox: a runtime that refuses the
// released actions gets them again a second later, and only until it takes
// them; a refusal of the actions before the sandbox creation is the sync's
// error, and nothing is held.
func TestGatedRuntimeRetriesRefusedSandbox(t *testing.T) {
	n, clk, _ := mntNode(t, &fakeObjects{configMaps: []string{"settings"}})
	down := errors.New("runtime unreachable")
	rt := &mntRuntime{err: down}
	g := mntGated(n, mntSettingsPod("web"), rt)
	t0 := clk.Now()
	if err := g.Do(t0, mntActions(podlifecycle.CreateSandbox)); err != nil || len(rt.calls) != 1 {
		t.Fatalf("error %v, runtime calls %v; want the actions taken, tried once", err, rt.calls)
	}
	if got := g.Next(); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("Next after %v, want 1s", got.Sub(t0))
	}
	rt.err = nil
	for _, d := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second} {
		g.Due(t0.Add(d))
	}
	want := [][]podlifecycle.Action{mntActions(podlifecycle.CreateSandbox), mntActions(podlifecycle.CreateSandbox)}
	if diff := cmp.Diff(want, rt.calls); diff != "" || !g.Next().IsZero() {
		t.Errorf("next wake-up %v, runtime calls (-want +got):\n%s", g.Next(), diff)
	}
	rt2 := &mntRuntime{err: down}
	g2 := mntGated(n, mntSettingsPod("other"), rt2)
	if err := g2.Do(t0, mntActions(podlifecycle.KillSandbox, podlifecycle.CreateSandbox)); !errors.Is(err, down) {
		t.Errorf("error %v, want the runtime's", err)
	}
	if diff := cmp.Diff([][]podlifecycle.Action{mntActions(podlifecycle.KillSandbox)}, rt2.calls); diff != "" || !g2.Next().IsZero() {
		t.Errorf("next wake-up %v, runtime calls (-want +got):\n%s", g2.Next(), diff)
	}
}

// mntDeadlineObjects notes, for each ConfigMap and RuntimeClass lookup,
// whether its context had a deadline and was still open.
type mntDeadlineObjects struct {
	fakeObjects
	open []bool
}

func mntOpen(ctx context.Context) bool {
	_, ok := ctx.Deadline()
	return ok && ctx.Err() == nil
}

func (o *mntDeadlineObjects) ConfigMap(ctx context.Context, ns, name string) error {
	o.open = append(o.open, mntOpen(ctx))
	return o.fakeObjects.ConfigMap(ctx, ns, name)
}

func (o *mntDeadlineObjects) RuntimeClass(ctx context.Context, name string) error {
	o.open = append(o.open, mntOpen(ctx))
	return o.fakeObjects.RuntimeClass(ctx, name)
}

// TestGatedRuntimeLookupsAreBounded: the gate's API reads, which run on the
// node's loop, each get a bounded context that is still open when the read
// begins.
func TestGatedRuntimeLookupsAreBounded(t *testing.T) {
	objs := &mntDeadlineObjects{fakeObjects: fakeObjects{configMaps: []string{"settings"}, runtimeClasses: []string{"gvisor"}}}
	n, clk, _ := mntNode(t, objs)
	rt := &mntRuntime{}
	pod := mntSettingsPod("web")
	pod.Spec.RuntimeClassName = ptr.To("gvisor")
	if err := mntGated(n, pod, rt).Do(clk.Now(), mntActions(podlifecycle.CreateSandbox)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]bool{true, true}, objs.open); diff != "" || len(rt.calls) != 1 {
		t.Errorf("runtime calls %v; lookups with an open deadline (-want +got):\n%s", rt.calls, diff)
	}
}
