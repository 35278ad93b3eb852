package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podphase"
	v1 "k8s.io/api/core/v1"
)

// Kubelet timings the simulation follows.
const (
	// errorRequeue is how long the pod worker waits before syncing a pod again after a sync
	// error (a back-off, a failed pull): the kubelet's backOffPeriod, jittered by up to half.
	errorRequeue = 10 * time.Second
)

// ctrPhase is where the simulated runtime is with a container.
type ctrPhase uint8

const (
	ctrIdle    ctrPhase = iota // never started, or held back before (re)starting
	ctrPulling                 // an image pull is under way
	ctrRunning                 // an instance runs
	ctrExited                  // the newest instance exited
)

// ctr is one container of a pod: the containerstate machine that computes its status and the
// runtime's view of it.
type ctr struct {
	spec    *v1.Container
	init    bool // an init container (sidecars included)
	sidecar bool
	m       *containerstate.Machine
	beh     behavior
	ref     *v1.ObjectReference // the event reference, with the container's field path

	phase      ctrPhase
	instances  int // instances created so far
	id         string
	pullStart  time.Time
	pullDone   time.Time
	exitAt     time.Time // zero: runs until stopped
	finishedAt time.Time
	probeAt    time.Time // next readiness probe; zero: none due
	probes     int       // readiness probes run
	lastPull   struct{ reason, message string }
}

func (c *ctr) needsProbe() bool { return c.spec.ReadinessProbe != nil }

// pod is one pod the agent runs: its API object, its containers and the pod worker's schedule.
type pod struct {
	api       *v1.Pod // as the server stored it at creation
	cpod      containerstate.Pod
	ctrs      []*ctr // init containers in spec order, then regular containers
	nextSync  time.Time
	dirty     bool // some container changed since the status was last set
	terminal  bool // the pod worker terminated the pod
	finished  bool // the final status is cached
	startedAt time.Time
	last      podphase.StatusResult // the last status computed
	lastSet   v1.PodStatus          // the status the cache returned for it
}

// wake returns when the pod next has something to do.
func (p *pod) wake() time.Time {
	w := p.nextSync
	for _, c := range p.ctrs {
		for _, t := range []time.Time{c.pullDone, c.exitAt, c.probeAt} {
			if !t.IsZero() && (w.IsZero() || t.Before(w)) {
				w = t
			}
		}
	}
	return w
}

func (a *Agent) newPod(pl plan, api *v1.Pod) (*pod, error) {
	p := &pod{api: api, startedAt: a.clock.Now()}
	p.cpod = containerstate.Pod{Spec: &api.Spec, Name: api.Name, Namespace: api.Namespace, UID: api.UID}
	add := func(list []v1.Container, field string, init bool) error {
		for i := range list {
			spec := &list[i]
			m, err := containerstate.NewMachine(containerstate.DefaultOptions(), p.cpod, spec.Name)
			if err != nil {
				return err
			}
			p.ctrs = append(p.ctrs, &ctr{
				spec: spec, init: init, sidecar: containerstate.IsSidecar(spec) && init, m: m, beh: pl.behaviors[spec.Name],
				ref: &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: api.Namespace, Name: api.Name, UID: api.UID,
					FieldPath: fmt.Sprintf("%s{%s}", field, spec.Name)},
			})
		}
		return nil
	}
	if err := add(api.Spec.InitContainers, "spec.initContainers", true); err != nil {
		return nil, err
	}
	if err := add(api.Spec.Containers, "spec.containers", false); err != nil {
		return nil, err
	}
	p.nextSync = p.startedAt
	return p, nil
}

// advance runs everything of the pod that is due at now: the runtime's timed happenings (a pull
// completing, an instance exiting, a readiness probe) and, when the pod worker is due or a
// container changed, a sync of the pod. It caches the new status when something changed.
func (a *Agent) advance(ctx context.Context, p *pod, now time.Time) error {
	if p.finished {
		return nil
	}
	sync := !p.nextSync.IsZero() && !now.Before(p.nextSync)
	for _, c := range p.ctrs {
		if !c.pullDone.IsZero() && !now.Before(c.pullDone) {
			c.pullDone = time.Time{}
			ok, err := a.pulled(ctx, p, c, now)
			if err != nil {
				return err
			}
			// A failed pull fails the pod's sync: the pod worker tries again after its
			// requeue delay, so the API sees ErrImagePull until then.
			sync = sync || ok
		}
		if !c.exitAt.IsZero() && !now.Before(c.exitAt) {
			if err := a.exit(p, c, now, c.beh.exitCode); err != nil {
				return err
			}
			sync = true // the runtime's exit event makes the kubelet sync the pod at once
		}
		if !c.probeAt.IsZero() && !now.Before(c.probeAt) {
			if err := a.probe(ctx, p, c, now); err != nil {
				return err
			}
		}
	}
	if sync {
		p.nextSync = time.Time{}
		if err := a.syncPod(ctx, p, now); err != nil {
			return err
		}
	}
	if p.dirty {
		p.dirty = false
		return a.setStatus(p, now)
	}
	return nil
}

// syncPod is the pod worker's sync: start the next init container, or every regular container
// once the pod has initialized; restart what may restart, through crash-loop back-off; and
// terminate the pod when its regular containers are done for good.
func (a *Agent) syncPod(ctx context.Context, p *pod, now time.Time) error {
	if p.terminal {
		return nil
	}
	initialized := true
	for _, c := range p.ctrs {
		if !c.init {
			continue
		}
		switch {
		case c.sidecar && c.phase == ctrRunning:
			continue // a started sidecar lets the next init container start
		case !c.sidecar && c.phase == ctrExited && c.m.Status().State.Terminated != nil && c.m.Status().State.Terminated.ExitCode == 0:
			continue // a completed init container
		}
		initialized = false
		if !c.sidecar && c.phase == ctrExited && !c.m.ShouldBeRestarted() {
			return a.terminate(ctx, p, now) // a failed init container the policy does not restart
		}
		if err := a.ensureStarted(ctx, p, c, now); err != nil {
			return err
		}
		break
	}
	if !initialized {
		return nil
	}
	done := true
	for _, c := range p.ctrs {
		if c.init {
			continue
		}
		if c.phase == ctrExited && !c.m.ShouldBeRestarted() {
			continue
		}
		done = false
		if err := a.ensureStarted(ctx, p, c, now); err != nil {
			return err
		}
	}
	if done {
		return a.terminate(ctx, p, now)
	}
	return nil
}

// ensureStarted starts c unless it runs or is being pulled: through crash-loop back-off when
// an instance exited before, and through the image pull.
func (a *Agent) ensureStarted(ctx context.Context, p *pod, c *ctr, now time.Time) error {
	switch c.phase {
	case ctrRunning, ctrPulling:
		return nil
	case ctrExited:
		if !c.m.ShouldBeRestarted() {
			return nil
		}
		key := containerstate.CrashLoopKey(p.api.Name, p.api.Namespace, p.api.UID, c.spec)
		if delay, _, blocked := a.crash.CrashLoop(key, c.finishedAt, now); blocked {
			a.events.record(ctx, now, c.ref, v1.EventTypeWarning, ReasonBackOff,
				fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", c.spec.Name, p.api.Name, p.api.Namespace, p.api.UID))
			if err := a.step(p, c, containerstate.BackOffEvent(now, delay, c.spec.Name, p.api.Name, p.api.Namespace, p.api.UID)); err != nil {
				return err
			}
			a.requeue(p, now)
			return nil
		}
	}
	img := c.spec.Image
	if a.images[img] && c.spec.ImagePullPolicy != v1.PullAlways {
		a.events.record(ctx, now, c.ref, v1.EventTypeNormal, ReasonPulled,
			fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", img))
		return a.createStart(ctx, p, c, now)
	}
	key := containerstate.ImagePullKey(p.api.UID, img)
	if a.pulls.ImagePull(key, now) {
		a.events.record(ctx, now, c.ref, v1.EventTypeNormal, ReasonBackOff, fmt.Sprintf("Back-off pulling image %q", img))
		a.events.record(ctx, now, c.ref, v1.EventTypeWarning, ReasonFailed, "Error: "+containerstate.ReasonImagePullBackOff)
		if err := a.step(p, c, containerstate.PullBackOffEvent(now, img, c.lastPull.reason, c.lastPull.message)); err != nil {
			return err
		}
		a.requeue(p, now)
		return nil
	}
	a.events.record(ctx, now, c.ref, v1.EventTypeNormal, ReasonPulling, fmt.Sprintf("Pulling image %q", img))
	if err := a.step(p, c, containerstate.Event{Kind: containerstate.PullStarted, At: now}); err != nil {
		return err
	}
	// The kubelet pulls one image at a time (serializeImagePulls): a pull waits for the one
	// before it.
	start := now
	if a.pullFree.After(start) {
		start = a.pullFree
	}
	c.phase, c.pullStart, c.pullDone = ctrPulling, now, start.Add(c.beh.pullTime)
	a.pullFree = c.pullDone
	return nil
}

// pulled ends an image pull: a failure is ErrImagePull and feeds image-pull back-off; a success
// creates and starts the container at once. It reports whether the pull succeeded.
func (a *Agent) pulled(ctx context.Context, p *pod, c *ctr, now time.Time) (bool, error) {
	img := c.spec.Image
	c.phase = ctrIdle
	if c.beh.pullError != "" {
		ev := containerstate.PullErrorEvent(now, img, c.beh.pullError)
		c.lastPull.reason, c.lastPull.message = ev.Reason, ev.Message
		a.events.record(ctx, now, c.ref, v1.EventTypeWarning, ReasonFailed, fmt.Sprintf("Failed to pull image %q: %s", img, c.beh.pullError))
		a.events.record(ctx, now, c.ref, v1.EventTypeWarning, ReasonFailed, "Error: "+ev.Reason)
		a.pulls.Next(containerstate.ImagePullKey(p.api.UID, img), now, now)
		if err := a.step(p, c, ev); err != nil {
			return false, err
		}
		a.requeue(p, now)
		return false, nil
	}
	a.images[img] = true
	a.events.record(ctx, now, c.ref, v1.EventTypeNormal, ReasonPulled,
		fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.", img, c.beh.pullTime, now.Sub(c.pullStart), c.beh.imageSize))
	if err := a.step(p, c, containerstate.Event{Kind: containerstate.PullSucceeded, At: now, Image: img, ImageID: imageID(img)}); err != nil {
		return false, err
	}
	return true, a.createStart(ctx, p, c, now)
}

func imageID(img string) string { return img + "@sha256:" + fmt.Sprintf("%064x", len(img)*2654435761) }

// createStart creates and starts a new instance of c.
func (a *Agent) createStart(ctx context.Context, p *pod, c *ctr, now time.Time) error {
	c.instances++
	c.id = fmt.Sprintf("containerd://%s", hexSuffix(a.rng, 64))
	if err := a.step(p, c, containerstate.Event{Kind: containerstate.Created, At: now, ContainerID: c.id, Image: c.spec.Image, ImageID: imageID(c.spec.Image)}); err != nil {
		return err
	}
	a.events.record(ctx, now, c.ref, v1.EventTypeNormal, ReasonCreated, "Container created")
	if err := a.step(p, c, containerstate.Event{Kind: containerstate.Started, At: now, ContainerID: c.id}); err != nil {
		return err
	}
	a.events.record(ctx, now, c.ref, v1.EventTypeNormal, ReasonStarted, "Container started")
	c.phase = ctrRunning
	if c.beh.runFor > 0 {
		c.exitAt = now.Add(c.beh.runFor)
	}
	if c.needsProbe() && !c.m.Ready() {
		c.probeAt = now.Add(time.Duration(c.spec.ReadinessProbe.InitialDelaySeconds) * time.Second)
	}
	if !c.init && !p.cpod.RegularContainerCreated {
		p.cpod.RegularContainerCreated = true
		for _, o := range p.ctrs {
			if err := a.step(p, o, containerstate.Event{Kind: containerstate.PodChanged, At: now, Pod: p.cpod.PodFacts}); err != nil {
				return err
			}
		}
	}
	// The pod worker syncs again when the container is running: the next init container or
	// the regular containers may start.
	if c.init {
		p.nextSync = now
	}
	return nil
}

// exit ends the running instance of c with code.
func (a *Agent) exit(p *pod, c *ctr, now time.Time, code int32) error {
	c.exitAt, c.probeAt = time.Time{}, time.Time{}
	c.phase, c.finishedAt = ctrExited, now
	return a.step(p, c, containerstate.ExitedEvent(now, c.id, code))
}

// probe runs one readiness probe of c.
func (a *Agent) probe(ctx context.Context, p *pod, c *ctr, now time.Time) error {
	c.probes++
	if c.probes <= c.beh.failingProbes {
		a.events.record(ctx, now, c.ref, v1.EventTypeWarning, ReasonUnhealthy, "Readiness probe failed: HTTP probe failed with statuscode: 503")
		c.probeAt = now.Add(time.Duration(c.spec.ReadinessProbe.PeriodSeconds) * time.Second)
		return a.step(p, c, containerstate.Event{Kind: containerstate.ReadinessProbe, At: now, Result: containerstate.ProbeFailure})
	}
	c.probeAt = time.Time{} // healthy from now on
	return a.step(p, c, containerstate.Event{Kind: containerstate.ReadinessProbe, At: now, Result: containerstate.ProbeSuccess})
}

// terminate stops a pod whose regular containers are done for good: the kubelet stops its
// sidecars (Killing), then the pod is terminal and its final status is cached.
func (a *Agent) terminate(ctx context.Context, p *pod, now time.Time) error {
	for i := len(p.ctrs) - 1; i >= 0; i-- {
		c := p.ctrs[i]
		if c.phase != ctrRunning {
			continue
		}
		a.events.record(ctx, now, c.ref, v1.EventTypeNormal, ReasonKilling, "Stopping container "+c.spec.Name)
		if err := a.exit(p, c, now, 0); err != nil {
			return err
		}
	}
	p.terminal = true
	p.dirty = true
	return nil
}

func (a *Agent) step(p *pod, c *ctr, ev containerstate.Event) error {
	if err := c.m.Step(ev); err != nil {
		return fmt.Errorf("agent: pod %s/%s: %w", p.api.Namespace, p.api.Name, err)
	}
	p.dirty = true
	return nil
}

// requeue makes the pod worker sync p again after a sync error.
func (a *Agent) requeue(p *pod, now time.Time) {
	d := errorRequeue + time.Duration(a.rng.Int64N(int64(errorRequeue/2))).Truncate(100*time.Millisecond)
	p.nextSync = now.Add(d)
}

// setStatus computes the pod's status with podphase from its container machines and caches it.
func (a *Agent) setStatus(p *pod, now time.Time) error {
	var inits, regular []v1.ContainerStatus
	for _, c := range p.ctrs {
		if c.init {
			inits = append(inits, c.m.Status())
		} else {
			regular = append(regular, c.m.Status())
		}
	}
	var old *v1.PodStatus
	if cached, ok := a.cache.GetPodStatus(p.api.UID); ok {
		old = &cached
	}
	res, err := a.phase.GenerateStatus(podphase.StatusInput{
		Input: podphase.Input{Pod: p.api, Terminal: p.terminal},
		Old:   old, InitContainerStatuses: inits, ContainerStatuses: regular, Now: now,
	})
	if err != nil {
		return fmt.Errorf("agent: pod %s/%s: %w", p.api.Namespace, p.api.Name, err)
	}
	a.stats.StatusesSet++
	set, stored, err := a.cache.SetPodStatus(p.api, res.Status, now)
	if err != nil {
		return fmt.Errorf("agent: pod %s/%s: %w", p.api.Namespace, p.api.Name, err)
	}
	if stored {
		a.stats.Versions++
	}
	p.last, p.lastSet = res, set
	if p.terminal {
		if err := a.cache.TerminatePod(p.api, now); err != nil {
			return fmt.Errorf("agent: pod %s/%s: %w", p.api.Namespace, p.api.Name, err)
		}
		a.stats.Versions++
		p.finished = true
		p.lastSet, _ = a.cache.GetPodStatus(p.api.UID)
	}
	return nil
}
