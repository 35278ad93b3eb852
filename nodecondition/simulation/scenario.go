package simulation

import (
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/kubeversion"
	nc "github.com/nodestate/nodestate/nodecondition"
)

// MessageNetworkPluginNotReady is the Ready message a simulated network outage uses.
const MessageNetworkPluginNotReady = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"

// Simulation limits, so that a scenario from outside cannot run away.
const (
	MaxDuration     = 24 * time.Hour
	MaxNodes        = 1000
	MaxPods         = 10000
	MaxSteps        = 50_000_000 // loop ticks, all nodes and all window runs together
	MaxWindowPhases = 100
)

// Interval is a span of scenario time [From, To); To == 0 means until the end.
type Interval struct {
	From, To time.Duration // scenario times; To == 0 is open
}

func (iv Interval) contains(t time.Duration) bool {
	return t >= iv.From && (iv.To == 0 || t < iv.To)
}

// SignalStep sets one signal of a node from At on.
type SignalStep struct {
	At        time.Duration // scenario time the value applies from
	Signal    nc.Signal     // the signal set
	Available int64         // its available amount
	Capacity  int64         // its capacity
}

// Pod is a pod bound to a simulated node, running at the start.
type Pod struct {
	// Name is the pod's name; pods live in the "default" namespace.
	Name string
	// Tolerations are the pod's own tolerations; unless the scenario turns
	// the DefaultTolerationSeconds admission plugin off, the 300 s not-ready
	// and unreachable tolerations are added as the API server would.
	Tolerations []v1.Toleration
	// NoReadyCondition leaves the pod without a Ready condition (a pod the
	// kubelet has not started yet): the controller never marks such a pod
	// not ready.
	NoReadyCondition bool
}

// Node is one node of a scenario and the schedule of its kubelet.
type Node struct {
	// Name is the node's name, unique in the scenario.
	Name string
	// Zone is the node's topology.kubernetes.io/zone label; "" for none.
	Zone string
	// ExcludeDisruption sets the exclude-disruption label.
	ExcludeDisruption bool
	// Down are the spans in which the kubelet is stopped: no status, no lease,
	// no eviction pass. Coming back is a kubelet restart.
	Down []Interval
	// LeaseDown are the spans in which lease renewals fail (the kubelet
	// retries with its back-off); status reports still go through.
	LeaseDown []Interval
	// StatusDown are the spans in which status PATCHes fail; the lease is
	// still renewed.
	StatusDown []Interval
	// RuntimeDown are the spans in which the runtime is down (Ready False).
	RuntimeDown []Interval
	// NetworkDown are the spans in which the network plugin is not ready (Ready False).
	NetworkDown []Interval
	// Signals change the eviction signals over time; unset signals stay plentiful.
	Signals []SignalStep
	// Pods run on the node, in the "default" namespace.
	Pods []Pod
}

// Scenario is a schedule of kubelets, their signals and pods, run by Simulate.
// At t=0 every kubelet has just posted its status and renewed its lease.
// The zero value of each field is the default (and the behaviour of earlier
// releases).
type Scenario struct {
	Name       string               // a title for the timeline
	Start      time.Time            // the wall time of t=0; zero means 2026-01-01 00:00 UTC
	Duration   time.Duration        // how much scenario time to run
	Kubelet    nc.KubeletOptions    // zero value means nc.DefaultKubeletOptionsFor(Version); Rand is ignored (Seed is used)
	Controller nc.ControllerOptions // zero value means nc.DefaultControllerOptionsFor(Version)
	Seed       uint64               // seeds the report jitter
	Nodes      []Node               // the nodes and their kubelets' schedules

	// Version is the Kubernetes minor of the kubelets and the controller
	// whose options are left zero (docs/versions.md rows NC-V1 to NC-V3);
	// options set explicitly carry their own Version. The zero Version is
	// 1.37; Validate and Simulate refuse a value that is none of
	// kubeversion's constants, even when both options are set.
	Version kubeversion.Version

	// MonitorPhase is when the controller's first monitor pass runs, in
	// [0, MonitorPeriod). 0 runs it at t=0, right after the kubelets' first
	// report and lease renewal.
	MonitorPhase time.Duration
	// MonitorPassDuration is how long one monitor pass takes. The real
	// controller starts its next pass a monitor period after the previous one
	// ended (wait.Until with a sliding period), so its passes drift by their
	// duration and the pass that marks a node Unknown is the tenth after the
	// one that saw its last heartbeat, not the eleventh: measured on
	// kube-controller-manager v1.37.2, Unknown came 50.96 to 54.14 s after
	// the last renewal. 0 runs the passes exactly a period apart. It must be
	// shorter than the monitor period.
	MonitorPassDuration time.Duration
	// WindowPhases, when positive, also runs the scenario with the first
	// monitor pass at WindowPhases phases spread evenly over [0,
	// MonitorPeriod) and states in each entry the earliest and latest time it
	// came across them (Entry.Earliest, Entry.Latest): the window a real
	// controller, whose phase nobody chooses, can land in. At most
	// MaxWindowPhases.
	WindowPhases int
	// NoDefaultTolerationSeconds turns the DefaultTolerationSeconds
	// admission plugin off (kube-apiserver --disable-admission-plugins). On a
	// default API server it is on, and every pod without its own not-ready or
	// unreachable NoExecute toleration gets one for 300 s.
	NoDefaultTolerationSeconds bool
}

func (s *Scenario) withDefaults() Scenario {
	out := *s
	if out.Start.IsZero() {
		out.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if out.Kubelet.StatusUpdateFrequency == 0 && out.Kubelet.LeaseDuration == 0 {
		th := out.Kubelet.Thresholds
		out.Kubelet = nc.DefaultKubeletOptionsFor(out.Version)
		if th != nil {
			out.Kubelet.Thresholds = th
		}
	}
	if out.Kubelet.Thresholds == nil {
		out.Kubelet.Thresholds = nc.DefaultHardThresholds()
	}
	if out.Controller == (nc.ControllerOptions{}) {
		out.Controller = nc.DefaultControllerOptionsFor(out.Version)
	}
	return out
}

// Validate reports why a scenario cannot run, as a *ScenarioError (which
// wraps the *nodecondition.OptionError when the options are at fault, and
// the *kubeversion.ValueError when Version is none of kubeversion's
// constants, so that errors.Is matches kubeversion.ErrUnsupportedVersion
// too; an invalid Version in Kubelet or Controller matches it through the
// nodecondition error).
func (s *Scenario) Validate() error {
	if s == nil {
		return invalid("no scenario")
	}
	if err := s.Version.Validate(); err != nil {
		return &ScenarioError{Reason: "Version", Err: err}
	}
	sc := s.withDefaults()
	opts := nc.Options{Kubelet: sc.Kubelet, Controller: sc.Controller}
	if err := opts.Validate(); err != nil {
		return &ScenarioError{Err: err}
	}
	if sc.Duration <= 0 || sc.Duration > MaxDuration {
		return invalid("duration " + sc.Duration.String() + " outside (0, " + MaxDuration.String() + "]")
	}
	period := sc.Controller.MonitorPeriod
	if sc.MonitorPhase < 0 || sc.MonitorPhase >= period {
		return invalid("monitor phase " + sc.MonitorPhase.String() + " outside [0, " + period.String() + ")")
	}
	if sc.MonitorPassDuration < 0 || sc.MonitorPassDuration >= period {
		return invalid("monitor pass duration " + sc.MonitorPassDuration.String() + " outside [0, " + period.String() + ")")
	}
	if sc.WindowPhases < 0 || sc.WindowPhases > MaxWindowPhases {
		return invalid("window phases " + strconv.Itoa(sc.WindowPhases) + " outside [0, " + strconv.Itoa(MaxWindowPhases) + "]")
	}
	if len(sc.Nodes) == 0 || len(sc.Nodes) > MaxNodes {
		return invalid("needs 1 to " + strconv.Itoa(MaxNodes) + " nodes, got " + strconv.Itoa(len(sc.Nodes)))
	}
	names := map[string]bool{}
	podNames := map[string]bool{} // pods share the "default" namespace
	pods := 0
	for _, n := range sc.Nodes {
		if n.Name == "" {
			return invalid("a node has no name")
		}
		if names[n.Name] {
			return &ScenarioError{Node: n.Name, Reason: "node given twice"}
		}
		names[n.Name] = true
		for _, ivs := range [][]Interval{n.Down, n.LeaseDown, n.StatusDown, n.RuntimeDown, n.NetworkDown} {
			for _, iv := range ivs {
				if iv.From < 0 || (iv.To != 0 && iv.To <= iv.From) {
					return &ScenarioError{Node: n.Name, Reason: "interval [" + iv.From.String() + ", " + iv.To.String() + ") is empty or negative"}
				}
			}
		}
		for _, st := range n.Signals {
			if int(st.Signal) >= nc.NumSignals || st.At < 0 || st.Available < 0 || st.Capacity < 0 {
				return &ScenarioError{Node: n.Name, Reason: "signal step " + st.Signal.String() + " at " + st.At.String() + " is invalid"}
			}
		}
		for _, p := range n.Pods {
			if p.Name == "" || podNames[p.Name] {
				return &ScenarioError{Node: n.Name, Reason: "pod name " + strconv.Quote(p.Name) + " empty or given twice in the scenario"}
			}
			podNames[p.Name] = true
		}
		pods += len(n.Pods)
	}
	if pods > MaxPods {
		return invalid("more than " + strconv.Itoa(MaxPods) + " pods")
	}
	// Bound the work: every loop tick of every node over the whole run, for
	// every run of the window.
	kc, cc := sc.Kubelet, sc.Controller
	kubelet := min(kc.StatusUpdateFrequency, kc.EvictionMonitoringInterval, kc.LeaseRenewInterval())
	controller := min(cc.MonitorPeriod, cc.TaintingPeriod)
	steps := (float64(sc.Duration)/float64(kubelet)*float64(len(sc.Nodes)) + float64(sc.Duration)/float64(controller)) * float64(1+sc.WindowPhases)
	if steps > MaxSteps {
		return invalid("periods too short for the duration: about " + strconv.FormatFloat(steps, 'g', 3, 64) + " loop ticks, at most " + strconv.Itoa(MaxSteps))
	}
	return nil
}
