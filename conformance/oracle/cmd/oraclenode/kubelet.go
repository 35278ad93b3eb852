package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"time"

	noopoteltrace "go.opentelemetry.io/otel/trace/noop"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/version"
	remote "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	"k8s.io/kubernetes/pkg/kubelet"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	containertest "k8s.io/kubernetes/pkg/kubelet/container/testing"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	kubeletutil "k8s.io/kubernetes/pkg/kubelet/util"
	"k8s.io/kubernetes/pkg/util/oom"
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/configmap"
	"k8s.io/kubernetes/pkg/volume/downwardapi"
	"k8s.io/kubernetes/pkg/volume/emptydir"
	"k8s.io/kubernetes/pkg/volume/hostpath"
	"k8s.io/kubernetes/pkg/volume/projected"
	"k8s.io/kubernetes/pkg/volume/secret"
	"k8s.io/kubernetes/pkg/volume/util/hostutil"
	"k8s.io/kubernetes/pkg/volume/util/subpath"
	"k8s.io/mount-utils"
)

// config is what the command's flags say.
type config struct {
	kubeconfig, name, nodeIP, podCIDR, rootDir, clusterDNS, featureGates string
	port, cpus, maxPods, registryPullQPS, kubeAPIQPS, eventQPS           int
	serializeImagePulls                                                  bool
	memory, storage                                                      uint64
}

// kubeletServer returns the kubelet's flags and configuration: the
// kubelet's defaults, and the values listed in the command's doc comment.
func kubeletServer(c config, endpoint string) (*options.KubeletServer, error) {
	f := options.NewKubeletFlags()
	f.RootDirectory = c.rootDir
	f.CertDirectory = filepath.Join(c.rootDir, "pki")
	f.HostnameOverride = c.name
	f.NodeIP = c.nodeIP

	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		return nil, fmt.Errorf("oraclenode: the kubelet's default configuration: %w", err)
	}
	kc.ContainerRuntimeEndpoint = endpoint
	kc.ImageServiceEndpoint = endpoint
	kc.Address = "127.0.0.1"
	kc.Port = int32(c.port)
	kc.ReadOnlyPort = 0
	kc.PodLogsDir = filepath.Join(c.rootDir, "pod-logs")
	kc.ResolverConfig = ""
	if c.clusterDNS != "" {
		kc.ClusterDNS = []string{c.clusterDNS}
	}
	kc.MakeIPTablesUtilChains = false
	// What the kubelet's configuration file loading does for a file that
	// sets no evictionHard (the kubelet of every kubeadm or distribution
	// install): the default hard eviction thresholds, which node
	// allocatable also reserves.
	if kc.EvictionHard == nil {
		kc.EvictionHard = maps.Clone(eviction.DefaultEvictionHard)
	}
	if c.maxPods > 0 {
		kc.MaxPods = int32(c.maxPods)
	}
	kc.SerializeImagePulls = c.serializeImagePulls
	if c.kubeAPIQPS > 0 {
		kc.KubeAPIQPS, kc.KubeAPIBurst = int32(c.kubeAPIQPS), int32(2*c.kubeAPIQPS)
	}
	if c.eventQPS > 0 {
		kc.EventRecordQPS, kc.EventBurst = int32(c.eventQPS), int32(2*c.eventQPS)
	}
	kc.RegistryPullQPS = int32(c.registryPullQPS)
	// What the kubelet's own start does before it runs with cgroups per
	// QoS class and no cgroup root.
	if kc.CgroupsPerQOS && kc.CgroupRoot == "" {
		kc.CgroupRoot = "/"
	}
	return &options.KubeletServer{KubeletFlags: *f, KubeletConfiguration: *kc}, nil
}

// clients are the kubelet's API clients, made as the kubelet makes them:
// the main one with the kubelet's QPS, burst and protobuf, one for events
// with the event QPS and burst, and one for heartbeats (node status and
// lease) without rate limit and with a timeout.
type clients struct {
	kube, events, heartbeat, pods *kubernetes.Clientset
}

func newClients(kubeconfig string, kc *kubeletconfig.KubeletConfiguration) (*clients, error) {
	base, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("oraclenode: kubeconfig: %w", err)
	}
	// The user agent the kubelet's requests carry, so that the API
	// server's managedFields name the manager "kubelet".
	base.UserAgent = fmt.Sprintf("kubelet/%s (%s/%s) kubernetes/%s", version.Get().GitVersion, runtime.GOOS, runtime.GOARCH, shortCommit())
	base.ContentType = kc.ContentType
	if kc.ContentType == "application/vnd.kubernetes.protobuf" {
		base.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	newClient := func(mod func(*rest.Config)) (*kubernetes.Clientset, error) {
		cfg := rest.CopyConfig(base)
		mod(cfg)
		return kubernetes.NewForConfig(cfg)
	}
	var c clients
	if c.kube, err = newClient(func(cfg *rest.Config) { cfg.QPS, cfg.Burst = float32(kc.KubeAPIQPS), int(kc.KubeAPIBurst) }); err != nil {
		return nil, err
	}
	if c.events, err = newClient(func(cfg *rest.Config) { cfg.QPS, cfg.Burst = float32(kc.EventRecordQPS), int(kc.EventBurst) }); err != nil {
		return nil, err
	}
	if c.heartbeat, err = newClient(func(cfg *rest.Config) {
		cfg.Timeout = min(kc.NodeStatusUpdateFrequency.Duration, time.Duration(kc.NodeLeaseDurationSeconds)*time.Second)
		cfg.QPS = -1
	}); err != nil {
		return nil, err
	}
	if c.pods, err = newClient(func(cfg *rest.Config) { cfg.QPS, cfg.Burst = 50, 100 }); err != nil {
		return nil, err
	}
	return &c, nil
}

func shortCommit() string {
	c := version.Get().GitCommit
	if len(c) > 7 {
		c = c[:7]
	}
	if c == "" || c == "$Format:%H$" {
		return "unknown"
	}
	return c
}

// dependencies are the kubelet's dependencies: the real prober, recorder
// (made by RunKubelet from EventClient), status manager and everything
// else of the kubelet, on fakes for what touches the host. The OS
// interface writes nothing (directories, symlinks under /var/log/containers
// and termination-message files are not made) but stats for real, so that
// the container log manager finds the log files the runtime makes.
func dependencies(ctx context.Context, c config, cl *clients, kc *kubeletconfig.KubeletConfiguration, endpoint string) (*kubelet.Dependencies, error) {
	tp := noopoteltrace.NewTracerProvider()
	rs, err := remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(endpoint).
		WithConnectionTimeout(kc.RuntimeRequestTimeout.Duration).WithTracerProvider(tp).Build(ctx)
	if err != nil {
		return nil, fmt.Errorf("oraclenode: runtime service: %w", err)
	}
	is, err := remote.NewRemoteImageServiceBuilder().WithEndpoint(endpoint).
		WithConnectionTimeout(kc.RuntimeRequestTimeout.Duration).WithTracerProvider(tp).Build(ctx)
	if err != nil {
		return nil, fmt.Errorf("oraclenode: image service: %w", err)
	}
	m := &machine{name: c.name, cpus: c.cpus, memory: c.memory, storage: c.storage}
	res, err := newNodeResources(m, kc)
	if err != nil {
		return nil, err
	}
	return &kubelet.Dependencies{
		KubeClient:                cl.kube,
		HeartbeatClient:           cl.heartbeat,
		EventClient:               cl.events.CoreV1(),
		RemoteRuntimeService:      rs,
		RemoteImageService:        is,
		CAdvisorInterface:         m,
		ContainerManager:          newContainerManager(kc, res),
		OSInterface:               &containertest.FakeOS{StatFn: os.Stat},
		VolumePlugins:             volumePlugins(),
		OOMAdjuster:               oom.NewFakeOOMAdjuster(),
		Mounter:                   mount.NewFakeMounter(nil),
		Subpather:                 &subpath.FakeSubpath{},
		HostUtil:                  hostutil.NewFakeHostUtil(nil),
		PodStartupLatencyTracker:  kubeletutil.NewPodStartupLatencyTracker(),
		NodeStartupLatencyTracker: kubeletutil.NewNodeStartupLatencyTracker(klog.FromContext(ctx)),
		TracerProvider:            tp,
	}, nil
}

// volumePlugins are the in-tree plugins that need nothing of the host
// beyond the root directory: emptyDir, secret, configMap, downwardAPI,
// projected (service account tokens among them) and a hostPath that
// touches nothing.
func volumePlugins() []volume.VolumePlugin {
	var ps []volume.VolumePlugin
	ps = append(ps, emptydir.ProbeVolumePlugins()...)
	ps = append(ps, secret.ProbeVolumePlugins()...)
	ps = append(ps, configmap.ProbeVolumePlugins()...)
	ps = append(ps, downwardapi.ProbeVolumePlugins()...)
	ps = append(ps, projected.ProbeVolumePlugins()...)
	ps = append(ps, hostpath.FakeProbeVolumePlugins(volume.VolumeConfig{})...)
	return ps
}
