package containerstate

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// BenchmarkStep runs a crash loop through a Machine: Created, Started, a
// readiness result, Exited, BackOff, over and over. Every event is accepted.
func BenchmarkStep(b *testing.B) {
	spec := &v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "app:1", ReadinessProbe: &v1.Probe{}}}}
	m, err := NewMachine(DefaultOptions(), Pod{Spec: spec, Name: "web", Namespace: "default", UID: "u"}, "app")
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, 64)
	for i := range ids {
		ids[i] = fmt.Sprintf("containerd://%064d", i)
	}
	backoff := BackOffEvent(t0, 10*time.Second, "app", "web", "default", "u")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := ids[(i/5)%len(ids)]
		now := t0.Add(time.Duration(i) * time.Second)
		var ev Event
		switch i % 5 {
		case 0:
			ev = Event{Kind: Created, At: now, ContainerID: id}
		case 1:
			ev = Event{Kind: Started, At: now, ContainerID: id}
		case 2:
			ev = Event{Kind: ReadinessProbe, At: now, Result: ProbeSuccess}
		case 3:
			ev = Event{Kind: Exited, At: now, ContainerID: id, ExitCode: 1, Reason: ReasonError}
		case 4:
			ev = backoff
			ev.At = now
		}
		if err := m.Step(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatus builds the v1.ContainerStatus of a restarted container
// (state and lastState set).
func BenchmarkStatus(b *testing.B) {
	m, err := NewMachine(DefaultOptions(), Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "app"}}}}, "app")
	if err != nil {
		b.Fatal(err)
	}
	for i, ev := range []Event{{Kind: Started, ContainerID: "c://1"}, ExitedEvent(time.Time{}, "c://1", 1), {Kind: Started, ContainerID: "c://2"}} {
		ev.At = t0.Add(time.Duration(i) * time.Second)
		if err := m.Step(ev); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := m.Status()
		if s.RestartCount != 1 {
			b.Fatal(s.RestartCount)
		}
	}
}

// BenchmarkConvert converts a snapshot with two instances and an old status.
func BenchmarkConvert(b *testing.B) {
	in := Input{
		Pod:      Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "sidecar"}, {Name: "app"}}}},
		Name:     "app",
		Old:      &v1.ContainerStatus{Name: "app", State: terminatedState(1, ReasonError, ""), RestartCount: 3, ContainerID: "c://3"},
		Newest:   &Instance{ID: "c://4", State: RuntimeRunning, StartedAt: t0, CreatedAt: t0, RestartCount: 4},
		Previous: &Instance{ID: "c://3", State: RuntimeExited, ExitCode: 1, Reason: ReasonError, CreatedAt: t0.Add(-time.Minute), RestartCount: 3},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Convert(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertTo is BenchmarkConvert into one status, reused.
func BenchmarkConvertTo(b *testing.B) {
	in := Input{
		Pod:      Pod{Spec: &v1.PodSpec{Containers: []v1.Container{{Name: "sidecar"}, {Name: "app"}}}},
		Name:     "app",
		Old:      &v1.ContainerStatus{Name: "app", State: terminatedState(1, ReasonError, ""), RestartCount: 3, ContainerID: "c://3"},
		Newest:   &Instance{ID: "c://4", State: RuntimeRunning, StartedAt: t0, CreatedAt: t0, RestartCount: 4},
		Previous: &Instance{ID: "c://3", State: RuntimeExited, ExitCode: 1, Reason: ReasonError, CreatedAt: t0.Add(-time.Minute), RestartCount: 3},
	}
	o := DefaultOptions()
	var s v1.ContainerStatus
	b.ReportAllocs()
	for b.Loop() {
		if err := o.ConvertTo(in, &s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkShouldRestart(b *testing.B) {
	never := v1.ContainerRestartPolicyNever
	spec := &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways}
	c := &v1.Container{RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{exitRule(v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleOnExitCodesOpIn, 1, 2, 3, 42)}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !ShouldRestart(spec, c, 42) {
			b.Fatal("rule must match")
		}
	}
}
