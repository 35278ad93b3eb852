package podlifecycle

import (
	"maps"
	"reflect"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podphase"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxInstances is how many instances of one container name the machine
// keeps: the newest, the previous one (for the status's lastState) and the
// one before (the back-off reference of a restart after a kill).
const maxInstances = 3

// inst is one runtime instance of a container, as the relist sees it.
type inst struct {
	id                         string
	state                      containerstate.RuntimeState
	created, started, finished time.Time
	exitCode                   int32
	reason, message            string
	image                      string
	imageRef                   string
	resources                  *containerstate.ActuatedResources // the runtime's, a copy
	user                       *v1.ContainerUser                 // the runtime's, a copy
	restartCount               int32
	sandbox                    uint32 // the sandbox attempt it was created in
	unknownSince               time.Time
	probes                     [3]probeState // by Probe - 1
	// shownStopped: a status generated since the instance stopped shows
	// it so: the probe workers read that status (section 6, step 5).
	shownStopped bool
	// shownRunning: when a status first showed it running, so that the
	// probe workers could see its container ID (section 6, step 3).
	shownRunning time.Time
	kill         killState
	removing     bool // RemoveContainer issued
}

// ctr is one container of the spec and the machine's view of it.
type ctr struct {
	name    string
	kind    containerstate.Kind
	index   int // index in its spec list
	spec    *v1.Container
	sidecar bool
	insts   []inst // newest first

	// readyFrom is when the readiness worker's ticker last restarted: a
	// status that finds the container started and not ready asks for a
	// run at once, which restarts it (containerstate.md section 9).
	readyFrom time.Time

	startErr    containerstate.StartError
	hasStartErr bool
	lastPull    containerstate.StartError // the last pull error, for ImagePullBackOff messages
	// inFlight: a PullImage or StartContainer was issued and not answered.
	inFlight bool
	// postStart: the postStart hook of the start issued last has not
	// answered; the kubelet's sync waits for it.
	postStart bool
	// busyAtPlan: inFlight when the plan under way was decided; its start
	// counts as done for that plan, even once answered (startPhase).
	busyAtPlan bool
	// startRC is the restart count of the start issued last.
	startRC int32
	// purgedRC is the restart count after the newest instance purged for a
	// new sandbox (hasPurgedRC): the kubelet's starts in the sync that
	// purged read the restart count from the status it began with.
	purgedRC    int32
	hasPurgedRC bool
	// purgedRef is the finishedAt of the newest exited instance purged, the
	// crash-loop back-off reference of the same starts (zero: none).
	purgedRef time.Time
	// restartAfterKill: the sync under way killed the container and starts
	// it again once it stopped, with back-off against backoffRef, the
	// newest instance that had exited when the sync began (4.2 step 1).
	// It holds for that sync only (endCont).
	restartAfterKill bool
	backoffRef       time.Time
	// removedByReset: the instances were removed by a RestartAllContainers
	// reset; the next start is not backed off (4.4).
	removedByReset bool
	everStarted    bool // ephemeral containers start once

	// fieldPath is the field path of the container's events.
	fieldPath string
	// crashKey is the crash-loop back-off key of the spec crashKeySpec,
	// which a spec with the same name, image and resources shares.
	crashKey     string
	crashKeySpec *v1.Container
	// msgs are the container's event messages built before, for the next
	// event of the same text.
	msgs ctrMessages
	// settled: the container's last status conversion gave its old status
	// again; reusable: the one under way can take it as it is; content
	// numbers the status each statusBuf holds of it (markReusable).
	settled, reusable bool
	content           [2]uint64
	// inputChanged: its genInput differs from the last generation's.
	inputChanged bool
	// spare is the state and last-state memory its status left in each
	// statusBuf (ctr.lend).
	spare [2][2]v1.ContainerState
}

func newCtr(name string, kind containerstate.Kind, index int, sidecar bool) ctr {
	return ctr{name: name, kind: kind, index: index, sidecar: sidecar, fieldPath: FieldPath(kind, name)}
}

// sandbox is the newest sandbox.
type sandbox struct {
	attempt  uint32
	exists   bool // a sandbox was ever asked for
	ready    bool
	ip       string
	creating bool   // CreateSandbox in flight
	pending  uint32 // its attempt
	stopping bool   // KillSandbox in flight
	// termStopped: the termination's KillSandbox was issued.
	termStopped bool
	changed     bool // SandboxChanged recorded for the current recreation
	// readyAt is the machine's sync count when the sandbox last turned
	// ready: the sync after it is the rest of the kubelet's sync that made
	// the sandbox, which the relist that finds the sandbox follows.
	readyAt uint64
}

// Machine is one pod on one node (spec/podlifecycle.md). Use New; the
// methods of the zero value return ErrNotInitialized. A Machine is not
// safe for concurrent use: it has one owner, like raft's RawNode.
type Machine struct {
	opts   Options
	csOpts containerstate.Options
	crash  *containerstate.Backoff
	pulls  *containerstate.Backoff

	uid       types.UID
	name, ns  string
	pod       *v1.Pod // the pod of the current step
	spec      *v1.PodSpec
	ctrs      []ctr // init, regular, ephemeral, in spec order
	nInit     int
	nRegular  int
	sb        sandbox
	images    map[string]bool // images known present on the node
	last      time.Time       // the latest accepted time
	started   bool            // a step ran
	startTime time.Time       // the first status write (status.startTime)
	// workers is when the pod's probe workers started (its first sync):
	// their tickers run from then (section 6).
	workers time.Time

	state      WorkerState
	lastStatus *v1.PodStatus // &lastBuf.st, or nil before the first status
	// lastBuf and spare are the storage of the last status and of the next
	// one generated (statusBuf).
	lastBuf, spare *statusBuf
	// genIn are the containers' inputs of the last generation (of the one
	// under way during it); genKey is the rest of its inputs, and genValid
	// says that it gave the last status again without stamping a condition
	// with its time, so the same inputs give it once more.
	genIn      []genInput
	genKey     genKey
	genValid   bool
	contentSeq uint64            // numbers the container statuses converted (ctr.content)
	noSkip     bool              // tests: generate every time
	skipped    uint64            // tests: generations skipped
	generated  uint64            // tests: generations carried out
	converted  uint64            // tests: init and regular container statuses converted
	copied     uint64            // tests: settled statuses copied into the other buffer
	evict      podphase.Eviction // the deadline's, handed to podphase
	cg         podphase.PodCgroup
	cgPod      *v1.Pod   // the pod cg was computed for
	syncAt     time.Time // next full sync (requeue, back-off, deadline, kill timers)
	dirty      bool
	podSig     podSig
	override   int64  // the effective grace of a deletion (7.2); 0 none
	pendingErr bool   // the previous sync had an error (requeue)
	nsync      uint64 // syncs so far
	marked     bool   // AllContainersRestarting was True at the start of the sync (3.2)

	plan plan
	// prog is how far the sync has carried plan out.
	prog progress
	// cont: the sync of plan waits for its kills; resume carries out the
	// rest of it (section 4.1).
	cont bool
	// hookKilled is the instance killed for a postStart hook that failed
	// after running across a relist; relistAt is the sync the relist
	// after the one that found it exited makes (rule 4.5).
	hookKilled string
	relistAt   time.Time
	// heldUpdate: a change came in while the sync under way waited on a
	// call (syncBlocked), which the kubelet's pod worker holds as its
	// pending update (rule 4.5); sandboxBlocked is when a sync that made
	// the sandbox began to wait: a relist during the wait finds the
	// sandbox, which is such a change.
	heldUpdate     bool
	sandboxBlocked time.Time
	scratch        []string // IDs created within one batch, for validation
	implied        []int    // indexes of a batch's observations whose creation is implied
	// retired maps every instance the machine knew and no longer keeps
	// (pushed out of its window, removed, purged with a lost sandbox) to
	// its container's name, so that late observations of it are accepted
	// and ignored for the pod's whole life (docs/conventions.md section 5).
	retired map[string]string
	stats   Stats
}

// Stats counts what the machine accepted and did not act on, by reason
// (docs/conventions.md section 5: nothing lost silently).
type Stats struct {
	// RetiredObservations counts observations about an instance the
	// machine once knew and no longer keeps: a runtime legitimately
	// reports late results for old instances (a postStart hook result
	// after a RestartAllContainers reset removed its instance, a preStop
	// result or an exit after newer instances pushed it out of the
	// machine's window). They are accepted and ignored; the other
	// observations of their batch are applied.
	RetiredObservations uint64
}

// Stats returns the machine's counters; the zero Stats for a nil or zero
// Machine.
func (m *Machine) Stats() Stats {
	if m == nil {
		return Stats{}
	}
	return m.stats
}

// podSig is what of the API pod the machine reads besides the spec; a
// change of it is an update that syncs at once. The resourceVersion is not
// in it: a status write coming back from a watch is no spec update.
type podSig struct {
	generation int64
	deleting   bool
	delGrace   int64
	deadline   int64
	nEph       int
}

func signature(pod *v1.Pod) podSig {
	s := podSig{generation: pod.Generation, deleting: pod.DeletionTimestamp != nil,
		delGrace: -1, deadline: -1, nEph: len(pod.Spec.EphemeralContainers)}
	if pod.DeletionGracePeriodSeconds != nil {
		s.delGrace = *pod.DeletionGracePeriodSeconds
	}
	if pod.Spec.ActiveDeadlineSeconds != nil {
		s.deadline = *pod.Spec.ActiveDeadlineSeconds
	}
	return s
}

// Changed reports whether pod is an update of old that makes the kubelet
// sync the pod at once: its spec, labels, annotations, deletionTimestamp
// or deletionGracePeriodSeconds differ (the kubelet's pod config compares
// exactly these, spec/podlifecycle.md rule 4.5). An update of the status
// alone (a status write coming back from a watch, a new resourceVersion) is
// no change: the kubelet takes the newer object and does not sync. A nil
// old or pod is a change unless both are nil.
func Changed(old, pod *v1.Pod) bool {
	switch {
	case old == nil || pod == nil:
		return old != pod
	case old == pod:
		return false
	}
	return !maps.Equal(old.Labels, pod.Labels) || !maps.Equal(old.Annotations, pod.Annotations) ||
		!old.DeletionTimestamp.Equal(pod.DeletionTimestamp) ||
		!equalInt64Ptr(old.DeletionGracePeriodSeconds, pod.DeletionGracePeriodSeconds) ||
		!reflect.DeepEqual(old.Spec, pod.Spec)
}

func equalInt64Ptr(a, b *int64) bool {
	return a == b || a != nil && b != nil && *a == *b
}

// New returns a machine for pod, or an error: an *OptionError for options
// out of range, an *InputError for a nil pod, a pod without a UID or with
// duplicate container names.
func New(opts Options, pod *v1.Pod) (*Machine, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if err := checkPod(pod, ""); err != nil {
		return nil, err
	}
	cfg, _ := opts.CrashLoop.BackoffOptions()
	crash, _ := containerstate.NewBackoff(cfg)
	pulls, _ := containerstate.NewBackoff(opts.ImagePullBackoff)
	m := &Machine{
		opts: opts, csOpts: containerstate.Options{Features: opts.Features, Version: opts.Version},
		crash: crash, pulls: pulls,
		uid: pod.UID, name: pod.Name, ns: pod.Namespace,
		images: map[string]bool{},
	}
	m.adopt(pod)
	m.dirty = true
	return m, nil
}

// adopt takes pod as the current pod: it points the containers at its spec
// and adds ephemeral containers the spec gained.
func (m *Machine) adopt(pod *v1.Pod) {
	m.pod, m.spec = pod, &pod.Spec
	s := &pod.Spec
	if m.ctrs == nil {
		m.nInit, m.nRegular = len(s.InitContainers), len(s.Containers)
		m.ctrs = make([]ctr, 0, len(s.InitContainers)+len(s.Containers)+len(s.EphemeralContainers))
		for i := range s.InitContainers {
			c := &s.InitContainers[i]
			m.ctrs = append(m.ctrs, newCtr(c.Name, containerstate.Init, i, containerstate.IsSidecar(c)))
		}
		for i := range s.Containers {
			m.ctrs = append(m.ctrs, newCtr(s.Containers[i].Name, containerstate.Regular, i, false))
		}
	}
	for i := len(m.ctrs) - m.nInit - m.nRegular; i < len(s.EphemeralContainers); i++ {
		m.ctrs = append(m.ctrs, newCtr(s.EphemeralContainers[i].Name, containerstate.Ephemeral, i, false))
	}
	for i := range m.ctrs {
		c := &m.ctrs[i]
		switch c.kind {
		case containerstate.Init:
			if c.index < len(s.InitContainers) {
				c.spec = &s.InitContainers[c.index]
			}
		case containerstate.Regular:
			if c.index < len(s.Containers) {
				c.spec = &s.Containers[c.index]
			}
		case containerstate.Ephemeral:
			if c.index < len(s.EphemeralContainers) {
				c.spec = (*v1.Container)(&s.EphemeralContainers[c.index].EphemeralContainerCommon)
			}
		}
	}
}

// sameContainers reports whether pod has the containers the machine has,
// by name, kind and order (ephemeral containers may only be added).
func (m *Machine) sameContainers(pod *v1.Pod) bool {
	s := &pod.Spec
	if len(s.InitContainers) != m.nInit || len(s.Containers) != m.nRegular ||
		len(s.EphemeralContainers) < len(m.ctrs)-m.nInit-m.nRegular {
		return false
	}
	for i := range m.ctrs {
		c := &m.ctrs[i]
		var name string
		switch c.kind {
		case containerstate.Init:
			name = s.InitContainers[c.index].Name
		case containerstate.Regular:
			name = s.Containers[c.index].Name
		default:
			name = s.EphemeralContainers[c.index].Name
		}
		if name != c.name {
			return false
		}
	}
	return true
}

// find returns the container named name, or nil.
func (m *Machine) find(name string) *ctr {
	for i := range m.ctrs {
		if m.ctrs[i].name == name {
			return &m.ctrs[i]
		}
	}
	return nil
}

// Step is one kubelet sync at now: it applies obs to the machine's view of
// the runtime, generates the status, decides the actions and returns them.
// The returned Result's slices are new; see StepTo to reuse them.
//
// Bad input (a nil pod, another UID, duplicate or changed container names,
// an observation for a container the spec lacks or that never started, a
// time earlier than one already accepted) returns an *InputError and leaves
// the machine unchanged.
func (m *Machine) Step(now time.Time, pod *v1.Pod, obs []Observation) (Result, error) {
	var r Result
	err := m.StepTo(now, pod, obs, &r)
	return r, err
}

// StepTo is Step writing into res, whose slices are truncated and reused:
// a sync with nothing due allocates nothing. A nil res is refused.
func (m *Machine) StepTo(now time.Time, pod *v1.Pod, obs []Observation, res *Result) error {
	if m == nil || m.uid == "" {
		return ErrNotInitialized
	}
	if res == nil {
		return &InputError{Index: -1, Reason: "nil result", Err: ErrInvalidInput}
	}
	res.Reset()
	if err := m.validate(now, pod, obs); err != nil {
		res.State, res.Finished, res.NextSync = m.state, m.state >= Terminated, m.syncAt
		return err
	}
	// Accepted: from here on the machine changes.
	m.last = now
	if sig := signature(pod); !m.started || sig != m.podSig || m.pod != pod {
		if sig != m.podSig || m.started && (Changed(m.pod, pod) || m.pod != pod && podphase.ReadyConditionStale(pod)) {
			m.dirty = true
		}
		m.podSig = sig
		m.adopt(pod)
	}
	if !m.started {
		m.workers = now
	}
	m.started = true
	m.stoppedTicks(now) // before this step's observations can show in a status
	m.sightTicks(now)
	blocked, started, sandbox := m.syncBlocked(), false, false
	for i := range obs {
		started = started || obs[i].Kind == ContainerStarted
		sandbox = sandbox || obs[i].Kind == SandboxReady
		if len(m.implied) > 0 && m.implied[0] == i {
			m.implied = m.implied[1:]
			created := Observation{Kind: ContainerCreated, At: obs[i].At, Container: obs[i].Container,
				ContainerID: obs[i].ContainerID, ImageRef: obs[i].ImageRef, Resources: obs[i].Resources, User: obs[i].User}
			m.apply(now, &created, res)
		}
		m.apply(now, &obs[i], res)
	}
	if !m.relistAt.IsZero() && !now.Before(m.relistAt) {
		m.relistAt, m.dirty = time.Time{}, true
	}
	if m.state != Finished {
		// While the sync under way still waits on a pull, a start or a
		// postStart hook, the requeue, the back-off's expiry or the
		// deadline that comes is the sync right after it (rule 4.5).
		due := !now.Before(m.syncAt) && !m.syncBlocked()
		if (m.dirty && !m.syncBlocked()) || due || m.imageChanged() {
			held := blocked && !m.syncBlocked() && (m.heldUpdate ||
				!m.sandboxBlocked.IsZero() && now.Sub(m.sandboxBlocked) >= relistPeriod)
			m.sync(now, res)
			if m.dirty && m.state == Syncing && m.syncAt.After(now) {
				// A result the sync stored (a readiness worker's initial
				// Failure) syncs the pod again at once, after this one.
				m.syncAt = now
			}
			if held && started && m.state == Syncing && m.relistAt.IsZero() {
				// This sync is the pod worker's pending update, taken
				// once the blocked sync returned; the relist it waited
				// for found the containers that sync started, an event
				// that syncs the pod once more at the next relist (rule
				// 4.5, oracle case gen-161).
				m.relistAt = now.Add(relistPeriod)
			}
		}
		m.heldUpdate = m.heldUpdate || m.dirty && m.syncBlocked()
		if sandbox && m.syncBlocked() && m.sandboxBlocked.IsZero() {
			m.sandboxBlocked = now
		}
		m.probeTicks(now, res)
	}
	res.State = m.state
	res.Finished = m.state >= Terminated
	res.NextSync = m.nextWake()
	if m.state == Terminated {
		m.state = Finished
	}
	return nil
}

// imageChanged reports whether a running container's image differs from the
// spec: the only spec change that restarts a container (section 1).
func (m *Machine) imageChanged() bool {
	for i := range m.ctrs {
		c := &m.ctrs[i]
		if len(c.insts) > 0 && c.insts[0].state == containerstate.RuntimeRunning && c.spec != nil &&
			c.insts[0].image != c.spec.Image && c.kind != containerstate.Ephemeral && !c.insts[0].kill.active {
			return true
		}
	}
	return false
}

// impliesCreation reports whether an instance of container name the machine
// has not seen created answers a start it issued: the container has a pull
// or start in flight and no instance of this batch answered it yet.
func (m *Machine) impliesCreation(name string) bool {
	c := m.find(name)
	if c == nil || !c.inFlight {
		return false
	}
	for j := 0; j+1 < len(m.scratch); j += 2 {
		if m.scratch[j] == name {
			return false
		}
	}
	return true
}

// ownerOf returns the name of the container with instance id, or "".
func (m *Machine) ownerOf(id string) string {
	for i := range m.ctrs {
		for j := range m.ctrs[i].insts {
			if m.ctrs[i].insts[j].id == id {
				return m.ctrs[i].name
			}
		}
	}
	return ""
}

func specHas(s *v1.PodSpec, name string) bool {
	for i := range s.InitContainers {
		if s.InitContainers[i].Name == name {
			return true
		}
	}
	for i := range s.Containers {
		if s.Containers[i].Name == name {
			return true
		}
	}
	for i := range s.EphemeralContainers {
		if s.EphemeralContainers[i].Name == name {
			return true
		}
	}
	return false
}

// checkPod refuses a nil pod, a pod without a UID, one whose UID is not uid
// (when set) and one with duplicate or empty container names.
func checkPod(pod *v1.Pod, uid types.UID) error {
	switch {
	case pod == nil:
		return &InputError{Index: -1, Reason: "nil pod", Err: ErrInvalidInput}
	case pod.UID == "":
		return &InputError{Index: -1, Reason: "pod without a UID", Err: ErrInvalidInput}
	case uid != "" && pod.UID != uid:
		return &InputError{Index: -1, Reason: "pod UID " + string(pod.UID) + " is not the machine's " + string(uid), Err: ErrInvalidInput}
	}
	s := &pod.Spec
	name := func(k, i int) string {
		switch k {
		case 0:
			return s.InitContainers[i].Name
		case 1:
			return s.Containers[i].Name
		}
		return s.EphemeralContainers[i].Name
	}
	lens := [3]int{len(s.InitContainers), len(s.Containers), len(s.EphemeralContainers)}
	// Quadratic, but allocation-free; pods have few containers.
	for k := 0; k < 3; k++ {
		for i := 0; i < lens[k]; i++ {
			n := name(k, i)
			if n == "" {
				return &InputError{Index: -1, Reason: "container without a name", Err: ErrInvalidInput}
			}
			for k2 := 0; k2 <= k; k2++ {
				end := lens[k2]
				if k2 == k {
					end = i
				}
				for j := 0; j < end; j++ {
					if name(k2, j) == n {
						return &InputError{Index: -1, Container: n, Reason: "duplicate container name", Err: ErrInvalidInput}
					}
				}
			}
		}
	}
	return nil
}
