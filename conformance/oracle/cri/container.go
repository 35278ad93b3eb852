package cri

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CreateContainer makes a container in a ready sandbox, in state CREATED,
// with the behaviour of its name (ContainerConfig.Metadata.Name). Like
// containerd it makes the (empty) log file the kubelet names, so that the
// kubelet finds a log to read a FallbackToLogsOnError termination message
// from.
func (r *Runtime) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	name := cfg.GetMetadata().GetName()
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "container config has no name")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	sb := r.sandboxes[req.GetPodSandboxId()]
	if sb == nil {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	if !sb.ready {
		// simruntime's message for a start behind a sandbox that stopped.
		return nil, status.Errorf(codes.Unknown, "failed to create containerd container: sandbox %d is not ready", sb.config.GetMetadata().GetAttempt())
	}
	img := r.findImage(cfg.GetImage().GetImage())
	if img == nil {
		return nil, status.Errorf(codes.NotFound, "failed to resolve image %q: not found", cfg.GetImage().GetImage())
	}
	spec, _ := specOf(sb.pod.pod, name)
	c := &container{
		sb:      sb,
		config:  cfg,
		image:   img,
		b:       sb.pod.behaviour(name),
		spec:    spec,
		created: r.clock.Now(),
		changed: make(chan struct{}),
	}
	c.id, c.seq = r.newID(name)
	if dir := sb.config.GetLogDirectory(); dir != "" && cfg.GetLogPath() != "" {
		c.logPath = filepath.Join(dir, cfg.GetLogPath())
		if err := touch(c.logPath); err != nil {
			r.log.Info("cannot make the container log", "path", c.logPath, "err", err)
		}
	}
	r.containers[c.id] = c
	r.log.V(2).Info("container created", "id", c.id, "sandbox", sb.id, "behaviour", c.b.String())
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

func touch(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	return f.Close()
}

// StartContainer starts a created container: from now it runs, and exits
// by itself after its behaviour's run time if it has one.
func (r *Runtime) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.containers[req.GetContainerId()]
	if c == nil {
		return nil, notFound("container", req.GetContainerId())
	}
	now := r.clock.Now()
	if st := c.state(now); st != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.Unknown, "container is in %s state", st)
	}
	if !c.sb.ready {
		return nil, status.Errorf(codes.Unknown, "failed to start containerd task: sandbox %q is not ready", c.sb.id)
	}
	c.started = now
	if c.b.Exits {
		c.exit(now.Add(c.b.Run), c.b.ExitCode)
	}
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer stops a running container as containerd does and returns
// once it has exited: SIGTERM, then SIGKILL after the timeout. A container
// that honours SIGTERM exits at once with 143; one that ignores it for d
// (ignore-sigterm) exits after min(timeout, d): with 143 when d is shorter,
// else with SIGKILL's 137. A container that exits by itself earlier exits
// then, with its own code. Stopping a container that is not running does
// nothing.
func (r *Runtime) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	r.mu.Lock()
	c := r.containers[req.GetContainerId()]
	if c == nil {
		r.mu.Unlock()
		return nil, notFound("container", req.GetContainerId())
	}
	now := r.clock.Now()
	if c.state(now) != runtimeapi.ContainerState_CONTAINER_RUNNING {
		r.mu.Unlock()
		return &runtimeapi.StopContainerResponse{}, nil
	}
	grace := time.Duration(max(req.GetTimeout(), 0)) * time.Second
	at, code := now.Add(grace), int32(137)
	if c.b.IgnoreSigterm < grace {
		at, code = now.Add(c.b.IgnoreSigterm), 143
	}
	c.exit(at, code)
	until := c.exitAt
	r.mu.Unlock()
	if _, err := r.waitFor(ctx, c, until); err != nil {
		return nil, err
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer removes a container, running or not (the CRI asks for a
// forced removal). Removing one that is gone succeeds.
func (r *Runtime) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.containers[req.GetContainerId()]; c != nil {
		r.remove(c.id, c)
	}
	return &runtimeapi.RemoveContainerResponse{}, nil
}

// remove drops a container and wakes whoever waits on it. r.mu must be
// held.
func (r *Runtime) remove(id string, c *container) {
	delete(r.containers, id)
	c.removed = true
	c.notify()
	if c.logPath != "" {
		_ = os.Remove(c.logPath)
	}
}

// ListContainers lists the containers that pass the filter, oldest first.
func (r *Runtime) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{Containers: r.listContainers(req.GetFilter())}, nil
}

// StreamContainers sends what ListContainers lists, in one message.
func (r *Runtime) StreamContainers(req *runtimeapi.StreamContainersRequest, s grpc.ServerStreamingServer[runtimeapi.StreamContainersResponse]) error {
	return s.Send(&runtimeapi.StreamContainersResponse{Containers: r.listContainers(req.GetFilter())})
}

func (r *Runtime) listContainers(f *runtimeapi.ContainerFilter) []*runtimeapi.Container {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	var out []*runtimeapi.Container
	for _, c := range r.sortedContainers() {
		st := c.state(now)
		switch {
		case f.GetId() != "" && f.GetId() != c.id:
			continue
		case f.GetPodSandboxId() != "" && f.GetPodSandboxId() != c.sb.id:
			continue
		case f.GetState() != nil && f.GetState().GetState() != st:
			continue
		case !matchLabels(c.config.GetLabels(), f.GetLabelSelector()):
			continue
		}
		out = append(out, &runtimeapi.Container{
			Id: c.id, PodSandboxId: c.sb.id, Metadata: c.config.GetMetadata(), Image: c.imageSpec(),
			// containerd lists a container with its image's ID as the
			// reference, and reports the digest in ContainerStatus.
			ImageRef: c.image.id, ImageId: c.image.id,
			State: st, CreatedAt: ns(c.created),
			Labels: copyMap(c.config.GetLabels()), Annotations: copyMap(c.config.GetAnnotations()),
		})
	}
	return out
}

// sortedContainers returns the containers in the order they were made. r.mu must
// be held.
func (r *Runtime) sortedContainers() []*container {
	out := make([]*container, 0, len(r.containers))
	for _, c := range r.containers {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// imageSpec is the image a container reports: the one the pod spec names,
// as simruntime reports it, rather than a normalized reference.
func (c *container) imageSpec() *runtimeapi.ImageSpec {
	name := c.config.GetImage().GetUserSpecifiedImage()
	if name == "" {
		name = c.image.name
	}
	return &runtimeapi.ImageSpec{Image: name, UserSpecifiedImage: c.config.GetImage().GetUserSpecifiedImage(),
		RuntimeHandler: c.config.GetImage().GetRuntimeHandler()}
}

// ContainerStatus reports a container as containerd does: times in
// nanoseconds (started and finished only once they happened), and for an
// exited one its exit code with reason Completed for 0, else Error.
func (r *Runtime) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.containers[req.GetContainerId()]
	if c == nil {
		return nil, notFound("container", req.GetContainerId())
	}
	now := r.clock.Now()
	st := &runtimeapi.ContainerStatus{
		Id: c.id, Metadata: c.config.GetMetadata(), State: c.state(now),
		CreatedAt: ns(c.created), StartedAt: ns(c.started),
		Image: c.imageSpec(), ImageRef: c.image.digest, ImageId: c.image.id,
		Labels: copyMap(c.config.GetLabels()), Annotations: copyMap(c.config.GetAnnotations()),
		LogPath: c.logPath,
	}
	if r := c.resources(); r != nil {
		// As containerd: the resources the kubelet gave the container,
		// at its creation or last update.
		st.Resources = &runtimeapi.ContainerResources{Linux: r}
	}
	if st.State == runtimeapi.ContainerState_CONTAINER_EXITED {
		st.FinishedAt, st.ExitCode = ns(c.exitAt), c.exitCode
		st.Reason = "Error"
		if c.exitCode == 0 {
			st.Reason = "Completed"
		}
	}
	return &runtimeapi.ContainerStatusResponse{Status: st}, nil
}

// UpdateContainerResources keeps the container's new Linux resources, which
// ContainerStatus reports from then on.
func (r *Runtime) UpdateContainerResources(ctx context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.containers[req.GetContainerId()]
	if c == nil {
		return nil, notFound("container", req.GetContainerId())
	}
	if req.GetLinux() != nil {
		c.updated = proto.Clone(req.GetLinux()).(*runtimeapi.LinuxContainerResources)
	}
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

// resources are the container's Linux resources: the last update's, else
// its config's; nil for none.
func (c *container) resources() *runtimeapi.LinuxContainerResources {
	if c.updated != nil {
		return c.updated
	}
	return c.config.GetLinux().GetResources()
}

// ReopenContainerLog succeeds for a running container: the log file is
// kept as it is.
func (r *Runtime) ReopenContainerLog(ctx context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.containers[req.GetContainerId()]
	if c == nil {
		return nil, notFound("container", req.GetContainerId())
	}
	if st := c.state(r.clock.Now()); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.Unknown, "container is not running")
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}

// ContainerStats reports no usage: the container's attributes only.
func (r *Runtime) ContainerStats(ctx context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.containers[req.GetContainerId()]
	if c == nil {
		return nil, notFound("container", req.GetContainerId())
	}
	return &runtimeapi.ContainerStatsResponse{Stats: &runtimeapi.ContainerStats{Attributes: &runtimeapi.ContainerAttributes{
		Id: c.id, Metadata: c.config.GetMetadata(), Labels: copyMap(c.config.GetLabels()), Annotations: copyMap(c.config.GetAnnotations()),
	}}}, nil
}

// ListContainerStats reports no container usage.
func (r *Runtime) ListContainerStats(ctx context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	return &runtimeapi.ListContainerStatsResponse{}, nil
}

// StreamContainerStats sends nothing: there is no usage.
func (r *Runtime) StreamContainerStats(req *runtimeapi.StreamContainerStatsRequest, s grpc.ServerStreamingServer[runtimeapi.StreamContainerStatsResponse]) error {
	return nil
}
