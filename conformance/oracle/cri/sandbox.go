package cri

import (
	"context"
	"sort"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RunPodSandbox makes a ready sandbox with an address from the pod CIDR
// (none in the host network). The pod's behaviours are read on its first
// sandbox; annotations that do not parse fail the call with
// InvalidArgument, and the kubelet reports FailedCreatePodSandBox.
func (r *Runtime) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	cfg := req.GetConfig()
	if cfg.GetMetadata() == nil {
		return nil, status.Error(codes.InvalidArgument, "sandbox config has no metadata")
	}
	pe, err := r.podFor(ctx, cfg)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	host := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
	r.mu.Lock()
	defer r.mu.Unlock()
	sb := &sandbox{pod: pe, config: cfg, handler: req.GetRuntimeHandler(), created: r.clock.Now(), ready: true, host: host}
	if !host {
		ip, ok := r.pool.get()
		if !ok {
			return nil, status.Errorf(codes.Unknown, "failed to setup network for sandbox: %v %s", errNoIP, r.pool.prefix)
		}
		sb.ip = ip
	}
	sb.id, sb.seq = r.newID(cfg.GetMetadata().GetName())
	r.sandboxes[sb.id] = sb
	pe.sandboxes++
	r.log.V(2).Info("sandbox ready", "id", sb.id, "pod", cfg.GetMetadata().GetNamespace()+"/"+cfg.GetMetadata().GetName(), "ip", sb.ip)
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: sb.id}, nil
}

// StopPodSandbox stops every container still running in the sandbox at
// once, with SIGKILL's exit code 137, and makes the sandbox not ready: it
// reports no IP from then on. A stopped sandbox stays stopped.
func (r *Runtime) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb := r.sandboxes[req.GetPodSandboxId()]
	if sb == nil {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	now := r.clock.Now()
	for _, c := range r.containers {
		if c.sb == sb && c.state(now) == runtimeapi.ContainerState_CONTAINER_RUNNING {
			c.exit(now, 137)
		}
	}
	sb.ready = false
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox removes the sandbox and every container in it, and
// gives its address back. Removing a sandbox that is gone succeeds, as the
// CRI asks.
func (r *Runtime) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb := r.sandboxes[req.GetPodSandboxId()]
	if sb == nil {
		return &runtimeapi.RemovePodSandboxResponse{}, nil
	}
	for id, c := range r.containers {
		if c.sb == sb {
			r.remove(id, c)
		}
	}
	if sb.ip.IsValid() {
		r.pool.put(sb.ip)
	}
	delete(r.sandboxes, sb.id)
	if sb.pod.sandboxes--; sb.pod.sandboxes == 0 {
		delete(r.pods, sb.pod.uid)
	}
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

// PodSandboxStatus reports the sandbox as containerd does: its IP while it
// is ready and not in the host network, and the network namespace mode
// the kubelet asked for (the kubelet makes a new sandbox when either is
// not what it expects).
func (r *Runtime) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb := r.sandboxes[req.GetPodSandboxId()]
	if sb == nil {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	ip := ""
	if sb.ready && sb.ip.IsValid() {
		ip = sb.ip.String()
	}
	return &runtimeapi.PodSandboxStatusResponse{
		Status: &runtimeapi.PodSandboxStatus{
			Id:             sb.id,
			Metadata:       sb.config.GetMetadata(),
			State:          sb.state(),
			CreatedAt:      ns(sb.created),
			Network:        &runtimeapi.PodSandboxNetworkStatus{Ip: ip},
			Linux:          &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: sb.config.GetLinux().GetSecurityContext().GetNamespaceOptions()}},
			Labels:         copyMap(sb.config.GetLabels()),
			Annotations:    copyMap(sb.config.GetAnnotations()),
			RuntimeHandler: sb.handler,
		},
		Timestamp: ns(r.clock.Now()),
	}, nil
}

func (sb *sandbox) state() runtimeapi.PodSandboxState {
	if sb.ready {
		return runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return runtimeapi.PodSandboxState_SANDBOX_NOTREADY
}

// ListPodSandbox lists the sandboxes that pass the filter, oldest first.
func (r *Runtime) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{Items: r.listSandboxes(req.GetFilter())}, nil
}

// StreamPodSandboxes sends what ListPodSandbox lists, in one message.
func (r *Runtime) StreamPodSandboxes(req *runtimeapi.StreamPodSandboxesRequest, s grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxesResponse]) error {
	return s.Send(&runtimeapi.StreamPodSandboxesResponse{PodSandboxes: r.listSandboxes(req.GetFilter())})
}

func (r *Runtime) listSandboxes(f *runtimeapi.PodSandboxFilter) []*runtimeapi.PodSandbox {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*runtimeapi.PodSandbox
	for _, sb := range r.sortedSandboxes() {
		switch {
		case f.GetId() != "" && f.GetId() != sb.id:
			continue
		case f.GetState() != nil && f.GetState().GetState() != sb.state():
			continue
		case !matchLabels(sb.config.GetLabels(), f.GetLabelSelector()):
			continue
		}
		out = append(out, &runtimeapi.PodSandbox{
			Id: sb.id, Metadata: sb.config.GetMetadata(), State: sb.state(), CreatedAt: ns(sb.created),
			Labels: copyMap(sb.config.GetLabels()), Annotations: copyMap(sb.config.GetAnnotations()), RuntimeHandler: sb.handler,
		})
	}
	return out
}

// sortedSandboxes returns the sandboxes in the order they were made. r.mu must be
// held.
func (r *Runtime) sortedSandboxes() []*sandbox {
	out := make([]*sandbox, 0, len(r.sandboxes))
	for _, sb := range r.sandboxes {
		out = append(out, sb)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// PodSandboxStats reports no usage: the sandbox's attributes only.
func (r *Runtime) PodSandboxStats(ctx context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb := r.sandboxes[req.GetPodSandboxId()]
	if sb == nil {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: &runtimeapi.PodSandboxStats{Attributes: &runtimeapi.PodSandboxAttributes{
		Id: sb.id, Metadata: sb.config.GetMetadata(), Labels: copyMap(sb.config.GetLabels()), Annotations: copyMap(sb.config.GetAnnotations()),
	}}}, nil
}

// ListPodSandboxStats reports no sandbox usage.
func (r *Runtime) ListPodSandboxStats(ctx context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	return &runtimeapi.ListPodSandboxStatsResponse{}, nil
}

// StreamPodSandboxStats sends nothing: there is no usage.
func (r *Runtime) StreamPodSandboxStats(req *runtimeapi.StreamPodSandboxStatsRequest, s grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxStatsResponse]) error {
	return nil
}

// ListPodSandboxMetrics reports no metrics.
func (r *Runtime) ListPodSandboxMetrics(ctx context.Context, req *runtimeapi.ListPodSandboxMetricsRequest) (*runtimeapi.ListPodSandboxMetricsResponse, error) {
	return &runtimeapi.ListPodSandboxMetricsResponse{}, nil
}

// StreamPodSandboxMetrics sends nothing: there are no metrics.
func (r *Runtime) StreamPodSandboxMetrics(req *runtimeapi.StreamPodSandboxMetricsRequest, s grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxMetricsResponse]) error {
	return nil
}

// ListMetricDescriptors describes no metrics.
func (r *Runtime) ListMetricDescriptors(ctx context.Context, req *runtimeapi.ListMetricDescriptorsRequest) (*runtimeapi.ListMetricDescriptorsResponse, error) {
	return &runtimeapi.ListMetricDescriptorsResponse{}, nil
}
