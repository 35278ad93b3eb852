package simulation

import (
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodestate/nodestate/kubeversion"
	nc "github.com/nodestate/nodestate/nodecondition"
)

// ParseIntervals parses spans such as "30s-50s,200s-" (an open end runs to
// the end of the scenario).
func ParseIntervals(s string) ([]Interval, error) {
	var out []Interval
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		from, to, ok := strings.Cut(part, "-")
		if !ok {
			return nil, invalid("interval " + strconv.Quote(part) + ": want FROM-TO or FROM-")
		}
		f, err := time.ParseDuration(from)
		if err != nil || f < 0 {
			return nil, invalid("interval " + strconv.Quote(part) + ": bad start")
		}
		iv := Interval{From: f}
		if to != "" {
			t, err := time.ParseDuration(to)
			if err != nil || t <= f {
				return nil, invalid("interval " + strconv.Quote(part) + ": end must be a duration after the start")
			}
			iv.To = t
		}
		out = append(out, iv)
	}
	return out, nil
}

// ParseScenario reads a scenario from text, one directive per line ("#"
// starts a comment):
//
//	name kubelet stops
//	version 1.34          # the kubelets' and controller's minor (default 1.37)
//	duration 7m
//	seed 1
//	grace 50s
//	phase 2s              # the first monitor pass at 2 s
//	pass-duration 10ms    # each monitor pass takes 10 ms
//	window 10             # state each entry's window over 10 monitor phases
//	default-tolerations off
//	node node-1 zone=a down=0s- network=30s-50s runtime=1m-2m memory=60s:50Mi,120s:4Gi pods=a,b:default,c:0,d:forever,e:120,f:pending
//	node node-2 lease=0s- status=1m-3m
//
// down stops the kubelet, lease fails its lease renewals, status fails its
// status PATCHes, network and runtime make Ready False. A pod's kind is
// "none" (the default: no toleration of its own), "default" (its own 300 s
// not-ready and unreachable tolerations), "forever" (not-ready and
// unreachable with no seconds), a number of seconds for both, or "pending"
// (no toleration of its own and no Ready condition yet).
// "default-tolerations off" turns the DefaultTolerationSeconds admission
// plugin off, so pods keep only their own tolerations.
func ParseScenario(text string) (Scenario, error) {
	var sc Scenario
	sc.Duration = 7 * time.Minute
	for ln, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if err := sc.directive(fields); err != nil {
			if se, ok := err.(*ScenarioError); ok {
				se.Line = ln + 1
				return Scenario{}, se
			}
			return Scenario{}, &ScenarioError{Line: ln + 1, Err: err}
		}
	}
	if err := sc.Validate(); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}

func (sc *Scenario) controller() *nc.ControllerOptions {
	if sc.Controller == (nc.ControllerOptions{}) {
		sc.Controller = nc.DefaultControllerOptionsFor(sc.Version)
	}
	return &sc.Controller
}

// directive applies one line of scenario text.
func (sc *Scenario) directive(fields []string) error {
	oneDuration := func() (time.Duration, error) {
		if len(fields) != 2 {
			return 0, invalid(fields[0] + " takes one duration")
		}
		d, err := time.ParseDuration(fields[1])
		if err != nil {
			return 0, invalid("unparseable " + fields[0] + " " + strconv.Quote(fields[1]))
		}
		return d, nil
	}
	oneNumber := func() (uint64, error) {
		if len(fields) != 2 {
			return 0, invalid(fields[0] + " takes one number")
		}
		n, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			return 0, invalid("unparseable " + fields[0] + " " + strconv.Quote(fields[1]))
		}
		return n, nil
	}
	var err error
	switch fields[0] {
	case "name":
		sc.Name = strings.Join(fields[1:], " ")
	case "version":
		if len(fields) != 2 {
			return invalid("version takes one Kubernetes version")
		}
		var v kubeversion.Version
		if v, err = kubeversion.Parse(fields[1]); err != nil {
			return &ScenarioError{Err: err}
		}
		sc.Version = v
		if sc.Controller != (nc.ControllerOptions{}) {
			// a "grace" line came first: the rest of the controller's
			// options follow the version.
			d := nc.DefaultControllerOptionsFor(v)
			sc.Controller.Version, sc.Controller.LeaseCircuitBreaker = d.Version, d.LeaseCircuitBreaker
		}
	case "duration":
		sc.Duration, err = oneDuration()
	case "grace":
		sc.controller().GracePeriod, err = oneDuration()
	case "phase":
		sc.MonitorPhase, err = oneDuration()
	case "pass-duration":
		sc.MonitorPassDuration, err = oneDuration()
	case "seed":
		sc.Seed, err = oneNumber()
	case "window":
		var n uint64
		n, err = oneNumber()
		if err == nil && n > MaxWindowPhases {
			err = invalid("window takes at most " + strconv.Itoa(MaxWindowPhases) + " phases")
		}
		sc.WindowPhases = int(n)
	case "default-tolerations":
		if len(fields) != 2 || (fields[1] != "on" && fields[1] != "off") {
			return invalid("default-tolerations takes on or off")
		}
		sc.NoDefaultTolerationSeconds = fields[1] == "off"
	case "node":
		var n Node
		if n, err = parseNode(fields[1:]); err == nil {
			sc.Nodes = append(sc.Nodes, n)
		}
	default:
		return invalid("unknown directive " + strconv.Quote(fields[0]))
	}
	return err
}

// parseNode reads a "node" line after its directive: the name, then
// key=value pairs.
func parseNode(fields []string) (Node, error) {
	if len(fields) < 1 {
		return Node{}, invalid("node needs a name")
	}
	n := Node{Name: fields[0]}
	for _, kv := range fields[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Node{}, invalid("want key=value, got " + strconv.Quote(kv))
		}
		var err error
		switch k {
		case "zone":
			n.Zone = v
		case "down":
			n.Down, err = ParseIntervals(v)
		case "lease":
			n.LeaseDown, err = ParseIntervals(v)
		case "status":
			n.StatusDown, err = ParseIntervals(v)
		case "network":
			n.NetworkDown, err = ParseIntervals(v)
		case "runtime":
			n.RuntimeDown, err = ParseIntervals(v)
		case "memory":
			n.Signals, err = parseMemory(v)
		case "pods":
			n.Pods, err = parsePods(v)
		default:
			return Node{}, invalid("unknown node key " + strconv.Quote(k))
		}
		if err != nil {
			return Node{}, err
		}
	}
	return n, nil
}

func parseMemory(s string) ([]SignalStep, error) {
	var out []SignalStep
	for _, part := range strings.Split(s, ",") {
		at, q, ok := strings.Cut(part, ":")
		if !ok {
			return nil, invalid("memory step " + strconv.Quote(part) + ": want TIME:QUANTITY")
		}
		d, err := time.ParseDuration(at)
		if err != nil || d < 0 {
			return nil, invalid("memory step " + strconv.Quote(part) + ": bad time")
		}
		qty, err := resource.ParseQuantity(q)
		if err != nil || qty.Sign() < 0 {
			return nil, invalid("memory step " + strconv.Quote(part) + ": bad quantity")
		}
		v, ok := qty.AsInt64()
		if !ok || v > 16<<30 {
			return nil, invalid("memory step " + strconv.Quote(part) + ": more than the 16Gi capacity")
		}
		out = append(out, SignalStep{At: d, Signal: nc.SignalMemoryAvailable, Available: v, Capacity: 16 << 30})
	}
	return out, nil
}

func i64(v int64) *int64 { return &v }

// tolerationsFor returns not-ready and unreachable NoExecute tolerations
// with seconds (nil: forever).
func tolerationsFor(seconds *int64) []v1.Toleration {
	return []v1.Toleration{
		{Key: nc.TaintNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds},
		{Key: nc.TaintUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds}}
}

func parsePods(s string) ([]Pod, error) {
	var out []Pod
	for _, part := range strings.Split(s, ",") {
		name, kind, _ := strings.Cut(part, ":")
		p := Pod{Name: name}
		switch kind {
		case "", "none":
		case "pending":
			p.NoReadyCondition = true
		case "default":
			p.Tolerations = nc.WithDefaultTolerations(nil, nc.DefaultTolerationSeconds, nc.DefaultTolerationSeconds)
		case "forever":
			p.Tolerations = tolerationsFor(nil)
		default:
			n, err := strconv.ParseInt(kind, 10, 64)
			if err != nil {
				return nil, invalid("pod " + strconv.Quote(part) + ": kind must be none, default, forever, pending or seconds")
			}
			p.Tolerations = tolerationsFor(i64(n))
		}
		out = append(out, p)
	}
	return out, nil
}
