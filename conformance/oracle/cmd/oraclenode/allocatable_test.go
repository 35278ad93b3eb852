package main

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestNodeResources: the oracle node's container manager reports what the
// kubelet's own reports on the same machine: the root filesystem's size as
// ephemeral-storage capacity, and the default hard eviction thresholds
// (memory.available<100Mi, nodefs.available<10%) as node allocatable
// reservations.
func TestNodeResources(t *testing.T) {
	c := config{name: "n", cpus: 4, memory: 16 << 30, storage: 100 << 30, rootDir: t.TempDir(), port: 10250}
	s, err := kubeletServer(c, "unix:///nonexistent")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("evictionHard %v", s.KubeletConfiguration.EvictionHard)
	res, err := newNodeResources(&machine{name: "n", cpus: 4, memory: 16 << 30, storage: 100 << 30}, &s.KubeletConfiguration)
	if err != nil {
		t.Fatal(err)
	}
	if q := res.ephemeralStorage()[v1.ResourceEphemeralStorage]; q.String() != "107374182400" {
		t.Errorf("ephemeral-storage capacity %s, want 107374182400", q.String())
	}
	got := res.reservation()
	for name, want := range map[v1.ResourceName]string{v1.ResourceMemory: "100Mi", v1.ResourceEphemeralStorage: "10737418400"} {
		if q := got[name]; q.String() != want {
			t.Errorf("reservation of %s = %s, want %s (all: %v)", name, q.String(), want, got)
		}
	}
}
