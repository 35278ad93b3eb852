package containerstate

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/kubeversion"
)

var fuzzReasons = []string{"", ReasonErrImagePull, ReasonCrashLoopBackOff, ReasonRunContainerError, ReasonCreateContainerConfigError, ReasonCompleted, ReasonError, ReasonOOMKilled, "Weird"}

// FuzzStep feeds a Machine arbitrary events: it must never panic, a refused
// event must leave it unchanged, and its status always has one state.
func FuzzStep(f *testing.F) {
	f.Add([]byte{5, 0, 0, 0, 0, 7, 1, 0, 0, 0, 10, 2, 1, 0, 1, 9, 3, 1, 0, 0})
	f.Add([]byte{11, 0, 0, 0, 0, 11, 200, 0, 0, 0, 12, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		policy := []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}[len(data)%3]
		spec := &v1.PodSpec{RestartPolicy: policy, InitContainers: []v1.Container{{Name: "init"}},
			Containers: []v1.Container{{Name: "app", ReadinessProbe: &v1.Probe{}, StartupProbe: &v1.Probe{}}}}
		name := "app"
		if len(data) > 0 && data[0]%4 == 0 {
			name = "init"
		}
		// Every minor's profile (docs/versions.md): the machine's promises
		// hold whatever the gates.
		vs := kubeversion.Supported()
		opts := DefaultOptionsFor(vs[len(data)/3%len(vs)])
		if len(data) > 1 && data[1]%2 == 0 {
			opts.UnknownGrace = 0
		}
		m, err := NewMachine(opts, Pod{Spec: spec, Name: "p", Namespace: "n", UID: "u"}, name)
		if err != nil {
			t.Fatal(err)
		}
		now := t0
		for len(data) >= 5 {
			kind := EventKind(data[0] % 18)
			dt := time.Duration(int8(data[1])) * time.Second // may go backwards
			ev := Event{Kind: kind, At: now.Add(dt), ContainerID: []string{"", "c://1", "c://2", "c://3"}[data[2]%4],
				ExitCode: int32(binary.LittleEndian.Uint16([]byte{data[3], data[4]})) - 32768,
				Reason:   fuzzReasons[int(data[3])%len(fuzzReasons)], Result: ProbeResult(data[4] % 4),
				Pod: PodFacts{Deleting: data[4]&8 != 0, RestartingAllContainers: data[4]&16 != 0, RegularContainerCreated: data[4]&32 != 0}}
			data = data[5:]
			before := *m
			if err := m.Step(ev); err != nil {
				if d := cmp.Diff(before.Status(), m.Status()); d != "" || m.last != before.last {
					t.Fatalf("refused %v (%v) but changed:\n%s", ev, err, d)
				}
				continue
			}
			now = ev.At
			s := m.Status()
			n := 0
			for _, set := range []bool{s.State.Waiting != nil, s.State.Running != nil, s.State.Terminated != nil} {
				if set {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("after %v: %d states set: %+v", ev, n, s.State)
			}
		}
	})
}

// FuzzConvert feeds the snapshot conversion arbitrary snapshots, old
// statuses, resources and mounts: it must never panic and, when it accepts
// them, give one state, the spec's requests as allocatedResources and the
// spec's mounts or none.
func FuzzConvert(f *testing.F) {
	f.Add(uint8(0), uint8(1), int32(1), int32(0), uint8(2), uint8(1), int32(3), true, "c://1", "c://2", int64(250), int64(1<<20), uint8(7))
	f.Add(uint8(2), uint8(3), int32(-1), int32(5), uint8(4), uint8(0), int32(0), false, "", "c://2", int64(-1), int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, policy, oldKind uint8, oldExit, oldRC int32, newState, prevState uint8, exit int32, deleting bool, newID, prevID string,
		milliCPU, memBytes int64, shape uint8) {
		cpu, mem := *resource.NewMilliQuantity(milliCPU, resource.DecimalSI), *resource.NewQuantity(memBytes, resource.BinarySI)
		res := v1.ResourceRequirements{}
		if shape&1 != 0 {
			res.Requests = v1.ResourceList{v1.ResourceCPU: cpu}
		}
		if shape&2 != 0 {
			res.Limits = v1.ResourceList{v1.ResourceMemory: mem}
		}
		modes := []v1.RecursiveReadOnlyMode{v1.RecursiveReadOnlyDisabled, v1.RecursiveReadOnlyIfPossible, v1.RecursiveReadOnlyEnabled, "?"}
		mode := modes[shape>>4%4]
		mounts := []v1.VolumeMount{{Name: "a", MountPath: "/a", ReadOnly: shape&4 != 0, RecursiveReadOnly: &mode}, {Name: "b", MountPath: "/b"}}
		spec := &v1.PodSpec{RestartPolicy: []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever, "x"}[policy%4],
			InitContainers: []v1.Container{{Name: "init", Resources: res}}, Containers: []v1.Container{{Name: "app", Resources: res, VolumeMounts: mounts}},
			EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "dbg"}}}}
		if shape&8 != 0 {
			spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: cpu, v1.ResourceMemory: mem}}
		}
		in := Input{Pod: Pod{Spec: spec, PodFacts: PodFacts{Deleting: deleting, RestartingAllContainers: oldRC%2 == 0, RecursiveReadOnlyMounts: shape&64 != 0}},
			Name: []string{"app", "init", "dbg", "ghost"}[int(policy/4)%4], Now: t0, UnknownSince: t0.Add(-time.Duration(oldRC) * time.Second)}
		switch oldKind % 5 {
		case 1:
			in.Old = &v1.ContainerStatus{Name: in.Name, State: runningState(t0), RestartCount: oldRC}
		case 2:
			in.Old = &v1.ContainerStatus{Name: in.Name, State: terminatedState(oldExit, ReasonError, ""), RestartCount: oldRC}
		case 3:
			in.Old = &v1.ContainerStatus{Name: in.Name, State: waitingState("x", ""), RestartCount: oldRC, LastTerminationState: terminatedState(oldExit, "", "")}
		case 4:
			in.Old = &v1.ContainerStatus{Name: in.Name, RestartCount: oldRC, LastTerminationState: runningState(t0)}
		}
		if newState%6 != 0 {
			in.Newest = &Instance{ID: newID, State: RuntimeState(newState % 6), ExitCode: exit, RestartCount: oldRC}
			if shape&128 != 0 {
				in.Newest.Resources = &ActuatedResources{CPURequest: &cpu, MemoryLimit: &mem}
			}
		}
		if prevState%6 != 0 {
			in.Previous = &Instance{ID: prevID, State: RuntimeState(prevState % 6), ExitCode: oldExit, CreatedAt: t0}
		}
		if oldRC%3 == 0 {
			in.StartError = &StartError{Reason: ReasonCrashLoopBackOff}
		}
		s, err := Convert(in)
		if err != nil {
			return
		}
		n := 0
		for _, set := range []bool{s.State.Waiting != nil, s.State.Running != nil, s.State.Terminated != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d states set: %+v", n, s.State)
		}
		if s.AllocatedResources != nil && in.Name != "dbg" && s.AllocatedResources.Cpu().Cmp(cpu) != 0 {
			t.Fatalf("allocatedResources %v, want the spec's requests %v", s.AllocatedResources, res.Requests)
		}
		if in.Old == nil && s.VolumeMounts != nil && (in.Name != "app" || len(s.VolumeMounts) != 2 || s.VolumeMounts[0].Name != "a" || s.VolumeMounts[1].Name != "b") {
			t.Fatalf("volumeMounts %v, want the spec's or none", s.VolumeMounts)
		}
	})
}

// FuzzShouldRestart checks that ShouldRestart never panics on arbitrary
// rules and agrees with the pod policy when the container has none.
func FuzzShouldRestart(f *testing.F) {
	f.Add(uint8(0), uint8(1), "In", "Restart", int32(42), int32(42))
	f.Fuzz(func(t *testing.T, pod, ctr uint8, op, action string, value, exit int32) {
		spec := &v1.PodSpec{RestartPolicy: v1.RestartPolicy([]string{"Always", "OnFailure", "Never", "", "?"}[pod%5])}
		c := &v1.Container{}
		if ctr%4 != 0 {
			p := v1.ContainerRestartPolicy([]string{"", "Always", "OnFailure", "Never"}[ctr%4])
			c.RestartPolicy = &p
			c.RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleAction(action),
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOperator(op), Values: []int32{value}}}}
		}
		got := ShouldRestart(spec, c, exit)
		if c.RestartPolicy == nil && got != policyRestarts(spec.RestartPolicy, exit) {
			t.Fatalf("no container policy: ShouldRestart %v, pod policy says %v", got, policyRestarts(spec.RestartPolicy, exit))
		}
	})
}
