package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/nodestate/nodestate/kube"
	"github.com/nodestate/nodestate/kube/controlplane"
)

// The nodes' names: the oracle node, the nodestate node, and the second
// oracle node of a run with a baseline (Config.Baseline).
const (
	KubeletNode   = "kubelet-1"
	NodestateNode = "nodestate-1"
	BaselineNode  = "kubelet-2"
)

// Config says where the binaries are and how the nodes are set up.
type Config struct {
	// BinDir holds the control plane (kube/hack/build-control-plane.sh
	// prints it), Oracle the oraclenode binary (in the directory
	// kube/hack/build-oracle.sh prints).
	BinDir, Oracle string
	// Dir is where the oracle node writes (its root directory and log).
	Dir string
	// MaxPods is both nodes' pod capacity (the kubelet's maxPods).
	MaxPods int
	// Nodestate edits the nodestate node's options after the comparison's
	// own (the break check makes it wrong on purpose).
	Nodestate func(*kube.Options)
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Dump, when it holds for a workload, puts every distinct status of its
	// pods, normalised, with its times, into the report.
	Dump func(workload string) bool
	// Baseline runs a second oracle node (BaselineNode) and every workload
	// a third time on it: where the real kubelet's own two runs of a
	// workload differ, a difference of nodestate's in the same fields is
	// the kubelet's chance, not nodestate's (Compare, Report).
	Baseline bool
}

// env is one control plane with both nodes.
type env struct {
	cfg    Config
	plane  *controlplane.Plane
	admin  kubernetes.Interface
	oracle *controlplane.Process
	// baseline is the second oracle node (nil without Config.Baseline).
	baseline *controlplane.Process
	stop     context.CancelFunc
	done     chan error
	node     *kube.Node
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "compare: "+format+"\n", args...)
	}
}

// start starts the control plane (with its controllers), the oracle node
// and the nodestate node, and waits until both nodes are Ready.
func start(ctx context.Context, cfg Config) (*env, error) {
	nodes := []string{KubeletNode, NodestateNode}
	if cfg.Baseline {
		nodes = append(nodes, BaselineNode)
	}
	p, err := controlplane.StartWith(ctx, cfg.BinDir, controlplane.Options{Nodes: nodes, Controllers: true})
	if err != nil {
		return nil, fmt.Errorf("compare: starting the control plane: %w", err)
	}
	e := &env{cfg: cfg, plane: p}
	if e.admin, err = p.Client(controlplane.Admin); err != nil {
		e.close()
		return nil, err
	}
	if e.oracle, err = e.startOracle(KubeletNode, "10.244.1.0/24", "k"); err != nil {
		e.close()
		return nil, err
	}
	if cfg.Baseline {
		if e.baseline, err = e.startOracle(BaselineNode, "10.244.3.0/24", "k2"); err != nil {
			e.close()
			return nil, err
		}
	}
	if err := e.startNodestate(); err != nil {
		e.close()
		return nil, err
	}
	for _, n := range nodes {
		if err := e.waitReady(ctx, n); err != nil {
			e.close()
			return nil, err
		}
	}
	return e, nil
}

// startOracle starts an oracle node named name, with pod CIDR cidr, its
// root directory under Config.Dir/dir and its log in
// Config.Dir/oraclenode-<name>.log.
func (e *env) startOracle(name, cidr, dir string) (*controlplane.Process, error) {
	kubeconfig, err := e.plane.Kubeconfig(controlplane.NodeUser(name))
	if err != nil {
		return nil, err
	}
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	p, err := controlplane.StartProcess(name, filepath.Join(e.cfg.Dir, "oraclenode-"+name+".log"), e.cfg.Oracle, "--kubeconfig", kubeconfig, "--name", name, "--root-dir", filepath.Join(e.cfg.Dir, dir),
		"--kubelet-port", strconv.Itoa(port), "--pod-cidr", cidr, "--max-pods", strconv.Itoa(e.cfg.MaxPods),
		// Which of many pods starting at once waits for a pull, or has it
		// refused, depends on the order of the kubelet's goroutines: the
		// comparison turns both off (docs/faithfulness.md, O2). Hundreds of
		// pods at once would also queue the kubelet's status writes and
		// events behind its client's rate limits for tens of seconds; the
		// nodestate node's client has none.
		"--serialize-image-pulls=false", "--registry-pull-qps", "0",
		"--kube-api-qps", "500", "--event-qps", "500", "-v", "2")
	if err != nil {
		return nil, fmt.Errorf("compare: the oracle node %s: %w", name, err)
	}
	return p, nil
}

// startNodestate runs a kube.Node with the oracle node's resources.
func (e *env) startNodestate() error {
	cs, err := e.plane.Client(controlplane.NodeUser(NodestateNode))
	if err != nil {
		return err
	}
	opts := kube.DefaultOptions(NodestateNode)
	opts.PodCIDR = "10.244.2.0/24"
	for _, r := range []corev1.ResourceList{opts.Capacity, opts.Allocatable} {
		r[corev1.ResourcePods] = *resource.NewQuantity(int64(e.cfg.MaxPods), resource.DecimalSI)
	}
	if e.cfg.Nodestate != nil {
		e.cfg.Nodestate(&opts)
	}
	n, err := kube.NewNode(opts, cs)
	if err != nil {
		return fmt.Errorf("compare: the nodestate node: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.node, e.stop, e.done = n, cancel, make(chan error, 1)
	go func() { e.done <- n.Run(ctx) }()
	return nil
}

func (e *env) waitReady(ctx context.Context, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case <-e.oracle.Done():
			return false, errors.New("the oracle node exited (see oraclenode-" + KubeletNode + ".log)")
		case <-exited(e.baseline): // never without a baseline
			return false, errors.New("the second oracle node exited (see oraclenode-" + BaselineNode + ".log)")
		default:
		}
		n, err := e.admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("compare: node %s not Ready: %w", name, err)
	}
	return nil
}

// close stops both nodes and the control plane.
func (e *env) close() {
	if e.stop != nil {
		e.stop()
		<-e.done
	}
	for _, p := range []*controlplane.Process{e.oracle, e.baseline} {
		if p != nil {
			p.Stop(10 * time.Second)
		}
	}
	if e.plane != nil {
		_ = e.plane.Stop()
	}
}

// exited is p's Done, or nil (never ready) for no process.
func exited(p *controlplane.Process) <-chan struct{} {
	if p == nil {
		return nil
	}
	return p.Done()
}
