package containerstate

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

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

// FuzzConvert feeds the snapshot conversion arbitrary snapshots and old
// statuses: it must never panic and, when it accepts them, give one state.
func FuzzConvert(f *testing.F) {
	f.Add(uint8(0), uint8(1), int32(1), int32(0), uint8(2), uint8(1), int32(3), true, "c://1", "c://2")
	f.Add(uint8(2), uint8(3), int32(-1), int32(5), uint8(4), uint8(0), int32(0), false, "", "c://2")
	f.Fuzz(func(t *testing.T, policy, oldKind uint8, oldExit, oldRC int32, newState, prevState uint8, exit int32, deleting bool, newID, prevID string) {
		spec := &v1.PodSpec{RestartPolicy: []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever, "x"}[policy%4],
			InitContainers: []v1.Container{{Name: "init"}}, Containers: []v1.Container{{Name: "app"}},
			EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "dbg"}}}}
		in := Input{Pod: Pod{Spec: spec, PodFacts: PodFacts{Deleting: deleting, RestartingAllContainers: oldRC%2 == 0}},
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
