package containerstatetest

import (
	"fmt"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"
)

// Epoch is the time generated sequences start at.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var (
	podPolicies       = []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever, ""}
	containerPolicies = []v1.ContainerRestartPolicy{v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever}
	interesting       = []int32{0, 1, 2, 42, 126, 127, 128, 137, 143, 255, -1, -1073741510}
)

// ExitCode generates exit codes, the usual ones most often; any int32 is a
// valid exit code (Windows codes are negative).
func ExitCode() *rapid.Generator[int32] {
	return rapid.OneOf(rapid.SampledFrom(interesting), rapid.SampledFrom(interesting), rapid.Int32())
}

// RestartRules generates restartPolicyRules: zero to three rules with In or
// NotIn exit-code sets and action Restart or RestartAllContainers.
func RestartRules() *rapid.Generator[[]v1.ContainerRestartRule] {
	return rapid.Custom(func(t *rapid.T) []v1.ContainerRestartRule {
		n := rapid.IntRange(0, 3).Draw(t, "rules")
		var rules []v1.ContainerRestartRule
		for i := range n {
			op := rapid.SampledFrom([]v1.ContainerRestartRuleOnExitCodesOperator{v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn}).Draw(t, fmt.Sprint("op", i))
			action := rapid.SampledFrom([]v1.ContainerRestartRuleAction{v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers}).Draw(t, fmt.Sprint("action", i))
			values := rapid.SliceOfN(rapid.SampledFrom(interesting), 1, 3).Draw(t, fmt.Sprint("values", i))
			rules = append(rules, v1.ContainerRestartRule{Action: action, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: values}})
		}
		return rules
	})
}

func container(t *rapid.T, name string, sidecar bool) v1.Container {
	c := v1.Container{Name: name, Image: "registry.example/" + name + ":1"}
	if sidecar {
		p := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &p
	} else if rapid.Bool().Draw(t, name+"-own-policy") {
		p := rapid.SampledFrom(containerPolicies).Draw(t, name+"-policy")
		c.RestartPolicy = &p
		c.RestartPolicyRules = RestartRules().Draw(t, name+"-rules")
	}
	if rapid.Bool().Draw(t, name+"-readiness") {
		c.ReadinessProbe = &v1.Probe{PeriodSeconds: 10}
	}
	if rapid.Bool().Draw(t, name+"-startup") {
		c.StartupProbe = &v1.Probe{PeriodSeconds: 10}
	}
	c.VolumeMounts = VolumeMounts().Draw(t, name+"-mounts")
	c.Resources = Resources().Draw(t, name+"-resources")
	return c
}

var rroModes = []v1.RecursiveReadOnlyMode{v1.RecursiveReadOnlyDisabled, v1.RecursiveReadOnlyIfPossible, v1.RecursiveReadOnlyEnabled}

// VolumeMounts generates zero to three volume mounts, read-only or not,
// some asking for a recursive read-only mode.
func VolumeMounts() *rapid.Generator[[]v1.VolumeMount] {
	return rapid.Custom(func(t *rapid.T) []v1.VolumeMount {
		var out []v1.VolumeMount
		for i := range rapid.IntRange(0, 3).Draw(t, "mounts") {
			m := v1.VolumeMount{Name: fmt.Sprint("vol", i), MountPath: fmt.Sprint("/mnt/", i), ReadOnly: rapid.Bool().Draw(t, "readOnly")}
			if rapid.Bool().Draw(t, "rro") {
				mode := rapid.SampledFrom(rroModes).Draw(t, "rroMode")
				m.RecursiveReadOnly = &mode
			}
			out = append(out, m)
		}
		return out
	})
}

// quantity generates a CPU or memory quantity, sometimes zero.
func quantity(name v1.ResourceName) *rapid.Generator[resource.Quantity] {
	return rapid.Custom(func(t *rapid.T) resource.Quantity {
		if name == v1.ResourceCPU {
			return *resource.NewMilliQuantity(rapid.SampledFrom([]int64{0, 1, 2, 5, 10, 100, 250, 1000, 2500}).Draw(t, "milli"), resource.DecimalSI)
		}
		return *resource.NewQuantity(rapid.SampledFrom([]int64{0, 1 << 20, 64 << 20, 1 << 30}).Draw(t, "bytes"), resource.BinarySI)
	})
}

// resourceList generates a list of none, some or all of cpu, memory and
// ephemeral-storage, or nil.
func resourceList(t *rapid.T, label string) v1.ResourceList {
	if rapid.IntRange(0, 2).Draw(t, label) == 0 {
		return nil
	}
	l := v1.ResourceList{}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage} {
		if rapid.Bool().Draw(t, label+"-"+string(name)) {
			l[name] = quantity(name).Draw(t, label+"-"+string(name)+"-q")
		}
	}
	return l
}

// Resources generates a container's resources: requests and limits each
// nil, empty or with some of cpu, memory and ephemeral-storage.
func Resources() *rapid.Generator[v1.ResourceRequirements] {
	return rapid.Custom(func(t *rapid.T) v1.ResourceRequirements {
		return v1.ResourceRequirements{Requests: resourceList(t, "requests"), Limits: resourceList(t, "limits")}
	})
}

// Actuated generates what a runtime reports it applied to a running
// instance of c: nothing (nil), the spec's own values, or each value
// absent or any quantity.
func Actuated(c *v1.Container) *rapid.Generator[*containerstate.ActuatedResources] {
	return rapid.Custom(func(t *rapid.T) *containerstate.ActuatedResources {
		switch rapid.IntRange(0, 2).Draw(t, "actuated") {
		case 0:
			return nil
		case 1:
			return &containerstate.ActuatedResources{CPURequest: lookup(c.Resources.Requests, v1.ResourceCPU),
				CPULimit: lookup(c.Resources.Limits, v1.ResourceCPU), MemoryRequest: lookup(c.Resources.Requests, v1.ResourceMemory),
				MemoryLimit: lookup(c.Resources.Limits, v1.ResourceMemory)}
		}
		a := &containerstate.ActuatedResources{}
		for _, f := range []struct {
			to   **resource.Quantity
			name v1.ResourceName
		}{{&a.CPURequest, v1.ResourceCPU}, {&a.CPULimit, v1.ResourceCPU}, {&a.MemoryRequest, v1.ResourceMemory}, {&a.MemoryLimit, v1.ResourceMemory}} {
			if rapid.Bool().Draw(t, "reported") {
				q := quantity(f.name).Draw(t, "q")
				*f.to = &q
			}
		}
		return a
	})
}

func lookup(l v1.ResourceList, name v1.ResourceName) *resource.Quantity {
	if q, ok := l[name]; ok {
		return &q
	}
	return nil
}

// PodSpec generates a pod spec: a pod restart policy (including the empty
// default), zero to two init containers of which some are sidecars, one to
// three regular containers with or without their own policies and rules,
// probes, and sometimes an ephemeral container.
func PodSpec() *rapid.Generator[*v1.PodSpec] {
	return rapid.Custom(func(t *rapid.T) *v1.PodSpec {
		spec := &v1.PodSpec{RestartPolicy: rapid.SampledFrom(podPolicies).Draw(t, "podPolicy")}
		for i := range rapid.IntRange(0, 2).Draw(t, "inits") {
			spec.InitContainers = append(spec.InitContainers, container(t, fmt.Sprint("init", i), rapid.Bool().Draw(t, fmt.Sprint("sidecar", i))))
		}
		for i := range rapid.IntRange(1, 3).Draw(t, "containers") {
			spec.Containers = append(spec.Containers, container(t, fmt.Sprint("app", i), false))
		}
		if rapid.IntRange(0, 4).Draw(t, "ephemeral") == 0 {
			spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
		}
		return spec
	})
}

// TargetContainer is one container of a generated pod.
type TargetContainer struct {
	// Pod is the pod, with its spec.
	Pod containerstate.Pod
	// Name is the container's name.
	Name string
	// Container is the container's spec.
	Container v1.Container
	// Kind is the list the container is in.
	Kind containerstate.Kind
}

// Target generates a pod and one of its containers (init, regular or
// ephemeral) to follow.
func Target() *rapid.Generator[TargetContainer] {
	return rapid.Custom(func(t *rapid.T) TargetContainer {
		spec := PodSpec().Draw(t, "spec")
		var all []TargetContainer
		for _, c := range spec.InitContainers {
			all = append(all, TargetContainer{Name: c.Name, Container: c, Kind: containerstate.Init})
		}
		for _, c := range spec.Containers {
			all = append(all, TargetContainer{Name: c.Name, Container: c, Kind: containerstate.Regular})
		}
		for _, c := range spec.EphemeralContainers {
			all = append(all, TargetContainer{Name: c.Name, Container: v1.Container(c.EphemeralContainerCommon), Kind: containerstate.Ephemeral})
		}
		tc := rapid.SampledFrom(all).Draw(t, "container")
		tc.Pod = containerstate.Pod{Spec: spec, Name: "pod", Namespace: "default", UID: types.UID("uid-" + fmt.Sprint(rapid.IntRange(0, 9).Draw(t, "uid")))}
		return tc
	})
}

// Events generates a sequence of events a runtime and the kubelet can report
// for the target container, in time order. Restarts happen only where
// containerstate.ShouldRestart (with the 1.37 defaults) allows them, and only
// as long as the pod is not being deleted.
func Events(target TargetContainer) *rapid.Generator[[]containerstate.Event] {
	return rapid.Custom(func(t *rapid.T) []containerstate.Event {
		g := &sequence{t: t, target: target, now: Epoch}
		g.run(rapid.IntRange(1, 12).Draw(t, "lives"))
		return g.events
	})
}

type sequence struct {
	t        *rapid.T
	target   TargetContainer
	now      time.Time
	events   []containerstate.Event
	ids      int
	deleting bool
}

func (g *sequence) tick() time.Time {
	g.now = g.now.Add(time.Duration(rapid.IntRange(0, 90).Draw(g.t, "dt")) * time.Second)
	return g.now
}

func (g *sequence) emit(ev containerstate.Event) {
	ev.At = g.tick()
	g.events = append(g.events, ev)
	// A relisting runtime may report the same thing again.
	if ev.ContainerID != "" && ev.Kind != containerstate.Removed && rapid.IntRange(0, 9).Draw(g.t, "relist") == 0 {
		again := ev
		again.At = g.tick()
		g.events = append(g.events, again)
	}
}

// run plays up to lives attempts of the container.
func (g *sequence) run(lives int) {
	image := g.target.Container.Image
	spec := g.target.Pod.Spec
	var lastID string
	for life := 0; life < lives; life++ {
		if life > 0 && rapid.IntRange(0, 2).Draw(g.t, "backoff") == 0 {
			g.emit(containerstate.BackOffEvent(time.Time{}, 10*time.Second<<min(life, 5), g.target.Name, g.target.Pod.Name, g.target.Pod.Namespace, g.target.Pod.UID))
		}
		// Pull: fail a few times, then succeed.
		if rapid.Bool().Draw(g.t, "pull") {
			g.emit(containerstate.Event{Kind: containerstate.PullStarted})
			for range rapid.IntRange(0, 2).Draw(g.t, "pullFailures") {
				g.emit(containerstate.PullErrorEvent(time.Time{}, image, rapid.SampledFrom([]string{"not found", "RegistryUnavailable: down", "SignatureValidationFailed: bad"}).Draw(g.t, "pullErr")))
				g.emit(containerstate.PullBackOffEvent(time.Time{}, image, containerstate.ReasonErrImagePull, "not found"))
			}
			g.emit(containerstate.Event{Kind: containerstate.PullSucceeded, ImageID: "sha256:" + fmt.Sprint(life)})
		}
		if rapid.IntRange(0, 5).Draw(g.t, "createFails") == 0 {
			g.emit(containerstate.Event{Kind: containerstate.CreateFailed, Reason: rapid.SampledFrom([]string{"", containerstate.ReasonCreateContainerConfigError, containerstate.ReasonPreCreateHookError}).Draw(g.t, "createReason"), Message: "create failed"})
			continue
		}
		g.ids++
		id := fmt.Sprintf("containerd://%s-%d", g.target.Name, g.ids)
		if lastID != "" && rapid.IntRange(0, 3).Draw(g.t, "gc") == 0 {
			g.emit(containerstate.Event{Kind: containerstate.Removed, ContainerID: lastID})
		}
		skipCreated := rapid.IntRange(0, 4).Draw(g.t, "skipCreated") == 0
		if !skipCreated {
			created := containerstate.Event{Kind: containerstate.Created, ContainerID: id}
			if rapid.Bool().Draw(g.t, "imageRef") {
				created.ImageID = "registry.example/" + g.target.Name + "@sha256:" + fmt.Sprint(life)
			}
			g.emit(created)
		}
		var exit int32
		switch rapid.IntRange(0, 9).Draw(g.t, "outcome") {
		case 0: // the start fails; containerd reports StartError
			g.emit(containerstate.StartErrorEvent(time.Time{}, id, "exec: not found"))
			g.emit(containerstate.Event{Kind: containerstate.StartFailed, Message: "exec: not found"})
			exit = containerstate.ExitCodeStartError
		case 1: // first seen already exited
			exit = ExitCode().Draw(g.t, "exit")
			g.emit(containerstate.ExitedEvent(time.Time{}, id, exit))
		default:
			g.emit(containerstate.Event{Kind: containerstate.Started, ContainerID: id, Resources: Actuated(&g.target.Container).Draw(g.t, "applied")})
			g.probes(id)
			if rapid.IntRange(0, 5).Draw(g.t, "unknown") == 0 {
				for range rapid.IntRange(1, 3).Draw(g.t, "unknownReports") {
					g.emit(containerstate.Event{Kind: containerstate.Unknown, ContainerID: id})
				}
				if rapid.Bool().Draw(g.t, "tick") {
					// A runner's Advance, as at Machine.NextWake.
					g.emit(containerstate.Event{Kind: containerstate.Tick})
				}
				if rapid.Bool().Draw(g.t, "recovers") {
					g.emit(containerstate.Event{Kind: containerstate.Started, ContainerID: id})
				}
			}
			if rapid.IntRange(0, 9).Draw(g.t, "deleted") == 0 {
				g.deleting = true
				g.emit(containerstate.Event{Kind: containerstate.PodChanged, Pod: containerstate.PodFacts{Deleting: true}})
			}
			if rapid.IntRange(0, 6).Draw(g.t, "stillRunning") == 0 {
				return
			}
			if rapid.IntRange(0, 5).Draw(g.t, "oom") == 0 {
				exit = containerstate.ExitCodeUnknown
				g.emit(containerstate.OOMKilledEvent(time.Time{}, id))
			} else {
				exit = ExitCode().Draw(g.t, "exit")
				g.emit(containerstate.ExitedEvent(time.Time{}, id, exit))
			}
		}
		lastID = id
		restart := g.target.Kind != containerstate.Ephemeral && containerstate.ShouldRestart(spec, &g.target.Container, exit)
		if !restart || g.deleting {
			if rapid.Bool().Draw(g.t, "removedAtEnd") {
				g.emit(containerstate.Event{Kind: containerstate.Removed, ContainerID: id})
			}
			return
		}
	}
}

func (g *sequence) probes(id string) {
	for range rapid.IntRange(0, 3).Draw(g.t, "probes") {
		kind := rapid.SampledFrom([]containerstate.EventKind{containerstate.StartupProbe, containerstate.ReadinessProbe, containerstate.LivenessProbe}).Draw(g.t, "probe")
		result := rapid.SampledFrom([]containerstate.ProbeResult{containerstate.ProbeSuccess, containerstate.ProbeFailure}).Draw(g.t, "result")
		g.emit(containerstate.Event{Kind: kind, Result: result, ContainerID: id})
	}
}
