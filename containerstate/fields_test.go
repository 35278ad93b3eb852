package containerstate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/kubeversion"
)

func list(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func qty(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

func milli(m int64) *resource.Quantity { return resource.NewMilliQuantity(m, resource.DecimalSI) }

// resPod is a pod whose only container ctr0 has resources r.
func resPod(r v1.ResourceRequirements) Pod {
	return Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "ctr0", Image: "img", Resources: r}}}, Name: "foo", Namespace: "bar", UID: "123456"}
}

// reportOf is what the upstream test's runtime reports when it reports the
// spec's own values: each value from the list's Cpu() or Memory(), a zero
// quantity for a missing one.
func reportOf(r v1.ResourceRequirements) *ActuatedResources {
	return &ActuatedResources{CPULimit: r.Limits.Cpu(), MemoryLimit: r.Limits.Memory(), CPURequest: r.Requests.Cpu(), MemoryRequest: r.Requests.Memory()}
}

// cmpQuantities compares quantities by value, as the API does.
var cmpQuantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// TestConvertResourcesCases traces the resources cases of spec section 14
// (CS12 to CS23: TestConvertToAPIContainerStatusesForResources at v1.37.2,
// and TestToKubeContainerStatusWithResources for the record's memory
// request).
func TestConvertResourcesCases(t *testing.T) {
	cpu1mem1 := list("cpu", "1", "memory", "1Gi")
	cpu2mem2 := list("cpu", "2", "memory", "2Gi")
	storage := func(l v1.ResourceList) v1.ResourceList {
		l = l.DeepCopy()
		l[v1.ResourceEphemeralStorage] = resource.MustParse("2Gi")
		l[v1.ResourceStorage] = resource.MustParse("2Gi")
		return l
	}
	extended := func(l v1.ResourceList) v1.ResourceList {
		l = l.DeepCopy()
		for _, n := range []v1.ResourceName{v1.ResourceMemory, v1.ResourceCPU} {
			if _, ok := l[n]; !ok {
				l[n] = resource.MustParse("0")
			}
		}
		l["dummy.io/dummy"] = resource.MustParse("1")
		return l
	}
	runningOld := func(r *v1.ResourceRequirements) *v1.ContainerStatus {
		return &v1.ContainerStatus{Name: "ctr0", Image: "img", ImageID: "img1234", ContainerID: "test://ctr0", State: runningState(at(0)), Resources: r}
	}
	req := func(limits, requests v1.ResourceList) v1.ResourceRequirements {
		return v1.ResourceRequirements{Limits: limits, Requests: requests}
	}
	tests := []struct {
		id, reason string
		spec       v1.ResourceRequirements
		state      RuntimeState
		report     *ActuatedResources // nil: the spec's own values (reportOf)
		old        *v1.ContainerStatus
		want       *v1.ResourceRequirements
	}{
		{id: "CS12", reason: "Guaranteed, the runtime reports the spec's values: resources are the spec's",
			spec: req(cpu1mem1, cpu1mem1), old: runningOld(&v1.ResourceRequirements{Limits: cpu1mem1, Requests: cpu1mem1}),
			want: &v1.ResourceRequirements{Limits: cpu1mem1, Requests: cpu1mem1}},
		{id: "CS13", reason: "the old status showed other limits: the runtime's values replace them",
			spec: req(cpu1mem1, cpu1mem1), old: runningOld(&v1.ResourceRequirements{Limits: cpu2mem2, Requests: cpu1mem1}),
			want: &v1.ResourceRequirements{Limits: cpu1mem1, Requests: cpu1mem1}},
		{id: "CS14", reason: "no CPU request: the runtime's 2m (the minimum shares) is at the floor like the allocated 0, so no CPU entry appears",
			spec: req(nil, list("memory", "100M")), report: &ActuatedResources{CPURequest: milli(2)},
			old:  runningOld(&v1.ResourceRequirements{Requests: list("memory", "100M")}),
			want: &v1.ResourceRequirements{Requests: list("memory", "100M")}},
		{id: "CS15", reason: "CPU request and limit below the floors on both sides keep the allocated 1m and 5m",
			spec:   req(list("cpu", "5m"), list("memory", "100M", "cpu", "1m")),
			report: &ActuatedResources{CPURequest: milli(2), CPULimit: milli(10)},
			old:    runningOld(&v1.ResourceRequirements{Limits: list("cpu", "5m"), Requests: list("memory", "100M", "cpu", "1m")}),
			want:   &v1.ResourceRequirements{Limits: list("cpu", "5m"), Requests: list("memory", "100M", "cpu", "1m")}},
		{id: "CS16", reason: "resources the runtime does not report (storage) keep the allocated values beside the reported CPU and memory",
			spec: req(storage(cpu1mem1), storage(cpu1mem1)), old: runningOld(&v1.ResourceRequirements{Limits: cpu1mem1, Requests: cpu1mem1}),
			want: &v1.ResourceRequirements{Limits: storage(cpu1mem1), Requests: storage(cpu1mem1)}},
		{id: "CS17", reason: "the runtime's values replace an old status's other ones, storage included",
			spec: req(storage(cpu1mem1), storage(cpu1mem1)), old: runningOld(&v1.ResourceRequirements{Limits: storage(cpu2mem2), Requests: storage(cpu2mem2)}),
			want: &v1.ResourceRequirements{Limits: storage(cpu1mem1), Requests: storage(cpu1mem1)}},
		{id: "CS18", reason: "an old status without resources changes nothing",
			spec: req(storage(cpu1mem1), storage(cpu1mem1)), old: runningOld(nil),
			want: &v1.ResourceRequirements{Limits: storage(cpu1mem1), Requests: storage(cpu1mem1)}},
		{id: "CS19", reason: "BestEffort: empty resources, not none",
			old: runningOld(&v1.ResourceRequirements{}), want: &v1.ResourceRequirements{}},
		{id: "CS20", reason: "extended resources are allocated values; the runtime's zero CPU and memory are at the floor or equal",
			spec: req(nil, extended(cpu1mem1)), old: runningOld(&v1.ResourceRequirements{}),
			want: &v1.ResourceRequirements{Requests: extended(cpu1mem1)}},
		{id: "CS20/g", reason: "the same with limits (Guaranteed)",
			spec: req(extended(cpu1mem1), extended(cpu1mem1)), old: runningOld(&v1.ResourceRequirements{}),
			want: &v1.ResourceRequirements{Limits: extended(cpu1mem1), Requests: extended(cpu1mem1)}},
		{id: "CS21", reason: "a created instance, no old status: the allocated resources",
			spec: req(storage(cpu1mem1), storage(cpu1mem1)), state: RuntimeCreated,
			want: &v1.ResourceRequirements{Limits: storage(cpu1mem1), Requests: storage(cpu1mem1)}},
		{id: "CS21/r", reason: "newly running after a Waiting old status: the runtime's values over the allocated ones",
			spec: req(storage(cpu1mem1), storage(cpu1mem1)),
			old:  &v1.ContainerStatus{Name: "ctr0", Image: "img", ImageID: "img1234", State: waitingState("", "")},
			want: &v1.ResourceRequirements{Limits: storage(cpu1mem1), Requests: storage(cpu1mem1)}},
		{id: "CS22", reason: "an exited instance shows the allocated resources, whatever the runtime reported",
			spec: req(storage(cpu2mem2), storage(cpu2mem2)), state: RuntimeExited, report: reportOf(req(cpu1mem1, cpu1mem1)),
			old:  runningOld(&v1.ResourceRequirements{Limits: storage(cpu1mem1), Requests: storage(cpu1mem1)}),
			want: &v1.ResourceRequirements{Limits: storage(cpu2mem2), Requests: storage(cpu2mem2)}},
		{id: "CS23", reason: "the runtime reports a memory limit and no memory request: the kubelet's record gives the request",
			spec:   req(list("memory", "500Mi"), list("memory", "250Mi")),
			report: &ActuatedResources{MemoryLimit: qty("500Mi")},
			want:   &v1.ResourceRequirements{Limits: list("memory", "500Mi"), Requests: list("memory", "250Mi")}},
	}
	for _, tt := range tests {
		state := tt.state
		if state == 0 {
			state = RuntimeRunning
		}
		report := tt.report
		if report == nil {
			report = reportOf(tt.spec)
		}
		inst := &Instance{ID: "test://ctr0", State: state, Image: "img", ImageID: "img1234", Resources: report, StartedAt: at(1), FinishedAt: at(2)}
		got, err := DefaultOptions().Convert(Input{Pod: resPod(tt.spec), Name: "ctr0", Old: tt.old, Newest: inst})
		if err != nil {
			t.Fatalf("%s: %v", tt.id, err)
		}
		if d := cmp.Diff(tt.want, got.Resources, cmpQuantities); d != "" {
			t.Errorf("%s: %s: resources mismatch (-want +got):\n%s", tt.id, tt.reason, d)
		}
		if d := cmp.Diff(tt.spec.Requests, got.AllocatedResources, cmpQuantities); d != "" {
			t.Errorf("%s: allocatedResources are the spec's requests (-want +got):\n%s", tt.id, d)
		}
		if got.ImageID != "img1234" {
			t.Errorf("%s: imageID %q, want the runtime's image ref img1234", tt.id, got.ImageID)
		}
	}
}

// TestConvertFieldRules traces the rules of sections 4.1, 4.3 and 4.6 on
// the fields that come from the spec, the allocation and the runtime.
func TestConvertFieldRules(t *testing.T) {
	ro := func(name string, mode *v1.RecursiveReadOnlyMode) v1.VolumeMount {
		return v1.VolumeMount{Name: name, MountPath: "/" + name, ReadOnly: true, RecursiveReadOnly: mode}
	}
	mode := func(m v1.RecursiveReadOnlyMode) *v1.RecursiveReadOnlyMode { return &m }
	bidirectional := v1.MountPropagationBidirectional
	mounts := []v1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		ro("token", nil),
		ro("ifpossible", mode(v1.RecursiveReadOnlyIfPossible)),
		ro("enabled", mode(v1.RecursiveReadOnlyEnabled)),
		{Name: "rw-enabled", MountPath: "/rw", RecursiveReadOnly: mode(v1.RecursiveReadOnlyEnabled)},
		ro("propagated", mode(v1.RecursiveReadOnlyIfPossible)),
		ro("weird", mode("Sometimes")),
	}
	mounts[5].MountPropagation = &bidirectional
	status := func(name, path string, readOnly bool, m *v1.RecursiveReadOnlyMode) v1.VolumeMountStatus {
		return v1.VolumeMountStatus{Name: name, MountPath: path, ReadOnly: readOnly, RecursiveReadOnly: m}
	}
	disabled, enabled := mode(v1.RecursiveReadOnlyDisabled), mode(v1.RecursiveReadOnlyEnabled)
	withoutRRO := []v1.VolumeMountStatus{status("data", "/data", false, nil), status("token", "/token", true, disabled),
		status("ifpossible", "/ifpossible", true, disabled), status("enabled", "/enabled", true, disabled),
		status("rw-enabled", "/rw", false, nil), status("propagated", "/propagated", true, disabled), status("weird", "/weird", true, disabled)}
	withRRO := append([]v1.VolumeMountStatus(nil), withoutRRO...)
	withRRO[2].RecursiveReadOnly, withRRO[3].RecursiveReadOnly = enabled, enabled
	pod := func(rro bool) Pod {
		p := Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "a", Image: "img-a", VolumeMounts: mounts,
			Resources: v1.ResourceRequirements{Requests: list("cpu", "100m"), Limits: list("cpu", "500m")}}}}}
		p.RecursiveReadOnlyMounts = rro
		return p
	}
	running := &Instance{ID: "c://1", State: RuntimeRunning, StartedAt: at(1), Image: "img-a", ImageID: "img-a@sha256:1"}
	always := v1.ContainerRestartPolicyAlways
	initResPod := Pod{Spec: &v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init", VolumeMounts: mounts[:1], Resources: v1.ResourceRequirements{Requests: list("cpu", "200m")}},
			{Name: "side", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: list("cpu", "100m"), Limits: list("memory", "128Mi")}}},
		Containers: []v1.Container{{Name: "a"}}}}
	cpuOnly := func(id string) *Instance {
		return &Instance{ID: id, State: RuntimeRunning, StartedAt: at(1), Resources: &ActuatedResources{CPURequest: milli(150)}}
	}
	user := &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 1000, GID: 1000, SupplementalGroups: []int64{1000, 4}}}
	sigterm := v1.SIGTERM

	tests := []struct {
		rule, reason string
		opts         *Options
		in           Input
		check        func(v1.ContainerStatus) string
	}{
		{rule: "4.1", reason: "a default entry lists the spec's mounts in order; a read-only one says Disabled when the runtime cannot make it recursive, whatever it asks",
			in: Input{Pod: pod(false), Name: "a"}, check: func(s v1.ContainerStatus) string { return cmp.Diff(withoutRRO, s.VolumeMounts) }},
		{rule: "4.1", reason: "with runtime support, IfPossible and Enabled on a read-only mount without propagation show Enabled; not read-only, propagated or unknown modes do not",
			in: Input{Pod: pod(true), Name: "a"}, check: func(s v1.ContainerStatus) string { return cmp.Diff(withRRO, s.VolumeMounts) }},
		{rule: "4.1", reason: "a container without mounts has none",
			in: Input{Pod: onePod(v1.RestartPolicyAlways, "a"), Name: "a"}, check: func(s v1.ContainerStatus) string { return cmp.Diff([]v1.VolumeMountStatus(nil), s.VolumeMounts) }},
		{rule: "4.1", reason: "a default entry has no imageID, resources or allocatedResources",
			in: Input{Pod: pod(false), Name: "a"},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff("", s.ImageID), cmp.Diff((*v1.ResourceRequirements)(nil), s.Resources), cmp.Diff(v1.ResourceList(nil), s.AllocatedResources))
			}},
		{rule: "4.3", reason: "a status built from a runtime instance takes the old status's mounts, not the spec's",
			in:    Input{Pod: pod(true), Name: "a", Old: &v1.ContainerStatus{Name: "a", State: waitingState(ReasonContainerCreating, ""), VolumeMounts: withoutRRO[:1]}, Newest: running},
			check: func(s v1.ContainerStatus) string { return cmp.Diff(withoutRRO[:1], s.VolumeMounts) }},
		{rule: "4.3", reason: "without an old status, a status built from a runtime instance has no mounts (the CRI does not know volume names)",
			in: Input{Pod: pod(false), Name: "a", Newest: running}, check: func(s v1.ContainerStatus) string { return cmp.Diff([]v1.VolumeMountStatus(nil), s.VolumeMounts) }},
		{rule: "4.2", reason: "an old Terminated status kept whole keeps its mounts, imageID, resources and allocatedResources",
			in: Input{Pod: pod(false), Name: "a", Old: &v1.ContainerStatus{Name: "a", State: terminatedState(1, ReasonError, ""), ImageID: "x@sha256:2",
				VolumeMounts: withRRO[:2], Resources: &v1.ResourceRequirements{Limits: list("cpu", "1")}, AllocatedResources: list("cpu", "1")}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(withRRO[:2], s.VolumeMounts), cmp.Diff("x@sha256:2", s.ImageID),
					cmp.Diff(&v1.ResourceRequirements{Limits: list("cpu", "1")}, s.Resources, cmpQuantities), cmp.Diff(list("cpu", "1"), s.AllocatedResources, cmpQuantities))
			}},
		{rule: "4.3", reason: "imageID is the runtime's image ref",
			in: Input{Pod: pod(false), Name: "a", Newest: running}, check: func(s v1.ContainerStatus) string { return cmp.Diff("img-a@sha256:1", s.ImageID) }},
		{rule: "4.6", reason: "allocatedResources are the spec's requests, for every runtime state",
			in: Input{Pod: pod(false), Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeCreated}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(list("cpu", "100m"), s.AllocatedResources, cmpQuantities)
			}},
		{rule: "4.6", reason: "a running value the runtime does not report (here the CPU limit) is kept from an old status of the same running instance",
			in: Input{Pod: pod(false), Name: "a", Newest: cpuOnly("c://1"),
				Old: &v1.ContainerStatus{Name: "a", ContainerID: "c://1", State: runningState(at(1)), Resources: &v1.ResourceRequirements{Requests: list("cpu", "200m"), Limits: list("cpu", "700m")}}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Requests: list("cpu", "150m"), Limits: list("cpu", "700m")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6", reason: "not kept from an old status of another instance: the allocated value",
			in: Input{Pod: pod(false), Name: "a", Newest: cpuOnly("c://1"),
				Old: &v1.ContainerStatus{Name: "a", ContainerID: "c://0", State: runningState(at(1)), Resources: &v1.ResourceRequirements{Requests: list("cpu", "200m"), Limits: list("cpu", "700m")}}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Requests: list("cpu", "150m"), Limits: list("cpu", "500m")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6", reason: "not kept from an old status that was not running",
			in: Input{Pod: pod(false), Name: "a", Newest: cpuOnly("c://1"),
				Old: &v1.ContainerStatus{Name: "a", ContainerID: "c://1", State: waitingState("", ""), Resources: &v1.ResourceRequirements{Requests: list("cpu", "200m"), Limits: list("cpu", "700m")}}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Requests: list("cpu", "150m"), Limits: list("cpu", "500m")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6", reason: "before 1.35 a runtime that reports nothing keeps the old status's values of the same running instance",
			opts: ptrTo(DefaultOptionsFor(kubeversion.V1_33)),
			in: Input{Pod: pod(false), Name: "a", Newest: running,
				Old: &v1.ContainerStatus{Name: "a", ContainerID: "c://1", State: runningState(at(1)), Resources: &v1.ResourceRequirements{Requests: list("cpu", "200m"), Limits: list("cpu", "700m")}}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Requests: list("cpu", "200m"), Limits: list("cpu", "700m")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6", reason: "before 1.35 a reported memory request is not read: the allocated one stays",
			opts: ptrTo(DefaultOptionsFor(kubeversion.V1_34)),
			in: Input{Pod: resPod(v1.ResourceRequirements{Requests: list("memory", "1Gi")}), Name: "ctr0",
				Newest: &Instance{ID: "c://1", State: RuntimeRunning, Resources: &ActuatedResources{MemoryRequest: qty("2Gi")}}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Requests: list("memory", "1Gi")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6", reason: "from 1.35 a reported memory request replaces the allocated one",
			in: Input{Pod: resPod(v1.ResourceRequirements{Requests: list("memory", "1Gi")}), Name: "ctr0",
				Newest: &Instance{ID: "c://1", State: RuntimeRunning, Resources: &ActuatedResources{MemoryRequest: qty("2Gi")}}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Requests: list("memory", "2Gi")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6 step 1", reason: "a runtime that reports nothing: from 1.35 the record fills all four values, zero where the spec has none, so memory 0 shows beside the CPU values",
			in: Input{Pod: pod(false), Name: "a", Newest: running},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Requests: list("cpu", "100m", "memory", "0"), Limits: list("cpu", "500m", "memory", "0")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6 step 1", reason: "before 1.35 nothing fills a report: the allocated values stay",
			opts: ptrTo(DefaultOptionsFor(kubeversion.V1_34)),
			in:   Input{Pod: pod(false), Name: "a", Newest: running},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Requests: list("cpu", "100m"), Limits: list("cpu", "500m")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6", reason: "a reported CPU value above the floor replaces the allocated one",
			in: Input{Pod: pod(false), Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeRunning, Resources: &ActuatedResources{CPURequest: milli(98), CPULimit: milli(450)}}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Requests: list("cpu", "98m"), Limits: list("cpu", "450m")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6", reason: "a reported value for a list the spec lacks adds nothing: no limits without spec limits",
			in: Input{Pod: resPod(v1.ResourceRequirements{Requests: list("memory", "1Gi")}), Name: "ctr0",
				Newest: &Instance{ID: "c://1", State: RuntimeRunning, Resources: &ActuatedResources{CPULimit: milli(450), MemoryLimit: qty("2Gi")}}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Requests: list("memory", "1Gi")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6", reason: "an ephemeral container (no resources) shows empty resources and no allocatedResources",
			in: Input{Pod: Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "a"}}, EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug"}}}}},
				Name: "debug", Newest: &Instance{ID: "c://1", State: RuntimeRunning}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(&v1.ResourceRequirements{}, s.Resources), cmp.Diff(v1.ResourceList(nil), s.AllocatedResources))
			}},
		{rule: "4.6", reason: "an init container that exited shows its allocated resources and requests",
			in: Input{Pod: initResPod, Name: "init", Newest: &Instance{ID: "c://i", State: RuntimeExited, Resources: &ActuatedResources{CPURequest: milli(900)}}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(&v1.ResourceRequirements{Requests: list("cpu", "200m")}, s.Resources, cmpQuantities), cmp.Diff(list("cpu", "200m"), s.AllocatedResources, cmpQuantities))
			}},
		{rule: "4.6", reason: "a running sidecar shows the runtime's values, as a regular container does",
			in: Input{Pod: initResPod, Name: "side", Newest: &Instance{ID: "c://s", State: RuntimeRunning, Resources: &ActuatedResources{CPURequest: milli(90), MemoryLimit: qty("256Mi")}}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(&v1.ResourceRequirements{Requests: list("cpu", "90m"), Limits: list("memory", "256Mi")}, s.Resources, cmpQuantities),
					cmp.Diff(list("cpu", "100m"), s.AllocatedResources, cmpQuantities))
			}},
		{rule: "4.1", reason: "an init container's default entry lists its mounts too",
			in: Input{Pod: initResPod, Name: "init"}, check: func(s v1.ContainerStatus) string { return cmp.Diff(withoutRRO[:1], s.VolumeMounts) }},
		{rule: "4.6", reason: "InPlacePodVerticalScaling off: neither resources nor allocatedResources",
			opts: &Options{Features: Features{SupplementalGroupsPolicy: true}},
			in:   Input{Pod: pod(false), Name: "a", Newest: running},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff((*v1.ResourceRequirements)(nil), s.Resources), cmp.Diff(v1.ResourceList(nil), s.AllocatedResources))
			}},
		{rule: "4.6", reason: "user is the runtime's with SupplementalGroupsPolicy",
			in:    Input{Pod: pod(false), Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeRunning, User: user}},
			check: func(s v1.ContainerStatus) string { return cmp.Diff(user, s.User) }},
		{rule: "4.6", reason: "an empty user the runtime reports is an empty user, not none",
			in:    Input{Pod: pod(false), Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeRunning, User: &v1.ContainerUser{}}},
			check: func(s v1.ContainerStatus) string { return cmp.Diff(&v1.ContainerUser{}, s.User) }},
		{rule: "4.6", reason: "SupplementalGroupsPolicy off: no user",
			opts:  &Options{Features: Features{InPlacePodVerticalScaling: true}},
			in:    Input{Pod: pod(false), Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeRunning, User: user}},
			check: func(s v1.ContainerStatus) string { return cmp.Diff((*v1.ContainerUser)(nil), s.User) }},
		{rule: "4.6", reason: "ContainerStopSignals off (every minor's default): no stopSignal",
			in:    Input{Pod: pod(false), Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeRunning, StopSignal: &sigterm}},
			check: func(s v1.ContainerStatus) string { return cmp.Diff((*v1.Signal)(nil), s.StopSignal) }},
		{rule: "4.6", reason: "ContainerStopSignals on: the runtime's stop signal",
			opts:  &Options{Features: Features{ContainerStopSignals: true}},
			in:    Input{Pod: pod(false), Name: "a", Newest: &Instance{ID: "c://1", State: RuntimeRunning, StopSignal: &sigterm}},
			check: func(s v1.ContainerStatus) string { return cmp.Diff(&sigterm, s.StopSignal) }},
		{rule: "4.6", reason: "with InPlacePodLevelResourcesVerticalScaling the record's limits fall back to the pod-level ones",
			in: Input{Pod: Pod{Spec: &v1.PodSpec{Resources: &v1.ResourceRequirements{Limits: list("memory", "1Gi")},
				Containers: []v1.Container{{Name: "a", Resources: v1.ResourceRequirements{Limits: list("cpu", "1")}}}}}, Name: "a",
				Newest: &Instance{ID: "c://1", State: RuntimeRunning}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Limits: list("cpu", "1", "memory", "1Gi")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6", reason: "without it the record's limits are the container's: memory 0",
			opts: ptrTo(DefaultOptionsFor(kubeversion.V1_35)),
			in: Input{Pod: Pod{Spec: &v1.PodSpec{Resources: &v1.ResourceRequirements{Limits: list("memory", "1Gi")},
				Containers: []v1.Container{{Name: "a", Resources: v1.ResourceRequirements{Limits: list("cpu", "1")}}}}}, Name: "a",
				Newest: &Instance{ID: "c://1", State: RuntimeRunning}},
			check: func(s v1.ContainerStatus) string {
				return cmp.Diff(&v1.ResourceRequirements{Limits: list("cpu", "1", "memory", "0")}, s.Resources, cmpQuantities)
			}},
		{rule: "4.6 (nodestate grace)", reason: "a Running container held through the UNKNOWN grace keeps the resources last seen",
			in: Input{Pod: pod(false), Name: "a", Now: at(30), UnknownSince: at(10), Newest: &Instance{ID: "c://1", State: RuntimeUnknown},
				Old: &v1.ContainerStatus{Name: "a", ContainerID: "c://1", State: runningState(at(1)), Resources: &v1.ResourceRequirements{Requests: list("cpu", "300m")}}},
			check: func(s v1.ContainerStatus) string {
				return firstDiff(cmp.Diff(runningState(at(1)), s.State), cmp.Diff(&v1.ResourceRequirements{Requests: list("cpu", "300m")}, s.Resources, cmpQuantities))
			}},
	}
	for _, tt := range tests {
		opts := DefaultOptions()
		if tt.opts != nil {
			opts = *tt.opts
		}
		got, err := opts.Convert(tt.in)
		if err != nil {
			t.Errorf("rule %s: %s: unexpected error %v", tt.rule, tt.reason, err)
			continue
		}
		if d := tt.check(got); d != "" {
			t.Errorf("rule %s: %s: mismatch (-want +got):\n%s", tt.rule, tt.reason, d)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestMachineFields: a Machine gives its statuses the same fields as the
// conversion, from its events: the spec's mounts before the runtime has the
// container, the image ref of Created, the resources of Started.
func TestMachineFields(t *testing.T) {
	spec := &v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "nginx:1", VolumeMounts: []v1.VolumeMount{{Name: "token", MountPath: "/var/run/secrets", ReadOnly: true}},
		Resources: v1.ResourceRequirements{Requests: list("cpu", "250m", "memory", "64Mi"), Limits: list("cpu", "500m", "memory", "128Mi")}}}}
	m, err := NewMachine(DefaultOptions(), Pod{Spec: spec, Name: "web", Namespace: "default", UID: "u"}, "app")
	if err != nil {
		t.Fatal(err)
	}
	disabled := v1.RecursiveReadOnlyDisabled
	mounts := []v1.VolumeMountStatus{{Name: "token", MountPath: "/var/run/secrets", ReadOnly: true, RecursiveReadOnly: &disabled}}
	if d := cmp.Diff(mounts, m.Status().VolumeMounts); d != "" {
		t.Fatalf("before the runtime: mounts (-want +got):\n%s", d)
	}
	applied := &ActuatedResources{CPURequest: milli(250), CPULimit: milli(500), MemoryRequest: qty("64Mi"), MemoryLimit: qty("128Mi")}
	for _, ev := range []Event{{Kind: Created, At: at(1), ContainerID: "c://1", ImageID: "nginx@sha256:1"}, {Kind: Started, At: at(2), ContainerID: "c://1", Resources: applied}} {
		if err := m.Step(ev); err != nil {
			t.Fatal(err)
		}
	}
	s := m.Status()
	want := &v1.ResourceRequirements{Requests: list("cpu", "250m", "memory", "64Mi"), Limits: list("cpu", "500m", "memory", "128Mi")}
	if d := firstDiff(cmp.Diff(mounts, s.VolumeMounts), cmp.Diff("nginx@sha256:1", s.ImageID), cmp.Diff(want, s.Resources, cmpQuantities),
		cmp.Diff(spec.Containers[0].Resources.Requests, s.AllocatedResources, cmpQuantities)); d != "" {
		t.Fatalf("running: (-want +got):\n%s", d)
	}
	// The status is a copy: changing it leaves the machine alone.
	s.VolumeMounts[0].Name = "changed"
	s.Resources.Limits[v1.ResourceCPU] = resource.MustParse("9")
	s.AllocatedResources[v1.ResourceCPU] = resource.MustParse("9")
	again := m.Status()
	if d := firstDiff(cmp.Diff(mounts, again.VolumeMounts), cmp.Diff(want, again.Resources, cmpQuantities)); d != "" || spec.Containers[0].Resources.Requests.Cpu().MilliValue() != 250 {
		t.Fatalf("a caller's change to a status reached the machine or the spec: %s", d)
	}
}
