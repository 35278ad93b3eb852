package nodeconditiontest_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	nc "github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/nodecondition/nodeconditiontest"
	sim "github.com/nodestate/nodestate/nodecondition/simulation"
)

// exported lists the exported functions ("F") and the receiver types of
// exported methods ("T") declared in the non-test files of dir.
func exported(t *testing.T, dir string) (funcs, types []string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	seenT := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			if fd.Recv == nil {
				funcs = append(funcs, fd.Name.Name)
				continue
			}
			rt := fd.Recv.List[0].Type
			if st, ok := rt.(*ast.StarExpr); ok {
				rt = st.X
			}
			if id, ok := rt.(*ast.Ident); ok && id.IsExported() && !seenT[id.Name] {
				seenT[id.Name] = true
				types = append(types, id.Name)
			}
		}
	}
	sort.Strings(funcs)
	sort.Strings(types)
	return funcs, types
}

// callZero calls fn with the zero value of every argument and reports a panic.
func callZero(fn reflect.Value) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	ft := fn.Type()
	args := make([]reflect.Value, ft.NumIn())
	for i := range args {
		args[i] = reflect.Zero(ft.In(i))
	}
	if ft.IsVariadic() {
		fn.CallSlice(args)
	} else {
		fn.Call(args)
	}
	return nil
}

// TestNoPanics calls every exported function and method of nodecondition,
// simulation and nodeconditiontest with zero values and nils for every
// argument, and every method on a zero receiver, a constructed one and, for
// the machines, a nil pointer (docs/conventions.md section 2). A new export
// that the tables below lack fails the test, so it cannot be forgotten.
func TestNoPanics(t *testing.T) {
	funcs := map[string]map[string]any{
		"..": {
			"Admit": nc.Admit, "ComputeZoneState": nc.ComputeZoneState, "DefaultControllerOptions": nc.DefaultControllerOptions,
			"DefaultHardThresholds": nc.DefaultHardThresholds, "DefaultKubeletOptions": nc.DefaultKubeletOptions,
			"DefaultOptions": nc.DefaultOptions, "DefaultRunnerOptions": nc.DefaultRunnerOptions, "LeaseRetryDelay": nc.LeaseRetryDelay,
			"MergeDefaultHardThresholds": nc.MergeDefaultHardThresholds, "MinTolerationTime": nc.MinTolerationTime,
			"NewController": nc.NewController, "NewEvictor": nc.NewEvictor, "NewKubelet": nc.NewKubelet,
			"NewLeaseRenewer": nc.NewLeaseRenewer, "NewRunner": nc.NewRunner, "ParseGraceList": nc.ParseGraceList,
			"ParseSignal": nc.ParseSignal, "ParseThresholdList": nc.ParseThresholdList, "ParseThresholds": nc.ParseThresholds,
			"Tolerates": nc.Tolerates, "TolerationTime": nc.TolerationTime, "WithDefaultTolerations": nc.WithDefaultTolerations,
			"ZoneKey": nc.ZoneKey,
		},
		"../simulation": {
			"FormatOffset": sim.FormatOffset, "NamedScenarios": sim.NamedScenarios, "ParseIntervals": sim.ParseIntervals,
			"ParseScenario": sim.ParseScenario, "ScenarioClusterOutage": sim.ScenarioClusterOutage,
			"ScenarioFlappingNetwork": sim.ScenarioFlappingNetwork, "ScenarioKubeletStops": sim.ScenarioKubeletStops,
			"ScenarioMemoryPressure": sim.ScenarioMemoryPressure, "ScenarioZoneOutage": sim.ScenarioZoneOutage, "Simulate": sim.Simulate,
		},
		".": {
			"CheckConditionUpdate": nodeconditiontest.CheckConditionUpdate, "CheckExclusiveNoExecute": nodeconditiontest.CheckExclusiveNoExecute,
			"CheckNeverUnknown": nodeconditiontest.CheckNeverUnknown, "CheckNoEarlyEviction": nodeconditiontest.CheckNoEarlyEviction,
			"CheckNoEvictionInFullDisruption": nodeconditiontest.CheckNoEvictionInFullDisruption, "CheckOrdered": nodeconditiontest.CheckOrdered,
			"CheckRecovery": nodeconditiontest.CheckRecovery, "CheckTimeline": nodeconditiontest.CheckTimeline, "Health": nodeconditiontest.Health,
			"HeartbeatNode": nodeconditiontest.HeartbeatNode, "MaxHeartbeatGap": nodeconditiontest.MaxHeartbeatGap,
			"MemorySeries": nodeconditiontest.MemorySeries, "Outages": nodeconditiontest.Outages, "Pods": nodeconditiontest.Pods,
			"Sample": nodeconditiontest.Sample, "Scenario": nodeconditiontest.Scenario, "ShortOutages": nodeconditiontest.ShortOutages,
			"Tolerations": nodeconditiontest.Tolerations,
		},
	}
	ctrl, _ := nc.NewController(nc.DefaultControllerOptions())
	kubelet, _ := nc.NewKubelet(nc.DefaultKubeletOptions())
	lease, _ := nc.NewLeaseRenewer(nc.DefaultKubeletOptions(), "node-1")
	runner, _ := nc.NewRunner(nc.DefaultRunnerOptions(), ctrl, nopWriter{}, nopWriter{}, nopWriter{})
	tl, _ := sim.Simulate(sim.ScenarioKubeletStops())
	sc := sim.ScenarioKubeletStops()
	// Values of every exported type with methods: the zero value, a
	// constructed one and, for the machines, a nil pointer.
	values := map[string][]any{
		"ZoneState": {new(nc.ZoneState), ptr(nc.ZoneFullDisruption)}, "EvictionAction": {new(nc.EvictionAction), ptr(nc.EvictionNow)},
		"EvictionDecision": {new(nc.EvictionDecision), &nc.EvictionDecision{Action: nc.EvictionCancel}},
		"Evictor":          {new(nc.Evictor), nc.NewEvictor(), (*nc.Evictor)(nil)},
		"Kubelet":          {new(nc.Kubelet), kubelet, (*nc.Kubelet)(nil)},
		"LeaseRenewer":     {new(nc.LeaseRenewer), lease, (*nc.LeaseRenewer)(nil)},
		"Controller":       {new(nc.Controller), ctrl, (*nc.Controller)(nil)},
		"Runner":           {new(nc.Runner), runner, (*nc.Runner)(nil)},
		"Options":          {new(nc.Options), ptr(nc.DefaultOptions())}, "KubeletOptions": {new(nc.KubeletOptions), ptr(nc.DefaultKubeletOptions())},
		"ControllerOptions": {new(nc.ControllerOptions), ptr(nc.DefaultControllerOptions())}, "RunnerOptions": {new(nc.RunnerOptions)},
		"SendReason": {new(nc.SendReason), ptr(nc.Due)}, "Signal": {new(nc.Signal), ptr(nc.Signal(200))}, "Sample": {new(nc.Sample)},
		"ThresholdValue": {new(nc.ThresholdValue)}, "Threshold": {new(nc.Threshold), &nc.DefaultHardThresholds()[1]},
		"Pressures": {new(nc.Pressures), &nc.Pressures{Memory: true}}, "OptionError": {new(nc.OptionError)}, "InputError": {new(nc.InputError)},
		"ThresholdError": {new(nc.ThresholdError)}, "TimeError": {new(nc.TimeError)}, "NotInitializedError": {new(nc.NotInitializedError)},
		"EntryKind": {new(sim.EntryKind), ptr(sim.EntryKind(99))}, "Entry": {new(sim.Entry), &tl.Entries[2]}, "Timeline": {new(sim.Timeline), &tl},
		"Scenario": {new(sim.Scenario), &sc, (*sim.Scenario)(nil)}, "ScenarioError": {new(sim.ScenarioError), &sim.ScenarioError{Line: 2, Err: nc.ErrInvalidInput}},
	}
	for dir, byName := range funcs {
		names, types := exported(t, dir)
		for _, n := range names {
			fn, ok := byName[n]
			if !ok {
				t.Errorf("%s: exported function %s is not in the table of TestNoPanics", dir, n)
				continue
			}
			if err := callZero(reflect.ValueOf(fn)); err != nil {
				t.Errorf("%s.%s with zero arguments: %v", dir, n, err)
			}
		}
		for _, typ := range types {
			vs, ok := values[typ]
			if !ok {
				t.Errorf("%s: type %s with exported methods is not in the table of TestNoPanics", dir, typ)
				continue
			}
			for i, v := range vs {
				rv := reflect.ValueOf(v)
				for m := range rv.NumMethod() {
					name := rv.Type().Method(m).Name
					if rv.IsNil() && !pointerMethod(rv.Type(), name) {
						continue // a value method on a nil pointer is Go's own panic
					}
					if err := callZero(rv.Method(m)); err != nil {
						t.Errorf("%s (value %d of %s).%s with zero arguments: %v", dir, i, typ, name, err)
					}
				}
			}
		}
	}
}

// pointerMethod reports whether method name of pointer type pt has a pointer receiver.
func pointerMethod(pt reflect.Type, name string) bool {
	_, onValue := pt.Elem().MethodByName(name)
	return !onValue
}

func ptr[T any](v T) *T { return &v }

type nopWriter struct{}

func (nopWriter) WriteConditions(context.Context, string, []v1.NodeCondition) error { return nil }
func (nopWriter) WriteTaints(context.Context, string, []nc.TaintChange) error       { return nil }
func (nopWriter) MarkPodNotReady(context.Context, nc.PodRef) error                  { return nil }
func (nopWriter) DeletePod(context.Context, nc.PodKey) error                        { return nil }
