package explain

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/nodecondition/simulation"
)

// LabelExcludeDisruption is the label that keeps a node out of its zone's
// disruption count.
const LabelExcludeDisruption = "node.kubernetes.io/exclude-disruption"

// NodeInput is what Node needs, fetched from the API.
type NodeInput struct {
	// Node is the node to explain. Required.
	Node *corev1.Node
	// Lease is the node's Lease in kube-node-lease; nil when it has none.
	Lease *coordinationv1.Lease
	// Pods are the pods bound to the node.
	Pods []corev1.Pod
	// Others are the cluster's other nodes: they make up the zones whose
	// health decides how fast the controller taints and whether it evicts.
	Others []corev1.Node
	// Controller are the node-lifecycle controller's settings; the zero
	// value is nodecondition.DefaultControllerOptions.
	Controller nc.ControllerOptions
	// Now is the current time.
	Now time.Time
}

// NodeReport explains one node.
type NodeReport struct {
	Name       string      `json:"name"`
	Conditions []Condition `json:"conditions,omitempty"`
	Lease      *Lease      `json:"lease,omitempty"`
	Taints     []Taint     `json:"taints,omitempty"`
	Pods       int         `json:"pods"`
	// Prediction is what happens if the node stopped renewing its Lease
	// now, counted from its last renewal (or now, without a Lease).
	Prediction Prediction `json:"prediction"`

	now time.Time
}

// Lease is the node's heartbeat Lease.
type Lease struct {
	Holder          string    `json:"holder,omitempty"`
	RenewTime       time.Time `json:"renewTime,omitzero"`
	Age             string    `json:"age"`
	DurationSeconds int32     `json:"durationSeconds,omitempty"`
}

// Taint is a node taint.
type Taint struct {
	Key       string    `json:"key"`
	Value     string    `json:"value,omitempty"`
	Effect    string    `json:"effect"`
	TimeAdded time.Time `json:"timeAdded,omitzero"`
}

// Prediction is nodecondition's simulated timeline for the node.
type Prediction struct {
	// From is the node's last sign of life the times count from: its last
	// Lease renewal or status heartbeat, whichever is later (now for a node
	// with neither).
	From time.Time `json:"from"`
	// GracePeriod, MonitorPeriod and EvictionRate are the controller
	// settings the simulation ran with.
	GracePeriod   string  `json:"nodeMonitorGracePeriod"`
	MonitorPeriod string  `json:"nodeMonitorPeriod"`
	EvictionRate  float64 `json:"nodeEvictionRate"`
	// Horizon is how far the simulation ran.
	Horizon string           `json:"horizon"`
	Steps   []PredictionStep `json:"steps"`
	// Notes say where the prediction is known to be off.
	Notes []string `json:"notes,omitempty"`
}

// PredictionStep is one predicted change.
type PredictionStep struct {
	// Event is "condition", "taint added" or "pod evicted".
	Event string `json:"event"`
	// Subject is the condition's "Type: From -> To", the taint or the pod.
	Subject string `json:"subject"`
	// After is the time after the last renewal at the controller's
	// default loop phase; Earliest and Latest the window across every
	// phase the controller's monitor loop can have. Never is set for a
	// pod not evicted within the horizon.
	After    string    `json:"after,omitempty"`
	Earliest string    `json:"earliest,omitempty"`
	Latest   string    `json:"latest,omitempty"`
	At       time.Time `json:"at,omitzero"`
	AtLatest time.Time `json:"atLatest,omitzero"`
	Never    bool      `json:"never,omitempty"`
	Detail   string    `json:"detail,omitempty"`
}

// Window settings of the prediction: the controller's pass duration and
// how many monitor phases the windows cover, as measured for
// kube-controller-manager v1.37.2 (see nodecondition/simulation).
const (
	passDuration = simulation.NamedPassDuration
	windowPhases = simulation.NamedWindowPhases
)

// Node explains a node and predicts its timeline if it stopped renewing its
// Lease now.
func Node(in NodeInput) (NodeReport, error) {
	if in.Node == nil {
		return NodeReport{}, fmt.Errorf("%w: nil node", ErrInvalidInput)
	}
	node := in.Node
	r := NodeReport{Name: node.Name, Pods: len(in.Pods), now: in.Now}
	for _, c := range node.Status.Conditions {
		r.Conditions = append(r.Conditions, Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			LastTransitionTime: c.LastTransitionTime.Time, LastHeartbeatTime: c.LastHeartbeatTime.Time})
	}
	for _, t := range node.Spec.Taints {
		tt := Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)}
		if t.TimeAdded != nil {
			tt.TimeAdded = t.TimeAdded.Time
		}
		r.Taints = append(r.Taints, tt)
	}
	var from time.Time
	if l := in.Lease; l != nil {
		lr := &Lease{Age: "<never renewed>"}
		if l.Spec.HolderIdentity != nil {
			lr.Holder = *l.Spec.HolderIdentity
		}
		if l.Spec.LeaseDurationSeconds != nil {
			lr.DurationSeconds = *l.Spec.LeaseDurationSeconds
		}
		if l.Spec.RenewTime != nil {
			lr.RenewTime = l.Spec.RenewTime.Time
			lr.Age = age(lr.RenewTime, in.Now)
			from = lr.RenewTime
		}
		r.Lease = lr
	}
	// The controller counts from the node's last sign of life: a Lease
	// renewal or a status heartbeat, whichever came later.
	for _, c := range node.Status.Conditions {
		if c.LastHeartbeatTime.After(from) {
			from = c.LastHeartbeatTime.Time
		}
	}
	if from.IsZero() {
		from = in.Now
	}
	opts := in.Controller
	if opts == (nc.ControllerOptions{}) {
		opts = nc.DefaultControllerOptions()
	}
	p, err := predict(node, in.Pods, in.Others, opts, from)
	if err != nil {
		return NodeReport{}, err
	}
	if !hasReady(node) {
		p.Notes = append(p.Notes, fmt.Sprintf("%s has not posted a Ready condition: the controller gives it the startup grace period (%v) from its creation instead, so it turns Unknown later than predicted",
			node.Name, opts.StartupGracePeriod))
	}
	r.Prediction = p
	return r, nil
}

// predict runs the simulation of node going silent at from, with its pods'
// own tolerations (the live pods already carry what DefaultTolerationSeconds
// added) and the other nodes of the cluster in their zones.
func predict(node *corev1.Node, pods []corev1.Pod, others []corev1.Node, opts nc.ControllerOptions, from time.Time) (Prediction, error) {
	self := simulation.Node{Name: node.Name, Zone: node.Labels[corev1.LabelTopologyZone], Down: []simulation.Interval{{From: 0}},
		ExcludeDisruption: hasLabel(node, LabelExcludeDisruption)}
	var longest time.Duration
	names := map[string]string{} // simulated pod name -> namespace/name
	for i, pod := range pods {
		sim := "p" + strconv.Itoa(i)
		names["default/"+sim] = pod.Namespace + "/" + pod.Name
		ready := false
		for _, c := range pod.Status.Conditions {
			ready = ready || c.Type == corev1.PodReady
		}
		self.Pods = append(self.Pods, simulation.Pod{Name: sim, Tolerations: pod.Spec.Tolerations, NoReadyCondition: !ready})
		for _, t := range pod.Spec.Tolerations {
			if t.Effect == corev1.TaintEffectNoExecute && t.TolerationSeconds != nil && *t.TolerationSeconds > 0 {
				longest = max(longest, time.Duration(*t.TolerationSeconds)*time.Second)
			}
		}
	}
	sc := simulation.Scenario{Name: "node " + node.Name + " stops renewing its lease", Start: from, Controller: opts,
		Nodes: []simulation.Node{self}, MonitorPassDuration: passDuration, WindowPhases: windowPhases, NoDefaultTolerationSeconds: true}
	for _, o := range others {
		if o.Name == node.Name || len(sc.Nodes) >= simulation.MaxNodes {
			continue
		}
		n := simulation.Node{Name: o.Name, Zone: o.Labels[corev1.LabelTopologyZone], ExcludeDisruption: hasLabel(&o, LabelExcludeDisruption)}
		if !nodeReady(&o) {
			n.Down = []simulation.Interval{{From: 0}}
		}
		sc.Nodes = append(sc.Nodes, n)
	}
	sort.Slice(sc.Nodes[1:], func(i, j int) bool { return sc.Nodes[1+i].Name < sc.Nodes[1+j].Name })
	// Long enough for the node to be tainted (which the zone's rate can
	// delay) and for its longest-tolerating pod to be evicted.
	sc.Duration = min(opts.GracePeriod+2*opts.MonitorPeriod+taintDelay(len(sc.Nodes), opts)+longest+time.Minute, simulation.MaxDuration)
	tl, err := simulation.Simulate(sc)
	if err != nil {
		return Prediction{}, err
	}
	p := Prediction{From: from, GracePeriod: opts.GracePeriod.String(), MonitorPeriod: opts.MonitorPeriod.String(),
		EvictionRate: opts.EvictionRate, Horizon: sc.Duration.String()}
	evicted := map[string]bool{}
	has := map[string]bool{}
	for _, c := range node.Status.Conditions {
		has[string(c.Type)] = true
	}
	for _, e := range tl.Entries {
		if e.Node != node.Name {
			continue
		}
		var s PredictionStep
		switch e.Kind {
		case simulation.KindCondition:
			if len(has) > 0 && !has[e.Subject] {
				continue // a condition the simulated kubelet reports and this node does not
			}
			s = PredictionStep{Event: "condition", Subject: fmt.Sprintf("%s: %s -> %s", e.Subject, e.From, e.To), Detail: e.Detail}
		case simulation.KindTaintAdded:
			s = PredictionStep{Event: "taint added", Subject: e.Subject}
		case simulation.KindPodDeleted:
			s = PredictionStep{Event: "pod evicted", Subject: names[e.Subject], Detail: e.Detail}
			evicted[e.Subject] = true
		default:
			continue
		}
		s.After, s.Earliest, s.Latest = short(e.At), short(e.Earliest), short(e.Latest)
		s.At, s.AtLatest = from.Add(e.Earliest), from.Add(e.Latest)
		if tl.Phases == 0 {
			s.Earliest, s.Latest, s.At, s.AtLatest = s.After, s.After, from.Add(e.At), from.Add(e.At)
		}
		p.Steps = append(p.Steps, s)
	}
	for i := range pods {
		sim := "default/p" + strconv.Itoa(i)
		if !evicted[sim] {
			p.Steps = append(p.Steps, PredictionStep{Event: "pod evicted", Subject: names[sim], Never: true,
				Detail: "not within " + sc.Duration.String() + ": " + tolerationOf(pods[i].Spec.Tolerations)})
		}
	}
	return p, nil
}

// taintDelay bounds how long the zone's rate limiter can hold the taint.
func taintDelay(nodes int, opts nc.ControllerOptions) time.Duration {
	if opts.EvictionRate <= 0 || opts.EvictionRate > 1e6 {
		return 0
	}
	return time.Duration(float64(nodes)/opts.EvictionRate*float64(time.Second)) + time.Second
}

func tolerationOf(ts []corev1.Toleration) string {
	for _, t := range ts {
		if t.Effect != corev1.TaintEffectNoExecute && t.Effect != "" {
			continue
		}
		if t.Operator == corev1.TolerationOpExists && t.Key == "" {
			return "tolerates every NoExecute taint"
		}
		if t.Key == corev1.TaintNodeUnreachable {
			if t.TolerationSeconds == nil {
				return "tolerates unreachable forever"
			}
			return fmt.Sprintf("tolerates unreachable for %ds", *t.TolerationSeconds)
		}
	}
	return "no eviction predicted"
}

func hasLabel(n *corev1.Node, key string) bool {
	_, ok := n.Labels[key]
	return ok
}

func hasReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return true
		}
	}
	return false
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// short renders a scenario offset to a tenth of a second.
func short(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }
