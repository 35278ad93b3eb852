package podlifecycle

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// fuzzPod has every kind of container: a regular init container, a sidecar
// with a startup probe, two regular containers with probes and hooks, and
// an ephemeral container.
func fuzzPod() *v1.Pod {
	p := podP3()
	p.Spec.Containers = p.Spec.Containers[:2]
	p.Spec.Containers[0].LivenessProbe = &v1.Probe{PeriodSeconds: 3, FailureThreshold: 2}
	p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 1}}}
	p.Spec.Containers[1].ReadinessProbe = &v1.Probe{PeriodSeconds: 2}
	p.Spec.Containers[1].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 1}}}
	p.Spec.InitContainers = []v1.Container{
		{Name: "init", Image: "bar:1"},
		{Name: "sc", Image: "bar:1", RestartPolicy: ptr(v1.ContainerRestartPolicyAlways), StartupProbe: &v1.Probe{PeriodSeconds: 1}},
	}
	p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug", Image: "busybox:1"}}}
	p.Spec.TerminationGracePeriodSeconds = ptr(int64(5))
	p.Spec.ActiveDeadlineSeconds = ptr(int64(200))
	return p
}

// FuzzStep drives a machine with arbitrary observations decoded from the
// input: it must never panic, refuse bad input only with its sentinels,
// never act on a container the spec lacks, and never produce a status the
// API server's container-state transition rule refuses.
func FuzzStep(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14})
	f.Add([]byte("\x01\x00\x00\x07\x02\x00\x09\x02\x00\x0b\x02\x01\x20\x0b\x03\x00\x00\xff"))
	f.Fuzz(fuzzStep)
}

func fuzzStep(t *testing.T, data []byte) {
	{
		pod := fuzzPod()
		m, err := New(DefaultOptions(), pod)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{"init", "sc", "foo1", "foo2", "debug", "ghost"}
		var ids []string
		now := t0
		var res Result
		var prev *v1.PodStatus
		feats := containerstate.DefaultFeatures()
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		for steps := 0; len(data) > 0 && steps < 200; steps++ {
			now = now.Add(time.Duration(next()) * 100 * time.Millisecond)
			if next()%17 == 0 && pod.DeletionTimestamp == nil {
				pod = deleted(pod, now, int64(next()%4))
			}
			var obs []Observation
			for n := int(next() % 4); n > 0; n-- {
				o := Observation{Kind: ObservationKind(next() % 17), Container: names[int(next())%len(names)]}
				if len(ids) > 0 && next()%8 != 0 {
					o.ContainerID = ids[int(next())%len(ids)]
				} else {
					o.ContainerID = fmt.Sprintf("c://%d", len(ids))
				}
				if o.Kind == ContainerCreated {
					ids = append(ids, o.ContainerID)
				}
				o.ExitCode = int32(int8(next()))
				o.Probe, o.Outcome, o.Hook = Probe(next()%4), ProbeOutcome(next()%5), Hook(next()%3)
				o.Failed = next()%2 == 0
				o.Attempt = uint32(next() % 3)
				o.Image = "busybox:1"
				if next()%5 == 0 {
					o.At = now.Add(-time.Duration(next()) * time.Second)
				}
				obs = append(obs, o)
			}
			err := m.StepTo(now, pod, obs, &res)
			if err != nil {
				if !errors.Is(err, ErrInvalidInput) && !errors.Is(err, ErrTimeWentBackwards) {
					t.Fatalf("error with no sentinel: %v", err)
				}
				continue
			}
			for _, a := range res.Actions {
				if a.Container != "" && !specHas(&pod.Spec, a.Container) {
					t.Fatalf("action %v for a container the spec lacks", a)
				}
			}
			for _, e := range res.Events {
				if e.FieldPath != "" && !fieldPathOK(&pod.Spec, e.FieldPath) {
					t.Fatalf("event %+v names no container of the spec", e)
				}
			}
			for i := range res.Statuses {
				st := &res.Statuses[i]
				if prev != nil {
					if got, want := statusEqual(prev, st), equality.Semantic.DeepEqual(*prev, *st); got != want {
						t.Fatalf("statusEqual %v, semantic equality %v", got, want)
					}
					if err := feats.ValidateStatusTransition(&pod.Spec, prev, st); err != nil {
						t.Fatalf("status refused by the API server: %v", err)
					}
					if err := feats.CheckStatusTransition(&pod.Spec, prev, st); err != nil {
						t.Fatalf("status refused by the status manager: %v", err)
					}
				}
				prev = st.DeepCopy()
			}
		}
	}
}

func fieldPathOK(s *v1.PodSpec, fp string) bool {
	for _, c := range s.InitContainers {
		if fp == "spec.initContainers{"+c.Name+"}" {
			return true
		}
	}
	for _, c := range s.Containers {
		if fp == "spec.containers{"+c.Name+"}" {
			return true
		}
	}
	for _, c := range s.EphemeralContainers {
		if fp == "spec.ephemeralContainers{"+c.Name+"}" {
			return true
		}
	}
	return false
}

// TestStepRandomInputs runs the fuzz target's body on seeded random inputs,
// so every run covers what a short fuzzing session would (it found a nil
// instance for a started container that a later creation in the same
// batch had pushed out of the machine's window).
func TestStepRandomInputs(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 200
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		b := make([]byte, r.IntN(3000))
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		fuzzStep(t, b)
	}
}
