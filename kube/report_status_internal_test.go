package kube

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/podrunner"
)

// repStatusPatches counts the status PATCHes of Node "n" sent to cs, and
// fails the first fail of them with a 503; bodies gets each one's body.
type repStatusPatches struct {
	fail     int
	attempts int
	bodies   [][]byte
}

func (p *repStatusPatches) install(cs *fake.Clientset) {
	cs.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchAction)
		if pa.GetSubresource() != "status" {
			return false, nil, nil
		}
		p.attempts++
		p.bodies = append(p.bodies, pa.GetPatch())
		if p.attempts <= p.fail {
			return true, nil, apierrors.NewServiceUnavailable("etcd is down")
		}
		return false, nil, nil
	})
}

// repRegistered is node "n" registered on a fake API server whose status
// PATCHes p counts.
func repRegistered(t *testing.T, p *repStatusPatches, edit func(*Options)) (*Node, *fake.Clientset, *repErrSink) {
	t.Helper()
	cs := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "node-uid"}})
	p.install(cs)
	n, _, sink := repNodeOn(t, cs, edit)
	return n, cs, sink
}

// repFixedRand is a jitter source that always draws the same number.
type repFixedRand float64

func (r repFixedRand) Float64() float64 { return float64(r) }

// TestNodeUID: the Lease's owner is known only once the Node was
// written: its UID is empty before, and the Node's as last written after.
func TestNodeUID(t *testing.T) {
	n, _, _ := repNode(t, nil)
	if uid := n.rep.nodeUID(); uid != "" {
		t.Fatalf("before registration: %q, want none", uid)
	}
	n.rep.setNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u1"}})
	if uid := n.rep.nodeUID(); uid != "u1" {
		t.Fatalf("after registration: %q, want u1", uid)
	}
}

// TestStatusRetries: a status write is one PATCH when the API server
// takes it; a refused one is tried again, up to 5 attempts in a row as the
// kubelet does, and stops at once when the context has ended. A write that
// never went through is counted and logged as a node error, and the next
// tick sends the status again.
func TestStatusRetries(t *testing.T) {
	cases := []struct {
		name      string
		fail      int
		cancelled bool
		attempts  int
		ok        bool
	}{
		{name: "taken at once", attempts: 1, ok: true},
		{name: "taken at the third attempt", fail: 2, attempts: 3, ok: true},
		{name: "refused five times", fail: 99, attempts: 5},
		{name: "refused with the context ended", fail: 99, cancelled: true, attempts: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &repStatusPatches{fail: tc.fail}
			n, cs, sink := repRegistered(t, p, nil)
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancelled {
				cancel()
			}
			defer cancel()
			n.rep.reportStatus(ctx, repT0)
			st := n.Stats()
			if p.attempts != tc.attempts {
				t.Errorf("%d PATCHes, want %d", p.attempts, tc.attempts)
			}
			if tc.ok != (st.NodeReports == 1 && st.NodeErrors == 0) || !tc.ok && st.NodeErrors != 1 {
				t.Errorf("node reports %d, node errors %d; want the write to succeed: %v", st.NodeReports, st.NodeErrors, tc.ok)
			}
			logged := slices.Contains(sink.errors(), "node status write")
			if logged == tc.ok {
				t.Errorf("failure logged %v, errors %v", logged, sink.errors())
			}
			if !tc.ok {
				return
			}
			if uid := n.rep.nodeUID(); uid != "node-uid" {
				t.Errorf("the Node written is %q, want node-uid", uid)
			}
			node, err := cs.CoreV1().Nodes().Get(context.Background(), "n", metav1.GetOptions{})
			if err != nil || len(node.Status.Conditions) != 4 {
				t.Errorf("the Node's conditions: %v (%v), want the kubelet's four", node.Status.Conditions, err)
			}
		})
	}
}

// TestStatusResentAfterFailure: once a status write failed, the next
// status tick sends the status again though nothing changed.
func TestStatusResentAfterFailure(t *testing.T) {
	p := &repStatusPatches{fail: 5}
	n, _, _ := repRegistered(t, p, nil)
	n.rep.reportStatus(context.Background(), repT0)
	n.rep.reportStatus(context.Background(), repT0.Add(10*time.Second))
	if st := n.Stats(); p.attempts != 6 || st.NodeErrors != 1 || st.NodeReports != 1 {
		t.Fatalf("%d PATCHes, %d errors, %d reports; want the second tick to send again and succeed", p.attempts, st.NodeErrors, st.NodeReports)
	}
}

// TestStatusImages: the status PATCH carries status.images as the
// kubelet's Images setter lists them, and no images field when the node has
// no image; an image list that changed (a size or a name, even with as many
// images) makes the next tick send the status, an unchanged one does not
// before the report frequency.
func TestStatusImages(t *testing.T) {
	p := &repStatusPatches{}
	n, cs, _ := repRegistered(t, p, nil)
	var list []podrunner.Image
	n.rep.images = func() []podrunner.Image { return list }
	sentImages := func() (map[string]any, bool) {
		var body struct {
			Status map[string]any `json:"status"`
		}
		if err := json.Unmarshal(p.bodies[len(p.bodies)-1], &body); err != nil {
			t.Fatal(err)
		}
		v, ok := body.Status["images"]
		return body.Status, ok && v != nil
	}

	n.rep.reportStatus(context.Background(), repT0)
	if status, ok := sentImages(); p.attempts != 1 || ok {
		t.Fatalf("no image: %d PATCHes with status %v, want one without images", p.attempts, status)
	}

	list = []podrunner.Image{{Name: "app:1", Ref: "app@sha256:aa", Size: 100}, {Name: "db:2", Size: 300}}
	steps := []struct {
		name  string
		edit  func()
		sends bool
	}{
		{"images appeared", func() {}, true},
		{"unchanged", func() {}, false},
		{"a size changed", func() { list[0].Size = 150 }, true},
		{"a name changed", func() { list[1].Name = "db:3" }, true},
		{"unchanged again", func() {}, false},
	}
	at := repT0
	for _, s := range steps {
		s.edit()
		at = at.Add(10 * time.Second)
		before := p.attempts
		n.rep.reportStatus(context.Background(), at)
		if sent := p.attempts > before; sent != s.sends {
			t.Fatalf("%s: sent %v, want %v", s.name, sent, s.sends)
		}
		if !s.sends {
			continue
		}
		if _, ok := sentImages(); !ok {
			t.Fatalf("%s: the PATCH has no images", s.name)
		}
		node, err := cs.CoreV1().Nodes().Get(context.Background(), "n", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(nodeImages(list), node.Status.Images); d != "" {
			t.Fatalf("%s: the Node's images (-want +got):\n%s", s.name, d)
		}
	}
}

// TestLeaseRenewal: the Lease the node writes: held by the node for the
// lease duration (40 s) from now, owned by the Node once the Node was
// written (an owner already on the Lease is kept), renewed with one PUT of
// the Lease last written, next due a renew interval plus the loop jitter
// later (or a plain interval when the renewer refuses a clock that went
// back).
func TestLeaseRenewal(t *testing.T) {
	cs := fake.NewClientset()
	n, _, sink := repNodeOn(t, cs, func(o *Options) { o.Kubelet.Rand = repFixedRand(0.5) })
	get := func() *coordinationv1.Lease {
		t.Helper()
		l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), "n", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	owners := func(l *coordinationv1.Lease) []string {
		var uids []string
		for _, r := range l.OwnerReferences {
			uids = append(uids, r.Kind+"/"+r.Name+"/"+string(r.UID))
		}
		return uids
	}
	interval := 10*time.Second + 200*time.Millisecond // 10 s and 0.5 of the 4% jitter

	n.rep.renew(context.Background(), repT0)
	l := get()
	if *l.Spec.HolderIdentity != "n" || *l.Spec.LeaseDurationSeconds != 40 || !l.Spec.RenewTime.Time.Equal(repT0) {
		t.Errorf("lease spec: holder %q, duration %d s, renewed %v", *l.Spec.HolderIdentity, *l.Spec.LeaseDurationSeconds, l.Spec.RenewTime)
	}
	if o := owners(l); o != nil {
		t.Errorf("owners %v before the Node was written, want none", o)
	}
	if !n.rep.nextRenew.Equal(repT0.Add(interval)) {
		t.Errorf("next renewal at %v, want %v", n.rep.nextRenew.Sub(repT0), interval)
	}

	n.rep.setNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u1"}})
	cs.ClearActions()
	t1 := repT0.Add(interval)
	n.rep.renew(context.Background(), t1)
	if a := cs.Actions(); len(a) != 1 || a[0].GetVerb() != "update" {
		t.Errorf("renewal requests %v, want one update", a)
	}
	if o := owners(get()); !slices.Equal(o, []string{"Node/n/u1"}) {
		t.Errorf("owners %v once the Node was written, want Node/n/u1", o)
	}

	n.rep.setNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u2"}})
	t2 := t1.Add(interval)
	n.rep.renew(context.Background(), t2)
	if o := owners(get()); !slices.Equal(o, []string{"Node/n/u1"}) {
		t.Errorf("owners %v, want the Lease's own Node/n/u1 kept", o)
	}

	back := t2.Add(-5 * time.Second)
	n.rep.renew(context.Background(), back)
	if !n.rep.nextRenew.Equal(back.Add(10 * time.Second)) {
		t.Errorf("after the clock went back: next renewal at %v, want 10s after", n.rep.nextRenew.Sub(back))
	}
	if st := n.Stats(); st.LeaseRenewals != 4 || st.LeaseErrors != 0 {
		t.Errorf("%d renewals and %d errors, want 4 and none", st.LeaseRenewals, st.LeaseErrors)
	}
	if errs := sink.errors(); len(errs) != 0 {
		t.Errorf("errors logged: %v", errs)
	}
}

// TestLeaseFailure: a Lease the API server will not take is counted and
// logged as a lease error and tried again after the ensure step's first
// back-off (200 ms), not a renew interval later.
func TestLeaseFailure(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("*", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd is down")
	})
	n, _, sink := repNodeOn(t, cs, nil)
	n.rep.renew(context.Background(), repT0)
	if st := n.Stats(); st.LeaseErrors != 1 || st.LeaseRenewals != 0 {
		t.Errorf("%d lease errors and %d renewals, want 1 and none", st.LeaseErrors, st.LeaseRenewals)
	}
	if want := repT0.Add(nodecondition.LeaseRetryDelay(1)); !n.rep.nextRenew.Equal(want) {
		t.Errorf("next attempt at %v, want %v", n.rep.nextRenew.Sub(repT0), nodecondition.LeaseRetryDelay(1))
	}
	if errs := sink.errors(); !slices.Equal(errs, []string{"lease renewal"}) {
		t.Errorf("errors logged: %v, want the lease renewal's", errs)
	}
}
