// Package integration tests nodestate's client-go adapters against a real
// kube-apiserver and etcd, started once for the package on 127.0.0.1; the
// tests that need the real controllers start their own control plane with
// kube-controller-manager and kube-scheduler (fullPlane).
package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nodestate/nodestate/kube/controlplane"
)

var (
	// plane is the package's shared etcd and kube-apiserver, without
	// controllers; binDir holds the binaries.
	plane    *controlplane.Plane
	planeErr error
	binDir   string
)

// Nodes the server has kubelet identities for.
const (
	node1 = "node-1"
	node2 = "node-2"
	// node3 is run by kube.Node in its tests, and by nothing else.
	node3 = "node-3"
	// node4 is run by the node command's test.
	node4 = "node-4"
	// node5 is run by TestNodeScale.
	node5 = "node-5"
	// nodeVol is run by TestNodeWaitsForVolumes.
	nodeVol = "node-vol"
)

func TestMain(m *testing.M) {
	// -short is the quick variant: no control plane, the integration tests
	// skip. Otherwise a control plane that cannot be built or started fails
	// every test.
	short := false
	for _, a := range os.Args {
		if a == "-test.short" || a == "-test.short=true" {
			short = true
		}
	}
	if !short {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		binDir, planeErr = controlplane.BinDir(ctx)
		if planeErr == nil {
			plane, planeErr = controlplane.Start(ctx, binDir, node1, node2, node3, node4, node5, nodeVol)
		}
		cancel()
	}
	code := m.Run()
	if plane != nil {
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
		t.Skip("-short: no kube-apiserver")
	}
	if planeErr != nil || plane == nil {
		t.Fatalf("no control plane: %v", planeErr)
	}
	return plane
}

// counter counts the requests a client makes, by verb and resource path
// ("GET pods", "PATCH pods/status", ...).
type counter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *counter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.counts[r.Method+" "+resourceOf(r.URL.Path)]++
		c.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

// total returns the number of requests so far.
func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

func (c *counter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[key]
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// resourceOf turns /api/v1/namespaces/ns/pods/name/status into
// "pods/status".
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "namespaces" && i+2 < len(parts) {
			rest := parts[i+2:]
			if len(rest) >= 3 {
				return rest[0] + "/" + rest[2]
			}
			return rest[0]
		}
	}
	return path
}

// client returns a clientset for identity that counts its requests.
func client(t *testing.T, identity string) (kubernetes.Interface, *counter) {
	t.Helper()
	p := needPlane(t)
	cfg, err := p.Config(identity)
	if err != nil {
		t.Fatal(err)
	}
	c := &counter{counts: map[string]int{}}
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = c.wrap
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, c
}
