// Package integration runs the vk provider under virtual-kubelet's own pod
// and node controllers on a real control plane (etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler v1.37.2, and the real
// kubectl), next to a kube.Node, and compares the two.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nodestate/nodestate/kube/controlplane"
)

// The nodes the control plane has identities for.
const (
	vkNode   = "vk-e2e"
	kubeNode = "kube-e2e"
)

var (
	plane    *controlplane.Plane
	planeErr error
)

func TestMain(m *testing.M) {
	short := false
	for _, a := range os.Args {
		if a == "-test.short" || a == "-test.short=true" {
			short = true
		}
	}
	if !short {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		var bin string
		bin, planeErr = controlplane.BinDir(ctx)
		if planeErr == nil {
			plane, planeErr = controlplane.StartWith(ctx, bin, controlplane.Options{Nodes: []string{vkNode, kubeNode, cmdNode}, Controllers: true})
		}
		cancel()
	}
	code := m.Run()
	if plane != nil {
		if code != 0 {
			fmt.Fprintln(os.Stderr, plane.Log())
		}
		if err := plane.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}
	os.Exit(code)
}

// needPlane returns the control plane, skipping under -short and failing
// when it could not be started.
func needPlane(t *testing.T) *controlplane.Plane {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no control plane")
	}
	if planeErr != nil || plane == nil {
		t.Fatalf("no control plane: %v", planeErr)
	}
	return plane
}
