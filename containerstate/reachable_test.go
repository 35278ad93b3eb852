package containerstate_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/containerstate"
)

// move is one cell of the transition table: an event kind moving a
// container's reported state from one state to another.
type move struct {
	from containerstate.State
	kind containerstate.EventKind
	to   containerstate.State
}

func (m move) String() string { return fmt.Sprintf("%v -%v-> %v", m.from, m.kind, m.to) }

// TestTransitionsReachable checks that the transition table and the machine
// agree both ways: every event of every row of containerstate.Transitions
// is seen to make that row's move in seeded random walks of machines over
// varied pods, options and events, and no accepted event of the walks makes
// a move the table lacks. The walks go beyond what
// containerstatetest.Events generates (events about new IDs at any time,
// failures while UNKNOWN, pod facts flipping back), so they find moves the
// property tests cannot.
func TestTransitionsReachable(t *testing.T) {
	want := map[move]bool{}
	for _, tr := range containerstate.Transitions() {
		for _, k := range tr.Events {
			want[move{tr.From, k, tr.To}] = true
		}
	}
	seen := map[move]bool{}
	const walks = 4000
	rng := rand.New(rand.NewPCG(11, 7))
	for range walks {
		walk(t, rng, seen)
	}
	var missing, extra []string
	for mv := range want {
		if !seen[mv] {
			missing = append(missing, mv.String())
		}
	}
	for mv := range seen {
		if !want[mv] {
			extra = append(extra, mv.String())
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("%d moves of the table never happened in %d walks:\n%s", len(missing), walks, strings.Join(missing, "\n"))
	}
	if len(extra) > 0 {
		t.Errorf("%d moves happened that the table lacks:\n%s", len(extra), strings.Join(extra, "\n"))
	}
	t.Logf("%d of %d moves seen in %d walks", len(want)-len(missing), len(want), walks)
}

// walk drives one machine with random events and records the moves of the
// accepted ones.
func walk(t *testing.T, rng *rand.Rand, seen map[move]bool) {
	pick := func(n int) int { return rng.IntN(n) }
	policies := []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}
	c := v1.Container{Name: "c", Image: "img"}
	if pick(4) == 0 {
		p := []v1.ContainerRestartPolicy{v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}[pick(3)]
		c.RestartPolicy = &p
		if pick(2) == 0 {
			action := []v1.ContainerRestartRuleAction{v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers}[pick(2)]
			c.RestartPolicyRules = []v1.ContainerRestartRule{{Action: action, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
		}
	}
	if pick(3) == 0 {
		c.ReadinessProbe = &v1.Probe{}
	}
	if pick(3) == 0 {
		c.StartupProbe = &v1.Probe{}
	}
	spec := &v1.PodSpec{RestartPolicy: policies[pick(3)], Containers: []v1.Container{{Name: "app", Image: "app"}}}
	switch pick(4) {
	case 0:
		spec.InitContainers = []v1.Container{c}
	case 1:
		always := v1.ContainerRestartPolicyAlways
		c.RestartPolicy, c.RestartPolicyRules = &always, nil
		spec.InitContainers = []v1.Container{c}
	case 2:
		spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: c.Name, Image: c.Image}}}
	default:
		spec.Containers = append(spec.Containers, c)
	}
	opts := containerstate.DefaultOptions()
	if pick(3) == 0 {
		opts.UnknownGrace = 0
	}
	m, err := containerstate.NewMachine(opts, containerstate.Pod{Spec: spec, Name: "p", Namespace: "ns", UID: "u"}, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	kinds := containerstate.EventKinds()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ids := 0
	for range 40 {
		now = now.Add([]time.Duration{0, time.Second, 30 * time.Second, 3 * time.Minute}[pick(4)])
		ev := containerstate.Event{Kind: kinds[pick(len(kinds))], At: now}
		newest, has := m.Newest()
		switch ev.Kind {
		case containerstate.Created, containerstate.Started, containerstate.Exited, containerstate.Unknown, containerstate.Removed:
			switch {
			case has && pick(3) > 0:
				ev.ContainerID = newest.ID
			default:
				ids++
				ev.ContainerID = fmt.Sprintf("c://%d", ids)
			}
			if ev.Kind == containerstate.Exited {
				ev = containerstate.ExitedEvent(now, ev.ContainerID, []int32{0, 1, 42, 137}[pick(4)])
			}
		case containerstate.StartupProbe, containerstate.ReadinessProbe, containerstate.LivenessProbe:
			ev.Result = containerstate.ProbeResult(1 + pick(2))
		case containerstate.PodChanged:
			ev.Pod = containerstate.PodFacts{Deleting: pick(4) == 0, RestartingAllContainers: pick(3) == 0, RegularContainerCreated: pick(2) == 0}
		case containerstate.Tick:
			if wake, ok := m.NextWake(); ok && pick(2) == 0 && !wake.Before(now) {
				now = wake
				ev.At = wake
			}
		}
		from := m.State()
		if err := m.Step(ev); err != nil {
			continue
		}
		seen[move{from, ev.Kind, m.State()}] = true
	}
}
