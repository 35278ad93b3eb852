package cri

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

// Runtime is the runtime service of the CRI (runtimeapi.RuntimeServiceServer)
// for a kubelet, and through Images its image service: it keeps sandboxes,
// containers and images in memory and makes every container behave as
// simruntime's Behaviour for it says (see the package doc). Use New; the
// zero value is not usable. A Runtime is safe for concurrent use: the gRPC
// server calls it from many goroutines.
type Runtime struct {
	runtimeapi.UnimplementedRuntimeServiceServer

	opts   Options
	clock  clock.Clock
	log    logr.Logger
	idBase string
	images *ImageService

	mu         sync.Mutex
	pool       ipPool
	pods       map[string]*podEntry // by pod UID
	sandboxes  map[string]*sandbox
	containers map[string]*container
	store      map[string]*imageRecord // by image ID
	ids        int
}

// New returns a runtime with no sandboxes, containers or images. Options
// out of range return an *OptionError.
func New(opts Options) (*Runtime, error) {
	prefix, err := opts.validate()
	if err != nil {
		return nil, err
	}
	r := &Runtime{
		opts:       opts,
		clock:      opts.Clock,
		log:        opts.Logger,
		pool:       newIPPool(prefix),
		pods:       map[string]*podEntry{},
		sandboxes:  map[string]*sandbox{},
		containers: map[string]*container{},
		store:      map[string]*imageRecord{},
	}
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	if opts.Token != "" {
		r.idBase = opts.Token + "-"
	}
	r.images = &ImageService{rt: r}
	return r, nil
}

// Images returns the image service that shares the runtime's image store.
func (r *Runtime) Images() *ImageService { return r.images }

// Serve serves the runtime and image services over gRPC on l until ctx
// ends, then stops the server, cancelling the calls still running, and
// returns once every call has returned. It returns the error that ended
// serving early, or nil when ctx ended it. It closes l.
func (r *Runtime) Serve(ctx context.Context, l net.Listener) error {
	s := grpc.NewServer(grpc.WaitForHandlers(true))
	runtimeapi.RegisterRuntimeServiceServer(s, r)
	runtimeapi.RegisterImageServiceServer(s, r.images)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	select {
	case <-ctx.Done():
		s.Stop()
		<-done
		return nil
	case err := <-done:
		s.Stop()
		return err
	}
}

// podEntry is what the runtime knows of one pod, shared by its sandboxes.
type podEntry struct {
	uid        string
	pod        *v1.Pod // nil when the lookup failed
	behaviours simruntime.Behaviours
	pulls      map[string]int // pulls so far, by container name
	sandboxes  int
}

// behaviour returns container name's behaviour: its annotation's, else
// simruntime's default for its kind.
func (p *podEntry) behaviour(name string) simruntime.Behaviour {
	if b, ok := p.behaviours[name]; ok {
		return b
	}
	return simruntime.DefaultBehaviour(regularInit(p.pod, name))
}

type sandbox struct {
	id      string
	seq     int // creation order
	pod     *podEntry
	config  *runtimeapi.PodSandboxConfig
	handler string
	created time.Time
	ready   bool
	host    bool
	ip      netip.Addr // the zero Addr: none
}

type container struct {
	id       string
	seq      int // creation order
	sb       *sandbox
	config   *runtimeapi.ContainerConfig
	image    *imageRecord // nil when the image is not in the store
	logPath  string
	b        simruntime.Behaviour
	spec     *v1.Container // nil when the pod is not known
	created  time.Time
	started  time.Time // zero until started
	exitAt   time.Time // zero while it has no exit ahead
	exitCode int32
	removed  bool
	updated  *runtimeapi.LinuxContainerResources // the last UpdateContainerResources
	hooks    int                                 // timeout-0 execs so far
	changed  chan struct{}                       // closed when exitAt or removed changes
}

// state is the container's CRI state at now.
func (c *container) state(now time.Time) runtimeapi.ContainerState {
	switch {
	case c.started.IsZero():
		return runtimeapi.ContainerState_CONTAINER_CREATED
	case !c.exitAt.IsZero() && !now.Before(c.exitAt):
		return runtimeapi.ContainerState_CONTAINER_EXITED
	}
	return runtimeapi.ContainerState_CONTAINER_RUNNING
}

// exit makes the container exit at at with code, unless it exits earlier
// already. Only for a started container.
func (c *container) exit(at time.Time, code int32) {
	if !c.exitAt.IsZero() && !at.Before(c.exitAt) {
		return
	}
	c.exitAt, c.exitCode = at, code
	c.notify()
}

func (c *container) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// waitFor blocks until until, or until the container has exited or is
// removed, or ctx ends. It reports whether the container ended first.
// r.mu must not be held.
func (r *Runtime) waitFor(ctx context.Context, c *container, until time.Time) (ended bool, err error) {
	for {
		r.mu.Lock()
		now := r.clock.Now()
		if c.removed || c.state(now) == runtimeapi.ContainerState_CONTAINER_EXITED {
			r.mu.Unlock()
			return true, nil
		}
		if !now.Before(until) {
			r.mu.Unlock()
			return false, nil
		}
		wake := until
		if !c.exitAt.IsZero() && c.exitAt.Before(wake) {
			wake = c.exitAt
		}
		changed := c.changed
		r.mu.Unlock()
		if err := r.sleep(ctx, wake.Sub(now), changed); err != nil {
			return false, err
		}
	}
}

// sleep waits d on the runtime's clock, or until wake is closed, or ctx
// ends (its error, as a gRPC status).
func (r *Runtime) sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-wake:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// newID returns an ID no other sandbox or container of the runtime has,
// and its sequence number.
// r.mu must be held.
func (r *Runtime) newID(name string) (string, int) {
	r.ids++
	return r.idBase + name + "-" + strconv.Itoa(r.ids), r.ids
}

// ns turns a time into the nanoseconds the CRI reports; zero stays 0.
func ns(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func notFound(kind, id string) error {
	return status.Errorf(codes.NotFound, "an error occurred when try to find %s %q: not found", kind, id)
}

// errNoIP is returned by RunPodSandbox when the pod CIDR is used up.
var errNoIP = errors.New("no IP addresses available in range")

// copyMap returns a copy of m; nil stays nil.
func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// matchLabels reports whether labels has every pair of selector.
func matchLabels(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
