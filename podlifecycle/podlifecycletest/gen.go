package podlifecycletest

import (
	"fmt"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/containerstate/containerstatetest"
	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podphase/podphasetest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

// GenOptions shapes the generated pods. Start from DefaultGenOptions.
type GenOptions struct {
	// MaxInit and MaxRegular bound the number of init containers (regular
	// and sidecars together, 0 to MaxInit) and regular containers (1 to
	// MaxRegular).
	MaxInit, MaxRegular int
	// RestartAllRules lets container restart rules have the action
	// RestartAllContainers; otherwise their action is Restart.
	RestartAllRules bool
	// Resources gives containers CPU and memory requests and limits and
	// read-only or writable volume mounts, and sometimes the pod pod-level
	// resources (containerstatetest's and podphasetest's generators).
	Resources bool
}

// DefaultGenOptions returns up to three init containers, up to three
// regular ones, and rules with the action Restart only.
func DefaultGenOptions() GenOptions { return GenOptions{MaxInit: 3, MaxRegular: 3} }

// Pod generates pods with DefaultGenOptions; see PodWith.
func Pod() *rapid.Generator[*v1.Pod] { return PodWith(DefaultGenOptions()) }

// PodWith generates pods "pod" in namespace "default": a pod restart
// policy (the empty default included), regular init containers ("initN")
// and sidecars ("sideN") in any order, regular containers ("appN") with or
// without their own restart policy and rules, startup, liveness and
// readiness probes with small periods and thresholds, postStart and
// preStop hooks (not on regular init containers, which the API server
// refuses), terminationGracePeriodSeconds (unset, 0 or up to 30) and
// sometimes activeDeadlineSeconds. Images have a tag (pulled if not
// present) or none (always pulled).
func PodWith(o GenOptions) *rapid.Generator[*v1.Pod] {
	return rapid.Custom(func(t *rapid.T) *v1.Pod {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod", Namespace: "default", UID: "uid-1"}}
		s := &pod.Spec
		s.RestartPolicy = rapid.SampledFrom([]v1.RestartPolicy{"", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}).Draw(t, "restartPolicy")
		if g := rapid.SampledFrom([]int64{-1, 0, 1, 2, 5, 10, 30}).Draw(t, "terminationGrace"); g >= 0 {
			s.TerminationGracePeriodSeconds = &g
		}
		if rapid.IntRange(0, 4).Draw(t, "hasDeadline") == 0 {
			d := rapid.Int64Range(20, 400).Draw(t, "activeDeadlineSeconds")
			s.ActiveDeadlineSeconds = &d
		}
		for i := range rapid.IntRange(0, max(o.MaxInit, 0)).Draw(t, "inits") {
			sidecar := rapid.Bool().Draw(t, fmt.Sprint("sidecar", i))
			name := fmt.Sprint("init", i)
			if sidecar {
				name = fmt.Sprint("side", i)
			}
			c := genContainer(t, o, name, containerstate.Init, sidecar)
			s.InitContainers = append(s.InitContainers, c)
		}
		for i := range rapid.IntRange(1, max(o.MaxRegular, 1)).Draw(t, "regulars") {
			s.Containers = append(s.Containers, genContainer(t, o, fmt.Sprint("app", i), containerstate.Regular, false))
		}
		if o.Resources && rapid.IntRange(0, 3).Draw(t, "podLevel") == 0 {
			r := podphasetest.Requirements().Draw(t, "podResources")
			s.Resources = &r
		}
		return pod
	})
}

func genContainer(t *rapid.T, o GenOptions, name string, kind containerstate.Kind, sidecar bool) v1.Container {
	c := v1.Container{Name: name, Image: "registry.example/" + name + ":1"}
	if rapid.IntRange(0, 3).Draw(t, name+"-untagged") == 0 {
		c.Image = "registry.example/" + name
	}
	if rapid.IntRange(0, 9).Draw(t, name+"-never") == 0 {
		c.ImagePullPolicy = v1.PullNever
	}
	if sidecar {
		p := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &p
	} else if kind == containerstate.Regular && rapid.IntRange(0, 2).Draw(t, name+"-ownPolicy") == 0 {
		p := rapid.SampledFrom([]v1.ContainerRestartPolicy{v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}).Draw(t, name+"-policy")
		c.RestartPolicy = &p
		actions := []v1.ContainerRestartRuleAction{v1.ContainerRestartRuleActionRestart}
		if o.RestartAllRules {
			actions = append(actions, v1.ContainerRestartRuleActionRestartAllContainers)
		}
		for j := range rapid.IntRange(0, 2).Draw(t, name+"-rules") {
			op := rapid.SampledFrom([]v1.ContainerRestartRuleOnExitCodesOperator{v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn}).Draw(t, fmt.Sprint(name, "-op", j))
			codes := rapid.SliceOfNDistinct(rapid.SampledFrom([]int32{0, 1, 2, 137, 143}), 1, 3, rapid.ID[int32]).Draw(t, fmt.Sprint(name, "-codes", j))
			c.RestartPolicyRules = append(c.RestartPolicyRules, v1.ContainerRestartRule{
				Action:    rapid.SampledFrom(actions).Draw(t, fmt.Sprint(name, "-action", j)),
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}})
		}
	}
	if kind == containerstate.Regular || sidecar {
		probe := func(kind string, readiness bool) *v1.Probe {
			if rapid.IntRange(0, 2).Draw(t, name+"-"+kind) != 0 {
				return nil
			}
			// With RestartAllContainers rules, a startup or liveness probe
			// that fails at the instant its container starts restarts the
			// pod in place with no back-off (upstream behaviour, spec
			// section 15 decision 3), and the simulated runtime starts
			// containers in zero time, so the two would loop at one instant
			// forever, which no real runtime can do: such probes wait at
			// least a second.
			minDelay := int32(0)
			if o.RestartAllRules && !readiness {
				minDelay = 1
			}
			p := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"/probe", kind}}},
				PeriodSeconds:       rapid.Int32Range(1, 10).Draw(t, name+"-"+kind+"-period"),
				FailureThreshold:    rapid.Int32Range(1, 3).Draw(t, name+"-"+kind+"-failure"),
				InitialDelaySeconds: rapid.Int32Range(minDelay, 5).Draw(t, name+"-"+kind+"-delay"),
				SuccessThreshold:    1, TimeoutSeconds: 1}
			if readiness {
				p.SuccessThreshold = rapid.Int32Range(1, 2).Draw(t, name+"-"+kind+"-success")
			} else if rapid.IntRange(0, 3).Draw(t, name+"-"+kind+"-hasGrace") == 0 {
				g := rapid.Int64Range(1, 20).Draw(t, name+"-"+kind+"-grace") // the API server refuses 0
				p.TerminationGracePeriodSeconds = &g
			}
			return p
		}
		c.StartupProbe = probe("startup", false)
		c.LivenessProbe = probe("liveness", false)
		c.ReadinessProbe = probe("readiness", true)
	}
	hook := func() *v1.LifecycleHandler {
		return &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"/hook"}}}
	}
	// The API server refuses lifecycle hooks on a regular init container.
	if (kind == containerstate.Regular || sidecar) && rapid.IntRange(0, 3).Draw(t, name+"-postStart") == 0 {
		c.Lifecycle = &v1.Lifecycle{PostStart: hook()}
	}
	if (kind == containerstate.Regular || sidecar) && rapid.IntRange(0, 3).Draw(t, name+"-preStop") == 0 {
		if c.Lifecycle == nil {
			c.Lifecycle = &v1.Lifecycle{}
		}
		c.Lifecycle.PreStop = hook()
	}
	if o.Resources {
		c.Resources = containerstatetest.Resources().Draw(t, name+"-resources")
		c.VolumeMounts = containerstatetest.VolumeMounts().Draw(t, name+"-mounts")
	}
	return c
}

// BehavioursFor generates behaviours for every container of pod: regular
// init containers mostly exit (mostly with 0) within half a minute, others
// run forever or exit after up to a minute with 0, 1, 2 or 137; pulls fail
// a few times, always, or are slow; probes fail, warn or error over
// windows of the first minutes; some containers ignore SIGTERM; hooks take
// up to some seconds and sometimes fail. Durations are whole seconds or,
// sometimes, have milliseconds.
func BehavioursFor(pod *v1.Pod) *rapid.Generator[simruntime.Behaviours] {
	return rapid.Custom(func(t *rapid.T) simruntime.Behaviours {
		bs := simruntime.Behaviours{}
		gen := func(c *v1.Container, regInit bool) {
			n := c.Name
			dur := func(label string, maxSec int) time.Duration {
				d := time.Duration(rapid.IntRange(0, maxSec).Draw(t, n+"-"+label)) * time.Second
				if rapid.IntRange(0, 4).Draw(t, n+"-"+label+"-ms") == 0 {
					d += time.Duration(rapid.IntRange(1, 999).Draw(t, n+"-"+label+"-msv")) * time.Millisecond
				}
				return d
			}
			var b simruntime.Behaviour
			if regInit {
				b.Exits = rapid.IntRange(0, 9).Draw(t, n+"-exits") != 0
				if rapid.IntRange(0, 3).Draw(t, n+"-fails") == 0 {
					b.ExitCode = rapid.SampledFrom([]int32{1, 2, 137}).Draw(t, n+"-code")
				}
				b.Run = dur("run", 30)
				if !b.Exits {
					b.Run, b.ExitCode = 0, 0 // runs forever
				}
			} else if rapid.Bool().Draw(t, n+"-exits") {
				b.Exits = true
				// A reset by a RestartAllContainers rule has no back-off
				// (spec/podlifecycle.md pitfall 9): an instance that
				// ran no time at all would loop at one instant.
				b.Run = dur("run", 60)
				if len(c.RestartPolicyRules) > 0 {
					b.Run += time.Second
				}
				b.ExitCode = rapid.SampledFrom([]int32{0, 1, 2, 137}).Draw(t, n+"-code")
			}
			switch rapid.IntRange(0, 9).Draw(t, n+"-pull") {
			case 0:
				b.PullAlwaysFails = true
			case 1, 2:
				b.PullFailures = rapid.IntRange(1, 3).Draw(t, n+"-pullFailures")
			}
			if rapid.IntRange(0, 3).Draw(t, n+"-slowPull") == 0 {
				b.PullTime = dur("pullTime", 20)
			}
			for _, p := range []struct {
				probe podlifecycle.Probe
				spec  *v1.Probe
			}{{podlifecycle.Startup, c.StartupProbe}, {podlifecycle.Liveness, c.LivenessProbe}, {podlifecycle.Readiness, c.ReadinessProbe}} {
				if p.spec == nil {
					continue
				}
				for j := range rapid.IntRange(0, 2).Draw(t, fmt.Sprint(n, "-", p.probe, "-windows")) {
					l := fmt.Sprint(n, "-", p.probe, j)
					w := simruntime.ProbeWindow{Probe: p.probe,
						Outcome: rapid.SampledFrom([]podlifecycle.ProbeOutcome{podlifecycle.ProbeFailure, podlifecycle.ProbeFailure,
							podlifecycle.ProbeWarning, podlifecycle.ProbeError}).Draw(t, l+"-outcome"),
						From: dur(l+"-from", 90)}
					if rapid.IntRange(0, 3).Draw(t, l+"-open") != 0 {
						w.To = w.From + time.Second + dur(l+"-len", 60)
					}
					b.Probes = append(b.Probes, w)
				}
			}
			if rapid.IntRange(0, 3).Draw(t, n+"-ignoresSigterm") == 0 {
				b.IgnoreSigterm = dur("ignoreSigterm", 40)
			}
			if c.Lifecycle != nil && c.Lifecycle.PostStart != nil {
				b.PostStart = simruntime.HookBehaviour{Duration: dur("postStart", 5), Fail: rapid.IntRange(0, 4).Draw(t, n+"-postStartFails") == 0}
			}
			if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
				b.PreStop = simruntime.HookBehaviour{Duration: dur("preStop", 40), Fail: rapid.IntRange(0, 4).Draw(t, n+"-preStopFails") == 0}
			}
			bs[n] = b
		}
		if pod == nil {
			return bs
		}
		for i := range pod.Spec.InitContainers {
			c := &pod.Spec.InitContainers[i]
			gen(c, !containerstate.IsSidecar(c))
		}
		for i := range pod.Spec.Containers {
			gen(&pod.Spec.Containers[i], false)
		}
		return bs
	})
}

// Deletions generates graceful deletes at a random time within within (or
// none, one time in three), with the delete option's grace unset, 0 or up
// to 30 s.
func Deletions(within time.Duration) *rapid.Generator[*Deletion] {
	return rapid.Custom(func(t *rapid.T) *Deletion {
		if rapid.IntRange(0, 2).Draw(t, "deleted") == 0 {
			return nil
		}
		d := &Deletion{After: time.Duration(rapid.Int64Range(0, int64(max(within, 0)/time.Second)).Draw(t, "deleteAfter")) * time.Second}
		if g := rapid.SampledFrom([]int64{-1, 0, 1, 3, 10, 30}).Draw(t, "deleteGrace"); g >= 0 {
			d.Grace = &g
		}
		return d
	})
}

// TestCase is one generated run: a pod, its behaviours and a deletion.
type TestCase struct {
	// Pod is the pod, Behaviours its containers' behaviours.
	Pod        *v1.Pod
	Behaviours simruntime.Behaviours
	// Delete is the deletion, or nil.
	Delete *Deletion
}

// Cases generates test cases: a pod of PodWith(o), behaviours for it and a
// deletion within deleteWithin.
func Cases(o GenOptions, deleteWithin time.Duration) *rapid.Generator[TestCase] {
	return rapid.Custom(func(t *rapid.T) TestCase {
		pod := PodWith(o).Draw(t, "pod")
		return TestCase{Pod: pod, Behaviours: BehavioursFor(pod).Draw(t, "behaviours"), Delete: Deletions(deleteWithin).Draw(t, "delete")}
	})
}
