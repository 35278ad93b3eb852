package kube_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nodestate/nodestate/events"
	"github.com/nodestate/nodestate/kube"
)

// TestZeroAndNil: every method of every adapter, on the zero value and with nil objects,
// returns an error wrapping the documented sentinel instead of panicking or sending.
func TestZeroAndNil(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	type call struct {
		name      string
		run       func() error
		want      error
		retryable bool // whether events.Retryable may say yes (only sink errors are checked)
	}
	first := func(_ any, err error) error { return err }
	lookup := func(l *kube.LeaseLookup, node string) error { _, _, err := l.LiveLease(node); return err }
	calls := []call{
		{"StatusTransport.GetPod zero", func() error { return first(new(kube.StatusTransport).GetPod(ctx, "ns", "p")) }, kube.ErrNotInitialized, true},
		{"StatusTransport.PatchPodStatus zero", func() error { return first(new(kube.StatusTransport).PatchPodStatus(ctx, "ns", "p", nil)) }, kube.ErrNotInitialized, true},
		{"StatusTransport.DeletePod zero", func() error { return new(kube.StatusTransport).DeletePod(ctx, "ns", "p", "u") }, kube.ErrNotInitialized, true},
		{"CoreEventSink.Create zero", func() error { return first(new(kube.CoreEventSink).Create(ctx, nil)) }, kube.ErrNotInitialized, false},
		{"CoreEventSink.Patch zero", func() error { return first(new(kube.CoreEventSink).Patch(ctx, nil, nil)) }, kube.ErrNotInitialized, false},
		{"CoreEventSink.Create nil event", func() error { return first((&kube.CoreEventSink{Client: cs.CoreV1()}).Create(ctx, nil)) }, kube.ErrInvalidInput, false},
		{"CoreEventSink.Patch nil event", func() error { return first((&kube.CoreEventSink{Client: cs.CoreV1()}).Patch(ctx, nil, nil)) }, kube.ErrInvalidInput, false},
		{"SeriesEventSink.Create zero", func() error { return first(new(kube.SeriesEventSink).Create(ctx, nil)) }, kube.ErrNotInitialized, false},
		{"SeriesEventSink.Patch zero", func() error { return first(new(kube.SeriesEventSink).Patch(ctx, nil, nil)) }, kube.ErrNotInitialized, false},
		{"SeriesEventSink.Create nil event", func() error { return first((&kube.SeriesEventSink{Client: cs.EventsV1()}).Create(ctx, nil)) }, kube.ErrInvalidInput, false},
		{"SeriesEventSink.Patch nil event", func() error { return first((&kube.SeriesEventSink{Client: cs.EventsV1()}).Patch(ctx, nil, nil)) }, kube.ErrInvalidInput, false},
		{"LeaseLookup.LiveLease zero", func() error { return lookup(new(kube.LeaseLookup), "n") }, kube.ErrNotInitialized, true},
		{"LeaseLookup.LiveLease empty node", func() error { return lookup(&kube.LeaseLookup{Client: cs.CoordinationV1()}, "") }, kube.ErrInvalidInput, true},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want an error wrapping %v", err, c.want)
			}
			if !c.retryable && events.Retryable(err) {
				t.Errorf("%v: a sink error no retry can cure must not be retryable", err)
			}
		})
	}
	if n := len(cs.Actions()); n != 0 {
		t.Errorf("%d requests sent, want none: %v", n, cs.Actions())
	}
	// The zero EventRecorder records nothing and does not panic.
	var rec kube.EventRecorder
	rec.WithLogger(logr.Discard()).Event(nil, "Normal", "R", "m")
}

// TestLeaseLookupPassesErrorsThrough: only 404 means "no Lease"; any other answer is the
// server's error, so the controller skips the node for the pass instead of reading it as
// a missing Lease.
func TestLeaseLookupPassesErrorsThrough(t *testing.T) {
	cs := fake.NewClientset()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "node-1", errors.New("no"))
	cs.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
	rv, found, err := (&kube.LeaseLookup{Client: cs.CoordinationV1()}).LiveLease("node-1")
	if !apierrors.IsForbidden(err) || found || rv != "" {
		t.Fatalf("got %q, %v, %v; want the 403 and not found", rv, found, err)
	}
}
