package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
	"github.com/nodestate/nodestate/vk"
)

// runVKNode runs the vk provider for the node name, with virtual-kubelet's
// own pod and node controllers on it, as system:node:<name>, until the
// test ends.
func runVKNode(t *testing.T, p *controlplane.Plane, name, cidr string) *vk.Provider {
	t.Helper()
	cs, err := p.Client(controlplane.NodeUser(name))
	if err != nil {
		t.Fatal(err)
	}
	opts := vk.DefaultOptions()
	opts.Name, opts.Runner.PodCIDR = name, cidr
	opts.Logger = funcr.New(func(prefix, args string) { logf(prefix + " " + args) }, funcr.Options{})
	prov, err := vk.NewProvider(opts, vk.SimulatedRuntime, cs)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := node.NewPodController(prov.PodControllerConfig())
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := node.NewNodeController(prov, prov.Node(), cs.CoreV1().Nodes(), prov.NodeControllerOptions(cs)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func() error{
		func() error { return prov.Run(ctx) },
		func() error { return pods.Run(ctx, 2) },
		func() error { return nodes.Run(ctx) },
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(); err != nil && !errors.Is(err, context.Canceled) {
				logf("vk node " + name + ": " + err.Error())
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return prov
}

// runKubeNode runs a kube.Node called name as system:node:<name> until the
// test ends.
func runKubeNode(t *testing.T, p *controlplane.Plane, name, cidr string) *kube.Node {
	t.Helper()
	cs, err := p.Client(controlplane.NodeUser(name))
	if err != nil {
		t.Fatal(err)
	}
	opts := kube.DefaultOptions(name)
	opts.PodCIDR = cidr
	n, err := kube.NewNode(opts, cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("kube node %s: %v", name, err)
		}
	})
	return n
}

var logMu sync.Mutex

// logf writes what the nodes log, with the time, to the test's output.
func logf(s string) {
	logMu.Lock()
	defer logMu.Unlock()
	fmt.Printf("%s %s\n", time.Now().Format("15:04:05.000"), s)
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("waiting %v for %s: %v", timeout, what, err)
	}
}

var nsCounter int

// namespace creates a namespace and waits for its default ServiceAccount,
// without which the ServiceAccount admission plugin refuses pods.
func namespace(t *testing.T, admin kubernetes.Interface) string {
	t.Helper()
	nsCounter++
	name := fmt.Sprintf("vk%d-%d", nsCounter, time.Now().UnixNano()%100000)
	if _, err := admin.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the default ServiceAccount of "+name, time.Minute, func(ctx context.Context) (bool, error) {
		_, err := admin.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	return name
}

// kubectlTable parses the table kubectl get prints: the column index of
// each header, and each row's cells by the row's first cell.
func kubectlTable(t *testing.T, out []byte) (map[string]int, map[string][]string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	header := map[string]int{}
	rows := map[string][]string{}
	first := true
	for sc.Scan() {
		var cells []string
		for _, c := range strings.Split(sc.Text(), "  ") {
			if c = strings.TrimSpace(c); c != "" {
				cells = append(cells, c)
			}
		}
		if first {
			for i, c := range cells {
				header[c] = i
			}
			first = false
			continue
		}
		if len(cells) > 0 {
			rows[cells[0]] = cells
		}
	}
	if _, ok := header["NAME"]; !ok {
		t.Fatalf("kubectl printed no table header:\n%s", out)
	}
	return header, rows
}
