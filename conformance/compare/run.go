package compare

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// The namespaces the copies of every workload run in: on the oracle node,
// on the nodestate node, and on the second oracle node of a baseline.
const (
	KubeletNamespace   = "on-kubelet"
	NodestateNamespace = "on-nodestate"
	BaselineNamespace  = "on-kubelet-2"
)

// placement is where one copy of every workload runs.
type placement struct{ namespace, node string }

// placements are the copies a run makes: the kubelet's, nodestate's and,
// with a baseline, the second kubelet's.
func (c Config) placements() []placement {
	ps := []placement{{KubeletNamespace, KubeletNode}, {NodestateNamespace, NodestateNode}}
	if c.Baseline {
		ps = append(ps, placement{BaselineNamespace, BaselineNode})
	}
	return ps
}

// probeSettle is how long after the nodes start the workloads wait: the
// kubelet delays a probe worker's first probe by a random part of its
// period when the prober started less than a period ago (the generated
// probes' periods are at most 10 s).
const probeSettle = 11 * time.Second

// Run starts a control plane with both nodes, runs every workload on each
// at once, and compares what the two nodes wrote: every pod's status
// sequence and events, and the Node objects.
func Run(ctx context.Context, cfg Config, ws []Workload, tol Tolerances, known []Known) (*Report, error) {
	rec, err := Record(ctx, cfg, ws)
	if err != nil {
		return nil, err
	}
	return Compare(rec, tol, known, cfg.Dump), nil
}

// Recording is what a run recorded: the workloads as they ran, every
// version of every pod each node ran, their events and the Nodes at the
// end. Compare turns it into a Report; it can be saved (encoding/json)
// and compared again with other tolerances.
type Recording struct {
	Workloads          []RecordedWorkload
	Kubelet, Nodestate RecordedNode
	// Baseline is the second oracle node's (Config.Baseline); without one
	// its Node is nil.
	Baseline RecordedNode
	// Elapsed is the whole run; OracleBefore and OracleAfter the oracle
	// node's resource usage before the workloads and at their end.
	Elapsed                   time.Duration
	OracleBefore, OracleAfter Usage
}

// RecordedWorkload is one workload as it ran.
type RecordedWorkload struct {
	Name, What string
	// End is when its observation ended.
	End time.Time
	// Errors are what failed while creating it or running its steps.
	Errors []string
}

// RecordedNode is what one node wrote: its pods' histories, their events,
// and its Node object at the end.
type RecordedNode struct {
	Pods   []*history
	Events []corev1.Event
	Node   *corev1.Node
}

// Record starts a control plane with both nodes, runs every workload on
// each at once and records what the two nodes wrote.
func Record(ctx context.Context, cfg Config, ws []Workload) (*Recording, error) {
	begin := time.Now()
	e, err := start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	cfg.logf("control plane and both nodes up in %s", time.Since(begin).Round(time.Second))
	var namespaces []string
	for _, p := range cfg.placements() {
		if err := makeNamespace(ctx, e.admin, p.namespace); err != nil {
			return nil, err
		}
		namespaces = append(namespaces, p.namespace)
	}
	rctx, stopRec := context.WithCancel(ctx)
	defer stopRec()
	rec := newRecorder(e.admin, clock.RealClock{}, namespaces...)
	if err := rec.start(rctx); err != nil {
		return nil, err
	}
	if err := sleep(ctx, probeSettle-time.Since(begin)); err != nil {
		return nil, err
	}
	out := &Recording{OracleBefore: usageOf(e.oracle.Pid())}
	cfg.logf("running %d workloads", len(ws))
	runs := runWorkloads(ctx, e.admin, ws, cfg.placements())
	last := time.Now()
	for _, r := range runs {
		last = maxTime(last, r.end)
	}
	if err := sleep(ctx, time.Until(last)+time.Second); err != nil {
		return nil, err
	}
	out.OracleAfter = usageOf(e.oracle.Pid())
	if err := collect(ctx, e, rec, out, cfg.Baseline); err != nil {
		return nil, err
	}
	for _, r := range runs {
		r.mu.Lock()
		out.Workloads = append(out.Workloads, RecordedWorkload{Name: r.w.Name, What: r.w.What, End: r.end, Errors: r.errs})
		r.mu.Unlock()
	}
	out.Elapsed = time.Since(begin)
	return out, nil
}

// workloadRun is a workload that was started: when, and what failed.
type workloadRun struct {
	w          Workload
	start, end time.Time
	mu         sync.Mutex
	errs       []string
}

func (r *workloadRun) fail(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// runWorkloads creates every workload's objects on each placement, one
// workload's copies right after each other, and runs its steps at their
// offsets in the background.
func runWorkloads(ctx context.Context, c kubernetes.Interface, ws []Workload, places []placement) []*workloadRun {
	var runs []*workloadRun
	begin := time.Now()
	ws = slices.Clone(ws)
	slices.SortStableFunc(ws, func(a, b Workload) int { return cmp.Compare(a.Start, b.Start) })
	for _, w := range ws {
		if sleep(ctx, time.Until(begin.Add(w.Start))) != nil {
			break
		}
		r := &workloadRun{w: w, start: time.Now()}
		r.end = r.start.Add(w.For)
		for _, p := range places {
			for _, o := range w.Objects(p.node) {
				if err := create(ctx, c, p.namespace, o); err != nil {
					r.fail("creating %T on %s: %v", o, p.node, err)
				}
			}
		}
		for _, s := range w.Steps {
			go func() {
				if sleep(ctx, time.Until(r.start.Add(s.At))) != nil {
					return
				}
				for _, p := range places {
					if err := s.Do(ctx, c, p.namespace, p.node); err != nil {
						r.fail("%s on %s: %v", s.What, p.node, err)
					}
				}
			}()
		}
		runs = append(runs, r)
		_ = sleep(ctx, createGap)
	}
	return runs
}

// createGap spaces the workloads' creations, so that the nodes' first
// syncs of hundreds of pods do not all fall in one instant: at 50 ms the
// oracle nodes' first statuses of a wave of 100 came 1.7 s late at the
// median and up to 5 s (their pod workers queue); at 100 ms, 0.8 s and up
// to 2.4 s in the first wave.
const createGap = 100 * time.Millisecond

// collect reads what the nodes wrote: the recorder's histories, the
// events and the Nodes.
func collect(ctx context.Context, e *env, rec *recorder, out *Recording, baseline bool) error {
	type into struct {
		ns, node string
		into     *RecordedNode
	}
	sides := []into{{KubeletNamespace, KubeletNode, &out.Kubelet}, {NodestateNamespace, NodestateNode, &out.Nodestate}}
	if baseline {
		sides = append(sides, into{BaselineNamespace, BaselineNode, &out.Baseline})
	}
	for _, side := range sides {
		hs, err := rec.histories(side.ns)
		if err != nil {
			return err
		}
		evs, err := listEvents(ctx, e.admin, side.ns)
		if err != nil {
			return err
		}
		n, err := e.admin.CoreV1().Nodes().Get(ctx, side.node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		*side.into = RecordedNode{Pods: hs, Events: evs, Node: n}
	}
	return nil
}

// Compare compares a recording: each workload's pods, paired by creation
// order (a controller's interchangeable pods by the pairing that differs
// least, bestPairing), and the Node objects. dump, when it holds for a workload, puts its
// pods' statuses in full into the report.
func Compare(rec *Recording, tol Tolerances, known []Known, dump func(workload string) bool) *Report {
	rep := &Report{Tolerances: tol, Elapsed: rec.Elapsed, OracleBefore: rec.OracleBefore, OracleAfter: rec.OracleAfter, Baseline: rec.Baseline.Node != nil}
	hostIPs := nodeIPs(rec.Kubelet.Node, rec.Nodestate.Node, rec.Baseline.Node)
	wk, wn, wb := byWorkload(rec.Kubelet.Pods), byWorkload(rec.Nodestate.Pods), byWorkload(rec.Baseline.Pods)
	for _, w := range rec.Workloads {
		wr := WorkloadReport{Name: w.Name, What: w.What, Errors: w.Errors}
		// compareWith compares a pair of copies, the first on node a (in
		// the kubelet's place), the second on node b.
		compareWith := func(a, b *RecordedNode, an, bn string, known []Known) func(p [2]*history) PodReport {
			return func(p [2]*history) PodReport {
				k := &side{h: p[0], events: a.Events, node: an, end: w.End}
				n := &side{h: p[1], events: b.Events, node: bn, end: w.End}
				pr := comparePod(k, n, hostIPs, tol, known, w.Name)
				if dump != nil && dump(w.Name) {
					pr.Dump = dumpPair(k, n, hostIPs)
				}
				return pr
			}
		}
		pairs := pairPods(wk[w.Name], wn[w.Name])
		for _, p := range pairs {
			if p[0] == nil || p[1] == nil {
				wr.Unpaired = append(wr.Unpaired, unpaired(p))
			}
		}
		wr.Pods = append(wr.Pods, bestPairing(pairs, compareWith(&rec.Kubelet, &rec.Nodestate, KubeletNode, NodestateNode, known))...)
		if rec.Baseline.Node != nil && !wr.Equal() {
			wr.Baseline = explain(&wr, wk[w.Name], wn[w.Name], wb[w.Name],
				compareWith(&rec.Kubelet, &rec.Baseline, KubeletNode, BaselineNode, nil),
				compareWith(&rec.Baseline, &rec.Nodestate, BaselineNode, NodestateNode, known))
		}
		rep.Workloads = append(rep.Workloads, wr)
	}
	nr, err := compareNodes(rec.Kubelet.Node, rec.Nodestate.Node, known)
	if err != nil {
		rep.Node = NodeReport{Differences: []Difference{{Path: "(normalising the Nodes)", Kubelet: err.Error()}}}
	} else {
		rep.Node = nr
	}
	return rep
}

// maxInterchangeable is the most pods of one workload on each node whose
// pairings bestPairing tries (4! = 24).
const maxInterchangeable = 4

// bestPairing compares the paired pods of a workload. A controller creates
// its pods in one batch, from one template, so the order in which two of
// them are created, bound and synced is chance, and so is which of them
// pulls the image the other then finds present: with up to
// maxInterchangeable pods on each node, every pairing of the nodestate
// pods with the kubelet's is compared and the one with the fewest
// undocumented differences kept (the creation order on a tie). Pods one
// node lacks are left out (they are reported unpaired).
func bestPairing(pairs [][2]*history, compare func([2]*history) PodReport) []PodReport {
	var ks, ns []*history
	for _, p := range pairs {
		if p[0] != nil && p[1] != nil {
			ks, ns = append(ks, p[0]), append(ns, p[1])
		}
	}
	var best []PodReport
	bestCost := -1
	perm := make([]int, len(ns))
	for i := range perm {
		perm[i] = i
	}
	for {
		reports := make([]PodReport, len(ks))
		cost := 0
		for i := range ks {
			reports[i] = compare([2]*history{ks[i], ns[perm[i]]})
			cost += len(reports[i].Statuses) + len(reports[i].Events)
		}
		if bestCost < 0 || cost < bestCost {
			best, bestCost = reports, cost
		}
		if bestCost == 0 || len(ns) > maxInterchangeable || !nextPermutation(perm) {
			return best
		}
	}
}

// nextPermutation turns p into the next permutation in lexicographic
// order and reports whether there was one.
func nextPermutation(p []int) bool {
	i := len(p) - 2
	for i >= 0 && p[i] >= p[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(p) - 1
	for p[j] <= p[i] {
		j--
	}
	p[i], p[j] = p[j], p[i]
	for l, r := i+1, len(p)-1; l < r; l, r = l+1, r-1 {
		p[l], p[r] = p[r], p[l]
	}
	return true
}

func unpaired(p [2]*history) string {
	if p[0] != nil {
		return "kubelet's pod " + p[0].Name + " has no counterpart on nodestate"
	}
	return "nodestate's pod " + p[1].Name + " has no counterpart on the kubelet"
}

func nodeIPs(ns ...*corev1.Node) []string {
	var out []string
	for _, n := range ns {
		if n == nil {
			continue
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP {
				out = append(out, a.Address)
			}
		}
	}
	return out
}

// makeNamespace creates ns and waits for its default ServiceAccount, which
// the ServiceAccount admission plugin wants before it admits a pod.
func makeNamespace(ctx context.Context, c kubernetes.Interface, ns string) error {
	_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("compare: namespace %s: %w", ns, err)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
