package statussync

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/internal/podcond"
	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/podphase"
)

// Annotations the kubelet reads to tell static and mirror pods.
const (
	// ConfigSourceAnnotation names where a pod came from; anything but
	// "api" is a static pod.
	ConfigSourceAnnotation = "kubernetes.io/config.source"
	// ConfigMirrorAnnotation marks a mirror pod: the API object of a static
	// pod.
	ConfigMirrorAnnotation = "kubernetes.io/config.mirror"
)

// IsStatic reports whether pod is a static pod (it came from a file or URL,
// not the API server).
func IsStatic(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	src, ok := pod.Annotations[ConfigSourceAnnotation]
	return ok && src != "api"
}

// IsMirror reports whether pod is a mirror pod; nil is not.
func IsMirror(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	_, ok := pod.Annotations[ConfigMirrorAnnotation]
	return ok
}

// Options configures a Cache and an Engine. Start from [DefaultOptions].
type Options struct {
	// Features are the container feature gates (the 1.37 defaults by
	// default); RestartAllContainersOnContainerExits also makes
	// AllContainersRestarting a kubelet-owned condition.
	Features containerstate.Features
	// Mirrors translates static pods to their mirror pods; nil means the
	// node has no static pods.
	Mirrors Mirrors
	// Version is the Kubernetes minor whose rules apply where no gate of
	// Features expresses the difference (docs/versions.md): before 1.34
	// PodObservedGenerationTracking is off, so status.observedGeneration is
	// the pod's generation only when the pod's status already has one (row
	// SS-V1); it is handed to podphase for the conditions the cache
	// regenerates (rows PP-V3, PP-V4). The zero Version is 1.37. A value
	// that is none of kubeversion's constants (kubeversion.Version(99)) is
	// refused by NewCache with an *OptionError matching both
	// ErrInvalidOptions and kubeversion.ErrUnsupportedVersion; the methods
	// of Options, which return no error (OwnershipOf, EqualByKubelet,
	// Merge), treat it as the zero Version.
	Version kubeversion.Version
	// SharedPods says that no one changes a pod after handing it to the
	// cache (SetPodStatus, TerminatePod) or to an Engine over it (Observe),
	// as no one may change the objects a client-go informer hands out: the
	// cache and the engine then keep the pods themselves instead of deep
	// copies, about 7 KB less memory for a typical pod. Off, the
	// default, they copy, and a caller may reuse its pods.
	SharedPods bool
}

// DefaultOptions returns the Kubernetes 1.37 defaults: [DefaultOptionsFor]
// the zero kubeversion.Version.
func DefaultOptions() Options {
	return DefaultOptionsFor(kubeversion.Default)
}

// DefaultOptionsFor returns the options of Kubernetes minor v: the feature
// gates of containerstate.DefaultFeaturesFor(v), no Mirrors, and Version v.
// A v that is none of kubeversion's constants is kept as it is, with 1.37's
// gates, so that NewCache refuses it.
func DefaultOptionsFor(v kubeversion.Version) Options {
	return Options{Features: containerstate.DefaultFeaturesFor(v), Version: v}
}

func (o Options) podphase() podphase.Options {
	return podphase.Options{Features: o.Features, Version: o.Version}
}

// observedGeneration is the status.observedGeneration the kubelet of
// o.Version stores for pod (spec section 7, docs/versions.md row SS-V1): the
// pod's generation; before 1.34, where PodObservedGenerationTracking is
// alpha and off, only when the pod's status already carries one (so that a
// value set while the gate was on is kept up to date, not cleared).
func (o Options) observedGeneration(pod *v1.Pod) int64 {
	if o.Version.AtLeast(kubeversion.V1_34) || pod.Status.ObservedGeneration != 0 {
		return pod.Generation
	}
	return 0
}

// entry is one pod's cached status. Entries are never changed once stored:
// an update stores a new one, so readers may keep a pointer without a lock.
type entry struct {
	version   uint64
	uid       types.UID
	name      string
	namespace string
	pod       *v1.Pod // metadata and spec, no status; shared by entries of one generation
	at        time.Time
	finished  bool
	static    bool
	status    v1.PodStatus // normalized
}

// Cache is the kubelet's versioned pod status cache: for each pod UID the
// newest status the node computed, with a version that goes up by one each
// time the kubelet-owned part of it really changes. An [Engine] writes it to
// the API server.
//
// A Cache is safe for simultaneous use by multiple goroutines. Time is an
// argument of every method that stamps something. Use NewCache: the zero
// value holds nothing, its mutators return ErrNotInitialized and its
// Changed channel never fires.
type Cache struct {
	opts    Options
	mu      sync.RWMutex
	pods    map[types.UID]*entry
	resize  map[types.UID]*resizeConds
	signal  chan struct{}
	scratch *scratch // SetPodStatus's storage, under mu
}

// NewCache returns an empty cache. It returns an *OptionError (wrapping
// ErrInvalidOptions) for options it refuses: a Version that is none of
// kubeversion's constants, which also matches
// kubeversion.ErrUnsupportedVersion. Every combination of feature gates
// and any Mirrors (nil: no static pods) is valid.
func NewCache(opts Options) (*Cache, error) {
	if err := opts.Version.Validate(); err != nil {
		return nil, &OptionError{Field: "Version", Value: opts.Version.String(),
			Reason: "unsupported Kubernetes version, supported are " + kubeversion.Oldest.String() + " to " + kubeversion.Newest.String(), Err: err}
	}
	return &Cache{opts: opts, pods: make(map[types.UID]*entry), signal: make(chan struct{}, 1)}, nil
}

// staticUID maps a mirror pod's UID to its static pod's, and any other UID
// to itself.
func (c *Cache) staticUID(uid types.UID) types.UID {
	if c.opts.Mirrors != nil {
		return c.opts.Mirrors.StaticUID(uid)
	}
	return uid
}

// Changed returns the cache's dirty signal: a channel with room for one
// value that receives one after any number of accepted updates. An Engine
// waits on it; a user driving SyncOnce may too.
func (c *Cache) Changed() <-chan struct{} { return c.signal }

func (c *Cache) notify() {
	select {
	case c.signal <- struct{}{}:
	default: // a signal is already pending: it covers this update too
	}
}

// Len returns the number of pods cached.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.pods)
}

// GetPodStatus returns a copy of the cached status of pod uid, and whether
// there is one. The UID of a mirror pod finds its static pod's status.
func (c *Cache) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	if c.opts.Mirrors != nil {
		uid = c.opts.Mirrors.StaticUID(uid) // a mirror UID finds its static pod
	}
	c.mu.RLock()
	e := c.pods[uid]
	c.mu.RUnlock()
	if e == nil {
		return v1.PodStatus{}, false
	}
	return *e.status.DeepCopy(), true
}

// Version returns the version of pod uid's cached status (0 when none).
func (c *Cache) Version(uid types.UID) uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.pods[uid]; e != nil {
		return e.version
	}
	return 0
}

// SetPodStatus caches status as the newest status of pod (kubelet
// SetPodStatus, spec section 7). It returns the cached status after the call
// and whether a new version was stored. The status returned is the cache's
// own, which never changes once stored: read it, do not modify it
// (GetPodStatus returns a copy). A status equal to the cached one in
// everything the kubelet owns stores nothing, unless the pod is being
// deleted, and allocates nothing: it is compared in storage the cache
// reuses, and copied only into a new version.
//
// Before storing, the status's observedGeneration is set to the pod's
// generation (and never goes down; before 1.34, see [Options.Version], only
// when pod.Status already has one), the lastTransitionTime of the kubelet's
// conditions is recomputed against the old status, startTime is kept once
// set (or set to now), and the status is normalized (see [Normalize]).
//
// It returns a [*PodError] and changes nothing for a nil pod, a pod without
// a UID, a container status whose name is not in the spec, or a container
// that was Terminated and may not restart reported as not terminated
// (wrapping the containerstate error).
func (c *Cache) SetPodStatus(pod *v1.Pod, status v1.PodStatus, now time.Time) (v1.PodStatus, bool, error) {
	if err := validPod(pod, &status); err != nil {
		return v1.PodStatus{}, false, err
	}
	if c.pods == nil {
		return v1.PodStatus{}, false, ErrNotInitialized
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scratch == nil {
		c.scratch = &scratch{}
	}
	s := c.scratch.copyOf(&status)
	s.ObservedGeneration = c.opts.observedGeneration(pod)
	changed, err := c.update(pod, s, pod.DeletionTimestamp != nil, false, now, c.scratch)
	if err != nil {
		return v1.PodStatus{}, false, err
	}
	return c.pods[pod.UID].status, changed, nil
}

// TerminatePod caches the final status of a pod the node has finished with
// (kubelet TerminatePod, spec section 7.1): every container status that could
// still look alive becomes Terminated with reason ContainerStatusUnknown and
// exit code 137 (see containerstate.TerminatedStatus), a non-terminal phase
// becomes Failed (static pods keep theirs), and the pod is marked finished,
// which lets an Engine delete it once the API shows it terminal and
// deleting. It always stores a new version.
func (c *Cache) TerminatePod(pod *v1.Pod, now time.Time) error {
	if err := validPod(pod, nil); err != nil {
		return err
	}
	if c.pods == nil {
		return ErrNotInitialized
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	base := &pod.Status
	if e := c.pods[pod.UID]; e != nil {
		base = &e.status
	}
	s := containerstate.TerminatedStatus(pod, base)
	s.Phase = podphase.TerminatedPhase(s.Phase, IsStatic(pod))
	_, err := c.update(pod, &s, true, true, now, nil)
	return err
}

// SetContainerReadiness records a readiness result for the container with
// this ID and regenerates the pod's Ready and ContainersReady conditions
// (kubelet SetContainerReadiness). An unchanged value stores nothing. It
// returns an error wrapping ErrNotCached for a pod with no cached status and
// ErrUnknownContainer for an ID no regular or init container status has.
func (c *Cache) SetContainerReadiness(uid types.UID, containerID string, ready bool, now time.Time) (bool, error) {
	return c.setContainer(uid, containerID, now, func(cs *v1.ContainerStatus) bool {
		if cs.Ready == ready {
			return false
		}
		cs.Ready = ready
		return true
	}, true)
}

// SetContainerStartup records a startup-probe result for the container with
// this ID (kubelet SetContainerStartup). Only an equal, non-nil started is
// "unchanged": nil to false is a change. Errors as for
// SetContainerReadiness.
func (c *Cache) SetContainerStartup(uid types.UID, containerID string, started bool, now time.Time) (bool, error) {
	return c.setContainer(uid, containerID, now, func(cs *v1.ContainerStatus) bool {
		if cs.Started != nil && *cs.Started == started {
			return false
		}
		cs.Started = &started
		return true
	}, false)
}

func (c *Cache) setContainer(uid types.UID, containerID string, now time.Time, set func(*v1.ContainerStatus) bool, regenerate bool) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.pods[uid]
	if e == nil {
		return false, &PodError{UID: uid, Err: ErrNotCached}
	}
	s := e.status.DeepCopy()
	cs := findByID(s.ContainerStatuses, containerID)
	if cs == nil {
		cs = findByID(s.InitContainerStatuses, containerID)
	}
	if cs == nil || containerID == "" {
		return false, &PodError{Namespace: e.namespace, Name: e.name, UID: uid, Container: containerID, Err: ErrUnknownContainer}
	}
	if !set(cs) {
		return false, nil
	}
	if regenerate {
		pod := &v1.Pod{ObjectMeta: e.pod.ObjectMeta, Spec: e.pod.Spec, Status: v1.PodStatus{Conditions: s.Conditions}}
		conds, err := c.opts.podphase().Conditions(podphase.ConditionsInput{Pod: pod, Status: s, Old: &e.status, Now: now})
		if err != nil {
			return false, &PodError{Namespace: e.namespace, Name: e.name, UID: uid, Err: err}
		}
		for _, t := range [...]v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
			if nc := podcond.Find(conds, t); nc != nil {
				s.Conditions = podcond.ReplaceOrAppend(s.Conditions, *nc)
			}
		}
	}
	return c.update(e.pod, s, false, false, now, nil)
}

func findByID(list []v1.ContainerStatus, id string) *v1.ContainerStatus {
	for i := range list {
		if list[i].ContainerID == id {
			return &list[i]
		}
	}
	return nil
}

// RemoveOrphans forgets every pod whose UID keep does not hold, and returns
// how many it forgot.
func (c *Cache) RemoveOrphans(keep map[types.UID]bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for uid := range c.pods {
		if !keep[uid] {
			delete(c.pods, uid)
			n++
		}
	}
	for uid := range c.resize {
		if !keep[uid] {
			delete(c.resize, uid)
		}
	}
	return n
}

// Forget forgets pod uid, the pod the API server no longer has (the
// kubelet's status manager drops such a pod's status with its orphans), and
// reports whether the cache held it. An Engine then syncs nothing more for
// it. The UID of a mirror pod forgets its static pod's status.
func (c *Cache) Forget(uid types.UID) bool {
	if c.pods == nil {
		return false
	}
	uid = c.staticUID(uid)
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pods[uid]
	delete(c.pods, uid)
	delete(c.resize, uid)
	return ok
}

// remove forgets pod uid if its entry is still e (nil: whatever it is).
func (c *Cache) remove(uid types.UID, e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.pods[uid]; cur != nil && (e == nil || cur == e) {
		delete(c.pods, uid)
		delete(c.resize, uid)
	}
}

// synced clears the latency clock of pod uid once its version v reached the
// API, so that the next change measures from itself.
func (c *Cache) synced(uid types.UID, v uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.pods[uid]; e != nil && e.version == v && !e.at.IsZero() {
		n := *e
		n.at = time.Time{}
		c.pods[uid] = &n
	}
}

// setTime returns a pointer to t: storage holding it, or new memory when
// storage is nil.
func setTime(storage *metav1.Time, t metav1.Time) *metav1.Time {
	if storage == nil {
		storage = new(metav1.Time)
	}
	*storage = t
	return storage
}

func validPod(pod *v1.Pod, status *v1.PodStatus) error {
	if pod == nil {
		return &PodError{Err: ErrNilPod}
	}
	if pod.UID == "" {
		return &PodError{Namespace: pod.Namespace, Name: pod.Name, Err: ErrNoUID}
	}
	if status == nil {
		return nil
	}
	for _, l := range [...]struct {
		statuses []v1.ContainerStatus
		has      func(string) bool
	}{
		{status.InitContainerStatuses, func(n string) bool { return hasContainer(pod.Spec.InitContainers, n) }},
		{status.ContainerStatuses, func(n string) bool { return hasContainer(pod.Spec.Containers, n) }},
		{status.EphemeralContainerStatuses, func(n string) bool { return hasEphemeral(pod.Spec.EphemeralContainers, n) }},
	} {
		for i := range l.statuses {
			if !l.has(l.statuses[i].Name) {
				return &PodError{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Container: l.statuses[i].Name, Err: ErrUnknownContainer}
			}
		}
	}
	return nil
}

func hasContainer(list []v1.Container, name string) bool {
	for i := range list {
		if list[i].Name == name {
			return true
		}
	}
	return false
}

func hasEphemeral(list []v1.EphemeralContainer, name string) bool {
	for i := range list {
		if list[i].Name == name {
			return true
		}
	}
	return false
}

// update is the kubelet's updateStatusInternal (spec section 6). The caller
// holds the write lock; s is the caller's to give away, or, with sc, the
// scratch status of sc, whose storage the times and volume health then go
// into and of which a new version stores a copy.
func (c *Cache) update(pod *v1.Pod, s *v1.PodStatus, force, finished bool, now time.Time, sc *scratch) (bool, error) {
	cached := c.pods[pod.UID]
	old := &pod.Status
	static := IsStatic(pod)
	if cached != nil {
		old = &cached.status
		if cached.finished && !finished && !static {
			finished = true // a finished pod stays finished
		}
	}
	if err := c.opts.Features.CheckStatusTransition(&pod.Spec, old, s); err != nil {
		return false, &PodError{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Err: err}
	}
	updateTransitionTimes(old, s, now)
	var start *metav1.Time // storage of the start time
	if sc != nil {
		start = &sc.start
	}
	switch {
	case old.StartTime != nil && !old.StartTime.IsZero():
		s.StartTime = setTime(start, *old.StartTime)
	case s.StartTime == nil || s.StartTime.IsZero():
		s.StartTime = setTime(start, metav1.NewTime(now))
	}
	if len(old.VolumeHealth) > 0 && len(s.VolumeHealth) == 0 {
		if sc != nil {
			sc.health = append(sc.health[:0], old.VolumeHealth...)
			s.VolumeHealth = sc.health
		} else {
			s.VolumeHealth = append([]v1.PodVolumeHealth(nil), old.VolumeHealth...)
		}
	}
	if old.ObservedGeneration > s.ObservedGeneration {
		s.ObservedGeneration = old.ObservedGeneration
	}
	normalize(&pod.Spec, s, start)

	if cached != nil && !force && c.opts.EqualByKubelet(&cached.status, s) {
		return false, nil
	}
	if sc != nil {
		s = s.DeepCopy() // the scratch stays the cache's
	}
	e := &entry{uid: pod.UID, name: pod.Name, namespace: pod.Namespace, finished: finished, static: static, status: *s, at: now}
	if cached != nil {
		e.version = cached.version + 1
		if !cached.at.IsZero() {
			e.at = cached.at
		}
		if cached.pod.Generation == pod.Generation && cached.pod.DeletionTimestamp.Equal(pod.DeletionTimestamp) {
			e.pod = cached.pod
		}
	} else {
		e.version = 1
	}
	switch {
	case c.opts.SharedPods:
		e.pod = pod // the status it carries is never read: the entry's is
	case e.pod == nil:
		e.pod = &v1.Pod{ObjectMeta: *pod.ObjectMeta.DeepCopy(), Spec: *pod.Spec.DeepCopy()}
	}
	c.pods[pod.UID] = e
	c.notify()
	return true, nil
}
