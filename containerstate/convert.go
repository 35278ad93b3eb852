package containerstate

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/kubeversion"
)

// DefaultUnknownGrace is how long nodestate keeps a Running container Running
// while the runtime reports it UNKNOWN: the kubelet's default runtime request
// timeout.
const DefaultUnknownGrace = 2 * time.Minute

// restartGraceWindow is how long before the kubelet's start a container must
// have started for the kubelet-restart readiness grace to apply.
const restartGraceWindow = 10 * time.Second

// Options configures how container statuses are computed. Start from
// [DefaultOptions], or [DefaultOptionsFor] to behave as another Kubernetes
// minor; the zero value has every feature gate off, no UNKNOWN grace and
// the Version-keyed rules of 1.37.
type Options struct {
	// Features are the feature gates.
	Features Features
	// UnknownGrace is how long a Running container whose runtime state turns
	// UNKNOWN keeps its Running state (with ready false) before it is
	// reported Terminated with reason ContainerStatusUnknown. Zero is the
	// kubelet's behaviour: at once. Negative values are invalid.
	UnknownGrace time.Duration

	// Version is the Kubernetes minor whose rules apply where no gate of
	// Features expresses the difference (docs/versions.md, rows CS-V5 to
	// CS-V9): before 1.36 the kubelet does not infer that a regular init
	// container the runtime no longer lists completed once a regular
	// container was created; it stays Waiting. In 1.35 the
	// RestartAllContainersOnContainerExits gate, when turned on, does not
	// carry the previous status's termination into lastState. Before 1.35
	// a running container's memory request is the allocated one and the
	// runtime's actuated resources are not completed from the kubelet's
	// record. The API server's rule of [Options.ValidateStatusTransition]
	// is the Version's.
	// The zero Version is 1.37. A value that is
	// none of kubeversion's constants (kubeversion.Version(99)) is refused
	// by NewMachine and Convert with an *OptionError matching both
	// ErrInvalidOptions and kubeversion.ErrUnsupportedVersion.
	Version kubeversion.Version
}

// DefaultOptions returns the Kubernetes 1.37 feature defaults and the
// default UNKNOWN grace of two minutes: [DefaultOptionsFor] the zero
// kubeversion.Version.
func DefaultOptions() Options {
	return DefaultOptionsFor(kubeversion.Default)
}

// validate returns an *OptionError for the first field out of range: a
// Version that is none of kubeversion's constants, a negative UnknownGrace.
func (o Options) validate() error {
	if err := versionError(o.Version); err != nil {
		return err
	}
	if o.UnknownGrace < 0 {
		return &OptionError{Field: "UnknownGrace", Reason: "must not be negative, got " + o.UnknownGrace.String()}
	}
	return nil
}

// Kind says which list of the pod spec a container is in.
type Kind uint8

const (
	// Regular is a containers[] entry.
	Regular Kind = iota + 1
	// Init is an initContainers[] entry, including sidecars.
	Init
	// Ephemeral is an ephemeralContainers[] entry.
	Ephemeral
)

var kindNames = [...]string{Regular: "container", Init: "init container", Ephemeral: "ephemeral container"}

// String returns "container", "init container" or "ephemeral container".
func (k Kind) String() string {
	if k >= Regular && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// Input is everything the kubelet looks at to build one container's status.
type Input struct {
	// Pod is the pod the container belongs to. Pod.Spec must not be nil.
	Pod Pod
	// Name is the container's name in the spec.
	Name string
	// Old is the container's previous status (from the API or the status
	// cache), or nil if it has none.
	Old *v1.ContainerStatus
	// Newest and Previous are the two newest runtime instances of the
	// container, or nil. A Previous given without Newest is taken as Newest;
	// if it is newer than Newest by CreatedAt the two are swapped, as the
	// kubelet sorts them.
	Newest, Previous *Instance
	// StartError is the reason cache entry for the container: the last
	// failure to start it, or nil if the last start succeeded.
	StartError *StartError
	// Probes are the prober's results.
	Probes Probes
	// Now is the time of the computation. It only matters for the UNKNOWN
	// grace and the kubelet-restart readiness grace.
	Now time.Time
	// UnknownSince is when the runtime first reported the newest instance
	// UNKNOWN; zero means Now.
	UnknownSince time.Time
}

// Convert returns the v1.ContainerStatus the kubelet reports for one
// container, with the default options. See [Options.Convert].
func Convert(in Input) (v1.ContainerStatus, error) {
	return DefaultOptions().Convert(in)
}

// Convert returns the v1.ContainerStatus the kubelet reports for one
// container from the runtime's view of it, the previous status and the
// prober's results, following spec/containerstate.md sections 4 and 9.
//
// It returns an [*OptionError] (ErrInvalidOptions) for invalid options, and
// an [*InputError] for a nil pod spec, a name the spec lacks, or an
// instance with no ID or an undefined runtime state.
func (o Options) Convert(in Input) (v1.ContainerStatus, error) {
	var s v1.ContainerStatus
	err := o.ConvertTo(in, &s)
	return s, err
}

// ConvertTo is [Options.Convert] writing the status into *dst, for a caller
// that converts the same containers again and again (a node agent's sync
// loop): the states, started, resources, allocatedResources, user,
// volumeMounts and stopSignal that *dst points to are overwritten and
// reused, so a conversion into a status of the same shape allocates
// nothing. What *dst points to must therefore be the caller's own, shared
// with no other status (not with in.Old). The result is equal to
// Convert's, field for field. On an error *dst is left as it was.
func (o Options) ConvertTo(in Input, dst *v1.ContainerStatus) error {
	if err := o.validate(); err != nil {
		return err
	}
	if dst == nil {
		return &InputError{Container: in.Name, Err: ErrNilStatus}
	}
	t, err := resolve(in.Pod, in.Name)
	if err != nil {
		return err
	}
	newest, prev := in.Newest, in.Previous
	if newest == nil && prev != nil {
		newest, prev = prev, nil
	}
	if newest != nil && prev != nil && prev.CreatedAt.After(newest.CreatedAt) {
		newest, prev = prev, newest
	}
	for _, inst := range [2]*Instance{newest, prev} {
		if inst == nil {
			continue
		}
		if err := validInstance(inst); err != nil {
			return &InputError{Container: in.Name, Err: err}
		}
	}
	var old, v statusValue
	if in.Old != nil {
		statusFromAPI(in.Old, &old)
	}
	since := in.UnknownSince
	if since.IsZero() {
		since = in.Now
	}
	o.convert(&t, &old, in.Old != nil, newest, prev, in.StartError, in.Now, since, &v)
	o.applyProbes(&t, &v, &in.Probes, in.Now)
	v.writeTo(&t, dst)
	return nil
}

func validInstance(inst *Instance) error {
	if inst.ID == "" {
		return ErrNoContainerID
	}
	if inst.State < RuntimeCreated || inst.State > RuntimeUnknown {
		return ErrRuntimeState
	}
	return nil
}

// target is a container resolved against its pod: the facts every rule reads.
type target struct {
	pod       Pod
	container *v1.Container // in pod.Spec, read only
	kind      Kind
	hasInit   bool
}

func (t *target) sidecar() bool { return t.kind == Init && IsSidecar(t.container) }

// specMounts is how the volumeMounts of a default status entry are built
// from the container's spec for the pod's current facts (section 4.1): not
// at all for a container without mounts.
func (t *target) specMounts() mountsFrom {
	switch {
	case len(t.container.VolumeMounts) == 0:
		return mountsNone
	case t.pod.RecursiveReadOnlyMounts:
		return mountsSpecRRO
	}
	return mountsSpec
}

func resolve(p Pod, name string) (target, error) {
	if p.Spec == nil {
		return target{}, &InputError{Container: name, Err: ErrNilPodSpec}
	}
	t := target{pod: p, hasInit: len(p.Spec.InitContainers) > 0}
	for i := range p.Spec.InitContainers {
		if p.Spec.InitContainers[i].Name == name {
			t.container, t.kind = &p.Spec.InitContainers[i], Init
			return t, nil
		}
	}
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == name {
			t.container, t.kind = &p.Spec.Containers[i], Regular
			return t, nil
		}
	}
	for i := range p.Spec.EphemeralContainers {
		if p.Spec.EphemeralContainers[i].Name == name {
			t.container, t.kind = (*v1.Container)(&p.Spec.EphemeralContainers[i].EphemeralContainerCommon), Ephemeral
			return t, nil
		}
	}
	return target{}, &InputError{Container: name, Err: ErrNotInSpec}
}

// defaultWaiting is the state of a spec container before the runtime has it
// (section 4.1).
func (t *target) defaultWaiting() stateValue {
	if t.hasInit {
		return waiting(ReasonPodInitializing, "")
	}
	return waiting(ReasonContainerCreating, "")
}

// convert is the kubelet's per-container conversion on pointer-free values,
// into *v, which must not be old. It allocates nothing.
func (o Options) convert(t *target, old *statusValue, hasOld bool, newest, prev *Instance, startErr *StartError, now, unknownSince time.Time, v *statusValue) {
	gates := o.Features
	restartingAll := gates.RestartAllContainersOnContainerExits && t.pod.RestartingAllContainers

	// 4.1: the default entry.
	*v = statusValue{name: t.container.Name, state: t.defaultWaiting(), image: t.container.Image, specMounts: t.specMounts()}
	if hasOld {
		if old.state.kind == Terminated {
			*v = *old
			v.name = t.container.Name
		} else {
			v.restartCount = old.restartCount
			v.last = old.last
		}
	}

	if newest == nil {
		if hasOld {
			o.disappeared(t, v, old, restartingAll)
		}
	} else {
		o.fromRuntime(t, old, hasOld, newest, restartingAll, now, unknownSince, v)
		if prev != nil {
			v.last, _ = o.instanceState(old, hasOld, prev, restartingAll, now, unknownSince)
		}
	}

	o.waitingOverlay(t, v, newest, startErr)

	// The kubelet can compute a status that moves a Terminated container
	// back out of Terminated although its exit allows no restart (a start
	// error cached for a container the runtime no longer lists, repeated
	// UNKNOWN reports, an ephemeral container); its status manager and the
	// API server refuse such a status and the old one stays. So does ours.
	if hasOld && old.state.kind == Terminated && v.state.kind != Terminated && !o.terminatedMayRestart(t, old.state.exitCode) {
		*v = *old
		v.name = t.container.Name
	}
}

// disappeared applies section 4.2 to a container that is in the spec and the
// old status but not in the runtime.
func (o Options) disappeared(t *target, v *statusValue, old *statusValue, restartingAll bool) {
	switch {
	case restartingAll && old.state.kind != Waiting:
		v.state = waiting(ReasonRestartingAllContainers, MessageRestartingAll)
		v.last = terminatedWith(ReasonRestartingAllContainers, MessageRestartingAll, ExitCodeUnknown)
		v.restartCount = old.restartCount + 1
	case old.state.kind == Terminated:
		// The whole old status was kept by the default.
	case old.state.kind != Running:
		// The default Waiting stays.
	case v.state == t.defaultWaiting() && v.last.kind == NoState:
		v.last = terminatedWith(ReasonContainerStatusUnknown, MessageUnknownDeleted, ExitCodeUnknown)
		if !t.pod.Deleting {
			v.restartCount++
		}
	}
}

// instanceState is the state a runtime instance shows (section 4.3), and
// whether it is the old status's Running state held through nodestate's
// UNKNOWN grace.
func (o Options) instanceState(old *statusValue, hasOld bool, inst *Instance, restartingAll bool, now, unknownSince time.Time) (stateValue, bool) {
	switch {
	case inst.State == RuntimeRunning:
		return stateValue{kind: Running, startedAt: inst.StartedAt}, false
	case inst.State == RuntimeCreated:
		return waiting("", ""), false
	case inst.State == RuntimeExited:
		return stateValue{kind: Terminated, exitCode: inst.ExitCode, reason: inst.Reason, message: inst.Message,
			startedAt: inst.StartedAt, finishedAt: inst.FinishedAt, containerID: inst.ID}, false
	case inst.State == RuntimeUnknown && hasOld && old.state.kind == Running:
		if o.UnknownGrace > 0 && now.Sub(unknownSince) < o.UnknownGrace {
			// nodestate's grace: keep what was last seen, but send no traffic.
			return old.state, true
		}
		reason := ReasonContainerStatusUnknown
		if restartingAll {
			reason = ReasonRestartingAllContainers
		}
		return terminatedWith(reason, MessageUnknownTerminated, ExitCodeUnknown), false
	}
	return waiting("", ""), false
}

// fromRuntime converts one runtime instance (section 4.3) into *v, which
// must not be old.
func (o Options) fromRuntime(t *target, old *statusValue, hasOld bool, inst *Instance, restartingAll bool, now, unknownSince time.Time, v *statusValue) {
	*v = statusValue{
		name:         t.container.Name,
		restartCount: inst.RestartCount,
		image:        inst.Image,
		imageID:      inst.ImageID,
		containerID:  inst.ID,
	}
	if v.image == "" {
		v.image = t.container.Image
	}
	if hasOld {
		v.mounts, v.specMounts = old.mounts, old.specMounts // the kubelet keeps them; the CRI does not know volume names
	}
	o.runtimeFields(t, v, old, hasOld, inst)
	var held bool
	v.state, held = o.instanceState(old, hasOld, inst, restartingAll, now, unknownSince)
	switch {
	case held:
		v.restartCount = old.restartCount
		v.hasStarted, v.started = old.hasStarted, old.started
		v.last = old.last
		if old.resources.set && v.resources.set {
			v.resources = old.resources // what was last seen running
		}
		v.unknownHeld = true
		return
	case inst.State == RuntimeUnknown && hasOld && old.state.kind == Running:
		v.restartCount = old.restartCount + 1
	}

	if !o.Features.ChangeContainerStatusOnKubeletRestart && hasOld && old.hasStarted && v.state.kind == Running {
		v.hasStarted, v.started = true, old.started
	}

	if o.Features.RestartAllContainersOnContainerExits && hasOld {
		runtimeCount := v.restartCount
		if old.restartCount > v.restartCount {
			v.restartCount = old.restartCount
		}
		if o.carriesLastState() {
			if old.state.kind == Terminated && old.containerID != inst.ID {
				v.last = old.state
			} else if old.last.kind == Terminated {
				v.last = old.last
			}
		}
		if v.state.kind == Running && old.state.kind == Terminated && old.restartCount >= runtimeCount {
			v.restartCount = old.restartCount + 1
		}
	}
}

// runtimeFields sets the fields of a status built from runtime instance
// inst that come from the runtime and the allocated resources (section
// 4.6): resources and allocatedResources with InPlacePodVerticalScaling,
// user with SupplementalGroupsPolicy, stopSignal with ContainerStopSignals.
func (o Options) runtimeFields(t *target, v *statusValue, old *statusValue, hasOld bool, inst *Instance) {
	if o.Features.InPlacePodVerticalScaling {
		o.resourcesFor(t, old, hasOld, inst, &v.resources)
		v.allocated = t.container.Resources.Requests
	}
	if o.Features.SupplementalGroupsPolicy {
		v.user = inst.User // Linux is the only member: the kubelet's copy is the same
	}
	if o.Features.ContainerStopSignals && inst.StopSignal != nil {
		v.hasStopSignal, v.stopSignal = true, *inst.StopSignal
	}
}

// carriesLastState reports whether the RestartAllContainers gate, when on,
// also carries the old termination into lastState of a listed instance
// (section 4.3). kubernetes#136964 added that in 1.36; 1.35's alpha gate
// carries restartCount only, so lastState there is the runtime's, as with
// the gate off (docs/versions.md, row CS-V7). 1.33 and 1.34 have no such
// gate: turned on by hand there, it gets the rules of 1.36 as elsewhere in
// this package.
func (o Options) carriesLastState() bool {
	return o.Version != kubeversion.V1_35
}

// waitingOverlay applies section 4.4: a container that will be started again
// shows why its last start failed.
func (o Options) waitingOverlay(t *target, v *statusValue, newest *Instance, startErr *StartError) {
	if t.kind == Init {
		if newest != nil && newest.State == RuntimeExited && newest.ExitCode == 0 {
			return
		}
		if !t.sidecar() && newest == nil && t.pod.RegularContainerCreated && v.state.kind == Waiting && o.Version.AtLeast(kubeversion.V1_36) {
			// kubernetes#131317, in 1.36.
			v.state = terminatedWith(ReasonCompleted, MessageInitInferred, 0)
			return
		}
	}
	if startErr == nil || !o.shouldBeRestarted(t, newest) {
		return
	}
	if v.state.kind == Terminated {
		v.last = v.state
	}
	v.state = waiting(startErr.Reason, startErr.Message)
}

// shouldBeRestarted is the kubelet's ShouldContainerBeRestarted (section 3.3).
func (o Options) shouldBeRestarted(t *target, newest *Instance) bool {
	switch {
	case t.pod.Deleting:
		return false
	case newest == nil:
		return true
	case newest.State == RuntimeRunning:
		return false
	case newest.State == RuntimeUnknown || newest.State == RuntimeCreated:
		return true
	case t.kind == Ephemeral:
		// The kubelet never restarts an ephemeral container, and the API
		// server refuses a status that moves one out of Terminated; the
		// kubelet's overlay would read the pod policy here and write such a
		// status. nodestate keeps it Terminated.
		return false
	case o.Features.ContainerRestartRules:
		return o.Features.ShouldRestart(t.pod.Spec, t.container, newest.ExitCode)
	}
	switch t.pod.Spec.RestartPolicy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return newest.ExitCode != 0
	}
	return true
}

// terminatedMayRestart reports whether a Terminated status may leave
// Terminated for a container that exited with exitCode, by the API server's
// rule (section 12.1).
func (o Options) terminatedMayRestart(t *target, exitCode int32) bool {
	switch {
	case t.kind == Ephemeral:
		return false
	case o.Features.RestartAllContainersOnContainerExits && (t.pod.RestartingAllContainers || AnyRestartAllRule(t.pod.Spec)):
		return true
	case o.Features.ContainerRestartRules:
		return o.Features.ShouldRestart(t.pod.Spec, t.container, exitCode)
	case t.sidecar(), t.pod.Spec.RestartPolicy == v1.RestartPolicyAlways:
		return true
	}
	return exitCode != 0 && t.pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure
}

// applyProbes fills in started and ready the way the prober manager does
// (section 9).
func (o Options) applyProbes(t *target, v *statusValue, p *Probes, now time.Time) {
	if t.kind == Ephemeral {
		return
	}
	running := v.state.kind == Running
	switch {
	case !running:
		v.setStarted(false)
	case p.Startup != ProbeNone:
		v.setStarted(p.Startup == ProbeSuccess)
	case !o.Features.ChangeContainerStatusOnKubeletRestart && v.hasStarted && v.started:
		v.setStarted(true)
	case t.container.StartupProbe != nil:
		v.setStarted(false)
	default:
		v.setStarted(true)
	}

	if t.kind == Init && !t.sidecar() {
		v.ready = v.state.kind == Terminated && v.state.exitCode == 0
		return
	}
	if !v.started || v.unknownHeld {
		v.ready = false
		return
	}
	switch {
	case p.Readiness == ProbeSuccess:
		v.ready = true
	case p.Readiness == ProbeFailure:
		v.ready = false
	default:
		v.ready = t.container.ReadinessProbe == nil
		if !v.ready && !o.Features.ChangeContainerStatusOnKubeletRestart && !p.KubeletStartedAt.IsZero() &&
			!v.state.startedAt.IsZero() && p.KubeletStartedAt.Sub(v.state.startedAt) > restartGraceWindow && p.PodReady {
			v.ready = true
		}
	}
}
