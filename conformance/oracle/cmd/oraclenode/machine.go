package main

import (
	"context"
	"time"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cadvisor"
)

// machine is the kubelet's cadvisor: a machine of a few CPUs and some
// memory that runs no containers cadvisor could see, with one empty
// filesystem of storage bytes under every path (so that image garbage
// collection and the eviction manager find capacity and no pressure). It
// reads nothing from the host.
type machine struct {
	name    string
	cpus    int
	memory  uint64
	storage uint64
}

var _ cadvisor.Interface = (*machine)(nil)

func (m *machine) Start() error { return nil }

func (m *machine) ContainerInfoV2(string, cadvisorapi.RequestOptions) (map[string]cadvisorapi.ContainerInfo, error) {
	return map[string]cadvisorapi.ContainerInfo{}, nil
}

func (m *machine) GetRequestedContainersInfo(string, cadvisorapi.RequestOptions) (map[string]*cadvisorapi.ContainerInfo, error) {
	return map[string]*cadvisorapi.ContainerInfo{}, nil
}

// MachineInfo gives the node its CPU and memory capacity and its IDs:
// machine ID, system UUID and boot ID are the node's name, as nodestate's
// nodes report them (a boot ID that stays the same means no Rebooted
// event).
func (m *machine) MachineInfo(klog.Logger) (*cadvisorapi.MachineInfo, error) {
	return &cadvisorapi.MachineInfo{
		Timestamp: time.Now(), NumCores: m.cpus, NumPhysicalCores: m.cpus, NumSockets: 1,
		MemoryCapacity: m.memory, MachineID: m.name, SystemUUID: m.name, BootID: m.name,
	}, nil
}

// VersionInfo names the kernel and OS image as nodestate's nodes do: both
// are the same simulated machine.
func (m *machine) VersionInfo() (*cadvisorapi.VersionInfo, error) {
	return &cadvisorapi.VersionInfo{KernelVersion: "nodestate", ContainerOsVersion: "nodestate simulated node"}, nil
}

func (m *machine) fs(path string) cadvisorapi.FsInfo {
	inodes := uint64(1 << 30)
	return cadvisorapi.FsInfo{Timestamp: time.Now(), Device: "oracle", Mountpoint: path,
		Capacity: m.storage, Available: m.storage, Inodes: &inodes, InodesFree: &inodes}
}

func (m *machine) ImagesFsInfo(context.Context) (cadvisorapi.FsInfo, error)    { return m.fs("/"), nil }
func (m *machine) RootFsInfo() (cadvisorapi.FsInfo, error)                     { return m.fs("/"), nil }
func (m *machine) ContainerFsInfo(context.Context) (cadvisorapi.FsInfo, error) { return m.fs("/"), nil }
func (m *machine) GetDirFsInfo(path string) (cadvisorapi.FsInfo, error)        { return m.fs(path), nil }
