package podphase

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func u64(v uint64) *uint64 { return &v }
func i64(v int64) *int64   { return &v }

// TestPodCgroupOf traces spec section 4.5 (the kubelet's
// TestResourceConfigForPod at v1.37.2, default quota period).
func TestPodCgroupOf(t *testing.T) {
	burstable := v1.ResourceRequirements{Requests: rlist("cpu", "100m", "memory", "100Mi"), Limits: rlist("cpu", "200m", "memory", "200Mi")}
	tests := []struct {
		reason string
		spec   v1.PodSpec
		qos    v1.PodQOSClass
		want   PodCgroup
	}{
		{reason: "besteffort: the minimum shares only",
			spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}}}, want: PodCgroup{CPUShares: u64(2)}},
		{reason: "burstable without limits: shares for the request only",
			spec: v1.PodSpec{Containers: []v1.Container{res("a", reqs("cpu", "100m", "memory", "100Mi"))}}, want: PodCgroup{CPUShares: u64(102)}},
		{reason: "burstable with limits: quota, period and memory too",
			spec: v1.PodSpec{Containers: []v1.Container{res("a", burstable)}},
			want: PodCgroup{CPUShares: u64(102), CPUQuota: i64(20000), CPUPeriod: u64(100000), Memory: i64(200 << 20)}},
		{reason: "burstable with partial limits: a container without limits leaves the quota and memory unwritten",
			spec: v1.PodSpec{Containers: []v1.Container{res("a", burstable), res("b", reqs("cpu", "100m", "memory", "100Mi"))}},
			want: PodCgroup{CPUShares: u64(204)}},
		{reason: "guaranteed: everything",
			spec: v1.PodSpec{Containers: []v1.Container{res("a", v1.ResourceRequirements{Requests: rlist("cpu", "100m", "memory", "100Mi"), Limits: rlist("cpu", "100m", "memory", "100Mi")})}},
			want: PodCgroup{CPUShares: u64(102), CPUQuota: i64(10000), CPUPeriod: u64(100000), Memory: i64(100 << 20)}},
		{reason: "a limit below 10m is the smallest quota, 1 ms",
			spec: v1.PodSpec{Containers: []v1.Container{res("a", v1.ResourceRequirements{Requests: rlist("cpu", "1m", "memory", "1Mi"), Limits: rlist("cpu", "1m", "memory", "1Mi")})}},
			want: PodCgroup{CPUShares: u64(2), CPUQuota: i64(1000), CPUPeriod: u64(100000), Memory: i64(1 << 20)}},
		{reason: "pod-level resources decide the class and the limits; the overhead counts in the request",
			spec: v1.PodSpec{Resources: &v1.ResourceRequirements{Requests: rlist("cpu", "1", "memory", "1Gi"), Limits: rlist("cpu", "2")},
				Containers: []v1.Container{res("a", v1.ResourceRequirements{})}, Overhead: rlist("cpu", "250m")},
			want: PodCgroup{CPUShares: u64(1280), CPUQuota: i64(225000), CPUPeriod: u64(100000)}},
		{reason: "the API status's class wins over the spec's",
			spec: v1.PodSpec{Containers: []v1.Container{res("a", burstable)}}, qos: v1.PodQOSBestEffort, want: PodCgroup{CPUShares: u64(2)}},
	}
	for _, tt := range tests {
		pod := &v1.Pod{Spec: tt.spec, Status: v1.PodStatus{QOSClass: tt.qos}}
		if d := cmp.Diff(tt.want, PodCgroupOf(pod)); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tt.reason, d)
		}
	}
	if d := cmp.Diff(PodCgroup{CPUShares: u64(2)}, PodCgroupOf(nil)); d != "" {
		t.Errorf("nil pod: %s", d)
	}
}

// TestReadBackV2 traces the cgroup v2 read-back of spec section 4.5.
func TestReadBackV2(t *testing.T) {
	tests := []struct {
		reason   string
		in, want PodCgroup
	}{
		{reason: "the weight loses shares: 51 read back as 28, 256 as 237",
			in:   PodCgroup{CPUShares: u64(51)},
			want: PodCgroup{CPUShares: u64(28), CPUQuota: i64(-1), CPUPeriod: u64(100000), Memory: i64(-1)}},
		{reason: "2 and 262144 shares come back; memory is rounded down to pages; the quota and period stay",
			in:   PodCgroup{CPUShares: u64(262144), CPUQuota: i64(20000), CPUPeriod: u64(50000), Memory: i64(100<<20 + 100)},
			want: PodCgroup{CPUShares: u64(262144), CPUQuota: i64(20000), CPUPeriod: u64(50000), Memory: i64(100 << 20)}},
		{reason: "nothing written: the minimum shares, max quota and memory",
			want: PodCgroup{CPUShares: u64(2), CPUQuota: i64(-1), CPUPeriod: u64(100000), Memory: i64(-1)}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, tt.in.ReadBackV2()); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tt.reason, d)
		}
	}
	if got := *(PodCgroup{CPUShares: u64(256)}).ReadBackV2().CPUShares; got != 237 {
		t.Errorf("256 shares read back as %d, want 237", got)
	}
}

// TestQOSClass traces the class of spec section 4.5, item 4.
func TestQOSClass(t *testing.T) {
	g := v1.ResourceRequirements{Requests: rlist("cpu", "1", "memory", "1Gi"), Limits: rlist("cpu", "1", "memory", "1Gi")}
	tests := []struct {
		reason string
		pod    *v1.Pod
		want   v1.PodQOSClass
	}{
		{"no resources", &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}}}}, v1.PodQOSBestEffort},
		{"requests equal to limits everywhere", &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{res("i", g)}, Containers: []v1.Container{res("a", g)}}}, v1.PodQOSGuaranteed},
		{"a Guaranteed and a BestEffort container", &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{res("a", g), {Name: "b"}}}}, v1.PodQOSBurstable},
		{"only other resources: not BestEffort", &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{res("a", reqs("ephemeral-storage", "1Gi"))}}}, v1.PodQOSBestEffort},
		{"CPU guaranteed, memory not set: Burstable", &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{res("a", v1.ResourceRequirements{Requests: rlist("cpu", "1"), Limits: rlist("cpu", "1")})}}}, v1.PodQOSBurstable},
		{"pod-level resources decide", &v1.Pod{Spec: v1.PodSpec{Resources: &g, Containers: []v1.Container{{Name: "a"}}}}, v1.PodQOSGuaranteed},
		{"the API's class wins", &v1.Pod{Spec: v1.PodSpec{Resources: &g}, Status: v1.PodStatus{QOSClass: v1.PodQOSBurstable}}, v1.PodQOSBurstable},
		{"a nil pod", nil, v1.PodQOSBestEffort},
	}
	for _, tt := range tests {
		if got := QOSClass(tt.pod); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.reason, got, tt.want)
		}
	}
}
