package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	typedcoordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/nodecondition"
)

// optDeadlineLeases is a LeasesGetter over a fake clientset whose Get
// fails, as a real client's does, when its context has already ended, and
// keeps the deadline it was given.
type optDeadlineLeases struct {
	cs       *fake.Clientset
	deadline time.Time
	bounded  bool
	calls    int
}

func (o *optDeadlineLeases) Leases(ns string) typedcoordinationv1.LeaseInterface {
	return &optDeadlineLeaseClient{LeaseInterface: o.cs.CoordinationV1().Leases(ns), o: o}
}

// optDeadlineLeaseClient is optDeadlineLeases' LeaseInterface: Get checks
// the context, everything else is the fake's.
type optDeadlineLeaseClient struct {
	typedcoordinationv1.LeaseInterface
	o *optDeadlineLeases
}

func (c *optDeadlineLeaseClient) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	c.o.calls++
	c.o.deadline, c.o.bounded = ctx.Deadline()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.LeaseInterface.Get(ctx, name, opts)
}

// optLease is the Lease of node in kube-node-lease, held by it.
func optLease(node string, rv string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: nodecondition.LeaseNamespace, ResourceVersion: rv},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To[int32](40)},
	}
}

// TestLiveLeaseDefaultTimeout: a LeaseLookup with a zero Timeout bounds its
// request by DefaultLeaseLookupTimeout, not by an already expired deadline:
// the request is sent with time left, and finds the Lease.
func TestLiveLeaseDefaultTimeout(t *testing.T) {
	leases := &optDeadlineLeases{cs: fake.NewClientset(optLease("n1", "42"))}
	l := &LeaseLookup{Client: leases}
	rv, found, err := l.LiveLease("n1")
	if err != nil || !found || rv != "42" {
		t.Fatalf("LiveLease = %q, %v, %v; want 42, true, nil", rv, found, err)
	}
	if leases.calls != 1 || !leases.bounded {
		t.Fatalf("%d requests, bounded %v; want one with a deadline", leases.calls, leases.bounded)
	}
	if latest := time.Now().Add(DefaultLeaseLookupTimeout); leases.deadline.After(latest) {
		t.Errorf("deadline %v is later than the default timeout allows (%v)", leases.deadline, latest)
	}
	// An explicit Timeout is used as given.
	l.Timeout = time.Hour
	if _, found, err := l.LiveLease("n1"); err != nil || !found {
		t.Fatalf("LiveLease with a Timeout of an hour: %v, %v", found, err)
	}
	if earliest := time.Now().Add(DefaultLeaseLookupTimeout); !leases.deadline.After(earliest) {
		t.Errorf("deadline %v with a Timeout of an hour, want later than %v", leases.deadline, earliest)
	}
}

// optLeaseActions counts the fake's lease requests by verb.
func optLeaseActions(cs *fake.Clientset) map[string]int {
	m := map[string]int{}
	for _, a := range cs.Actions() {
		if a.GetResource().Resource == "leases" {
			m[a.GetVerb()]++
		}
	}
	return m
}

// TestRenewLease: renewLease creates a missing Lease; an existing one gets
// the new spec by an update carrying the resourceVersion just read, and
// the stored Lease is returned; a failed read other than 404 is returned
// as it is, with nothing written.
func TestRenewLease(t *testing.T) {
	ctx := context.Background()
	t.Run("missing", func(t *testing.T) {
		cs := fake.NewClientset()
		got, err := renewLease(ctx, cs, optLease("n1", ""))
		if err != nil || got == nil || got.Name != "n1" {
			t.Fatalf("renewLease = %v, %v", got, err)
		}
		if a := optLeaseActions(cs); a["get"] != 1 || a["create"] != 1 || a["update"] != 0 {
			t.Errorf("requests %v, want a get and a create", a)
		}
	})
	t.Run("existing", func(t *testing.T) {
		cs := fake.NewClientset(optLease("n1", "7"))
		want := optLease("n1", "")
		want.Spec.RenewTime = &metav1.MicroTime{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		var sentRV string
		cs.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
			sentRV = a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).ResourceVersion
			return false, nil, nil
		})
		got, err := renewLease(ctx, cs, want)
		if err != nil || got == nil {
			t.Fatalf("renewLease = %v, %v", got, err)
		}
		if got.Spec.RenewTime == nil || !got.Spec.RenewTime.Equal(want.Spec.RenewTime) || *got.Spec.HolderIdentity != "n1" {
			t.Errorf("returned spec %+v, want %+v", got.Spec, want.Spec)
		}
		if sentRV != "7" {
			t.Errorf("update sent resourceVersion %q, want the one read (7)", sentRV)
		}
		stored, err := cs.CoordinationV1().Leases(nodecondition.LeaseNamespace).Get(ctx, "n1", metav1.GetOptions{})
		if err != nil || stored.Spec.RenewTime == nil || !stored.Spec.RenewTime.Equal(want.Spec.RenewTime) {
			t.Errorf("stored %v, %v; want the new renew time", stored, err)
		}
	})
	t.Run("read fails", func(t *testing.T) {
		cs := fake.NewClientset(optLease("n1", "7"))
		forbidden := apierrors.NewForbidden(coordinationv1.Resource("leases"), "n1", errors.New("no"))
		cs.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
		got, err := renewLease(ctx, cs, optLease("n1", ""))
		if !apierrors.IsForbidden(err) || got != nil {
			t.Fatalf("renewLease = %v, %v; want the 403", got, err)
		}
		if a := optLeaseActions(cs); a["create"] != 0 || a["update"] != 0 {
			t.Errorf("requests %v, want nothing written", a)
		}
	})
}
