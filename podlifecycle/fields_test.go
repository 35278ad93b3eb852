package podlifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestObservedFields: the image ref and the resources the runtime reports
// on ContainerCreated and ContainerStarted reach the container status
// (spec/containerstate.md sections 4.3 and 4.6): imageID is the ref,
// resources the reported ones once the instance runs, allocatedResources
// the spec's requests, volumeMounts the spec's from the first status on,
// and the pod-level resources and allocatedResources are written too
// (spec/podphase.md section 4.3).
func TestObservedFields(t *testing.T) {
	pod := podP3()
	pod.Spec.Containers = pod.Spec.Containers[:1]
	c := &pod.Spec.Containers[0]
	c.VolumeMounts = []v1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
	c.Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}, Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}
	m, err := New(DefaultOptions(), pod)
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	now := t0
	step := func(obs ...Observation) {
		t.Helper()
		if err := m.StepTo(now, pod, obs, &r); err != nil {
			t.Fatal(err)
		}
	}
	step()
	if len(r.Statuses) == 0 {
		t.Fatal("no first status")
	}
	disabled := v1.RecursiveReadOnlyDisabled
	mounts := []v1.VolumeMountStatus{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true, RecursiveReadOnly: &disabled}}
	first := r.Statuses[0].ContainerStatuses[0]
	if d := cmp.Diff(mounts, first.VolumeMounts); d != "" || first.ImageID != "" || first.Resources != nil {
		t.Fatalf("first status before the runtime has the container: mounts (-want +got):\n%s imageID %q resources %v", d, first.ImageID, first.Resources)
	}
	applied := &containerstate.ActuatedResources{CPURequest: resource.NewMilliQuantity(98, resource.DecimalSI), CPULimit: resource.NewMilliQuantity(1000, resource.DecimalSI)}
	now = now.Add(time.Second)
	step(Observation{Kind: SandboxReady, IP: "10.0.0.1"}) // the pull and start are asked for
	step(Observation{Kind: ImagePulled, Container: "foo1", Image: "busybox"},
		Observation{Kind: ContainerCreated, Container: "foo1", ContainerID: "c://1", ImageRef: "docker.io/library/busybox@sha256:1"},
		Observation{Kind: ContainerStarted, Container: "foo1", ContainerID: "c://1", Resources: applied})
	applied.CPURequest.Add(resource.MustParse("1")) // the machine keeps a copy
	st := m.lastStatus.ContainerStatuses[0]
	want := &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("98m")}, Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}
	q := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	if d := cmp.Diff(want, st.Resources, q); d != "" {
		t.Errorf("resources (-want +got):\n%s", d)
	}
	if d := cmp.Diff(c.Resources.Requests, st.AllocatedResources, q); d != "" {
		t.Errorf("allocatedResources (-want +got):\n%s", d)
	}
	if st.ImageID != "docker.io/library/busybox@sha256:1" {
		t.Errorf("imageID %q", st.ImageID)
	}
	if d := cmp.Diff(mounts, st.VolumeMounts); d != "" {
		t.Errorf("mounts kept from the old status (-want +got):\n%s", d)
	}
	if d := cmp.Diff(c.Resources.Requests, m.lastStatus.AllocatedResources, q); d != "" {
		t.Errorf("pod allocatedResources (-want +got):\n%s", d)
	}
	if m.lastStatus.Resources == nil {
		t.Error("no pod-level resources")
	}

	// A later ContainerStarted of the same instance with other resources
	// (a runtime that relists) replaces them; one without keeps them.
	now = now.Add(time.Second)
	step(Observation{Kind: ContainerStarted, Container: "foo1", ContainerID: "c://1",
		Resources: &containerstate.ActuatedResources{CPURequest: resource.NewMilliQuantity(200, resource.DecimalSI)}})
	if got := m.lastStatus.ContainerStatuses[0].Resources.Requests[v1.ResourceCPU]; got.MilliValue() != 200 {
		t.Errorf("resources after a new report: cpu request %v", &got)
	}
	if got := m.lastStatus.ContainerStatuses[0].Resources.Limits[v1.ResourceCPU]; got.MilliValue() != 1000 {
		t.Errorf("a value the new report lacks is the old status's (same running instance): cpu limit %v", &got)
	}
}

// TestStatusEqualFields: the machine's reflection-free status equality
// agrees with semantic equality on the fields containerstate and podphase
// now fill in.
func TestStatusEqualFields(t *testing.T) {
	mode := v1.RecursiveReadOnlyEnabled
	sig := v1.SIGTERM
	base := func() *v1.PodStatus {
		return &v1.PodStatus{Phase: v1.PodRunning,
			Resources:          &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}},
			AllocatedResources: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")},
			ContainerStatuses: []v1.ContainerStatus{{Name: "a", Resources: &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}},
				AllocatedResources: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")},
				VolumeMounts:       []v1.VolumeMountStatus{{Name: "v", MountPath: "/v", ReadOnly: true, RecursiveReadOnly: &mode}},
				User:               &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 1, GID: 2, SupplementalGroups: []int64{3}}}, StopSignal: &sig}}}
	}
	changes := []struct {
		reason string
		change func(s *v1.PodStatus)
		equal  bool
	}{
		{"the same quantity written another way is equal", func(s *v1.PodStatus) { s.AllocatedResources[v1.ResourceCPU] = resource.MustParse("0.1") }, true},
		{"an empty list equals none", func(s *v1.PodStatus) { s.ContainerStatuses[0].Resources.Requests = v1.ResourceList{} }, true},
		{"pod resources", func(s *v1.PodStatus) { s.Resources.Requests[v1.ResourceCPU] = resource.MustParse("200m") }, false},
		{"pod resources gone", func(s *v1.PodStatus) { s.Resources = nil }, false},
		{"pod allocatedResources", func(s *v1.PodStatus) { s.AllocatedResources[v1.ResourceMemory] = resource.MustParse("1") }, false},
		{"container resources", func(s *v1.PodStatus) { s.ContainerStatuses[0].Resources.Limits = nil }, false},
		{"container allocatedResources", func(s *v1.PodStatus) { s.ContainerStatuses[0].AllocatedResources = nil }, false},
		{"a mount's mode", func(s *v1.PodStatus) { s.ContainerStatuses[0].VolumeMounts[0].RecursiveReadOnly = nil }, false},
		{"a mount's path", func(s *v1.PodStatus) { s.ContainerStatuses[0].VolumeMounts[0].MountPath = "/w" }, false},
		{"the user's groups", func(s *v1.PodStatus) { s.ContainerStatuses[0].User.Linux.SupplementalGroups = nil }, false},
		{"the stop signal", func(s *v1.PodStatus) { s.ContainerStatuses[0].StopSignal = nil }, false},
	}
	for _, c := range changes {
		a, b := base(), base()
		c.change(b)
		if got := statusEqual(a, b); got != c.equal {
			t.Errorf("%s: statusEqual %v, want %v", c.reason, got, c.equal)
		}
	}
}

// TestPodCgroupRead: once the API pod is Running, the pod's status.resources
// are read back from its cgroup as a cgroup v2 host gives them (Options.Cgroups
// CgroupsV2, spec/podphase.md sections 4.3 and 4.5): a 250m request becomes
// 256 shares, a weight of 10, 237 shares and so 232m; with CgroupsNone they
// keep the old status's values.
func TestPodCgroupRead(t *testing.T) {
	for _, tt := range []struct {
		cgroups Cgroups
		cpu     string
	}{{CgroupsV2, "232m"}, {CgroupsNone, "250m"}} {
		pod := podP3()
		pod.Spec.Containers = pod.Spec.Containers[:1]
		pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")}}
		opts := DefaultOptions()
		opts.Cgroups = tt.cgroups
		m, err := New(opts, pod)
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		now := t0
		if err := m.StepTo(now, pod, nil, &r); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		if err := m.StepTo(now, pod, []Observation{{Kind: SandboxReady, IP: "10.0.0.1"}}, &r); err != nil {
			t.Fatal(err)
		}
		if err := m.StepTo(now, pod, []Observation{{Kind: ImagePulled, Container: "foo1", Image: "busybox"},
			{Kind: ContainerCreated, Container: "foo1", ContainerID: "c://1"}, {Kind: ContainerStarted, Container: "foo1", ContainerID: "c://1"}}, &r); err != nil {
			t.Fatal(err)
		}
		// The API server has the Running status now; an update makes the
		// machine sync.
		api := pod.DeepCopy()
		api.Status = *m.lastStatus.DeepCopy()
		api.ResourceVersion = "2"
		api.Annotations = map[string]string{"sync": "1"}
		now = now.Add(time.Second)
		if err := m.StepTo(now, api, nil, &r); err != nil {
			t.Fatal(err)
		}
		got := m.lastStatus.Resources.Requests[v1.ResourceCPU]
		if got.Cmp(resource.MustParse(tt.cpu)) != 0 {
			t.Errorf("Cgroups %d: status.resources cpu request %v, want %s", tt.cgroups, &got, tt.cpu)
		}
	}
	bad := DefaultOptions()
	bad.Cgroups = 9
	var oe *OptionError
	if _, err := New(bad, podP3()); !errors.As(err, &oe) || oe.Field != "Cgroups" || !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("an undefined Cgroups value: %v", err)
	}
}
