package containerstate_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
)

type modelInstance struct {
	id      string
	state   containerstate.RuntimeState
	exit    int32
	started bool
}

// model is the simplest account of a container that can say what its status
// must be: the instances created so far and whether a start failure shows.
type model struct {
	spec      *v1.PodSpec
	instances []modelInstance
	startErr  string
	errEpoch  int
	readiness containerstate.ProbeResult
	now       time.Time
}

func (md *model) newest() *modelInstance {
	if len(md.instances) == 0 {
		return nil
	}
	return &md.instances[len(md.instances)-1]
}

func (md *model) restartable(exit int32) bool {
	return containerstate.ShouldRestart(md.spec, &md.spec.Containers[0], exit)
}

// TestMachineModel drives a Machine and the model with the same random
// actions and compares them after every step.
func TestMachineModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		policy := rapid.SampledFrom([]v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}).Draw(t, "policy")
		c := v1.Container{Name: "app", Image: "app:1"}
		if rapid.Bool().Draw(t, "readinessProbe") {
			c.ReadinessProbe = &v1.Probe{}
		}
		spec := &v1.PodSpec{RestartPolicy: policy, Containers: []v1.Container{c}}
		m, err := containerstate.NewMachine(containerstate.Options{Features: containerstate.DefaultFeatures()}, containerstate.Pod{Spec: spec, Name: "p", Namespace: "ns", UID: "u"}, "app")
		if err != nil {
			t.Fatal(err)
		}
		md := &model{spec: spec, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		step := func(ev containerstate.Event) {
			if err := m.Step(ev); err != nil {
				t.Fatalf("Step(%v): %v", ev, err)
			}
		}
		tick := func() time.Time {
			md.now = md.now.Add(time.Duration(rapid.IntRange(0, 30).Draw(t, "dt")) * time.Second)
			return md.now
		}

		t.Repeat(map[string]func(*rapid.T){
			"create": func(t *rapid.T) {
				if n := md.newest(); n != nil && (n.state != containerstate.RuntimeExited || !md.restartable(n.exit)) {
					t.Skip("only a first instance, or one after a restartable exit")
				}
				id := fmt.Sprintf("c://%d", len(md.instances)+1)
				md.instances = append(md.instances, modelInstance{id: id, state: containerstate.RuntimeCreated})
				md.readiness = containerstate.ProbeNone
				step(containerstate.Event{Kind: containerstate.Created, At: tick(), ContainerID: id})
			},
			"start": func(t *rapid.T) {
				n := md.newest()
				if n == nil || n.state != containerstate.RuntimeCreated {
					t.Skip("nothing created to start")
				}
				n.state, n.started = containerstate.RuntimeRunning, true
				md.startErr = ""
				step(containerstate.Event{Kind: containerstate.Started, At: tick(), ContainerID: n.id})
			},
			"exit": func(t *rapid.T) {
				n := md.newest()
				if n == nil || n.state == containerstate.RuntimeExited {
					t.Skip("nothing to exit")
				}
				n.state, n.exit = containerstate.RuntimeExited, rapid.SampledFrom([]int32{0, 1, 137, -1}).Draw(t, "exit")
				if md.errEpoch < len(md.instances) {
					md.startErr = ""
				}
				step(containerstate.ExitedEvent(tick(), n.id, n.exit))
			},
			"fail": func(t *rapid.T) {
				kind := rapid.SampledFrom([]containerstate.EventKind{containerstate.PullFailed, containerstate.CreateFailed, containerstate.StartFailed, containerstate.BackOff}).Draw(t, "failure")
				ev := containerstate.Event{Kind: kind, At: tick(), Message: "failed"}
				step(ev)
				md.startErr, md.errEpoch = map[containerstate.EventKind]string{
					containerstate.PullFailed: containerstate.ReasonErrImagePull, containerstate.CreateFailed: containerstate.ReasonCreateContainerError,
					containerstate.StartFailed: containerstate.ReasonRunContainerError, containerstate.BackOff: containerstate.ReasonCrashLoopBackOff,
				}[kind], len(md.instances)
			},
			"readiness": func(t *rapid.T) {
				n := md.newest()
				if n == nil || c.ReadinessProbe == nil {
					t.Skip("no instance or no probe")
				}
				md.readiness = rapid.SampledFrom([]containerstate.ProbeResult{containerstate.ProbeSuccess, containerstate.ProbeFailure}).Draw(t, "result")
				step(containerstate.Event{Kind: containerstate.ReadinessProbe, At: tick(), Result: md.readiness})
			},
			"stale": func(t *rapid.T) {
				last, ok := m.Last()
				if !ok {
					t.Skip("nothing accepted yet")
				}
				before := m.Status()
				err := m.Step(containerstate.Event{Kind: containerstate.PullStarted, At: last.Add(-time.Nanosecond)})
				if !errors.Is(err, containerstate.ErrTimeWentBackwards) {
					t.Fatalf("an event older than the last: error %v, want ErrTimeWentBackwards", err)
				}
				if after := m.Status(); after.String() != before.String() {
					t.Fatal("a refused event changed the status")
				}
			},
			"older": func(t *rapid.T) {
				if len(md.instances) < 2 {
					t.Skip("no replaced instance")
				}
				// The machine remembers the previous instance and RetiredIDs before it.
				oldest := max(0, len(md.instances)-2-containerstate.RetiredIDs)
				i := rapid.IntRange(oldest, len(md.instances)-2).Draw(t, "replaced")
				err := m.Step(containerstate.Event{Kind: containerstate.Started, At: tick(), ContainerID: md.instances[i].id})
				if !errors.Is(err, containerstate.ErrOlderInstance) {
					t.Fatalf("a replaced instance running again: error %v, want ErrOlderInstance", err)
				}
			},
			"": func(t *rapid.T) {
				wantState := containerstate.Waiting
				var wantLast *int32
				n := md.newest()
				switch {
				case n == nil || n.state == containerstate.RuntimeCreated:
				case n.state == containerstate.RuntimeRunning:
					wantState = containerstate.Running
				case md.startErr != "" && md.restartable(n.exit):
					wantLast = &n.exit
				default:
					wantState = containerstate.Terminated
				}
				if wantLast == nil && len(md.instances) >= 2 {
					wantLast = &md.instances[len(md.instances)-2].exit
				}
				wantRC := int32(max(len(md.instances)-1, 0))
				wantReady := wantState == containerstate.Running && (c.ReadinessProbe == nil || md.readiness == containerstate.ProbeSuccess)

				s := m.Status()
				if m.State() != wantState || s.RestartCount != wantRC || s.Ready != wantReady {
					t.Fatalf("machine %v rc=%d ready=%v, model %v rc=%d ready=%v (status %v)", m.State(), s.RestartCount, s.Ready, wantState, wantRC, wantReady, s.State)
				}
				if wantState == containerstate.Waiting && md.startErr != "" && s.State.Waiting.Reason != md.startErr {
					t.Fatalf("waiting reason %q, model %q", s.State.Waiting.Reason, md.startErr)
				}
				gotLast := s.LastTerminationState.Terminated
				if (wantLast == nil) != (gotLast == nil) || (gotLast != nil && gotLast.ExitCode != *wantLast) {
					t.Fatalf("lastState %v, model exit %v", s.LastTerminationState, wantLast)
				}
			},
		})
	})
}
