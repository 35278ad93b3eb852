package podphase

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/kubeversion"
)

func rlist(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func reqs(kv ...string) v1.ResourceRequirements {
	return v1.ResourceRequirements{Requests: rlist(kv...)}
}

func lims(kv ...string) v1.ResourceRequirements { return v1.ResourceRequirements{Limits: rlist(kv...)} }

func res(name string, r v1.ResourceRequirements) v1.Container {
	return v1.Container{Name: name, Resources: r}
}

func resSidecar(name string, r v1.ResourceRequirements) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	return v1.Container{Name: name, Resources: r, RestartPolicy: &always}
}

var byValue = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// TestPodRequests traces spec section 4.4 and the RS cases of section 11.8
// (component-helpers' TestPodResourceRequests, TestPodResourceLimits and
// TestPodLevelResourceRequests at v0.37.2).
func TestPodRequests(t *testing.T) {
	tests := []struct {
		id, reason string
		spec       v1.PodSpec
		requests   v1.ResourceList
		limits     v1.ResourceList
	}{
		{id: "RS01", reason: "regular containers are summed",
			spec:     v1.PodSpec{Containers: []v1.Container{res("a", reqs("cpu", "1", "memory", "1Gi")), res("b", reqs("cpu", "2"))}},
			requests: rlist("cpu", "3", "memory", "1Gi"), limits: v1.ResourceList{}},
		{id: "RS02", reason: "overhead adds to every request, and to a limit only where one is set and not zero",
			spec: v1.PodSpec{Containers: []v1.Container{res("a", v1.ResourceRequirements{Requests: rlist("cpu", "1", "memory", "1Gi"), Limits: rlist("cpu", "2", "memory", "0")})},
				Overhead: rlist("cpu", "250m", "memory", "120Mi")},
			requests: rlist("cpu", "1250m", "memory", "1144Mi"), limits: rlist("cpu", "2250m", "memory", "0")},
		{id: "RS03", reason: "a large init container sets the floor: the maximum of the init peak and the regular sum",
			spec:     v1.PodSpec{InitContainers: []v1.Container{res("i", reqs("cpu", "10"))}, Containers: []v1.Container{res("a", reqs("cpu", "1")), res("b", reqs("cpu", "2"))}},
			requests: rlist("cpu", "10"), limits: v1.ResourceList{}},
		{id: "RS04", reason: "sidecars add to the regular sum: max(5, 3+2+1+1) = 7",
			spec: v1.PodSpec{InitContainers: []v1.Container{res("init-1", reqs("cpu", "5")), resSidecar("s1", reqs("cpu", "1")), resSidecar("s2", reqs("cpu", "2")), resSidecar("s3", reqs("cpu", "3"))},
				Containers: []v1.Container{res("c", reqs("cpu", "1"))}},
			requests: rlist("cpu", "7"), limits: v1.ResourceList{}},
		{id: "RS05", reason: "a regular init container counts with the sidecars before it, not after: 5 + 1 + 2 = 8",
			spec: v1.PodSpec{InitContainers: []v1.Container{res("init-1", reqs("cpu", "5")), resSidecar("s1", reqs("cpu", "1")), resSidecar("s2", reqs("cpu", "2")),
				res("init-2", reqs("cpu", "5")), resSidecar("s3", reqs("cpu", "3"))}, Containers: []v1.Container{res("c", reqs("cpu", "1"))}},
			requests: rlist("cpu", "8"), limits: v1.ResourceList{}},
		{id: "RS06", reason: "sidecar, init, regular: the init container beside the sidecar, 10 + 200",
			spec:     v1.PodSpec{InitContainers: []v1.Container{resSidecar("s", reqs("cpu", "10")), res("i", reqs("cpu", "200"))}, Containers: []v1.Container{res("c", reqs("cpu", "100"))}},
			requests: rlist("cpu", "210"), limits: v1.ResourceList{}},
		{id: "RS07", reason: "limits aggregate like requests: an init container without limits counts for nothing",
			spec: v1.PodSpec{InitContainers: []v1.Container{res("i1", lims("cpu", "2", "memory", "2Gi")), res("i2", v1.ResourceRequirements{})},
				Containers: []v1.Container{res("c", lims("cpu", "1", "memory", "1Gi"))}},
			requests: v1.ResourceList{}, limits: rlist("cpu", "2", "memory", "2Gi")},
		{id: "RS08", reason: "pod-level requests replace the containers' aggregate, init containers and sidecars included",
			spec: v1.PodSpec{Resources: &v1.ResourceRequirements{Requests: rlist("memory", "15Mi", "cpu", "18m")},
				InitContainers: []v1.Container{resSidecar("s", reqs("memory", "5Mi", "cpu", "4m")), res("i", reqs("memory", "6Mi", "cpu", "8m"))},
				Containers:     []v1.Container{res("c", reqs("memory", "3Mi", "cpu", "2m"))}},
			requests: rlist("memory", "15Mi", "cpu", "18m"), limits: v1.ResourceList{}},
		{id: "RS09", reason: "a pod-level value of a resource that cannot be set at pod level is ignored; the containers' stays",
			spec: v1.PodSpec{Resources: &v1.ResourceRequirements{Requests: rlist("memory", "1Gi", "ephemeral-storage", "5Gi")},
				Containers: []v1.Container{res("c", reqs("cpu", "1", "ephemeral-storage", "1Gi"))}},
			requests: rlist("memory", "1Gi", "cpu", "1", "ephemeral-storage", "1Gi"), limits: v1.ResourceList{}},
		{id: "RS10", reason: "pod-level hugepages replace the containers'; pod-level limits apply once the pod sets any pod-level resource",
			spec: v1.PodSpec{Resources: &v1.ResourceRequirements{Requests: rlist("cpu", "1"), Limits: rlist("hugepages-2Mi", "4Mi")},
				Containers: []v1.Container{res("c", v1.ResourceRequirements{Requests: rlist("hugepages-2Mi", "2Mi"), Limits: rlist("hugepages-2Mi", "2Mi", "cpu", "500m")})}},
			requests: rlist("cpu", "1", "hugepages-2Mi", "2Mi"), limits: rlist("hugepages-2Mi", "4Mi", "cpu", "500m")},
		{id: "RS11", reason: "pod-level resources with only unsupported names count as none set: the limits stay the containers'",
			spec: v1.PodSpec{Resources: &v1.ResourceRequirements{Limits: rlist("example.com/gpu", "1")},
				Containers: []v1.Container{res("c", lims("example.com/gpu", "2"))}},
			requests: v1.ResourceList{}, limits: rlist("example.com/gpu", "2")},
	}
	for _, tt := range tests {
		pod := &v1.Pod{Spec: tt.spec}
		before := pod.DeepCopy()
		if d := cmp.Diff(tt.requests, PodRequests(pod), byValue); d != "" {
			t.Errorf("%s: %s: requests (-want +got):\n%s", tt.id, tt.reason, d)
		}
		if d := cmp.Diff(tt.limits, PodLimits(pod), byValue); d != "" {
			t.Errorf("%s: %s: limits (-want +got):\n%s", tt.id, tt.reason, d)
		}
		if d := cmp.Diff(before, pod); d != "" {
			t.Errorf("%s: the pod changed:\n%s", tt.id, d)
		}
	}
	if PodRequests(nil) != nil || PodLimits(nil) != nil {
		t.Error("a nil pod has no requests or limits")
	}
}

func cgroup(shares uint64, quota int64, period uint64, memory int64) *PodCgroup {
	return &PodCgroup{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &memory}
}

// TestPodResources traces spec section 4.3 and the RS cases of section
// 11.8 for status.resources.
func TestPodResources(t *testing.T) {
	podLevel := &v1.ResourceRequirements{Requests: rlist("cpu", "50m", "memory", "50Mi"), Limits: rlist("cpu", "100m", "memory", "100Mi")}
	spec := v1.PodSpec{Resources: podLevel, Containers: []v1.Container{res("c", v1.ResourceRequirements{})}}
	containersOnly := v1.PodSpec{Containers: []v1.Container{res("a", v1.ResourceRequirements{Requests: rlist("cpu", "200m", "memory", "64Mi"), Limits: rlist("memory", "128Mi")}),
		res("b", reqs("cpu", "300m"))}}
	running := v1.PodStatus{Phase: v1.PodRunning}
	tests := []struct {
		id, reason string
		v          kubeversion.Version
		spec       v1.PodSpec
		phase      v1.PodPhase
		old        *v1.PodStatus
		cg         *PodCgroup
		want       *v1.ResourceRequirements
	}{
		{id: "RS12", reason: "API phase not Running: the allocated pod-level resources, requests and limits from PodRequests and PodLimits",
			spec: containersOnly, phase: v1.PodPending,
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "500m", "memory", "64Mi"), Limits: rlist("memory", "128Mi")}},
		{id: "RS12/terminal", reason: "a Succeeded pod is not Running either",
			spec: spec, phase: v1.PodSucceeded, cg: cgroup(2, -1, 100000, 0),
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "50m", "memory", "50Mi"), Limits: rlist("cpu", "100m", "memory", "100Mi")}},
		{id: "RS13", reason: "running: the cgroup's CPU request, limit and memory limit (51 shares and a 10 ms quota are 50m and 100m)",
			spec: spec, phase: v1.PodRunning, cg: cgroup(51, 10000, 100000, 100<<20),
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "50m", "memory", "50Mi"), Limits: rlist("cpu", "100m", "memory", "100Mi")}},
		{id: "RS14", reason: "1.37: shares read back from cgroup v2 as 28 (the weight's step) are the allocated 50m's: the allocated value stays (issue 137628)",
			spec: spec, phase: v1.PodRunning, cg: cgroup(28, 10000, 100000, 100<<20),
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "50m", "memory", "50Mi"), Limits: rlist("cpu", "100m", "memory", "100Mi")}},
		{id: "RS14/1.36", reason: "1.36 shows the readback, 28m", v: kubeversion.V1_36,
			spec: spec, phase: v1.PodRunning, cg: cgroup(28, 10000, 100000, 100<<20),
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "28m", "memory", "50Mi"), Limits: rlist("cpu", "100m", "memory", "100Mi")}},
		{id: "RS15", reason: "a real change shows: 205 shares are 201m",
			spec: spec, phase: v1.PodRunning, cg: cgroup(205, 30000, 100000, 200<<20),
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "201m", "memory", "50Mi"), Limits: rlist("cpu", "300m", "memory", "200Mi")}},
		{id: "RS16", reason: "running, no cgroup values, old status Running: each value kept from the old status",
			spec: containersOnly, phase: v1.PodRunning,
			old:  &v1.PodStatus{Phase: v1.PodRunning, Resources: &v1.ResourceRequirements{Requests: rlist("cpu", "500m", "memory", "64Mi"), Limits: rlist("memory", "128Mi", "cpu", "1")}},
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "500m", "memory", "64Mi"), Limits: rlist("memory", "128Mi", "cpu", "1")}},
		{id: "RS17", reason: "running, no cgroup values, old status not Running: only the pod-level spec and the summed memory request",
			spec: containersOnly, phase: v1.PodRunning,
			old:  &v1.PodStatus{Phase: v1.PodPending, Resources: &v1.ResourceRequirements{Requests: rlist("cpu", "500m")}},
			want: &v1.ResourceRequirements{Requests: rlist("memory", "64Mi")}},
		{id: "RS18", reason: "at the floors on both sides the allocated values stay: 2 shares and a 1 ms quota are 2m and 10m",
			spec: v1.PodSpec{Resources: &v1.ResourceRequirements{Requests: rlist("cpu", "1m"), Limits: rlist("cpu", "5m")}}, phase: v1.PodRunning,
			cg:   cgroup(2, 1000, 100000, 0),
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "1m"), Limits: rlist("cpu", "5m")}},
		{id: "RS19", reason: "a quota of -1 is no limit: the old one is kept when the old status was Running",
			spec: containersOnly, phase: v1.PodRunning, cg: cgroup(512, -1, 100000, 0),
			old:  &v1.PodStatus{Phase: v1.PodRunning, Resources: &v1.ResourceRequirements{Limits: rlist("cpu", "2")}},
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "500m", "memory", "64Mi"), Limits: rlist("cpu", "2")}},
		{id: "RS20", reason: "1.35 (gate on by hand): the summed memory request even when there is none (0), and the old status's memory request over it", v: kubeversion.V1_35,
			spec: v1.PodSpec{Containers: []v1.Container{res("c", reqs("cpu", "1"))}}, phase: v1.PodRunning, cg: cgroup(1024, -1, 100000, 0),
			old:  &running,
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "1", "memory", "0")}},
		{id: "RS20/kept", reason: "1.35 keeps the old memory request of a Running old status", v: kubeversion.V1_35,
			spec: v1.PodSpec{Containers: []v1.Container{res("c", reqs("cpu", "1", "memory", "1Gi"))}}, phase: v1.PodRunning, cg: cgroup(1024, -1, 100000, 0),
			old:  &v1.PodStatus{Phase: v1.PodRunning, Resources: &v1.ResourceRequirements{Requests: rlist("memory", "2Gi")}},
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "1", "memory", "2Gi")}},
		{id: "RS20/1.36", reason: "1.36 adds no memory request when no container asks for memory",
			spec: v1.PodSpec{Containers: []v1.Container{res("c", reqs("cpu", "1"))}}, phase: v1.PodRunning, cg: cgroup(1024, -1, 100000, 0),
			old:  &running,
			want: &v1.ResourceRequirements{Requests: rlist("cpu", "1")}},
	}
	for _, tt := range tests {
		v := tt.v
		if v == 0 {
			v = kubeversion.V1_37
		}
		o := DefaultOptionsFor(v)
		o.Features.InPlacePodLevelResourcesVerticalScaling = true
		pod := &v1.Pod{Spec: tt.spec, Status: v1.PodStatus{Phase: tt.phase}}
		old := tt.old
		if old == nil {
			old = &pod.Status
		}
		var reqs qlist
		reqs.podRequests(pod)
		got := o.podResources(nil, pod, &reqs, old, tt.cg)
		if d := cmp.Diff(tt.want, got, byValue); d != "" {
			t.Errorf("%s: %s: (-want +got):\n%s", tt.id, tt.reason, d)
		}
	}
}

// TestGenerateStatusResources: GenerateStatus writes status.resources and
// status.allocatedResources with InPlacePodLevelResourcesVerticalScaling
// (1.36 and later), none without (section 4.3).
func TestGenerateStatusResources(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{res("c", v1.ResourceRequirements{Requests: rlist("cpu", "100m"), Limits: rlist("cpu", "200m")})}},
		Status: v1.PodStatus{Phase: v1.PodPending, Resources: &v1.ResourceRequirements{Requests: rlist("cpu", "9")}, AllocatedResources: rlist("cpu", "9")}}
	best := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}, Status: v1.PodStatus{Phase: v1.PodPending}}
	for _, tt := range []struct {
		reason    string
		v         kubeversion.Version
		pod       *v1.Pod
		resources *v1.ResourceRequirements
		allocated v1.ResourceList
	}{
		{reason: "1.37: allocatedResources are PodRequests, resources the allocated ones of a Pending pod", v: kubeversion.V1_37, pod: pod,
			resources: &v1.ResourceRequirements{Requests: rlist("cpu", "100m"), Limits: rlist("cpu", "200m")}, allocated: rlist("cpu", "100m")},
		{reason: "1.36 too", v: kubeversion.V1_36, pod: pod,
			resources: &v1.ResourceRequirements{Requests: rlist("cpu", "100m"), Limits: rlist("cpu", "200m")}, allocated: rlist("cpu", "100m")},
		{reason: "1.35 (gate off): neither, whatever the API status had", v: kubeversion.V1_35, pod: pod},
		{reason: "a pod without requests: empty resources and no allocatedResources", v: kubeversion.V1_37, pod: best,
			resources: &v1.ResourceRequirements{}},
	} {
		out, err := DefaultOptionsFor(tt.v).GenerateStatus(StatusInput{Input: Input{Pod: tt.pod}, ContainerStatuses: []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tt.resources, out.Status.Resources, byValue); d != "" {
			t.Errorf("%v: %s: resources (-want +got):\n%s", tt.v, tt.reason, d)
		}
		if d := cmp.Diff(tt.allocated, out.Status.AllocatedResources, byValue); d != "" {
			t.Errorf("%v: %s: allocatedResources (-want +got):\n%s", tt.v, tt.reason, d)
		}
	}
}
