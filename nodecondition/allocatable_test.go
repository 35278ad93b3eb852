package nodecondition_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/nodecondition"
)

// TestAllocatable: the kubelet's node allocatable (cm's
// GetNodeAllocatableReservation and the MachineInfo status setter), as the
// oracle node reports it on a machine of 4 CPUs, 16Gi of memory and a root
// filesystem of 100Gi (oracle case "node": status.allocatable).
func TestAllocatable(t *testing.T) {
	capacity := nodecondition.Capacity(4000, 16<<30, 100<<30, 110)
	for name, want := range map[v1.ResourceName]string{"cpu": "4", "memory": "16Gi", "ephemeral-storage": "107374182400", "pods": "110"} {
		if q := capacity[name]; q.String() != want {
			t.Errorf("capacity %s = %s, want %s (the kubelet's formats)", name, q.String(), want)
		}
	}
	for _, tc := range []struct {
		name     string
		reserved v1.ResourceList
		hard     []nodecondition.Threshold
		want     map[v1.ResourceName]string
		reason   string
	}{
		{name: "defaults", hard: nodecondition.DefaultHardThresholds(),
			want:   map[v1.ResourceName]string{"cpu": "4", "memory": "16284Mi", "ephemeral-storage": "96636764k", "pods": "110"},
			reason: "memory.available<100Mi and nodefs.available<10% (a float32 share) are reserved; the formats are the capacity's"},
		{name: "reserved", hard: nodecondition.DefaultHardThresholds(),
			reserved: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("1Gi")},
			want:     map[v1.ResourceName]string{"cpu": "3500m", "memory": "15260Mi", "ephemeral-storage": "96636764k", "pods": "110"},
			reason:   "system- and kube-reserved add to the eviction reservation"},
		{name: "soft thresholds reserve nothing",
			hard:   []nodecondition.Threshold{{Signal: nodecondition.SignalMemoryAvailable, Value: nodecondition.ThresholdValue{Quantity: 1 << 30}, Soft: true}},
			want:   map[v1.ResourceName]string{"cpu": "4", "memory": "16Gi", "ephemeral-storage": "107374182400", "pods": "110"},
			reason: "only hard thresholds are node allocatable reservations"},
		{name: "never below zero", hard: []nodecondition.Threshold{{Signal: nodecondition.SignalMemoryAvailable, Value: nodecondition.ThresholdValue{Quantity: 32 << 30}}},
			want:   map[v1.ResourceName]string{"cpu": "4", "memory": "0", "ephemeral-storage": "107374182400", "pods": "110"},
			reason: "a reservation larger than the capacity leaves zero"},
	} {
		got := nodecondition.Allocatable(capacity, tc.reserved, tc.hard)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d resources, want %d (%s)", tc.name, len(got), len(tc.want), tc.reason)
		}
		for name, want := range tc.want {
			q := got[name]
			if s := q.String(); s != want {
				t.Errorf("%s: %s = %s, want %s (%s)", tc.name, name, s, want, tc.reason)
			}
		}
	}
	if got := nodecondition.Allocatable(nil, nil, nodecondition.DefaultHardThresholds()); len(got) != 0 {
		t.Errorf("nil capacity: %v, want none", got)
	}
}
