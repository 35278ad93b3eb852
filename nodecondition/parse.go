package nodecondition

import (
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
			return nil, &ScenarioError{Reason: "interval " + strconv.Quote(part) + ": want FROM-TO or FROM-"}
		}
		f, err := time.ParseDuration(from)
		if err != nil || f < 0 {
			return nil, &ScenarioError{Reason: "interval " + strconv.Quote(part) + ": bad start"}
		}
		iv := Interval{From: f}
		if to != "" {
			t, err := time.ParseDuration(to)
			if err != nil || t <= f {
				return nil, &ScenarioError{Reason: "interval " + strconv.Quote(part) + ": end must be a duration after the start"}
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
//	duration 7m
//	seed 1
//	grace 50s
//	node node-1 zone=zone-a down=0s- network=30s-50s runtime=1m-2m memory=60s:50Mi,120s:4Gi pods=a:none,b:default,c:0,d:forever,e:120
//	node node-2 lease=0s- status=1m-3m
//
// down stops the kubelet, lease fails its lease renewals, status fails its
// status PATCHes, network and runtime make Ready False.
// A pod's toleration is "default" (the 300 s admission defaults), "none" (no
// toleration at all), "forever" (not-ready and unreachable with no seconds)
// or a number of seconds for both.
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
		bad := func(reason string) error {
			return &ScenarioError{Reason: "line " + strconv.Itoa(ln+1) + ": " + reason}
		}
		switch fields[0] {
		case "name":
			sc.Name = strings.Join(fields[1:], " ")
		case "duration", "grace":
			if len(fields) != 2 {
				return Scenario{}, bad(fields[0] + " takes one duration")
			}
			d, err := time.ParseDuration(fields[1])
			if err != nil {
				return Scenario{}, bad("unparseable " + fields[0])
			}
			if fields[0] == "duration" {
				sc.Duration = d
			} else {
				if sc.Controller == (ControllerConfig{}) {
					sc.Controller = DefaultControllerConfig()
				}
				sc.Controller.GracePeriod = d
			}
		case "seed":
			if len(fields) != 2 {
				return Scenario{}, bad("seed takes one number")
			}
			n, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return Scenario{}, bad("unparseable seed")
			}
			sc.Seed = n
		case "node":
			if len(fields) < 2 {
				return Scenario{}, bad("node needs a name")
			}
			n := SimNode{Name: fields[1]}
			for _, kv := range fields[2:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return Scenario{}, bad("want key=value, got " + strconv.Quote(kv))
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
					return Scenario{}, bad("unknown node key " + strconv.Quote(k))
				}
				if err != nil {
					return Scenario{}, bad(err.Error())
				}
			}
			sc.Nodes = append(sc.Nodes, n)
		default:
			return Scenario{}, bad("unknown directive " + strconv.Quote(fields[0]))
		}
	}
	if err := sc.Validate(); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}

func parseMemory(s string) ([]SignalStep, error) {
	var out []SignalStep
	for _, part := range strings.Split(s, ",") {
		at, q, ok := strings.Cut(part, ":")
		if !ok {
			return nil, &ScenarioError{Reason: "memory step " + strconv.Quote(part) + ": want TIME:QUANTITY"}
		}
		d, err := time.ParseDuration(at)
		if err != nil || d < 0 {
			return nil, &ScenarioError{Reason: "memory step " + strconv.Quote(part) + ": bad time"}
		}
		qty, err := resource.ParseQuantity(q)
		if err != nil || qty.Sign() < 0 {
			return nil, &ScenarioError{Reason: "memory step " + strconv.Quote(part) + ": bad quantity"}
		}
		v, ok := qty.AsInt64()
		if !ok || v > 16<<30 {
			return nil, &ScenarioError{Reason: "memory step " + strconv.Quote(part) + ": more than the 16Gi capacity"}
		}
		out = append(out, SignalStep{At: d, Signal: SignalMemoryAvailable, Available: v, Capacity: 16 << 30})
	}
	return out, nil
}

func parsePods(s string) ([]SimPod, error) {
	var out []SimPod
	for _, part := range strings.Split(s, ",") {
		name, kind, _ := strings.Cut(part, ":")
		p := SimPod{Name: name}
		switch kind {
		case "", "default":
		case "none":
			p.NoDefaultTolerations = true
		case "forever":
			p.Tolerations = []v1.Toleration{
				{Key: TaintNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
				{Key: TaintUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}
		default:
			n, err := strconv.ParseInt(kind, 10, 64)
			if err != nil {
				return nil, &ScenarioError{Reason: "pod " + strconv.Quote(part) + ": toleration must be default, none, forever or seconds"}
			}
			p.Tolerations = []v1.Toleration{
				{Key: TaintNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: i64(n)},
				{Key: TaintUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: i64(n)}}
		}
		out = append(out, p)
	}
	return out, nil
}
